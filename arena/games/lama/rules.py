"""L.A.M.A.: the rules (docs/rules.md L1-L12, G1, G2) behind the game interface of :mod:`arena.games.base`.

Cards are :class:`Card` values written ``L1``..``L6`` and ``LL`` (the llama); there are seven card objects,
built once, so cards compare by identity. A card is also an action: "play this card". The two other actions
are :data:`DRAW` (``draw``) and :data:`QUIT` (``quit``).

Every step is one seat's turn (:attr:`"turn"`, :attr:`Pick.ONE`). Its choices come in this order:

1. the distinct cards of the seat's hand that may be played (L4), lowest first, the llama last;
2. :data:`DRAW`, when the draw pile is not empty and another seat is still in the round (L5);
3. :data:`QUIT`, always (L6, L7).

The default decision (for a seat that does not answer in time or answers wrongly) is the first choice:
the lowest legal play, else draw, else quit.

Events, all public: :class:`RoundStarted`, :class:`Played`, :class:`Drew` (never the card drawn),
:class:`Quit`, then the base :class:`~arena.games.base.RoundScored` and
:class:`~arena.games.base.MatchOver`. A new match's log already holds the first :class:`RoundStarted`.
A seat's :class:`LamaView` can be rebuilt from its own hand and these events.

Zones (for invariant checks): ``hand 0``..``hand N-1`` (a seat that quit keeps its laid-down cards there),
``draw pile`` (top first) and ``discard pile`` (bottom first).

:meth:`LamaState.arranged` builds a state from hand-set cards, for tests of the rules and of bots.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, ClassVar, Final

from arena.games.base import (
    Action,
    Decision,
    Event,
    Game,
    GameError,
    MatchOver,
    MatchState,
    OptionError,
    Options,
    ParseError,
    Pick,
    Prompt,
    RoundScored,
    View,
    check_known_options,
    parse_int_option,
    places_from_totals,
)

LLAMA_VALUE: Final = 7
"""The llama's :attr:`Card.value`: it follows a 6 and precedes a 1 (L4)."""

LLAMA_POINTS: Final = 10
"""What a llama left in hand scores, once per hand (L9)."""

COPIES: Final = 8
"""How many cards of each value, and llamas, the deck holds (L1)."""

HAND_SIZE: Final = 6
"""How many cards each seat is dealt at the start of a round (L2)."""

CHIP_BIG: Final = 10
"""A seat that empties its hand gives back a 10 chip when its total is at least 10 (L10) ..."""

CHIP_SMALL: Final = 1
"""... else a 1 chip when its total is at least 1."""

DEFAULT_TARGET: Final = 40
"""The default of option ``target`` (L12)."""

CLIMB_ONE: Final = "one"
"""Option ``climb``: play the same value or exactly one higher (L4, the default)."""
CLIMB_ANY: Final = "any"
"""Option ``climb``: play the same value or any higher one (the rulebook's literal words)."""
CLIMBS: Final = (CLIMB_ONE, CLIMB_ANY)


class Card:
    """One L.A.M.A. card: a value 1..6, or the llama (value :data:`LLAMA_VALUE`).

    Cards are interned: ``Card(3) is Card.parse("L3")``. They are immutable, order 1..6 then the llama,
    and are written ``L1``..``L6`` and ``LL``. A card is also the action "play this card".
    """

    __slots__ = ("_points", "_text", "_value")

    _value: int
    _text: str
    _points: int

    def __new__(cls, value: int) -> Card:
        """Return the card of ``value`` (1..6, or 7 for the llama). Raises :class:`GameError` otherwise."""
        if type(value) is int and 1 <= value <= LLAMA_VALUE:
            return _CARDS[value - 1]
        raise GameError(f"a L.A.M.A. card value is 1..{LLAMA_VALUE} (7 for the llama), not {value!r}")

    @classmethod
    def _make(cls, value: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "_value", value)
        object.__setattr__(card, "_text", "LL" if value == LLAMA_VALUE else f"L{value}")
        object.__setattr__(card, "_points", LLAMA_POINTS if value == LLAMA_VALUE else value)
        return card

    @classmethod
    def parse(cls, text: str) -> Card:
        """Return the card written as ``text`` (``L1``..``L6``, ``LL``). Raises :class:`ParseError`."""
        try:
            return _CARDS_BY_TEXT[text]
        except (KeyError, TypeError):
            raise ParseError(f"{text!r} is not a L.A.M.A. card; the cards are L1..L6 and LL") from None

    @property
    def value(self) -> int:
        """Return the card's value: 1..6, or :data:`LLAMA_VALUE` (7) for the llama."""
        return self._value

    @property
    def points(self) -> int:
        """Return what the card scores when left in hand: its value, or 10 for the llama (L9)."""
        return self._points

    @property
    def text(self) -> str:
        """Return the card's text form: ``L1``..``L6``, or ``LL`` for the llama."""
        return self._text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Card.parse({self._text!r})"

    # A hash of the value, not of the object's address: sets of cards iterate in the same order in every
    # process (G1). Equality stays identity, which agrees with it because cards are interned.
    def __hash__(self) -> int:
        return self._value

    def __lt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._value < other._value

    def __le__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._value <= other._value

    def __gt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._value > other._value

    def __ge__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self._value >= other._value

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r} of a Card")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r} of a Card")

    # Copies and unpickled cards must be the interned objects, or identity comparison would break.
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (Card.parse, (self._text,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self


_CARDS: Final = tuple(Card._make(v) for v in range(1, LLAMA_VALUE + 1))
_CARDS_BY_TEXT: Final = {c.text: c for c in _CARDS}

CARDS: Final[tuple[Card, ...]] = _CARDS
"""The seven distinct cards in order: L1..L6, LL."""

LLAMA: Final = _CARDS[LLAMA_VALUE - 1]
"""The llama card, ``LL``."""

DECK: Final[tuple[Card, ...]] = tuple(c for c in _CARDS for _ in range(COPIES))
"""The 56 cards of the game (L1), sorted."""


class TurnAction(enum.Enum):
    """The two actions of a turn that are not a card: draw (L5) and quit (L6)."""

    DRAW = "draw"
    QUIT = "quit"

    @property
    def text(self) -> str:
        """Return the action's text form: ``draw`` or ``quit``."""
        return self.value

    def __str__(self) -> str:
        return self.value


DRAW: Final = TurnAction.DRAW
"""Draw the top card of the draw pile (L5)."""

QUIT: Final = TurnAction.QUIT
"""Quit the round (L6)."""


def parse_action(text: str) -> Card | TurnAction:
    """Return the action written as ``text``: a card (play it), ``draw`` or ``quit``.

    Raises :class:`ParseError` for anything else.
    """
    if text == "draw":
        return DRAW
    if text == "quit":
        return QUIT
    try:
        return _CARDS_BY_TEXT[text]
    except (KeyError, TypeError):
        raise ParseError(f"{text!r} is not a L.A.M.A. action; the actions are L1..L6, LL, draw, quit") from None


def _playable_values(top: int) -> tuple[int, int]:
    """Return the two values that may follow ``top`` (L4), ascending."""
    if top == LLAMA_VALUE:
        return (1, LLAMA_VALUE)
    return (top, top + 1)


# For each discard top value the two playable values, ascending (L4); indexed by value, 0 is never a top.
_PLAYABLE_VALUES: Final = ((0, 0), *(_playable_values(top) for top in range(1, LLAMA_VALUE + 1)))

_MAX_SEATS: Final = 6


def _pending_key(seat: int, top: int, mask: int, can_draw: bool) -> int:
    return ((seat * LLAMA_VALUE + top - 1) * 4 + mask) * 2 + can_draw


def _build_pending() -> tuple[tuple[Prompt], ...]:
    """Return every possible pending tuple, indexed by :func:`_pending_key`.

    There are only 6 seats x 7 tops x 4 subsets of the two playable cards x draw allowed or not, so each
    prompt is built once here and a step only looks its prompt up.
    """
    pending: list[tuple[Prompt]] = []
    for seat in range(_MAX_SEATS):
        for top in range(1, LLAMA_VALUE + 1):
            low, high = (_CARDS[v - 1] for v in _PLAYABLE_VALUES[top])
            for mask in range(4):
                for can_draw in (False, True):
                    assert len(pending) == _pending_key(seat, top, mask, can_draw)
                    choices: list[Action] = []
                    if mask & 1:
                        choices.append(low)
                    if mask & 2:
                        choices.append(high)
                    if can_draw:
                        choices.append(DRAW)
                    choices.append(QUIT)
                    pending.append((Prompt(seat, "turn", Pick.ONE, tuple(choices), (choices[0],)),))
    return tuple(pending)


_PENDING: Final = _build_pending()


def _hand_points(counts: Sequence[int]) -> int:
    """Return what a hand given as counts per value scores (L9): each distinct value once, a llama 10."""
    return sum(_CARDS[v - 1].points for v in range(1, LLAMA_VALUE + 1) if counts[v])


def _chip_return(total: int) -> int:
    """Return the change of the total of a seat that emptied its hand (L10): -10, -1 or 0."""
    if total >= CHIP_BIG:
        return -CHIP_BIG
    if total >= CHIP_SMALL:
        return -CHIP_SMALL
    return 0


# ---------------------------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class LamaOptions:
    """Validated L.A.M.A. match options.

    ``target``: the match ends after a round in which a total reaches it (L12). ``rounds``: when set, the
    match is exactly that many rounds and ``target`` is ignored (L12, C16).
    Constructing it raises :class:`OptionError` for a bad value.
    """

    target: int = DEFAULT_TARGET
    rounds: int | None = None
    climb: str = CLIMB_ONE
    """L4: ``one`` (the default), a card of the same value or exactly one higher; ``any``, the rulebook's
    literal words, the same value or any higher one (after a 6 still only a 6 or a llama)."""

    def __post_init__(self) -> None:
        if self.climb not in CLIMBS:
            raise OptionError(f"option climb must be one of {', '.join(CLIMBS)}, got {self.climb!r}")
        if isinstance(self.target, bool) or not isinstance(self.target, int) or self.target < 1:
            raise OptionError(f"option target must be an integer >= 1, got {self.target!r}")
        if self.rounds is not None and (
            isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1
        ):
            raise OptionError(f"option rounds must be an integer >= 1 or unset, got {self.rounds!r}")

    def to_json(self) -> dict[str, Any]:
        """Return the options as a JSON-ready dict that :meth:`Lama.options` reads back."""
        data: dict[str, Any] = {"target": self.target, "rounds": self.rounds}
        if self.climb != CLIMB_ONE:  # left out at its default: the options of older replays and ladders stay equal
            data["climb"] = self.climb
        return data


# ----------------------------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    """A round was dealt: ``hand_size`` cards each, ``discard`` face up, ``starter`` to play (L2, L3, L11)."""

    kind: ClassVar[str] = "round_started"
    round: int
    starter: int
    discard: Card
    hand_size: int

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "round": self.round,
            "starter": self.starter,
            "discard": self.discard.text,
            "hand_size": self.hand_size,
        }

    def describe(self, names: Sequence[str]) -> str:
        return f"round {self.round}: {self.hand_size} cards each, {self.discard} face up, {names[self.starter]} starts"


@dataclass(frozen=True, slots=True)
class Played(Event):
    """A seat played ``card`` onto the discard pile (L4)."""

    kind: ClassVar[str] = "played"
    seat: int
    card: Card

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "card": self.card.text}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} plays {self.card}"


@dataclass(frozen=True, slots=True)
class Drew(Event):
    """A seat drew the top card of the draw pile (L5). Which card is not public."""

    kind: ClassVar[str] = "drew"
    seat: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} draws a card"


@dataclass(frozen=True, slots=True)
class Quit(Event):
    """A seat quit the round, laying its hand down face down (L6)."""

    kind: ClassVar[str] = "quit"
    seat: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} quits"


@dataclass(frozen=True, slots=True)
class DrewCard(Event):
    """Private to ``seat``: the card it has just drawn (L5). In :meth:`LamaState.private_events` only."""

    kind: ClassVar[str] = "drew_card"
    seat: int
    card: Card

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "card": self.card.text}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} draws {self.card} (seen by {names[self.seat]} only)"


# Events are immutable, so the few possible Played, Drew and Quit events are built once and shared.
_PLAYED: Final = tuple(tuple(Played(s, c) for c in (_CARDS[0], *_CARDS)) for s in range(_MAX_SEATS))
_DREW: Final = tuple(Drew(s) for s in range(_MAX_SEATS))
_QUIT: Final = tuple(Quit(s) for s in range(_MAX_SEATS))
_DREW_CARD: Final = tuple(tuple(DrewCard(s, c) for c in (_CARDS[0], *_CARDS)) for s in range(_MAX_SEATS))


# ------------------------------------------------------------------------------------------------- view


@dataclass(frozen=True, slots=True)
class LamaView(View):
    """What one seat may see (G2): its own hand and the public state of the table.

    ``active`` is the seat to play, ``None`` once the match is over. ``in_round[s]`` is false for a seat
    that has quit this round. ``discard`` is the top of the discard pile.
    """

    game: ClassVar[str] = "lama"

    seat: int
    round: int
    active: int | None
    hand: tuple[Card, ...]
    discard: Card
    discard_size: int
    draw_size: int
    hand_sizes: tuple[int, ...]
    in_round: tuple[bool, ...]
    totals: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "round": self.round,
            "active": self.active,
            "hand": [c.text for c in self.hand],
            "discard": self.discard.text,
            "discard_size": self.discard_size,
            "draw_size": self.draw_size,
            "hand_sizes": list(self.hand_sizes),
            "in_round": list(self.in_round),
            "totals": list(self.totals),
        }


# ------------------------------------------------------------------------------------------------ state


class LamaState(MatchState):
    """One L.A.M.A. match. Create it with :meth:`Lama.new_match`, or :meth:`arranged` for tests.

    Hands are kept as counts per value (index 1..7), the draw pile as a list whose last card is the top.
    """

    game: ClassVar[str] = "lama"

    _options: LamaOptions
    _round: int
    _totals: list[int]
    _hands: list[list[int]]
    _sizes: list[int]
    _in_round: list[bool]
    _left: int
    _draw: list[Card]
    _discard: list[Card]
    _top: int
    _active: int
    _pending: tuple[Prompt, ...]

    def __init__(self, seats: int, seed: int, options: LamaOptions | None = None) -> None:
        """Deal the first round; :meth:`Lama.new_match` is the usual way in.

        Raises :class:`OptionError` for an unsupported seat count or a bad seed.
        """
        _check_seats_and_seed(seats, seed)
        super().__init__(seats, seed)
        self._options = options if options is not None else LamaOptions()
        self._round = 0
        self._totals = [0] * seats
        starter = self._rng.randrange(seats)  # L3
        self._log.append(self._start_round(starter))

    @classmethod
    def arranged(
        cls,
        *,
        hands: Sequence[Iterable[Card | str] | str],
        discard: Iterable[Card | str] | str,
        draw: Iterable[Card | str] | str | None = None,
        active: int = 0,
        quit: Iterable[int] = (),
        totals: Sequence[int] | None = None,
        round: int = 1,
        options: LamaOptions | None = None,
        seed: int = 0,
    ) -> LamaState:
        """Return a match in the middle of a round, with hand-set cards (for tests of rules and bots).

        ``hands``: one list of cards per seat (2..6 seats). ``discard``: the discard pile, bottom first, so
        its last card is the top. ``draw``: the draw pile, top first; ``None`` puts the cards of the deck
        not in hands or discard there, the lowest on top. ``active``: the seat to play. ``quit``: seats that
        have quit this round. ``totals``: running totals before this round (default 0). ``round``: this
        round's number. ``seed``: the randomness for later rounds. Cards may be given as :class:`Card` or
        text, and each of ``hands``, ``discard`` and ``draw`` may also be one text such as ``"L1 L1 LL"``.
        The log starts empty: the history before the arrangement is not known.

        Raises :class:`GameError` (:class:`ParseError` for bad card text, :class:`OptionError` for a bad
        seat count) when the cards are not exactly the 56-card deck or the arrangement cannot happen.
        """
        seats = len(hands)
        _check_seats_and_seed(seats, seed)
        hand_cards = [_as_cards(hand) for hand in hands]
        discard_cards = _as_cards(discard)
        if not discard_cards:
            raise GameError("the discard pile cannot be empty: a card is turned face up at the deal (L2)")
        for s, hand in enumerate(hand_cards):
            if not hand:
                raise GameError(f"hand {s} is empty: a round ends as soon as a hand is emptied (L8)")
        if draw is None:
            rest = Counter(DECK)
            rest.subtract(c for hand in hand_cards for c in hand)
            rest.subtract(discard_cards)
            draw_cards = [c for c in _CARDS for _ in range(max(rest[c], 0))]
        else:
            draw_cards = _as_cards(draw)
        _check_deck([c for hand in hand_cards for c in hand] + discard_cards + draw_cards)
        quit_seats = set(quit)
        for s in quit_seats:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < seats:
                raise GameError(f"quit seat {s!r} is not at this {seats}-seat table")
        if isinstance(active, bool) or not isinstance(active, int) or not 0 <= active < seats:
            raise GameError(f"active seat {active!r} is not at this {seats}-seat table")
        if active in quit_seats:
            raise GameError(f"active seat {active} has quit this round (L6)")
        totals_list = [0] * seats if totals is None else list(totals)
        if len(totals_list) != seats or any(
            isinstance(t, bool) or not isinstance(t, int) or t < 0 for t in totals_list
        ):
            raise GameError(f"totals must be {seats} integers >= 0, got {totals!r}")
        opts = options if options is not None else LamaOptions()
        if isinstance(round, bool) or not isinstance(round, int) or round < 1:
            raise GameError(f"round must be an integer >= 1, got {round!r}")
        if opts.rounds is not None and round > opts.rounds:
            raise GameError(f"round {round} is past the last round {opts.rounds} of these options")

        state = cls.__new__(cls)
        MatchState.__init__(state, seats, seed)
        state._options = opts
        state._round = round
        state._totals = totals_list
        state._hands = [_counts(hand) for hand in hand_cards]
        state._sizes = [len(hand) for hand in hand_cards]
        state._in_round = [s not in quit_seats for s in range(seats)]
        state._left = seats - len(quit_seats)
        state._draw = draw_cards[::-1]
        state._discard = discard_cards
        state._top = discard_cards[-1].value
        state._active = active
        state._refresh_pending()
        return state

    # --- the interface

    def _copy_into(self, new: Any) -> None:
        """Copy the rules' own state into ``new`` for :meth:`clone`, every mutable part anew."""
        new._options = self._options
        new._round = self._round
        new._totals = self._totals[:]
        new._hands = [hand[:] for hand in self._hands]
        new._sizes = self._sizes[:]
        new._in_round = self._in_round[:]
        new._left = self._left
        new._draw = self._draw[:]
        new._discard = self._discard[:]
        new._top = self._top
        new._active = self._active
        new._pending = self._pending

    def pending(self) -> tuple[Prompt, ...]:
        """Return the active seat's turn prompt (see the module docstring); ``()`` once the match is over."""
        return self._pending

    def view(self, seat: int) -> LamaView:
        """Return what ``seat`` sees now. Raises :class:`GameError` for a seat not at the table."""
        self._check_seat(seat)
        return LamaView(
            seat=seat,
            round=self._round,
            active=self._active if self._pending else None,
            hand=_cards_of(self._hands[seat]),
            discard=self._discard[-1],
            discard_size=len(self._discard),
            draw_size=len(self._draw),
            hand_sizes=tuple(self._sizes),
            in_round=tuple(self._in_round),
            totals=tuple(self._totals),
        )

    def zones(self) -> dict[str, tuple[Any, ...]]:
        """Return the cards of every zone: each hand (sorted), the draw pile (top first), the discard pile."""
        zones: dict[str, tuple[Any, ...]] = {f"hand {s}": _cards_of(counts) for s, counts in enumerate(self._hands)}
        zones["draw pile"] = tuple(reversed(self._draw))
        zones["discard pile"] = tuple(self._discard)
        return zones

    @property
    def totals(self) -> tuple[int, ...]:
        """Return every seat's running total (totals change only when a round is scored)."""
        return tuple(self._totals)

    @property
    def options(self) -> LamaOptions:
        """Return the match's options."""
        return self._options

    @property
    def round(self) -> int:
        """Return the number of the current round (of the last round once the match is over), from 1."""
        return self._round

    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        # The base class has checked the decision against the cached prompt, so nothing here can fail
        # half-way: every branch only moves cards that the prompt proved to be there.
        seat = self._active
        action = decisions[seat][0]
        events: list[Event]
        if isinstance(action, Card):
            value = action._value
            self._hands[seat][value] -= 1
            self._sizes[seat] -= 1
            self._discard.append(action)
            self._top = value
            events = [_PLAYED[seat][value]]
            if not self._sizes[seat]:
                self._end_round(seat, emptied=True, events=events)  # L8
                return events
        elif action is DRAW:
            card = self._draw.pop()
            self._hands[seat][card._value] += 1
            self._sizes[seat] += 1
            events = [_DREW[seat]]
            self._private[seat].append((len(self._log) + 1, _DREW_CARD[seat][card._value]))
        else:
            self._in_round[seat] = False
            self._left -= 1
            events = [_QUIT[seat]]
            if not self._left:
                self._end_round(seat, emptied=False, events=events)  # L8
                return events
        # Clockwise, skipping seats that quit; one seat at least is still in, so this ends.
        seats = self.seats
        in_round = self._in_round
        nxt = seat + 1 if seat + 1 < seats else 0
        while not in_round[nxt]:
            nxt = nxt + 1 if nxt + 1 < seats else 0
        self._active = nxt
        self._refresh_pending()
        return events

    # --- helpers

    def _refresh_pending(self) -> None:
        """Look up the active seat's prompt once per step, so that :meth:`pending` only returns it."""
        seat = self._active
        top = self._top
        counts = self._hands[seat]
        if self._options.climb == CLIMB_ANY:
            self._pending = (self._any_climb_prompt(seat, top, counts),)
            return
        low, high = _PLAYABLE_VALUES[top]
        mask = (1 if counts[low] else 0) | (2 if counts[high] else 0)
        can_draw = bool(self._draw) and self._left > 1  # L5
        self._pending = _PENDING[_pending_key(seat, top, mask, can_draw)]

    def _any_climb_prompt(self, seat: int, top: int, counts: Sequence[int]) -> Prompt:
        """Return the turn prompt under option ``climb=any``: the same value or any higher one.

        The llama is above every number; after a llama only a llama or a 1 (the rulebook's own example).
        """
        values = (1, LLAMA_VALUE) if top == LLAMA_VALUE else range(top, LLAMA_VALUE + 1)
        choices: list[Action] = [_CARDS[v - 1] for v in sorted(values) if counts[v]]
        if self._draw and self._left > 1:  # L5
            choices.append(DRAW)
        choices.append(QUIT)
        return Prompt(seat, "turn", Pick.ONE, tuple(choices), (choices[0],))

    def _start_round(self, starter: int) -> RoundStarted:
        """Deal a new round from the rng (L2) with ``starter`` to play, and return its event."""
        self._round += 1
        deck = list(DECK)
        self._rng.shuffle(deck)
        seats = self.seats
        self._hands = [_counts(deck[s * HAND_SIZE : (s + 1) * HAND_SIZE]) for s in range(seats)]
        self._sizes = [HAND_SIZE] * seats
        self._in_round = [True] * seats
        self._left = seats
        dealt = seats * HAND_SIZE
        self._discard = [deck[dealt]]
        # The rest of the shuffled deck is the draw pile; the list's last card is its top.
        self._draw = deck[dealt + 1 :]
        self._top = deck[dealt]._value
        self._active = starter
        self._refresh_pending()
        return RoundStarted(self._round, starter, deck[dealt], HAND_SIZE)

    def _end_round(self, ender: int, *, emptied: bool, events: list[Event]) -> None:
        """Score the round (L9, L10), then end the match (L12) or deal the next round (L11).

        The events are appended to ``events``.
        """
        totals = self._totals
        points = [
            _chip_return(totals[s]) if emptied and s == ender else _hand_points(counts)
            for s, counts in enumerate(self._hands)
        ]
        for s, p in enumerate(points):
            totals[s] += p
        final = tuple(totals)
        events.append(RoundScored(self._round, tuple(points), final))
        rounds = self._options.rounds
        # L12: a fixed number of rounds, when set, replaces the target.
        if (self._round >= rounds) if rounds is not None else (max(totals) >= self._options.target):
            events.append(MatchOver(final, places_from_totals(final)))
            self._pending = ()
        else:
            events.append(self._start_round(ender))


def _as_cards(cards: Iterable[Card | str] | str) -> list[Card]:
    """Return the cards given as cards, card texts, or one text of card texts separated by spaces.

    Raises :class:`ParseError` for text that names no card.
    """
    if isinstance(cards, str):
        cards = cards.split()
    return [c if isinstance(c, Card) else Card.parse(c) for c in cards]


def _cards_of(counts: Sequence[int]) -> tuple[Card, ...]:
    """Return the cards of a hand given as counts per value, sorted."""
    return tuple(c for c in _CARDS for _ in range(counts[c._value]))


def _check_seats_and_seed(seats: int, seed: int) -> None:
    """Raise :class:`OptionError` unless ``seats`` is 2..6 and ``seed`` an integer >= 0.

    :meth:`Game.new_match` checks the same; a state built directly or by :meth:`LamaState.arranged` must
    too, because the prompts built ahead cover 2..6 seats only.
    """
    if isinstance(seats, bool) or not isinstance(seats, int) or not Lama.min_seats <= seats <= Lama.max_seats:
        raise OptionError(f"{Lama.title} is played by {Lama.min_seats} to {Lama.max_seats} seats, not {seats!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise OptionError(f"seed must be an integer >= 0, got {seed!r}")


def _counts(cards: Iterable[Card]) -> list[int]:
    """Return the cards as counts per value, indexed 0..7 (index 0 unused)."""
    counts = [0] * (LLAMA_VALUE + 1)
    for card in cards:
        counts[card._value] += 1
    return counts


def _check_deck(cards: Sequence[Card]) -> None:
    """Raise :class:`GameError` unless ``cards`` are the 56-card deck as a multiset (L1)."""
    have = Counter(cards)
    problems = [f"{have[c] - COPIES:+d} {c}" for c in _CARDS if have[c] != COPIES]
    if problems:
        raise GameError(
            f"the arranged cards are not the {len(DECK)}-card deck ({COPIES} of each card): {', '.join(problems)}"
        )


# ------------------------------------------------------------------------------------------------- game


class Lama(Game):
    """L.A.M.A. for 2 to 6 seats. Options: ``target`` (default 40), ``rounds`` (default unset), ``climb``
    (``one``, the default, or ``any``: see :class:`LamaOptions`)."""

    name: ClassVar[str] = "lama"
    title: ClassVar[str] = "L.A.M.A."
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = _MAX_SEATS
    kinds: ClassVar[tuple[str, ...]] = ("turn",)
    hidden_order: ClassVar[tuple[str, ...]] = ("draw pile",)

    def options(self, raw: Mapping[str, Any] | None = None) -> LamaOptions:
        """Return validated options from ``raw`` (values may be text; ``rounds`` may be ``None``).

        Raises :class:`OptionError` naming an unknown option or a bad value.
        """
        raw = raw or {}
        check_known_options(self.name, raw, ("target", "rounds", "climb"))
        target = parse_int_option("target", raw.get("target", DEFAULT_TARGET), minimum=1)
        rounds_raw = raw.get("rounds")
        rounds = None if rounds_raw is None else parse_int_option("rounds", rounds_raw, minimum=1)
        climb = raw.get("climb", CLIMB_ONE)
        # checked by LamaOptions, as the options made in code are
        return LamaOptions(target=target, rounds=rounds, climb=climb.strip() if isinstance(climb, str) else climb)

    def new_match(self, seats: int, seed: int, options: Options | None = None) -> LamaState:
        """Return a new match (see :meth:`Game.new_match`), typed as :class:`LamaState`.

        Raises :class:`OptionError` for an unsupported seat count, a bad seed, or options that are not
        :class:`LamaOptions`.
        """
        state = super().new_match(seats, seed, options)
        assert isinstance(state, LamaState)
        return state

    def _new(self, options: Any, seats: int, seed: int) -> LamaState:
        if not isinstance(options, LamaOptions):
            raise OptionError(f"{self.name} needs LamaOptions, got {options!r}")
        return LamaState(seats, seed, options)

    def deck(self, options: Any = None, seats: int | None = None) -> tuple[Card, ...]:
        """Return the 56 cards (L1), sorted: eight of each value 1..6 and eight llamas (at every seat count)."""
        return DECK

    def parse_card(self, text: str) -> Card:
        """Return the card written as ``text``. Raises :class:`ParseError`."""
        return Card.parse(text)


LAMA: Final = Lama()
"""The L.A.M.A. game."""
