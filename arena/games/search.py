"""The game-neutral half of the search toolkit: dealing hidden cards under constraints, playing a match on
in-process, and budgeting a decision's time.

A search bot (determinized search: PIMC, ISMCTS) repeats three things while its time lasts: deal the cards it
cannot see in a way that agrees with everything it was told (``sample_world`` of the game's own module,
:mod:`arena.games.cabanga.search` or :mod:`arena.games.lama.search`, built on :func:`deal`), try each of its
choices in that world and play the rest on with a fast policy (:func:`simulate`, the real rules engine), and
keep the choice that did best on average. :class:`SearchClock` says when to stop.

What a seat may use (docs/rules.md G2): its own view and the events it was told, never the match's hidden
state. A sampled world is a fresh :class:`~arena.games.base.MatchState` built from those alone, with a random
number generator of the bot's own: the match seed is never known, so the world's later shuffles differ from
the match's.

Nothing here does I/O; :mod:`time` is read for the clock only.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from arena.games.base import Decision, Event, MatchOver, MatchState, Prompt, RoundScored

Card = TypeVar("Card", bound=Hashable)

Policy = Callable[[MatchState, Prompt], Decision]
"""A rollout policy: the decision for ``prompt`` in a (sampled) state. It should read only what the prompted
seat could see in that state (its own hand and the public state): the world is a guess, but a policy that
reads other hands there plays as if it could see them."""


# ------------------------------------------------------------------------------------------------ dealing


@dataclass(frozen=True, slots=True)
class Slot:
    """Where ``size`` hidden cards go in a sampled world: a hand, a pile, part of a hand.

    ``excluded``: cards that may not go here (what the seat is known or believed not to hold). ``only``: when
    set, the cards must come from it (a penalty pile rebuilt from known set-aside cards).
    """

    name: str
    size: int
    excluded: frozenset[Any] = frozenset()
    only: frozenset[Any] | None = None

    def allows(self, card: Any) -> bool:
        """Return whether ``card`` may go into this slot."""
        return card not in self.excluded and (self.only is None or card in self.only)


@dataclass(frozen=True, slots=True)
class Deal:
    """The cards of each slot, by slot name; ``relaxed`` is true when the exclusions had to be dropped."""

    cards: dict[str, list[Any]]
    relaxed: bool = False


DEAL_TRIES = 64
"""Random attempts at a deal that keeps every exclusion before :func:`deal` drops the soft ones."""


def deal(pool: Sequence[Card], slots: Sequence[Slot], rng: random.Random, *, tries: int = DEAL_TRIES) -> Deal:
    """Return a random deal of ``pool`` (a multiset, as a sequence) into ``slots`` that respects them.

    The slot sizes must add up to ``len(pool)``. The most constrained slots are filled first, each from the
    shuffled cards still free that it allows; a dead end starts over. After ``tries`` dead ends the
    ``excluded`` sets (inferences, such as "it did not throw that card") are dropped, ``only`` (a fact) is kept,
    and the deal says ``relaxed``. Raises :class:`ValueError` when the sizes do not add up or ``only`` cannot
    be met.
    """
    total = sum(s.size for s in slots)
    if total != len(pool):
        raise ValueError(f"slots hold {total} cards but the pool has {len(pool)}")
    order = sorted(slots, key=lambda s: (s.only is None, -len(s.excluded) * bool(s.size), s.size))
    for attempt in range(tries + 1):
        relaxed = attempt == tries
        cards = list(pool)
        rng.shuffle(cards)
        out: dict[str, list[Any]] = {}
        for slot in order:
            if not slot.size:
                out[slot.name] = []
                continue
            if relaxed:
                chosen = [i for i, c in enumerate(cards) if slot.only is None or c in slot.only][: slot.size]
            elif slot.excluded or slot.only is not None:
                chosen = [i for i, c in enumerate(cards) if slot.allows(c)][: slot.size]
            else:
                chosen = list(range(slot.size))
            if len(chosen) < slot.size:
                break
            taken = set(chosen)
            out[slot.name] = [cards[i] for i in chosen]
            cards = [c for i, c in enumerate(cards) if i not in taken]
        else:
            return Deal(out, relaxed)
    raise ValueError(f"no deal of {len(pool)} cards fits the slots {[s.name for s in slots]}")


# ----------------------------------------------------------------------------------------------- playing


@dataclass(slots=True)
class Simulation:
    """What :func:`simulate` did: ``steps`` applied, ``rounds`` scored, the totals at the end and whether the
    match is over."""

    steps: int
    rounds: int
    totals: tuple[int, ...]
    over: bool
    events: list[Event] = field(default_factory=list)


def simulate(world: MatchState, policies: Policy | Sequence[Policy], *, rounds: int | None = 1,
             max_steps: int = 100_000, record: bool = False) -> Simulation:
    """Play ``world`` on in place with the real rules engine until ``rounds`` more rounds are scored (``None``:
    to the end of the match), the match ends, or ``max_steps`` steps were applied.

    ``policies`` is one policy for every seat or one per seat. Decisions go straight to the engine's
    ``_apply``: a policy's answer is trusted to be legal (:meth:`MatchState.apply` would check it, which is
    most of a step's cost), so a policy must return one of the prompt's choices. The world's own log and end
    flag are kept as ``apply`` keeps them, so the world stays a valid match. ``record`` keeps the events.
    """
    per_seat: Sequence[Policy] = policies if isinstance(policies, Sequence) else [policies] * world.seats
    log = world._log  # the engine reads the log's length to place private events
    steps = scored = 0
    recorded: list[Event] = []
    while steps < max_steps and not world._over:
        prompts = world.pending()
        if len(prompts) == 1:
            prompt = prompts[0]
            decisions = {prompt.seat: per_seat[prompt.seat](world, prompt)}
        else:
            decisions = {p.seat: per_seat[p.seat](world, p) for p in prompts}
        events = world._apply(decisions)
        log.extend(events)
        if record:
            recorded.extend(events)
        steps += 1
        for event in reversed(events):
            kind = type(event)
            if kind is MatchOver:
                world._over = True
            elif kind is RoundScored:
                scored += 1
        if rounds is not None and scored >= rounds:
            break
    return Simulation(steps, scored, world.totals, world._over, recorded)


def told_events(state: MatchState, seat: int, start: int = 0) -> list[Event]:
    """Return the events ``seat`` was told from public event ``start`` on: the public log with the seat's
    private events in their places, as the referee sends them (for tests and in-process experiments)."""
    private = [(pos, e) for pos, e in state.private_events(seat) if pos >= start]
    out: list[Event] = []
    events = state.events
    k = 0
    for i in range(start, len(events)):
        while k < len(private) and private[k][0] <= i:
            out.append(private[k][1])
            k += 1
        out.append(events[i])
    out.extend(e for _, e in private[k:])
    return out


def round_utility(before: Sequence[int], after: Sequence[int], seat: int) -> float:
    """Return how well ``seat`` did between two totals (lower totals win): the others' mean gain minus its own."""
    gains = [a - b for a, b in zip(after, before, strict=True)]
    others = [g for s, g in enumerate(gains) if s != seat]
    return sum(others) / max(1, len(others)) - gains[seat]


_SQRT2 = math.sqrt(2.0)


@dataclass(frozen=True, slots=True)
class MatchOdds:
    """What a round's totals are worth in the match: ``seat``'s expected pairwise score at the match's end.

    A match is won by places, not by points: a seat ahead of another at the end scores 1 against it, level 1/2,
    behind 0 (as the arena's comparisons count). When the round's totals end the match (some total reaches
    ``target``, or the last of ``rounds`` fixed rounds) that score is exact; otherwise every pair's difference is
    taken to move on by a random walk of ``spread`` points a round (the standard deviation of the difference of two
    seats' points in one round) for the rounds likely left (the leader's distance to the target over ``pace``, its
    mean points a round, at least one half), and the chance of finishing ahead is that walk's (a normal
    approximation). Far from the end this is about linear in the point difference, as
    :func:`round_utility` is; near it, it weighs the places: a point gained on the seat just ahead is worth more
    than one gained on a seat far behind, and a safe play keeps a lead. ``lower_wins``: the game's direction.
    """

    target: int
    spread: float
    pace: float
    rounds: int | None = None
    lower_wins: bool = True

    def score(self, totals: Sequence[int], seat: int, rounds_left: int | None = None) -> float:
        """Return ``seat``'s expected mean pairwise score against the other seats, the round's ``totals`` given;
        ``rounds_left``: rounds still to play after it when the match has a fixed number of rounds."""
        mine = totals[seat]
        others = [t for s, t in enumerate(totals) if s != seat]
        if not others:
            return 0.5
        sign = 1.0 if self.lower_wins else -1.0
        if self.rounds is not None:
            left = float(rounds_left if rounds_left is not None else 0)
        else:
            leader = max(totals)
            left = 0.0 if leader >= self.target else max(0.5, (self.target - leader) / self.pace)
        if left <= 0.0:
            return sum(1.0 if sign * (t - mine) > 0 else 0.5 if t == mine else 0.0 for t in others) / len(others)
        scale = self.spread * math.sqrt(left) * _SQRT2
        erf = math.erf
        return sum(0.5 + 0.5 * erf(sign * (t - mine) / scale) for t in others) / len(others)


# ---------------------------------------------------------------------------------------------- the clock


BANK_SPREAD = 20
"""A decision may take this share (1/N) of the time bank left, on top of its part of the deadline."""


DEFAULT_DEADLINE = 1.0
"""Seconds a decision is taken to allow when a bot was told no time at all (the arena's default deadline)."""


@dataclass(slots=True)
class SearchClock:
    """Budgets one decision: ``ms`` milliseconds at most (the bot's time setting), within the request's time.

    ``start(seconds_left, deadline)`` opens a decision: ``seconds_left`` is what the request allows (the SDK's
    :meth:`arena.sdk.Bot.on_clock`; the deadline plus the bank left, minus the request's age), ``deadline`` the
    match's per-decision deadline. The budget is the least of ``ms``, ``share`` of the deadline plus
    1/:data:`BANK_SPREAD` of the bank left, and ``seconds_left`` less ``margin_ms``: the search stops with a
    wide margin for the answer's way back, and dips into the bank only a little at a time.
    """

    ms: float
    share: float = 0.4
    margin_ms: float = 30.0
    stop_at: float = 0.0
    budget: float = 0.0

    def start(self, seconds_left: float | None = None, deadline: float | None = None) -> float:
        """Open a decision and return its budget in seconds (0 when there is no time to search)."""
        budget = self.ms / 1000
        if seconds_left is not None:
            if deadline is not None:
                bank = max(0.0, seconds_left - deadline)
                budget = min(budget, self.share * min(deadline, seconds_left) + bank / BANK_SPREAD)
            else:
                budget = min(budget, self.share * seconds_left)
            budget = min(budget, seconds_left - self.margin_ms / 1000)
        self.budget = max(0.0, budget)
        self.stop_at = time.perf_counter() + self.budget
        return self.budget

    def open(self, seconds_left: float | None, deadline: float | None) -> float:
        """Open a decision from what the bot was told, either part possibly missing, and return its budget.

        ``seconds_left`` is what the last request allowed (:meth:`arena.sdk.Bot.on_clock`), ``deadline`` the
        match's per-decision deadline (its start). Told only one, it stands for both; told neither (an in-process
        seat), both are the arena's :data:`DEFAULT_DEADLINE`.
        """
        if deadline is None:
            deadline = seconds_left if seconds_left is not None else DEFAULT_DEADLINE
        return self.start(seconds_left if seconds_left is not None else deadline, deadline)

    def expired(self) -> bool:
        """Return whether the decision's budget is spent."""
        return time.perf_counter() >= self.stop_at


def seeded_rng(*parts: object) -> random.Random:
    """Return a generator seeded from ``parts`` (a bot's seed option, the match id, its seat): the same parts give
    the same numbers in every process (text seeds are hashed with SHA-512, not Python's salted hash)."""
    return random.Random("/".join(map(str, parts)))


def mean(values: Iterable[float]) -> float:
    """Return the mean of ``values`` (0 when there are none)."""
    items = list(values)
    return sum(items) / len(items) if items else 0.0
