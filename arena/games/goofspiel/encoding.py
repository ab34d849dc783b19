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

:class:`GoofspielStateEncoder` is the batch's fast path (:class:`arena.games.encoding.StateEncoder`): the same
observations made from the match state, every seat of a trick at once, sharing what the seats share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arena.games.base import MatchState, Prompt, View
from arena.games.encoding import (
    Encoder,
    Field,
    GameEncoding,
    Layout,
    Number,
    Row,
    StateEncoder,
    SubsetStep,
    relative_labels,
)
from arena.games.goofspiel.rules import MAX_CARDS, GoofspielOptions, GoofspielState, GoofspielView, suit, value_of


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


class GoofspielStateEncoder(StateEncoder):
    """:class:`GoofspielEncoder`'s observations made from the match state (:class:`arena.games.encoding.StateEncoder`):
    what :meth:`GoofspielState.view` would hold, read where the view reads it.

    A set of cards is a bit mask (bit ``v - 1`` for the card ``v``), shifted to its field; every seat's bids are one
    mask of ``seats * cards`` bits, rotated to each observer. A seat's bids this round are its suit less its hand
    (the rules move a bid card from the one to the other; both are public, GS9), so the hands are read once, for
    the hands, the legal bids and the bids, and a trick reads them, the prize, the prizes to come, the pot and the
    totals once for all the seats it prompts.
    """

    def __init__(self, encoder: GoofspielEncoder) -> None:
        seats = self.seats = encoder.seats
        cards = self.cards = encoder.cards
        layout = encoder.layout
        super().__init__(encoder, [
            Number(layout["totals"], encoder.prizes * encoder.rounds, seats=seats),
            Number(layout["pot"], encoder.prizes),
            Number(layout["trick"], float(cards)),
            Number(layout["round"], float(encoder.rounds)),
        ])
        every = suit(MAX_CARDS)
        self._bit = {id(card): 1 << card.value - 1 for card in every}.__getitem__  # cards are interned
        self._prize = {id(card): 1 << layout["prize"] + card.value - 1 for card in every}
        self._hand = layout["hand"]
        self._to_come = layout["to_come"]
        self._bids = layout["bids"]
        self._suit = (1 << cards) - 1
        self._bits = seats * cards
        self._all = (1 << self._bits) - 1

    def rows(self, state: MatchState, prompts: Sequence[Prompt]) -> list[Row]:
        assert isinstance(state, GoofspielState)
        cards = self.cards
        bit = self._bit
        full = self._suit
        hands = [sum(map(bit, map(id, hand))) for hand in state._hands]
        bids = 0  # seat s's bids at bits s * cards ..
        for shift, held in zip(range(0, self._bits, cards), hands, strict=True):
            bids |= (full ^ held) << shift
        bids |= bids << self._bits  # twice over: each observer's rotation is one slice of it
        shared = sum(map(bit, map(id, state._deck))) << self._to_come
        prize = state._prize
        if prize is not None:
            shared |= self._prize[id(prize)]
        pot = state._pot
        numbers = [*state._totals, value_of(pot) if pot else 0, state._trick, state._round]
        try:
            values: bytes | list[int] = bytes(numbers)
        except ValueError:  # a value beyond 255 (totals over many rounds)
            values = numbers
        every = self._all
        at_hand, at_bids, at_mask = self._hand, self._bids, self.size
        rows: list[Row] = []
        for prompt in prompts:
            seat = prompt[0]
            held = hands[seat]  # also the legal bids: action v - 1 bids the card v
            rows.append((shared | held << at_hand | (bids >> seat * cards & every) << at_bids | held << at_mask,
                         values))
        return rows


class GoofspielEncoding(GameEncoding):
    """Goofspiel's encodings: one per number of cards, rounds and seat count."""

    def encoder(self, options: Any, seats: int) -> GoofspielEncoder:
        return GoofspielEncoder(options, seats)

    def state_encoder(self, encoder: Encoder) -> GoofspielStateEncoder:
        assert isinstance(encoder, GoofspielEncoder)
        return GoofspielStateEncoder(encoder)


ENCODING = GoofspielEncoding()
"""Goofspiel's encoding (the registry reads it)."""
