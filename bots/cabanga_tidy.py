"""A middling Cabanga! bot: plays the card that opens the smallest gap for others to throw into, ignoring
the colour-repeat penalty and what its cards are worth; throws everything it may.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m bots.cabanga_tidy
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.cabanga import CabangaView, Card, PlayCard
from arena.sdk import Bot, run
from bots.cabanga_greedy import exposure


class TidyCabanga(Bot):
    """Smallest gap first; every throwable card thrown."""

    agent = "cabanga-tidy"

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        return min(choices, key=lambda play: exposure(view, play))

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


if __name__ == "__main__":
    run(TidyCabanga())
