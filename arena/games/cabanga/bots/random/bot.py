"""A Cabanga! bot that plays a random legal card and throws a random subset of what it may throw.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.random.bot
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.games.cabanga import CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


class RandomCabanga(CabangaBot):
    """Uniformly random: any legal play; each throwable card with probability 1/2."""

    agent = "cabanga-random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        return self.rng.choice(choices)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return [card for card in candidates if self.rng.random() < 0.5]


if __name__ == "__main__":
    run(RandomCabanga())
