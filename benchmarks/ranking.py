"""Does the ladder find the true order of a graded field, and how fast? (issue 12)

Run: python benchmarks/ranking.py [--game cabanga|lama] [--runs N] [--at 100,300,1000,2000] [--quick]
                                  [--pool K [--blind]]
     python benchmarks/ranking.py --until-decided [--budget N] [--zone Z --alpha A --beta B]
     python benchmarks/ranking.py --truth N      (establish the true order: N uniform deal sets)

The field: 8 bots of known order, the game's bundled bots and copies of its greedy bot that play a random
choice with probability epsilon (benchmarks/bot_fields.py). The true order (:data:`FIELDS`) was established by
``--truth 12000`` (48,000 matches in groups drawn uniformly at random, one fit over all of them: every
neighbour pair stronger in 100% of the bootstrap resamples); the script prints that run's figures again.

Each run plays a ladder in-process at 4 seats with the ladder's own parts: ``deal_seed`` and
``rotation_seating`` (arena.ladder.ladder), the FairScheduler (arena.ladder.scheduler), TrueSkill with tau 0 and the
measured draw probability (arena.ladder.ratings), and the order-free batch fit and sequential test
(arena.ladder.estimate); only the bot processes are replaced by the bots' policies driving the pure game engine.
It prints, at each match count, P(whole order right) for the board's order (the batch fit) and for
TrueSkill's mu, with its standard error, and each bot's share of the matches (a fair share is 4/8 = 0.50).
With --until-decided, each run goes until the sequential test has decided every neighbour pair (or
--budget matches): how often it stops, after how many matches, and how often the order at the stop is
right. Runs are spread over --workers processes (default 2).

With --pool K, the scheduler is told what a machine's pool of K warm processes holds (issue 23): each deal set
needs a process per rotation of each bot in it; those the pool lacks are started (counted as "starts"), and
the least recently used bots' processes go beyond K. With --blind the pool is simulated and its starts counted,
but the scheduler is not told: compare the order's truth, the shares and the starts with and without it.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot_fields import graded_field, play

from arena.ladder.estimate import Evidence, SequentialTest, estimate, neighbour_verdicts, point_order
from arena.ladder.ladder import deal_seed, rotation_seating
from arena.ladder.ratings import Outcome, Rating, RatingError, TrueSkillSystem
from arena.ladder.scheduler import FairScheduler, FieldState

SEATS = 4

FIELDS: dict[str, tuple[list[str], list[float]]] = {
    # game -> (the true order, best first; the epsilons of the greedy copies)
    "cabanga": (["cabanga-greedy", "cabanga-greedy-e05", "cabanga-tidy", "cabanga-greedy-e30",
                 "cabanga-greedy-e50", "cabanga-greedy-e70", "cabanga-thrower", "cabanga-random"],
                [0.05, 0.3, 0.5, 0.7]),
    "lama": (["lama-greedy", "lama-steady", "lama-greedy-e05", "lama-greedy-e10", "lama-quitter",
              "lama-greedy-e30", "lama-greedy-e60", "lama-random"],
             [0.05, 0.1, 0.3, 0.6]),
}


def ladder_run(game: str, run: int, checkpoints: Sequence[int], test: SequentialTest | None,
               budget: int, pool: int = 0, blind: bool = False, tolerance: float | None = None) -> dict[str, Any]:
    """Play one ladder; return the order and shares at each checkpoint, or where it stopped."""
    truth, epsilons = FIELDS[game]
    field = graded_field(game, epsilons)
    bots = sorted(field)
    system = TrueSkillSystem.for_game(game, SEATS)
    scheduler = FairScheduler() if tolerance is None else FairScheduler(warm_tolerance=tolerance)
    ladder_seed = random.Random(f"ranking/{game}/{run}").randrange(2**62)
    ratings: dict[str, Rating] = {}
    played: dict[str, int] = {}
    evidence = Evidence()
    count = 0
    points: list[dict[str, Any]] = []
    marks = sorted(checkpoints)
    deal = 0
    stopped = False
    held: dict[str, int] = {}  # a simulated machine pool: processes held per bot, least recently used first
    starts = 0
    while count < budget:
        decided: set[frozenset[str]] = set()
        if test is not None:
            fitted = point_order(evidence)
            order = fitted + sorted(set(bots) - set(fitted))
            verdicts = neighbour_verdicts(evidence, order, test)
            decided = {frozenset(pair) for pair, verdict in verdicts if verdict.decided}
            if len(decided) == len(verdicts):
                stopped = True
                break
        rng = random.Random(f"arena-ladder/{ladder_seed}/group/{deal}")
        warm = {} if blind else dict(held)
        group = scheduler.next_group(FieldState(bots, ratings, played, decided, warm=warm), SEATS, rng)
        if pool:
            for bot in group:
                have = held.pop(bot, 0)
                starts += max(0, SEATS - have)
                held[bot] = max(have, SEATS)  # most recently used last
            while sum(held.values()) > pool:
                oldest = next(iter(held))
                if oldest in group:
                    break
                held[oldest] -= 1
                if not held[oldest]:
                    del held[oldest]
        seed = deal_seed(ladder_seed, deal)
        for rotation in range(SEATS):
            seating = rotation_seating(group, rotation)
            places: tuple[int | None, ...] = play(
                game, [field[b](f"{run}/{deal}/{rotation}/{b}") for b in seating], seed % 2**32)
            before = [ratings.get(b, system.initial()) for b in seating]
            try:
                after = system.rate(before, places)
            except RatingError:
                after = before
            ratings.update(zip(seating, after, strict=True))
            evidence.add(Outcome(deal, rotation, tuple(seating), places))
            for b in seating:
                played[b] = played.get(b, 0) + 1
            count += 1
            if marks and count == marks[0]:
                marks.pop(0)
                by_mu = sorted(bots, key=lambda b: -ratings.get(b, system.initial()).mu)
                points.append({"matches": count, "right": point_order(evidence) == truth,
                               "mu_right": by_mu == truth,
                               "share": {b: played.get(b, 0) / count for b in truth}, "starts": starts})
        deal += 1
    result: dict[str, Any] = {"points": points}
    if test is not None:
        result.update(stopped=stopped, matches=count, right=point_order(evidence) == truth)
    return result


def _job(args: tuple[str, int, list[int], SequentialTest | None, int, int, bool, float | None]) -> dict[str, Any]:
    return ladder_run(*args)


def truth_run(game: str, deals: int, workers: int) -> None:
    """Play ``deals`` deal sets of groups drawn uniformly and print the fitted order (the true order)."""
    _, _epsilons = FIELDS[game]
    chunks = [(game, w, deals // workers) for w in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(_uniform, chunks))
    evidence = Evidence.of(o for part in parts for o in part)
    board = estimate(evidence, replicates=100)
    print(f"{game}: {sum(evidence.matches.values()) // SEATS} matches in uniformly drawn groups")
    for b in board.bots:
        print(f"  {b.bot:22s} {b.strength:6.2f}  [{b.low:.2f}, {b.high:.2f}]  ranks {b.ranks}")
    for p in board.pairs:
        print(f"  {p.first} > {p.second}: beats with p {p.beats:.3f}, stronger in {p.superiority:.0%} of resamples")
    print("matches FIELDS:", board.order == FIELDS[game][0])


def _uniform(args: tuple[str, int, int]) -> list[Outcome]:
    game, worker, deals = args
    field = graded_field(game, FIELDS[game][1])
    bots = sorted(field)
    rng = random.Random(f"truth/{game}/{worker}")
    out = []
    for d in range(deals):
        deal = worker * deals + d
        group = rng.sample(bots, SEATS)
        for rotation in range(SEATS):
            seating = rotation_seating(group, rotation)
            places = play(game, [field[b](f"t{deal}/{rotation}/{b}") for b in seating], rng.randrange(2**32))
            out.append(Outcome(deal, rotation, tuple(seating), tuple(places)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(FIELDS), default="cabanga")
    parser.add_argument("--runs", type=int, default=64, help="ladders per figure (default 64; 20 with --quick)")
    parser.add_argument("--at", default="100,300,1000,2000", help="match counts to report (comma separated)")
    parser.add_argument("--quick", action="store_true", help="20 runs, up to 1,000 matches")
    parser.add_argument("--until-decided", action="store_true", help="run each ladder until decided")
    parser.add_argument("--budget", type=int, default=20000, help="match budget with --until-decided")
    parser.add_argument("--zone", type=float, default=SequentialTest().zone)
    parser.add_argument("--alpha", type=float, default=SequentialTest().alpha)
    parser.add_argument("--beta", type=float, default=SequentialTest().beta)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool", type=int, default=0, metavar="K",
                        help="tell the scheduler what a pool of K warm processes holds (default 0: no pool)")
    parser.add_argument("--blind", action="store_true",
                        help="with --pool: count its starts, but tell the scheduler nothing")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="with --pool: the scheduler's warm_tolerance (default: its own)")
    parser.add_argument("--first-run", type=int, default=0, help="number of the first run (its ladder seed)")
    parser.add_argument("--truth", type=int, default=0, metavar="N", help="establish the true order from N deal sets")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    if args.truth:
        truth_run(args.game, args.truth, args.workers)
        return
    runs = 20 if args.quick and args.runs == 64 else args.runs
    checkpoints = [int(x) for x in args.at.split(",")]
    if args.quick:
        checkpoints = [c for c in checkpoints if c <= 1000] or checkpoints[:1]
    test = SequentialTest(args.zone, args.alpha, args.beta) if args.until_decided else None
    budget = args.budget if test is not None else max(checkpoints)
    jobs = [(args.game, run, checkpoints if test is None else [], test, budget, args.pool, args.blind, args.tolerance)
            for run in range(args.first_run, args.first_run + runs)]
    results = []
    with ProcessPoolExecutor(args.workers) as pool:
        for run, result in enumerate(pool.map(_job, jobs)):  # each run on stderr as it ends: partial figures
            results.append(result)
            brief = {k: v for k, v in result.items() if k != "points"} | {
                str(p["matches"]): p["right"] for p in result["points"]}
            print(f"run {run}: {json.dumps(brief)}", file=sys.stderr, flush=True)
    truth = FIELDS[args.game][0]
    if test is not None:
        stops = [r["matches"] for r in results if r["stopped"]]
        right = [r["right"] for r in results if r["stopped"]]
        row = {"game": args.game, "runs": runs, "test": test.describe(), "budget": budget,
               "stopped": round(len(stops) / runs, 3),
               "median_matches": statistics.median(stops) if stops else None,
               "mean_matches": round(statistics.mean(stops)) if stops else None,
               "max_matches": max(stops) if stops else None,
               "right_at_stop": round(sum(right) / len(right), 3) if right else None,
               "right_at_budget": round(sum(r["right"] for r in results if not r["stopped"])
                                        / (runs - len(stops)), 3) if len(stops) < runs else None}
        print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()))
        return
    for i, at in enumerate(checkpoints):
        right = sum(r["points"][i]["right"] for r in results) / runs
        mu_right = sum(r["points"][i]["mu_right"] for r in results) / runs
        share = {b: round(statistics.mean(r["points"][i]["share"][b] for r in results), 3) for b in truth}
        starts = statistics.mean(r["points"][i]["starts"] for r in results)
        row = {"game": args.game, "matches": at, "runs": runs, "pool": args.pool, "blind": args.blind,
               "p_order_right": round(right, 3),
               "se": round(math.sqrt(right * (1 - right) / runs), 3), "p_trueskill_mu_right": round(mu_right, 3),
               "share": share, "starts": round(starts, 1)}
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{args.game} {at:>5} matches, {runs} runs: P(order right) {right:.2f} +- {row['se']:.2f} "
                  f"(TrueSkill mu order {mu_right:.2f}); share of matches best first: "
                  + " ".join(f"{v:.2f}" for v in share.values())
                  + (f"; process starts {starts:.0f} (pool of {args.pool}{', blind' if args.blind else ''})"
                     if args.pool else ""), flush=True)


if __name__ == "__main__":
    main()
