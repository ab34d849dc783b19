"""L.A.M.A.'s numeric encoding for training (:mod:`arena.games.encoding`): a :class:`LamaView` as fixed-size
numbers, and every action as an index.

Observation: ``float32``, ``25 + 4 * seats`` values, each 0..1, made from the seat's view alone (G2). Seats are
listed from the observing seat's point of view: ``me``, ``next`` (the seat after it, which plays after it), ``+2``
and so on around the table. Card values are listed L1..L6, LL.

==================  =========  ====================================================================================
field               values     meaning
==================  =========  ====================================================================================
``holds``           7          1 for each card value the seat holds at least once (a hand scores each value once,
                               L9)
``counts``          7          how many cards of each value the seat holds, divided by 8 (a value has 8 copies)
``discard``         7          1 at the value of the discard pile's top card
``draw_pile``       1          cards in the draw pile, divided by 56
``discard_pile``    1          cards in the discard pile, divided by 56
``active``          seats      1 at the seat to play (relative); all 0 once the match is over
``in_round``        seats      1 for each seat still in the round (it has not quit, L6)
``hand_sizes``      seats      cards in each seat's hand, divided by 16 (at most 1)
``totals``          seats      each seat's total, divided by the option ``target`` (at most 1)
``round``           1          the round number, divided by 10 (at most 1)
``over``            1          1 once the match is over
==================  =========  ====================================================================================

Actions: ``Discrete(9)``: 0..5 play ``L1``..``L6``, 6 plays ``LL``, 7 is ``draw`` and 8 ``quit``. L.A.M.A. has no
subset decision.

:class:`LamaStateEncoder` is the batch's fast path (:class:`arena.games.encoding.StateEncoder`): the same
observations made from the match state.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
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
from arena.games.lama.rules import CARDS, COPIES, DECK, DRAW, QUIT, LamaOptions, LamaState, LamaView

HAND_SCALE = 16.0
ROUND_SCALE = 10.0
_VALUES = tuple(card.text for card in CARDS)


class LamaEncoder(Encoder):
    """The encoding of L.A.M.A. matches at one seat count (the module's docstring has the layout)."""

    def __init__(self, options: LamaOptions, seats: int) -> None:
        self.seats = seats
        self.target = float(options.target)
        seat_labels = relative_labels(seats)
        layout = Layout([
            Field("holds", _VALUES, "1 for each value held"),
            Field("counts", _VALUES, "cards of each value held", flags=False, scale=float(COPIES)),
            Field("discard", _VALUES, "the discard pile's top card"),
            Field("draw_pile", ("cards",), "cards in the draw pile", flags=False, scale=float(len(DECK))),
            Field("discard_pile", ("cards",), "cards in the discard pile", flags=False, scale=float(len(DECK))),
            Field("active", seat_labels, "the seat to play"),
            Field("in_round", seat_labels, "the seats still in the round"),
            Field("hand_sizes", seat_labels, "cards in each seat's hand", flags=False, scale=HAND_SCALE),
            Field("totals", seat_labels, "each seat's total", flags=False, scale=self.target),
            Field("round", ("round",), "the round number", flags=False, scale=ROUND_SCALE),
            Field("over", ("over",), "the match is over"),
        ])
        actions = [*_VALUES, DRAW.text, QUIT.text]
        super().__init__(layout, actions, {**{card: i for i, card in enumerate(CARDS)}, DRAW: 7, QUIT: 8})
        self._holds = layout["holds"] - 1  # + a card's value
        self._counts = layout["counts"] - 1
        self._discard = layout["discard"] - 1
        self._piles = (layout["draw_pile"], layout["discard_pile"])
        self._active = layout["active"]
        self._in_round = layout["in_round"]
        self._numbers = list(range(layout["hand_sizes"], layout["round"] + 1))  # sizes, totals, round: end to end
        self._over = layout["over"]
        self._orders = [[(seat + i) % seats for i in range(seats)] for seat in range(seats)]

    def encode(self, view: View, subset: SubsetStep | None, ones: list[int], at: list[int],
               values: list[float]) -> None:
        assert isinstance(view, LamaView)
        seats = self.seats
        seat = view.seat
        order = self._orders[seat]
        counts = [0] * 8
        for card in view.hand:
            counts[card.value] += 1
        held = [v for v in range(1, 8) if counts[v]]
        ones.extend([self._holds + v for v in held])
        at.extend([self._counts + v for v in held])
        values.extend([min(1.0, counts[v] / COPIES) for v in held])
        ones.append(self._discard + view.discard.value)
        if view.active is None:
            ones.append(self._over)
        else:
            ones.append(self._active + (view.active - seat) % seats)
        in_round = view.in_round
        ones.extend([self._in_round + i for i, s in enumerate(order) if in_round[s]])
        at.extend(self._piles)
        at.extend(self._numbers)
        deck = float(len(DECK))
        values.extend((view.draw_size / deck, view.discard_size / deck))
        hand_sizes = view.hand_sizes
        totals = view.totals
        values.extend([min(1.0, hand_sizes[s] / HAND_SCALE) for s in order])
        target = self.target
        values.extend([min(1.0, totals[s] / target) for s in order])
        values.append(min(1.0, view.round / ROUND_SCALE))


class LamaStateEncoder(StateEncoder):
    """:class:`LamaEncoder`'s observations made from the match state (:class:`arena.games.encoding.StateEncoder`):
    what :meth:`LamaState.view` would hold, read where the view reads it (a hand is kept as counts per value).

    The flags are bits: the values held, the discard's top, the seat to play and the seats still in, the last two
    as the observer sees them; the mask is the prompt's (L.A.M.A. builds every prompt ahead, so it is remembered per
    prompt). The numbers (counts, piles, sizes, totals, round) are values the batch scales and places.
    """

    def __init__(self, encoder: LamaEncoder) -> None:
        seats = self.seats = encoder.seats
        layout = encoder.layout
        deck = float(len(DECK))
        super().__init__(encoder, [
            *(Number(layout["counts"] + i, float(COPIES)) for i in range(len(CARDS))),
            Number(layout["draw_pile"], deck, clip=False),
            Number(layout["discard_pile"], deck, clip=False),
            Number(layout["hand_sizes"], HAND_SCALE, seats=seats),
            Number(layout["totals"], encoder.target, seats=seats),
            Number(layout["round"], ROUND_SCALE),
        ])
        self._holds = (0, *(1 << layout["holds"] + i for i in range(len(CARDS))))  # by value, as a hand's counts
        self._discard = (0, *(1 << layout["discard"] + i for i in range(len(CARDS))))  # by the top's value
        active = layout["active"]
        # per observing seat, the active bit and the in_round bit of every seat (listed from the observer)
        self._active = [[1 << active + (other - seat) % seats for other in range(seats)] for seat in range(seats)]
        self._in_round = [tuple(1 << layout["in_round"] + (other - seat) % seats for other in range(seats))
                          for seat in range(seats)]

    def rows(self, state: MatchState, prompts: Sequence[Prompt]) -> list[Row]:
        assert isinstance(state, LamaState)
        discard = state._discard
        top = discard[-1]._value
        tail = [len(state._draw), len(discard), *state._sizes, *state._totals, state._round]
        in_round = state._in_round
        active = state._active
        rows: list[Row] = []
        for prompt in prompts:  # one: L.A.M.A. has no simultaneous decision
            seat = prompt[0]
            counts = state._hands[seat]
            numbers = counts[1:] + tail
            try:
                values: bytes | list[int] = bytes(numbers)
            except ValueError:  # a value beyond 255 (a total past a large target)
                values = numbers
            rows.append((sum(compress(self._holds, counts)) | sum(compress(self._in_round[seat], in_round))
                         | self._discard[top] | self._active[seat][active] | self.mask(prompt), values))
        return rows


class LamaEncoding(GameEncoding):
    """L.A.M.A.'s encodings: one per seat count (the option ``target`` scales the totals)."""

    def encoder(self, options: Any, seats: int) -> LamaEncoder:
        return LamaEncoder(options, seats)

    def state_encoder(self, encoder: Encoder) -> LamaStateEncoder:
        assert isinstance(encoder, LamaEncoder)
        return LamaStateEncoder(encoder)


ENCODING = LamaEncoding()
"""L.A.M.A.'s encoding (the registry reads it)."""
