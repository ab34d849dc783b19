"""The ladder on a cluster: matches per hour on a local two-node Ray cluster next to the local executor, and the
head's own cost per match (how many tables one head can feed).

Run: python benchmarks/cluster.py [--matches N] [--rounds R] [--head-matches M] [--ray-calls C] [--head-only]
     [--json]

(1) Starts a Ray cluster of two nodes on this machine (arena.ladder.localcluster: loopback only, one CPU each,
    every process of it stopped at the end), then runs the same Cabanga! ladder of the bundled bots (4 seats, 2 tables,
    N matches, default 40) alternately on the local executor and on the cluster, R times each (default 2),
    and prints matches per hour of each. Both use this machine's cores, so this measures what the cluster
    path costs (actors, pickled jobs and results), not what more machines give.
(2) Runs a ladder of 8 bots at 4 seats on an executor that returns a stored Cabanga! match at once (its
    summary and packed replay, pickled as a table sends them), so all the time is the head's: unpickling,
    scheduling, rating and storing (the SQLite write of every match, replay included). Prints the matches
    per second the head sustains, and so how many tables of 12-second matches (a bot thinking 100 ms a
    decision) one head feeds (target: at least 500 matches/s). Twice: with 64 tables, whose matches finish
    together and share transactions (group commit), and with one, where every match has its own.
(3) On the cluster of (1): Ray's own cost at the head, which (2) leaves out: C calls (default 3000) to 8
    actors whose result is ready at once, 64 under way, job and result pickled as the Ray executor does;
    prints the head's CPU time a call (all its threads, Ray's included), and with (2) the matches per second
    one head sustains through Ray.
Needs `pip install -e '.[cluster]'` for (1) and (3); --head-only skips them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# the head connects on loopback: Ray otherwise replaces 127.0.0.1 by this machine's network address
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
# this driver, as the cluster's nodes (arena.ladder.localcluster): no token authentication unless asked for
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from arena.core.referee import MatchRecord, random_seat, referee_match
from arena.games import BOT_LIST, get_game
from arena.games.base import Game
from arena.ladder.executor import Executor, Job, LocalExecutor, Played
from arena.ladder.ladder import Ladder, LadderConfig, Timing
from arena.ladder.localcluster import local_cluster
from arena.ladder.store import Store
from arena.launch import netns
from arena.launch.botlist import BotSpec, load_bot_list

ROOT = Path(__file__).resolve().parent.parent
INSIDE = "ARENA_BENCH_NETNS"
"""Set in the environment of this script run again inside its network namespace."""
MATCH_SECONDS = 12.0
"""A 4-seat Cabanga! match of bots thinking 100 ms a decision (the issue's figure)."""


def run_ladder(executor: Executor, config: LadderConfig) -> tuple[int, float, Timing]:
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        store = Store(Path(folder) / "ladder.db")
        try:
            ladder = Ladder(config, store, on_note=lambda _: None, executor=executor)
            began = time.perf_counter()
            timing = asyncio.run(ladder.run())
            return store.match_count(), time.perf_counter() - began, timing
        finally:
            store.close()


def throughput(matches: int, rounds: int, calls: int) -> dict[str, Any]:
    """Matches per hour of the same ladder on the local executor and on the two-node cluster, alternately; then
    Ray's own cost at the head (:func:`ray_cost`, ``calls`` calls)."""
    from arena.ladder.cluster import RayExecutor

    game = get_game("cabanga")
    bots = load_bot_list(ROOT / "arena" / "games" / "cabanga" / BOT_LIST)
    config = LadderConfig(game, game.options(), 4, 1, bots, matches=matches, tables=2)
    rates: dict[str, list[float]] = {"local": [], "cluster": []}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    # this process runs in the cluster's namespace already (main): the ladders are its drivers
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as logs, \
            local_cluster(2, Path(logs), env, namespace=False) as cluster:
        address = cluster.address
        for _ in range(rounds):
            for kind in ("local", "cluster"):
                executor: Executor = (LocalExecutor(2, seats=4) if kind == "local"
                                      else RayExecutor(address, 2, seats=4, on_note=lambda _: None))
                stored, wall, _ = run_ladder(executor, config)
                rates[kind].append(stored / wall * 3600)
        ray_figures = ray_cost(address, calls)
    return {"matches": matches, "rounds": rounds, "tables": 2,
            "local_per_hour": [round(r) for r in rates["local"]],
            "cluster_per_hour": [round(r) for r in rates["cluster"]], "ray": ray_figures}


class InstantExecutor:
    """Returns a stored record at once, with its replay packed where it was played: every second of the run is
    the head's. The head's own share of the way to and from a table is kept: the job is pickled and the result
    unpickled, as :class:`arena.ladder.cluster.RayExecutor` does."""

    def __init__(self, tables: int, record: MatchRecord) -> None:
        self.tables = self.slots = tables
        self.result = pickle.dumps(Played.of(record, 0.0, 0.0))

    async def start(self) -> None:
        return None

    def prepare(self, jobs: Sequence[Job]) -> None:
        pass

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        pickle.dumps(job)
        await asyncio.sleep(0)  # let the other tables' workers run, as a real executor would
        played = pickle.loads(self.result)
        assert isinstance(played, Played)
        return played

    async def release(self) -> None:
        return None

    async def close(self) -> None:
        return None


def instant_match(bots: int, seats: int) -> tuple[Game, list[BotSpec], MatchRecord]:
    """Return the game, ``bots`` bot specs and a Cabanga! record of the first ``seats`` of them (random play)."""
    game = get_game("cabanga")
    names = [f"bot-{i}" for i in range(bots)]
    record = asyncio.run(referee_match(game, [random_seat(n, n) for n in names[:seats]], 1, game.options()))
    return game, [BotSpec(name, ("none",), ROOT) for name in names], record


def head_cost(matches: int, bots: int = 8, seats: int = 4, tables: int = 64) -> dict[str, Any]:
    game, specs, record = instant_match(bots, seats)
    config = LadderConfig(game, game.options(), seats, 1, specs, matches=matches, tables=tables)
    stored, wall, timing = run_ladder(InstantExecutor(tables, record), config)
    per_second = stored / wall
    return {"matches": stored, "bots": bots, "seats": seats, "tables": tables, "wall_s": round(wall, 2),
            "matches_per_commit": round(stored / max(1, timing.commits), 1),
            "scheduling_ms": round(timing.scheduling / stored * 1000, 3),
            "rating_ms": round(timing.rating / stored * 1000, 3),
            "storing_ms": round(timing.storing / stored * 1000, 3),
            "head_matches_per_s": round(per_second), "ms_per_match": round(wall / stored * 1000, 3),
            "tables_of_12s_matches": int(per_second * MATCH_SECONDS)}


class ReadyTable:
    """A Ray actor with a table's interface whose result is ready at once: what a call costs is Ray's."""

    def __init__(self, result: bytes) -> None:
        self.result = result

    async def run(self, job: bytes, shipped: str | None = None) -> bytes:
        return self.result


def ray_cost(address: str, calls: int, actors: int = 8, in_flight: int = 64) -> dict[str, Any]:
    """Ray's own cost at the head for a table's call: the head's CPU time a call (all its threads, Ray's
    included), calling ``actors`` ready tables of the cluster with ``in_flight`` calls under way, the job
    pickled and the result unpickled as :class:`arena.ladder.cluster.RayExecutor` does."""
    import ray

    game, specs, record = instant_match(8, 4)
    job = pickle.dumps(Job(0, 0, tuple(specs[:4]), 1, game, game.options(), "0123456789abcdef"))
    result = pickle.dumps(Played.of(record, 0.0, 0.0))
    ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=0)(ReadyTable)
        tables: list[Any] = [remote.remote(result) for _ in range(actors)]
        ray.get([t.run.remote(job) for t in tables])  # every actor up

        async def drive() -> None:
            free: asyncio.Queue[Any] = asyncio.Queue()
            for i in range(in_flight):
                free.put_nowait(tables[i % actors])

            async def call() -> None:
                table = await free.get()
                played = pickle.loads(await table.run.remote(pickle.dumps(pickle.loads(job))))
                assert isinstance(played, Played)
                free.put_nowait(table)

            await asyncio.gather(*(call() for _ in range(calls)))

        cpu, began = time.process_time(), time.perf_counter()
        asyncio.run(drive())
        cpu, wall = time.process_time() - cpu, time.perf_counter() - began
    finally:
        ray.shutdown()
    return {"calls": calls, "actors": actors, "in_flight": in_flight, "calls_per_s": round(calls / wall),
            "head_cpu_ms_per_call": round(cpu / calls * 1000, 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=40, help="matches per ladder of (1) (default 40)")
    parser.add_argument("--rounds", type=int, default=2, help="ladders of each executor in (1) (default 2)")
    parser.add_argument("--head-matches", type=int, default=3000, help="matches of (2) (default 3000)")
    parser.add_argument("--ray-calls", type=int, default=3000, help="calls of (3) (default 3000)")
    parser.add_argument("--head-only", action="store_true", help="only (2): no Ray cluster")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    if not args.head_only and not os.environ.get(INSIDE):
        # (1) runs the cluster and this driver in a network namespace of their own that holds only a loopback:
        # Ray would otherwise put some of its processes on the machine's network address
        why = netns.available()
        if why:
            print(f"(1) needs a loopback-only network namespace: {why}; run it as root, or --head-only",
                  file=sys.stderr)
            return 1
        with netns.loopback_only("arena-bench") as prefix:
            return subprocess.run([*prefix, sys.executable, __file__, *(sys.argv[1:] if argv is None else argv)],
                                  env={**os.environ, INSIDE: "1"}).returncode
    ray_ms: float | None = None
    if not args.head_only:
        figures = throughput(args.matches, args.rounds, args.ray_calls)
        ray_ms = figures["ray"]["head_cpu_ms_per_call"]
        if args.json:
            print(json.dumps(figures), flush=True)
        else:
            print(f"(1) Cabanga!, 4 seats, 2 tables, {figures['matches']} matches a ladder, alternately: local "
                  f"executor {figures['local_per_hour']} matches/h; two-node Ray cluster on this machine "
                  f"{figures['cluster_per_hour']} matches/h", flush=True)
            ray = figures["ray"]
            print(f"(3) Ray's own cost at the head: {ray['head_cpu_ms_per_call']} ms of the head's CPU a call "
                  f"({ray['calls']} calls to {ray['actors']} ready tables, {ray['in_flight']} under way: "
                  f"{ray['calls_per_s']} calls/s on this machine)", flush=True)
    # 64 tables whose matches finish in the same turn of the head's loop (group commit at work), then one
    # table: every match alone in its transaction, as when matches arrive one at a time
    for tables in (64, 1):
        figures = head_cost(args.head_matches, tables=tables)
        if args.json:
            print(json.dumps(figures), flush=True)
            continue
        print(f"(2) the head alone (scheduling, rating, storing), {figures['bots']} bots at {figures['seats']} "
              f"seats, {figures['tables']} instant tables, {figures['matches']} matches in {figures['wall_s']} s "
              f"({figures['matches_per_commit']} a commit): {figures['head_matches_per_s']} matches/s "
              f"({figures['ms_per_match']} ms a match: scheduling {figures['scheduling_ms']} ms, rating "
              f"{figures['rating_ms']} ms, storing {figures['storing_ms']} ms; target >= 500/s); "
              f"one head feeds about {figures['tables_of_12s_matches']} tables of 12-second matches", flush=True)
        if ray_ms is not None:
            through_ray = 1000 / (figures["ms_per_match"] + ray_ms)
            print(f"    with (3), the head through Ray: about {through_ray:.0f} matches/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
