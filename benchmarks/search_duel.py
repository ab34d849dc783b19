"""In-process head-to-head of two bot configurations at equal deals: the cheap screen before `arena compare`.

Run: python benchmarks/search_duel.py --game cabanga --a 'hard' --b 'medium' [--deal-sets 40] [--seed 0]
                                      [--workers 1] [--json]

A bot is given as ``NAME`` or ``NAME:key=value,key=value`` (the keyword arguments of its class), NAME one of
:data:`MAKERS` (``hard``, ``medium``, ``easy``, ``tidy``, ``tracker``... per game). Each deal set is one seed
played with the seats rotated (A, B and the filler of the game, as `arena compare` seats them), every match
played to its end in-process: no gRPC, no jail, the bots called directly (their events, their clock as the
arena would tell it: the deadline, ``--deadline``). It prints A's mean pairwise score against B per deal set with
its 95% interval (normal approximation, clipped to [0, 1], as `arena compare` prints it), and each bot's CPU
time per decision and rollouts a second. With ``worlds=N`` in both bots' arguments the result does not depend on
the machine's load (the searches are deterministic for a seed); with the clock it does.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games import get_game
from arena.games.base import Clock, MatchInfo
from arena.games.bot import Bot
from arena.games.search import told_events
from arena.ladder.estimate import mean_score_interval

FILLER = {"cabanga": "tidy"}


def _maker(game: str, name: str) -> Callable[..., Bot]:
    if game == "cabanga":
        if name == "hard":
            from arena.games.cabanga.bots.hard.bot import HardCabanga
            return HardCabanga
        if name == "medium":
            from arena.games.cabanga.bots.search.bot import SearchCabanga
            return SearchCabanga
        if name == "easy":
            from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
            return GreedyCabanga
        if name == "tidy":
            from arena.games.cabanga.bots.tidy.bot import TidyCabanga
            return TidyCabanga
        if name in ("tracker", "closer"):
            sys.path.insert(0, str(Path(__file__).resolve().parent / "outside_bots"))
            module = __import__(f"cabanga_{name}")
            return getattr(module, name.capitalize())  # type: ignore[no-any-return]
    if game == "lama":
        if name == "hard":
            from arena.games.lama.bots.hard.bot import HardLama
            return HardLama
        if name == "medium":
            from arena.games.lama.bots.search.bot import SearchLama
            return SearchLama
        if name == "easy":
            from arena.games.lama.bots.greedy.bot import GreedyLama
            return GreedyLama
    raise SystemExit(f"no bot {name!r} for {game!r}")


def make_bot(game: str, spec: str) -> Bot:
    """Return the bot of ``spec`` (``NAME`` or ``NAME:key=value,...``, values read as Python literals or text)."""
    import ast

    name, _, rest = spec.partition(":")
    kwargs: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        try:
            kwargs[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            kwargs[key] = value
    return _maker(game, name)(**kwargs)


def play_match(game_name: str, specs: list[str], seed: int,
               deadline: float) -> tuple[tuple[int, ...], list[list[float]]]:
    """Play one match; return its places and, per seat, [CPU seconds deciding, decisions, rollouts]."""
    game = get_game(game_name)
    state = game.new_match(len(specs), seed)
    bots = [make_bot(game_name, spec) for spec in specs]
    names = tuple(f"s{i}" for i in range(len(specs)))
    for seat, bot in enumerate(bots):
        bot.on_match_start(MatchInfo(f"m{seed}", game_name, seat, names, {}, Clock(deadline), 3))
    told = [0] * len(specs)
    costs = [[0.0, 0.0, 0.0] for _ in specs]
    while not state.over:
        decisions = {}
        for prompt in state.pending():
            seat = prompt.seat
            bot = bots[seat]
            events = told_events(state, seat)
            start = time.process_time()
            bot.on_events(events[told[seat]:])
            told[seat] = len(events)
            bot.on_clock(deadline)
            report = getattr(bot, "report", None)
            before = report.rollouts if report is not None else 0
            decisions[seat] = bot.decide(prompt, state.view(seat))
            costs[seat][0] += time.process_time() - start
            costs[seat][1] += 1
            costs[seat][2] += (report.rollouts - before) if report is not None else 0
        state.apply(decisions)
    assert state.result is not None
    return state.result.places, costs


def deal_set(args: tuple[str, str, str, list[str], int, float]) -> dict[str, Any]:
    """Play one deal set (seats rotated); return A's mean score against B and the bots' costs."""
    game_name, a, b, fillers, seed, deadline = args
    lineup = [a, b, *fillers]
    n = len(lineup)
    score = 0.0
    cost = {"a": [0.0, 0.0, 0.0], "b": [0.0, 0.0, 0.0]}
    for r in range(n):
        specs = lineup[r:] + lineup[:r]  # seat s holds lineup[(s + r) % n]
        places, costs = play_match(game_name, specs, seed, deadline)
        seat_a, seat_b = (0 - r) % n, (1 - r) % n
        pa, pb = places[seat_a], places[seat_b]
        score += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
        for key, seat in (("a", seat_a), ("b", seat_b)):
            cost[key] = [x + y for x, y in zip(cost[key], costs[seat], strict=True)]
    return {"seed": seed, "score": score / n, "cost": cost}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="cabanga", choices=("cabanga", "lama"))
    parser.add_argument("--a", required=True, help="the first bot: NAME[:key=value,...]")
    parser.add_argument("--b", required=True, help="the second bot: NAME[:key=value,...]")
    parser.add_argument("--seats", type=int, default=None, help="seats (default: the game's least)")
    parser.add_argument("--filler", default=None, help="the bot filling the other seats (Cabanga!: tidy)")
    parser.add_argument("--deal-sets", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0, help="the first deal set's seed")
    parser.add_argument("--deadline", type=float, default=1.0, help="the deadline told to the bots (s)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="every deal set as a JSON line, then the summary")
    args = parser.parse_args()
    if args.deal_sets < 1 or args.workers < 1:
        parser.error("--deal-sets and --workers must be 1 or more")
    game = get_game(args.game)
    seats = args.seats or game.min_seats
    filler = args.filler or FILLER.get(args.game, "easy")
    jobs = [(args.game, args.a, args.b, [filler] * (seats - 2), args.seed + i, args.deadline)
            for i in range(args.deal_sets)]
    scores: list[float] = []
    total = {"a": [0.0, 0.0, 0.0], "b": [0.0, 0.0, 0.0]}
    start = time.monotonic()
    with multiprocessing.Pool(args.workers) if args.workers > 1 else _Serial() as pool:
        for row in pool.imap_unordered(deal_set, jobs):
            scores.append(row["score"])
            for key in total:
                total[key] = [x + y for x, y in zip(total[key], row["cost"][key], strict=True)]
            if args.json:
                print(json.dumps(row), flush=True)
    n = len(scores)
    mean = math.fsum(scores) / n
    low, high = mean_score_interval(scores) or (mean, mean)  # the interval `arena compare` prints
    summary = {"a": args.a, "b": args.b, "deal_sets": n, "mean": round(mean, 3), "low": round(low, 3),
               "high": round(high, 3), "seconds": round(time.monotonic() - start)}
    for key in ("a", "b"):
        cpu, decisions, rollouts = total[key]
        summary[f"{key}_ms_per_decision"] = round(1000 * cpu / max(1, decisions), 1)
        summary[f"{key}_rollouts_per_s"] = round(rollouts / cpu) if cpu else 0
    print(json.dumps(summary), flush=True)


class _Serial:
    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Callable[[Any], Any], jobs: list[Any]) -> Any:
        return map(fn, jobs)


if __name__ == "__main__":
    main()
