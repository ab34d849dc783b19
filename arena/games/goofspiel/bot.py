"""The typed base class of a Python bot for Goofspiel (docs/bot-guide.md)."""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.bot import Bot
from arena.games.goofspiel.rules import Card, GoofspielView


class GoofspielBot(Bot):
    """A Goofspiel bot: ``bid`` at every trick, sealed, at the same time as every other seat."""

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        """Return one of ``choices`` (the cards of the hand, lowest first): the card to bid for ``view.prize``."""
        raise NotImplementedError(f"{type(self).__name__} does not play Goofspiel")
