"""The ladder's throughput and overhead: matches per hour, and the share of table time spent outside matches.

Run: python benchmarks/ladder.py [--matches N] [--tables K] [--seats S] [--game GAME ...] [--sandbox MODE ...]
     [--sealed-window-ms W] [--field N ...] [--bots LIST] [--memory-budget MB] [--workers W] [--json]

For each game, runs a fresh ladder (a temporary database) of the bundled example bots
(arena/games/GAME/bots/bots.toml) at S seats (default 4) on K tables (default 2) until N matches are stored
(default 200), exactly as `arena ladder` does (its tables in worker processes, one per core: --workers W as
`arena ladder --workers`), and prints:
  matches/h   matches stored per hour of wall time;
  outside     the share of table time (wall time x tables) not spent inside a match: tables waiting for their
              bots (process starts, connections, telling them a match begins: a match seated while its
              table's previous one plays waits for nothing), the ladder's own work, server start and stop,
              tables idle at the end (target: under 5%); then the waiting for bots as a share of table time, and
              ``other`` for the rest; the ladder's own work (scheduling, rating, storing) as a share of table
              time: on the tables' own event loop with --workers 1 (so part of ``outside``), in the head
              process beside the workers' tables otherwise (where the tables play on meanwhile);
  start-up and shutdown: the part of it before each table's first match and after its last (the first
              bot processes, the server, stopping the bots), and the share outside matches without it:
              what a long ladder approaches;
  processes   the most processes below the ladder at once (bots and their sandbox supervisors; no process
              plays a deal twice, so a table keeps one per bot and rotation), and their memory then: resident
              (RSS, shared pages counted in each) and proportional (PSS, shared pages split), sampled every
              0.2 s.
  seating/start: seconds of seating per process start (starting bot processes and waiting for their hello).
  pool        the warm process pool the tables share: seats served by a warm process, processes started at
              seating and ahead, stopped for the memory budget, and the most it held.
--field N plays a field of N bots: the bundled quick bots again under more names (issue: big fields), for
example ``--field 4 --field 12`` (with --bots, that list's bots). --bots LIST plays the bots of a bot list instead
of the bundled ones (those of it that play the game): ``benchmarks/native_bots.toml``, the example bots in C++, Go
and Rust (built first), shows what the arena costs outside matches when the bots' own starts cost little.
--sealed-window-ms W holds every sealed window (a Cabanga! throw) W ms, asked or not (`arena ladder
--sealed-window-ms`).
Each --sandbox mode (auto, strict, limits; default auto) is measured in turn, for each game: run
``--sandbox auto --sandbox limits`` to see what the jail costs. With --json, one JSON object a line per game
and mode.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from arena.games import BOT_LIST, game_names, get_game
from arena.ladder.executor import LocalExecutor
from arena.ladder.ladder import Ladder, LadderConfig
from arena.ladder.readmodel import ReadModel
from arena.ladder.store import Store
from arena.ladder.workers import WorkerExecutor
from arena.launch.botlist import BotSpec, load_bot_list
from arena.launch.pool import PoolFigures
from arena.launch.procs import descendants
from arena.launch.sandbox import Mode, choose_sandbox

ROOT = Path(__file__).resolve().parent.parent


def _memory_kib(pid: int) -> tuple[int, int]:
    """Return the resident and proportional memory of ``pid`` in KiB (0, 0 when it is gone)."""
    rss = pss = 0
    with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
        for line in f:
            if line.startswith("Rss:"):
                rss = int(line.split()[1])
            elif line.startswith("Pss:"):
                pss = int(line.split()[1])
    return rss, pss


class ProcessSampler:
    """Samples the processes below this one every ``period`` seconds and keeps the sample with the most."""

    def __init__(self, period: float = 0.2) -> None:
        self.period = period
        self.peak = (0, 0, 0)  # processes, RSS KiB, PSS KiB
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ProcessSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            pids = descendants(os.getpid())
            memory = [_memory_kib(pid) for pid in pids]
            sample = (len(pids), sum(m[0] for m in memory), sum(m[1] for m in memory))
            if sample[0] > self.peak[0] or (sample[0] == self.peak[0] and sample[1] > self.peak[1]):
                self.peak = sample


THINKING = ("-medium", "-hard")
"""The endings of the bundled bots' names that think (the house levels above easy): left out of a --field."""


def field_of(bots: list[BotSpec], size: int) -> list[BotSpec]:
    """Return ``size`` bots: the quick ones of ``bots`` (not the house levels ``-medium`` and ``-hard``, nor a
    search bot by its old name: those think up to 100 ms a decision) again and again under more names
    (``NAME~2``...): as many programs as a big field, each started as often."""
    quick = [b for b in bots if "search" not in b.name and not b.name.endswith(THINKING)] or bots
    return [dataclasses.replace(quick[i % len(quick)], name=quick[i % len(quick)].name
                                + (f"~{i // len(quick) + 1}" if i >= len(quick) else "")) for i in range(size)]


def measure(game_name: str, matches: int, tables: int, seats: int, seed: int, mode: str = "auto",
            sealed_window_ms: float = 0.0, field: int | None = None,
            memory_budget_mb: int | None = None, workers: int | None = None,
            bot_list: Path | None = None) -> dict[str, Any]:
    """Run one ladder in a temporary database and return its figures: of the bots of ``bot_list`` that play the
    game (default: the game's bundled bots)."""
    game = get_game(game_name)
    if bot_list is None:
        bots = load_bot_list(ROOT / "arena" / "games" / game.name / BOT_LIST)
    else:
        bots = [b for b in load_bot_list(bot_list) if b.plays(game.name)]
        if len(bots) < 2:
            raise SystemExit(f"ladder.py: {bot_list} has {len(bots)} bot(s) for {game.name}: a ladder needs two")
    if field is not None:
        bots = field_of(bots, field)
    extra: dict[str, Any] = {"sealed_window": sealed_window_ms / 1000} if sealed_window_ms else {}
    if memory_budget_mb is not None:
        extra["memory_budget"] = memory_budget_mb * 1024 * 1024
    if workers is not None:
        extra["workers"] = workers
    sandbox = choose_sandbox(mode)
    config = LadderConfig(game, game.options(), seats, seed, bots, matches=matches, tables=tables,
                          sandbox=sandbox, **extra)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        store = Store(Path(folder) / "ladder.db")
        try:
            ladder = Ladder(config, store)
            with ProcessSampler() as sampler:
                timing = asyncio.run(ladder.run())
            executor = ladder.executor
            pool = executor.pool if isinstance(executor, LocalExecutor) else None
            figures = (pool.figures if pool is not None else executor.figures if isinstance(executor, WorkerExecutor)
                       else PoolFigures())
            stored = store.match_count()
            steps = ReadModel(store).steps()
        finally:
            store.close()
    capacity = timing.wall * tables
    budget = (pool.memory_budget or 0) if pool is not None else (
        executor.memory_budget if isinstance(executor, WorkerExecutor) else 0)
    workers_used = executor.workers if isinstance(executor, WorkerExecutor) else 1
    head = timing.scheduling + timing.rating + timing.storing
    known = timing.seating + (head if workers_used == 1 else 0.0)  # with workers, the head works beside the tables

    def share(seconds: float) -> float:
        return round(seconds / capacity, 5) if capacity > 0 else 0.0

    return {
        "game": game.name, "sandbox": sandbox.level, "seats": seats, "tables": tables, "bots": len(bots),
        "workers": workers_used,
        "matches": stored,
        "process_starts": timing.starts, "wall_s": round(timing.wall, 3),
        "matches_per_hour": round(stored / timing.wall * 3600) if timing.wall > 0 else 0,
        "seconds_per_match": round(timing.in_matches / max(1, timing.matches), 4),
        "seating_s_per_start": round(timing.seating / max(1, timing.starts), 4),
        "steps_per_match": round(steps / max(1, stored), 1),
        "outside_share": round(timing.outside_share, 5),
        "steady_outside_share": round(timing.steady_outside_share, 5),
        "startup_shutdown_share": share(timing.ramp),
        "seating_share": share(timing.seating), "scheduling_share": share(timing.scheduling),
        "rating_share": share(timing.rating), "storing_share": share(timing.storing), "head_share": share(head),
        "other_share": round(max(0.0, timing.outside_share - known / capacity), 5) if capacity > 0 else 0.0,
        "sealed_window_ms": sealed_window_ms, "peak_processes": sampler.peak[0],
        "peak_rss_mib": round(sampler.peak[1] / 1024, 1), "peak_pss_mib": round(sampler.peak[2] / 1024, 1),
        "pool_starts_ahead": figures.ahead, "pool_hits": figures.hits, "pool_misses": figures.misses,
        "pool_evicted": figures.evicted, "pool_peak_processes": figures.peak_processes,
        "pool_peak_mib": round(figures.peak_memory / 1024 / 1024, 1),
        "memory_budget_mib": round(budget / 1024 / 1024),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="matches per game (default 200)")
    parser.add_argument("--tables", type=int, default=2, help="tables at once (default 2)")
    parser.add_argument("--seats", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="ladder seed (default 0)")
    parser.add_argument("--game", action="append", choices=game_names(), help="a game (default: every game)")
    parser.add_argument("--sandbox", action="append", choices=[m.value for m in Mode],
                        help="bot isolation (default auto); repeat to measure several in turn")
    parser.add_argument("--sealed-window-ms", type=float, default=0.0,
                        help="hold every sealed window this long, asked or not (default 0: no hold)")
    parser.add_argument("--field", type=int, action="append", default=None,
                        help="bots in the field: the bundled quick bots under more names (default: the bundled "
                             "list as it is); repeat to measure several fields in turn")
    parser.add_argument("--bots", type=Path, default=None, metavar="LIST",
                        help="a bot list to play instead of the bundled bots (those of it that play the game)")
    parser.add_argument("--memory-budget", type=int, default=None, metavar="MB",
                        help="the warm pool's memory budget (default: arena ladder's, half the machine's memory)")
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes playing the tables (default: arena ladder's, one per core up to the "
                             "tables; 1: every table in the ladder's own process)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    for game, mode, field in [(g, m, f) for g in args.game or game_names() for m in args.sandbox or ["auto"]
                              for f in args.field or [None]]:
        figures = measure(game, args.matches, args.tables, args.seats, args.seed, mode, args.sealed_window_ms, field,
                          args.memory_budget, args.workers, args.bots)
        if args.json:
            print(json.dumps(figures), flush=True)
            continue
        head_where = "on the tables' loop" if figures["workers"] == 1 else "beside the workers"
        print(f"{figures['game']} ({figures['sandbox']}): {figures['bots']} bots, {figures['matches']} matches, "
              f"{figures['seats']} seats, "
              f"{figures['tables']} tables in {figures['workers']} process{'es' * (figures['workers'] != 1)}, "
              f"{figures['process_starts']} process starts in {figures['wall_s']:.1f} s: "
              f"{figures['matches_per_hour']} matches/h ({figures['seconds_per_match'] * 1000:.0f} ms and "
              f"{figures['steps_per_match']:.0f} steps a match); outside matches {figures['outside_share']:.2%} "
              f"of table time (target < 5%): waiting for bots {figures['seating_share']:.2%}, other "
              f"{figures['other_share']:.2%}; start-up and shutdown {figures['startup_shutdown_share']:.2%}, so "
              f"{figures['steady_outside_share']:.2%} outside matches once running; the ladder's own work "
              f"{figures['head_share']:.2%} of table time (scheduling {figures['scheduling_share']:.2%}, rating "
              f"{figures['rating_share']:.2%}, storing {figures['storing_share']:.2%}; "
              f"{head_where}); "
              f"waiting for bots {figures['seating_s_per_start'] * 1000:.0f} ms a process start; "
              f"sealed window {figures['sealed_window_ms']:g} ms; at most {figures['peak_processes']} processes, "
              f"RSS {figures['peak_rss_mib']:.0f} MiB, PSS {figures['peak_pss_mib']:.0f} MiB; pool: "
              f"{figures['pool_hits']} seats warm, {figures['pool_misses']} started at seating, "
              f"{figures['pool_starts_ahead']} started ahead, {figures['pool_evicted']} stopped for the budget "
              f"({figures['memory_budget_mib']} MiB), at most {figures['pool_peak_processes']} processes holding "
              f"{figures['pool_peak_mib']:.0f} MiB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
