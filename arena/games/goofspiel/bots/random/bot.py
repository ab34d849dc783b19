"""A Goofspiel bot that bids a random card of its hand every trick.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.goofspiel.bots.random.bot
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.games.goofspiel import Card, GoofspielView
from arena.games.goofspiel.bot import GoofspielBot
from arena.sdk import run


class RandomGoofspiel(GoofspielBot):
    """Uniformly random among the cards of the hand; the same seed bids the same cards."""

    agent = "goofspiel-random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        return self.rng.choice(choices)


if __name__ == "__main__":
    run(RandomGoofspiel())
