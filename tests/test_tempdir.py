"""The arena's files in the temporary folder: named after their process, and removed by the next arena when
that process was killed before it could clear up."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.launch import tempdir

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]


def dead_pid() -> int:
    """Return the pid of a process that has exited and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.process
def test_stale_files_of_a_gone_process_are_removed_and_nothing_else(tmp_path: Path) -> None:
    gone = dead_pid()
    (tmp_path / f"arena-serve-{gone}-abc").mkdir()
    (tmp_path / f"arena-serve-{gone}-abc" / "arena.sock").write_text("")
    (tmp_path / f"arena-serve-{gone}-def").write_text("a file of the kind")
    keep = [f"arena-serve-{os.getpid()}-xyz",  # this process's own
            f"arena-logs-{gone}-abc",  # another kind
            "arena-serve-notapid-abc",  # not ours
            f"other-serve-{gone}-abc"]
    for name in keep:
        (tmp_path / name).mkdir()
    assert tempdir.remove_stale("serve", str(tmp_path)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)


def test_a_private_folder_carries_its_process_and_is_removed_after_use() -> None:
    with tempdir.folder("check") as folder:
        assert folder.name.startswith(f"arena-check-{os.getpid()}-") and folder.is_dir()
        (folder / "bot.log").write_text("x")
    assert not folder.exists()


@pytest.mark.process
def test_the_next_arena_removes_what_a_killed_arena_left_in_the_temporary_folder(tmp_path: Path) -> None:
    """kill -9 of `arena match` leaves its socket and log folders; the next `arena match` removes them."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = os.environ | {"TMPDIR": str(temp)}
    bots = tmp_path / "bots.toml"
    hostile = ROOT / "tests" / "adversarial" / "hostile.py"
    bots.write_text("".join(f'[[bot]]\nname = "s{i}"\ncommand = ["{{python}}", "{hostile}", "silent"]\n\n'
                            for i in range(2)))
    arena = subprocess.Popen([*ARENA, "match", "--bots", str(bots), "--game", "lama",
                              "--seats", "2", "--deadline", "60", "--sandbox", "limits"], cwd=ROOT, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not list(temp.glob(f"arena-bots-{arena.pid}-*/*")):
            time.sleep(0.05)  # the bots' sockets are there: the match is being played
    finally:
        arena.kill()  # the arena alone: its supervisors see their input close and stop the bots
        arena.wait()
    left = {p.name.split("-")[1] for p in temp.glob(f"arena-*-{arena.pid}-*")}
    assert left >= {"bots", "logs", "serve"}  # and the jail's filter, where this machine builds one
    done = subprocess.run([*ARENA, "match", "--game", "lama", "--seats", "2", "--seed", "1", "-o", "rounds=1",
                           "--sandbox", "limits"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert list(temp.glob(f"arena-*-{arena.pid}-*")) == []
    assert list(temp.iterdir()) == []  # and the second arena left nothing of its own
