"""Executors: where the ladder's matches are played. The ladder plans, rates and stores; an executor plays.

A :class:`Job` is one match of a deal set: the deal, the rotation, the bots by seat, the seed and the rules
(game, options, clock, fault limit, sealed window), and an opaque match token. It is a plain picklable value,
so it can be sent to another machine (:mod:`arena.ladder.cluster`). An executor plays it and returns a
:class:`Played`: the match's summary and packed replay, both made where it was played, and where the time
went. A bot that does not start is a :class:`arena.launch.process.LaunchError` naming it, raised by
:meth:`Executor.play`; the ladder decides what to do about it (try again, leave the bot out).

:class:`LocalExecutor` plays on this machine: ``tables`` tables of the shared arena server, each a
:class:`arena.launch.pool.ProcessPool` with its own deal ledger and warm processes, so no bot process plays a deal
twice. A job goes to a free table; one asked while every table plays is seated meanwhile (its processes held
for it) and begins as soon as a table is free, so that the table passes from match to match at once (a worker
process queues a table's next match so: :mod:`arena.ladder.workers`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arena.core import replay as replay_format
from arena.core.deals import DealKey
from arena.core.referee import DEFAULT_CLOCK, Clock, MatchRecord, MatchSummary, referee_match
from arena.games.base import Game, Options
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool, default_memory_budget
from arena.launch.runner import serving
from arena.launch.sandbox import CPU_SHARES, Sandbox
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer


@dataclass(frozen=True)
class Job:
    """One match to play: rotation ``rotation`` of deal set ``deal``, ``bots`` by seat, from ``seed``."""

    deal: int
    rotation: int
    bots: tuple[BotSpec, ...]
    seed: int
    game: Game
    options: Options
    match: str
    """The match token: opaque, never derived from the seed (bots see it)."""
    clock: Clock = DEFAULT_CLOCK
    max_faults: int = 3
    sealed_window: float = 0.0

    @property
    def seating(self) -> list[str]:
        """Return the bots' names by seat."""
        return [b.name for b in self.bots]

    @property
    def label(self) -> str:
        """Return the match's name in notes: ``d<deal>r<rotation>``."""
        return f"d{self.deal}r{self.rotation}"


@dataclass(frozen=True)
class Played:
    """A finished match, as much of it as the ladder's head needs, and where its time went."""

    summary: MatchSummary
    """The outcome, faults and decision times (:meth:`arena.core.referee.MatchRecord.summary`)."""
    replay: bytes
    """The match's replay as a database stores it (:func:`arena.core.replay.pack`), made where it was played."""
    seating: float
    """Seconds its table stood free waiting for its bots: starting processes, their hello, telling them a match
    begins (next to nothing for a match seated while the one before it played)."""
    seconds: float
    """Seconds inside the match itself."""
    starts: int = 0
    """Bot processes started for it."""
    sandbox: str = ""
    """The isolation level the bots played under (README "Sandbox"); empty when not known."""
    where: str = ""
    """Where it was played (a node's name), empty on this machine."""

    @classmethod
    def of(cls, record: MatchRecord, seating: float, seconds: float, starts: int = 0, sandbox: str = "") -> Played:
        """Return the played match of ``record``: its summary and packed replay, made here, where it was played.

        The head gets a few kilobytes of plain values to unpickle, not the record's events and cards, and
        compresses no replay: that work is spread over the tables (``benchmarks/cluster.py`` measures the head).
        """
        return cls(record.summary(), replay_format.pack(record), seating, seconds, starts, sandbox)


@dataclass(frozen=True)
class StartFailed:
    """A :class:`LaunchError` of a table elsewhere (a cluster's node, a worker process), as a plain value that
    crosses back to the ladder's head, which raises the :class:`LaunchError` again."""

    message: str
    bots: tuple[str, ...]


class Executor(Protocol):
    """Plays jobs: at most :attr:`tables` at once. :meth:`start` before the first, :meth:`close` at the end."""

    @property
    def tables(self) -> int:
        """Return how many matches it plays at once."""
        ...

    @property
    def slots(self) -> int:
        """Return how many matches it takes at once: :attr:`tables`, or more when it queues a table's next match
        behind the one it plays, to start it as soon as that one ends."""
        ...

    async def start(self) -> None:
        """Get ready to play (start servers, reach the cluster)."""
        ...

    def prepare(self, jobs: Sequence[Job]) -> None:
        """Start ahead, without waiting, what ``jobs`` will need (a hint: an executor may do nothing)."""
        ...

    def warm(self) -> Mapping[str, int]:
        """Return how many processes of each bot are held warm for the next matches (empty: not known)."""
        ...

    async def run(self, job: Job) -> Played:
        """Play ``job``; raise :class:`arena.launch.process.LaunchError` naming the bots that did not start."""
        ...

    async def release(self) -> None:
        """Say that one fewer match will be asked at once from now on (a table may stop its bots)."""
        ...

    async def close(self) -> None:
        """Stop everything :meth:`start` and :meth:`play` started; matches in progress are abandoned."""
        ...


def ladder_pool(server: ArenaServer, *, log_dir: Path | None, sandbox: Sandbox | None,
                memory_budget: int | None = None, tables: int = 1, cpu_shares: int = CPU_SHARES,
                log_numbering: tuple[int, int] = (0, 1)) -> ProcessPool:
    """Return the warm process pool of a ladder's tables on this machine, within ``memory_budget`` bytes
    (default: :func:`arena.launch.pool.default_memory_budget`).

    A process never plays a deal twice (:mod:`arena.core.deals`), so a deal set of n seats needs n processes of
    each of its n bots; the pool keeps them warm for whichever table plays that bot next, as many as the memory
    budget holds, the least recently used stopped beyond it. Its processes log in ``log_dir`` (``BOT-K.log``,
    numbered by ``log_numbering``: :attr:`ProcessPool.log_numbering`).
    """
    return ProcessPool(server, log_dir=log_dir, keep=None, sandbox=sandbox, tables=tables, cpu_shares=cpu_shares,
                       memory_budget=memory_budget if memory_budget is not None else default_memory_budget(),
                       log_numbering=log_numbering)


class LocalExecutor:
    """Plays jobs on this machine, on ``tables`` tables of one shared arena server and one warm process pool.

    ``make_pool(server)`` makes the pool (default :func:`ladder_pool` within ``memory_budget`` bytes). Without a
    log folder the bots still log to a private one, so a bot that fails to start can say why. :meth:`prepare`
    starts ahead the processes of planned matches.
    """

    def __init__(self, tables: int = 1, *, seats: int = 4, log_dir: Path | None = None,
                 sandbox: Sandbox | None = None, memory_budget: int | None = None,
                 make_pool: Callable[[ArenaServer], ProcessPool] | None = None, cpu_shares: int = CPU_SHARES,
                 log_numbering: tuple[int, int] = (0, 1)) -> None:
        self._tables = tables
        self.log_numbering = log_numbering
        self.cpu_shares = cpu_shares
        """Each bot's CPU share where there are cgroups: fewer than a bot's default for matches that yield to
        others (a contest's scrimmages)."""
        self.seats = seats
        self.log_dir = log_dir
        self.sandbox = sandbox
        self.memory_budget = memory_budget
        self.make_pool = make_pool
        self._stack: contextlib.AsyncExitStack | None = None
        self.pool: ProcessPool | None = None
        self._free: list[int] | None = None
        """The tables free now (``None`` before :meth:`start`)."""
        self._line: collections.deque[asyncio.Future[int]] = collections.deque()
        """The matches seated (or being seated) while every table played, in the order they were asked: each
        gets the next table freed."""
        self._freed: list[float] = []
        """When each table was last freed (or the executor started)."""
        self._places: list[int] = []
        """The pool's places (:meth:`ProcessPool.seat`'s ``table``) of matches that ended, to be used again."""
        self._placed = 0
        self._ahead = asyncio.Semaphore(tables)
        """One match seated ahead per table (:meth:`_seat_in_line`)."""

    @property
    def tables(self) -> int:
        return self._tables

    @property
    def slots(self) -> int:
        return self._tables

    @property
    def starts(self) -> int:
        """Return the bot processes started so far, by every table."""
        return self.pool.starts if self.pool is not None else 0

    async def start(self) -> None:
        stack = contextlib.AsyncExitStack()
        try:
            server = await stack.enter_async_context(serving())
            log_dir = self.log_dir
            if log_dir is None:
                log_dir = stack.enter_context(tempdir.folder("logs"))
            if self.make_pool is not None:
                self.pool = self.make_pool(server)
            else:
                self.pool = ladder_pool(server, log_dir=log_dir, sandbox=self.sandbox,
                                        memory_budget=self.memory_budget, tables=self._tables,
                                        cpu_shares=self.cpu_shares, log_numbering=self.log_numbering)
        except BaseException:
            await stack.aclose()
            raise
        self._stack = stack
        self._free = list(range(self._tables - 1, -1, -1))
        self._freed = [time.perf_counter()] * self._tables

    def prepare(self, jobs: Sequence[Job]) -> None:
        """Start now the processes ``jobs`` (say, a planned deal set's rotations) will need and the pool lacks."""
        if self.pool is None:
            return
        deals: dict[DealKey, list[Job]] = {}
        for job in jobs:
            deals.setdefault(DealKey(job.game.name, job.seed), []).append(job)
        for deal, same in deals.items():  # the rotations of a deal set: the same bots, a process each per rotation
            self.pool.prepare(same[0].bots, deal, matches=len(same))

    def warm(self) -> Mapping[str, int]:
        """Return the processes of each bot the machine's pool holds (idle, playing or starting ahead)."""
        return self.pool.held() if self.pool is not None else {}

    async def run(self, job: Job) -> Played:
        """Play ``job`` at the first free table. When every table plays, its bots are seated meanwhile (their
        processes held for it, started in turn if they must be) and it begins as soon as a table is free, after the
        matches asked before it."""
        assert self._free is not None and self.pool is not None, "start() first"
        pool = self.pool
        # the pool's name for this match's seats, until it ends: a table's next match is seated while it plays
        if self._places:
            place = self._places.pop()
        else:
            place, self._placed = self._placed, self._placed + 1
        asked = time.perf_counter()
        try:
            if self._line or not self._free:
                table, seats, starts = await self._seat_ahead(job, place)
            else:
                table = self._free.pop()
                try:
                    seats = await seat_job(pool, job, place)
                except BaseException:
                    self._hand_on(table)
                    raise
                starts = pool.started_at(place)
            try:
                began = time.perf_counter()
                # the time the table stood free for this match's bots: from when it was free (or the match was
                # asked, if later) to the match's beginning; next to nothing when they were seated meanwhile
                seating = max(0.0, began - max(self._freed[table], asked))
                record = await referee_match(job.game, seats, job.seed, job.options, clock=job.clock,
                                             max_faults=job.max_faults, match_id=job.match,
                                             sealed_window=job.sealed_window)
                seconds = time.perf_counter() - began
            finally:
                self._freed[table] = time.perf_counter()
                self._hand_on(table)
        finally:
            pool.vacate(place)
            self._places.append(place)
        # the table is free: the match waiting for it begins (its first requests sent) before this one's replay is
        # packed, which then costs the loop's time while that match's bots think
        await asyncio.sleep(0)
        return Played.of(record, seating, seconds, starts, pool.sandbox.level)

    def _hand_on(self, table: int) -> None:
        """Give ``table`` to the first match in line, or keep it free."""
        while self._line:
            waiter = self._line.popleft()
            if not waiter.done():
                waiter.set_result(table)
                return
        if self._free is not None:  # None: closed
            self._free.append(table)

    async def _seat_in_line(self, job: Job, place: int) -> list[RemoteSeat]:
        """Seat ``job`` ahead once fewer matches than there are tables are seated ahead: one waiting for each table
        (the processes of a match further back may be those of a match before it)."""
        assert self.pool is not None
        await self._ahead.acquire()
        try:
            return await seat_job(self.pool, job, place, ahead=True)
        except BaseException:
            self._ahead.release()
            raise

    async def _seat_ahead(self, job: Job, place: int) -> tuple[int, list[RemoteSeat], int]:
        """Seat ``job`` at ``place`` while every table plays, and take the first table free after the matches
        asked before it (in that order: a match asked later, seated first, would hold the processes these need
        and have the pool start more); return the table, the seats and the processes started for it."""
        assert self.pool is not None
        pool = self.pool
        turn: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._line.append(turn)
        seating = asyncio.ensure_future(self._seat_in_line(job, place))
        try:
            await asyncio.wait((seating, turn), return_when=asyncio.FIRST_COMPLETED)
            if not seating.done():  # the table waits for its processes: those that wait for their turn start now
                pool.hurry(place)
            seats = await seating
            starts = pool.started_at(place)
            table = await turn
        except BaseException:
            if seating.done() and not seating.cancelled() and seating.exception() is None:
                self._ahead.release()  # seated, and no longer waiting
            seating.cancel()
            if turn.done() and not turn.cancelled():
                self._hand_on(turn.result())
            else:
                turn.cancel()
            raise
        self._ahead.release()
        if not pool.begin(place):  # one of its processes ended meanwhile: seat them again, now
            try:
                seats = await seat_job(pool, job, place)
            except BaseException:
                self._hand_on(table)
                raise
            starts += pool.started_at(place)
        return table, seats, starts

    async def release(self) -> None:
        """Say that a table has no more matches to play: the processes of its last match and every idle one
        are stopped now, while the other tables finish their last matches. The pool stays usable."""
        if self.pool is not None:
            await self.pool.release()

    async def close(self) -> None:
        if self.pool is not None:
            with contextlib.suppress(Exception):
                await self.pool.close()
        self._free = None
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.aclose()


async def seat_job(pool: ProcessPool, job: Job, place: int, ahead: bool = False) -> list[RemoteSeat]:
    """Seat ``job``'s bots from ``pool`` as ``place`` (:meth:`ProcessPool.seat`). Raises :class:`LaunchError` when a
    bot does not start."""
    return await pool.seat(list(job.bots), deal=DealKey(job.game.name, job.seed), match=job.match, table=place,
                           ahead=ahead)
