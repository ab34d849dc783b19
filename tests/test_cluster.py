"""`arena ladder --cluster`: a real two-node Ray cluster on this machine (loopback only), a node lost mid-run,
the head killed with SIGKILL; the database ends with exactly the planned matches, the seeds of a local run. And
`arena contest --cluster`: a submission checked on the head and played on the nodes, from the shared data folder.

The cluster is :mod:`arena.ladder.localcluster`'s: every node a `ray start --block` process group, killed with every
process it left, in a network namespace that holds only a loopback (:mod:`arena.launch.netns`), where the ladders
that use it run too: Ray would otherwise put some of its processes on the machine's network address.
Without Ray (pip install -e '.[cluster]') or root the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from costs import starts_processes
from ladder_db import seeds, stored_count

from arena.core.referee import MatchSummary
from arena.games import BOT_LIST, get_game
from arena.ladder.cluster import RayExecutor, StartFailed, _Table, check_shared, code_fingerprint, plan_tables
from arena.ladder.executor import Job, Played
from arena.ladder.ladder import deal_seed
from arena.ladder.localcluster import LocalCluster, free_port, local_cluster
from arena.launch import netns
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError

ROOT = Path(__file__).resolve().parent.parent
HAVE_RAY = importlib.util.find_spec("ray") is not None

if not HAVE_RAY and os.environ.get("CI") != "true":
    pytest.skip("Ray is not installed (pip install -e '.[cluster]')", allow_module_level=True)

SEATS = 3
MATCHES = 18


def first_triples(count: int, seed: int) -> list[tuple[int, int, int]]:
    """The (deal, rotation, seed) triples a local ladder of ``count`` matches stores (tests/test_ladder.py)."""
    return [(i // SEATS, i % SEATS, deal_seed(seed, i // SEATS)) for i in range(count)]


@pytest.fixture(scope="module")
@starts_processes
def two_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One two-node cluster for the module's ladders: starting one takes seconds, and a ladder leaves it as it
    found it (its tables' actors end with their driver). The head has two CPUs, so it can hold two tables; a
    ladder of two tables still gets one on each node (tables are dealt out across the nodes)."""
    why = netns.available()
    if why:
        assert os.environ.get("CI") != "true", f"CI runs the cluster tests: {why}"
        pytest.skip(f"a loopback-only network namespace for the cluster: {why}")
    folder = tmp_path_factory.mktemp("cluster")
    with local_cluster(2, folder, {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(folder)},
                       head_cpus=2) as nodes:
        yield nodes


@pytest.fixture
def cluster(two_nodes: LocalCluster) -> LocalCluster:
    """The module's cluster with both nodes alive: a node a test killed is replaced by a new one first."""
    lost = [node for node in two_nodes.nodes if node.poll() is not None]
    for node in lost:
        two_nodes.nodes.remove(node)
        two_nodes.start(head=False)
    if lost:
        two_nodes.wait_for_nodes(2)
    return two_nodes


QUICK_BOTS = "".join(f'[[bot]]\nbundled = "cabanga-{name}"\n' for name in ("greedy", "tidy", "thrower", "random"))
"""The bundled Cabanga! bots that answer at once (the search bot takes 100 ms a decision: these tests are about
the cluster, not the bots)."""


def ladder_command(cluster: LocalCluster, db: Path, seed: int, *more: str) -> list[str]:
    bots = db.parent / "bots.toml"
    bots.write_text(QUICK_BOTS)
    return [*cluster.prefix, sys.executable, "-m", "arena.cli", "ladder", "--cluster", cluster.address, "--bots",
            str(bots),
            "--game", "cabanga", "--seats", str(SEATS), "--matches", str(MATCHES), "--tables", "2",
            "--seed", str(seed), "--db", str(db), *more]


def wait_for_matches(proc: subprocess.Popen[str], db: Path, count: int, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while stored_count(db) < count and proc.poll() is None and time.monotonic() < end:
        time.sleep(0.05)
    assert stored_count(db) >= count, f"the ladder stored {stored_count(db)} matches (exit {proc.poll()})"


CONTEST_BOT = """from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


class First(CabangaBot):
    def play(self, view, choices):
        return choices[0]

    def throw(self, view, candidates):
        return []


run(First())
"""


@pytest.mark.process
def test_a_contest_on_the_cluster_checks_a_submission_here_and_plays_it_on_the_nodes(
        cluster: LocalCluster, tmp_path: Path) -> None:
    from arena.contest.store import ContestStore

    (tmp_path / "house.toml").write_text(QUICK_BOTS)
    config = tmp_path / "contest.toml"
    config.write_text('game = "cabanga"\nseats = 3\noptions = { rounds = 1 }\nlisten = "127.0.0.1:0"\n'
                      'baseline = "house.toml"\ndata = "data"\ntables = 2\n[submissions]\ncheck_rounds = 1\n')
    (tmp_path / "data").mkdir()
    store = ContestStore(tmp_path / "data" / "contest.db")
    token = store.authors.add("alice")
    store.close()
    bot = tmp_path / "firsty"
    bot.mkdir()
    (bot / "bot.py").write_text(CONTEST_BOT)
    (bot / "bot.toml").write_text('name = "firsty"\ncommand = ["bot.py"]\ngames = ["cabanga"]\nruntime = "python"\n')
    arena = [*cluster.prefix, sys.executable, "-m", "arena.cli"]
    proc = subprocess.Popen([*arena, "contest", str(config), "--cluster", cluster.address], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stderr is not None
        seen = ""
        while "http://" not in seen and proc.poll() is None:
            seen += proc.stderr.readline()
        assert "http://" in seen, f"arena contest did not start: {seen}"
        url = seen[seen.index("http://"):].split()[0]
        submitted = subprocess.run([*arena, "submit", str(bot), "--to", url, "--wait"], capture_output=True,
                                   text=True, timeout=180, env={**os.environ, "ARENA_TOKEN": token})
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        db = tmp_path / "data" / "ladder.db"
        end = time.monotonic() + 120
        played = 0
        while not played and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.2)
            with contextlib.suppress(sqlite3.Error), contextlib.closing(
                    sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
                played = int(conn.execute("SELECT count(*) FROM seats JOIN bots ON bots.id = seats.bot_id "
                                          "WHERE bots.name = 'alice:firsty:v1'").fetchone()[0])
        assert played, f"the submission played no match on the cluster (exit {proc.poll()})"
        # the tables read what the head wrote in the shared data folder before they played
        assert (tmp_path / "data" / ".arena-shared-check").stat().st_size > 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
        if proc.stderr is not None:
            rest = proc.stderr.read()
            proc.stderr.close()
    assert proc.returncode == 0, seen + rest
    assert "node " in seen + rest and "bots sandboxed: strict" in seen + rest  # each node's tables, jailed strictly


@pytest.mark.process
def test_a_nodes_tables_share_one_pool_and_the_ladder_stores_what_a_local_run_does(
        cluster: LocalCluster, tmp_path: Path) -> None:
    db = tmp_path / "cluster.db"
    logs = tmp_path / "logs"
    result = subprocess.run(ladder_command(cluster, db, 5, "--tables", "3", "--log-dir", str(logs)), cwd=ROOT,
                            env=cluster.driver_env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    # (before the tests that kill a node: Ray lists a killed node as alive for a while, and its tables would be
    # asked for there, lost, and asked for again on any node, the head's among them)
    # three tables: two on the head (one actor: one server, one pool, one log folder), one on the other node
    assert sorted(line.split(": ", 1)[1].split(",")[0] for line in result.stderr.splitlines()
                  if line.startswith("node ") and "bots sandboxed" in line) == ["1 table", "2 tables"], result.stderr
    assert sorted(p.name for p in logs.iterdir()) == ["node-0", "node-1"], result.stderr
    assert seeds(db) == first_triples(MATCHES, seed=5)


@pytest.mark.process
def test_the_head_killed_with_sigkill_resumes_to_the_same_matches(cluster: LocalCluster, tmp_path: Path) -> None:
    db = tmp_path / "cluster.db"
    # the bots reach the nodes as a copy Ray makes of their folder (the bundled bots' cwd: this checkout)
    command = ladder_command(cluster, db, 8, "--cluster-ship", str(ROOT))
    proc = subprocess.Popen(command, cwd=ROOT, env=cluster.driver_env, text=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for_matches(proc, db, 1)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    killed_at = stored_count(db)
    assert 1 <= killed_at < MATCHES
    result = subprocess.run(command, cwd=ROOT, env=cluster.driver_env, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    assert f"({killed_at} matches stored)" in result.stderr
    stored = seeds(db)
    assert stored == first_triples(MATCHES, seed=8)
    assert len(set(stored)) == len(stored) == MATCHES


@pytest.mark.process
def test_a_node_lost_mid_run_gives_its_match_back_and_the_ladder_ends_with_the_planned_matches(
        cluster: LocalCluster, tmp_path: Path) -> None:
    db = tmp_path / "cluster.db"
    proc = subprocess.Popen(ladder_command(cluster, db, seed=7), cwd=ROOT, env=cluster.driver_env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for_matches(proc, db, 2)
        cluster.kill(cluster.nodes[1])  # the second node, with its table, its server and its bots
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "2 nodes, 2 tables" in err  # the progress line, before the loss
    lost = [line for line in err.splitlines() if "is lost" in line]
    assert lost and "played again on another table, from its seed" in lost[0], err
    stored = seeds(db)
    assert stored == first_triples(MATCHES, seed=7)  # what a local run stores (tests/test_ladder.py)
    assert len(set(stored)) == len(stored) == MATCHES


@pytest.fixture
@starts_processes
def loopback() -> Iterator[list[str]]:
    """The command prefix of a loopback-only network namespace (Ray resolves 127.0.0.1 to the machine's address
    outside one)."""
    why = netns.available()
    if why:
        assert os.environ.get("CI") != "true", f"CI runs the cluster tests: {why}"
        pytest.skip(f"a loopback-only network namespace: {why}")
    with netns.loopback_only("arena-ray-addr") as prefix:
        yield prefix


@pytest.mark.process
def test_a_cluster_address_where_nothing_listens_is_a_one_line_error(loopback: list[str], tmp_path: Path) -> None:
    command = [*loopback, sys.executable, "-m", "arena.cli", "ladder", "--cluster", f"127.0.0.1:{free_port()}",
               "--bots", str(ROOT / "arena" / "games" / "cabanga" / BOT_LIST), "--game", "cabanga", "--seats", "3",
               "--matches", "3", "--db", str(tmp_path / "a.db")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "no Ray cluster at '127.0.0.1:" in errors[0], result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.process
def test_an_address_that_answers_but_is_no_ray_cluster_is_given_up_after_the_timeout(loopback: list[str]) -> None:
    # a listener that accepts and says nothing, in the namespace: Ray alone would wait on it for ever
    script = (
        "import asyncio, socket\n"
        "from arena.ladder.cluster import ClusterError, RayExecutor\n"
        "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
        "try:\n"
        "    asyncio.run(RayExecutor(f'127.0.0.1:{s.getsockname()[1]}', 1, connect_timeout=3).start())\n"
        "except ClusterError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run([*loopback, sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "did not take this process as a driver in 3 s" in result.stdout, result.stdout + result.stderr


class FakeActor:
    """A table actor on node ``node``, ready at once with the arena code ``code``; its matches are ready at once,
    or, on a node that lacks bot ``missing``, fail to start it."""

    killed = False

    def __init__(self, code: str | None, node: str = "node01", missing: str | None = None) -> None:
        self.code = code
        self.node = node
        self.missing = missing
        self.ready = Remote(self._ready)
        self.run = Remote(self._run)

    async def _ready(self, shared: tuple[str, str] | None = None) -> tuple[str, ...]:
        node = (f"{self.node}-id", f"machine/{self.node}", "strict")
        return node if self.code is None else (*node, self.code)  # None: an arena from before fingerprints

    async def _run(self, job: bytes, shipped: str | None) -> bytes:
        seating = pickle.loads(job).seating
        if self.missing in seating:
            return pickle.dumps(StartFailed(f"bot {self.missing!r} exited with code 3 before connecting",
                                            (self.missing,)))
        summary = MatchSummary(1, 0, (1, 2, 3), (1, 2, 3), frozenset(), (), ((), (), ()))
        return pickle.dumps(Played(summary, b"", 0.0, 0.0))


@dataclass
class Remote:
    """A fake actor method: ``method.remote(...)`` is awaitable, as Ray's object references are."""

    call: Callable[..., Awaitable[Any]]

    def remote(self, *args: Any) -> Awaitable[Any]:
        return self.call(*args)


class FakeTable(_Table):
    def kill(self) -> None:  # a fake actor: no Ray to ask
        self.actor.killed = True


def joined(executor: RayExecutor, *actors: FakeActor) -> list[FakeTable]:
    """Join tables of ``actors`` to ``executor``, in order."""
    tables = [FakeTable(i, actor) for i, actor in enumerate(actors)]

    async def join() -> None:
        executor._free = asyncio.Queue()
        for table in tables:
            await executor._join([table])

    asyncio.run(join())
    return tables


def test_a_node_running_another_arena_is_refused_and_says_so() -> None:
    notes: list[str] = []
    executor = RayExecutor("auto", 2, on_note=notes.append)
    same, other, older = joined(executor, FakeActor(code_fingerprint()), FakeActor("0123456789ab"), FakeActor(None))
    assert executor._ready == [same] and other.actor.killed and older.actor.killed and not same.actor.killed
    assert len(notes) == 2 and "table 1 is not used: node machine/node01 runs another arena" in notes[0]
    assert "table 2 is not used" in notes[1] and "before fingerprints" in notes[1]
    assert len(code_fingerprint()) == 12 and code_fingerprint() != "0123456789ab"


def test_a_node_that_cannot_start_a_bot_others_start_is_retired_not_the_bot() -> None:
    notes: list[str] = []
    executor = RayExecutor("auto", 3, on_note=notes.append)
    code = code_fingerprint()
    bad, good, also_good = joined(executor, FakeActor(code, "nodeB", missing="x"), FakeActor(code, "nodeA"),
                                  FakeActor(code, "nodeA"))
    game = get_game("cabanga")
    job = Job(0, 0, tuple(BotSpec(name, ("none",), ROOT) for name in ("x", "y", "z")), 1, game, game.options(),
              "0123456789abcdef")

    async def play() -> list[str]:
        where: list[str] = []
        with pytest.raises(LaunchError) as failed:  # x never started anywhere: its failure is charged to it
            await executor.run(job)
        assert list(failed.value.bots) == ["x"] and "on node machine/nodeB" in str(failed.value)
        for _ in range(3):  # nodeA, nodeA, then nodeB again: x plays on nodeA, so nodeB is at fault
            where.append((await executor.run(job)).where)
        return where

    assert asyncio.run(play()) == ["machine/nodeA"] * 3
    assert executor._ready == [good, also_good] and bad.actor.killed and not good.actor.killed
    assert len(notes) == 1 and "node machine/nodeB cannot start x, which played on other nodes" in notes[0]


def test_each_node_gets_one_actor_with_a_table_per_cpu_dealt_out_across_the_nodes() -> None:
    nodes = [("a", 4), ("b", 2), ("c", 1)]
    assert plan_tables(nodes, None) == [("a", 4), ("b", 2), ("c", 1)]  # one table per CPU of the cluster
    assert plan_tables(nodes, 4) == [("a", 2), ("b", 1), ("c", 1)]  # dealt one at a time: every node plays
    assert plan_tables(nodes, 2) == [("a", 1), ("b", 1)]
    assert plan_tables(nodes, 9) == [("a", 4), ("b", 2), ("c", 1), (None, 1), (None, 1)]  # wait for room
    assert plan_tables([], None) == [(None, 1)]


class FakeRay:
    """Ray's ``remote`` class for the node actors: each actor asked for is a :class:`FakeActor` on ``node``, and
    what it was asked with is kept."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.asked: list[dict[str, Any]] = []
        self.made: list[FakeActor] = []

    def options(self, **options: Any) -> FakeRay:
        self.asked.append(options)
        return self

    def remote(self, *args: Any) -> FakeActor:
        self.made.append(FakeActor(code_fingerprint(), self.node))
        return self.made[-1]


def test_a_nodes_tables_share_its_actor_and_are_lost_and_replaced_together(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    notes: list[str] = []
    executor = RayExecutor("auto", 3, on_note=notes.append)
    executor._remote = fake = FakeRay("nodeA")
    game = get_game("cabanga")
    job = Job(0, 0, tuple(BotSpec(name, ("none",), ROOT) for name in ("x", "y", "z")), 1, game, game.options(),
              "0123456789abcdef")

    async def play() -> None:
        executor._free = asyncio.Queue()
        with monkeypatch.context() as patched:  # the strategy of a named node: no Ray cluster to place it on
            patched.setattr("ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy",
                            lambda node, soft: ("affinity", node, soft))
            tables = executor._new_actor(2, "nodeA-id")
        assert [t.index for t in tables] == [0, 1] and tables[0].actor is tables[1].actor
        assert fake.asked == [{"num_cpus": 2, "scheduling_strategy": ("affinity", "nodeA-id", True)}]
        await executor._join(tables)
        assert executor._ready == tables and executor.describe() == "1 node, 2 tables"
        assert (await executor.run(job)).where == "machine/nodeA"  # either table: the one actor plays it

        async def dies(job: bytes, shipped: str | None) -> bytes:
            raise ray.exceptions.RayActorError()

        fake.made[0].run = Remote(dies)
        fake.made[0].ready = Remote(fake.made[0]._ready)
        fake.node = "nodeB"
        # the actor dies: both its tables go, one actor of two tables is asked for anywhere, and the match is
        # played again on it once it has joined
        assert (await executor.run(job)).where == "machine/nodeB"
        assert fake.asked[1] == {"num_cpus": 2, "scheduling_strategy": "SPREAD"}
        assert len(fake.made) == 2 and len(executor._ready) == 2
        assert all(t.actor is fake.made[1] for t in executor._ready)
        assert [t.index for t in executor._ready] == [2, 3]

    asyncio.run(play())
    assert sum("is lost" in note for note in notes) == 1, notes


def test_an_actor_whose_named_node_fails_it_before_it_starts_is_asked_for_again_anywhere_once() -> None:
    import ray

    notes: list[str] = []
    executor = RayExecutor("auto", 1, on_note=notes.append)
    executor._remote = fake = FakeRay("nodeB")

    async def gone(shared: tuple[str, str] | None = None) -> tuple[str, ...]:
        raise ray.exceptions.RayActorError()

    async def join() -> None:
        executor._free = asyncio.Queue()
        tables = executor._new_actor(1)
        fake.made[0].ready = Remote(gone)  # its node went away before the cluster knew it
        await executor._join(tables, pinned=True)
        await asyncio.gather(*executor._pending)
        again = executor._new_actor(1)  # an actor asked for anywhere dies too: not asked for again
        fake.made[2].ready = Remote(gone)
        await executor._join(again)

    asyncio.run(join())
    assert [t.index for t in executor._ready] == [1] and executor._ready[0].node == "machine/nodeB"
    assert "table 0 was lost before starting" in notes[0] and "asked for again on any node" in notes[0], notes
    assert len(fake.made) == 3 and len(notes) == 2 and "asked for again" not in notes[1], notes
    assert not [t for t in executor._pending if not t.done()]


@pytest.mark.process
def test_a_node_that_does_not_see_the_heads_shared_folder_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "data" / ".arena-shared-check"
    marker.parent.mkdir()
    marker.write_text("0123abcd\n")
    check_shared(str(marker), "0123abcd")  # the same folder: the same token
    for token, path in (("ffff0000", marker), ("0123abcd", tmp_path / "elsewhere" / marker.name)):
        with pytest.raises(RuntimeError, match=r"does not see the head.s shared folder .*at that path on every node"):
            check_shared(str(path), token)

