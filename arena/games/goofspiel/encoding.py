"""Goofspiel's numeric encoding for training (:mod:`arena.games.encoding`): a :class:`GoofspielView` as
fixed-size numbers, and every action as an index.

Observation: ``float32``, ``3 * cards + seats * (cards + 1) + 3`` values (``cards``: the option, 13 by default),
each 0..1, made from the seat's view alone (G2). Seats are listed from the observing seat's point of view:
``me``, ``next``, ``+2`` and so on around the table; cards 1..``cards``.

==================  ==============  ===============================================================================
field               values          meaning
==================  ==============  ===============================================================================
``hand``            cards           1 for each card in the seat's hand
``prize``           cards           1 at the prize card turned up (all 0 once the match is over)
``to_come``         cards           1 for each prize still face down (their order is secret)
``pot``             1               the value carried to this trick by ties (GS5), divided by the sum of 1..cards
``bids``            seats x cards   per seat, 1 for each card it has bid this round (every seat's hand is its suit
                                    less these)
``totals``          seats           each seat's total, divided by ``rounds`` times the sum of 1..cards
``trick``           1               the trick number in the round, divided by ``cards``
``round``           1               the round number, divided by the option ``rounds``
==================  ==============  ===============================================================================

Actions: ``Discrete(cards)``: index ``i`` bids the card ``i + 1``. Every seat bids at once, sealed (GS3): an AEC
environment asks the seats one by one, a Parallel one together. Goofspiel has no subset decision.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import View
from arena.games.encoding import Encoder, Field, GameEncoding, Layout, SubsetStep, relative_labels
from arena.games.goofspiel.rules import GoofspielOptions, GoofspielView, suit


class GoofspielEncoder(Encoder):
    """The encoding of Goofspiel matches with one number of cards, at one seat count (the module's docstring has
    the layout)."""

    def __init__(self, options: GoofspielOptions, seats: int) -> None:
        self.seats = seats
        self.cards = cards = options.cards
        self.rounds = options.rounds
        self.prizes = float(cards * (cards + 1) // 2)
        labels = tuple(card.text for card in suit(cards))
        seat_labels = relative_labels(seats)
        layout = Layout([
            Field("hand", labels, "1 for each card in hand"),
            Field("prize", labels, "the prize turned up"),
            Field("to_come", labels, "the prizes still face down"),
            Field("pot", ("value",), "the value carried by ties", flags=False, scale=self.prizes),
            Field("bids", tuple(f"{s}:{c}" for s in seat_labels for c in labels), "per seat, the cards it has bid"),
            Field("totals", seat_labels, "each seat's total", flags=False, scale=self.prizes * self.rounds),
            Field("trick", ("trick",), "the trick number", flags=False, scale=float(cards)),
            Field("round", ("round",), "the round number", flags=False, scale=float(self.rounds)),
        ])
        super().__init__(layout, labels, {card: i for i, card in enumerate(suit(cards))})
        self._hand = layout["hand"] - 1  # + a card's value
        self._prize = layout["prize"] - 1
        self._to_come = layout["to_come"] - 1
        self._pot = layout["pot"]
        self._bids = layout["bids"] - 1
        self._totals = layout["totals"]

    def encode(self, view: View, subset: SubsetStep | None, ones: list[int], at: list[int],
               values: list[float]) -> None:
        assert isinstance(view, GoofspielView)
        seats = self.seats
        cards = self.cards
        hand = self._hand
        ones.extend([hand + card.value for card in view.hand])
        if view.prize is not None:
            ones.append(self._prize + view.prize.value)
        to_come = self._to_come
        ones.extend([to_come + card.value for card in view.to_come])
        order = [(view.seat + i) % seats for i in range(seats)]
        for i, s in enumerate(order):
            bids = self._bids + i * cards
            ones.extend([bids + card.value for card in view.bids[s]])
        at.append(self._pot)
        at.extend(range(self._totals, self._totals + seats + 2))  # the totals, then trick and round
        values.append(min(1.0, view.pot / self.prizes))
        scale = self.prizes * self.rounds
        values.extend([min(1.0, view.totals[s] / scale) for s in order])
        values.extend((min(1.0, view.trick / cards), min(1.0, view.round / self.rounds)))


class GoofspielEncoding(GameEncoding):
    """Goofspiel's encodings: one per number of cards, rounds and seat count."""

    def encoder(self, options: Any, seats: int) -> GoofspielEncoder:
        return GoofspielEncoder(options, seats)


ENCODING = GoofspielEncoding()
"""Goofspiel's encoding (the registry reads it)."""
