"""The typed base class of a Python bot for Cabanga! (docs/bot-guide.md)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.games.bot import Bot
from arena.games.cabanga.rules import CabangaView, Card, PlayCard


class CabangaBot(Bot):
    """A Cabanga! bot: ``play`` on every turn, ``throw`` when a play leaves a gap where it holds a card."""

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        """Return one of ``choices``: a card from hand onto the left or right pile of its row (``R7:left``)."""
        raise NotImplementedError(f"{type(self).__name__} does not play Cabanga!")

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Iterable[Card]:
        """Return the candidate cards to throw, sealed (any of them; none by default)."""
        return ()
