"""An outside author's afternoon Cabanga! bot: card tracking and penalty avoidance (a benchmark opponent for the
house bots, not shipped).

It tracks every card it has seen (played this round, thrown and set aside) and so knows, for each gap a play
would open, how many of the cards inside are still out in other hands or the penalty pile. A play's cost is the
draws it may bring (each unseen card inside the gap, times the chance another seat holds it), one for repeating
the colour before, less a little for shedding a costly card; the least cost wins. It throws every card it may:
a thrown card leaves its hand and costs the player a draw.

Run by the arena: python benchmarks/outside_bots/cabanga_tracker.py
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.base import Event
from arena.games.cabanga import ROWS, CabangaView, Card, PlayCard, Played, RoundStarted, Side, Threw
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run

SYMBOLS = (3, 2, 2, *(1,) * 12, 2, 2, 3)


class Tracker(CabangaBot):
    agent = "outside-tracker"

    def __init__(self) -> None:
        self.seen: set[tuple[str, int]] = set()

    def on_events(self, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, RoundStarted):
                self.seen = set()
            elif isinstance(event, Played):
                self.seen.add((event.card.colour.value, event.card.value))
            elif isinstance(event, Threw):
                self.seen.update((c.colour.value, c.value) for c in event.cards)

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        mine = {(c.colour.value, c.value) for c in view.hand}
        others = sum(n for s, n in enumerate(view.hand_sizes) if s != view.seat)
        unseen = max(1, 72 - len(self.seen) - len(mine))
        holds = min(1.0, others / unseen)

        def cost(play: PlayCard) -> float:
            colour = play.card.colour
            row = ROWS.index(colour)
            left, right = view.tops[2 * row].value, view.tops[2 * row + 1].value
            a, b = (play.card.value, right) if play.side is Side.LEFT else (left, play.card.value)
            low, high = min(a, b), max(a, b)
            out = sum(1 for v in range(low + 1, high) if (colour.value, v) not in mine | self.seen)
            repeat = 1.0 if colour is view.previous_colour else 0.0
            return out * holds * 1.5 + repeat - 0.3 * SYMBOLS[play.card.value - 1]

        return min(choices, key=cost)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


if __name__ == "__main__":
    run(Tracker())
