"""A middling L.A.M.A. bot: plays its lowest legal card, else draws while it may, else quits.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.steady.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.lama import Card, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.sdk import run


class SteadyLama(LamaBot):
    """The first legal choice: the lowest play, else draw, else quit."""

    agent = "lama-steady"

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        return choices[0]


if __name__ == "__main__":
    run(SteadyLama())
