"""A L.A.M.A. bot that takes a random legal action (play, draw or quit) every turn.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.random.bot
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena.games.lama import Card, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.sdk import run


class RandomLama(LamaBot):
    """Uniformly random among the legal actions."""

    agent = "lama-random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        return self.rng.choice(choices)


if __name__ == "__main__":
    run(RandomLama())
