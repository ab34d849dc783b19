"""Tiny Duel's rules: each seat is dealt ``cards`` cards of 1..9 and lays them one a turn; the highest sum wins.

T1 every seat gets ``cards`` cards (option, default 3) from a shuffled deck holding 1..9 once per seat.
T2 seats lay one card of their hand in turn, seat 0 first; a lay is public.
T3 when every hand is empty, each seat scores the sum it laid; the HIGHEST total wins, equal totals share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from arena.games.base import (
    Decision,
    Event,
    Game,
    MatchOver,
    MatchState,
    Pick,
    Prompt,
    RoundScored,
    Scoring,
    View,
    check_known_options,
    parse_int_option,
)


@dataclass(frozen=True, slots=True)
class Card:
    value: int

    @property
    def text(self) -> str:
        return str(self.value)


CARDS = tuple(Card(v) for v in range(1, 10))


@dataclass(frozen=True, slots=True)
class TinyOptions:
    cards: int = 3

    def to_json(self) -> dict[str, Any]:
        return {"cards": self.cards}


@dataclass(frozen=True, slots=True)
class Dealt(Event):
    kind: ClassVar[str] = "round_started"
    round: int
    hand_size: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "round": self.round, "hand_size": self.hand_size}

    def describe(self, names: Sequence[str]) -> str:
        return f"round {self.round}: {self.hand_size} cards each"


@dataclass(frozen=True, slots=True)
class Laid(Event):
    kind: ClassVar[str] = "laid"
    seat: int
    card: Card

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "card": self.card.text}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} lays {self.card.text}"


@dataclass(frozen=True, slots=True)
class TinyView(View):
    game: ClassVar[str] = "tiny"
    seat: int
    active: int | None
    hand: tuple[Card, ...]
    laid: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "round": 1, "active": self.active, "hand": [c.text for c in self.hand],
                "laid": list(self.laid)}


def places_highest_first(totals: Sequence[int]) -> tuple[int, ...]:
    return tuple(1 + sum(1 for other in totals if other > t) for t in totals)


class TinyState(MatchState):
    game: ClassVar[str] = "tiny"

    def __init__(self, options: TinyOptions, seats: int, seed: int) -> None:
        super().__init__(seats, seed)
        self.options = options
        deck = [c for c in CARDS for _ in range(seats)]
        self._rng.shuffle(deck)
        self._hands = [sorted(deck[s * options.cards:(s + 1) * options.cards], key=lambda c: c.value)
                       for s in range(seats)]
        self._deck = deck[seats * options.cards:]
        self._laid: list[list[Card]] = [[] for _ in range(seats)]
        self._active = 0
        self._log.append(Dealt(1, options.cards))

    def pending(self) -> tuple[Prompt, ...]:
        if self.over:
            return ()
        hand = tuple(self._hands[self._active])
        return (Prompt(self._active, "lay", Pick.ONE, hand, (hand[0],)),)

    def view(self, seat: int) -> TinyView:
        self._check_seat(seat)
        return TinyView(seat, None if self.over else self._active, tuple(self._hands[seat]), self.totals)

    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        (card,) = decisions[self._active]
        assert isinstance(card, Card)
        self._hands[self._active].remove(card)
        self._laid[self._active].append(card)
        events: list[Event] = [Laid(self._active, card)]
        self._active = (self._active + 1) % self.seats
        if not any(self._hands):
            totals = self.totals
            events += [RoundScored(1, totals, totals), MatchOver(totals, places_highest_first(totals))]
        return events

    def zones(self) -> dict[str, tuple[Any, ...]]:
        zones: dict[str, tuple[Any, ...]] = {f"hand {s}": tuple(h) for s, h in enumerate(self._hands)}
        zones["deck"] = tuple(self._deck)
        zones["laid"] = tuple(c for laid in self._laid for c in laid)
        return zones

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(sum(c.value for c in laid) for laid in self._laid)


class Tiny(Game):
    name: ClassVar[str] = "tiny"
    title: ClassVar[str] = "Tiny Duel"
    min_seats: ClassVar[int] = 2
    max_seats: ClassVar[int] = 3
    kinds: ClassVar[tuple[str, ...]] = ("lay",)
    scoring: ClassVar[Scoring] = Scoring.HIGHER_WINS  # T3

    def options(self, raw: Mapping[str, Any] | None = None) -> TinyOptions:
        raw = dict(raw or {})
        check_known_options(self.title, raw, ["cards"])
        return TinyOptions(parse_int_option("cards", raw.get("cards", 3), minimum=1))

    def _new(self, options: Any, seats: int, seed: int) -> TinyState:
        return TinyState(options, seats, seed)

    def deck(self, options: Any, seats: int) -> tuple[Any, ...]:
        return tuple(c for c in CARDS for _ in range(seats))  # T1: 1..9 once per seat

    def parse_card(self, text: str) -> Card:
        return CARDS[int(text) - 1]


TINY = Tiny()
