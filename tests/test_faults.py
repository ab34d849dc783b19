"""Faults that say why (issue 11): a bot's own exception is a crash fault with its reason, at once, and the
bot keeps its process; faults are public events; bot logs mark every match; a bot that fails to start shows
the end of its output."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from arena.core.deals import DealKey
from arena.core.referee import Clock, FaultKind, LocalSeat, MatchInfo, MatchRecord, Request, SeatFaulted, referee_match
from arena.games import get_game
from arena.games.base import Decision, Event, MatchResult
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.process import LaunchError, log_file_name
from arena.launch.runner import run_match, serving

ROOT = Path(__file__).resolve().parent.parent


def faulty(name: str, *mode: str) -> BotSpec:
    return BotSpec(name, ("{python}", "-m", "tests.bots.sdk_faulty", *mode), ROOT)


def bot(name: str, module: str) -> BotSpec:
    return BotSpec(name, ("{python}", "-m", f"arena.games.{module}.bot"), ROOT)


@pytest.mark.process
def test_an_sdk_bot_that_raises_gets_a_crash_fault_with_its_reason_and_keeps_its_process(tmp_path: Path) -> None:
    game = get_game("cabanga")
    bots = [faulty("raiser", "raise-throw"), bot("g", "cabanga.bots.greedy"), bot("t", "cabanga.bots.thrower")]

    async def scenario() -> tuple[list[MatchRecord], int, int]:
        async with serving() as server:
            pool = ProcessPool(server, log_dir=tmp_path)
            records = []
            try:
                for seed in (1, 2, 3):
                    seats = await pool.seat(bots, deal=DealKey(game.name, seed), match=f"m{seed}")
                    records.append(await referee_match(game, seats, seed, game.options({"rounds": 2}),
                                                    clock=Clock(1.0), max_faults=1000, match_id=f"m{seed}"))
                return records, pool.starts, pool.restarts
            finally:
                await pool.close()

    records, starts, restarts = asyncio.run(scenario())
    crashes = [f for r in records for f in r.faults if f.seat == 0]
    assert crashes, "the raiser was never asked to throw"
    assert all(f.kind is FaultKind.CRASH and "ValueError: boom" in f.detail for f in crashes)
    # within the deadline: the bot said so at once, so no fault is a timeout
    assert not any(f.kind is FaultKind.TIMEOUT for r in records for f in r.faults)
    assert (starts, restarts) == (3, 0)  # it answered every request: never restarted
    log = (tmp_path / log_file_name("raiser", 0)).read_text()
    assert "ValueError: boom" in log and "Traceback" in log  # the traceback went to its log
    assert [line for line in log.splitlines() if line.startswith("[arena] match ")] == [
        f"[arena] match m{seed} starts: seat 0 as raiser" for seed in (1, 2, 3)]


class Recorder(LocalSeat):
    def __init__(self, name: str, fail: bool = False) -> None:
        super().__init__(name, self._choose)
        self.fail = fail
        self.told: list[Event] = []

    def _choose(self, prompt: object, view: object) -> Decision:
        if self.fail:
            raise RuntimeError("no idea")
        return prompt.default  # type: ignore[attr-defined, no-any-return]

    async def decide(self, request: Request) -> Decision:
        self.told.extend(request.events)
        return await super().decide(request)

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...], result: MatchResult) -> None:
        self.told.extend(events)


def test_faults_are_public_events_without_their_reason() -> None:
    game = get_game("lama")
    seats = [Recorder("bad", fail=True), Recorder("a"), Recorder("b")]
    record = asyncio.run(referee_match(game, seats, 5, game.options({"rounds": 1}), max_faults=2))
    assert [f.kind for f in record.faults] == [FaultKind.CRASH, FaultKind.CRASH]
    for seat in seats[1:]:
        told = [e for e in seat.told if isinstance(e, SeatFaulted)]
        assert told == [SeatFaulted(0, FaultKind.CRASH)] * 2
        assert "no idea" not in str([e.to_json() for e in told])
    assert not any(isinstance(e, SeatFaulted) for e in record.events)  # the replay's events are the game's


@pytest.mark.process
def test_a_bot_that_fails_to_start_shows_the_end_of_its_output() -> None:
    game = get_game("cabanga")
    broken = BotSpec("broken", ("{python}", "-c", "import sys; print('cannot find my weights', file=sys.stderr); "
                                "sys.exit(4)"), ROOT)
    with pytest.raises(LaunchError, match="exited with code 4 before connecting; its output was: "
                                          "cannot find my weights"):
        asyncio.run(run_match(game, [broken, bot("g", "cabanga.bots.greedy"), bot("r", "cabanga.bots.random")], 1))


def test_match_start_carries_the_options_as_text() -> None:
    from arena.protocol import codec

    info = MatchInfo("m", "lama", 0, ("a", "b"), get_game("lama").options({"climb": "any"}).to_json(), Clock(), 3)
    start = codec.match_start(info)
    assert start.game == "lama" and start.options["climb"] == "any" and start.options["target"] == "40"
    assert "rounds" not in start.options  # unset: absent, never the text "None"
