"""A middling Cabanga! bot: plays the card that opens the smallest gap for others to throw into, ignoring
the colour-repeat penalty and what its cards are worth; throws everything it may.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.tidy.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.cabanga import ROWS, CabangaView, Card, PlayCard, Side
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


# a bot is a folder of its own, and its jail shows it no other: this is a copy of the greedy bot's function
def exposure(view: CabangaView, play: PlayCard) -> int:
    """Return how many cards the others could throw after ``play``: the gap it opens, less our own cards."""
    row = ROWS.index(play.card.colour)
    left, right = view.tops[2 * row], view.tops[2 * row + 1]
    a, b = (play.card.value, right.value) if play.side is Side.LEFT else (left.value, play.card.value)
    low, high = min(a, b), max(a, b)
    ours = sum(1 for c in view.hand if c.colour is play.card.colour and low < c.value < high and c != play.card)
    return max(0, high - low - 1 - ours)


class TidyCabanga(CabangaBot):
    """Smallest gap first; every throwable card thrown."""

    agent = "cabanga-tidy"

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        return min(choices, key=lambda play: exposure(view, play))

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


if __name__ == "__main__":
    run(TidyCabanga())
