"""`arena ladder --cluster`: a real two-node Ray cluster on this machine (loopback only), a node lost mid-run,
the head killed with SIGKILL; the database ends with exactly the planned matches, the seeds of a local run.

The cluster is :mod:`arena.ladder.localcluster`'s: every node a `ray start --block` process group, killed with every
process it left, in a network namespace that holds only a loopback (:mod:`arena.launch.netns`), where the ladders
that use it run too: Ray would otherwise put some of its processes on the machine's network address.
Without Ray (pip install -e '.[cluster]') or root the tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ladder_db import seeds, stored_count

from arena.core.referee import MatchSummary
from arena.games import get_game
from arena.ladder.cluster import RayExecutor, StartFailed, _Table, code_fingerprint
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
def two_nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """One two-node cluster for the module's ladders: starting one takes seconds, and a ladder leaves it as it
    found it (its tables' actors end with their driver)."""
    why = netns.available()
    if why:
        assert os.environ.get("CI") != "true", f"CI runs the cluster tests: {why}"
        pytest.skip(f"a loopback-only network namespace for the cluster: {why}")
    folder = tmp_path_factory.mktemp("cluster")
    with local_cluster(2, folder, {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(folder)}) as nodes:
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
def loopback() -> Iterator[list[str]]:
    """The command prefix of a loopback-only network namespace (Ray resolves 127.0.0.1 to the machine's address
    outside one)."""
    why = netns.available()
    if why:
        assert os.environ.get("CI") != "true", f"CI runs the cluster tests: {why}"
        pytest.skip(f"a loopback-only network namespace: {why}")
    with netns.loopback_only("arena-ray-addr") as prefix:
        yield prefix


def test_a_cluster_address_where_nothing_listens_is_a_one_line_error(loopback: list[str], tmp_path: Path) -> None:
    command = [*loopback, sys.executable, "-m", "arena.cli", "ladder", "--cluster", f"127.0.0.1:{free_port()}",
               "--bots", str(ROOT / "bots" / "cabanga.toml"), "--game", "cabanga", "--seats", "3", "--matches", "3",
               "--db", str(tmp_path / "a.db")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "no Ray cluster at '127.0.0.1:" in errors[0], result.stderr
    assert "Traceback" not in result.stderr


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

    async def _ready(self) -> tuple[str, ...]:
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
            await executor._join(table)

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
