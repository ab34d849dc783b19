"""Cabanga!'s numeric encoding for training (:mod:`arena.games.encoding`): a :class:`CabangaView` as fixed-size
numbers, and every action as an index.

Observation: ``float32``, ``373 + 3 * seats`` values, each 0..1, made from the seat's view alone (G2). Seats are
listed from the observing seat's point of view: ``me``, ``next`` (the seat after it, which plays after it), ``+2``
and so on around the table. Cards are listed in card order: R1..R18, B1..B18, P1..P18, Y1..Y18.

==================  =========  ====================================================================================
field               values     meaning
==================  =========  ====================================================================================
``hand``            72         1 for each number card in the seat's hand
``tops``            8 x 18     per pile (R left, R right, B left .. Y right), 1 at the value of its top card (a grey
                               start card counts by its value)
``step``            2          1 at ``play`` or ``throw``: the step pending (both 0 once the match is over)
``previous``        4          1 at the colour played in the previous turn of this round (C9); all 0 on a
                               round's first turn
``throw_row``       4          during a throw: 1 at the row just played, whose gap the candidates lie in (C10)
``candidate``       72         during the seat's throw decision: 1 at the candidate card being decided now
``taken``           72         during the seat's throw decision: 1 at each candidate already chosen to throw
``active``          seats      1 at the seat whose turn it is (relative)
``hand_sizes``      seats      cards in each seat's hand, divided by 16 (at most 1)
``totals``          seats      each seat's penalty total, divided by the option ``target`` (at most 1)
``penalty_pile``    1          cards in the penalty pile, divided by 72
``set_aside``       1          cards set aside (thrown, C12), divided by 72
``round``           1          the round number, divided by 10 (at most 1)
==================  =========  ====================================================================================

Actions: ``Discrete(146)``. Indices 0..143 are the plays in card order, each card onto its left pile then its
right pile (``R1:left``, ``R1:right``, ``R2:left`` .. ``Y18:right``); 144 is ``skip`` and 145 ``take``.

The throw (a subset of the candidates, sealed, C11) is decided one candidate at a time, in the prompt's order
(card order): for each, ``take`` (throw it) or ``skip`` (keep it), with the candidate in ``candidate`` and the
cards chosen so far in ``taken``. Why: every one of the 2^k subsets is one sequence of k binary choices, so a
standard masked policy over one ``Discrete`` space plays it, the mask is exactly {skip, take}, and the
probability of a throw is the product of its choices. Choosing whole subsets would need 2^k actions; adding cards
one by one until a "done" action would reach one subset by k! orders and split its credit among them.

:class:`CabangaStateEncoder` is the batch's fast path (:class:`arena.games.encoding.StateEncoder`): the same
observations made from the match state, a throw's seats at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import add, attrgetter
from typing import Any

from arena.games.base import Action, Decision, MatchState, Prompt, View
from arena.games.cabanga.rules import (
    _PILE_OF,
    NUMBER_CARDS,
    PILE_NAMES,
    ROWS,
    START_CARDS,
    CabangaOptions,
    CabangaState,
    CabangaView,
    Card,
    PlayCard,
    Side,
)
from arena.games.encoding import (
    SKIP,
    TAKE,
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

HAND_SCALE = 16.0
"""Cards in a hand that count as a full hand size (more are possible after draws: clipped)."""
PILE_SCALE = 72.0
ROUND_SCALE = 10.0

PLAYS: tuple[PlayCard, ...] = tuple(PlayCard(card, side) for card in NUMBER_CARDS for side in Side)
"""The plays in action order: each number card onto its left pile, then onto its right pile."""

_CARD_AT: dict[Card, int] = {card: i for i, card in enumerate(NUMBER_CARDS)}
_CARD_LABELS = tuple(card.text for card in NUMBER_CARDS)
_STEPS = {"play": 0, "throw": 1}
_ROW_AT = {colour: i for i, colour in enumerate(ROWS)}
_value = attrgetter("value")


class CabangaEncoder(Encoder):
    """The encoding of Cabanga! matches at one seat count (the module's docstring has the layout)."""

    def __init__(self, options: CabangaOptions, seats: int) -> None:
        rows = tuple(colour.value for colour in ROWS)
        self.seats = seats
        self.target = float(options.target)
        layout = Layout([
            Field("hand", _CARD_LABELS, "1 for each number card in hand"),
            Field("tops", tuple(f"{pile.replace(' ', '-')}={v}" for pile in PILE_NAMES for v in range(1, 19)),
                  "per pile, 1 at its top card's value"),
            Field("step", ("play", "throw"), "the step pending"),
            Field("previous", rows, "the colour played in the previous turn of the round (C9)"),
            Field("throw_row", rows, "during a throw, the row just played"),
            Field("candidate", _CARD_LABELS, "the candidate card being decided in this seat's throw"),
            Field("taken", _CARD_LABELS, "the candidates chosen to throw so far"),
            Field("active", relative_labels(seats), "the seat whose turn it is"),
            Field("hand_sizes", relative_labels(seats), "cards in each seat's hand", flags=False, scale=HAND_SCALE),
            Field("totals", relative_labels(seats), "each seat's penalty total", flags=False, scale=self.target),
            Field("penalty_pile", ("cards",), "cards in the penalty pile", flags=False, scale=PILE_SCALE),
            Field("set_aside", ("cards",), "cards set aside", flags=False, scale=PILE_SCALE),
            Field("round", ("round",), "the round number", flags=False, scale=ROUND_SCALE),
        ])
        actions = [play.text for play in PLAYS] + [SKIP, TAKE]
        super().__init__(layout, actions, {play: i for i, play in enumerate(PLAYS)})
        # positions, looked up rather than computed: an observation is made at every step of every match
        self._hand_at = {card: layout["hand"] + i for card, i in _CARD_AT.items()}.__getitem__
        self._tops = [layout["tops"] + 18 * pile - 1 for pile in range(len(PILE_NAMES))]  # + the top's value
        self._step = layout["step"]
        self._previous = layout["previous"]
        self._throw_row = layout["throw_row"]
        self._candidate_at = {card: layout["candidate"] + i for card, i in _CARD_AT.items()}
        self._taken_at = {card: layout["taken"] + i for card, i in _CARD_AT.items()}
        self._active = layout["active"]
        sizes = layout["hand_sizes"]
        self._numbers = list(range(sizes, layout["round"] + 1))  # hand sizes, totals, piles, round: end to end
        self._orders = [[(seat + i) % seats for i in range(seats)] for seat in range(seats)]

    def encode(self, view: View, subset: SubsetStep | None, ones: list[int], at: list[int],
               values: list[float]) -> None:
        assert isinstance(view, CabangaView)
        ones.extend(map(self._hand_at, view.hand))
        ones.extend(map(add, self._tops, map(_value, view.tops)))
        seats = self.seats
        seat = view.seat
        if view.step is not None:
            ones.append(self._step + _STEPS[view.step])
            ones.append(self._active + (view.active - seat) % seats)
        if view.previous_colour is not None:
            ones.append(self._previous + _ROW_AT[view.previous_colour])
        if view.throw_row is not None:
            ones.append(self._throw_row + _ROW_AT[view.throw_row])
        if subset is not None:
            ones.append(self._candidate_at[subset.candidate])  # type: ignore[index]
            ones.extend(map(self._taken_at.__getitem__, subset.taken))  # type: ignore[arg-type]
        at.extend(self._numbers)
        order = self._orders[seat]
        hand_sizes = view.hand_sizes
        totals = view.totals
        values.extend([min(1.0, hand_sizes[s] / HAND_SCALE) for s in order])
        target = self.target
        values.extend([min(1.0, totals[s] / target) for s in order])
        values.extend((view.penalty_size / PILE_SCALE, view.set_aside_size / PILE_SCALE,
                       min(1.0, view.round / ROUND_SCALE)))


class CabangaStateEncoder(StateEncoder):
    """:class:`CabangaEncoder`'s observations made from the match state (:class:`arena.games.encoding.StateEncoder`):
    what :meth:`CabangaState.view` would hold, read where the view reads it.

    Flags are bits looked up per card (a card is interned and hashed by identity), per pile and top value, per step,
    colour and seat; a hand's bits in a PLAY step carry the mask bits of the card's two plays. The numbers (sizes,
    totals, piles, round) are values the batch scales and places. A throw's seats share all but their hands.
    """

    def __init__(self, encoder: CabangaEncoder) -> None:
        seats = self.seats = encoder.seats
        layout = encoder.layout
        super().__init__(encoder, [
            Number(layout["hand_sizes"], HAND_SCALE, seats=seats),
            Number(layout["totals"], encoder.target, seats=seats),
            Number(layout["penalty_pile"], PILE_SCALE, clip=False),
            Number(layout["set_aside"], PILE_SCALE, clip=False),
            Number(layout["round"], ROUND_SCALE),
        ])
        hand, size = layout["hand"], self.size
        plays = {play: i for i, play in enumerate(PLAYS)}
        self._hand = {card: 1 << hand + i for card, i in _CARD_AT.items()}.__getitem__
        # in a PLAY step the card's hand bit and its two plays' mask bits
        self._plays_of = {card: 1 << hand + i | 1 << size + plays[PlayCard(card, Side.LEFT)]
                          | 1 << size + plays[PlayCard(card, Side.RIGHT)] for card, i in _CARD_AT.items()}
        self._hand_plays = self._plays_of.__getitem__
        self._candidate = {card: 1 << layout["candidate"] + i for card, i in _CARD_AT.items()}
        self._taken = {card: 1 << layout["taken"] + i for card, i in _CARD_AT.items()}
        tops = layout["tops"]
        # per pile, the bit of each card that can top it, by the card's value (a start card's too)
        assert len(PILE_NAMES) == 8  # rows() reads the eight piles one by one
        self._tops = tuple({card: 1 << tops + 18 * pile + card.value - 1 for card in (*NUMBER_CARDS, *START_CARDS)}
                           for pile in range(len(PILE_NAMES)))
        self._step = {"play": 1 << layout["step"], "throw": 1 << layout["step"] + 1}
        # by the colour's id: an Enum member's hash is a Python method, an id's is not
        self._previous = {id(colour): 1 << layout["previous"] + i for colour, i in _ROW_AT.items()}
        self._throw_row = [1 << layout["throw_row"] + i for i in range(len(ROWS))]
        active = layout["active"]
        self._active = [[1 << active + (seat - observer) % seats for seat in range(seats)] for observer in range(seats)]
        self._myself = 1 << active  # the active seat seen by itself
        self._observed = (1 << size) - 1  # a row's observation bits, without its mask's

    def rows(self, state: MatchState, prompts: Sequence[Prompt]) -> list[Row]:
        assert isinstance(state, CabangaState)
        step = state._step
        assert step is not None  # a prompt is pending
        hands = state._hands
        shared = self._top_bits(state) | self._step[step]
        previous = state._previous_colour
        if previous is not None:
            shared |= self._previous[id(previous)]
        if step == "throw":
            shared |= self._throw_row[state._row]
            bits_of = self._hand
        else:
            bits_of = self._hand_plays
        numbers = self._numbers(state)
        try:
            values: bytes | list[int] = bytes(numbers)
        except ValueError:  # a value beyond 255 (a total past a large target)
            values = numbers
        active = state._active
        if len(prompts) == 1:  # a play: no comprehension (a function call of its own in Python 3.11)
            seat = prompts[0][0]
            return [(shared | sum(map(bits_of, hands[seat])) | self._active[seat][active], values)]
        return [(shared | sum(map(bits_of, hands[prompt[0]])) | self._active[prompt[0]][active], values)
                for prompt in prompts]

    follows = True

    def memo(self) -> Followed:
        return Followed()

    def rows_after(self, state: MatchState, prompts: Sequence[Prompt], memo: Any,
                   decisions: Mapping[int, Decision] | None) -> list[Row]:
        """:meth:`rows`, updated from the last call's: after a play, its pile's top and its seat's hand; after a throw,
        the hands of the seats that threw and of the seat that drew. A new round (new hands) or an unknown step is
        made anew."""
        assert isinstance(state, CabangaState) and isinstance(memo, Followed)
        if memo.hands is not state._hands or decisions is None:
            self._anew(state, memo)
        elif memo.step == "play":
            self._played(state, memo, decisions[memo.active][0])  # type: ignore[arg-type]
        else:
            self._thrown(state, memo, decisions)
        step = state._step
        assert step is not None  # a prompt is pending
        memo.step = step
        active = memo.active = state._active
        shared = memo.tops | self._step[step]
        previous = state._previous_colour
        if previous is not None:
            shared |= self._previous[id(previous)]
        words = memo.words
        values = memo.values
        if step == "play":
            return [(shared | words[active] | self._myself, values)]
        shared |= self._throw_row[state._row]
        observed = self._observed
        bits = self._active
        return [(shared | words[prompt[0]] & observed | bits[prompt[0]][active], values) for prompt in prompts]

    def _played(self, state: CabangaState, memo: Followed, play: PlayCard) -> None:
        """Follow a play: its pile's new top (the old one is just below it) and its seat's hand, which lost the card
        and may have drawn (C13)."""
        seat = memo.active
        card = play.card
        pile = _PILE_OF[play]
        tops = self._tops[pile]
        memo.tops ^= tops[state._piles[pile][-2]] ^ tops[card]
        hand = state._hands[seat]
        values = memo.values
        if len(hand) == values[seat] - 1:  # nothing drawn: the hand less the card
            memo.words[seat] -= self._plays_of[card]
            values[seat] -= 1
        else:
            self._drawn(state, memo, seat)

    def _thrown(self, state: CabangaState, memo: Followed, decisions: Mapping[int, Decision]) -> None:
        """Follow a throw: the hands of the seats that threw (C12), and of the seat that played, which drew (C13)."""
        hands = state._hands
        words = memo.words
        values = memo.values
        bits_of = self._hand_plays
        for seat, thrown in decisions.items():
            if thrown:
                hand = hands[seat]
                if len(hand) == values[seat] - len(thrown):  # the hand less the cards thrown
                    words[seat] -= sum(map(bits_of, thrown))  # type: ignore[arg-type]
                else:
                    words[seat] = sum(map(bits_of, hand))
                values[seat] = len(hand)
        self._drawn(state, memo, memo.active)

    def _drawn(self, state: CabangaState, memo: Followed, seat: int) -> None:
        """Follow a draw (C13): the seat's hand anew, the sizes of the hand and of the penalty and set-aside piles."""
        hand = state._hands[seat]
        memo.words[seat] = sum(map(self._hand_plays, hand))
        values = memo.values
        values[seat] = len(hand)
        at = 2 * self.seats
        values[at] = len(state._penalty)
        values[at + 1] = len(state._set_aside)

    def _anew(self, state: CabangaState, memo: Followed) -> None:
        """Fill ``memo`` from ``state``: the round's hands, the tops' bits, every hand's bits, the numbers."""
        memo.hands = hands = state._hands
        memo.tops = self._top_bits(state)
        bits_of = self._hand_plays
        memo.words = [sum(map(bits_of, hand)) for hand in hands]
        numbers = self._numbers(state)
        try:
            memo.values = bytearray(numbers)
        except ValueError:  # a value beyond 255 (a total past a large target)
            memo.values = numbers

    def _top_bits(self, state: CabangaState) -> int:
        """Return the bits of the eight piles' tops (the cards of their one-hots, unrolled)."""
        p0, p1, p2, p3, p4, p5, p6, p7 = state._piles
        t0, t1, t2, t3, t4, t5, t6, t7 = self._tops
        return (t0[p0[-1]] | t1[p1[-1]] | t2[p2[-1]] | t3[p3[-1]] | t4[p4[-1]] | t5[p5[-1]] | t6[p6[-1]]
                | t7[p7[-1]])

    @staticmethod
    def _numbers(state: CabangaState) -> list[int]:
        """Return a row's numbers, in the :class:`Number` entries' order: hand sizes, totals, piles, round."""
        return [*map(len, state._hands), *state._totals, len(state._penalty), len(state._set_aside), state._round]

    def subset_flags(self, candidate: Action) -> int:
        return self._candidate[candidate]  # type: ignore[index]

    def taken_flags(self, candidate: Action) -> int:
        return self._taken[candidate]  # type: ignore[index]


class Followed:
    """What :meth:`CabangaStateEncoder.rows_after` keeps of one match between its steps: the round's hands (the list
    itself: a new round deals new ones), the tops' bits, per seat its hand's bits with its plays' mask bits, the
    numbers of the row (``values``), and the step and active seat they were made at."""

    __slots__ = ("active", "hands", "step", "tops", "values", "words")

    def __init__(self) -> None:
        self.hands: list[list[Card]] | None = None
        self.tops = 0
        self.words: list[int] = []
        self.values: bytearray | list[int] = bytearray()
        self.step = ""
        self.active = 0


class CabangaEncoding(GameEncoding):
    """Cabanga!'s encodings: one per seat count (the option ``target`` scales the totals)."""

    def encoder(self, options: Any, seats: int) -> CabangaEncoder:
        return CabangaEncoder(options, seats)

    def state_encoder(self, encoder: Encoder) -> CabangaStateEncoder:
        assert isinstance(encoder, CabangaEncoder)
        return CabangaStateEncoder(encoder)


ENCODING = CabangaEncoding()
"""Cabanga!'s encoding (the registry reads it)."""
