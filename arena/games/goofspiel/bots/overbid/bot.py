"""A Goofspiel bot that bids one above the prize's value, and its 1 for the top prize: the answer to a seat
that bids the prize's value (arena/games/goofspiel/bots/mirror), which it beats at every trick but one.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.goofspiel.bots.overbid.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.goofspiel import Card, GoofspielView
from arena.games.goofspiel.bot import GoofspielBot
from arena.sdk import run


class OverbidGoofspiel(GoofspielBot):
    """Bids the lowest card above the prize's value; when it holds none, its lowest card (a prize it gives up)."""

    agent = "goofspiel-overbid"

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        target = view.prize.value if view.prize is not None else 0
        above = [card for card in choices if card.value > target]
        return above[0] if above else choices[0]  # choices come lowest first


if __name__ == "__main__":
    run(OverbidGoofspiel())
