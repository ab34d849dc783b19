"""Cabanga! for 3 to 6 seats: the rules C1-C17 of ``docs/rules.md`` behind :mod:`arena.games.base`'s interface.

Text forms (the same in logs, replays, the CLI and error messages):

- a card is its colour letter and value: ``R7``, ``B1``, ``P18``, ``Y12``; the grey start cards are ``G1``,
  ``G3``, ``G5``, ``G7``, ``G12``, ``G14``, ``G16``, ``G18`` (:class:`Card`);
- a play is a card and a pile: ``R7:left``, ``R7:right`` (:class:`PlayCard`);
- a throw is any set of cards, ``-`` for none (a thrown card is the :class:`Card` itself).

Steps. A match alternates two kinds of step (:class:`arena.games.base.DecisionKind`):

- PLAY: the active seat picks one :class:`PlayCard`. The choices are the hand in card order (rows R, B, P, Y,
  then value), each card onto its left pile, then onto its right pile. The default, applied to a seat that
  does not answer in time, is the first choice: the lowest card of the hand onto its left pile.
- THROW: after a play that leaves a gap in the row just played (C10), every other seat holding a card that
  may be thrown is asked at once, sealed (C11); the candidates are those cards in card order and the default
  is to throw nothing. When no seat holds such a card there is no THROW step: the turn ends at once.

Draws (C13) happen when the turn ends. The set-aside cards become the new penalty pile at the moment a card
must be drawn from an empty penalty pile.

Events, all public: :class:`RoundStarted`, :class:`Played`, :class:`Threw`, :class:`ThrowsClosed` (after
every play, thrown or not), :class:`Reshuffled`, :class:`Drew`, then :class:`arena.games.base.RoundScored`
and :class:`arena.games.base.MatchOver`. The first round's :class:`RoundStarted` is in
:attr:`CabangaState.events` from the start of the match, before any decision. A seat's view can be rebuilt
from its hand and these events. The one private event, :class:`PenaltyCards` (which cards the drawing seat
got), is in :meth:`CabangaState.private_events`.

Zones (:meth:`CabangaState.zones`): ``hand 0`` .. ``hand N-1`` (card order), ``penalty pile`` (top first),
``set aside`` (in the order the cards were set aside) and the eight piles ``R left``, ``R right``,
``B left`` .. ``Y right`` (start card first, top last).
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, ClassVar, TypeVar, cast

from arena.games.base import (
    Decision,
    DecisionKind,
    Event,
    Game,
    GameError,
    MatchOver,
    MatchState,
    OptionError,
    ParseError,
    Pick,
    Prompt,
    RoundScored,
    View,
    check_known_options,
    parse_int_option,
    places_from_totals,
)

_Interned = TypeVar("_Interned", "Card", "PlayCard")


class Colour(enum.Enum):
    """A card's colour: one of the four rows (C1), in row order, or grey for the start cards (C3)."""

    RED = "R"
    BLUE = "B"
    PURPLE = "P"
    YELLOW = "Y"
    GREY = "G"


ROWS: tuple[Colour, ...] = (Colour.RED, Colour.BLUE, Colour.PURPLE, Colour.YELLOW)
"""The four row colours in row order (C1); grey is no row."""

VALUES = range(1, 19)
"""The values of the number cards of every colour (C2)."""

START_VALUES: tuple[int, ...] = (1, 3, 5, 7, 12, 14, 16, 18)
"""The values of the eight grey start cards (C3)."""

DEFAULT_SYMBOLS: tuple[int, ...] = (3, 2, 2, *(1,) * 12, 2, 2, 3)
"""The penalty symbols of the number cards of value 1..18, the same for every colour (C4, option ``symbols``).

This is the one place the default symbols live: 26 symbols per colour, 104 in the deck.
"""

HAND_SIZE = 8
"""Cards dealt to every seat at the start of a round (C6)."""


class Side(enum.Enum):
    """One of the two piles of a row."""

    LEFT = "left"
    RIGHT = "right"


@functools.total_ordering
@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Card:
    """A Cabanga! card: a number card (a row colour, 1..18) or a grey start card.

    Cards are interned: there is exactly one object per card, so ``Card(Colour.RED, 7)`` and
    ``Card.parse("R7")`` are the same object and equality is identity. Cards sort in card order: rows R, B,
    P, Y, then grey, each by value. A card is also the action of throwing it (C10).
    """

    colour: Colour
    value: int
    text: str = field(init=False, compare=False)
    """The card's text form: colour letter and value, e.g. ``R7`` (kept, as it is read at every step)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", f"{self.colour.value}{self.value}")

    def __new__(cls, colour: Colour, value: int) -> Card:
        """Return the one card of ``colour`` and ``value``. Raises :class:`GameError` if there is none."""
        try:
            return _CARD_BY_KEY[colour, value]
        except KeyError:
            raise GameError(f"there is no Cabanga! card of colour {colour!r} and value {value!r}") from None

    @classmethod
    def parse(cls, text: str) -> Card:
        """Return the card written as ``text`` (``R7``, ``Y18``, ``G12``). Raises :class:`ParseError`."""
        card = _CARD_BY_TEXT.get(text) if isinstance(text, str) else None
        if card is None:
            raise ParseError(
                f"{text!r} is not a Cabanga! card; a card is a colour R, B, P, Y or G (start cards) "
                f"and a value, e.g. 'R7', 'Y18', 'G12'"
            )
        return card

    @property
    def sort_key(self) -> tuple[int, int]:
        """Return ``(row index, value)``; grey start cards come after the four rows."""
        return _ROW_OF.get(self, len(ROWS)), self.value

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return _CARD_INDEX[self] < _CARD_INDEX[other]

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card.parse({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Copies and unpickled cards must be the interned object, since equality is identity.
        return Card, (self.colour, self.value)


def _make(cls: type[_Interned], *fields: Any) -> _Interned:
    """Build one interned value, at import; afterwards the constructor only looks values up."""
    value = object.__new__(cls)
    cls.__init__(value, *fields)
    return value


# Deck order is card order: the number cards row by row, then the start cards.
NUMBER_CARDS: tuple[Card, ...] = tuple(_make(Card, colour, value) for colour in ROWS for value in VALUES)
"""The 72 number cards in card order (C2)."""

START_CARDS: tuple[Card, ...] = tuple(_make(Card, Colour.GREY, value) for value in START_VALUES)
"""The 8 grey start cards in card order (C3)."""

DECK: tuple[Card, ...] = NUMBER_CARDS + START_CARDS
"""All 80 cards in card order."""

_CARD_BY_KEY: dict[tuple[Colour, int], Card] = {(c.colour, c.value): c for c in DECK}
_CARD_BY_TEXT: dict[str, Card] = {c.text: c for c in DECK}
_CARD_INDEX: dict[Card, int] = {c: i for i, c in enumerate(DECK)}
# Sorting hands with a C-level key instead of Card.__lt__ keeps the hot path fast.
_card_order = _CARD_INDEX.__getitem__
# Per row (in ROWS order), its 18 cards by value; and the row index of every number card.
_ROW_CARDS: tuple[tuple[Card, ...], ...] = tuple(
    tuple(c for c in NUMBER_CARDS if c.colour is colour) for colour in ROWS
)
_ROW_OF: dict[Card, int] = {c: row for row, row_cards in enumerate(_ROW_CARDS) for c in row_cards}


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PlayCard:
    """The action of playing a number card onto the left or the right pile of its row (C8).

    Interned like :class:`Card`: one object per card and side; equality is identity. Text form ``R7:left``.
    """

    card: Card
    side: Side
    text: str = field(init=False, compare=False)
    """The play's text form, e.g. ``R7:left`` (kept, as it is read at every step)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", f"{self.card.text}:{self.side.value}")

    def __new__(cls, card: Card, side: Side) -> PlayCard:
        """Return the one play of ``card`` onto ``side``. Raises :class:`GameError` for a start card."""
        try:
            return _PLAY_BY_KEY[card, side]
        except KeyError:
            raise GameError(f"{card!r} onto {side!r} is no Cabanga! play; only number cards are played") from None

    @classmethod
    def parse(cls, text: str) -> PlayCard:
        """Return the play written as ``text`` (``R7:left``, ``R7:right``). Raises :class:`ParseError`."""
        play = _PLAY_BY_TEXT.get(text) if isinstance(text, str) else None
        if play is None:
            raise ParseError(
                f"{text!r} is not a Cabanga! play; a play is a number card, a colon and a side, "
                f"e.g. 'R7:left', 'Y18:right'"
            )
        return play

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"PlayCard.parse({self.text!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return PlayCard, (self.card, self.side)


_PLAY_BY_KEY: dict[tuple[Card, Side], PlayCard] = {
    (card, side): _make(PlayCard, card, side) for card in NUMBER_CARDS for side in Side
}
_PLAY_BY_TEXT: dict[str, PlayCard] = {p.text: p for p in _PLAY_BY_KEY.values()}
# Per card, its two plays in choice order (left, then right): builds a PLAY prompt without allocating plays.
_PLAYS_OF: dict[Card, tuple[PlayCard, PlayCard]] = {
    card: (_PLAY_BY_KEY[card, Side.LEFT], _PLAY_BY_KEY[card, Side.RIGHT]) for card in NUMBER_CARDS
}
# Per play, the index of its pile: row * 2, plus 1 for the right pile.
_PILE_OF: dict[PlayCard, int] = {
    play: 2 * _ROW_OF[play.card] + (play.side is Side.RIGHT) for play in _PLAY_BY_KEY.values()
}

# Per row and pair of top values (low, high), the cards that may be thrown (C10): the row's cards whose value
# lies strictly between. Looked up once per play instead of comparing values card by card.
# (row_cards[v - 1] has the value v, so the values low + 1 .. high - 1 are row_cards[low : high - 1].)
_BETWEEN: tuple[tuple[tuple[frozenset[Card], ...], ...], ...] = tuple(
    tuple(tuple(frozenset(row_cards[low : high - 1]) for high in range(19)) for low in range(19))
    for row_cards in _ROW_CARDS
)

PILE_NAMES: tuple[str, ...] = tuple(f"{colour.value} {side.value}" for colour in ROWS for side in Side)
"""The eight piles in pile order: ``R left``, ``R right``, ``B left`` .. ``Y right``."""


def _row_text(colour: Colour, left: Card, right: Card) -> str:
    return f"{colour.value} {left.value}|{right.value}"


def _texts(cards: Iterable[Card]) -> list[str]:
    return [c.text for c in cards]


# ----------------------------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class CabangaOptions:
    """Cabanga! match options. Build them with :meth:`Cabanga.options`, which checks them.

    ``target``: the match ends after a round in which a total reaches it (C16). ``rounds``: when set, the
    match is exactly that many rounds and ``target`` is ignored. ``symbols``: the penalty symbols of the
    values 1..18, the same for every colour (C4).
    """

    target: int = 18
    rounds: int | None = None
    symbols: tuple[int, ...] = DEFAULT_SYMBOLS

    def to_json(self) -> dict[str, Any]:
        """Return the options as a JSON-ready dict, which :meth:`Cabanga.options` accepts back."""
        return {"target": self.target, "rounds": self.rounds, "symbols": list(self.symbols)}


def _parse_symbols(value: Any) -> tuple[int, ...]:
    """Return the symbols of the values 1..18, given as a sequence or as text. Raises :class:`OptionError`."""
    entries: list[Any]
    if isinstance(value, str):
        entries = value.split(",")
    elif isinstance(value, list | tuple):
        entries = list(value)
    else:
        entries = []
    if len(entries) != len(VALUES):
        raise OptionError(f"option symbols must be {len(VALUES)} numbers, one per value 1..18, got {value!r}")
    symbols = []
    for number, entry in zip(VALUES, entries, strict=True):
        parsed: Any = entry
        if isinstance(entry, str):
            try:
                parsed = int(entry.strip())
            except ValueError:
                parsed = None
        if isinstance(parsed, bool) or not isinstance(parsed, int) or not 1 <= parsed <= 3:
            raise OptionError(
                f"option symbols: the entry for value {number} must be 1, 2 or 3, got {entry!r} in {value!r}"
            )
        symbols.append(parsed)
    return tuple(symbols)


# ------------------------------------------------------------------------------------------------ events


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    """A round was dealt: its starting seat, the start cards on the eight piles, and cards per hand."""

    kind: ClassVar[str] = "round_started"
    round: int
    starter: int
    tops: tuple[Card, ...]  # the eight piles in pile order: R left, R right, B left, .. Y right
    hand_size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "round": self.round,
            "starter": self.starter,
            "tops": _texts(self.tops),
            "hand_size": self.hand_size,
        }

    def describe(self, names: Sequence[str]) -> str:
        rows = ", ".join(_row_text(colour, self.tops[2 * i], self.tops[2 * i + 1]) for i, colour in enumerate(ROWS))
        return f"round {self.round}: {self.hand_size} cards each, {names[self.starter]} starts; rows {rows}"


@dataclass(frozen=True, slots=True)
class Played(Event):
    """A seat played a card onto a pile (C8); ``penalty``: it owes a card for repeating the colour (C9).

    ``row_tops`` are the row's left and right tops after the play.
    """

    kind: ClassVar[str] = "played"
    seat: int
    card: Card
    side: Side
    penalty: bool
    row_tops: tuple[Card, Card]

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "seat": self.seat,
            "card": self.card.text,
            "side": self.side.value,
            "penalty": self.penalty,
            "row_tops": _texts(self.row_tops),
        }

    def describe(self, names: Sequence[str]) -> str:
        row = _row_text(self.card.colour, *self.row_tops)
        owes = f", owes 1 for playing {self.card.colour.value} again" if self.penalty else ""
        return f"{names[self.seat]} plays {self.card.text} on the {self.side.value} pile ({row}){owes}"


@dataclass(frozen=True, slots=True)
class Threw(Event):
    """A seat threw cards (Cabanga!, C10-C12), in card order; they are set aside."""

    kind: ClassVar[str] = "threw"
    seat: int
    cards: tuple[Card, ...]

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "cards": _texts(self.cards)}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} throws {' '.join(_texts(self.cards))} (Cabanga!)"


@dataclass(frozen=True, slots=True)
class Reshuffled(Event):
    """The penalty pile ran out: the ``count`` set-aside cards were shuffled into a new one (C13)."""

    kind: ClassVar[str] = "reshuffled"
    count: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "count": self.count}

    def describe(self, names: Sequence[str]) -> str:
        return f"the penalty pile is empty: {self.count} set-aside cards are shuffled into a new one"


@dataclass(frozen=True, slots=True)
class Drew(Event):
    """The active seat drew ``count`` of the ``owed`` penalty cards; fewer when both piles ran out (C13)."""

    kind: ClassVar[str] = "drew"
    seat: int
    count: int
    owed: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "count": self.count, "owed": self.owed}

    def describe(self, names: Sequence[str]) -> str:
        if self.count == self.owed:
            return f"{names[self.seat]} draws {self.count} penalty card{'s' if self.count != 1 else ''}"
        return f"{names[self.seat]} draws {self.count} of {self.owed} owed penalty cards; no cards are left"


@dataclass(frozen=True, slots=True)
class ThrowsClosed(Event):
    """No more throws after ``seat``'s play: every seat asked has answered or timed out (C11), or none was.

    Sent after every play, whether or not a seat was asked, so that it tells nobody who could have thrown.
    """

    kind: ClassVar[str] = "throws_closed"
    quiet: ClassVar[bool] = True  # after every play: a listing of the match shows the throws themselves
    seat: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat}

    def describe(self, names: Sequence[str]) -> str:
        return f"throws closed after {names[self.seat]}'s play"


@dataclass(frozen=True, slots=True)
class PenaltyCards(Event):
    """Private to ``seat``: the penalty cards it has just drawn (C13), in the order drawn.

    Found in :meth:`CabangaState.private_events`, never in the public log: the public :class:`Drew` only
    counts them.
    """

    kind: ClassVar[str] = "penalty_cards"
    seat: int
    cards: tuple[Card, ...]

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "cards": _texts(self.cards)}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} draws {' '.join(_texts(self.cards)) or 'nothing'} (seen by {names[self.seat]} only)"


_THROWS_CLOSED = tuple(ThrowsClosed(s) for s in range(6))


# -------------------------------------------------------------------------------------------------- view


@dataclass(frozen=True, slots=True)
class CabangaView(View):
    """What one seat may see (G2): its own hand and public information only.

    ``step`` is the kind of step pending (``None`` once the match is over); ``active`` the seat whose turn
    it is. ``tops`` are the eight pile tops in pile order. ``previous_colour`` is the colour played in the
    previous turn of this round (C9), ``None`` on the round's first turn. During a THROW step,
    ``throw_row`` and ``throw_tops`` are the row just played and its left and right tops; otherwise ``None``.
    """

    game: ClassVar[str] = "cabanga"

    seat: int
    round: int
    active: int
    step: DecisionKind | None
    hand: tuple[Card, ...]
    tops: tuple[Card, ...]
    previous_colour: Colour | None
    throw_row: Colour | None
    throw_tops: tuple[Card, Card] | None
    hand_sizes: tuple[int, ...]
    penalty_size: int
    set_aside_size: int
    totals: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "round": self.round,
            "active": self.active,
            "step": self.step,
            "hand": _texts(self.hand),
            "tops": _texts(self.tops),
            "previous_colour": self.previous_colour.value if self.previous_colour is not None else None,
            "throw_row": self.throw_row.value if self.throw_row is not None else None,
            "throw_tops": _texts(self.throw_tops) if self.throw_tops is not None else None,
            "hand_sizes": list(self.hand_sizes),
            "penalty_size": self.penalty_size,
            "set_aside_size": self.set_aside_size,
            "totals": list(self.totals),
        }


# ------------------------------------------------------------------------------------------------- state


class CabangaState(MatchState):
    """One Cabanga! match. Start one with :meth:`Cabanga.new_match`, or arrange one with :meth:`arranged`."""

    game: ClassVar[str] = "cabanga"

    options: CabangaOptions
    _round: int
    _starter: int
    _active: int
    _step: DecisionKind | None
    _row: int  # index into ROWS of the row played this turn: the THROW step and C9 read it
    _owed: int
    _previous_colour: Colour | None
    _hands: list[list[Card]]
    _piles: list[list[Card]]
    _penalty: list[Card]  # top last, so that drawing pops from the end
    _set_aside: list[Card]
    _totals: list[int]
    _pending: tuple[Prompt, ...]
    _window: bool = False  # the step just applied was a play that left a gap in its row (C10)

    def __init__(self, options: CabangaOptions, seats: int, seed: int) -> None:
        """Start a match and deal its first round. Use :meth:`Cabanga.new_match`: it checks the arguments."""
        super().__init__(seats, seed)
        self.options = options
        self._totals = [0] * seats
        self._round = 1
        self._owed = 0
        self._row = -1
        # C7: the first starter is the first thing drawn from the seed, before the deal.
        self._starter = self._rng.randrange(seats)
        self._deal(self._log)

    # --- the interface

    def _copy_into(self, new: Any) -> None:
        """Copy the rules' own state into ``new`` for :meth:`clone`, every mutable part anew."""
        new.options = self.options
        new._round = self._round
        new._starter = self._starter
        new._active = self._active
        new._step = self._step
        new._row = self._row
        new._owed = self._owed
        new._previous_colour = self._previous_colour
        new._hands = [hand[:] for hand in self._hands]
        new._piles = [pile[:] for pile in self._piles]
        new._penalty = self._penalty[:]
        new._set_aside = self._set_aside[:]
        new._totals = self._totals[:]
        new._pending = self._pending
        new._window = self._window

    def pending(self) -> tuple[Prompt, ...]:
        """Return the prompts of this step in seat order (computed once per step); empty once over."""
        return self._pending

    def view(self, seat: int) -> CabangaView:
        """Return what ``seat`` may see now. Raises :class:`GameError` for a seat not at the table."""
        self._check_seat(seat)
        piles = self._piles
        throwing = self._step == "throw"
        row = self._row
        return CabangaView(
            seat=seat,
            round=self._round,
            active=self._active,
            step=self._step,
            hand=tuple(self._hands[seat]),
            tops=tuple(pile[-1] for pile in piles),
            previous_colour=self._previous_colour,
            throw_row=ROWS[row] if throwing else None,
            throw_tops=(piles[2 * row][-1], piles[2 * row + 1][-1]) if throwing else None,
            hand_sizes=tuple(map(len, self._hands)),
            penalty_size=len(self._penalty),
            set_aside_size=len(self._set_aside),
            totals=tuple(self._totals),
        )

    def zones(self) -> dict[str, tuple[Card, ...]]:
        """Return every card location by name: hands, ``penalty pile`` (top first), ``set aside``, piles."""
        zones = {f"hand {seat}": tuple(hand) for seat, hand in enumerate(self._hands)}
        zones["penalty pile"] = tuple(reversed(self._penalty))
        zones["set aside"] = tuple(self._set_aside)
        zones.update(zip(PILE_NAMES, map(tuple, self._piles), strict=True))
        return zones

    @property
    def totals(self) -> tuple[int, ...]:
        """Return every seat's total of penalty symbols over the rounds scored so far (C15)."""
        return tuple(self._totals)

    # --- applying decisions; the prompts were checked, so nothing below can fail half-way

    def opens_window(self) -> bool:
        """Return whether the play just applied left a gap in its row: a throw may follow (C10), asked or not."""
        return self._window

    def in_window(self) -> bool:
        """Return whether the pending step is a throw (C11)."""
        return self._step == "throw"

    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        events: list[Event] = []
        self._window = False
        if self._step == "play":
            self._play(cast(PlayCard, decisions[self._active][0]), events)
        else:
            self._throw(decisions, events)
        return events

    def _play(self, play: PlayCard, events: list[Event]) -> None:
        seat = self._active
        card = play.card
        self._hands[seat].remove(card)
        pile = _PILE_OF[play]
        self._piles[pile].append(card)
        row = pile >> 1
        colour = card.colour
        penalty = colour is self._previous_colour  # C9; None on the first turn of a round
        self._owed = 1 if penalty else 0
        self._row = row
        left = self._piles[2 * row][-1]
        right = self._piles[2 * row + 1][-1]
        events.append(Played(seat, card, play.side, penalty, (left, right)))
        # C10: only this row; cards of its colour strictly between its two tops.
        a, b = left.value, right.value
        between = _BETWEEN[row][a][b] if a < b else _BETWEEN[row][b][a]
        self._window = bool(between)
        if between:
            prompts = []
            for other, hand in enumerate(self._hands):
                if other != seat and not between.isdisjoint(hand):
                    # Hands are in card order, so the candidates are too.
                    eligible = tuple([card for card in hand if card in between])
                    prompts.append(Prompt(other, "throw", Pick.SUBSET, eligible, ()))
            if prompts:
                self._step = "throw"
                self._pending = tuple(prompts)
                return
        events.append(_THROWS_CLOSED[seat])
        self._end_turn(events)

    def _throw(self, decisions: Mapping[int, Decision], events: list[Event]) -> None:
        # C11: every answer is in before anything is revealed; C12: thrown cards are set aside.
        for prompt in self._pending:
            thrown = decisions[prompt.seat]
            if thrown:
                cards = tuple(sorted(cast(tuple[Card, ...], thrown), key=_card_order))
                hand = self._hands[prompt.seat]
                for card in cards:
                    hand.remove(card)
                self._set_aside.extend(cards)
                self._owed += len(cards)
                events.append(Threw(prompt.seat, cards))
        events.append(_THROWS_CLOSED[self._active])
        self._end_turn(events)

    def _end_turn(self, events: list[Event]) -> None:
        seat = self._active
        owed = self._owed
        if owed:
            # C13: draw what is owed; reshuffle the set-aside cards when the penalty pile is empty.
            hand = self._hands[seat]
            penalty = self._penalty
            drawn = 0
            first = len(hand)
            while drawn < owed:
                if not penalty:
                    if not self._set_aside:
                        break
                    penalty = self._penalty = self._set_aside
                    self._set_aside = []
                    self._rng.shuffle(penalty)
                    events.append(Reshuffled(len(penalty)))
                hand.append(penalty.pop())
                drawn += 1
            new = tuple(hand[first:])
            hand.sort(key=_card_order)
            events.append(Drew(seat, drawn, owed))
            if new:  # private, right after the public Drew: apply() appends ``events`` to the log
                self._private[seat].append((len(self._log) + len(events), PenaltyCards(seat, new)))
        self._previous_colour = ROWS[self._row]
        if all(self._hands):
            self._active = (seat + 1) % self.seats
            self._step = "play"
            self._pending = (self._play_prompt(),)
        else:
            self._end_round(events)  # C14

    def _end_round(self, events: list[Event]) -> None:
        symbols = self.options.symbols
        points = tuple(sum(symbols[c.value - 1] for c in hand) for hand in self._hands)  # C15
        self._totals = [total + p for total, p in zip(self._totals, points, strict=True)]
        totals = tuple(self._totals)
        events.append(RoundScored(self._round, points, totals))
        rounds = self.options.rounds
        # C16: with a fixed number of rounds the target does not count.
        over = self._round >= rounds if rounds is not None else max(totals) >= self.options.target
        if over:
            events.append(MatchOver(totals, places_from_totals(totals)))  # C17
            self._step = None
            self._pending = ()
        else:
            self._round += 1
            self._starter = (self._starter + 1) % self.seats  # C7
            self._deal(events)

    def _deal(self, events: list[Event]) -> None:
        """Set up round ``self._round`` from freshly shuffled cards (C5, C6) and announce it."""
        starts = list(START_CARDS)
        self._rng.shuffle(starts)
        numbers = list(NUMBER_CARDS)
        self._rng.shuffle(numbers)
        self._piles = [[card] for card in starts]
        self._hands = [sorted(numbers[HAND_SIZE * s : HAND_SIZE * (s + 1)], key=_card_order) for s in range(self.seats)]
        self._penalty = numbers[HAND_SIZE * self.seats :]
        self._set_aside = []
        self._active = self._starter
        self._previous_colour = None
        self._step = "play"
        self._pending = (self._play_prompt(),)
        events.append(RoundStarted(self._round, self._starter, tuple(starts), HAND_SIZE))

    def _play_prompt(self) -> Prompt:
        choices = tuple(chain.from_iterable(map(_PLAYS_OF.__getitem__, self._hands[self._active])))
        return Prompt(self._active, "play", Pick.ONE, choices, (choices[0],))

    # --- hand-set states for tests

    @classmethod
    def arranged(
        cls,
        hands: Sequence[Iterable[Card | str]],
        *,
        tops: Sequence[Card | str] = START_CARDS,
        penalty: Iterable[Card | str] | None = None,
        set_aside: Iterable[Card | str] = (),
        active: int = 0,
        starter: int | None = None,
        previous_colour: Colour | None = None,
        totals: Sequence[int] | None = None,
        round: int = 1,
        options: CabangaOptions | None = None,
        seed: int = 0,
    ) -> CabangaState:
        """Return a match at the start of ``active``'s turn, set up by hand (for tests, of rules and of bots).

        ``hands`` has one non-empty hand per seat (its length is the seat count); ``tops`` the eight pile
        tops in pile order (default: the start cards in card order), each a start card or a card of the
        row's colour; ``penalty`` the penalty pile, top first. Cards may be given as text (``"R7"``).
        Every card must be in at most one place; the cards not placed go where they cannot matter: the
        start cards to the bottom of the piles with a number card on top, the number cards under a number
        card on top of their row, or, when ``penalty`` is ``None``, onto the penalty pile in card order
        (the lowest card on top). ``starter`` (default ``active``) is the seat that started this round, so
        that the next round starts at the seat after it (C7). ``previous_colour`` is the colour played in
        the previous turn (C9), ``None`` for the first turn of a round. ``seed`` seeds the shuffles to come.
        The events log starts empty.

        Raises :class:`GameError` (:class:`OptionError` for a bad seat count) when the arrangement is not a
        possible Cabanga! position.
        """
        options = options if options is not None else CABANGA.options()
        seats = len(hands)
        if not Cabanga.min_seats <= seats <= Cabanga.max_seats:
            raise OptionError(f"Cabanga! is played by 3 to 6 seats, not {seats!r} (one hand per seat)")
        where: dict[Card, str] = {}

        def place(items: Iterable[Card | str], zone: str, *, numbers_only: bool = True) -> list[Card]:
            cards = []
            for item in items:
                card = item if isinstance(item, Card) else Card.parse(item)
                if card in where:
                    raise GameError(f"card {card.text} is placed twice: in {where[card]} and in {zone}")
                if numbers_only and card.colour is Colour.GREY:
                    raise GameError(f"start card {card.text} cannot be in {zone}; it stays on a pile")
                where[card] = zone
                cards.append(card)
            return cards

        if isinstance(tops, str) or len(tops) != len(PILE_NAMES):
            raise GameError(f"tops must be 8 cards, one per pile ({', '.join(PILE_NAMES)}), got {tops!r}")
        top_cards = [place([top], name, numbers_only=False)[0] for name, top in zip(PILE_NAMES, tops, strict=True)]
        for name, row_colour, top in zip(PILE_NAMES, (c for c in ROWS for _ in Side), top_cards, strict=True):
            if top.colour not in (Colour.GREY, row_colour):
                raise GameError(f"{top.text} cannot be on top of the {name} pile")
        hand_lists = [sorted(place(hand, f"hand {seat}"), key=_card_order) for seat, hand in enumerate(hands)]
        for seat, hand in enumerate(hand_lists):
            if not hand:
                raise GameError(f"hand {seat} is empty; a round ends as soon as a hand is empty (C14)")
        aside = place(set_aside, "set aside")
        pile_order = place(penalty, "penalty pile") if penalty is not None else None
        rest = [card for card in NUMBER_CARDS if card not in where]
        if pile_order is None:
            pile_order, rest = rest, []
        piles = [[top] for top in top_cards]
        spare_starts = [card for card in START_CARDS if card not in where]
        for pile in piles:
            if pile[0].colour is not Colour.GREY:
                pile.insert(0, spare_starts.pop(0))  # as many spares as piles with a number card on top
        for card in rest:
            row = _ROW_OF[card]
            under = [p for p in piles[2 * row : 2 * row + 2] if p[-1].colour is not Colour.GREY]
            if not under:
                raise GameError(
                    f"card {card.text} is placed nowhere and the {card.colour.value} row has no number card "
                    f"on top to lie under; put it in a hand, the penalty pile or set aside"
                )
            under[0].insert(-1, card)

        if not (isinstance(active, int) and 0 <= active < seats):
            raise GameError(f"active must be a seat 0..{seats - 1}, got {active!r}")
        starter = active if starter is None else starter
        if not (isinstance(starter, int) and 0 <= starter < seats):
            raise GameError(f"starter must be a seat 0..{seats - 1}, got {starter!r}")
        if previous_colour is not None and previous_colour not in ROWS:
            raise GameError(f"previous_colour must be a row colour or None, got {previous_colour!r}")
        totals = [0] * seats if totals is None else list(totals)
        if len(totals) != seats or any(not isinstance(t, int) or t < 0 for t in totals):
            raise GameError(f"totals must be {seats} integers >= 0, got {totals!r}")
        if not (isinstance(round, int) and round >= 1):
            raise GameError(f"round must be an integer >= 1, got {round!r}")
        if options.rounds is not None and round > options.rounds:
            raise GameError(f"round {round!r} is past the last round {options.rounds} of the match")
        if options.rounds is None and max(totals) >= options.target:
            raise GameError(f"totals {totals!r} reach the target {options.target}: the match would be over")

        state = cls.__new__(cls)
        MatchState.__init__(state, seats, seed)
        state.options = options
        state._round = round
        state._starter = starter
        state._active = active
        state._row = -1
        state._owed = 0
        state._previous_colour = previous_colour
        state._hands = hand_lists
        state._piles = piles
        state._penalty = pile_order[::-1]
        state._set_aside = aside
        state._totals = totals
        state._step = "play"
        state._pending = (state._play_prompt(),)
        return state


# -------------------------------------------------------------------------------------------------- game


class Cabanga(Game):
    """The game Cabanga! (3 to 6 seats)."""

    name: ClassVar[str] = "cabanga"
    title: ClassVar[str] = "Cabanga!"
    min_seats: ClassVar[int] = 3
    max_seats: ClassVar[int] = 6
    kinds: ClassVar[tuple[str, ...]] = ("play", "throw")
    hidden_order: ClassVar[tuple[str, ...]] = ("penalty pile",)

    def options(self, raw: Mapping[str, Any] | None = None) -> CabangaOptions:
        """Return checked options from ``raw``: ``target`` (>= 1), ``rounds`` (>= 1 or None), ``symbols``.

        ``symbols`` is 18 numbers 1..3 (a list or comma-separated text), the symbols of the values 1..18
        of every colour. Raises :class:`OptionError` naming the bad option and value.
        """
        raw = raw if raw is not None else {}
        check_known_options(self.name, raw, ("target", "rounds", "symbols"))
        defaults = CabangaOptions()
        target = parse_int_option("target", raw.get("target", defaults.target), minimum=1)
        rounds = raw.get("rounds", defaults.rounds)
        if rounds is not None:
            rounds = parse_int_option("rounds", rounds, minimum=1)
        symbols = _parse_symbols(raw.get("symbols", defaults.symbols))
        return CabangaOptions(target=target, rounds=rounds, symbols=symbols)

    def _new(self, options: Any, seats: int, seed: int) -> CabangaState:
        if not isinstance(options, CabangaOptions):
            raise OptionError(f"Cabanga! needs CabangaOptions, got {options!r}")
        return CabangaState(options, seats, seed)

    def deck(self, options: Any = None, seats: int | None = None) -> tuple[Card, ...]:
        """Return all 80 cards in card order: the 72 number cards, then the 8 start cards (at every seat count)."""
        return DECK

    def parse_card(self, text: str) -> Card:
        """Return the card written as ``text``. Raises :class:`ParseError`."""
        return Card.parse(text)


CABANGA = Cabanga()
"""The Cabanga! game."""
