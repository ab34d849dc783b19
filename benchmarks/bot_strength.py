"""How much the example bots beat the random bot: in-process matches (no gRPC), seeded, per game.

Run: python benchmarks/bot_strength.py [--matches N] [--json]

For each game, each bundled bot plays N 4-seat matches against three copies of the random bot
(the seats rotate so that each bot sits at every seat equally often), and the script prints its
win rate (shared wins count), its mean place and its mean final total next to the random bots'.
A random seat in a 4-seat match wins about 25% of the time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the example bots live in the repo's bots/

from arena.core.referee import referee_match
from arena.games import get_game
from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
from arena.games.cabanga.bots.random.bot import RandomCabanga
from arena.games.cabanga.bots.thrower.bot import ThrowerCabanga
from arena.games.cabanga.bots.tidy.bot import TidyCabanga
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.games.lama.bots.quitter.bot import QuitterLama
from arena.games.lama.bots.random.bot import RandomLama
from arena.games.lama.bots.steady.bot import SteadyLama
from arena.sdk import Bot, local_seat

CONTENDERS: dict[str, tuple[Callable[[int], Bot], list[tuple[str, Callable[[], Bot]]]]] = {
    "cabanga": (RandomCabanga, [("cabanga-greedy", GreedyCabanga), ("cabanga-tidy", TidyCabanga),
                                ("cabanga-thrower", ThrowerCabanga)]),
    "lama": (RandomLama, [("lama-greedy", GreedyLama), ("lama-steady", SteadyLama),
                          ("lama-quitter", QuitterLama)]),
}


def measure(game_name: str, name: str, make: Callable[[], Bot], random_bot: Callable[[int], Bot],
            matches: int, seats: int = 4) -> dict[str, object]:
    """Play ``matches`` seeded matches of ``make()`` against random bots; return its figures and theirs."""
    game = get_game(game_name)
    wins = places = totals = 0.0
    random_wins = random_places = random_totals = 0.0
    for i in range(matches):
        seat = i % seats
        bots = [local_seat(random_bot(1000 * i + s), f"random{s}") for s in range(seats)]
        bots[seat] = local_seat(make(), name)
        record = asyncio.run(referee_match(game, bots, seed=i))
        assert record.result is not None
        for s in range(seats):
            won, place, total = record.result.places[s] == 1, record.result.places[s], record.result.totals[s]
            if s == seat:
                wins, places, totals = wins + won, places + place, totals + total
            else:
                random_wins, random_places = random_wins + won, random_places + place
                random_totals += total
    others = matches * (seats - 1)
    return {"game": game_name, "bot": name, "matches": matches, "win_rate": round(wins / matches, 3),
            "mean_place": round(places / matches, 2), "mean_total": round(totals / matches, 1),
            "random_win_rate": round(random_wins / others, 3), "random_mean_place": round(random_places / others, 2),
            "random_mean_total": round(random_totals / others, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=400, help="matches per bot (default 400)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    for game_name, (random_bot, contenders) in CONTENDERS.items():
        for name, make in contenders:
            row = measure(game_name, name, make, random_bot, args.matches)
            print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main()
