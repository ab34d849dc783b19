"""``arena games --check``: the checks every game must pass, a built-in one or a plug-in, shipped with the library.

A game meets the referee, the wire and the ladder only through its interface (arena/games/base.py) and its codec;
these checks hold it to that interface's promises, from the data it provides:

- ``seats``: a match starts at every seat count of its range and prompts a seat; none outside the range;
- ``defaults``: the default of every prompt (what the referee applies to a seat that faults) is a legal decision,
  and a match played by defaults alone ends;
- ``playouts``: random matches at every seat count end within a step cap, prompt seats in seat order, keep every
  card in exactly one place at every step (``zones()`` against ``deck()``), and end with totals that add up round
  by round and places by the game's own scoring;
- ``determinism`` (G1): the same seed and decisions give the same events, and different seeds deal differently;
- ``views`` (G2): a seat's view is rebuilt from what it holds and was told: wherever a seat holds the same cards
  and has been told the same public events and the same private ones (in matches of other seeds, or in a copy of
  the match whose shuffles to come differ, where the game offers copies), it sees the same view;
- ``hiding`` (G2): no view, and no request as the wire carries it, holds another seat's hand, the order of a
  face-down pile (the game's ``hidden_order``) or the seed;
- ``codec``: every view, prompt and event survives the game's codec unchanged;
- ``golden``: the game's recorded match (:data:`GOLDEN` in its folder, a replay with its events) re-runs to the
  same events. A built-in game keeps one; a plug-in game may (without one the check is skipped).

Every match is seeded from the game's name and seat count, and every decision from the match's seed and step, so
a failure names a seed and a step that fail again. Pure but for reading the golden file: no process, no socket.
"""

from __future__ import annotations

import enum
import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from arena.core import replay as replay_format
from arena.core.referee import MatchRecord, Request, random_seat, referee_match
from arena.games import game_folder
from arena.games.base import (
    Decision,
    Event,
    Game,
    GameError,
    IllegalDecisionError,
    MatchOver,
    MatchState,
    OptionError,
    Options,
    Prompt,
    RoundScored,
    decision_text,
    random_decision,
)
from arena.games.codec import GameCodec
from arena.protocol import codec
from arena.v2 import arena_pb2 as pb

GOLDEN = "golden.json"
"""The game's recorded match, in its folder: a replay (``arena-replay/1``) with its events, which the game must
re-run to the same events (:func:`record_golden` writes one)."""
CHECKS = ("seats", "defaults", "playouts", "determinism", "views", "hiding", "codec", "golden")
"""The checks, in the order they run and are reported."""


class Status(enum.Enum):
    """How a check ended."""

    OK = "ok"
    FAILED = "FAILED"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One check of one game: how it ended, and what it checked or what does not hold."""

    check: str
    status: Status
    detail: str

    def line(self) -> str:
        """Return the outcome as one line: ``ok       views: ...``."""
        return f"{self.status.value:<8} {self.check}: {self.detail}"


class CheckFailed(Exception):
    """What does not hold, and where (a seat count, a seed, a step)."""


@dataclass(frozen=True, slots=True)
class Budget:
    """How much the checks play: random matches per seat count, and how many of them are checked at every step."""

    playouts: int = 6
    """Random matches per seat count (totals, places, defaults, the end); the first of every ``deep_every`` is also
    checked at every step (cards, views, hiding, codec)."""
    deep_every: int = 2
    determinism: int = 3
    """Matches per seat count played twice from the same seed and decisions."""
    deals: int = 200
    deal_steps: int = 3
    """Matches per seat count of which the views check looks at the first steps only: where cards repeat, two deals
    may give a seat the same hand, the more so the more deals."""
    step_limit: int = 20_000
    """Steps after which a match that has not ended fails (far beyond any real match)."""


def check_game(game: Game, budget: Budget = Budget(), options: Options | None = None) -> list[Outcome]:
    """Run every check (:data:`CHECKS`) on ``game`` with ``options`` (default: its defaults); return their outcomes.

    A game whose code raises during a check fails that check with what it raised; nothing here raises.
    """
    opts = options if options is not None else game.options()
    outcomes: dict[str, Outcome] = {}
    outcomes["seats"] = _outcome("seats", _check_seats, game, opts, budget)
    outcomes["defaults"] = _outcome("defaults", _check_defaults_end, game, opts, budget)
    outcomes.update(_Playouts(game, opts, budget).run())
    outcomes["determinism"] = _outcome("determinism", _check_determinism, game, opts, budget)
    outcomes["golden"] = _check_golden(game)
    return [outcomes[name] for name in CHECKS]


def _outcome(name: str, run: Callable[..., str], *args: Any) -> Outcome:
    try:
        return Outcome(name, Status.OK, run(*args))
    except CheckFailed as exc:
        return Outcome(name, Status.FAILED, str(exc))
    except Exception as exc:  # the game's own code raised: that is what fails the check
        return Outcome(name, Status.FAILED, f"the game raised {type(exc).__name__}: {exc}")


def seat_counts(game: Game) -> range:
    """Return the game's seat counts."""
    return range(game.min_seats, game.max_seats + 1)


def _seeds(game: Game, seats: int, purpose: str, count: int) -> list[int]:
    """Return ``count`` large seeds for ``purpose`` (large: a leaked seed cannot pass for a count of something)."""
    rng = random.Random(f"gamecheck/{purpose}/{game.name}/{seats}")
    return [10**12 + rng.randrange(10**12) for _ in range(count)]


def choose(seed: int, step: int, prompt: Prompt) -> Decision:
    """Return the random decision of ``prompt``'s seat at ``step`` of the match of ``seed``: the same whenever the
    same seat is offered the same at the same step, so that two matches that coincide decide alike."""
    return random_decision(prompt, random.Random(f"{seed}/{step}/{prompt.seat}"))


# ------------------------------------------------------------------------------------------------- seats


def _check_seats(game: Game, options: Options, budget: Budget) -> str:
    for seats in seat_counts(game):
        state = game.new_match(seats, 1, options)
        if state.seats != seats or state.over or not state.pending():
            raise CheckFailed(f"a new {seats}-seat match prompts no seat")
    for seats in (game.min_seats - 1, game.max_seats + 1):
        try:
            game.new_match(seats, 1, options)
        except OptionError:
            continue
        raise CheckFailed(f"a {seats}-seat match starts, outside the game's {game.min_seats}-{game.max_seats} seats")
    return f"{game.min_seats}-{game.max_seats} seats start; {game.min_seats - 1} and {game.max_seats + 1} refused"


# ---------------------------------------------------------------------------------------------- defaults


def check_default(prompt: Prompt, where: str) -> None:
    """Raise :class:`CheckFailed` when ``prompt``'s default is not a legal decision."""
    try:
        prompt.check(prompt.default)
    except IllegalDecisionError as exc:
        raise CheckFailed(f"{where}: seat {prompt.seat}'s default {decision_text(prompt.default)!r} for "
                          f"{prompt.kind!r} is not legal ({exc})") from None


def _check_defaults_end(game: Game, options: Options, budget: Budget) -> str:
    """Every seat count: a match where every seat plays its default ends (a faulted seat is played so)."""
    steps = 0
    for seats in seat_counts(game):
        seed = _seeds(game, seats, "defaults", 1)[0]
        state = game.new_match(seats, seed, options)
        for step in range(budget.step_limit):
            if state.over:
                break
            prompts = state.pending()
            for prompt in prompts:
                check_default(prompt, f"{seats} seats, seed {seed}, step {step}")
            state.apply({p.seat: p.default for p in prompts})
            steps += 1
        else:
            raise CheckFailed(f"{seats} seats, seed {seed}: a match of defaults does not end in {budget.step_limit} "
                              "steps")
    return f"legal at every prompt; matches of defaults end ({steps} steps)"


# --------------------------------------------------------------------------------------------- playouts


class _Trace:
    """A match being played, with running digests of what each seat has been told (for the views check)."""

    def __init__(self, state: MatchState, public: Any = None, private: list[Any] | None = None,
                 offset: int = 0) -> None:
        self.state = state
        self.public = public if public is not None else hashlib.sha256()
        self.private = private if private is not None else [hashlib.sha256() for _ in range(state.seats)]
        self.offset = offset
        """Public events before the state's own log (a copy starts with an empty log)."""
        self.seen = 0
        self.seen_private = [0] * state.seats
        self.step_start = 0
        """Where the public events of the last step begin (the deal's, before the first step)."""
        self._digest()

    def _digest(self) -> None:
        events = self.state.events
        for event in events[self.seen:]:
            self.public.update(_canonical(event.to_json()))
        self.seen = len(events)
        for seat in range(self.state.seats):
            private = self.state.private_events(seat)
            for position, event in private[self.seen_private[seat]:]:
                self.private[seat].update(_canonical([self.offset + position, event.to_json()]))
            self.seen_private[seat] = len(private)

    def apply(self, decisions: Mapping[int, Decision]) -> None:
        self.step_start = len(self.state.events)
        self.state.apply(decisions)
        self._digest()

    def last_told(self, seat: int) -> tuple[Event, ...]:
        """Return the public events of the last step, with ``seat``'s private ones put where they happened: what
        the seat is told with its next request."""
        events = self.state.events
        told: list[Event] = []
        at = self.step_start
        for position, event in self.state.private_events(seat):
            if position >= self.step_start:
                told += events[at:position]
                at = max(at, position)
                told.append(event)
        return (*told, *events[at:])

    def told(self, seat: int) -> tuple[bytes, bytes]:
        """Return digests of the public events and of ``seat``'s private ones so far."""
        return self.public.digest(), self.private[seat].digest()

    def copy(self, rng: random.Random) -> _Trace:
        """Return a copy of the match whose shuffles to come differ (:meth:`MatchState.clone` with ``rng``).
        Raises :class:`GameError` for a game that offers no copies."""
        return _Trace(self.state.clone(rng), self.public.copy(), [h.copy() for h in self.private],
                      self.offset + self.seen)


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def _text(value: Any) -> Any:
    return value.text if hasattr(value, "text") else value


def _hand(zones: Mapping[str, Sequence[Any]], seat: int, where: str) -> list[str]:
    """Return the texts of ``seat``'s hand in ``zones`` (its zone ``"hand SEAT"``). Raises :class:`CheckFailed`."""
    hand = zones.get(f"hand {seat}")
    if hand is None:
        raise CheckFailed(f"{where}: zones() names no 'hand {seat}': the checks find each seat's hand by that name")
    return [str(_text(c)) for c in hand]


class _Views:
    """The views check's memory: what each seat saw, by what it held and was told."""

    def __init__(self) -> None:
        self.seen: dict[tuple[Any, ...], tuple[bytes, str, bytes]] = {}
        self.compared = 0
        """Situations met again where the cards lay otherwise (one met again with every card in the same place
        proves nothing, and is not counted)."""

    def note(self, trace: _Trace, where: str) -> None:
        state = trace.state
        zones = state.zones()
        shown = _canonical([[name, [str(_text(c)) for c in cards]] for name, cards in sorted(zones.items())])
        for seat in range(state.seats):
            held = tuple(sorted(_hand(zones, seat, where)))
            key = (state.seats, seat, held, *trace.told(seat))
            view = _canonical(state.view(seat).to_json())
            first = self.seen.setdefault(key, (view, where, shown))
            if first[1] == where:
                continue
            self.compared += first[2] != shown
            if first[0] != view:
                raise CheckFailed(f"seat {seat} holds the same cards and was told the same in {first[1]} and in "
                                  f"{where}, yet sees different views: {first[0].decode()} and {view.decode()}")


class _Playouts:
    """The random matches and the checks that look at every step of them: defaults, playouts, views, hiding,
    codec. A check that fails keeps its first failure and is not run again."""

    def __init__(self, game: Game, options: Options, budget: Budget) -> None:
        self.game = game
        self.options = options
        self.budget = budget
        self.failed: dict[str, str] = {}
        self.matches = self.steps = self.requests = self.copies = 0
        self.views = _Views()
        self.codec: GameCodec | None = None
        try:
            self.codec = codec.codec_for(game.name)
        except GameError as exc:
            self.failed["codec"] = str(exc)
        self.packed = packed_types(self.codec) if self.codec is not None else {}

    def guarded(self, name: str, run: Callable[..., None], *args: Any) -> None:
        """Run ``run(*args)`` for check ``name`` unless it failed already; note its failure."""
        if name in self.failed:
            return
        try:
            run(*args)
        except CheckFailed as exc:
            self.failed[name] = str(exc)
        except Exception as exc:  # the game's own code raised
            self.failed[name] = f"the game raised {type(exc).__name__}: {exc}"

    def run(self) -> dict[str, Outcome]:
        game, budget = self.game, self.budget
        for seats in seat_counts(game):
            for index, seed in enumerate(_seeds(game, seats, "playouts", budget.playouts)):
                deep = index % budget.deep_every == 0
                trace = _Trace(game.new_match(seats, seed, self.options))
                where = f"{seats} seats, seed {seed}"
                copy = None
                if deep and "views" not in self.failed:
                    try:  # a copy at the deal: the same hands, other shuffles to come
                        copy = trace.copy(random.Random(f"copy/{seed}"))
                        self.copies += 1
                    except GameError:
                        pass
                if self.play(trace, seed, where, deep=deep, main=True):
                    self.matches += 1
                    self.guarded("playouts", check_end, game, trace.state, where)
                if copy is not None:
                    self.play(copy, seed, f"a copy of {where}", deep=True, main=False)
            for seed in _seeds(game, seats, "deals", budget.deals):  # the first steps of many deals
                if "views" in self.failed:
                    break
                trace = _Trace(game.new_match(seats, seed, self.options))
                for step in range(budget.deal_steps):
                    self.guarded("views", self.views.note, trace, f"{seats} seats, seed {seed}, step {step}")
                    if trace.state.over:
                        break
                    trace.apply({p.seat: choose(seed, step, p) for p in trace.state.pending()})
        return self.outcomes()

    def play(self, trace: _Trace, seed: int, where: str, *, deep: bool, main: bool) -> bool:
        """Play ``trace``'s match to its end by :func:`choose`; return whether it ended. ``deep``: the views are
        noted at every step, and, in the ``main`` match (not a copy), cards, views and requests checked."""
        state = trace.state
        for step in range(self.budget.step_limit):
            here = f"{where}, step {step}"
            if deep:
                self.guarded("views", self.views.note, trace, here)
            if state.over:
                return True
            prompts = state.pending()
            if not prompts or [p.seat for p in prompts] != sorted({p.seat for p in prompts}):
                self.failed.setdefault("playouts", f"{here}: the match is not over and prompts seats "
                                                   f"{[p.seat for p in prompts]} (one prompt a seat, in seat order)")
                return False
            for prompt in prompts:
                self.guarded("defaults", check_default, prompt, here)
            if deep and main:
                self.guarded("playouts", check_cards_in_one_place, self.game, state, here)
                for prompt in prompts:
                    self.guarded("hiding", check_view_hides, self.game, state, prompt.seat, here)
                    if self.codec is not None:
                        self.requests += 1
                        self.guarded("hiding", self.check_request, trace, prompt, here)
            decisions = {p.seat: choose(seed, step, p) for p in prompts}
            try:
                trace.apply(decisions)
            except Exception as exc:
                said = {s: decision_text(d) for s, d in decisions.items()}
                self.failed.setdefault("playouts", f"{here}: the legal decisions {said} raised "
                                                   f"{type(exc).__name__}: {exc}")
                return False
            self.steps += main
        self.failed.setdefault("playouts", f"{where}: no end after {self.budget.step_limit} steps")
        return False

    def check_request(self, trace: _Trace, prompt: Prompt, where: str) -> None:
        """The request ``prompt``'s seat is sent now, as the wire carries it: it hides what it must (``hiding``:
        raises) and decodes to the very view, prompt and events (``codec``: noted)."""
        assert self.codec is not None
        state, seat = trace.state, prompt.seat
        view = state.view(seat)
        told = trace.last_told(seat)
        data = codec.request_bytes(Request("gamecheck", 0, prompt, view, told, 1.0))
        message = pb.ArenaMessage.FromString(data)
        check_message_hides(self.game, data, message, state, seat, self.packed, where)
        self.guarded("codec", check_decodes, message.request, view, prompt, told, self.codec, where)

    def outcomes(self) -> dict[str, Outcome]:
        cards = "cards, " if self.budget.deep_every <= self.budget.playouts else ""
        copies = f" and {self.copies} copies with other shuffles to come" if self.copies else ""
        details = {
            "playouts": f"{self.matches} random matches end; {cards}turns, totals and places hold ({self.steps} "
                        "steps)",
            "views": f"{self.views.compared} situations met again (other seeds{copies}): the same hand and events, "
                     "the same view",
            "hiding": f"no view, and none of {self.requests} requests on the wire, shows another hand, a face-down "
                      "order or the seed",
            "codec": f"{self.requests} requests decode to their view, prompt and events",
        }
        outcomes = {name: Outcome(name, Status.FAILED, self.failed[name]) if name in self.failed
                    else Outcome(name, Status.OK, detail) for name, detail in details.items()}
        if "defaults" in self.failed:  # else reported with the matches of defaults (:func:`_check_defaults_end`)
            outcomes["defaults"] = Outcome("defaults", Status.FAILED, self.failed["defaults"])
        if "views" not in self.failed and self.views.compared == 0:
            outcomes["views"] = Outcome("views", Status.SKIPPED, "no situation of a seat was met again with other "
                                        "cards lying otherwise: nothing compared (copies of a match need "
                                        "MatchState.clone)")
        return outcomes


def check_decodes(request: pb.DecisionRequest, view: Any, prompt: Prompt, told: Sequence[Event],
                  game_codec: GameCodec, where: str) -> None:
    """Raise :class:`CheckFailed` unless ``request`` decodes to ``view``, ``prompt`` and the events ``told``."""
    seat = prompt.seat
    try:
        if codec.view_from_proto(request, game_codec) != view:
            raise CheckFailed(f"{where}: seat {seat}'s view does not survive the codec: {view.to_json()}")
        if codec.prompt_from_proto(request, seat, game_codec) != prompt:
            raise CheckFailed(f"{where}: seat {seat}'s prompt does not survive the codec: {prompt.choice_texts()}")
        if [codec.event_from_proto(e, game_codec) for e in request.events] != list(told):
            raise CheckFailed(f"{where}: the events told seat {seat} do not survive the codec: "
                              f"{[e.to_json() for e in told]}")
    except GameError as exc:  # a CodecError: what it encoded does not decode
        raise CheckFailed(f"{where}: seat {seat}'s request does not decode: {exc}") from None


def check_cards_in_one_place(game: Game, state: MatchState, where: str) -> None:
    """Raise :class:`CheckFailed` unless every card of the deck is in exactly one of the state's zones."""
    placed = Counter(card for cards in state.zones().values() for card in cards)
    deck = Counter(_deck(game, state))
    if placed != deck:
        extra = [_text(c) for c in (placed - deck).elements()]
        missing = [_text(c) for c in (deck - placed).elements()]
        raise CheckFailed(f"{where}: cards not each in exactly one place: {extra} extra, {missing} missing")


def check_end(game: Game, state: MatchState, where: str) -> None:
    """Raise :class:`CheckFailed` unless an ended match's totals add up round by round to its final totals and
    its places are the game's scoring of them."""
    if state.pending():
        raise CheckFailed(f"{where}: the match is over but prompts seats")
    running = [0] * state.seats
    rounds = 0
    for event in state.events:
        if isinstance(event, RoundScored):
            rounds += 1
            running = [t + p for t, p in zip(running, event.points, strict=True)]
            if list(event.totals) != running:
                raise CheckFailed(f"{where}: round {event.round}'s totals {list(event.totals)} are not the sum of "
                                  f"its points, {running}")
    final = state.events[-1]
    if rounds < 1 or not isinstance(final, MatchOver):
        raise CheckFailed(f"{where}: the match ends without a scored round and a MatchOver last")
    if not list(final.totals) == running == list(state.totals):
        raise CheckFailed(f"{where}: the final totals {list(final.totals)} are not the rounds' {running}")
    if final.places != game.scoring.places(final.totals):
        raise CheckFailed(f"{where}: places {list(final.places)} are not the game's scoring of the totals "
                          f"{list(final.totals)}")
    if state.result is None or state.result.totals != final.totals:
        raise CheckFailed(f"{where}: the match's result is not its MatchOver")


def _options(game: Game, state: MatchState) -> Any:
    options = getattr(state, "options", None)
    return options if options is not None else game.options()


# ------------------------------------------------------------------------------------------ determinism


def _check_determinism(game: Game, options: Options, budget: Budget) -> str:
    runs = 0
    for seats in seat_counts(game):
        deals = set()
        for seed in _seeds(game, seats, "determinism", budget.determinism):
            state = game.new_match(seats, seed, options)
            deals.add(_canonical([[name, [_text(c) for c in cards]] for name, cards in state.zones().items()]))
            log = []
            for step in range(budget.step_limit):
                if state.over:
                    break
                decisions = {p.seat: choose(seed, step, p) for p in state.pending()}
                log.append(decisions)
                state.apply(decisions)
            again = game.new_match(seats, seed, options)
            for step, decisions in enumerate(log):
                again.apply(decisions)
                if len(again.events) > len(state.events) or again.events != state.events[:len(again.events)]:
                    raise CheckFailed(f"{seats} seats, seed {seed}: the same seed and decisions give other events "
                                      f"at step {step}")
            if [e.to_json() for e in again.events] != [e.to_json() for e in state.events]:
                raise CheckFailed(f"{seats} seats, seed {seed}: the same seed and decisions give other events")
            runs += 1
        if budget.determinism > 1 and len(deals) == 1:
            raise CheckFailed(f"{seats} seats: {budget.determinism} seeds deal the same cards: the seed is not used")
    return f"{runs} matches re-run the same from seed and decisions; seeds deal differently"


# ------------------------------------------------------------------------------------------------ hiding


def _lists(node: Any) -> list[list[Any]]:
    """Every list found anywhere in a JSON-ready value."""
    found: list[list[Any]] = []
    if isinstance(node, dict):
        for child in node.values():
            found.extend(_lists(child))
    elif isinstance(node, list):
        found.append(node)
        for child in node:
            found.extend(_lists(child))
    return found


def _scalars(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for child in node.values() for x in _scalars(child)] + list(node)
    if isinstance(node, list):
        return [x for child in node for x in _scalars(child)]
    return [node]


def _deck_ranks(game: Game, state: MatchState) -> dict[Any, int]:
    """Each card's first place in the game's deck, counted from its end."""
    deck = _deck(game, state)
    return {card: len(deck) - i for i, card in enumerate(reversed(deck))}


def _deck(game: Game, state: MatchState) -> tuple[Any, ...]:
    """The game's deck for ``state``'s options and seats (kept: asked at every step)."""
    options = _options(game, state)
    key = (game, state.seats, _canonical(options.to_json()) if hasattr(options, "to_json") else repr(options))
    deck = _decks.get(key)
    if deck is None:
        deck = _decks[key] = tuple(game.deck(options, state.seats))
    return deck


_decks: dict[tuple[Game, int, bytes | str], tuple[Any, ...]] = {}


def in_order(ranks: Sequence[int]) -> bool:
    """Whether ``ranks`` rise or fall: a pile in the deck's order is in the order a view lists a set of cards in
    (a hand, the prizes to come), so a list in that order cannot show the pile's order."""
    return list(ranks) == sorted(ranks) or list(ranks) == sorted(ranks, reverse=True)


def check_view_hides(game: Game, state: MatchState, seat: int, where: str) -> None:
    """G2: raise :class:`CheckFailed` unless the view of ``seat`` holds its own hand, and no other hand, no order
    of a face-down pile (the game's ``hidden_order``), no seed."""
    view = state.view(seat).to_json()
    zones = state.zones()
    own = sorted(_hand(zones, seat, where))
    lists = [[_text(x) for x in lst] for lst in _lists(view)]
    if not any(sorted(map(str, lst)) == own for lst in lists):
        raise CheckFailed(f"{where}: seat {seat}'s view does not hold its own hand {own}")
    rank = _deck_ranks(game, state)
    for name, cards in zones.items():
        hand = name.startswith("hand ")
        if name == f"hand {seat}" or len(cards) < 2 or not (hand or name in game.hidden_order):
            continue  # the other zones are public
        secret = [_text(c) for c in cards]
        if sorted(map(str, secret)) == own:
            continue  # an identical multiset of cards cannot be told apart
        if not hand and in_order([rank[c] for c in cards]):
            continue  # the pile's order is the order of the set of its cards, which may be public
        for lst in lists:
            if lst == secret or lst == secret[::-1]:
                raise CheckFailed(f"{where}: seat {seat}'s view shows {name!r}: {lst}")
            if hand and Counter(map(str, lst)) == Counter(map(str, secret)):
                raise CheckFailed(f"{where}: seat {seat}'s view shows {name!r}: {lst}")
    scalars = _scalars(view)
    if state.seed in scalars or "seed" in scalars:
        raise CheckFailed(f"{where}: seat {seat}'s view shows the seed")


def packed_types(game_codec: GameCodec) -> dict[str, type[Message]]:
    """Return every message a ``google.protobuf.Any`` may carry in a match of ``game_codec``'s game, by type URL: the
    game's view and events, and the events every game shares."""
    types: dict[str, type[Message]] = {url: message for message, url in codec.TYPE_URLS.items()}
    types[game_codec.view_url] = game_codec.view_message
    types.update({url: event.message for url, event in game_codec.events_by_url.items()})
    return types


def fields(message: Message, packed: Mapping[str, type[Message]]) -> Iterator[tuple[str, Any]]:
    """Yield (name, value) for every set field of ``message`` and of its sub-messages (a packed one unpacked, by
    its type in ``packed``), lists whole. Raises :class:`CheckFailed` for a packed message of another type."""
    if isinstance(message, AnyMessage):
        kind = packed.get(message.type_url)
        if kind is None:
            raise CheckFailed(f"an unknown message type is on the wire: {message.type_url}")
        message = kind.FromString(message.value)
    for descriptor, value in message.ListFields():
        if descriptor.message_type is not None and descriptor.message_type.GetOptions().map_entry:
            yield from ((f"{descriptor.name}[{k}]", v) for k, v in value.items())
        elif descriptor.message_type is not None:
            for child in (value if descriptor.is_repeated else [value]):
                yield from fields(child, packed)
        else:
            yield descriptor.name, list(value) if descriptor.is_repeated else value


def varint(value: int) -> bytes:
    """Return ``value`` as protobuf writes an unsigned integer."""
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def check_message_hides(game: Game, data: bytes, message: Message, state: MatchState, seat: int,
                        packed: Mapping[str, type[Message]], where: str) -> None:
    """G2 on the wire: raise :class:`CheckFailed` when ``message`` (sent to ``seat``, serialized as ``data``) holds
    the seed, another seat's hand, or the order (or, where every card is unique, a run of three) of a face-down
    pile of ``state``."""
    if str(state.seed).encode() in data or varint(state.seed) in data:
        raise CheckFailed(f"{where}: the seed is on the wire to seat {seat}")
    values = list(fields(message, packed))
    if any(value == state.seed for _, value in values):
        raise CheckFailed(f"{where}: the seed is on the wire to seat {seat}")
    card_lists = [value for _, value in values if isinstance(value, list) and value and isinstance(value[0], str)]
    deck = _deck(game, state)
    rank = _deck_ranks(game, state)
    unique = len(set(deck)) == len(deck)
    zones = state.zones()
    own = Counter(_hand(zones, seat, where))
    counted = [Counter(lst) for lst in card_lists]
    for name, cards in zones.items():
        texts = [str(_text(c)) for c in cards]
        if name.startswith("hand ") and name != f"hand {seat}" and len(texts) >= 2:
            hand = Counter(texts)
            if hand != own and hand in counted:
                raise CheckFailed(f"{where}: seat {seat} is sent {name}: {card_lists[counted.index(hand)]}")
        if name in game.hidden_order and len(texts) >= 2:
            if not in_order([rank[c] for c in cards]) and (texts in card_lists or texts[::-1] in card_lists):
                raise CheckFailed(f"{where}: seat {seat} is sent the order of the {name}")
            if unique and len(texts) >= 3:  # every card of the game is unique: no run of three either
                runs = {tuple(texts[i:i + 3]) for i in range(len(texts) - 2)
                        if not in_order([rank[c] for c in cards[i:i + 3]])}
                runs |= {run[::-1] for run in runs}
                for lst in card_lists:
                    if runs & {tuple(lst[i:i + 3]) for i in range(len(lst) - 2)}:
                        raise CheckFailed(f"{where}: seat {seat} is sent a run of the {name}")


# ------------------------------------------------------------------------------------------------ golden


def golden_path(game: Game) -> Path | None:
    """Return the game's recorded match (:data:`GOLDEN` in its folder), or None when its folder has none."""
    folder = game_folder(game.name)
    path = folder / GOLDEN if folder is not None else None
    return path if path is not None and path.is_file() else None


def check_golden(data: Mapping[str, Any], where: str) -> str:
    """Re-run a recorded match; return what it checked. Raises :class:`CheckFailed` when it does not re-run to its
    stored events."""
    if not data.get("events"):
        raise CheckFailed(f"{where} holds no events to compare with")
    try:
        events, differs = replay_format.verify(data)
    except GameError as exc:
        raise CheckFailed(f"{where} does not re-run: {exc}") from None
    if differs is not None:
        raise CheckFailed(f"{where} {differs}: the rules changed what it plays; if on purpose, record it again "
                          f"(arena games --record {data.get('game')})")
    return f"{where}: {len(data['steps'])} steps re-run to the same {len(events)} events"


def _check_golden(game: Game) -> Outcome:
    try:
        path = golden_path(game)
    except GameError as exc:
        return Outcome("golden", Status.FAILED, str(exc))
    if path is None:
        return Outcome("golden", Status.SKIPPED, f"no recorded match ({GOLDEN} in the game's folder; "
                                                 f"arena games --record {game.name} makes one)")
    try:
        data = replay_format.read(path)
    except GameError as exc:
        return Outcome("golden", Status.FAILED, str(exc))
    if data.get("game") != game.name:
        return Outcome("golden", Status.FAILED, f"{path.name} is a match of {data.get('game')!r}, not {game.name!r}")
    return _outcome("golden", check_golden, data, path.name)


async def play_golden(game: Game, seats: int, seed: int, options: Options) -> MatchRecord:
    """Return a match between random players (seeded from ``seed``), as :func:`record_golden` keeps it."""
    players = [random_seat(f"seat{i}", f"golden/{seed}/{i}") for i in range(seats)]
    return await referee_match(game, players, seed, options, match_id="golden")


def record_golden(game: Game, seats: int, seed: int, options: Options) -> dict[str, Any]:
    """Return a recorded match of ``game`` for its folder's :data:`GOLDEN`: a replay of a match between seeded
    random players, its events included (no latencies, no match id: it is the same each time it is made)."""
    import asyncio

    data = replay_format.from_record(asyncio.run(play_golden(game, seats, seed, options)))
    data.pop("latency_ms", None)
    data.pop("match_id", None)
    return data
