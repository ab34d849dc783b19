"""`arena` fed bad input: unknown options, a corrupt database, an unreadable bot list, a port in use.

Each ends with a non-zero status and one clear error line (click's usage lines aside), never a traceback, and
leaves every file it was given exactly as it was.
"""

from __future__ import annotations

import hashlib
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.games import get_game
from arena.ladder.store import LadderIdentity, Store

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), \
        f"an exception escaped: {result.exception!r}"
    return result.exit_code, result.stderr


def one_error(err: str) -> str:
    """Return the one error line of ``err``; there must be exactly one, and no traceback."""
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("Error")]
    assert len(errors) == 1, err
    return errors[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def bot_list(path: Path) -> Path:
    path.write_text("".join(f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "arena.games.{module}.bot"]\n'
                            f'cwd = "{ROOT}"\ngames = ["cabanga"]\n\n'
                            for name, module in [("g", "cabanga.bots.greedy"), ("r", "cabanga.bots.random"),
                                                 ("t", "cabanga.bots.tidy")]))
    return path


@pytest.mark.parametrize("args", [
    ["match", "--bogus"], ["match", "--deadline", "soon"], ["match", "--seats"], ["ladder", "--bogus", "1"],
    ["leaderboard", "--bogus"], ["replay"], ["bogus"], ["match", "--game", "chess"],
    ["match", "--max-faults", "0"], ["ladder", "--tables", "0"], ["ladder", "--workers", "0"],
])
def test_unknown_or_malformed_options_are_usage_errors(args: list[str]) -> None:
    code, err = run(*args)
    assert code == 2
    one_error(err)


def test_workers_on_a_cluster_is_a_one_line_error() -> None:
    code, err = run("ladder", "--workers", "2", "--cluster", "auto")
    assert code != 0
    assert "--workers is for this machine's tables" in one_error(err)


def corrupt_databases(folder: Path) -> dict[str, Path]:
    garbage = folder / "garbage.db"
    garbage.write_bytes(b"this is not a database\n" * 100)
    foreign = folder / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('keep me')")
    db_path = folder / "truncated.db"
    store = Store(db_path)
    store.claim(LadderIdentity("cabanga", 3, 0, get_game("cabanga").options().to_json()))
    store.close()
    data = db_path.read_bytes()
    db_path.write_bytes(data[: len(data) // 2])
    empty = folder / "empty.db"
    empty.write_bytes(b"")
    return {"garbage": garbage, "foreign": foreign, "truncated": db_path, "empty": empty}


@pytest.mark.process  # the ladder picks the machine's sandbox first: the first time in a process, it probes the jail
@pytest.mark.parametrize("kind", ["garbage", "foreign", "truncated"])
def test_a_corrupt_database_is_a_one_line_error_and_is_left_as_it_was(tmp_path: Path, kind: str) -> None:
    db = corrupt_databases(tmp_path)[kind]
    before = digest(db)
    bots = bot_list(tmp_path / "bots.toml")
    for args in (["leaderboard", "--db", db], ["replay", "1", "--db", db],
                 ["ladder", "--bots", bots, "--seats", "3", "--matches", "1", "--db", db]):
        code, err = run(*args)
        assert code == 1, (args, err)
        line = one_error(err)
        assert str(db.name) in line or "database" in line, line
        assert digest(db) == before, f"{args[0]} changed the {kind} database"


def test_an_unreadable_bot_list_is_a_one_line_error(tmp_path: Path) -> None:
    folder = tmp_path / "list.toml"
    folder.mkdir()  # a folder: reading it fails even for root, unlike chmod 000
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[[bot]]\x00\x81")
    bad_limits = tmp_path / "limits.toml"
    bad_limits.write_text('[[bot]]\nname = "x"\ncommand = "x"\nlimits = { memory_mb = -5 }\n')
    for path, words in ((folder, "directory"), (binary, "cannot read"), (bad_limits, "memory_mb")):
        for command in ("match", "ladder"):
            code, err = run(command, "--bots", path, "--db", tmp_path / "x.db") if command == "ladder" \
                else run(command, "--bots", path)
            assert code == 2, (command, path, err)
            assert words in one_error(err), err
    assert not (tmp_path / "x.db").exists(), "a failed ladder created its database"


@pytest.mark.process
def test_a_port_in_use_is_a_one_line_error_and_the_replay_file_is_kept(tmp_path: Path) -> None:
    replay = tmp_path / "replay.json"
    replay.write_text('{"precious": true}\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-c", "from arena.cli import run; run()", "match", "--listen", f"127.0.0.1:{port}",
             "--seed", "1", "-o", "rounds=1", "--replay", str(replay)],
            capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr  # one line: nothing from gRPC's own log
    assert f"cannot listen on '127.0.0.1:{port}'" in result.stderr and "in use" in result.stderr
    assert replay.read_text() == '{"precious": true}\n'


def test_a_bad_listen_address_is_a_one_line_error() -> None:
    code, err = run("match", "--listen", "localhost:notaport", "--seed", "1")
    assert code == 1 and "HOST:PORT" in one_error(err)


@pytest.mark.process
def test_a_crash_in_native_code_prints_where_every_thread_was(tmp_path: Path) -> None:
    """A SIGSEGV (as gRPC's native code may raise at the end of a long run) leaves a Python stack of each thread
    in the operator's log, not only a bare exit status."""
    replay = tmp_path / "replay.json"
    assert run("match", "--seed", "1", "-o", "rounds=1", "--replay", replay)[0] == 0
    serve = subprocess.Popen([sys.executable, "-c", "from arena.cli import run; run()", "serve", "--replay",
                              str(replay)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None
        assert "http://" in serve.stdout.readline()  # serving: its threads are up
        serve.send_signal(signal.SIGSEGV)
        _, err = serve.communicate(timeout=30)
    finally:
        serve.kill()
    assert serve.returncode == -signal.SIGSEGV
    assert "Fatal Python error: Segmentation fault" in err and "most recent call first" in err, err
