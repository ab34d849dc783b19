"""Tiny Duel's numeric encoding for training: the part a plug-in game writes to be trained on (arena.train).

Observation: ``9 + 2 * seats`` values, each 0..1, from the seat's view alone. Seats are listed ``me``, ``next``..

==========  ======  ===========================================================================
field       values  meaning
==========  ======  ===========================================================================
``hand``    9       how many cards of each value 1..9 the seat holds, divided by the seat count
``active``  seats   1 at the seat to lay (relative); all 0 once the match is over
``laid``    seats   the sum each seat has laid, divided by 9 times the option ``cards``
==========  ======  ===========================================================================

Actions: ``Discrete(9)``: index ``i`` lays a card of value ``i + 1``.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import View
from arena.games.encoding import Encoder, Field, GameEncoding, Layout, SubsetStep, relative_labels

from .rules import CARDS, TinyOptions, TinyView


class TinyEncoder(Encoder):
    def __init__(self, options: TinyOptions, seats: int) -> None:
        self.seats = seats
        self.scale = 9.0 * options.cards
        labels = tuple(card.text for card in CARDS)
        layout = Layout([
            Field("hand", labels, "cards of each value held", flags=False, scale=float(seats)),
            Field("active", relative_labels(seats), "the seat to lay"),
            Field("laid", relative_labels(seats), "the sum each seat has laid", flags=False, scale=self.scale),
        ])
        super().__init__(layout, labels, {card: i for i, card in enumerate(CARDS)})

    def encode(self, view: View, subset: SubsetStep | None, ones: list[int], at: list[int],
               values: list[float]) -> None:
        assert isinstance(view, TinyView)
        seats = self.seats
        order = [(view.seat + i) % seats for i in range(seats)]
        counts = [0] * 10
        for card in view.hand:
            counts[card.value] += 1
        held = [v for v in range(1, 10) if counts[v]]
        at.extend([v - 1 for v in held])
        values.extend([counts[v] / seats for v in held])
        if view.active is not None:
            ones.append(9 + (view.active - view.seat) % seats)
        laid = 9 + seats
        at.extend(range(laid, laid + seats))
        values.extend([min(1.0, view.laid[s] / self.scale) for s in order])


class TinyEncoding(GameEncoding):
    def encoder(self, options: Any, seats: int) -> TinyEncoder:
        return TinyEncoder(options, seats)


ENCODING = TinyEncoding()
