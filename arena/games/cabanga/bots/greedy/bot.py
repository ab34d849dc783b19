"""A Cabanga! bot with a simple plan: leave small gaps, avoid repeating a colour, shed costly cards,
and throw everything it may.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.greedy.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.cabanga import DEFAULT_SYMBOLS, ROWS, CabangaView, Card, PlayCard, Side
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


def exposure(view: CabangaView, play: PlayCard) -> int:
    """Return how many cards the others could throw after ``play``: the gap it opens, less our own cards."""
    row = ROWS.index(play.card.colour)
    left, right = view.tops[2 * row], view.tops[2 * row + 1]
    a, b = (play.card.value, right.value) if play.side is Side.LEFT else (left.value, play.card.value)
    low, high = min(a, b), max(a, b)
    ours = sum(1 for c in view.hand if c.colour is play.card.colour and low < c.value < high and c != play.card)
    return max(0, high - low - 1 - ours)


class GreedyCabanga(CabangaBot):
    """Minimises the expected penalty of each play; throws every card it can."""

    agent = "cabanga-greedy"

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        def cost(play: PlayCard) -> tuple[float, int]:
            repeat = 1.0 if play.card.colour is view.previous_colour else 0.0
            # each card the others may throw costs one draw, and more of them hold some when hands are big
            others = sum(n for s, n in enumerate(view.hand_sizes) if s != view.seat)
            unseen = max(1, 72 - len(view.hand) - view.set_aside_size)
            throws = exposure(view, play) * min(1.0, others / unseen * 2)
            return repeat + throws, -DEFAULT_SYMBOLS[play.card.value - 1]

        return min(choices, key=cost)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates  # every thrown card leaves our hand and costs the active player a draw


if __name__ == "__main__":
    run(GreedyCabanga())
