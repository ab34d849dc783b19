"""The ladder's throughput and overhead: matches per hour, and the share of table time spent outside matches.

Run: python benchmarks/ladder.py [--matches N] [--tables K] [--seats S] [--game GAME ...] [--sandbox MODE ...]
     [--json]

For each game, runs a fresh ladder (a temporary database) of the bundled example bots (bots/GAME.toml) at
S seats (default 4) on K tables (default 2) until N matches are stored (default 200), exactly as
`arena ladder` does, and prints:
  matches/h   matches stored per hour of wall time;
  outside     the share of table time (wall time x tables) not spent inside a match: bot process starts
              and connections, scheduling, rating, storing, server start and stop, tables idle at the end
              (target: under 5%); then each of those as a share of table time, and ``other`` for the rest;
  start-up and shutdown: the part of it before each table's first match and after its last (the first
              bot processes, the server, stopping the bots), and the share outside matches without it:
              what a long ladder approaches.
  seating/start: seconds of seating per process start (starting bot processes and waiting for their hello).
Each --sandbox mode (auto, strict, limits; default auto) is measured in turn, for each game: run
``--sandbox auto --sandbox limits`` to see what the jail costs. With --json, one JSON object a line per game
and mode.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from arena.games import GAMES, get_game
from arena.ladder import Ladder, LadderConfig
from arena.launcher import load_bot_list
from arena.sandbox import Mode, choose_sandbox
from arena.store import Store

ROOT = Path(__file__).resolve().parent.parent


def measure(game_name: str, matches: int, tables: int, seats: int, seed: int, mode: str = "auto") -> dict[str, Any]:
    """Run one ladder in a temporary database and return its figures."""
    game = get_game(game_name)
    bots = load_bot_list(ROOT / "bots" / f"{game.name}.toml")
    sandbox = choose_sandbox(mode)
    config = LadderConfig(game, game.options(), seats, seed, bots, matches=matches, tables=tables, sandbox=sandbox)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        store = Store(Path(folder) / "ladder.db")
        try:
            ladder = Ladder(config, store)
            timing = asyncio.run(ladder.run())
            stored = store.match_count()
            steps = int(store.db.execute("SELECT sum(steps) FROM matches").fetchone()[0] or 0)
        finally:
            store.close()
    capacity = timing.wall * tables
    known = timing.seating + timing.scheduling + timing.rating + timing.storing

    def share(seconds: float) -> float:
        return round(seconds / capacity, 5) if capacity > 0 else 0.0

    return {
        "game": game.name, "sandbox": sandbox.level, "seats": seats, "tables": tables, "bots": len(bots),
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
        "rating_share": share(timing.rating), "storing_share": share(timing.storing),
        "other_share": round(max(0.0, timing.outside_share - known / capacity), 5) if capacity > 0 else 0.0,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=200, help="matches per game (default 200)")
    parser.add_argument("--tables", type=int, default=2, help="tables at once (default 2)")
    parser.add_argument("--seats", type=int, default=4, help="seats per match (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="ladder seed (default 0)")
    parser.add_argument("--game", action="append", choices=sorted(GAMES), help="a game (default: every game)")
    parser.add_argument("--sandbox", action="append", choices=[m.value for m in Mode],
                        help="bot isolation (default auto); repeat to measure several in turn")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    for game, mode in [(g, m) for g in args.game or sorted(GAMES) for m in args.sandbox or ["auto"]]:
        figures = measure(game, args.matches, args.tables, args.seats, args.seed, mode)
        if args.json:
            print(json.dumps(figures), flush=True)
            continue
        print(f"{figures['game']} ({figures['sandbox']}): {figures['matches']} matches, {figures['seats']} seats, "
              f"{figures['tables']} tables, {figures['process_starts']} process starts in {figures['wall_s']:.1f} s: "
              f"{figures['matches_per_hour']} matches/h ({figures['seconds_per_match'] * 1000:.0f} ms and "
              f"{figures['steps_per_match']:.0f} steps a match); outside matches {figures['outside_share']:.2%} "
              f"of table time (target < 5%): seating {figures['seating_share']:.2%}, scheduling "
              f"{figures['scheduling_share']:.2%}, rating {figures['rating_share']:.2%}, storing "
              f"{figures['storing_share']:.2%}, other {figures['other_share']:.2%}; start-up and shutdown "
              f"{figures['startup_shutdown_share']:.2%}, so {figures['steady_outside_share']:.2%} outside "
              f"matches once running; seating {figures['seating_s_per_start'] * 1000:.0f} ms a process start",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
