"""The ladder's tables in worker processes on this machine: an event loop per core.

One arena process serves every table's bots on one event loop, so when two tables' answers arrive together one
waits for the other's turn: on 2 cores, two tables of the random bot in one process played a decision every
196-215 us, in two processes of a table each every 135-145 us (docs/figures.md, issue 38's fourth pass;
``benchmarks/ladder.py`` measures the ladder). A
:class:`WorkerExecutor` spreads the tables over worker processes, as many as there are cores (at most one per
table). Each worker is a :class:`arena.ladder.executor.LocalExecutor` of its tables (its own arena server, deal
ledger and pool of warm bot processes, within its share of the memory budget), as a cluster's node is
(:mod:`arena.ladder.cluster`). The head (the ladder's own process) stays the only scheduler, rater and writer:
it hands a :class:`~arena.ladder.executor.Job` to a worker with a free table and gets the
:class:`~arena.ladder.executor.Played` back, its replay packed in the worker.

A bot process lives in exactly one worker, so no process plays a deal twice, as in one process. Each rotation of
a deal set has its worker (:func:`worker_for`), which starts its processes ahead (:meth:`WorkerExecutor.prepare`)
and plays it; another worker only when that one is gone.

The head and a worker talk over a Unix socket pair: a message is a 4-byte length and a pickle (both ends are
this package; no bot sees the socket). A worker ignores Ctrl-C (the head stops it, and the bots with it) and
stops when the head closes the socket or is gone. A worker that ends unasked fails the matches it was playing
with :class:`WorkerError`, which stops the ladder as any failure of the arena does: the matches not stored are
played again from their seeds by the next run.

Run by the head only: ``python -m arena.ladder.workers FD INDEX WORKERS`` (the socket's file descriptor, and
which of how many workers it is).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import pickle
import signal
import socket
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ladder.executor import Job, LocalExecutor, Played, StartFailed
from arena.launch.pool import PoolFigures, default_memory_budget
from arena.launch.process import LaunchError
from arena.launch.sandbox import CPU_SHARES, Sandbox

log = logging.getLogger("arena.ladder.workers")

HEADER = struct.Struct(">I")
MAX_MESSAGE = 1 << 30
"""The largest message either end sends (a replay is kilobytes; a bigger length is a broken stream)."""
START_TIMEOUT = 120.0
"""Seconds the head waits for a worker to be ready (import the arena, start its server)."""
QUEUED = 1
"""Matches queued at a worker's table behind the one it plays: it starts the next as soon as one ends, while the
head rates and stores that one and picks the match after."""
WAITING = 6
"""Matches the head asks for each table beyond those at its worker (:data:`QUEUED`), waiting there for their worker:
a match goes to the worker that plays its rotation (:func:`worker_for`), so a worker that gets ahead of the other
finds its next matches asked already, where a ladder asking only as many as the workers take would wait for the
slower one (6: a worker's table stood free when its next match was asked 160-230 times in the 1,000 matches of
``benchmarks/ladder.py`` without them, 0-75 times with them)."""
CLOSE_TIMEOUT = 60.0
"""Seconds the head waits for a worker to stop its bots and exit before it kills it."""


class WorkerError(RuntimeError):
    """A worker process failed (it ended unasked, or the arena failed in it): the ladder stops."""


@dataclass(frozen=True)
class Settings:
    """What a worker needs to play its tables: what :class:`LocalExecutor` takes."""

    tables: int
    seats: int
    log_dir: Path | None
    sandbox: Sandbox | None
    memory_budget: int
    cpu_shares: int


def default_workers(tables: int, cpus: int | None = None) -> int:
    """Return the workers for ``tables`` tables: one per core, at most one per table."""
    return max(1, min(tables, cpus or os.cpu_count() or 1))


def spread(tables: int, workers: int) -> list[int]:
    """Return each worker's tables: ``tables`` dealt out over ``workers`` in turn (table t is worker t mod
    workers's)."""
    return [tables // workers + (1 if i < tables % workers else 0) for i in range(workers)]


def worker_for(deal: int, rotation: int, seats: int, tables: int, workers: int) -> int:
    """Return the worker that plays rotation ``rotation`` of deal set ``deal``.

    The ladder's matches, deal set after deal set and rotation after rotation, are dealt over the tables in
    turn, and the tables over the workers in turn (:func:`spread`): each worker gets its tables' share of every
    deal set's rotations, and needs as few processes of a bot as that share (a process plays a deal once: a
    worker given two rotations of every deal set needs two processes of each bot, in whatever order it plays
    them). Sending a match to whichever worker is free instead would have a worker play a third rotation now
    and then, and start a process of each bot for it (a quarter of a second each)."""
    return (deal * seats + rotation) % tables % workers


async def _status(worker: _Worker, wait: float = 2.0) -> int | None:
    """Return the exit status of ``worker``'s process, waiting up to ``wait`` seconds for it (a worker that ends
    closes its socket first: its status follows); ``None`` if it still runs."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(worker.process.wait), wait)
    except TimeoutError:
        return None


def _frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


async def _send(writer: asyncio.StreamWriter, message: object) -> None:
    writer.write(_frame(message))
    await writer.drain()


async def _receive(reader: asyncio.StreamReader) -> Any:
    """Return the next message, or raise :class:`asyncio.IncompleteReadError` at the stream's end."""
    (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
    if size > MAX_MESSAGE:
        raise WorkerError(f"a message of {size} bytes: the stream is broken")
    return pickle.loads(await reader.readexactly(size))


# ----------------------------------------------------------------------------------------------- the head's side


@dataclass(eq=False)
class _Worker:
    index: int
    tables: int
    process: subprocess.Popen[bytes]
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    free: int = 0
    """Matches it may still be given: its tables, and one queued behind each (:data:`QUEUED`)."""
    held: Mapping[str, int] = field(default_factory=dict)
    figures: PoolFigures = field(default_factory=PoolFigures)
    waiting: dict[int, asyncio.Future[Any]] = field(default_factory=dict)
    listener: asyncio.Task[None] | None = None
    gone: str = ""
    """Why the worker can no longer be used (empty while it can)."""


class WorkerExecutor:
    """Plays jobs on this machine: ``tables`` tables spread over ``workers`` worker processes (default: one per
    core, at most one per table), each a :class:`LocalExecutor` of its tables within its tables' share of
    ``memory_budget`` bytes (default :func:`default_memory_budget`). Its bots log in ``log_dir`` (``BOT-K.log``,
    each worker's processes numbered apart)."""

    def __init__(self, tables: int, *, workers: int | None = None, seats: int = 4, log_dir: Path | None = None,
                 sandbox: Sandbox | None = None, memory_budget: int | None = None,
                 cpu_shares: int = CPU_SHARES, python: str = sys.executable) -> None:
        self._tables = tables
        self.workers = max(1, min(workers or default_workers(tables), tables))
        self.seats = seats
        self.log_dir = log_dir
        self.sandbox = sandbox
        self.memory_budget = memory_budget if memory_budget is not None else default_memory_budget()
        self.cpu_shares = cpu_shares
        self.python = python
        self._workers: list[_Worker] = []
        self._freed = asyncio.Event()
        self._waiting: dict[int, _Worker] = {}
        """The matches waiting for a place (:meth:`_table`), by the order they were asked: the worker each waits for."""
        self._tickets = 0
        self._ids = 0

    @property
    def tables(self) -> int:
        return self._tables

    @property
    def slots(self) -> int:
        return self._tables * (1 + QUEUED + WAITING)

    @property
    def pids(self) -> list[int]:
        """Return the workers' process ids, in order."""
        return [worker.process.pid for worker in self._workers]

    @property
    def figures(self) -> PoolFigures:
        """Return what the workers' pools did, summed (their peaks are summed too: an upper bound), as last told:
        by each match's end, and whole once :meth:`close` returns."""
        total = PoolFigures()
        for worker in self._workers:
            for name, value in dataclasses.asdict(worker.figures).items():
                setattr(total, name, getattr(total, name) + value)
        return total

    async def start(self) -> None:
        try:
            self._workers = [await self._spawn(i, count) for i, count in enumerate(spread(self._tables, self.workers))]
            await asyncio.gather(*(self._ready(w) for w in self._workers))
        except BaseException:
            await self.close()
            raise

    async def _spawn(self, index: int, tables: int) -> _Worker:
        head, end = socket.socketpair()
        try:
            # this arena, whatever the head's folder: the folder holding the package first on the worker's path
            root = str(Path(__file__).resolve().parents[2])
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
            process = subprocess.Popen([self.python, "-m", "arena.ladder.workers", str(end.fileno()),
                                        str(index), str(self.workers)],
                                       pass_fds=(end.fileno(),), stdin=subprocess.DEVNULL, env=env)
        except BaseException:
            head.close()
            raise
        finally:
            end.close()
        reader, writer = await asyncio.open_connection(sock=head)
        return _Worker(index, tables, process, reader, writer)

    async def _ready(self, worker: _Worker) -> None:
        log_dir = self.log_dir.resolve() if self.log_dir is not None else None
        settings = Settings(worker.tables, self.seats, log_dir, self.sandbox,
                            self.memory_budget * worker.tables // self._tables, self.cpu_shares)
        try:
            await _send(worker.writer, ("start", 0, settings))
            kind, _, value = await asyncio.wait_for(_receive(worker.reader), START_TIMEOUT)
        except (asyncio.IncompleteReadError, ConnectionError, TimeoutError):
            raise WorkerError(f"worker {worker.index} did not start (exit status {await _status(worker)}); "
                              "its error is above") from None
        if kind != "ready":
            raise WorkerError(f"worker {worker.index} did not start: {value}")
        worker.free = worker.tables * (1 + QUEUED)
        worker.listener = asyncio.get_running_loop().create_task(self._listen(worker),
                                                                 name=f"ladder-worker-{worker.index}")

    async def _listen(self, worker: _Worker) -> None:
        """Hand each answer of ``worker`` to the call waiting for it; at the stream's end, fail them all."""
        try:
            while True:
                kind, number, value, held, figures = await _receive(worker.reader)
                worker.held, worker.figures = held, figures
                waiter = worker.waiting.pop(number, None)
                if waiter is not None and not waiter.done():
                    if kind == "error":
                        waiter.set_exception(WorkerError(f"worker {worker.index}: {value}"))
                    else:
                        waiter.set_result(value)
        except (asyncio.IncompleteReadError, ConnectionError, WorkerError, pickle.UnpicklingError, EOFError,
                ValueError) as exc:
            status = await _status(worker)
            worker.gone = (f"worker {worker.index} ended (exit status {status})" if status is not None
                           else f"worker {worker.index} broke its stream ({type(exc).__name__})")
        for waiter in worker.waiting.values():
            if not waiter.done():
                waiter.set_exception(WorkerError(worker.gone))
        worker.waiting.clear()
        self._freed.set()

    async def _ask(self, worker: _Worker, kind: str, value: object) -> Any:
        if worker.gone:
            raise WorkerError(worker.gone)
        self._ids += 1
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.waiting[self._ids] = waiter
        try:
            await _send(worker.writer, (kind, self._ids, value))
        except ConnectionError:
            worker.waiting.pop(self._ids, None)
            raise WorkerError(worker.gone or f"worker {worker.index} is gone") from None
        return await waiter

    def _home(self, job: Job) -> _Worker:
        """Return the worker that plays ``job`` (:func:`worker_for`), or another live one when it is gone."""
        worker = self._workers[worker_for(job.deal, job.rotation, len(job.bots), self._tables, len(self._workers))]
        if not worker.gone:
            return worker
        live = [w for w in self._workers if not w.gone]
        if not live:
            raise WorkerError("; ".join(w.gone for w in self._workers) or "no worker")
        return max(live, key=lambda w: w.free)

    def prepare(self, jobs: Sequence[Job]) -> None:
        """Have each worker start ahead the processes of the jobs (a deal set's rotations) it will play."""
        shares: dict[int, list[Job]] = {}
        for job in jobs:
            with contextlib.suppress(WorkerError):  # none left: run() says so
                shares.setdefault(self._home(job).index, []).append(job)
        for index, share in shares.items():
            with contextlib.suppress(RuntimeError):  # a closed transport: its end is seen by its listener
                self._workers[index].writer.write(_frame(("prepare", 0, share)))

    def warm(self) -> Mapping[str, int]:
        """Return the processes of each bot the workers hold, as each last told."""
        total: Counter[str] = Counter()
        for worker in self._workers:
            total.update(worker.held)
        return total

    async def _table(self, job: Job) -> _Worker:
        """Take a place at ``job``'s worker (:meth:`_home`): a free table, or the queue behind a table's match; in
        the order the matches were asked, so that a worker plays its rotations of the deal sets in the ladder's
        order (a rotation of a later deal set played first would hold the processes an earlier one needs, and
        have the worker start more).

        Only there: another worker with a place free now would have to start a process of each bot for a deal
        set it has played its share of (a quarter of a second each, and memory), where this one frees a place
        within a match."""
        ticket = self._tickets
        self._tickets += 1
        try:
            while True:
                worker = self._home(job)
                self._waiting[ticket] = worker
                if worker.free > 0 and ticket == min(t for t, w in self._waiting.items() if w is worker):
                    worker.free -= 1
                    return worker
                self._freed.clear()
                await self._freed.wait()
        finally:
            self._waiting.pop(ticket, None)
            self._freed.set()  # the next in line looks again

    async def run(self, job: Job) -> Played:
        worker = await self._table(job)
        try:
            result = await self._ask(worker, "run", job)
        finally:
            worker.free += 1
            self._freed.set()
        if isinstance(result, StartFailed):
            raise LaunchError(result.message, bots=result.bots)
        assert isinstance(result, Played)
        return result

    async def release(self) -> None:
        """Stop the bots of a free table now (the ladder has no more matches for it)."""
        waited = set(self._waiting.values())  # its bots will play the matches waiting for it
        worker = next((w for w in self._workers if not w.gone and w.free > 0 and w not in waited), None)
        if worker is None:
            return
        worker.free -= 1
        try:
            await self._ask(worker, "release", None)
        except WorkerError:
            pass  # gone: its bots went with it
        finally:
            worker.free += 1
            self._freed.set()

    async def close(self) -> None:
        workers, self._workers = self._workers, []
        await asyncio.gather(*(self._close(w) for w in workers), return_exceptions=True)
        self._workers = workers  # their last figures stay readable

    async def _close(self, worker: _Worker) -> None:
        try:
            if not worker.gone and worker.listener is not None:  # ready: it stops its bots, then answers
                with contextlib.suppress(WorkerError, ConnectionError, TimeoutError):
                    await asyncio.wait_for(self._ask(worker, "close", None), CLOSE_TIMEOUT)
        finally:
            if worker.listener is not None:
                worker.listener.cancel()
                await asyncio.gather(worker.listener, return_exceptions=True)
            worker.writer.close()
            with contextlib.suppress(ConnectionError):
                await worker.writer.wait_closed()
            if await _status(worker, CLOSE_TIMEOUT) is None:
                worker.process.kill()
                await asyncio.to_thread(worker.process.wait)


# --------------------------------------------------------------------------------------------- a worker's side


async def serve(sock: socket.socket, index: int, workers: int) -> None:
    """Serve the head on ``sock`` until it says close or is gone: play its jobs on a :class:`LocalExecutor`."""
    reader, writer = await asyncio.open_connection(sock=sock)
    kind, _, settings = await _receive(reader)
    assert kind == "start" and isinstance(settings, Settings)
    executor = LocalExecutor(settings.tables, seats=settings.seats, log_dir=settings.log_dir,
                             sandbox=settings.sandbox, memory_budget=settings.memory_budget,
                             cpu_shares=settings.cpu_shares, log_numbering=(index, workers))
    try:
        await executor.start()
    except Exception as exc:  # said to the head, which stops
        await _send(writer, ("failed", 0, f"{type(exc).__name__}: {exc}"))
        raise
    assert executor.pool is not None
    pool = executor.pool
    await _send(writer, ("ready", 0, None))
    tasks: set[asyncio.Task[None]] = set()

    def answer(number: int, kind: str, value: object) -> None:
        writer.write(_frame((kind, number, value, dict(pool.held()), dataclasses.replace(pool.figures))))

    async def play(number: int, job: Job) -> None:
        try:
            result: Played | StartFailed = await executor.run(job)
        except LaunchError as exc:
            result = StartFailed(str(exc), tuple(exc.bots))
        except Exception as exc:  # the arena failed here: the head stops the ladder
            log.exception("worker %d: match %s failed", index, job.label)
            answer(number, "error", f"match {job.label}: {type(exc).__name__}: {exc}")
            return
        answer(number, "done", result)

    async def release(number: int) -> None:
        try:
            await executor.release()
        except Exception as exc:  # as a match that fails
            log.exception("worker %d: stopping a table's bots failed", index)
            answer(number, "error", f"stopping a table's bots: {type(exc).__name__}: {exc}")
            return
        answer(number, "done", None)

    closing = 0
    try:
        while True:
            try:
                kind, number, value = await _receive(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                break  # the head is gone: stop the bots
            if kind == "run":
                task = asyncio.create_task(play(number, value))
            elif kind == "prepare":
                executor.prepare(value)
                continue
            elif kind == "release":
                task = asyncio.create_task(release(number))
            else:  # close
                closing = number
                break
            tasks.add(task)
            task.add_done_callback(tasks.discard)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await executor.close()
    if closing:
        with contextlib.suppress(ConnectionError):
            answer(closing, "done", None)
            await writer.drain()
    writer.close()


def main(argv: list[str]) -> int:
    """Run a worker on the socket whose file descriptor is ``argv[0]``, as worker ``argv[1]`` of ``argv[2]``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the head, which stops the workers
    logging.basicConfig(level=logging.WARNING, format="arena worker: %(name)s: %(message)s")
    sock = socket.socket(fileno=int(argv[0]))
    asyncio.run(serve(sock, int(argv[1]), int(argv[2])))
    return 0


if __name__ == "__main__":
    # run as the module's own name, not __main__: what a worker pickles names classes the head can find
    from arena.ladder import workers

    sys.exit(workers.main(sys.argv[1:]))
