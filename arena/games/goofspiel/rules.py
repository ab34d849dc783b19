"""Goofspiel: the rules (docs/rules.md GS1-GS9, G1, G2) behind the game interface of :mod:`arena.games.base`.

Cards are :class:`Card` values written ``1``..``13``: the same card objects make up every seat's hand and the
prize deck, built once, so cards compare by identity. A card is also an action: "bid this card".

Every step is one trick's sealed bid (GS3): every seat is prompted at once with a :attr:`"bid"` of
:attr:`Pick.ONE`; its choices are the cards of its hand, lowest first. The default decision (for a seat that
does not answer in time or answers wrongly, GS6) is the first choice: the lowest card in hand.

Events, all public: :class:`RoundStarted`, :class:`PrizeTurned`, :class:`BidsRevealed`, then the base
:class:`~arena.games.base.RoundScored` and :class:`~arena.games.base.MatchOver`. A new match's log already holds
the first :class:`RoundStarted` and :class:`PrizeTurned`. There are no private events: a seat's
:class:`GoofspielView` can be rebuilt from its hand and these events.

Higher totals are better (GS8): :attr:`Goofspiel.scoring` is :attr:`Scoring.HIGHER_WINS`, and the places of
:class:`~arena.games.base.MatchOver` go to the highest total first.

Zones (for invariant checks): ``hand 0``..``hand N-1`` (sorted), ``bids 0``..``bids N-1`` (the cards each seat
bid this round, in trick order), ``prize deck`` (face down, top first; its order is the one secret of the game,
:attr:`Goofspiel.hidden_order`), ``prize`` (the card face up), ``pot`` (prizes carried by ties, GS5), ``taken
0``..``taken N-1`` (the prizes each seat took this round) and ``discarded`` (prizes nobody took). A new round
gathers every card and deals afresh (GS7).

:meth:`GoofspielState.arranged` builds a state from hand-set cards, for tests of the rules and of bots.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass
from typing import Any, ClassVar, Final, cast

from arena.games.base import (
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
    Scoring,
    View,
    check_known_options,
    parse_int_option,
)

MIN_CARDS: Final = 3
"""The fewest cards option ``cards`` allows (GS1)."""
MAX_CARDS: Final = 13
"""The most cards option ``cards`` allows, and its default (GS1)."""
DEFAULT_CARDS: Final = MAX_CARDS
DEFAULT_ROUNDS: Final = 1
"""The default of option ``rounds`` (GS7)."""

KIND: Final = "bid"
"""The one decision kind of the game (GS3)."""


class Ties(enum.Enum):
    """Option ``ties``: what becomes of a prize when the highest bid is tied (GS5)."""

    DISCARD = "discard"  # nobody takes the prize (the default)
    CARRY = "carry"  # the prize goes into the pot, which the next trick's winner takes with its own prize


class Card:
    """One Goofspiel card: a value 1..13, written as the number (``7``).

    Cards are interned: ``Card(7) is Card.parse("7")``. A seat's cards and the prize cards are the same objects:
    only the zone a card lies in says whose it is. A card is also the action "bid this card".
    """

    __slots__ = ("_text", "_value")

    _value: int
    _text: str

    def __new__(cls, value: int) -> Card:
        """Return the card of ``value`` (1..13). Raises :class:`GameError` otherwise."""
        if type(value) is int and 1 <= value <= MAX_CARDS:
            return _CARDS[value - 1]
        raise GameError(f"a Goofspiel card value is 1..{MAX_CARDS}, not {value!r}")

    @classmethod
    def _make(cls, value: int) -> Card:
        card = object.__new__(cls)
        object.__setattr__(card, "_value", value)
        object.__setattr__(card, "_text", str(value))
        return card

    @classmethod
    def parse(cls, text: str) -> Card:
        """Return the card written as ``text`` (``1``..``13``). Raises :class:`ParseError`."""
        try:
            return _CARDS_BY_TEXT[text]
        except (KeyError, TypeError):
            raise ParseError(f"{text!r} is not a Goofspiel card; the cards are 1..{MAX_CARDS}") from None

    @property
    def value(self) -> int:
        """Return the card's value, 1..13: what it bids, or what it scores as a prize."""
        return self._value

    @property
    def text(self) -> str:
        """Return the card's text form: its value as a number (``7``)."""
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


_CARDS: Final = tuple(Card._make(v) for v in range(1, MAX_CARDS + 1))
_CARDS_BY_TEXT: Final = {c.text: c for c in _CARDS}

CARDS: Final[tuple[Card, ...]] = _CARDS
"""The thirteen distinct cards in order: 1..13."""


def suit(cards: int) -> tuple[Card, ...]:
    """Return the cards 1..``cards``, lowest first: one seat's hand, or the prize deck, at the deal (GS1)."""
    return _CARDS[:cards]


def value_of(cards: Iterable[Card]) -> int:
    """Return the sum of the values of ``cards`` (what a pot of prizes is worth)."""
    return sum(c._value for c in cards)


# ---------------------------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class GoofspielOptions:
    """Validated Goofspiel match options.

    ``cards``: every seat holds 1..cards and the prize deck is another 1..cards (GS1), ``cards`` tricks a round
    (GS7). ``ties``: what a tied highest bid does with the prize (GS5). ``rounds``: how many rounds the match is
    (GS7). Constructing it raises :class:`OptionError` for a bad value.
    """

    cards: int = DEFAULT_CARDS
    ties: Ties = Ties.DISCARD
    rounds: int = DEFAULT_ROUNDS

    def __post_init__(self) -> None:
        if isinstance(self.cards, bool) or not isinstance(self.cards, int) or not MIN_CARDS <= self.cards <= MAX_CARDS:
            raise OptionError(f"option cards must be an integer from {MIN_CARDS} to {MAX_CARDS}, got {self.cards!r}")
        if not isinstance(self.ties, Ties):
            raise OptionError(f"option ties must be one of {', '.join(t.value for t in Ties)}, got {self.ties!r}")
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1:
            raise OptionError(f"option rounds must be an integer >= 1, got {self.rounds!r}")

    def to_json(self) -> dict[str, Any]:
        """Return the options as a JSON-ready dict that :meth:`Goofspiel.options` reads back."""
        return {"cards": self.cards, "ties": self.ties.value, "rounds": self.rounds}


# ----------------------------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    """A round was dealt (GS1, GS7): every seat holds 1..``cards``, the prize deck is ``cards`` cards face down."""

    kind: ClassVar[str] = "round_started"
    round: int
    cards: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "round": self.round, "cards": self.cards}

    def describe(self, names: Sequence[str]) -> str:
        return f"round {self.round}: every seat holds 1..{self.cards}, {self.cards} prizes face down"


@dataclass(frozen=True, slots=True)
class PrizeTurned(Event):
    """The top prize card was turned face up for trick ``trick`` (GS2); ``pot`` is the value carried to it (GS5)."""

    kind: ClassVar[str] = "prize_turned"
    trick: int
    prize: Card
    pot: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "trick": self.trick, "prize": self.prize.text, "pot": self.pot}

    def describe(self, names: Sequence[str]) -> str:
        pot = f" with a pot of {self.pot}" if self.pot else ""
        return f"trick {self.trick}: prize {self.prize} turned up{pot}"


@dataclass(frozen=True, slots=True)
class BidsRevealed(Event):
    """Every seat's bid of trick ``trick``, by seat, revealed together (GS3); ``winner`` took ``won`` points, the
    prize and the pot (GS4), or is ``None`` for a tie (GS5, ``won`` is then 0)."""

    kind: ClassVar[str] = "bids_revealed"
    trick: int
    bids: tuple[Card, ...]
    winner: int | None
    won: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "trick": self.trick, "bids": [c.text for c in self.bids], "winner": self.winner,
                "won": self.won}

    def describe(self, names: Sequence[str]) -> str:
        bids = ", ".join(f"{names[s]} {card}" for s, card in enumerate(self.bids))
        if self.winner is None:
            return f"bids {bids}: the highest is tied, nobody takes the prize"
        return f"bids {bids}: {names[self.winner]} takes {self.won}"


# ------------------------------------------------------------------------------------------------- view


@dataclass(frozen=True, slots=True)
class GoofspielView(View):
    """What one seat may see (G2, GS9): its own hand and the public state of the table.

    ``trick`` is the trick being bid for (1-based; the last one once the match is over). ``prize`` is the card
    turned up, ``None`` once the match is over; ``pot`` the value carried to this trick by ties (GS5).
    ``to_come``: the prizes still face down, as a set (lowest first; their order is secret). ``bids``: by seat,
    the cards each bid this round, in trick order (every seat's hand is its suit less these).
    """

    game: ClassVar[str] = "goofspiel"

    seat: int
    round: int
    trick: int
    prize: Card | None
    pot: int
    hand: tuple[Card, ...]
    to_come: tuple[Card, ...]
    bids: tuple[tuple[Card, ...], ...]
    totals: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "round": self.round,
            "trick": self.trick,
            "prize": None if self.prize is None else self.prize.text,
            "pot": self.pot,
            "hand": [c.text for c in self.hand],
            "to_come": [c.text for c in self.to_come],
            "bids": [[c.text for c in bids] for bids in self.bids],
            "totals": list(self.totals),
        }


# ------------------------------------------------------------------------------------------------ state


class GoofspielState(MatchState):
    """One Goofspiel match. Create it with :meth:`Goofspiel.new_match`, or :meth:`arranged` for tests.

    The prize deck is a list whose last card is the top; hands are sorted lists.
    """

    game: ClassVar[str] = "goofspiel"

    _options: GoofspielOptions
    _round: int
    _trick: int
    _totals: list[int]
    _points: list[int]
    _hands: list[list[Card]]
    _bids: list[list[Card]]
    _deck: list[Card]
    _prize: Card | None
    _pot: list[Card]
    _taken: list[list[Card]]
    _discarded: list[Card]
    _pending: tuple[Prompt, ...]

    def __init__(self, seats: int, seed: int, options: GoofspielOptions | None = None) -> None:
        """Deal the first round and turn its first prize; :meth:`Goofspiel.new_match` is the usual way in.

        Raises :class:`OptionError` for an unsupported seat count or a bad seed.
        """
        _check_seats_and_seed(seats, seed)
        super().__init__(seats, seed)
        self._options = options if options is not None else GoofspielOptions()
        self._round = 0
        self._totals = [0] * seats
        self._log.extend(self._start_round())

    @classmethod
    def arranged(
        cls,
        *,
        hands: Sequence[Iterable[Card | str] | str],
        prizes: Iterable[Card | str] | str,
        prize: Card | str,
        pot: Iterable[Card | str] | str = (),
        taken: Sequence[Iterable[Card | str] | str] | None = None,
        totals: Sequence[int] | None = None,
        round: int = 1,
        options: GoofspielOptions | None = None,
        seed: int = 0,
    ) -> GoofspielState:
        """Return a match in the middle of a round, with hand-set cards (for tests of rules and bots).

        ``hands``: one hand per seat (2..6 seats), all of one size; the cards missing from a seat's suit are the
        bids it made this round (in rising order: which trick each went to is not known). ``prizes``: the prize
        deck face down, top first, one card fewer than a hand. ``prize``: the card turned up. ``pot``: the prizes
        carried by ties (GS5). ``taken``: per seat, the prizes it took this round (default none); every prize card
        in no other place was discarded. ``totals``: running totals, this round's taken prizes included (default:
        their values). ``round``: this round's number; ``seed``: the randomness of later rounds. Cards may be given
        as :class:`Card` or text, and each group also as one text such as ``"1 5 13"``. The log starts empty: the
        history before the arrangement is not known.

        Raises :class:`GameError` (:class:`ParseError` for bad card text, :class:`OptionError` for a bad seat
        count) when the cards or the arrangement cannot happen.
        """
        seats = len(hands)
        _check_seats_and_seed(seats, seed)
        opts = options if options is not None else GoofspielOptions()
        full = suit(opts.cards)
        hand_cards = [sorted(_as_cards(hand)) for hand in hands]
        size = len(hand_cards[0])
        for s, hand in enumerate(hand_cards):
            if not hand or len(hand) != size:
                raise GameError(f"hand {s} holds {len(hand)} cards: every hand holds the same number, at least one")
            if len(set(hand)) != len(hand) or not set(hand) <= set(full):
                raise GameError(f"hand {s} is not a part of the cards 1..{opts.cards}: {_texts(hand)}")
        deck = _as_cards(prizes)
        if len(deck) != size - 1:
            raise GameError(f"the prize deck holds {len(deck)} cards; with {size} in every hand it holds {size - 1}")
        turned = prize if isinstance(prize, Card) else Card.parse(prize)
        pot_cards = _as_cards(pot)
        if pot_cards and opts.ties is not Ties.CARRY:
            raise GameError("a pot is carried only under option ties=carry (GS5)")
        taken_cards = [[] for _ in range(seats)] if taken is None else [_as_cards(t) for t in taken]
        if len(taken_cards) != seats:
            raise GameError(f"taken must list {seats} seats' prizes, got {len(taken_cards)}")
        placed = [*deck, turned, *pot_cards, *(c for cards in taken_cards for c in cards)]
        if len(set(placed)) != len(placed) or not set(placed) <= set(full):
            raise GameError(f"the prize cards are not a part of the cards 1..{opts.cards}: {_texts(placed)}")
        points = [value_of(cards) for cards in taken_cards]
        totals_list = list(points) if totals is None else list(totals)
        if len(totals_list) != seats or any(
            isinstance(t, bool) or not isinstance(t, int) or t < p for t, p in zip(totals_list, points, strict=False)
        ):
            raise GameError(f"totals must be {seats} integers, each at least what the seat took, got {totals!r}")
        if isinstance(round, bool) or not isinstance(round, int) or not 1 <= round <= opts.rounds:
            raise GameError(f"round must be an integer from 1 to {opts.rounds}, got {round!r}")

        state = cls.__new__(cls)
        MatchState.__init__(state, seats, seed)
        state._options = opts
        state._round = round
        state._trick = opts.cards - size + 1
        state._totals = totals_list
        state._points = points
        state._hands = hand_cards
        state._bids = [[c for c in full if c not in hand] for hand in hand_cards]
        state._deck = deck[::-1]
        state._prize = turned
        state._pot = pot_cards
        state._taken = taken_cards
        state._discarded = [c for c in full if c not in placed]
        state._refresh_pending()
        return state

    # --- the interface

    def pending(self) -> tuple[Prompt, ...]:
        """Return every seat's bid prompt (see the module docstring); ``()`` once the match is over."""
        return self._pending

    def view(self, seat: int) -> GoofspielView:
        """Return what ``seat`` sees now. Raises :class:`GameError` for a seat not at the table."""
        self._check_seat(seat)
        return GoofspielView(
            seat=seat,
            round=self._round,
            trick=self._trick,
            prize=self._prize,
            pot=value_of(self._pot),
            hand=tuple(self._hands[seat]),
            to_come=tuple(sorted(self._deck)),
            bids=tuple(tuple(bids) for bids in self._bids),
            totals=tuple(self._totals),
        )

    def zones(self) -> dict[str, tuple[Any, ...]]:
        """Return the cards of every zone (see the module docstring); the prize deck top first."""
        zones: dict[str, tuple[Any, ...]] = {f"hand {s}": tuple(hand) for s, hand in enumerate(self._hands)}
        zones.update({f"bids {s}": tuple(bids) for s, bids in enumerate(self._bids)})
        zones["prize deck"] = tuple(reversed(self._deck))
        zones["prize"] = () if self._prize is None else (self._prize,)
        zones["pot"] = tuple(self._pot)
        zones.update({f"taken {s}": tuple(taken) for s, taken in enumerate(self._taken)})
        zones["discarded"] = tuple(self._discarded)
        return zones

    @property
    def totals(self) -> tuple[int, ...]:
        """Return every seat's running total: the values of the prizes it took (GS4), all rounds so far."""
        return tuple(self._totals)

    @property
    def options(self) -> GoofspielOptions:
        """Return the match's options."""
        return self._options

    @property
    def round(self) -> int:
        """Return the number of the current round (of the last round once the match is over), from 1."""
        return self._round

    @property
    def trick(self) -> int:
        """Return the number of the current trick in its round (of the last trick once the match is over), from 1."""
        return self._trick

    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        # The base class has checked every bid against its seat's prompt (a card of its hand), so nothing here can
        # fail half-way.
        prize = self._prize
        assert prize is not None  # a prompt is pending, so a prize is turned up
        bids = tuple(cast(Card, decisions[s][0]) for s in range(self.seats))
        for seat, card in enumerate(bids):
            self._hands[seat].remove(card)
            self._bids[seat].append(card)
        high = max(bids)
        highest = [s for s, card in enumerate(bids) if card is high]
        winner: int | None = None
        won = 0
        if len(highest) == 1:  # GS4
            winner = highest[0]
            self._pot.append(prize)
            won = value_of(self._pot)
            self._taken[winner].extend(self._pot)
            self._pot = []
            self._points[winner] += won
            self._totals[winner] += won
        elif self._options.ties is Ties.CARRY:  # GS5
            self._pot.append(prize)
        else:
            self._discarded.append(prize)
        self._prize = None
        events: list[Event] = [BidsRevealed(self._trick, bids, winner, won)]
        if self._deck:
            self._trick += 1
            events.append(self._turn_prize())
        else:
            self._end_round(events)
        self._refresh_pending()
        return events

    # --- helpers

    def _refresh_pending(self) -> None:
        """Build the seats' prompts once per step (GS3, GS6), so that :meth:`pending` only returns them."""
        if self._prize is None:
            self._pending = ()
            return
        self._pending = tuple(
            Prompt(seat, KIND, Pick.ONE, tuple(hand), (hand[0],)) for seat, hand in enumerate(self._hands)
        )

    def _turn_prize(self) -> PrizeTurned:
        """Turn the top of the prize deck face up (GS2) and return its event."""
        self._prize = self._deck.pop()
        return PrizeTurned(self._trick, self._prize, value_of(self._pot))

    def _start_round(self) -> list[Event]:
        """Deal a new round (GS1, GS7), turn its first prize, and return the two events."""
        self._round += 1
        self._trick = 1
        cards = self._options.cards
        seats = self.seats
        self._hands = [list(suit(cards)) for _ in range(seats)]
        self._bids = [[] for _ in range(seats)]
        self._taken = [[] for _ in range(seats)]
        self._points = [0] * seats
        self._pot = []
        self._discarded = []
        deck = list(suit(cards))
        self._rng.shuffle(deck)
        self._deck = deck  # the list's last card is the top
        events: list[Event] = [RoundStarted(self._round, cards), self._turn_prize()]
        self._refresh_pending()
        return events

    def _end_round(self, events: list[Event]) -> None:
        """Score the round, then end the match or deal the next round (GS5, GS7, GS8); events go to ``events``."""
        self._discarded.extend(self._pot)  # a pot left after the last trick is discarded (GS5)
        self._pot = []
        final = tuple(self._totals)
        events.append(RoundScored(self._round, tuple(self._points), final))
        if self._round >= self._options.rounds:
            events.append(MatchOver(final, Scoring.HIGHER_WINS.places(final)))
        else:
            events.extend(self._start_round())


def _as_cards(cards: Iterable[Card | str] | str) -> list[Card]:
    """Return the cards given as cards, card texts, or one text of card texts separated by spaces.

    Raises :class:`ParseError` for text that names no card.
    """
    if isinstance(cards, str):
        cards = cards.split()
    return [c if isinstance(c, Card) else Card.parse(c) for c in cards]


def _texts(cards: Iterable[Card]) -> str:
    return " ".join(c.text for c in cards)


def _check_seats_and_seed(seats: int, seed: int) -> None:
    """Raise :class:`OptionError` unless ``seats`` is 2..6 and ``seed`` an integer >= 0 (as
    :meth:`Game.new_match` checks; a state built directly or by :meth:`GoofspielState.arranged` must too)."""
    if isinstance(seats, bool) or not isinstance(seats, int) or not Goofspiel.min_seats <= seats <= Goofspiel.max_seats:
        raise OptionError(f"{Goofspiel.title} is played by {Goofspiel.min_seats} to {Goofspiel.max_seats} seats, "
                          f"not {seats!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise OptionError(f"seed must be an integer >= 0, got {seed!r}")


# ------------------------------------------------------------------------------------------------- game


class Goofspiel(Game):
    """Goofspiel for 2 to 6 seats. Options: ``cards`` (default 13, 3..13), ``ties`` (``discard``, the default, or
    ``carry``) and ``rounds`` (default 1): see :class:`GoofspielOptions`. Higher totals win."""

    name: ClassVar[str] = "goofspiel"
    title: ClassVar[str] = "Goofspiel"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 6
    kinds: ClassVar[tuple[str, ...]] = (KIND,)
    hidden_order: ClassVar[tuple[str, ...]] = ("prize deck",)
    scoring: ClassVar[Scoring] = Scoring.HIGHER_WINS

    def options(self, raw: Mapping[str, Any] | None = None) -> GoofspielOptions:
        """Return validated options from ``raw`` (values may be text).

        Raises :class:`OptionError` naming an unknown option or a bad value.
        """
        raw = raw or {}
        check_known_options(self.name, raw, ("cards", "ties", "rounds"))
        cards = parse_int_option("cards", raw.get("cards", DEFAULT_CARDS), minimum=MIN_CARDS)
        rounds = parse_int_option("rounds", raw.get("rounds", DEFAULT_ROUNDS), minimum=1)
        ties_raw = raw.get("ties", Ties.DISCARD)
        if isinstance(ties_raw, str):
            try:
                ties_raw = Ties(ties_raw.strip())
            except ValueError:
                raise OptionError(f"option ties must be one of {', '.join(t.value for t in Ties)}, "
                                  f"got {ties_raw!r}") from None
        # the range of cards and the type of ties are checked by GoofspielOptions, as the options made in code are
        return GoofspielOptions(cards=cards, ties=ties_raw, rounds=rounds)

    def new_match(self, seats: int, seed: int, options: Options | None = None) -> GoofspielState:
        """Return a new match (see :meth:`Game.new_match`), typed as :class:`GoofspielState`.

        Raises :class:`OptionError` for an unsupported seat count, a bad seed, or options that are not
        :class:`GoofspielOptions`.
        """
        state = super().new_match(seats, seed, options)
        assert isinstance(state, GoofspielState)
        return state

    def _new(self, options: Any, seats: int, seed: int) -> GoofspielState:
        if not isinstance(options, GoofspielOptions):
            raise OptionError(f"{self.name} needs GoofspielOptions, got {options!r}")
        return GoofspielState(seats, seed, options)

    def deck(self, options: Any = None, seats: int | None = None) -> tuple[Card, ...]:
        """Return every card of a match, sorted: 1..``cards`` once per seat and once more for the prize deck (GS1).

        Raises :class:`GameError` without ``seats``: the number of cards depends on it.
        """
        if seats is None:
            raise GameError("a Goofspiel deck depends on the number of seats: give seats")
        cards = options.cards if isinstance(options, GoofspielOptions) else DEFAULT_CARDS
        return tuple(c for c in suit(cards) for _ in range(seats + 1))

    def parse_card(self, text: str) -> Card:
        """Return the card written as ``text``. Raises :class:`ParseError`."""
        return Card.parse(text)


GOOFSPIEL: Final = Goofspiel()
"""The Goofspiel game."""
