"""How strong the house bots are: every level against every other, and the hard bots against outside heuristics.

Run: python benchmarks/search_strength.py [--game cabanga|lama|goofspiel|all] [--pairs A:B,...]
                                          [--max-matches 1500] [--minutes-per-pair 30] [--tables 2]
                                          [--sandbox strict] [--keep DIR] [--json]

For each pair, one `arena compare A B` (real bot processes, the strict jail by default, the default deadline of
1 s): deal sets with the seats rotated until the sequential test decides, or ``--max-matches`` matches, or
``--minutes-per-pair`` minutes (then "undecided"). Cabanga! needs three seats: the third is ``cabanga-tidy``,
the same filler for every pair. It prints, per pair, the verdict, the deal sets played, the mean pairwise score
of A against B with its 95% interval (as `arena compare` prints them), and for the hard bots their latency
median and p99 and their faults (from the comparison's own database). Last, the hard bots' search speed:
rollouts a second while deciding (in-process, at the default clock, over positions of greedy matches).

The default pairs: the three levels against each other, and in Cabanga! the hard bot against two outside
authors' heuristics (``benchmarks/outside_bots/``: card tracking, penalty avoidance, an eye on the round's end;
written as an outside author would in an afternoon, not shipped). The figures go to docs/figures.md ("The
search bots' strength").
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from arena.ladder.store import Store

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = {"cabanga": {"outside-tracker": "benchmarks/outside_bots/cabanga_tracker.py",
                       "outside-closer": "benchmarks/outside_bots/cabanga_closer.py"}}
FILLER = {"cabanga": "cabanga-tidy"}
LEVELS = ("hard", "medium", "easy")


def default_pairs(game: str) -> list[tuple[str, str]]:
    """Return the pairs measured by default: every level against every other, the hard bot against outsiders."""
    pairs = [(f"{game}-hard", f"{game}-medium"), (f"{game}-hard", f"{game}-easy"), (f"{game}-medium", f"{game}-easy")]
    pairs += [(f"{game}-hard", name) for name in OUTSIDE.get(game, {})]
    return pairs


def bot_list(game: str, names: list[str]) -> str:
    """Return a bot list (TOML): bundled bots by name, outside heuristics from this checkout, and the filler."""
    text = ""
    for name in dict.fromkeys(names + ([FILLER[game]] if game in FILLER else [])):
        if name in OUTSIDE.get(game, {}):
            text += (f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "{OUTSIDE[game][name]}"]\n'
                     f'cwd = "{ROOT}"\ngames = ["{game}"]\n\n')
        else:
            text += f'[[bot]]\nbundled = "{name}"\n\n'
    return text


def compare(game: str, first: str, second: str, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    """Run one `arena compare`; return its verdict, mean score, interval and the bots' latency and faults."""
    stem = f"{first}--{second}"
    bots = folder / f"{stem}.toml"
    bots.write_text(bot_list(game, [first, second]))
    db = folder / f"{stem}.db"
    command = [sys.executable, "-c", "from arena.cli import run; run()", "compare", first, second,
               "--bots", str(bots), "--game", game, "--matches", str(args.max_matches), "--tables",
               str(args.tables), "--db", str(db), "--sandbox", args.sandbox]
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.minutes_per_pair * 60)
        out = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-500:]
    except subprocess.TimeoutExpired:
        out = f"undecided: the time bound of {args.minutes_per_pair:g} minutes ran out"
    seconds = time.monotonic() - start
    row: dict[str, Any] = {"game": game, "first": first, "second": second, "verdict": out.split(" (")[0],
                           "seconds": round(seconds)}
    found = re.search(r"(\d+) shared deal sets, mean score of \S+ against \S+ ([0-9.]+)"
                      r"(?:, 95% interval ([0-9.]+)-([0-9.]+))?", out)
    if found:
        row.update(deal_sets=int(found[1]), mean=float(found[2]),
                   low=float(found[3]) if found[3] else None, high=float(found[4]) if found[4] else None)
    if db.exists():
        from arena.ladder.estimate import Evidence, mean_score_interval

        store = Store(db, readonly=True)
        try:
            if not found:  # cut short by the time bound: the evidence so far
                scores = Evidence.of(store.results()).paired(first, second)
                interval = mean_score_interval(scores)
                row.update(deal_sets=len(scores), mean=round(sum(scores) / len(scores), 3) if scores else None,
                           low=round(interval[0], 3) if interval else None,
                           high=round(interval[1], 3) if interval else None)
            row["matches"] = store.match_count() if hasattr(store, "match_count") else None
            for board_row in store.leaderboard():
                if board_row.bot in (first, second):
                    row[board_row.bot] = {"median_ms": round(board_row.median_ms, 1),
                                          "p99_ms": round(board_row.p99_ms, 1), "faults": board_row.faults}
        finally:
            store.close()
    return row


def rollouts_per_second(game: str, decisions: int = 12) -> float:
    """Return the hard bot's rollouts a second while deciding, in-process at its default clock (1 s deadline), over
    ``decisions`` decisions of greedy matches (wall time: what the clock spends)."""
    from arena.games import get_game

    module = __import__(f"arena.games.{game}.bots.hard.bot", fromlist=["main"])
    bot_class = next(v for k, v in vars(module).items() if k.startswith("Hard") and isinstance(v, type))
    game_obj = get_game(game)
    tools = __import__(f"arena.games.{game}.search", fromlist=["search"])
    policy = getattr(tools, "greedy_policy", lambda state, prompt: (prompt.choices[0],))  # Goofspiel: the lowest
    rng = random.Random(3)
    spent = rollouts = 0.0
    seed = 0
    while decisions > 0:
        state = game_obj.new_match(3 if game == "cabanga" else 2, seed)
        seed += 1
        while not state.over and decisions > 0:
            prompt = state.pending()[0]
            if rng.random() < 0.1:
                bot = bot_class()
                bot.on_clock(1.0)
                start = time.perf_counter()
                bot.decide(prompt, state.view(prompt.seat))
                spent += time.perf_counter() - start
                rollouts += bot.report.rollouts
                decisions -= 1
            state.apply({p.seat: policy(state, p) for p in state.pending()})
    return rollouts / spent if spent else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("cabanga", "lama", "goofspiel", "all"), default="all")
    parser.add_argument("--pairs", default=None, help="A:B,... instead of the default pairs (one game)")
    parser.add_argument("--max-matches", type=int, default=1500, help="matches per pair at most (default 1500)")
    parser.add_argument("--minutes-per-pair", type=float, default=30.0, help="time bound per pair (default 30)")
    parser.add_argument("--tables", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--sandbox", default="strict", choices=("auto", "strict", "limits"))
    parser.add_argument("--keep", type=Path, default=None, help="folder for the bot lists and databases")
    parser.add_argument("--no-speed", action="store_true", help="skip the rollouts-a-second measurement")
    parser.add_argument("--speed-only", action="store_true", help="only the rollouts-a-second measurement")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    games = ("cabanga", "lama", "goofspiel") if args.game == "all" else (args.game,)
    with tempfile.TemporaryDirectory(prefix="arena-bench-strength-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for game in games:
            pairs = ([tuple(p.split(":")) for p in args.pairs.split(",")] if args.pairs else default_pairs(game))
            if args.speed_only:
                pairs = []
            for first, second in pairs:
                row = compare(game, first, second, args, folder)
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    late = "; ".join(f"{b} {row[b]['median_ms']}/{row[b]['p99_ms']} ms, {row[b]['faults']} faults"
                                     for b in (first, second) if b in row and b.endswith("-hard"))
                    print(f"| {first} | {second} | {row['verdict']} | {row.get('deal_sets')} | {row.get('mean')} | "
                          f"{row.get('low')}-{row.get('high')} | {late} | {row['seconds']} s |", flush=True)
            if not args.no_speed:
                rate = rollouts_per_second(game)
                print(json.dumps({"game": game, "hard_rollouts_per_second": round(rate)}) if args.json else
                      f"{game}-hard: {rate:,.0f} rollouts a second while deciding", flush=True)


if __name__ == "__main__":
    main()
