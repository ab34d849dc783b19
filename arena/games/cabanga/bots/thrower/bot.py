"""A weak Cabanga! bot: plays any legal card at random, but never misses a chance to throw.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.thrower.bot
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.games.cabanga import CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


class ThrowerCabanga(CabangaBot):
    """Random plays; every throwable card thrown."""

    agent = "cabanga-thrower"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        return self.rng.choice(choices)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


if __name__ == "__main__":
    run(ThrowerCabanga())
