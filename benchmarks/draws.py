"""How often places are shared, per game and seat count: the draw probability the TrueSkill ratings are given.

Run: python benchmarks/draws.py [--matches N] [--game NAME] [--json]

For each game and seat count, plays N matches (default 4,000) in-process between bundled bots (drawn at random
for each match, repeated when the seats outnumber them) and prints:
  any_shared   the share of matches in which two or more seats shared a place;
  neighbours   the share of neighbouring places in the final order that were shared (seats sorted by total,
               each seat and the next): what TrueSkill's draw margin applies to, between neighbours of its
               chain;
  distinct_neighbours  the same, counting only neighbours that are different bots (a ladder never seats a bot
               twice; copies of one deterministic program tie by construction). Each game's tools.py
               (draw_rates) holds one of these figures, and says which.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random

from bot_fields import BUNDLED, play

from arena.games import get_game


def measure(game_name: str, seats: int, matches: int) -> dict[str, object]:
    rng = random.Random(f"draws/{game_name}/{seats}")
    names = sorted(BUNDLED[game_name])
    shared = neighbours = pairs = distinct_shared = distinct_pairs = 0
    for i in range(matches):
        group = [rng.choice(names) for _ in range(seats)]
        result = play(game_name, [BUNDLED[game_name][n](f"{i}/{s}") for s, n in enumerate(group)], i)
        order = sorted(zip(result, group, strict=True))
        places = [place for place, _ in order]
        shared += len(set(places)) < seats
        neighbours += sum(a == b for a, b in itertools.pairwise(places))
        pairs += seats - 1
        for (a, bot_a), (b, bot_b) in itertools.pairwise(order):
            if bot_a != bot_b:  # copies of one deterministic program tie by construction: not a draw of skill
                distinct_pairs += 1
                distinct_shared += a == b
    return {"game": game_name, "seats": seats, "matches": matches, "any_shared": round(shared / matches, 3),
            "neighbours": round(neighbours / pairs, 3),
            "distinct_neighbours": round(distinct_shared / max(distinct_pairs, 1), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=4000, help="matches per configuration (default 4000)")
    parser.add_argument("--game", action="append", choices=sorted(BUNDLED), help="a game (default: every game)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    for game_name in args.game or sorted(BUNDLED):
        game = get_game(game_name)
        for seats in range(game.min_seats, game.max_seats + 1):
            row = measure(game_name, seats, args.matches)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
