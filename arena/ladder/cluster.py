"""The ladder's tables on a Ray cluster: one Ray actor per node, holding that node's tables.

The head process (the one running ``arena ladder --cluster ADDRESS``) stays the only scheduler, rater and
writer of the database: a :class:`RayExecutor` only plays the :class:`arena.ladder.executor.Job` it is given and
returns the :class:`arena.ladder.executor.Played`. Each node's tables are one :class:`NodeActor` holding a
:class:`arena.ladder.executor.LocalExecutor` of those tables (one per CPU the node gives the ladder): one arena
server, one deal ledger and one pool of warm bot processes for the node, within the node's own memory budget
(half its memory, or of its cgroup limit), as on one machine. So a warm process of a bot serves whichever table
of its node seats that bot next, bots never cross the network, and a bot process lives on exactly one node (the
fair-deals guarantee holds per node, as on one machine). The head's tables (:class:`_Table`) are the slots of
these actors: it hands a match to a free table, and the node's executor plays it at one of its own.

Every node needs this package (the same version) and the bots at the paths the bot list gives: a shared
filesystem, or the same checkout on every machine. A node that cannot start a bot says so: the
:class:`arena.launch.process.LaunchError` the head sees names the node, and counts against the bot, as on one
machine. But when the bot has already played on another node, the node is at fault (a file or a package
missing there): its tables are retired, the head says so, and the match is played on another table. A node
whose arena code differs from the head's has its tables refused. A table lost with its node (the actor died)
gives its match back: the match is played again on another table, from its seed, and nothing of the lost
attempt is stored (the ladder stores only finished matches). A new actor is asked for in the lost one's
place, and joins when the cluster finds room for it.

Ray is an optional dependency (``pip install 'arena[cluster]'``): it is imported when a cluster is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import importlib
import logging
import pickle
import secrets
import socket
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ladder.executor import Job, LocalExecutor, Played, StartFailed
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError
from arena.launch.sandbox import choose_sandbox

log = logging.getLogger("arena.ladder.cluster")

READY_TIMEOUT = 120.0
"""Seconds the head waits for the first table of the cluster before giving up."""
CONNECT_TIMEOUT = 90.0
"""Seconds the head waits for the cluster to accept it as a driver (Ray Client itself gives up after 30)."""
REACH_TIMEOUT = 10.0
"""Seconds the head waits for the cluster's address to accept a TCP connection at all."""
GRACE = 10.0
"""Seconds the head waits for the other tables once one is ready, before it starts playing without them."""


def loop_time() -> float:
    return asyncio.get_running_loop().time()


SHARED_MARKER = ".arena-shared-check"
"""The file :attr:`RayExecutor.shared` holds, which every table reads before it plays."""


class ClusterError(RuntimeError):
    """A cluster that cannot be used: Ray missing, no cluster at the address, every table lost."""


def check_shared(path: str, token: str) -> None:
    """Raise unless the file ``path`` holds ``token``: what the head wrote in the folder it shares with every
    node (:attr:`RayExecutor.shared`), so a node with another folder, or none, at that path is refused."""
    try:
        seen = Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        seen = ""
    if seen != token:
        raise RuntimeError(f"node {socket.gethostname()} does not see the head's shared folder "
                           f"{str(Path(path).parent)!r}: mount the same folder at that path on every node")


class NodeActor:
    """One node's tables: a :class:`LocalExecutor` of ``tables`` tables sharing the node's warm process pool, run
    by the actor's event loop (Ray runs an async actor's calls concurrently: one match per table at a time)."""

    def __init__(self, index: int, seats: int, sandbox_mode: str, log_dir: str | None, tables: int = 1) -> None:
        self.index = index
        self.seats = seats
        self.sandbox_mode = sandbox_mode
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.tables = tables
        self.executor: LocalExecutor | None = None

    async def ready(self, shared: tuple[str, str] | None = None) -> tuple[str, str, str, str]:
        """Start the node's server and pool; return the node's id, its name, the bots' isolation level there and
        the :func:`code_fingerprint` of the arena installed there.

        ``shared``: (a file in the folder the head shares with every node, what the head wrote in it): raises
        when this node does not read the same there (see :attr:`RayExecutor.shared`).
        """
        ray = _ray()
        if shared is not None:
            check_shared(*shared)
        node_id = str(ray.get_runtime_context().get_node_id())
        sandbox = choose_sandbox(self.sandbox_mode)
        log_dir = self.log_dir / f"node-{self.index}" if self.log_dir is not None else None
        # the pool's memory budget is the default: a share of this node's memory, measured here
        self.executor = LocalExecutor(self.tables, seats=self.seats, log_dir=log_dir, sandbox=sandbox)
        await self.executor.start()
        return node_id, f"{socket.gethostname()}/{node_id[:6]}", sandbox.level, code_fingerprint()

    async def run(self, job: bytes, shipped: str | None = None) -> bytes:
        """Play a pickled :class:`Job` at a free table of the node; return the pickled :class:`Played`, or
        :class:`StartFailed`.

        ``shipped``: the head's folder that Ray copied to this node as the actor's working folder; the bots'
        paths inside it are moved to the copy. Plain pickle both ways, not Ray's: the cards in a record are
        rebuilt by their games' own reduce.
        """
        assert self.executor is not None, "ready() first"
        result: Played | StartFailed
        played: Job = pickle.loads(job)
        if shipped is not None:
            played = dataclasses.replace(played, bots=tuple(_moved(b, Path(shipped), Path.cwd()) for b in played.bots))
        try:
            result = await self.executor.run(played)
        except LaunchError as exc:
            result = StartFailed(str(exc), tuple(exc.bots))
        return pickle.dumps(result)

    async def release(self) -> None:
        """Stop the bots of a free table of the node (the head has no more matches for it)."""
        if self.executor is not None:
            await self.executor.release()

    async def close(self) -> None:
        if self.executor is not None:
            await self.executor.close()


def plan_tables(nodes: Sequence[tuple[str, int]], requested: int | None) -> list[tuple[str | None, int]]:
    """Return the actors to ask for, as (node id, tables): one per node, its tables dealt out one at a time
    across the nodes up to each node's CPUs (``nodes``: each live node's id and CPUs). ``requested`` tables
    (``None``: one per CPU of the cluster) beyond the cluster's CPUs are actors of one table on no node in
    particular, which join when the cluster has room for them."""
    total = requested if requested is not None else max(1, sum(cpus for _, cpus in nodes))
    given = dict.fromkeys((node for node, _ in nodes), 0)
    room = dict(nodes)
    placed = 0
    while placed < total and any(given[node] < room[node] for node in given):
        for node in given:
            if placed < total and given[node] < room[node]:
                given[node] += 1
                placed += 1
    plan: list[tuple[str | None, int]] = [(node, count) for node, count in given.items() if count]
    return plan + [(None, 1)] * (total - placed)


def _moved(bot: BotSpec, old: Path, new: Path) -> BotSpec:
    """Return ``bot`` with its folder, the absolute paths of its command, its files and its neighbours' programs
    moved from ``old`` to ``new``."""

    def move(path: Path) -> Path:
        return new / path.relative_to(old) if path.is_relative_to(old) else path

    command = tuple(str(move(Path(part))) if part.startswith("/") else part for part in bot.command)
    return dataclasses.replace(bot, cwd=move(bot.cwd), command=command, files=tuple(map(move, bot.files)),
                               neighbours=tuple((name, move(main)) for name, main in bot.neighbours))


@functools.cache
def code_fingerprint() -> str:
    """Return a hash of this arena's code (its Python files and protocol), which every node must run alike.

    A node with another arena (an older checkout, a local change) could play other rules or another protocol
    and the head could not tell from its records; its tables are refused instead (:meth:`RayExecutor.start`).
    """
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.suffix in {".py", ".proto"} and "__pycache__" not in path.parts:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def endpoint(address: str) -> tuple[str, int] | None:
    """Return the host and port of ``ray://HOST:PORT`` or ``HOST:PORT``; ``None`` for ``auto`` and the like."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str, timeout: float = REACH_TIMEOUT) -> None:
    """Raise :class:`ClusterError` when nothing accepts a TCP connection at ``address``'s host and port.

    Ray retries a cluster address that is wrong for as long as it runs (a refused port, an unreachable
    host), printing its own warnings; this says so in one line within ``timeout`` seconds instead.
    """
    where = endpoint(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except TimeoutError:
        raise ClusterError(f"no Ray cluster at {address!r}: {where[0]}:{where[1]} did not answer in "
                           f"{timeout:.0f} s") from None
    except OSError as exc:
        raise ClusterError(f"no Ray cluster at {address!r}: {exc.strerror or exc}") from None


async def connect(ray: Any, address: str, timeout: float, **options: Any) -> None:
    """Run ``ray.init(address=address, **options)``; raise :class:`ClusterError` when it fails or takes longer
    than ``timeout`` seconds (an address that accepts connections but is no Ray cluster: Ray would wait on).

    ``ray.init`` cannot be interrupted, so it runs in a daemon thread of its own, which is left behind on a
    timeout: the process can still exit.
    """
    await asyncio.to_thread(check_reachable, address, min(timeout, REACH_TIMEOUT))
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def report(error: BaseException | None) -> None:
        if done.done():
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def init() -> None:
        try:
            ray.init(address=address, **options)
        except BaseException as exc:  # handed to the waiting head, whatever it is
            loop.call_soon_threadsafe(report, exc)
        else:
            loop.call_soon_threadsafe(report, None)

    threading.Thread(target=init, name="ray-init", daemon=True).start()
    try:
        await asyncio.wait_for(asyncio.shield(done), timeout)
    except TimeoutError:
        raise ClusterError(f"no Ray cluster at {address!r}: it accepts connections but did not take this process "
                           f"as a driver in {timeout:.0f} s (is it a Ray cluster's address, of the same Ray "
                           "version?)") from None
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ClusterError(f"no Ray cluster at {address!r}: {str(exc).splitlines()[0]}") from None


def _ray() -> Any:
    """Return the ``ray`` module, or raise :class:`ClusterError` saying how to install it."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise ClusterError("--cluster needs Ray: pip install 'arena[cluster]'") from None


@dataclass(eq=False)
class _Table:
    """A table of a node's actor, as the head hands out matches: ``actor`` is shared by the node's tables."""

    index: int
    actor: Any
    node_id: str = ""
    node: str = ""
    sandbox: str = ""

    def kill(self) -> None:
        """Kill the table's actor (and so its server, its other tables and its bots), if it still lives."""
        with contextlib.suppress(Exception):
            _ray().kill(self.actor)


def _numbers(tables: Sequence[_Table]) -> str:
    """``table 3``, or ``tables 3-4`` (an actor's tables are numbered in a row)."""
    if len(tables) == 1:
        return f"table {tables[0].index}"
    return f"tables {tables[0].index}-{tables[-1].index}"


@dataclass
class RayExecutor:
    """Plays jobs on ``tables`` tables spread over the nodes of the cluster at ``address``: one Ray actor per
    node, holding that node's tables and its pool of warm bot processes (:class:`NodeActor`).

    ``address`` is what :func:`ray.init` takes: ``ray://HOST:PORT`` (Ray Client), ``HOST:PORT`` of a cluster
    this machine belongs to, or ``auto`` (the cluster started on this machine). ``tables`` of ``None`` means
    one table per CPU of the cluster. Each table takes one CPU of its node (:func:`plan_tables`).
    ``sandbox_mode`` is chosen on each node (``auto``: the strongest that node gives); ``log_dir`` is a folder
    on each node. ``on_note`` receives what the operator should read (a lost node, a bot a node cannot start).
    """

    address: str
    requested: int | None = None
    seats: int = 4
    sandbox_mode: str = "auto"
    log_dir: Path | None = None
    on_note: Any = None
    ready_timeout: float = READY_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    ship: Path | None = None
    """A folder of this machine holding every bot: Ray copies it to each node (a runtime environment's
    ``working_dir``) and the bots start from the copy. ``None``: the bots' paths hold on every node."""
    shared: Path | None = None
    """A folder every node must see at the same path, the same as this machine (a contest's data, whose
    submissions arrive while it plays, so no copy made at the start could carry them): a node's tables are
    refused, with the reason, when it reads something else there."""
    _tables: int = 0
    _ready: list[_Table] = field(default_factory=list)
    _free: asyncio.Queue[_Table] | None = None
    _pending: set[asyncio.Task[None]] = field(default_factory=set)
    _remote: Any = None
    """Makes a node's actor: ``_remote.options(...).remote(...)`` (Ray's, from :meth:`start`)."""
    _made: int = 0
    """Tables asked for so far: the next table's number."""
    _actors: int = 0
    """Actors asked for so far: the next actor's number (its tables log in ``log_dir/node-N``)."""
    _busy: dict[int, int] = field(default_factory=dict)
    """Per actor (``id`` of its handle), its tables playing a match now."""
    _dead: set[int] = field(default_factory=set)
    """Actors (``id`` of their handle) lost or killed: their tables are gone with them."""
    _played_on: dict[str, set[str]] = field(default_factory=dict)
    """Per bot, the nodes (ids) where it has played a match."""
    _retired: set[str] = field(default_factory=set)
    """Nodes whose tables are no longer used: they cannot start a bot that starts elsewhere."""
    _shared: tuple[str, str] | None = None
    """The file in :attr:`shared` each table reads, and what the head wrote in it."""

    @property
    def tables(self) -> int:
        return self._tables or (self.requested or 0)

    @property
    def slots(self) -> int:
        return self.tables

    def _note(self, text: str) -> None:
        (self.on_note or (lambda t: log.warning("%s", t)))(text)

    def describe(self) -> str:
        """Return the nodes and tables playing now, for the progress line: ``2 nodes, 4 tables``."""
        nodes = len({t.node_id for t in self._ready})
        return f"{nodes} node{'s' * (nodes != 1)}, {len(self._ready)} table{'s' * (len(self._ready) != 1)}"

    async def start(self) -> None:
        ray = _ray()
        runtime_env = None if self.ship is None else {
            "working_dir": str(self.ship), "excludes": [".git", "__pycache__", "*.db", "*.db-*", "node_modules"]}
        await connect(ray, self.address, self.connect_timeout, logging_level=logging.ERROR, log_to_driver=False,
                      configure_logging=True, runtime_env=runtime_env)
        if self.shared is not None:
            marker = self.shared / SHARED_MARKER
            self._shared = (str(marker.resolve()), secrets.token_hex(16))
            marker.write_text(self._shared[1] + "\n", encoding="ascii")
        cpus = int(ray.cluster_resources().get("CPU", 0))
        nodes = [(str(n["NodeID"]), int(n.get("Resources", {}).get("CPU", 0))) for n in ray.nodes() if n.get("Alive")]
        plan = plan_tables(nodes, self.requested)
        self._tables = sum(count for _, count in plan)
        self._remote = ray.remote(max_restarts=0)(NodeActor)
        self._free = asyncio.Queue()
        self._pending.update(asyncio.create_task(self._join(self._new_actor(count, node), pinned=node is not None))
                             for node, count in plan)
        # play once every table is ready, or a little after the first is when the others find no room (the
        # pending joins include an actor asked for again after its node failed it)
        deadline = loop_time() + self.ready_timeout
        while (pending := {t for t in self._pending if not t.done()}) and not self._ready and loop_time() < deadline:
            await asyncio.wait(pending, timeout=deadline - loop_time(), return_when=asyncio.FIRST_COMPLETED)
        pending = {t for t in self._pending if not t.done()}
        if not self._ready:
            await self.close()
            if not pending:  # every table answered, and none could be used: the notes above say why
                raise ClusterError(f"no table of the cluster at {self.address!r} can be used (see above)")
            raise ClusterError(f"no table of the cluster at {self.address!r} became ready in "
                               f"{self.ready_timeout:.0f} s (a table needs one CPU; the cluster has {cpus})")
        grace = loop_time() + GRACE
        while (pending := {t for t in self._pending if not t.done()}) and loop_time() < grace:
            await asyncio.wait(pending, timeout=grace - loop_time(), return_when=asyncio.FIRST_COMPLETED)
        if pending:
            self._note(f"{len(self._ready)} of {self._tables} tables are ready; the others join when the "
                       "cluster has room for them")
        levels: dict[str, list[str]] = {}
        for t in self._ready:
            levels.setdefault(t.node, []).append(t.sandbox)
        for node, tables_there in sorted(levels.items()):
            self._note(f"node {node}: {len(tables_there)} table{'s' * (len(tables_there) != 1)}, bots sandboxed: "
                       f"{', '.join(sorted(set(tables_there)))}")

    def _new_actor(self, count: int, node_id: str | None = None) -> list[_Table]:
        """Ask for an actor of ``count`` tables (``count`` CPUs) on node ``node_id`` (``None``: wherever the
        cluster has room); return its tables, numbered in a row."""
        index = self._actors
        self._actors += 1
        if node_id is not None:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            # soft: a node gone meanwhile, or full, does not keep its tables from starting elsewhere
            strategy: Any = NodeAffinitySchedulingStrategy(node_id, soft=True)
        else:
            strategy = "SPREAD"
        actor = self._remote.options(num_cpus=count, scheduling_strategy=strategy).remote(
            index, self.seats, self.sandbox_mode, str(self.log_dir) if self.log_dir is not None else None, count)
        tables = [_Table(self._made + k, actor) for k in range(count)]
        self._made += count
        return tables

    async def _join(self, tables: list[_Table], *, pinned: bool = False) -> None:
        """Wait for the actor of ``tables`` to be ready, then hand them out; an actor that cannot start says
        why. An actor asked for on a named node (``pinned``) that dies before it starts (the node went away, and
        the cluster did not know it yet) is asked for again, once, wherever the cluster has room."""
        ray = _ray()
        actor = tables[0].actor
        try:
            answer = tuple(await actor.ready.remote(self._shared))
        except ray.exceptions.RayActorError as exc:
            again = "; asked for again on any node" if pinned else ""
            self._note(f"{_numbers(tables)} {'was' if len(tables) == 1 else 'were'} lost before starting: "
                       f"{_first_line(exc)}{again}")
            if pinned:
                self._pending.add(asyncio.create_task(self._join(self._new_actor(len(tables)))))
            return
        except ray.exceptions.RayTaskError as exc:
            self._note(f"{_numbers(tables)} cannot start: {_first_line(exc)}")
            tables[0].kill()
            return
        node_id, node, sandbox = answer[:3]
        code = answer[3] if len(answer) > 3 else "of an arena before fingerprints"  # its ready() said 3 things
        if node_id in self._retired:
            self._note(f"{_numbers(tables)} {'is' if len(tables) == 1 else 'are'} not used: node {node} cannot "
                       "start every bot")
            tables[0].kill()
            return
        if code != code_fingerprint():
            self._note(f"{_numbers(tables)} {'is' if len(tables) == 1 else 'are'} not used: node {node} runs "
                       f"another arena (code {code}, this one {code_fingerprint()}); install the same version there")
            tables[0].kill()
            return
        assert self._free is not None
        for table in tables:
            table.node_id, table.node, table.sandbox = node_id, node, sandbox
            self._ready.append(table)
            self._free.put_nowait(table)

    def prepare(self, jobs: Sequence[Job]) -> None:
        """Nothing: which node plays a match is known only when one of its tables is free, and each node's pool
        starts what that match lacks at seating."""

    def warm(self) -> Mapping[str, int]:
        """Nothing known here: the pools are the nodes' own."""
        return {}

    async def run(self, job: Job) -> Played:
        ray = _ray()
        assert self._free is not None, "start() first"
        while True:
            if not self._ready and not self._pending_tables():
                raise ClusterError("every table of the cluster is lost or retired")
            table = await self._free.get()
            if table not in self._ready:  # lost or retired with its actor meanwhile
                continue
            key = id(table.actor)
            self._busy[key] = self._busy.get(key, 0) + 1
            try:
                shipped = str(self.ship) if self.ship is not None else None
                result = pickle.loads(await table.actor.run.remote(pickle.dumps(job), shipped))
            except ray.exceptions.RayActorError as exc:
                self._lost(table, job, exc)
                continue
            finally:
                self._busy[key] -= 1
            if isinstance(result, StartFailed):
                if result.bots and all(self._played_on.get(bot, set()) - {table.node_id} for bot in result.bots):
                    self._retire(table, job, result)
                    continue
                self._give_back(table)
                raise LaunchError(f"on node {table.node}: {result.message}", bots=result.bots)
            self._give_back(table)
            assert isinstance(result, Played)
            for bot in job.seating:
                self._played_on.setdefault(bot, set()).add(table.node_id)
            return dataclasses.replace(result, where=table.node)

    def _give_back(self, table: _Table) -> None:
        """Make ``table`` free for the next match; a table of a retired node is not, and its actor is killed
        once none of its tables plays."""
        assert self._free is not None
        if table in self._ready:
            self._free.put_nowait(table)
        else:
            self._kill_when_idle(table)

    def _kill_when_idle(self, table: _Table) -> None:
        """Kill ``table``'s actor if none of its tables is playing a match (the last one to end kills it)."""
        key = id(table.actor)
        if not self._busy.get(key) and key not in self._dead:
            self._dead.add(key)
            table.kill()

    def _retire(self, table: _Table, job: Job, failed: StartFailed) -> None:
        """Stop using ``table``'s node: it cannot start bots that have played on other nodes (a file or a
        package missing there: not the bots' fault, so they are not charged). Its actor is killed once its
        tables' matches end; none replaces it."""
        self._retired.add(table.node_id)
        gone = [t for t in self._ready if t.node_id == table.node_id]
        for t in gone:
            self._ready.remove(t)
        self._kill_when_idle(table)
        self._note(f"node {table.node} cannot start {', '.join(failed.bots)}, which played on other nodes "
                   f"({failed.message}); its {len(gone)} table{'s' * (len(gone) != 1)} are no longer used, and "
                   f"match {job.label} is played on another table")

    def _pending_tables(self) -> bool:
        return any(not task.done() for task in self._pending)

    def _lost(self, table: _Table, job: Job, error: BaseException) -> None:
        """Forget ``table`` and the other tables of its actor (it died, with its node or its process); ask for
        another actor of as many tables in its place, once."""
        key = id(table.actor)
        gone = [t for t in self._ready if t.actor is table.actor]
        for t in gone:
            self._ready.remove(t)
        self._note(f"table {table.index} on node {table.node} is lost ({_first_line(error)}); its match "
                   f"{job.label} is played again on another table, from its seed")
        if key in self._dead or table.node_id in self._retired:
            return  # its loss was seen already (another of its tables), or its node is not to be used
        self._dead.add(key)
        replacement = asyncio.create_task(self._join(self._new_actor(max(1, len(gone)))))
        self._pending.add(replacement)

    async def release(self) -> None:
        """Stop the bots of a free table now, while the other tables finish their last matches."""
        if self._free is not None and not self._free.empty():
            table = self._free.get_nowait()
            try:
                with contextlib.suppress(Exception):  # a lost table is found out by the next match it is given
                    await table.actor.release.remote()
            finally:
                self._free.put_nowait(table)

    async def close(self) -> None:
        ray = _ray()
        for task in self._pending:
            task.cancel()
        await asyncio.gather(*self._pending, return_exceptions=True)
        self._pending.clear()
        actors = {id(t.actor): t for t in self._ready}  # one of each actor's tables
        await asyncio.gather(*(_close_actor(t) for t in actors.values()), return_exceptions=True)
        self._ready.clear()
        self._free = None
        if ray.is_initialized():
            await asyncio.to_thread(ray.shutdown)


async def _close_actor(table: _Table) -> None:
    with contextlib.suppress(Exception):  # lost, or slow: its bots go with the actor
        await asyncio.wait_for(table.actor.close.remote(), timeout=30)
    table.kill()


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
