"""Finals that stop on evidence against a fixed budget of the same mean size (issue 34).

Run: python benchmarks/finals.py [--game cabanga|lama] [--runs N] [--top K] [--budget N] [--cut EVERY]
                                 [--workers W] [--json]

The field: the graded field of benchmarks/ranking.py (8 bots of known order: the game's bundled bots and copies of
its greedy bot that play a random choice with probability epsilon, benchmarks/bot_fields.py), at 4 seats. Three
ways of ending a contest are played on it, each run with the real ladder (arena.ladder.ladder.Ladder: deal sets,
rotations, TrueSkill with tau 0, the SQLite store) and only the bot processes replaced by the bots' policies
driving the pure game engine:

1. **finals**: the contest's finals as ``[finals]`` runs them: until every pair of the top K places is decided by
   the sequential test (zone 0.03, alpha = beta = 0.05 per pair), whole deal sets, the scheduler looking at the
   top first (``LadderConfig(top=K, whole_deals=True)``), optionally the progressive cut (``--cut EVERY``), or
   until ``--budget`` matches;
2. **fixed, uniform**: CodinGame's way, a fixed number of matches, the mean the finals took (rounded to whole deal
   sets), between groups drawn uniformly at random;
3. **fixed, ladder**: the same fixed number of matches scheduled by the ladder's own scheduler (FairScheduler),
   which separates what the stopping rule buys from what the scheduling buys.

Each run's ladder seed differs (``--first-run`` numbers them); the three arms of a run share it. It prints, for
each arm, how often the top K places came out in the true order (P(top K right), with its standard error), and
the matches it took (the finals: mean, median, max, and how often they stopped with the top pairs decided); and how
often the finals claimed an order (every top pair decided) that was wrong.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bot_fields import Factory, graded_field
from ranking import FIELDS

from arena.core import replay as replay_format
from arena.core.referee import MatchSummary
from arena.games import get_game
from arena.ladder.estimate import SequentialTest
from arena.ladder.executor import Job, Played
from arena.ladder.finals import Cut, final_board
from arena.ladder.ladder import Ladder, LadderConfig
from arena.ladder.scheduler import FairScheduler, FieldState, Scheduler
from arena.ladder.store import Store
from arena.launch.botlist import BotSpec

SEATS = 4
EMPTY_REPLAY = replay_format.compress({})
"""What the benchmark stores as each match's replay: nothing (it is never read)."""


class FieldExecutor:
    """Plays each job in-process: the field's policies drive the pure game engine (no referee, no processes)."""

    tables = slots = 1

    def __init__(self, game: str, field: Mapping[str, Factory], run: int) -> None:
        self.game = get_game(game)
        self.field = field
        self.run_number = run

    async def start(self) -> None:
        return None

    def prepare(self, jobs: Sequence[Job]) -> None:
        return None

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        bots = [self.field[name](f"{self.run_number}/{job.deal}/{job.rotation}/{name}") for name in job.seating]
        state = self.game.new_match(len(bots), job.seed, job.options)
        steps = 0
        while not state.over:
            state.apply({p.seat: bots[p.seat].decide(p, state.view(p.seat)) for p in state.pending()})
            steps += 1
        result = state.result
        assert result is not None
        places = tuple(1 + sum(1 for o in result.places if o < p) for p in result.places)
        summary = MatchSummary(job.seed, steps, tuple(result.totals), places, frozenset(), (),
                               tuple(() for _ in bots))
        return Played(summary, EMPTY_REPLAY, 0.0, 0.0)

    async def release(self) -> None:
        return None

    async def close(self) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Uniform:
    """CodinGame's rerun: every deal set's group drawn uniformly at random from the field."""

    def next_group(self, state: FieldState, seats: int, rng: random.Random) -> list[str]:
        return rng.sample(sorted(state.bots), seats)


def one_ladder(game: str, run: int, top: int, matches: int, *, until_decided: bool, cut: int,
               scheduler: Scheduler) -> dict[str, Any]:
    """Play one ladder of the field; return its matches, whether it stopped decided, and whether its top K are
    in the true order."""
    truth, epsilons = FIELDS[game]
    field = graded_field(game, epsilons)
    seed = random.Random(f"finals/{game}/{run}").getrandbits(128)
    test = SequentialTest()
    with tempfile.TemporaryDirectory() as folder:
        bots = [BotSpec(name, ("in-process", name), Path(folder)) for name in sorted(field)]
        config = LadderConfig(get_game(game), get_game(game).options(), SEATS, seed, bots, matches=matches,
                              until_decided=test if until_decided else None, top=top if until_decided else None,
                              cut=Cut(cut) if cut and until_decided else None, whole_deals=True)
        store = Store(Path(folder) / "finals.db")
        try:
            ladder = Ladder(config, store, on_note=lambda _: None, executor=FieldExecutor(game, field, run),
                            scheduler=scheduler)
            asyncio.run(ladder.run())
            board = final_board(ladder.evidence, ladder.available, test, top)
        finally:
            store.close()
    return {"matches": ladder.count, "decided": board.decided, "right": board.order[:top] == truth[:top],
            "cut": sum(len(c.out) for c in ladder.cuts)}


def _finals(args: tuple[str, int, int, int, int]) -> dict[str, Any]:
    game, run, top, budget, cut = args
    return one_ladder(game, run, top, budget, until_decided=True, cut=cut, scheduler=FairScheduler())


def _fixed(args: tuple[str, int, int, int, str]) -> dict[str, Any]:
    game, run, top, matches, how = args
    scheduler: Scheduler = Uniform() if how == "uniform" else FairScheduler()
    return one_ladder(game, run, top, matches, until_decided=False, cut=0, scheduler=scheduler)


def share(results: Sequence[dict[str, Any]], key: str) -> tuple[float, float]:
    p = sum(bool(r[key]) for r in results) / len(results)
    return p, math.sqrt(p * (1 - p) / len(results))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(FIELDS), default="cabanga")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--top", type=int, default=3, help="the places the finals decide (default 3)")
    parser.add_argument("--budget", type=int, default=8000, help="the finals' budget of matches (default 8000)")
    parser.add_argument("--cut", type=int, default=0, metavar="EVERY",
                        help="the progressive cut after every EVERY deal sets (default: none)")
    parser.add_argument("--fractions", default="1",
                        help="the fixed budgets, as fractions of the finals' mean (default 1: the same mean size)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--first-run", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args()
    runs = range(args.first_run, args.first_run + args.runs)
    with ProcessPoolExecutor(args.workers) as pool:
        finals = []
        for run, result in zip(runs, pool.map(_finals, [(args.game, r, args.top, args.budget, args.cut) for r in runs]),
                               strict=True):
            finals.append(result)
            print(f"finals run {run}: {json.dumps(result)}", file=sys.stderr, flush=True)
        mean = statistics.mean(r["matches"] for r in finals)
        arms: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for fraction in (float(f) for f in args.fractions.split(",")):
            fixed_matches = max(SEATS, round(mean * fraction / SEATS) * SEATS)  # whole deal sets
            for how in ("uniform", "ladder"):
                arms[how, fixed_matches] = list(pool.map(
                    _fixed, [(args.game, r, args.top, fixed_matches, how) for r in runs]))
                print(f"fixed {how} at {fixed_matches}: {sum(r['right'] for r in arms[how, fixed_matches])} of "
                      f"{len(runs)} right", file=sys.stderr, flush=True)
    matches = [r["matches"] for r in finals]
    right, se = share(finals, "right")
    decided = [r for r in finals if r["decided"]]
    row: dict[str, Any] = {
        "game": args.game, "runs": args.runs, "top": args.top, "budget": args.budget, "cut": args.cut or None,
        "finals": {"p_top_right": round(right, 3), "se": round(se, 3), "mean_matches": round(mean),
                   "median_matches": statistics.median(matches), "min_matches": min(matches),
                   "max_matches": max(matches), "stopped_decided": round(len(decided) / len(finals), 3),
                   "wrong_claims": sum(1 for r in decided if not r["right"]),
                   "cut_bots_mean": round(statistics.mean(r["cut"] for r in finals), 2)},
        "fixed": []}
    for (how, fixed_matches), results in arms.items():
        p, s = share(results, "right")
        row["fixed"].append({"scheduler": how, "matches": fixed_matches, "p_top_right": round(p, 3), "se": round(s, 3)})
    if args.json:
        print(json.dumps(row))
        return
    f = row["finals"]
    print(f"{args.game}, top {args.top}, {args.runs} runs{f', cut every {args.cut} deal sets' if args.cut else ''}:")
    print(f"  finals (stop when the top {args.top} places are decided, budget {args.budget}): P(top {args.top} right) "
          f"{f['p_top_right']:.3f} +- {f['se']:.3f}; matches mean {f['mean_matches']}, median {f['median_matches']}, "
          f"{f['min_matches']}..{f['max_matches']}; stopped decided in {f['stopped_decided']:.0%}, a wrong order "
          f"claimed {f['wrong_claims']} times" + (f"; {f['cut_bots_mean']} bots cut a run" if args.cut else ""))
    labels = {"uniform": "fixed budget, uniform groups (CodinGame's rerun)",
              "ladder": "fixed budget, the ladder's scheduler"}
    for fx in row["fixed"]:
        print(f"  {labels[fx['scheduler']]}, {fx['matches']} matches: P(top {args.top} right) {fx['p_top_right']:.3f} "
              f"+- {fx['se']:.3f}")


if __name__ == "__main__":
    main()
