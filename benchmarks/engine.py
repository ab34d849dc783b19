"""Whole matches per second with random players through the game interface, per game and seat count.

Run: python benchmarks/engine.py [--seconds S] [--json]

One core, one process: each configuration plays random matches (seeded) for about S seconds of CPU time,
going through ``pending()``, ``random_decision`` and ``apply()`` exactly as a referee would, and prints
matches per CPU second and the mean cost of one decision (one prompted seat's answer) in microseconds.
CPU time (``time.process_time``), not wall time: on a shared machine it does not count the time other
processes held the core.
Targets (issue 2): Cabanga! 4 seats >= 400 matches/s, L.A.M.A. 4 seats >= 2,000 matches/s.
With --bare, also a bare Cabanga! loop without the interface (the yardstick for what the interface costs).
"""

from __future__ import annotations

import argparse
import json
import random
import time

from arena.games import game_names, get_game
from arena.games.base import Game, random_decision


def bench(game: Game, seats: int, seconds: float) -> dict[str, object]:
    """Play seeded random matches for about ``seconds`` and return the figures."""
    rng = random.Random(f"bench/{game.name}/{seats}")
    options = game.options()
    matches = decisions = steps = 0
    seed = 0
    start = time.process_time()
    deadline = start + seconds
    while True:
        state = game.new_match(seats, seed, options)
        while not state.over:
            prompts = state.pending()
            state.apply({p.seat: random_decision(p, rng) for p in prompts})
            decisions += len(prompts)
            steps += 1
        matches += 1
        seed += 1
        if matches % 16 == 0 and time.process_time() >= deadline:
            break
    elapsed = time.process_time() - start
    return {
        "game": game.name,
        "seats": seats,
        "matches": matches,
        "matches_per_s": round(matches / elapsed, 1),
        "us_per_decision": round(elapsed / decisions * 1e6, 2),
        "decisions_per_match": round(decisions / matches, 1),
        "steps_per_match": round(steps / matches, 1),
    }


SYMBOLS = (3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3)


def bare_cabanga_match(seed: int, seats: int = 4, target: int = 18) -> list[int]:
    """One Cabanga! match with random players, played by a bare loop of plain lists and tuples.

    The same rules as arena.games.cabanga (random plays, each throwable card thrown with probability 1/2,
    draws with reshuffles, scoring) but no interface: no prompts, views, events, checks or interned cards.
    It is the yardstick for what the interface costs.
    """
    rng = random.Random(seed)
    totals = [0] * seats
    starter = rng.randrange(seats)
    while True:
        starts = [1, 3, 5, 7, 12, 14, 16, 18]
        rng.shuffle(starts)
        deck = [(colour, value) for colour in range(4) for value in range(1, 19)]
        rng.shuffle(deck)
        hands = [deck[8 * s: 8 * s + 8] for s in range(seats)]
        penalty, aside = deck[8 * seats:], []
        tops = [[starts[2 * r], starts[2 * r + 1]] for r in range(4)]
        active, previous = starter, -1
        while True:
            hand = hands[active]
            colour, value = hand.pop(rng.randrange(len(hand)))
            tops[colour][rng.randrange(2)] = value
            owed = 1 if colour == previous else 0
            low, high = sorted(tops[colour])
            for other in range(seats):
                if other != active:
                    thrown = [c for c in hands[other] if c[0] == colour and low < c[1] < high and rng.random() < 0.5]
                    for card in thrown:
                        hands[other].remove(card)
                    aside += thrown
                    owed += len(thrown)
            for _ in range(owed):
                if not penalty:
                    if not aside:
                        break
                    penalty, aside = aside, []
                    rng.shuffle(penalty)
                hand.append(penalty.pop())
            previous = colour
            if not all(hands):
                break
            active = (active + 1) % seats
        for s in range(seats):
            totals[s] += sum(SYMBOLS[v - 1] for _, v in hands[s])
        starter = (starter + 1) % seats
        if max(totals) >= target:
            return totals


def bench_bare(seconds: float) -> dict[str, object]:
    """Play bare-loop Cabanga! matches for about ``seconds`` of CPU time and return the figures."""
    matches = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        bare_cabanga_match(matches)
        matches += 1
    return {"game": "cabanga-bare-loop", "seats": 4, "matches": matches,
            "matches_per_s": round(matches / (time.process_time() - start), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per configuration (default 2)")
    parser.add_argument("--game", choices=game_names(), help="only this game")
    parser.add_argument("--seats", type=int, help="only this seat count")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--bare", action="store_true",
                        help="also time a bare Cabanga! loop without the interface, the yardstick for its cost")
    args = parser.parse_args()
    if not args.json:
        print(f"{'game':8} {'seats':>5} {'matches/s':>10} {'us/decision':>12} {'decisions/match':>16}")
    for game in map(get_game, game_names()):
        if args.game and game.name != args.game:
            continue
        for seats in range(game.min_seats, game.max_seats + 1):
            if args.seats and seats != args.seats:
                continue
            row = bench(game, seats, args.seconds)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['game']:8} {row['seats']:>5} {row['matches_per_s']:>10} "
                      f"{row['us_per_decision']:>12} {row['decisions_per_match']:>16}", flush=True)

    if args.bare:
        row = bench_bare(args.seconds)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"{row['game']:8} {row['seats']:>5} {row['matches_per_s']:>10}", flush=True)


if __name__ == "__main__":
    main()
