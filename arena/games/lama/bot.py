"""The typed base class of a Python bot for L.A.M.A. (docs/bot-guide.md)."""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.bot import Bot
from arena.games.lama.rules import Card, LamaView, TurnAction


class LamaBot(Bot):
    """A L.A.M.A. bot: ``turn`` on each of its turns."""

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        """Return one of ``choices``: a card to play, ``DRAW`` or ``QUIT``."""
        raise NotImplementedError(f"{type(self).__name__} does not play L.A.M.A.")
