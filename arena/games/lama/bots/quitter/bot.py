"""A weak L.A.M.A. bot: plays a card when it can (its highest), and quits as soon as it cannot.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.quitter.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.lama import QUIT, Card, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.sdk import run


class QuitterLama(LamaBot):
    """Highest legal play, else quit."""

    agent = "lama-quitter"

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        plays = [c for c in choices if isinstance(c, Card)]
        return plays[-1] if plays else QUIT


if __name__ == "__main__":
    run(QuitterLama())
