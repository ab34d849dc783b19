"""The warm process pool a machine's tables share: a memory budget stops the least recently used idle processes,
tables never share a process, processes started ahead are seated warm, a failed start ahead is charged to its
own bot only, a match seated ahead holds its processes (started in turn unless its table waits) and has played its
deal only once it begins, and a kill -9 while processes start leaves none behind."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import pytest

from arena.core.deals import DealKey
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool, default_memory_budget
from arena.launch.process import LaunchError
from arena.launch.procs import processes_naming
from arena.launch.runner import serving
from arena.launch.sandbox import Isolation, Sandbox, choose_sandbox, detect_sandbox, own_cgroups
from arena.launch.session import BotSession
from arena.launch.supervisor_constants import CGROUP_PREFIX

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")
MACHINE = detect_sandbox()
CGROUPS = Sandbox(Isolation.LIMITS, MACHINE.cgroups, MACHINE.reason)
"""Bots under limits in cgroups (not jailed: not what these tests are about, and it costs time)."""
CGROUPS_DUE = os.environ.get("CI") == "true" and os.geteuid() == 0 and any(own_cgroups())
"""Root on a machine with cgroup v1 hierarchies under CI: no cgroups there is a failure, not a skip."""


def quick(name: str) -> BotSpec:
    """A bundled bot that answers at once (the pool's tests only seat it: it connects and waits)."""
    return BotSpec(name, ("{python}", "-m", "arena.games.cabanga.bots.random.bot"), ROOT)


BROKEN = BotSpec("broken", ("{python}", "-c", "raise SystemExit(3)"), ROOT)
DEAL = DealKey("cabanga", 1)


def with_pool(body: Callable[[ProcessPool], Awaitable[T]], **options: object) -> T:
    """Run ``body`` with a pool of unjailed bots (the jail is not what these tests are about, and costs time)."""
    async def run() -> T:
        async with serving() as server:
            options.setdefault("sandbox", choose_sandbox("limits"))
            pool = ProcessPool(server, keep=None, **options)  # type: ignore[arg-type]
            try:
                return await body(pool)
            finally:
                await pool.close()

    return asyncio.run(run())


def held(pool: ProcessPool) -> list[tuple[str, int]]:
    return list(pool._running)  # least recently used first


@pytest.mark.process
def test_idle_processes_beyond_the_memory_budget_go_least_recently_used_first() -> None:
    def meter(session: BotSession) -> int:
        return 100  # each process: 100 bytes, say

    async def body(pool: ProcessPool) -> None:
        await pool.seat([quick("a"), quick("b")], deal=DEAL)
        await pool.seat([quick("c"), quick("d")], deal=DEAL)  # a and b idle now: 400 held, 350 allowed
        assert held(pool) == [("b", 0), ("c", 0), ("d", 0)] and pool.figures.evicted == 1
        assert pool.held() == {"b": 1, "c": 1, "d": 1}  # the evicted one is no longer warm
        await pool.seat([quick("b"), quick("c")], deal=DealKey("cabanga", 2))  # both warm
        assert (pool.figures.hits, pool.figures.misses, pool.figures.starts) == (2, 4, 4)
        assert held(pool)[-2:] == [("b", 0), ("c", 0)]  # the most recently used last
        assert pool.figures.peak_memory == 400 and pool.figures.peak_processes == 4

    with_pool(body, memory_budget=350, meter=meter)


def freezer_state(pool: ProcessPool, lane: tuple[str, int]) -> str:
    """Return the freezer state of the cgroup of ``lane``'s bot, once it has settled (FREEZING passes)."""
    session = pool._running[lane]
    assert session.process is not None and session.process.pid is not None
    group = pool._groups[lane[0]]
    folder = next(f for controller, f in group.parents if controller == "freezer")
    state = Path(folder, f"{CGROUP_PREFIX}{session.process.pid}", "freezer.state")
    end = time.monotonic() + 10
    while (text := state.read_text().strip()) == "FREEZING" and time.monotonic() < end:
        time.sleep(0.01)
    return text


def settled(pool: ProcessPool, seated: str, idle: str | None) -> bool:
    """Return whether the process of bot ``seated`` is thawed and that of ``idle`` (if any) frozen."""
    return freezer_state(pool, (seated, 0)) == "THAWED" and (idle is None or freezer_state(pool, (idle, 0)) == "FROZEN")


@pytest.mark.process
@pytest.mark.skipif(CGROUPS.cgroups is None and not CGROUPS_DUE, reason=f"no cgroups here: {CGROUPS.reason}")
def test_an_idle_process_is_frozen_until_it_plays_again_every_time() -> None:
    """The pool freezes its idle processes after each seating, and a process seated again is thawed; told once:
    a word to a supervisor wakes it and writes the freezer."""
    async def body(pool: ProcessPool) -> None:
        for deal, seated, idle in [(1, "a", None), (2, "b", "a"), (3, "a", "b"), (4, "b", "a"), (5, "b", "a")]:
            await pool.seat([quick(seated)], deal=DealKey("cabanga", deal))
            end = time.monotonic() + 10
            while not settled(pool, seated, idle) and time.monotonic() < end:
                await asyncio.sleep(0.01)  # each supervisor reads its word when it is scheduled
            assert freezer_state(pool, (seated, 0)) == "THAWED", deal
            assert idle is None or freezer_state(pool, (idle, 0)) == "FROZEN", deal

    with_pool(body, sandbox=CGROUPS)


@pytest.mark.process
def test_tables_seated_at_once_never_share_a_process_nor_give_one_a_deal_twice() -> None:
    async def body(pool: ProcessPool) -> None:
        x, y = DealKey("cabanga", 10), DealKey("cabanga", 11)
        first, second = await asyncio.gather(pool.seat([quick("a")], deal=x, table=0),
                                             pool.seat([quick("a")], deal=y, table=1))
        assert first[0].slot is not second[0].slot
        assert pool._busy == {0: {("a", 0)}, 1: {("a", 1)}} or pool._busy == {0: {("a", 1)}, 1: {("a", 0)}}
        lane_x = next(iter(pool._busy[0]))
        # table 1 now plays deal x: never with the process that played it at table 0, which is free again only
        # for another deal
        await pool.seat([quick("a")], deal=y, table=0)
        await pool.seat([quick("a")], deal=x, table=1)
        assert lane_x not in pool._busy[1]
        assert pool.figures.starts == 2  # the two processes served both tables

    with_pool(body)


@pytest.mark.process
def test_processes_started_ahead_are_seated_warm_and_a_failed_start_charges_its_bot_only() -> None:
    async def body(pool: ProcessPool) -> None:
        assert pool.prepare([quick("a"), quick("b")], DEAL, matches=2) == 4  # two processes of each
        for _ in range(200):
            if not pool._starting:
                break
            await asyncio.sleep(0.05)
        await pool.seat([quick("a"), quick("b")], deal=DEAL)
        assert (pool.figures.ahead, pool.figures.hits, pool.figures.misses) == (4, 2, 0)
        assert pool.held() == {"a": 2, "b": 2}  # what the scheduler is told is warm: seated ones too
        assert pool.started_at(0) == 2  # started for this match, ahead of it
        # the second rotation is warm too; a bot whose start ahead failed is the only one charged
        pool.prepare([quick("a"), BROKEN], DealKey("cabanga", 2))
        with pytest.raises(LaunchError) as failed:
            await pool.seat([quick("a"), BROKEN], deal=DealKey("cabanga", 2))
        assert list(failed.value.bots) == ["broken"] and "exited" in str(failed.value)
        await pool.seat([quick("b"), quick("a")], deal=DEAL)  # still warm: rotation 1 of the first deal
        assert (pool.figures.starts, pool.figures.misses) == (5, 0)  # the broken bot's one start, ahead

    with_pool(body)


@pytest.mark.process
def test_a_match_seated_ahead_holds_its_processes_and_has_played_its_deal_only_once_it_begins() -> None:
    async def body(pool: ProcessPool) -> None:
        x = DealKey("cabanga", 20)
        await pool.seat([quick("a")], deal=x, table=0)  # playing: process 0
        await pool.seat([quick("a")], deal=DealKey("cabanga", 21), table=1, ahead=True)
        assert pool._busy[1] == {("a", 1)}  # held for it: another seating keeps off it
        await pool.seat([quick("a")], deal=DealKey("cabanga", 22), table=2)
        assert pool._busy[2] == {("a", 2)}
        # not begun: its deal is not played yet, so once it is given up, process 1 may still play deal 21
        pool.vacate(1)
        await pool.seat([quick("a")], deal=DealKey("cabanga", 21), table=1, ahead=True)
        assert pool._busy[1] == {("a", 1)} and pool.begin(1)
        pool.vacate(1)
        pool.vacate(2)
        await pool.seat([quick("a")], deal=DealKey("cabanga", 21), table=1)  # begun: process 1 played it
        assert pool._busy[1] == {("a", 2)}
        assert pool.figures.starts == 3

    with_pool(body)


@pytest.mark.process
def test_a_match_seated_ahead_whose_process_ended_meanwhile_does_not_begin_and_is_seated_again() -> None:
    async def body(pool: ProcessPool) -> None:
        await pool.seat([quick("a")], deal=DealKey("cabanga", 30), table=0)
        pool.vacate(0)
        await pool.seat([quick("a")], deal=DealKey("cabanga", 31), table=0, ahead=True)
        process = pool._running[("a", 0)].process
        assert process is not None and process.pid is not None
        os.killpg(process.pid, signal.SIGKILL)  # the bot and its supervisor (its own session), idle between matches
        end = time.monotonic() + 10
        while pool._running[("a", 0)].ready and time.monotonic() < end:
            await asyncio.sleep(0.02)
        assert not pool.begin(0) and 0 not in pool._busy  # nothing held for it
        await pool.seat([quick("a")], deal=DealKey("cabanga", 31), table=0)  # seated again: a new process 0
        assert pool._busy[0] == {("a", 0)} and pool.restarts == 1 and pool.figures.starts == 2

    with_pool(body)


@pytest.mark.process
def test_a_match_seated_ahead_starts_its_processes_in_turn_unless_its_table_waits_for_them() -> None:
    """Processes a match seated ahead needs start one at a time with those started ahead (a burst would take the
    cores from the matches being played), and at once when its table is free (:meth:`ProcessPool.hurry`)."""
    slow = BotSpec("slow", ("{python}", "-c", "import time; time.sleep(60)"), ROOT)  # never says hello

    async def body(pool: ProcessPool) -> None:
        pool.ahead_at_once = 1
        pool.prepare([slow], DEAL)  # takes the one turn, for up to the connect timeout
        seating = asyncio.ensure_future(pool.seat([quick("a")], deal=DEAL, table=0, ahead=True))
        await asyncio.sleep(0.3)  # long enough for a start in turn to begin, were it not held
        process = pool._running[("a", 0)].process
        assert not seating.done() and process is not None and process.pid is None  # waits for its turn, unstarted
        pool.hurry(0)
        seats = await asyncio.wait_for(seating, 20)
        assert len(seats) == 1 and pool._running[("a", 0)].ready

    with_pool(body, connect_timeout=50.0)


@pytest.mark.process
def test_an_arena_killed_while_its_processes_start_ahead_leaves_none_behind(tmp_path: Path) -> None:
    marker = f"arena-pool-test-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "killed_arena.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio, sys
        from pathlib import Path
        from arena.core.deals import DealKey
        from arena.launch.botlist import BotSpec
        from arena.launch.pool import ProcessPool
        from arena.launch.runner import serving

        async def main():
            async with serving() as server:
                pool = ProcessPool(server, keep=None)  # the machine's own sandbox: the jail where there is one
                slow = BotSpec("slow", ("{{python}}", "-c", "import time; time.sleep(120)", {marker!r}),
                               Path({str(tmp_path)!r}))
                pool.prepare([slow], DealKey("cabanga", 1), matches=4)
                print("preparing", flush=True)
                await asyncio.sleep(120)

        asyncio.run(main())
        """))
    arena = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert arena.stdout is not None and arena.stdout.readline().strip() == "preparing"
        deadline = time.monotonic() + 30
        while not processes_naming(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_naming(marker), "no process started ahead"
    finally:
        arena.send_signal(signal.SIGKILL)
        arena.wait(10)
    deadline = time.monotonic() + 15
    while processes_naming(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_naming(marker), f"processes outlived their arena: {processes_naming(marker)}"


def test_the_default_budget_is_a_share_of_what_this_machine_has() -> None:
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        total = next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:"))
    assert 0 < default_memory_budget() <= total // 2
    assert default_memory_budget(0.25) <= default_memory_budget(0.5)
