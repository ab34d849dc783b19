"""The ladder's tables in worker processes (arena/ladder/workers.py): how matches are dealt over the workers, and
what the head sees when a bot does not start or a worker dies. That no process of any worker plays a deal twice
is tests/test_deals.py's; that a ladder played by workers stores the same matches as in-process players is
tests/test_ladder.py's (its real ladders run two tables, so two workers)."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from processes import gone

from arena.core.referee import Clock
from arena.games import BOT_LIST, get_game
from arena.ladder.executor import Job
from arena.ladder.workers import WorkerError, WorkerExecutor, _Worker, spread, worker_for
from arena.launch.botlist import BotSpec, load_bot_list
from arena.launch.process import LaunchError
from arena.launch.procs import descendants

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("seats", "tables", "workers"), [(4, 2, 2), (3, 2, 2), (4, 3, 2), (6, 8, 2), (5, 4, 3)])
def test_each_worker_gets_its_tables_share_of_every_deal_set(seats: int, tables: int, workers: int) -> None:
    shares = spread(tables, workers)
    assert sum(shares) == tables and max(shares) - min(shares) <= 1
    deal_sets = 60
    given: Counter[int] = Counter()
    for deal in range(deal_sets):
        rotations = Counter(worker_for(deal, r, seats, tables, workers) for r in range(seats))
        given.update(rotations)
        # a worker needs a process of each bot per rotation of a deal set it plays: no more than its tables' share
        for worker, count in rotations.items():
            assert count <= math.ceil(seats * shares[worker] / tables), (deal, rotations)
    for worker in range(workers):  # every worker plays, as much as its tables can
        assert given[worker] == pytest.approx(deal_sets * seats * shares[worker] / tables, abs=seats)


def test_matches_take_their_workers_places_in_the_order_asked() -> None:
    """A worker plays its rotations in the ladder's order: a match asked as a place frees does not go before the
    matches waiting for that worker (a later deal set's rotation played first would hold the processes an earlier
    one needs, and have the worker start more)."""
    game = get_game("lama")

    def job(deal: int, rotation: int) -> Job:
        return Job(deal, rotation, (), deal, game, game.options({}), f"m{deal}-{rotation}")

    async def scenario() -> list[str]:
        executor = WorkerExecutor(2, workers=2, seats=2)
        workers = [_Worker(i, 1, None, None, None) for i in range(2)]  # type: ignore[arg-type]
        executor._workers = workers
        got: list[str] = []

        async def take(asked: Job) -> None:
            worker = await executor._table(asked)
            got.append(f"{asked.label}@{worker.index}")

        waiting = [asyncio.ensure_future(take(job(deal, 0))) for deal in (0, 1)]  # rotation 0: worker 0's
        await asyncio.sleep(0.01)
        assert got == []

        async def finish_and_ask() -> None:  # a match of worker 0 ends; its ladder task asks its next at once
            workers[0].free += 1
            executor._freed.set()
            await take(job(2, 0))

        late = asyncio.ensure_future(finish_and_ask())
        for _ in range(2):
            await asyncio.sleep(0.01)
            workers[0].free += 1
            executor._freed.set()
        await asyncio.wait_for(asyncio.gather(*waiting, late), 5)
        return got

    assert asyncio.run(scenario()) == ["d0r0@0", "d1r0@0", "d2r0@0"]


def lama_bot(name: str) -> BotSpec:
    return next(b for b in load_bot_list(ROOT / "arena" / "games" / "lama" / BOT_LIST) if b.name == name)


def lama_job(deal: int, bots: tuple[BotSpec, ...], clock: Clock | None = None) -> Job:
    game = get_game("lama")
    return Job(deal, 0, bots, 1000 + deal, game, game.options({"rounds": 1}), f"test-{deal}", clock or Clock(2.0))


def with_workers(body: Callable[[WorkerExecutor], Awaitable[None]], **options: Any) -> None:
    """Run ``body`` with two started workers of a table each, at two seats; then no process they started is left
    (other tests' fixtures may hold processes of their own)."""
    async def scenario() -> None:
        executor = WorkerExecutor(2, workers=2, seats=2, **options)
        await executor.start()
        try:
            await body(executor)
        finally:
            await executor.close()

    before = set(descendants(os.getpid()))
    asyncio.run(scenario())
    assert set(descendants(os.getpid())) <= before


@pytest.mark.process
def test_a_bot_that_does_not_start_is_the_ladders_launch_error_and_the_worker_plays_on() -> None:
    broken = BotSpec("broken", ("{python}", "-c", "import sys; print('no luck'); sys.exit(3)"), ROOT)
    quick = lama_bot("lama-random")

    async def body(executor: WorkerExecutor) -> None:
        with pytest.raises(LaunchError, match="no luck") as failed:
            await executor.run(lama_job(0, (quick, broken)))
        assert list(failed.value.bots) == ["broken"]
        played = await executor.run(lama_job(1, (quick, quick)))
        assert played.summary.rated_places is not None and played.replay
        # worker 0 plays both (rotation 0 of deal sets 0 and 1 at two seats and two tables): it kept the process
        # that started, and started one more for the second seat
        assert worker_for(0, 0, 2, 2, 2) == worker_for(1, 0, 2, 2, 2) == 0
        assert executor.warm() == {"lama-random": 2}

    with_workers(body)


@pytest.mark.process
def test_a_worker_that_dies_fails_its_match_and_the_other_plays_on(tmp_path: Path) -> None:
    """A worker killed in the middle of a match: that match fails with :class:`WorkerError` (the ladder stops, and
    the next run plays it again from its seed), its bots leave by themselves, the other worker plays on."""
    slow = BotSpec("slow", ("{python}", "-m", "tests.bots.slow_first", "30"), ROOT)
    quick = lama_bot("lama-random")

    async def body(executor: WorkerExecutor) -> None:
        first, second = executor.pids
        assert worker_for(0, 0, 2, 2, 2) == 0
        match = asyncio.create_task(executor.run(lama_job(0, (slow, slow), Clock(60.0))))
        end = time.monotonic() + 60
        while len(list(tmp_path.glob("slow-*.log"))) < 2 and time.monotonic() < end:
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # both asked their first decision: the match is under way
        assert not match.done()
        bots = descendants(first)
        assert bots
        os.kill(first, signal.SIGKILL)
        with pytest.raises(WorkerError, match=r"worker 0 ended \(exit status -9\)"):
            await match
        # deal 2 is worker 0's (rotation 0 of the third deal set at two seats): the other worker plays it
        assert worker_for(2, 0, 2, 2, 2) == 0
        played = await executor.run(lama_job(2, (quick, quick)))
        assert played.summary.rated_places is not None
        assert second in descendants(os.getpid())
        end = time.monotonic() + 15
        while not all(gone(pid) for pid in bots) and time.monotonic() < end:
            await asyncio.sleep(0.05)
        assert all(gone(pid) for pid in bots), "the dead worker's bots stayed"

    with_workers(body, log_dir=tmp_path)


@pytest.mark.process
def test_a_worker_that_cannot_start_is_said_at_once() -> None:
    async def scenario() -> None:
        executor = WorkerExecutor(2, workers=2, seats=2, python="/bin/false")  # a "Python" that exits at once
        began = time.monotonic()
        with pytest.raises(WorkerError, match=r"worker \d did not start \(exit status 1\)"):
            await executor.start()
        assert time.monotonic() - began < 10  # not the minute it waits for a started worker to stop

    before = set(descendants(os.getpid()))
    asyncio.run(scenario())
    assert set(descendants(os.getpid())) <= before
