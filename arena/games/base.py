"""The game interface shared by every game, and the small value types it speaks in.

A match is a pure state machine. It is created from (options, number of seats, seed); all its randomness
comes from a ``random.Random`` made from the seed (docs/rules.md G1). At every step it says which seats must
decide now (:meth:`MatchState.pending`): one seat, or several at once for a simultaneous decision, each with
a :class:`Prompt` holding the legal choices. :meth:`MatchState.apply` takes one decision per prompted seat,
checks them all before changing anything, and returns the public events that followed. A seat's
:meth:`MatchState.view` holds only what that seat may see (docs/rules.md G2).

This module, like the whole ``arena.games`` package, does no I/O and imports nothing of the rest of arena.
"""

from __future__ import annotations

import enum
import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, NoReturn, Protocol, Self, TypeAlias


class GameError(ValueError):
    """Root of the rules core's exceptions: bad input to a game, never a bug in it."""


class OptionError(GameError):
    """A match configuration that cannot be played: a bad option value or an unsupported seat count."""


class ParseError(GameError):
    """A text form (a card, an action, a decision) that does not parse."""


class IllegalDecisionError(GameError):
    """A decision that is not legal now. The state it was offered to is left exactly as it was."""


DecisionKind: TypeAlias = str
"""What a prompted seat has to decide, named by its game: Cabanga!'s ``play`` and ``throw``, L.A.M.A.'s ``turn``.

A name, not a closed set: a new game names its own kinds. A Python bot answers a decision with its method of
that name (:class:`arena.sdk.Bot`); the wire carries the name (docs/bot-guide.md).
"""


class Pick(enum.Enum):
    """How a decision is formed from a prompt's choices."""

    ONE = "one"  # exactly one of the choices
    SUBSET = "subset"  # any set of distinct choices, the empty set included


class Action(Protocol):
    """Anything a seat can choose: a card, a card onto a pile, ``draw``, ``quit``.

    Every action has one short text form (``text``), the same in logs, replays, the CLI and error messages.
    """

    @property
    def text(self) -> str: ...


Decision: TypeAlias = tuple[Action, ...]
"""One seat's answer to a prompt: one action for :attr:`Pick.ONE`, any distinct choices for :attr:`Pick.SUBSET`."""

NO_DECISION_TEXT = "-"
"""The text form of an empty decision (throwing nothing)."""


def decision_text(decision: Decision) -> str:
    """Return the text form of a decision: its actions' texts joined by spaces, or ``-`` when empty."""
    # an in-process bot may return anything: describe it without trusting it to be an Action
    if len(decision) == 1:  # most decisions (the referee writes one text per decision): no generator
        text = getattr(decision[0], "text", None)
        if type(text) is str:
            return text
    return " ".join([str(getattr(a, "text", repr(a))) for a in decision]) if decision else NO_DECISION_TEXT


class Prompt(NamedTuple):
    """A request for one seat's decision.

    ``choices`` are the legal actions for :attr:`Pick.ONE`, or the candidates for :attr:`Pick.SUBSET`;
    they come in a fixed, documented order. ``default`` is the legal decision applied when the seat does not
    answer in time or answers wrongly (DESIGN.md "Faults").

    A named tuple rather than a frozen dataclass: a prompt is made at every step of every match, and a
    tuple is built several times faster, immutable all the same.
    """

    seat: int
    kind: DecisionKind
    pick: Pick
    choices: tuple[Action, ...]
    default: Decision

    def check(self, decision: Decision) -> None:
        """Raise :class:`IllegalDecisionError` unless ``decision`` answers this prompt legally."""
        if not isinstance(decision, tuple):
            raise IllegalDecisionError(
                f"seat {self.seat}: a decision is a tuple of actions, got {decision!r}"
            )
        if self.pick is Pick.ONE:
            if len(decision) != 1 or decision[0] not in self.choices:
                raise IllegalDecisionError(
                    f"seat {self.seat}: {decision_text(decision)!r} is not one of the legal "
                    f"{self.kind} choices {self.choice_texts()}"
                )
            return
        for action in decision:
            if action not in self.choices:
                raise IllegalDecisionError(
                    f"seat {self.seat}: {decision_text((action,))!r} is not among the {self.kind} candidates "
                    f"{self.choice_texts()}"
                )
        if len({id(a) for a in decision}) != len(decision):  # choices are interned: identity is equality
            raise IllegalDecisionError(
                f"seat {self.seat}: {decision_text(decision)!r} names a choice more than once"
            )

    def choice_texts(self) -> str:
        """Return the choices' text forms, space separated (for messages and listings)."""
        return " ".join(a.text for a in self.choices)

    def parse(self, text: str) -> Decision:
        """Return the decision written as ``text`` (actions' text forms separated by spaces, ``-`` for none).

        Raises :class:`ParseError` when a word names no choice of this prompt, and
        :class:`IllegalDecisionError` when the words do not form a legal decision.
        """
        words = text.split()
        if words == [NO_DECISION_TEXT]:
            words = []
        by_text = {a.text: a for a in self.choices}
        try:
            decision: Decision = tuple(by_text[w] for w in words)
        except KeyError as exc:
            raise ParseError(
                f"seat {self.seat}: {exc.args[0]!r} in {text!r} is none of the {self.kind} "
                f"choices {self.choice_texts()}"
            ) from None
        self.check(decision)
        return decision


class Event(ABC):
    """A public event: what every seat at the table saw happen.

    Events are immutable. ``to_json`` gives a JSON-ready dict with an ``event`` key naming the kind;
    ``describe`` gives one line a person can follow, with the seats' names.
    """

    __slots__ = ()
    kind: ClassVar[str]
    quiet: ClassVar[bool] = False
    """True for an event that marks a moment and says nothing a reader would miss (a listing may leave it out)."""

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """Return the event as a JSON-ready dict: ``{"event": kind, ...fields}``, cards in text form."""

    @abstractmethod
    def describe(self, names: Sequence[str]) -> str:
        """Return one human-readable line for this event, naming seats by ``names``."""


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The outcome of a finished match: final totals and places per seat (1 for the best total, as the game counts
    them: :class:`Scoring`; equal totals share a place)."""

    totals: tuple[int, ...]
    places: tuple[int, ...]

    @classmethod
    def from_totals(cls, totals: Sequence[int]) -> MatchResult:
        """Return the result for ``totals``, where lower is better and equal totals share the place."""
        return cls(tuple(totals), places_from_totals(totals))


def places_from_totals(totals: Sequence[int]) -> tuple[int, ...]:
    """Return each seat's place, 1 for the lowest total; equal totals share a place (1, 1, 3, ...)."""
    return tuple(1 + sum(1 for other in totals if other < t) for t in totals)


class Scoring(enum.Enum):
    """Which way a game's totals count (:attr:`Game.scoring`)."""

    LOWER_WINS = "lower"  # penalty points: the lowest total takes first place (Cabanga!, L.A.M.A.)
    HIGHER_WINS = "higher"  # points won: the highest total takes first place (Goofspiel)

    def places(self, totals: Sequence[int]) -> tuple[int, ...]:
        """Return each seat's place for ``totals``, 1 for the best; equal totals share a place (1, 1, 3, ...)."""
        if self is Scoring.LOWER_WINS:
            return places_from_totals(totals)
        return tuple(1 + sum(1 for other in totals if other > t) for t in totals)

    def better(self, a: int, b: int) -> bool:
        """Return whether total ``a`` is strictly better than total ``b``."""
        return a < b if self is Scoring.LOWER_WINS else a > b


@dataclass(frozen=True, slots=True)
class MatchOver(Event):
    """The match has ended: final totals and places (C16, C17, L12)."""

    kind: ClassVar[str] = "match_over"
    totals: tuple[int, ...]
    places: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "totals": list(self.totals), "places": list(self.places)}

    def describe(self, names: Sequence[str]) -> str:
        order = sorted(range(len(self.totals)), key=lambda s: (self.places[s], s))
        ranking = ", ".join(f"{self.places[s]}. {names[s]} ({self.totals[s]})" for s in order)
        return f"match over: {ranking}"


@dataclass(frozen=True, slots=True)
class RoundScored(Event):
    """A round has ended: each seat's points for the round and running totals."""

    kind: ClassVar[str] = "round_scored"
    round: int
    points: tuple[int, ...]
    totals: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "event": self.kind,
            "round": self.round,
            "points": list(self.points),
            "totals": list(self.totals),
        }

    def describe(self, names: Sequence[str]) -> str:
        parts = ", ".join(
            f"{names[s]} {self.points[s]:+d} = {self.totals[s]}" for s in range(len(self.points))
        )
        return f"round {self.round} scored: {parts}"


class FaultKind(enum.Enum):
    """Why a seat's decision was replaced by the default."""

    TIMEOUT = "timeout"  # no answer within the clock
    CRASH = "crash"  # the bot process died, or the bot raised
    DISCONNECT = "disconnect"  # the bot's connection went away
    MALFORMED = "malformed"  # an answer that does not parse
    ILLEGAL = "illegal"  # a well-formed answer that is not a legal choice
    BENCHED = "benched"  # not asked: the seat had too many faults in this match


@dataclass(frozen=True, slots=True)
class SeatFaulted(Event):
    """Public: ``seat``'s decision at this step was replaced by the default, for a fault of ``kind``.

    Every seat is told, before the events the step's decisions caused; the fault's detail is not (it may name
    a card of the faulty seat's hand), nor a fault in a sealed window (:meth:`arena.core.referee.MatchLog.fault`).
    The match's record keeps the whole :class:`arena.core.referee.Fault`.
    """

    kind: ClassVar[str] = "seat_faulted"
    seat: int
    fault: FaultKind

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "kind": self.fault.value}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} faulted ({self.fault.value}): the default is applied"


@dataclass(frozen=True, slots=True)
class Clock:
    """Time allowed to decide: ``deadline`` seconds per decision plus an optional per-match ``bank``.

    A decision may run past its deadline while the seat's bank lasts; the overrun is taken from the bank.
    """

    deadline: float = 1.0
    bank: float = 0.0

    def __post_init__(self) -> None:
        if not self.deadline > 0:
            raise ValueError(f"deadline must be positive seconds, got {self.deadline!r}")
        if not self.bank >= 0:
            raise ValueError(f"time bank must be zero or more seconds, got {self.bank!r}")


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """What a seat is told when a match starts."""

    match_id: str
    game: str
    seat: int
    names: tuple[str, ...]
    options: dict[str, Any]
    clock: Clock
    max_faults: int


class View(ABC):
    """What one seat may see at this moment (docs/rules.md G2): its own hand and public information only."""

    __slots__ = ()
    game: ClassVar[str]
    """The name of the game whose view this is (its codec encodes it)."""
    seat: int

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """Return the view as a JSON-ready dict, cards in text form."""


class MatchState(ABC):
    """One match of one game, from the deal to the final places.

    Subclasses keep their state private and mutable; everything they hand out is immutable.
    """

    game: ClassVar[str]

    def __init__(self, seats: int, seed: int) -> None:
        self.seats = seats
        self.seed = seed
        self._rng = random.Random(seed)
        self._log: list[Event] = []
        # per seat: (length of the public log when it happened, event) for what only that seat learns
        self._private: list[list[tuple[int, Event]]] = [[] for _ in range(seats)]
        self._over = False  # set once a MatchOver event is logged; asked at every step, so kept, not derived

    @abstractmethod
    def pending(self) -> tuple[Prompt, ...]:
        """Return one prompt per seat that must decide now, in seat order; empty once the match is over."""

    @abstractmethod
    def view(self, seat: int) -> View:
        """Return what ``seat`` may see now. Raises :class:`GameError` for a seat not at the table."""

    @abstractmethod
    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        """Apply checked decisions (one per pending prompt) and return the events that followed."""

    @abstractmethod
    def zones(self) -> dict[str, tuple[Any, ...]]:
        """Return every place a card can be, by name, with the cards in it (for invariant checks)."""

    @property
    @abstractmethod
    def totals(self) -> tuple[int, ...]:
        """Return every seat's running total."""

    def clone(self, rng: random.Random | None = None) -> Self:
        """Return a copy of this state to play on, for a search's world: its own hands, piles and generator, and
        an empty log. ``rng`` is the copy's generator for its later shuffles; default a copy of this state's (the
        slow part of a clone: a search that seeds a generator per world passes one).

        Raises :class:`GameError` for a game that does not offer copies (it has no :meth:`_copy_into`).
        """
        new = type(self).__new__(type(self))
        new.seats = self.seats
        new.seed = self.seed
        if rng is None:
            rng = random.Random.__new__(random.Random)
            rng.setstate(self._rng.getstate())
        new._rng = rng
        new._log = []
        new._private = [[] for _ in range(self.seats)]
        new._over = self._over
        self._copy_into(new)
        return new

    def _copy_into(self, new: Any) -> None:
        """Copy the game's own state into ``new`` (a bare instance of this class), every mutable part anew."""
        raise GameError(f"{self.game} does not offer copies of a match state")

    def opens_window(self) -> bool:
        """Return whether the step just applied opened a window for a sealed decision of several seats.

        Public: it is true whenever the public state allows such a decision (Cabanga!: a play that leaves a
        gap in its row), whether or not a seat then holds a card for it and is asked. The referee holds such a
        window the same length either way, when the operator asks for it. Default: never.
        """
        return False

    def in_window(self) -> bool:
        """Return whether the pending step is the sealed decision of a window opened by the step before."""
        return False

    @property
    def events(self) -> Sequence[Event]:
        """Return the public history of the match so far, oldest first."""
        return self._log

    def private_events(self, seat: int) -> Sequence[tuple[int, Event]]:
        """Return what only ``seat`` has learnt (its own penalty cards, the card it drew), oldest first.

        Each entry is ``(position, event)``: the event happened after the first ``position`` public events
        (:attr:`events`). Never part of the public log, never shown to another seat (docs/rules.md G2).
        """
        return self._private[seat]

    @property
    def over(self) -> bool:
        """Return whether the match has ended."""
        return self._over

    @property
    def result(self) -> MatchResult | None:
        """Return the final totals and places, or ``None`` while the match runs."""
        if not self.over:
            return None
        last = self._log[-1]
        assert isinstance(last, MatchOver)
        return MatchResult(last.totals, last.places)

    def apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        """Apply one decision per pending prompt and return the public events that followed.

        ``decisions`` maps each prompted seat to its decision; every prompted seat must be present and no
        other. Raises :class:`IllegalDecisionError` (and changes nothing) when a seat is missing or extra,
        or a decision is not legal.
        """
        prompts = self.pending()
        if not prompts:
            raise IllegalDecisionError(f"the {self.game} match is over; no decision is pending")
        if len(decisions) != len(prompts):
            self._wrong_seats(decisions, prompts)
        for prompt in prompts:
            decision = decisions.get(prompt.seat)
            if decision is None:
                self._wrong_seats(decisions, prompts)
            prompt.check(decision)
        return self.apply_trusted(decisions)

    def apply_trusted(self, decisions: Mapping[int, Decision]) -> list[Event]:
        """:meth:`apply` without its checks, for a caller whose decisions are legal by construction: one per pending
        prompt, each one of the prompt's choices or a subset of its candidates in their order, or its default.

        For fast paths that build their decisions from the prompts themselves (:mod:`arena.train.selfplay`'s batch
        takes an action only where its mask allows it), where checking again costs a good part of a step. Nothing is
        checked: a decision that is not legal leaves the match in a state the rules never reach.
        """
        events = self._apply(decisions)
        self._log.extend(events)
        if events and type(events[-1]) is MatchOver:
            self._over = True
        return events

    @staticmethod
    def _wrong_seats(decisions: Mapping[int, Decision], prompts: Sequence[Prompt]) -> NoReturn:
        asked = [p.seat for p in prompts]
        raise IllegalDecisionError(
            f"decisions for seats {sorted(decisions)!r} do not match the prompted seats {asked!r}"
        )

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.seats:
            raise GameError(f"seat {seat!r} is not at this {self.seats}-seat {self.game} table")


class Options(Protocol):
    """A game's validated match options (a frozen dataclass per game)."""

    def to_json(self) -> dict[str, Any]: ...


class Game(ABC):
    """A game: its name, seat range, options, cards, and how to start a match."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_seats: ClassVar[int]
    max_seats: ClassVar[int]
    kinds: ClassVar[tuple[DecisionKind, ...]]
    """The decision kinds its prompts have: a Python bot answers each with its method of that name."""
    scoring: ClassVar[Scoring] = Scoring.LOWER_WINS
    """Which way its totals count. Its :class:`MatchOver` places say it; what compares totals across matches (the
    head-to-head page) reads it here."""
    hidden_order: ClassVar[tuple[str, ...]] = ()
    """The zones (names of :meth:`MatchState.zones`) whose order no seat may learn: its face-down piles. The
    hiding tests check every message against them; hands are secret anyway (G2)."""

    @abstractmethod
    def options(self, raw: Mapping[str, Any] | None = None) -> Options:
        """Return validated options from ``raw`` (option name to value, values may be text), defaults filled.

        Raises :class:`OptionError` naming the bad option and value.
        """

    @abstractmethod
    def _new(self, options: Any, seats: int, seed: int) -> MatchState:
        """Return a new match from checked arguments."""

    @abstractmethod
    def deck(self, options: Any, seats: int) -> tuple[Any, ...]:
        """Return every card of a match with ``options`` at ``seats`` seats once (for invariant checks)."""

    @abstractmethod
    def parse_card(self, text: str) -> Any:
        """Return the card written as ``text``. Raises :class:`ParseError`."""

    def new_match(self, seats: int, seed: int, options: Options | None = None) -> MatchState:
        """Return a new match for ``seats`` seats dealt from ``seed`` (an int >= 0).

        Raises :class:`OptionError` for an unsupported seat count or a bad seed.
        """
        if isinstance(seats, bool) or not isinstance(seats, int):
            raise OptionError(f"seats must be an integer, got {seats!r}")
        if not self.min_seats <= seats <= self.max_seats:
            raise OptionError(
                f"{self.title} is played by {self.min_seats} to {self.max_seats} seats, not {seats!r}"
            )
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise OptionError(f"seed must be an integer >= 0, got {seed!r}")
        return self._new(options if options is not None else self.options(), seats, seed)


def parse_int_option(name: str, value: Any, *, minimum: int) -> int:
    """Return ``value`` (an int or its text) as an int >= ``minimum``. Raises :class:`OptionError`."""
    if isinstance(value, bool):
        raise OptionError(f"option {name} must be an integer, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise OptionError(f"option {name} must be an integer, got {value!r}") from None
    if not isinstance(value, int):
        raise OptionError(f"option {name} must be an integer, got {value!r}")
    if value < minimum:
        raise OptionError(f"option {name} must be at least {minimum}, got {value!r}")
    return value


def check_known_options(game: str, raw: Mapping[str, Any], known: Iterable[str]) -> None:
    """Raise :class:`OptionError` if ``raw`` names an option that ``game`` does not have."""
    known = sorted(known)
    for key in raw:
        if key not in known:
            raise OptionError(f"{game} has no option {key!r}; its options are {', '.join(known)}")


def random_decision(prompt: Prompt, rng: random.Random) -> Decision:
    """Return a uniformly random legal decision: one random choice, or each candidate with probability 1/2."""
    if prompt.pick is Pick.ONE:
        return (prompt.choices[rng.randrange(len(prompt.choices))],)
    return tuple(a for a in prompt.choices if rng.random() < 0.5)
