"""A bot's text reaches the operator's terminal as text: run as an operator would, through a pseudo-terminal,
`arena match`, `replay`, `replay --seat` (with `--bot`), `check`, `ladder` and a bot that fails to start show
a hostile bot's terminal control sequences (tests/adversarial/hostile.py ``TERMINAL_ATTACK``, in its crash
reason, its output and its hello) escaped, never obeyed; and its 40 KB malformed answer is stored, in a replay
and in a ladder's database, as a capped detail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile import MALFORMED_PICKS

from arena.ladder.store import Store
from arena.text import DETAIL_CHARS

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
COMMAND_SECONDS = 120.0
SANDBOX = os.environ.get("ARENA_TEST_SANDBOX", "auto")
ESCAPED = "\\x1b]52;c;Y2xpcGJvYXJk\\x07"
"""The clipboard write of ``TERMINAL_ATTACK`` as the arena must show it."""
BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def run_in_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Run ``arena ARGS`` with a pseudo-terminal as its stdin, stdout and stderr; return its exit status and
    everything it wrote there. Bounded by :data:`COMMAND_SECONDS`; its process group is killed at the end."""
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-c", "from arena.cli import run; run()", *args], cwd=cwd,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True, close_fds=True)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + COMMAND_SECONDS
    try:
        while True:
            ended = proc.poll() is not None
            ready, _, _ = select.select([master], [], [], 0.2 if ended else 1.0)
            if not ready:
                if ended:
                    break
                assert time.monotonic() < deadline, f"arena {' '.join(args)} ran past {COMMAND_SECONDS} s:\n{out!r}"
                continue
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # EIO: no process holds the terminal any more
                break
            if not data:
                break
            out += data
        code = proc.wait(timeout=10)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        os.close(master)
    return code, out.decode("utf-8")  # strictly: a stray byte of the bot's would fail here


def assert_shown_as_text(out: str) -> None:
    """Nothing of the bot's reached the terminal as a control: no ESC, no C1 control, no DEL, no carriage
    return but the terminal's own before a line feed, no bidi override; no line starts with its fake verdict;
    and its clipboard write and carriage return are shown, escaped."""
    assert "\x1b" not in out, out
    assert not [c for c in out if "\x80" <= c <= "\x9f" or c == "\x7f"], out
    assert re.search("\r(?!\n)", out) is None, out
    assert not BIDI & set(out), out
    assert not [line for line in out.split("\r\n") if line.startswith(("PASS: all bots passed", "all bots"))], out
    assert ESCAPED in out and "\\rPASS: all bots passed" in out, out


def assert_capped(detail: str) -> None:
    """``detail``, the fault of the bot's answer of :data:`MALFORMED_PICKS` picks, is cut to the cap and says
    how long it was: about 6 characters a pick."""
    assert len(detail) <= DETAIL_CHARS and detail.startswith("pick ["), len(detail)
    cut = re.search(r"\.\.\. \[cut: (\d+) characters\]$", detail)
    assert cut is not None and int(cut[1]) > 5 * MALFORMED_PICKS, detail[-60:]


@pytest.fixture
def bot_lists(tmp_path: Path) -> Path:
    """Write the bot lists of the tests into ``tmp_path``: ``match.toml`` (the hostile bot and two good
    ones), ``hostile.toml`` (the hostile bot alone) and ``exits.toml`` (a bot that writes, then exits)."""
    def entry(name: str, *args: str) -> str:
        command = ", ".join(json.dumps(a) for a in ("{python}", "-m", *args))
        return f'[[bot]]\nname = "{name}"\ncommand = [{command}]\ncwd = {json.dumps(str(ROOT))}\n\n'

    hostile = entry("hostile", "tests.adversarial.hostile", "terminal")
    (tmp_path / "match.toml").write_text(hostile + entry("greedy", "arena.games.cabanga.bots.greedy.bot")
                                         + entry("random", "arena.games.cabanga.bots.random.bot"))
    (tmp_path / "hostile.toml").write_text(hostile)
    exits = entry("exits", "tests.adversarial.hostile", "terminal-exit")
    (tmp_path / "exits.toml").write_text(exits + entry("greedy", "arena.games.cabanga.bots.greedy.bot")
                                         + entry("random", "arena.games.cabanga.bots.random.bot"))
    (tmp_path / "ladder.toml").write_text((tmp_path / "match.toml").read_text() + exits)
    return tmp_path


def test_match_replay_and_a_seats_view_show_the_bots_text_escaped_and_store_its_detail_capped(
        bot_lists: Path) -> None:
    replay = bot_lists / "match.json"
    code, out = run_in_terminal(["match", "--bots", "match.toml", "--game", "cabanga", "--seed", "5", "-o",
                                 "rounds=1", "--sandbox", SANDBOX, "--replay", str(replay)], bot_lists)
    assert code == 0, out
    assert "fault: hostile at step" in out and ": crash (the bot reported: " in out
    assert_shown_as_text(out)

    faults = json.loads(replay.read_text())["faults"]
    assert {f["kind"] for f in faults} == {"crash", "malformed"}, faults
    (malformed,) = [f["detail"] for f in faults if f["kind"] == "malformed"]
    assert_capped(malformed)

    code, out = run_in_terminal(["replay", str(replay)], bot_lists)
    assert code == 0, out
    assert "replay verified" in out
    assert_shown_as_text(out)

    # asked again, the bot (a new process) crashes on its first request as it did
    code, out = run_in_terminal(["replay", str(replay), "--seat", "0", "--bot", "hostile.toml"], bot_lists)
    assert code == 1, out
    assert "  fault: crash (the bot reported: " in out and "now answers fault: crash (the bot reported: " in out
    assert_shown_as_text(out)


def test_check_shows_the_bots_crash_reason_and_output_escaped(bot_lists: Path) -> None:
    code, out = run_in_terminal(["check", "hostile.toml", "--game", "cabanga", "--rounds", "1"], bot_lists)
    assert code == 1, out
    assert "the bot's output ends with:" in out and "FAIL: hostile" in out
    assert_shown_as_text(out)


def test_a_bot_that_writes_then_exits_before_connecting_is_quoted_escaped(bot_lists: Path) -> None:
    code, out = run_in_terminal(["match", "--bots", "exits.toml", "--game", "cabanga", "--seed", "5", "-o",
                                 "rounds=1", "--sandbox", SANDBOX], bot_lists)
    assert code == 1, out
    assert "Error: bot 'exits'" in out and "before connecting; its output was: starting" in out
    assert_shown_as_text(out)

    code, out = run_in_terminal(["check", "exits.toml", "--name", "exits", "--game", "cabanga"], bot_lists)
    assert code == 1, out
    assert "the bot did not start: bot 'exits'" in out
    assert_shown_as_text(out)


def test_a_ladder_stores_the_bots_malformed_answer_capped_and_quotes_a_dropped_bot_escaped(bot_lists: Path) -> None:
    db = bot_lists / "ladder.db"
    code, out = run_in_terminal(["ladder", "--bots", "ladder.toml", "--game", "cabanga", "--seats", "3", "--matches",
                                 "3", "--tables", "1", "--seed", "11", "-o", "rounds=1", "--sandbox", SANDBOX,
                                 "--db", str(db)], bot_lists)
    assert code == 0, out
    store = Store(db, readonly=True)
    try:
        faults = store.db.execute("SELECT kind, detail FROM faults").fetchall()
    finally:
        store.close()
    malformed = [detail for kind, detail in faults if kind == "malformed"]
    assert malformed, [(kind, len(detail)) for kind, detail in faults]
    for detail in malformed:
        assert_capped(detail)
    assert "bot 'exits'" in out
    assert_shown_as_text(out.replace("\r\x1b[K", ""))  # the ladder's own progress line, redrawn in place
