"""An outside author's afternoon Cabanga! bot: card tracking, penalty avoidance and an eye on the round's end (a
benchmark opponent for the house bots, not shipped).

Like the tracker (``cabanga_tracker.py``) it counts the unseen cards inside the gap a play would open, times the
chance another seat holds one, and avoids repeating the colour. It also watches the hand sizes: when a seat is
close to going out (two cards or fewer), the round may end any moment, so it sheds its costliest cards first;
when it is close itself, it prefers plays that open no gap at all. It throws the cards it may when they are
costly or when a throw empties its hand; a cheap card inside a narrow gap it keeps, to play later without
opening anything.

Run by the arena: python benchmarks/outside_bots/cabanga_closer.py
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.base import Event
from arena.games.cabanga import ROWS, CabangaView, Card, PlayCard, Played, RoundStarted, Side, Threw
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run

SYMBOLS = (3, 2, 2, *(1,) * 12, 2, 2, 3)


class Closer(CabangaBot):
    agent = "outside-closer"

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
        ending = min(n for s, n in enumerate(view.hand_sizes) if s != view.seat) <= 2
        shed = 0.8 if ending else 0.2
        going_out = len(view.hand) <= 2

        def cost(play: PlayCard) -> float:
            colour = play.card.colour
            row = ROWS.index(colour)
            left, right = view.tops[2 * row].value, view.tops[2 * row + 1].value
            a, b = (play.card.value, right) if play.side is Side.LEFT else (left, play.card.value)
            low, high = min(a, b), max(a, b)
            out = sum(1 for v in range(low + 1, high) if (colour.value, v) not in mine | self.seen)
            repeat = 1.0 if colour is view.previous_colour else 0.0
            weight = 2.5 if going_out else 1.5
            return out * holds * weight + repeat - shed * SYMBOLS[play.card.value - 1]

        return min(choices, key=cost)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        if len(candidates) == len(view.hand):
            return candidates  # the round ends with an empty hand
        assert view.throw_tops is not None
        narrow = abs(view.throw_tops[0].value - view.throw_tops[1].value) <= 3
        return [c for c in candidates if not (narrow and SYMBOLS[c.value - 1] == 1)]


if __name__ == "__main__":
    run(Closer())
