"""The warm process pool: a seat per bot for each match, its processes kept between matches.

:class:`ProcessPool` starts each launched bot in a :class:`arena.launch.session.BotSession` of its own, keeps idle
processes warm (frozen) for later matches, and never seats a process at a deal it has played. One pool may
serve several tables of a machine at once (``table=`` of :meth:`ProcessPool.seat`): a warm process of any bot
serves whichever table needs it next, within a memory budget, and the processes a planned match will need can
be started ahead (:meth:`ProcessPool.prepare`) while the current matches play.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.core.deals import DealKey, DealLedger, Lane
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError, log_file_name, machine_sandbox, raise_open_files
from arena.launch.sandbox import CPU_SHARES, Cgroups, Isolation, Sandbox, make_bot_group, own_cgroups, remove_bot_group
from arena.launch.session import BotSession
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer

CONNECT_TIMEOUT = 15.0
"""Seconds a launched bot has to start and say hello."""
REMOTE_CONNECT_TIMEOUT = 120.0
"""Seconds the arena waits for a remote bot (one it does not start) to connect with its token."""

METER_SECONDS = 10.0
"""How long a process's measured memory is trusted before it is measured again."""

Meter = Callable[[BotSession], int]
"""Returns the bytes of memory a session's processes hold (tests pass a fake)."""


def process_tree_memory(session: BotSession) -> int:
    """Return the resident memory of a launched bot's processes: its supervisor and everything below it (0 for
    a remote bot or one that is gone). Shared pages are counted in each process: an estimate on the safe side."""
    pid = session.process.pid if session.process is not None else None
    if pid is None:
        return 0
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    todo, seen = [pid], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{current}/statm", encoding="ascii") as statm:
                total += int(statm.read().split()[1]) * page
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as children:
                    todo += [int(child) for child in children.read().split()]
    return total


def default_memory_budget(share: float = 0.5) -> int:
    """Return ``share`` of the memory this arena may use: the machine's, or its own cgroup's limit when lower."""
    total = 0
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                total = int(line.split()[1]) * 1024
    for limit in _cgroup_memory_limits():
        if 0 < limit < total:
            total = limit
    return int(total * share) if total else 4 * 1024**3


def _cgroup_memory_limits() -> list[int]:
    """Return the memory limits of this process's cgroup (v1 ``memory`` controller, or v2), where readable."""
    own = own_cgroups()
    files = [f"/sys/fs/cgroup/memory{own['memory']}/memory.limit_in_bytes"] if "memory" in own else []
    files += [f"/sys/fs/cgroup{own['']}/memory.max"] if "" in own else []
    limits: list[int] = []
    for name in files:
        with contextlib.suppress(OSError), open(name, encoding="ascii") as limit:
            value = limit.read().strip()
            if value.isdigit():
                limits.append(int(value))
    return limits


@dataclass
class PoolFigures:
    """What a pool did: processes started (at seating or ahead), seats served warm, and what it holds."""

    starts: int = 0
    """Processes started, at seating or ahead."""
    ahead: int = 0
    """Of :attr:`starts`, those started ahead of their match (:meth:`ProcessPool.prepare`)."""
    hits: int = 0
    """Seats served by a process already running (warm, or started ahead)."""
    misses: int = 0
    """Seats whose process had to be started at seating."""
    evicted: int = 0
    """Idle processes stopped to stay within the memory budget (or the count kept)."""
    processes: int = 0
    """Processes held now (running, warm or starting)."""
    peak_processes: int = 0
    memory: int = 0
    """Bytes the held processes use, as last measured."""
    peak_memory: int = 0



class ProcessPool:
    """The bot processes of a table, or of every table of a machine, each with its own socket, kept warm.

    :meth:`seat` returns a referee seat per bot, starting (or restarting, with a new token) only the processes
    that are not already running, connected and idle. No process is ever seated at a deal it has played:
    ``ledger`` (:class:`arena.core.deals.DealLedger`) picks each seat's process, and a new one is started when no
    warm process of the bot qualifies. A process that still owes answers from its previous match (stuck, or
    spinning) is restarted.

    Several tables may seat matches at once (``table``: a place, a table's current or next match): a process
    seated by one is busy until that place is vacated (:meth:`vacate`) or seats its next match, and is never given
    to another meanwhile; a match may be seated ahead and begin later (:meth:`begin`). Idle processes stay warm
    (frozen) for later matches, of any table; the least recently used are stopped when the processes held use more than
    ``memory_budget`` bytes (measured by ``meter``, :func:`process_tree_memory`), or number more than ``keep``
    idle ones (``None``: no count). :meth:`prepare` starts ahead the processes a match will need.

    ``sandbox`` is the isolation of the bots (default: the strongest this machine gives,
    :func:`arena.launch.process.machine_sandbox`). ``server`` is the shared server, where remote bots connect;
    each launched bot has a server of its own (:class:`BotSession`).
    """

    def __init__(self, server: ArenaServer, *, log_dir: Path | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, keep: int | None = 0, sandbox: Sandbox | None = None,
                 ledger: DealLedger | None = None, memory_budget: int | None = None, meter: Meter | None = None,
                 clock: Callable[[], float] = time.monotonic, tables: int = 1, cpu_shares: int = CPU_SHARES,
                 log_numbering: tuple[int, int] = (0, 1)) -> None:
        self.server = server
        self.log_numbering = log_numbering
        """(first, step): the k-th process of a bot logs in ``BOT-(first + k * step).log``, so that the pools of
        several workers (:mod:`arena.ladder.workers`) share a log folder without sharing a file."""
        self.cpu_shares = cpu_shares
        """Each bot's CPU share where there are cgroups (:func:`arena.launch.sandbox.make_bot_group`)."""
        self.ledger = ledger if ledger is not None else DealLedger()
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.keep = keep
        self.memory_budget = memory_budget
        self.tables = tables
        """The tables it serves: a bot's cgroup bounds its processes here to what it may hold at each table."""
        self.meter = meter or process_tree_memory
        self.clock = clock
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        raise_open_files()
        self._running: dict[Lane, BotSession] = {}
        """Every process held, least recently used first."""
        self._busy: dict[int, set[Lane]] = {}
        """Per table, the processes seated at its current match."""
        self._starting: dict[Lane, asyncio.Task[str]] = {}
        """Processes started ahead whose hello has not come yet: what :meth:`BotSession.start` will return."""
        self._measured: dict[Lane, tuple[float, int]] = {}
        """When each process's memory was last measured, and the bytes."""
        self._groups: dict[str, Cgroups] = {}
        """Each launched bot's cgroup in this pool (with cgroups): all its processes here, bounded together."""
        self._folder: Path | None = None
        self._made = 0
        self._started_at: dict[int, int] = {}
        """Per table, the processes its last :meth:`seat` started, or seated for the first time after they were
        started ahead."""
        self._fresh: set[Lane] = set()
        """Processes started ahead and not seated yet."""
        self.figures = PoolFigures()
        self.restarts = 0
        self.ahead_at_once = max(1, (os.cpu_count() or 2) // 2)
        """Processes started ahead at once, at most."""
        self._ahead_slots: asyncio.Semaphore | None = None
        self._hurry: dict[Lane, asyncio.Event] = {}
        """Processes waiting for their turn to start (:meth:`_in_turn`): set, each starts at once."""
        self._held: dict[int, tuple[DealKey, list[Lane]]] = {}
        """Per table, the deal and the processes of a match seated ahead, to begin later."""

    @property
    def starts(self) -> int:
        """Processes started so far, at seating or ahead."""
        return self.figures.starts

    def held(self) -> Counter[str]:
        """Return how many processes of each bot the pool holds: idle, seated or starting ahead."""
        return Counter(name for name, _ in self._running)

    def started_at(self, table: int) -> int:
        """Return the processes started for the last :meth:`seat` of ``table``: at seating, or ahead of it."""
        return self._started_at.get(table, 0)

    def _session_folder(self) -> Path:
        """Return a new folder for one launched bot's socket, inside the pool's private folder."""
        if self._folder is None:
            self._folder = tempdir.new_folder("bots")
        self._made += 1
        return self._folder / str(self._made)

    def _taken(self, table: int | None = None) -> set[Lane]:
        """Return the processes seated at the current match of every table but ``table``."""
        return {lane for t, lanes in self._busy.items() if t != table for lane in lanes}

    def _lanes(self, bots: Sequence[BotSpec], deal: DealKey, taken: set[Lane], ledger: DealLedger | None = None
               ) -> list[Lane]:
        lanes: list[Lane] = []
        for bot in bots:
            lanes.append((ledger or self.ledger).lane(bot.name, deal, [*taken, *lanes]))
            if bot.remote and lanes[-1][1] > 0:  # one stream per token: the arena cannot start another
                raise LaunchError(f"remote bot {bot.name!r} has played this deal already (or holds another seat): "
                                  "it cannot be seated at it", bots=[bot.name])
        return lanes

    def _new_session(self, lane: Lane, bot: BotSpec, name: str) -> BotSession:
        first, step = self.log_numbering
        log_path = (self.log_dir / log_file_name(bot.log_key, first + lane[1] * step) if self.log_dir is not None
                    else None)
        session = BotSession(bot, name, shared=self.server, sandbox=self.sandbox, log_path=log_path,
                             folder=None if bot.remote else self._session_folder(),
                             group=None if bot.remote else self._group(bot))
        self._running[lane] = session
        self.figures.starts += 1
        self._count()
        return session

    def _timeout(self, session: BotSession) -> float:
        return max(self.connect_timeout, REMOTE_CONNECT_TIMEOUT) if session.remote else self.connect_timeout

    def prepare(self, bots: Sequence[BotSpec], deal: DealKey, matches: int = 1) -> int:
        """Start now, without waiting, the processes that ``matches`` matches of ``bots`` at ``deal`` (say, the
        rotations of a planned deal set) would have to start at seating; return how many were started.

        A process started ahead is seated as any warm one. One whose start failed before its seating is started
        again there; one still starting is waited for; either way a failure counts against its own bot only, as a
        start at seating would. Remote bots are not started.
        """
        launched = [b for b in bots if not b.remote]
        if self.memory_budget is not None and self._memory() >= self.memory_budget:
            return 0  # no room: the next seating stops idle processes first
        # the lanes the matches will get, each after the one before; a lane another table's match holds now is
        # not counted out (that match is likely over by then; if not, the seating starts one more)
        probe = self.ledger.probe()
        started = 0
        for _ in range(matches):
            lanes = self._lanes(launched, deal, set(), probe)
            probe.played(lanes, deal)
            for lane, bot in zip(lanes, launched, strict=True):
                if lane in self._running:
                    continue
                session = self._new_session(lane, bot, bot.name)
                self._fresh.add(lane)
                self.figures.ahead += 1
                started += 1
                task = asyncio.get_running_loop().create_task(self._in_turn(session, lane))
                self._starting[lane] = task
                task.add_done_callback(functools.partial(self._started_ahead, lane))
        return started

    async def _in_turn(self, session: BotSession, lane: Lane) -> str:
        """Start ``session``, the process of ``lane``, once fewer than :attr:`ahead_at_once` others started ahead
        of their matches are starting (a burst of starts would take the cores from the matches being played), or
        at once when its match waits for it (:meth:`hurry`)."""
        if self._ahead_slots is None:
            self._ahead_slots = asyncio.Semaphore(self.ahead_at_once)
        slots = self._ahead_slots
        hurry = self._hurry[lane] = asyncio.Event()
        slot = asyncio.ensure_future(slots.acquire())
        hurried = asyncio.ensure_future(hurry.wait())
        try:
            await asyncio.wait((slot, hurried), return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            if slot.done() and not slot.cancelled():
                slots.release()
            slot.cancel()
            raise
        finally:
            hurried.cancel()
            if self._hurry.get(lane) is hurry:
                del self._hurry[lane]
        held = slot.done()
        if not held:
            slot.cancel()  # a slot given meanwhile goes to the next start in turn
        try:
            return await session.start(self._timeout(session))
        finally:
            if held:
                slots.release()

    def hurry(self, table: int) -> None:
        """Start now the processes of ``table``'s match that wait for their turn to start: its table waits for
        them."""
        for lane in self._busy.get(table, ()):
            event = self._hurry.get(lane)
            if event is not None:
                event.set()

    def _started_ahead(self, lane: Lane, task: asyncio.Task[str]) -> None:
        if self._starting.get(lane) is task:
            del self._starting[lane]
        if not task.cancelled():
            task.exception()  # seen; a failed start is found again at seating (the session is not ready)

    async def seat(self, bots: Sequence[BotSpec], names: Sequence[str] | None = None, *,
                   deal: DealKey, match: str = "", table: int = 0, ahead: bool = False) -> list[RemoteSeat]:
        """Return one seat per bot in ``bots`` (a bot listed twice gets two processes), all connected, for a
        match of ``deal`` at ``table``: no process gets a seat at a deal it has played before, nor one another
        table's current match holds. The processes of ``table``'s previous match are free again.

        ``names`` are the seats' display names (default: the bots' names). ``match`` names the match about to
        be played: each bot's log gets a marker line with it and the seat. Raises :class:`LaunchError`
        naming every bot that did not start or connect (with the end of its output when it has a log);
        ``error.bots`` holds their names.

        With ``ahead=True`` the match is seated ahead, to begin when :meth:`begin` says so (say, while another
        match plays at its table): its processes are held for it and told a match begins (so that none of that
        is left for the moment it begins), the processes it still needs start in turn with those started ahead
        (:attr:`ahead_at_once`) instead of all at once, and the deal counts as played by them once it begins.
        """
        names = list(names) if names is not None else [b.name for b in bots]
        self._busy.pop(table, None)
        self._held.pop(table, None)
        lanes = self._lanes(bots, deal, self._taken(table))
        self._busy[table] = set(lanes)  # before any wait: another table seating meanwhile keeps off them
        starting: list[BotSession] = []
        waiting: list[asyncio.Future[str]] = []
        self._started_at[table] = len(self._fresh & set(lanes))
        self._fresh -= set(lanes)
        try:
            for lane, bot, name in zip(lanes, bots, names, strict=True):
                early = self._starting.get(lane)
                if early is not None:  # started ahead, its hello not come yet: wait for it with the others
                    session = self._running[lane]
                    starting.append(session)
                    if not ahead and lane in self._hurry:  # waiting for its turn to start: start it now
                        self._hurry[lane].set()
                    waiting.append(early)
                    self.figures.hits += 1
                    continue
                held = self._running.get(lane)
                if held is not None and held.ready:
                    self._running[lane] = self._running.pop(lane)  # most recently used last
                    held.new_match()
                    self.figures.hits += 1
                    continue
                if held is not None:
                    await self._stop(lane)
                    self.restarts += 1
                session = self._new_session(lane, bot, name)
                self.figures.misses += 1
                self._started_at[table] += 1
                starting.append(session)
                waiting.append(asyncio.ensure_future(self._in_turn(session, lane) if ahead
                                                     else session.start(self._timeout(session))))
            results = await asyncio.gather(*waiting, return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                raise errors[0]
        except BaseException:
            for waited in waiting:
                waited.cancel()
            for lane in [k for k, s in self._running.items() if s in starting]:
                await self._stop(lane)
            self._busy.pop(table, None)
            raise
        failed = [r for r in results if isinstance(r, str) and r]
        if failed:
            bad = [k for k, s in self._running.items() if s in starting and not s.slot.online]
            for k in bad:
                await self._stop(k)
            self._busy.pop(table, None)
            raise LaunchError("; ".join(failed), bots=[k[0] for k in bad])
        for lane in lanes:  # most recently used last
            self._running[lane] = self._running.pop(lane)
        await self._evict()
        for seat, (lane, name) in enumerate(zip(lanes, names, strict=True)):
            self._running[lane].note(f"match {match or '(unnamed)'} starts: seat {seat} as {name}")
        if ahead:
            self._held[table] = (deal, lanes)
        else:
            self.ledger.played(lanes, deal)
        return [self._running[lane].seat(name) for lane, name in zip(lanes, names, strict=True)]

    def begin(self, table: int) -> bool:
        """Begin the match seated ahead at ``table`` (``seat(..., ahead=True)``): its processes have played its
        deal from now on. Return ``False``, and hold nothing for it, when one of them can no longer play (it
        ended, or was stopped meanwhile): seat the match again then."""
        deal, lanes = self._held.pop(table, (None, []))
        if deal is None or any(lane not in self._running or not self._running[lane].ready for lane in lanes):
            self._busy.pop(table, None)
            return False
        self.ledger.played(lanes, deal)
        return True

    def vacate(self, table: int) -> None:
        """Say that ``table``'s match is over (or will not be played): its processes are free for any table."""
        self._busy.pop(table, None)
        self._held.pop(table, None)

    def _group(self, bot: BotSpec) -> Cgroups | None:
        """Return the cgroup of ``bot`` in this pool, made at its first process (``None`` without cgroups)."""
        if self.sandbox.cgroups is None or self.sandbox.isolation is Isolation.NONE:
            return None
        if bot.name not in self._groups:
            try:
                self._groups[bot.name] = make_bot_group(self.sandbox.cgroups, bot.limits, self.tables,
                                                        self.cpu_shares)
            except OSError as exc:  # the arena's trouble (cgroups gone, out of them), not the bot's
                raise LaunchError(f"bot {bot.name!r}: cannot make its cgroup: {exc}") from None
        return self._groups[bot.name]

    async def retire(self, name: str) -> None:
        """Stop every process of the bot called ``name`` (say, a bot the ladder leaves out)."""
        leaving = [self._detach(lane) for lane in [k for k in self._running if k[0] == name]]
        await asyncio.gather(*(session.stop() for session in leaving))
        group = self._groups.pop(name, None)
        if group is not None:
            remove_bot_group(group)

    async def release(self) -> None:
        """Say that a table plays no more matches: every idle process is stopped (the processes of matches
        seated, and those started ahead and not seated yet, stay)."""
        busy = self._taken() | set(self._starting) | self._fresh  # what the other tables play or will play next
        leaving = [self._detach(lane) for lane in [k for k in self._running if k not in busy]]
        await asyncio.gather(*(session.stop() for session in leaving))

    def _memory(self) -> int:
        """Return the memory of the processes held, measuring those not measured for :data:`METER_SECONDS`."""
        now = self.clock()
        total = 0
        for lane, session in self._running.items():
            when, used = self._measured.get(lane, (-METER_SECONDS, 0))
            if now - when >= METER_SECONDS or used == 0:
                used = self.meter(session)
                self._measured[lane] = (now, used)
            total += used
        self.figures.memory = total
        self.figures.peak_memory = max(self.figures.peak_memory, total)
        return total

    async def _evict(self) -> None:
        """Stop the least recently used idle processes beyond the memory budget and ``keep``, and freeze the
        others until they play again. Busy and starting processes are never stopped."""
        busy = self._taken() | set(self._starting)
        idle = [k for k in self._running if k not in busy]
        stop: list[Lane] = []
        if self.keep is not None:
            stop = idle[: max(0, len(idle) - self.keep)]
        if self.memory_budget is not None:
            over = self._memory() - self.memory_budget
            for lane in idle:
                if over <= 0:
                    break
                if lane not in stop:
                    stop.append(lane)
                over -= self._measured.get(lane, (0.0, 0))[1]
        for lane in idle:
            if lane not in stop:
                self._running[lane].freeze()
        # out of the pool before the first wait: another table seating meanwhile cannot pick one of them
        leaving = [self._detach(lane) for lane in stop]
        self.figures.evicted += len(leaving)
        await asyncio.gather(*(session.stop() for session in leaving))

    def _count(self) -> None:
        self.figures.processes = len(self._running)
        self.figures.peak_processes = max(self.figures.peak_processes, self.figures.processes)

    def _detach(self, lane: Lane) -> BotSession:
        """Take the process of ``lane`` out of the pool (to be stopped): its lane's next process is a new one."""
        self.ledger.forget(lane)
        self._fresh.discard(lane)
        self._measured.pop(lane, None)
        ahead = self._starting.pop(lane, None)
        if ahead is not None:
            ahead.cancel()
        session = self._running.pop(lane)
        self._count()
        return session

    async def _stop(self, lane: Lane) -> None:
        await self._detach(lane).stop()

    async def close(self) -> None:
        """Say goodbye to every bot and stop every process (ask, terminate, kill)."""
        for task in self._starting.values():
            task.cancel()
        self._starting.clear()
        sessions = list(self._running.values())
        for lane in self._running:
            self.ledger.forget(lane)
        self._running.clear()
        self._busy.clear()
        self._held.clear()
        self._fresh.clear()
        self._measured.clear()
        self._count()
        await asyncio.gather(*(s.stop() for s in sessions))
        for group in self._groups.values():
            remove_bot_group(group)
        self._groups.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
