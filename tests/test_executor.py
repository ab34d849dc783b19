"""A machine's tables (arena/ladder/executor.py's LocalExecutor): a match asked while every table plays is seated
meanwhile (its processes held for it, told a match begins) and begins as soon as a table is free, in the order the
matches were asked; one such match per table, so the pool starts no process for a match further back; and one whose
processes ended while it waited is seated again and played in full."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from arena.core.referee import Clock
from arena.games import BOT_LIST, get_game
from arena.ladder.executor import Job, LocalExecutor, Played
from arena.launch.botlist import BotSpec, load_bot_list
from arena.launch.pool import ProcessPool
from arena.launch.sandbox import choose_sandbox
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer

ROOT = Path(__file__).resolve().parent.parent
P = TypeVar("P", bound=ProcessPool)


class RecordingPool(ProcessPool):
    """A pool that notes, in order, each seating (with the place and whether ahead), beginning and vacating."""

    def __init__(self, server: ArenaServer) -> None:
        super().__init__(server, keep=None, sandbox=choose_sandbox("limits"))
        self.events: list[tuple[str, int, str]] = []

    async def seat(self, bots: Sequence[BotSpec], names: Sequence[str] | None = None, **options: object
                   ) -> list[RemoteSeat]:
        kind = "ahead" if options.get("ahead") else "seat"
        self.events.append((kind + "-asked", int(str(options.get("table", 0))), str(options.get("match", ""))))
        seats = await super().seat(bots, names, **options)  # type: ignore[arg-type]
        self.events.append((kind, int(str(options.get("table", 0))), str(options.get("match", ""))))
        return seats

    def begin(self, table: int) -> bool:
        self.events.append(("begin", table, ""))
        return super().begin(table)

    def vacate(self, table: int) -> None:
        self.events.append(("vacate", table, ""))
        super().vacate(table)


def job(deal: int, bots: tuple[BotSpec, ...]) -> Job:
    game = get_game("lama")
    return Job(deal, 0, bots, 500 + deal, game, game.options({"rounds": 1}), f"m{deal}", Clock(2.0))


def on_one_table(make: Callable[[ArenaServer], P], *batches: Sequence[int], before: Callable[[P], None] | None = None
                 ) -> tuple[P, list[list[Played]]]:
    """Play one 1-round L.A.M.A. match of ``lama-random`` and ``lama-easy`` per deal on a :class:`LocalExecutor` of one
    table and the pool ``make`` makes: each batch's matches asked at once, batch after batch (``before(pool)`` before
    each); return the pool and what each batch played."""
    specs = {b.name: b for b in load_bot_list(ROOT / "arena" / "games" / "lama" / BOT_LIST)}
    bots = (specs["lama-random"], specs["lama-easy"])
    pools: list[P] = []

    def make_pool(server: ArenaServer) -> ProcessPool:
        pools.append(make(server))
        return pools[-1]

    async def scenario() -> list[list[Played]]:
        executor = LocalExecutor(1, seats=2, make_pool=make_pool)
        await executor.start()
        try:
            played = []
            for batch in batches:
                if before is not None:
                    before(pools[0])
                played.append(list(await asyncio.gather(*(executor.run(job(deal, bots)) for deal in batch))))
            return played
        finally:
            await executor.close()

    played = asyncio.run(scenario())
    return pools[0], played


@pytest.mark.process
def test_matches_asked_while_the_table_plays_are_seated_meanwhile_and_begin_in_the_order_asked() -> None:
    # two matches warm up two processes of each bot (a process plays a deal once); then three are asked together:
    # the first plays, the second is seated while it does, the third waits unseated (the events are the last batch's)
    pool, (_, played) = on_one_table(RecordingPool, (1, 2), (3, 4, 5), before=lambda pool: pool.events.clear())
    starts = [p.starts for p in played]
    events = pool.events
    seated = [(kind, match) for kind, _, match in events if kind in ("seat", "ahead")]
    assert seated == [("seat", "m3"), ("ahead", "m4"), ("ahead", "m5")]
    place = {match: place for kind, place, match in events if kind in ("seat", "ahead")}
    # the second is seated before the first is over (its place vacated); the third is seated only once the
    # second has begun, and begins when the second is over
    first_over = events.index(("vacate", place["m3"], ""))
    assert events.index(("ahead", place["m4"], "m4")) < first_over < events.index(("begin", place["m4"], ""))
    second_began = events.index(("begin", place["m4"], ""))
    assert second_began < events.index(("ahead-asked", place["m5"], "m5"))
    second_over = len(events) - 1 - events[::-1].index(("vacate", place["m4"], ""))
    assert second_over < len(events) - 1 - events[::-1].index(("begin", place["m5"], ""))
    # the warm processes played them all: the third match needed no process of its own
    assert starts == [0, 0, 0] and pool.figures.starts == 4


class EndingPool(ProcessPool):
    """A pool whose processes seated ahead end just before their match begins, the first time (as a bot that exits
    between matches would): the match must be seated again, with processes that play."""

    def __init__(self, server: ArenaServer) -> None:
        super().__init__(server, keep=None, sandbox=choose_sandbox("limits"))
        self.ended = 0

    def begin(self, table: int) -> bool:
        if not self.ended and table in self._held:
            for lane in self._held[table][1]:
                process = self._running[lane].process
                assert process is not None and process._proc is not None
                os.killpg(process._proc.pid, signal.SIGKILL)  # the bot and its supervisor (its own session)
                process._proc.wait(10)
                self.ended += 1
        return super().begin(table)


@pytest.mark.process
def test_a_match_whose_processes_ended_while_it_waited_is_seated_again_and_played_in_full() -> None:
    pool, [[first, second]] = on_one_table(EndingPool, (1, 2))
    assert pool.ended == 2  # the second match's two processes ended before it began
    # both played in full, by processes that answer (the first match's, free again by then: warm, and not at this
    # deal yet), none of them faulted
    assert not first.summary.faults and not second.summary.faults
    assert first.summary.rated_places and second.summary.rated_places
