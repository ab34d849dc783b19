"""A Goofspiel bot that bids the card of the prize's own value: the classic first strategy.

It always holds that card while it plays so: the prizes are another 1..cards, each turned up once (GS1), and it
spends each of its cards on the prize of the same value. (Only a hand set up otherwise, as ``arena check`` does,
lacks it: then the card nearest in value, the lower one on a tie.)

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.goofspiel.bots.mirror.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.goofspiel import Card, GoofspielView
from arena.games.goofspiel.bot import GoofspielBot
from arena.sdk import run


class MirrorGoofspiel(GoofspielBot):
    """Bids the prize's value; ignores the pot and the other seats."""

    agent = "goofspiel-mirror"

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        target = view.prize.value if view.prize is not None else 0
        return min(choices, key=lambda card: (abs(card.value - target), card.value))


if __name__ == "__main__":
    run(MirrorGoofspiel())
