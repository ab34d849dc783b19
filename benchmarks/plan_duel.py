"""Rollout plan against rollout plan, no search: which simple plan plays a game better, measured before a search
is given it as its rollouts' plan (the screens of docs/figures.md, "The house levels' strength").

Run: python benchmarks/plan_duel.py --game lama --a keep_top@10 --b greedy@10 [--seats 2] [--deal-sets 2000]
                                    [--seed 10000]
     python benchmarks/plan_duel.py --game cabanga --a shed@0.6 --b greedy [--seats 3] [--deal-sets 1500]

A plan is ``NAME`` or ``NAME@NUMBER``:
- L.A.M.A.: ``greedy@Q``, the greedy plan (the value held most of, the lower on a tie) quitting
  rather than drawing at Q points or less (:func:`arena.games.lama.search.quit_at_policy`; the bundled greedy bot
  is ``greedy@4``); ``keep_top@Q``, the same but a card of the top's value whenever it may
  (``quit_at_policy(Q, keep_top=True)``, the hard bot's own rollouts).
- Cabanga!: ``greedy``, the bundled greedy plan
  (:func:`arena.games.cabanga.search.greedy_policy`); ``shed@W``, the same but each penalty symbol of the card
  played takes W off its cost (the least of colour + gap x factor - W x symbols), so costly cards go sooner.

The seats beyond two (``--seats``, default the game's least: L.A.M.A. 2, Cabanga! 3) are played by the greedy plan
(in L.A.M.A. at B's quitting bar). Each deal set is one seed with the seats rotated (every plan in every seat),
every match played to its end by the real rules engine (:func:`arena.games.search.simulate`). It prints A's mean
pairwise score against B per deal set with its 95% interval (1 ahead, 1/2 level, 0 behind), as `arena compare`
counts them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.games import get_game
from arena.games.base import Decision, MatchState, Prompt
from arena.games.search import Policy, simulate
from arena.ladder.estimate import mean_score_interval


def lama_plan(spec: str) -> Policy:
    """Return the L.A.M.A. plan of ``spec`` (``greedy@Q`` or ``keep_top@Q``)."""
    from arena.games.lama.search import quit_at_policy

    name, _, number = spec.partition("@")
    if name not in ("greedy", "keep_top") or not number.isdigit():
        raise SystemExit(f"no L.A.M.A. plan {spec!r}: greedy@Q or keep_top@Q, Q the quitting bar in points")
    return quit_at_policy(int(number), keep_top=name == "keep_top")


def cabanga_plan(spec: str) -> Policy:
    """Return the Cabanga! plan of ``spec`` (``greedy`` or ``shed@W``)."""
    from arena.games.cabanga import CabangaState, PlayCard
    from arena.games.cabanga.search import _play_cost, greedy_policy

    name, _, number = spec.partition("@")
    if name == "greedy" and not number:
        return greedy_policy
    try:
        weight = float(number)
    except ValueError:
        weight = -1.0
    if name != "shed" or weight < 0.0:
        raise SystemExit(f"no Cabanga! plan {spec!r}: greedy or shed@W, W >= 0 the weight of a symbol shed")

    def shed(state: MatchState, prompt: Prompt) -> Decision:
        if prompt.kind == "throw":
            return prompt.choices
        assert isinstance(state, CabangaState)
        hands = state._hands
        hand = hands[prompt.seat]
        tops = [pile[-1] for pile in state._piles]
        unseen = max(1, 72 - len(hand) - len(state._set_aside))
        factor = min(1.0, (sum(map(len, hands)) - len(hand)) / unseen * 2)
        best: Any = None
        best_key = (0.0, 0)
        for play in prompt.choices:
            assert isinstance(play, PlayCard)
            cost, minus_symbols = _play_cost(play, hand, tops, state._previous_colour, factor, state.options.symbols)
            key = (cost + weight * minus_symbols, minus_symbols)  # the most symbols on a tie, as the greedy plan
            if best is None or key < best_key:
                best, best_key = play, key
        return (best,)

    return shed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="lama", choices=("lama", "cabanga"))
    parser.add_argument("--a", required=True, help="the first plan")
    parser.add_argument("--b", required=True, help="the second plan")
    parser.add_argument("--seats", type=int, default=None, help="seats (default: the game's least)")
    parser.add_argument("--deal-sets", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=10_000, help="the first deal set's seed")
    args = parser.parse_args()
    if args.deal_sets < 1:
        parser.error("--deal-sets must be 1 or more")
    make = lama_plan if args.game == "lama" else cabanga_plan
    game = get_game(args.game)
    seats = args.seats or game.min_seats
    if not game.min_seats <= seats <= game.max_seats:
        raise SystemExit(f"{args.game} is played by {game.min_seats} to {game.max_seats} seats, not {seats}")
    filler = make("greedy" if args.game == "cabanga" else "greedy@" + args.b.partition("@")[2])
    lineup = [make(args.a), make(args.b), *[filler] * (seats - 2)]
    n = len(lineup)
    scores = []
    for i in range(args.deal_sets):
        score = 0.0
        for r in range(n):
            policies = lineup[r:] + lineup[:r]  # seat s plays lineup[(s + r) % n]
            world = game.new_match(n, args.seed + i)
            simulate(world, policies, rounds=None)
            totals = world.totals
            a, b = totals[(0 - r) % n], totals[(1 - r) % n]
            score += 1.0 if a < b else 0.5 if a == b else 0.0
        scores.append(score / n)
    mean = math.fsum(scores) / len(scores)
    low, high = mean_score_interval(scores) or (mean, mean)  # the interval `arena compare` prints
    print(json.dumps({"game": args.game, "a": args.a, "b": args.b, "deal_sets": len(scores), "mean": round(mean, 3),
                      "low": round(low, 3), "high": round(high, 3)}))


if __name__ == "__main__":
    main()
