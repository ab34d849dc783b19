"""Hostile bots, each a real process in a real match: the match completes, the fault is recorded and charged to
the hostile seat only, and the arena is healthy afterwards (a match between well-behaved bots plays clean).
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from adversarial_harness import HOSTILE, Arena, hostile, rss_mib

from arena.core import replay as replay_format
from arena.core.referee import FaultKind, MatchRecord
from arena.games.base import MatchOver
from arena.launch.process import describe_exit, log_file_name
from arena.launch.procs import processes_naming
from arena.launch.sandbox import Isolation
from arena.launch.supervisor_constants import CPU_EXIT_CODE
from arena.protocol import server as server_module

pytestmark = pytest.mark.process


def check_fault(record: MatchRecord, *kinds: FaultKind, benched: bool = True) -> None:
    """The match is whole and replays; the hostile seat (0) had a fault of one of ``kinds``; no other seat had."""
    assert record.result is not None and isinstance(record.events[-1], MatchOver)
    _, events = replay_format.rerun(replay_format.from_record(record))
    assert [e.to_json() for e in events] == [e.to_json() for e in record.events]
    assert record.faults, "no fault was recorded"
    assert all(f.seat == 0 for f in record.faults), f"a well-behaved seat was charged: {record.faults}"
    assert {f.kind for f in record.faults} & set(kinds), record.faults
    if benched:
        assert 0 in record.benched and record.ranking_places()[0] == 3


# (mode, fault kinds that may be recorded); each is one hostile match
CASES = {
    "never-answers": (("silent",), {FaultKind.TIMEOUT}),
    "answers-late": (("late", "0.4"), {FaultKind.TIMEOUT}),
    "exits-mid-match": (("exit-after", "2"), {FaultKind.CRASH}),
    "killed-by-a-signal": (("signal-after", "2", str(int(signal.SIGSEGV))), {FaultKind.CRASH}),
    "card-it-does-not-hold": (("out-of-range",), {FaultKind.MALFORMED, FaultKind.ILLEGAL}),
    "throw-not-between-the-tops": (("throw-outside",), {FaultKind.MALFORMED, FaultKind.ILLEGAL}),
    "throws-the-same-card-twice": (("throw-twice",), {FaultKind.MALFORMED, FaultKind.ILLEGAL}),
    "answers-another-request-id": (("wrong-id",), {FaultKind.MALFORMED}),
    "garbage-bytes": (("garbage",), {FaultKind.MALFORMED}),
    "floods-answers": (("flood",), {FaultKind.MALFORMED}),
}


@pytest.mark.parametrize(("mode", "kinds"), list(CASES.values()), ids=list(CASES))
def test_hostile_bot_costs_itself_a_fault(arena: Arena, mode: tuple[str, ...], kinds: set[FaultKind]) -> None:
    name = f"hostile-{mode[0]}"
    record = arena.play(hostile(name, *mode))
    throws = mode[0].startswith("throw")
    # a seat is asked to throw only when it holds a card between the tops: a one-round deal may never ask it
    # (the arena's seed moves on with every match the suite plays), so a throwing bot gets a few deals
    for _ in range(8 if throws else 0):
        if record.faults:
            break
        assert record.result is not None and record.faults == []
        record = arena.play(hostile(name, *mode))
    check_fault(record, *kinds, benched=not throws)  # asked seldom, maybe too seldom to be benched
    arena.retire(name)
    arena.healthy()


def test_a_message_of_100_mb_costs_the_bot_its_stream_not_the_arena_its_memory(arena: Arena) -> None:
    arena.healthy()
    before = arena.peak_rss = rss_mib()
    record = arena.play(hostile("hostile-huge", "huge"))
    # the stream fails (a disconnect), the bot then exits (a crash), or it is still sending (a timeout)
    check_fault(record, FaultKind.DISCONNECT, FaultKind.MALFORMED, FaultKind.TIMEOUT, FaultKind.CRASH)
    slot, _ = arena.process("hostile-huge")

    async def closed() -> str:  # gRPC reads and drops the message, then fails the stream
        assert slot.connection is not None
        await asyncio.wait_for(slot.connection.closed.wait(), 10)
        return slot.connection.close_reason

    assert "65536 bytes" in arena.run(closed)
    assert arena.peak_rss - before < 50, f"the arena grew from {before:.0f} to {arena.peak_rss:.0f} MiB"
    arena.retire("hostile-huge")
    arena.healthy()


def test_unbounded_allocation_meets_the_memory_limit(arena: Arena) -> None:
    record = arena.play(hostile("hostile-alloc", "alloc", memory_mb=600))
    check_fault(record, FaultKind.CRASH, FaultKind.DISCONNECT, FaultKind.TIMEOUT)
    _, proc = arena.process("hostile-alloc")

    async def ended() -> str:  # out of memory it ends, or is ending, as the match ends
        return await asyncio.wait_for(asyncio.shield(proc.ended), 10)

    arena.run(ended)
    assert not proc.alive(), "the allocating bot is still running"
    arena.retire("hostile-alloc")
    arena.healthy()


def test_a_spinning_bot_times_out_and_is_killed_at_its_cpu_limit(arena: Arena) -> None:
    record = arena.play(hostile("hostile-spin", "spin", cpu_seconds=1))
    check_fault(record, FaultKind.TIMEOUT)
    slot, proc = arena.process("hostile-spin")
    assert slot.owes_answers  # the pool will not seat it again as it is

    async def ended() -> int | None:
        for _ in range(300):
            if not proc.alive():
                break
            await asyncio.sleep(0.02)
        return proc.returncode

    code = arena.run(ended)
    if arena.pool.sandbox.isolation is not Isolation.NONE:
        assert code == CPU_EXIT_CODE, describe_exit(proc.returncode)
    arena.retire("hostile-spin")
    arena.healthy()


@pytest.mark.parametrize("mode", ["fork", "fork-exit"])
def test_children_that_try_to_outlive_the_bot_die_with_it(arena: Arena, mode: str) -> None:
    mark = f"arena-escapee-{mode}-{os.getpid()}-{time.monotonic_ns()}"
    name = f"hostile-{mode}"
    record = arena.play(hostile(name, mode, mark))
    assert record.result is not None
    if mode == "fork-exit":
        check_fault(record, FaultKind.CRASH)
    else:
        assert record.faults == []
        assert processes_naming(mark), "the escaping child did not start"
    arena.retire(name)
    deadline = time.monotonic() + 3
    while processes_naming(mark) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processes_naming(mark) == [], "a child of the bot outlived it"
    arena.healthy()


def test_a_bot_flooding_its_output_fills_its_log_to_the_limit_and_no_further(arena: Arena) -> None:
    name = "hostile-stderr"
    record = arena.play(hostile(name, "stderr-flood", log_kb=64))
    assert record.result is not None
    assert not [f for f in record.faults if f.seat != 0]
    arena.retire(name)
    log = Path(arena.log_dir) / log_file_name(name, 0)
    size = log.stat().st_size
    assert 64 * 1024 <= size < 64 * 1024 + 200, size
    assert log.read_bytes().rstrip().endswith(b"later output dropped]")
    arena.healthy()


def test_a_second_stream_with_another_seats_token_is_refused(arena: Arena,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    # leaked where the hostile bot's jail can read it: the folder of its own program
    tokens = HOSTILE.parent / f".leaked-tokens-{os.getpid()}"
    name = "hostile-steal"

    def leak_tokens() -> None:
        others = [s.slot.token for (bot, _), s in arena.pool._running.items() if bot != name]
        tokens.write_text("\n".join(others) + "\n")

    try:
        with caplog.at_level("WARNING", logger="arena.protocol.server"):
            record = arena.play(hostile(name, "steal", str(tokens)), before=leak_tokens)
    finally:
        tokens.unlink(missing_ok=True)
    assert record.result is not None and record.faults == []
    arena.retire(name)
    lines = [line for line in (arena.log_dir / log_file_name(name, 0)).read_text().splitlines()
             if line.startswith("steal ")]
    assert len(lines) >= 5, lines  # the other seats' tokens, its own, none, a made-up one
    assert all(line.endswith("refused: UNAUTHENTICATED") for line in lines), lines
    refusals = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused")]
    # its own socket knows no other seat's token: stolen tokens are unknown there (its own is in use); the log
    # keeps the first few refusals of a server a minute, and counts the rest
    assert sum("unknown token" in m for m in refusals) >= 3, refusals
    assert len(refusals) <= server_module.REFUSAL_LOG_BURST
    arena.healthy()


def test_a_stuck_bot_is_restarted_for_its_next_match(arena: Arena) -> None:
    spec = hostile("hostile-silent-twice", "silent")
    first = arena.play(spec)
    check_fault(first, FaultKind.TIMEOUT)
    _, proc = arena.process(spec.name)
    second = arena.play(spec)
    check_fault(second, FaultKind.TIMEOUT)
    _, again = arena.process(spec.name)
    assert again is not proc and not proc.alive()
    arena.retire(spec.name)
    arena.healthy()
