"""A middling L.A.M.A. bot: plays its lowest legal card, else draws while it may, else quits.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m bots.lama_steady.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.lama import Card, LamaView, TurnAction
from arena.sdk import Bot, run


class SteadyLama(Bot):
    """The first legal choice: the lowest play, else draw, else quit."""

    agent = "lama-steady"

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        return choices[0]


if __name__ == "__main__":
    run(SteadyLama())
