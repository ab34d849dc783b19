"""L.A.M.A.'s half of the search toolkit (:mod:`arena.games.search` has the game-neutral half).

- :class:`LamaKnowledge`: what a seat has learnt from the events it was told: the cards on the discard pile
  (all of them public), the cards it drew itself, and the values each other seat is believed not to hold (it
  drew or quit where it could have played them, L4-L7).
- :func:`sample_world`: a :class:`LamaState` dealt from the seat's view and knowledge alone (G2).
- :func:`clone`: a copy of a state to play on, fast.
- :func:`greedy_policy`: the rollout policy, the bundled greedy bot's plan read from the state (own hand only);
  :func:`greedy_turn` the same for a view.
- :func:`pimc_turn`: determinized search (perfect-information Monte Carlo) of a turn.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games.base import Action, Decision, Event, MatchOver, MatchState, Prompt, RoundScored
from arena.games.lama import (
    CARDS,
    CLIMB_ANY,
    DRAW,
    LLAMA_VALUE,
    QUIT,
    Card,
    Drew,
    DrewCard,
    LamaOptions,
    LamaState,
    LamaView,
    Played,
    Quit,
    RoundStarted,
    TurnAction,
)
from arena.games.lama.rules import HAND_SIZE
from arena.games.search import MatchOdds, Policy, SearchClock, Slot, deal, round_utility, simulate, told_events

QUIT_AT = 4
"""The greedy plan quits rather than draws when its hand would score at most this many points."""


def playable_values(top: int, climb: str = "one") -> frozenset[int]:
    """Return the values that may be played on a discard pile showing ``top`` (L4, option ``climb``)."""
    if top == LLAMA_VALUE:
        return frozenset((1, LLAMA_VALUE))
    if climb == CLIMB_ANY:
        return frozenset(range(top, LLAMA_VALUE + 1))
    return frozenset((top, top + 1))


# --------------------------------------------------------------------------------------------- knowledge


@dataclass
class LamaKnowledge:
    """What ``seat`` knows beyond its view, kept up to date by :meth:`observe` from the events it is told.

    Facts: ``discard`` (every card on the discard pile this round, all played in public), ``top``, ``drawn``
    (the cards this seat drew, its private :class:`~arena.games.lama.DrewCard`). Inferences
    (``assume_plays``: a seat plays when it can, as the bundled bots do): ``cannot_hold[s]``, values seat ``s``
    held none of when it drew or quit instead of playing them; ``free[s]`` counts the cards it drew since,
    which the inference does not cover.
    """

    seat: int
    seats: int
    climb: str = "one"
    assume_plays: bool = True
    discard: list[Card] = field(default_factory=list)
    top: int | None = None
    cannot_hold: list[set[int]] = field(default_factory=list)
    free: list[int] = field(default_factory=list)
    drawn: list[Card] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.discard = []
        self.top = None
        self.cannot_hold = [set() for _ in range(self.seats)]
        self.free = [0] * self.seats
        self.drawn = []

    def observe(self, events: Iterable[Event]) -> None:
        """Take in the events this seat was told, oldest first (public ones and its own private ones)."""
        for event in events:
            kind = type(event)
            if kind is Played:
                assert isinstance(event, Played)
                self.discard.append(event.card)
                self.top = event.card.value
            elif kind is Drew:
                assert isinstance(event, Drew)
                self._passed(event.seat)
                self.free[event.seat] += 1
            elif kind is Quit:
                assert isinstance(event, Quit)
                self._passed(event.seat)
            elif kind is DrewCard:
                assert isinstance(event, DrewCard)
                if event.seat == self.seat:
                    self.drawn.append(event.card)
            elif kind is RoundStarted:
                assert isinstance(event, RoundStarted)
                self._reset()
                self.discard = [event.discard]
                self.top = event.discard.value

    def _passed(self, seat: int) -> None:
        """``seat`` drew or quit: under ``assume_plays`` it held nothing it could have played."""
        if not self.assume_plays or self.top is None or seat == self.seat:
            return
        values = playable_values(self.top, self.climb)
        old = self.cannot_hold[seat]
        if not self.free[seat]:
            old.update(values)
        elif len(values) >= len(old):
            self.cannot_hold[seat] = set(values)
            self.free[seat] = 0
        else:
            old.update(values)

    def unseen(self, view: LamaView) -> list[Card]:
        """Return the cards (a multiset, sorted) whose place ``view``'s seat does not know."""
        counts = {c: 8 for c in CARDS}
        for card in (*view.hand, *self.discard):
            counts[card] -= 1
        if any(n < 0 for n in counts.values()) or len(self.discard) != view.discard_size:
            counts = {c: 8 for c in CARDS}  # the knowledge missed events: the view alone
            for card in (*view.hand, view.discard):
                counts[card] -= 1
        return [c for c in CARDS for _ in range(counts[c])]


def knowledge_from(state: LamaState, seat: int, **kwargs: Any) -> LamaKnowledge:
    """Return the knowledge ``seat`` has at this point of ``state``: built from the events it was told only."""
    knowledge = LamaKnowledge(seat, state.seats, climb=state.options.climb, **kwargs)
    knowledge.observe(told_events(state, seat))
    return knowledge


# ------------------------------------------------------------------------------------------------ worlds


def sample_world(view: LamaView, knowledge: LamaKnowledge, rng: random.Random,
                 options: LamaOptions | None = None, *, tries: int = 64) -> LamaState:
    """Return a match state that agrees with ``view`` and ``knowledge``, its hidden cards dealt at random.

    The seat's own hand, the discard top, every count, who is still in, the totals and the seat to play are
    the view's; the other hands (laid-down ones too) and the draw pile, in a random order, are dealt from the
    unseen cards (:meth:`LamaKnowledge.unseen`) so that no seat gets a value it is believed not to hold. The
    world's generator is seeded from ``rng``, never from the match: nothing hidden is read (G2). Raises
    :class:`ValueError` for a view of a match that is over.
    """
    if view.active is None:
        raise ValueError("the match is over: there is no world to sample")
    seats = len(view.hand_sizes)
    me = view.seat
    unseen = knowledge.unseen(view)
    need = sum(n for s, n in enumerate(view.hand_sizes) if s != me) + view.draw_size
    consistent = len(unseen) == need
    if not consistent:  # the knowledge missed events: the view alone, the extra cards under the discard top
        rng.shuffle(unseen)
        unseen = sorted(unseen[: need], key=lambda c: c.value)
    slots: list[Slot] = []
    for s, size in enumerate(view.hand_sizes):
        if s == me:
            continue
        excluded = {c for c in CARDS if c.value in knowledge.cannot_hold[s]} if consistent else set()
        free = min(size, knowledge.free[s]) if excluded else size
        slots.append(Slot(f"hand {s}", size - free, frozenset(excluded)))
        slots.append(Slot(f"free {s}", free))
    slots.append(Slot("draw", view.draw_size))
    dealt = deal(unseen, slots, rng, tries=tries).cards

    world = LamaState.__new__(LamaState)
    MatchState.__init__(world, seats, rng.randrange(1 << 62))
    world._options = options if options is not None else LamaOptions(climb=knowledge.climb)
    world._round = view.round
    world._totals = list(view.totals)
    hands = []
    for s in range(seats):
        counts = [0] * (LLAMA_VALUE + 1)
        for card in view.hand if s == me else dealt[f"hand {s}"] + dealt[f"free {s}"]:
            counts[card.value] += 1
        hands.append(counts)
    world._hands = hands
    world._sizes = list(view.hand_sizes)
    world._in_round = list(view.in_round)
    world._left = sum(view.in_round)
    draw = dealt["draw"]
    rng.shuffle(draw)
    world._draw = draw
    below = knowledge.discard[:-1] if consistent and knowledge.discard else [view.discard] * (view.discard_size - 1)
    world._discard = [*below, view.discard]
    world._top = view.discard.value
    world._active = view.active
    world._refresh_pending()
    return world


# ---------------------------------------------------------------------------------------------- policies


def hand_points(counts: Sequence[int]) -> int:
    """Return what a hand given as counts per value (index 1..7) scores now (L9)."""
    return sum((10 if v == LLAMA_VALUE else v) for v in range(1, LLAMA_VALUE + 1) if counts[v])


def _greedy(counts: Sequence[int], choices: Sequence[Action]) -> Action:
    best: Card | None = None
    for choice in choices:
        if isinstance(choice, Card) and (best is None or (counts[choice.value], -choice.value) > (
                counts[best.value], -best.value)):
            best = choice
    if best is not None:
        return best
    if DRAW in choices and hand_points(counts) > QUIT_AT:
        return DRAW
    return QUIT


def _keep_top(counts: Sequence[int], choices: Sequence[Action], top: int) -> Action:
    """Return the greedy plan's choice, but a card of the top's own value whenever one may be played: the top stays
    where it is, and the cards one higher are kept for later (in plan-against-plan matches, 2 seats, both quitting
    at 10, 2,000 deal sets, this plan scores 0.71 against the greedy one)."""
    for choice in choices:
        if isinstance(choice, Card) and choice.value == top:
            return choice
    return _greedy(counts, choices)


def _quit_at(counts: Sequence[int], choice: Action, choices: Sequence[Action], quit_at: int) -> Action:
    """Return the greedy plan's ``choice`` with its bar moved: quit rather than draw when the hand would score at
    most ``quit_at`` points, draw above (a play stays as it is)."""
    if choice is DRAW and QUIT in choices and hand_points(counts) <= quit_at:
        return QUIT
    if choice is QUIT and DRAW in choices and hand_points(counts) > quit_at:
        return DRAW
    return choice


def _counts(view: LamaView) -> list[int]:
    """Return the seat's hand as counts per value (index 1..7)."""
    counts = [0] * (LLAMA_VALUE + 1)
    for card in view.hand:
        counts[card.value] += 1
    return counts


def greedy_turn(view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
    """Return the bundled greedy bot's turn: play the value it holds most of (the lower on a tie), else draw
    while its hand scores more than :data:`QUIT_AT`, else quit."""
    choice = _greedy(_counts(view), choices)
    assert isinstance(choice, Card | TurnAction)
    return choice


def greedy_policy(state: MatchState, prompt: Prompt) -> Decision:
    """The rollout policy: :func:`greedy_turn` read from the prompted seat's own hand in ``state``."""
    assert isinstance(state, LamaState)
    return (_greedy(state._hands[prompt.seat], prompt.choices),)


def quitting_policy(state: MatchState, prompt: Prompt) -> Decision:
    """A rollout policy for a seat that quits whenever it cannot play (it never draws): the greedy play, else quit."""
    assert isinstance(state, LamaState)
    choice = _greedy(state._hands[prompt.seat], prompt.choices)
    return (QUIT if choice is DRAW and QUIT in prompt.choices else choice,)


def quit_at_policy(quit_at: int, keep_top: bool = False) -> Policy:
    """Return the greedy plan that quits rather than draws when its hand would score at most ``quit_at`` points
    (the greedy plan's :data:`QUIT_AT` is 4; in greedy-against-greedy matches a seat quitting at 10 scores 0.55
    against it, 300 deal sets); with ``keep_top`` it plays a card of the top's value whenever it may
    (:func:`_keep_top`)."""

    def policy(state: MatchState, prompt: Prompt) -> Decision:
        assert isinstance(state, LamaState)
        counts = state._hands[prompt.seat]
        return (_quit_at(counts, _greedy(counts, prompt.choices), prompt.choices, quit_at),)

    def keeping(state: MatchState, prompt: Prompt) -> Decision:
        assert isinstance(state, LamaState)
        counts = state._hands[prompt.seat]
        return (_quit_at(counts, _keep_top(counts, prompt.choices, state._top), prompt.choices, quit_at),)

    return keeping if keep_top else policy


EARLY_QUITS = 2
"""Quits with this many cards or more in hand, at three cards or more, make a seat an early quitter."""


@dataclass
class LamaModel:
    """What each other seat has shown of its plan in this match (public events only): ``early[s]`` counts its
    quits with three cards or more in hand, ``quits[s]`` all its quits. A seat with :data:`EARLY_QUITS` early
    quits is played in rollouts by :func:`quitting_policy`, every other one by :func:`greedy_policy`."""

    seat: int
    seats: int
    own_quit_at: int | None = None
    """The observing seat's own rollout plan quits at this (:func:`quit_at_policy`); ``None``: the greedy plan."""
    others_quit_at: int | None = None
    """The same for every other seat not seen quitting early."""
    keep_top: bool = False
    """The observing seat's own rollout plan plays a card of the top's value whenever it may (:func:`_keep_top`;
    the same for the other seats measured no better against ``lama-medium``)."""
    early: list[int] = field(default_factory=list)
    quits: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.early = [0] * self.seats
        self.quits = [0] * self.seats
        self.sizes = [0] * self.seats

    def observe(self, events: Iterable[Event]) -> None:
        """Take in the events this seat was told, oldest first."""
        for event in events:
            kind = type(event)
            if kind is RoundStarted:
                assert isinstance(event, RoundStarted)
                self.sizes = [HAND_SIZE] * self.seats
            elif kind is Played:
                assert isinstance(event, Played)
                self.sizes[event.seat] -= 1
            elif kind is Drew:
                assert isinstance(event, Drew)
                self.sizes[event.seat] += 1
            elif kind is Quit:
                assert isinstance(event, Quit)
                self.quits[event.seat] += 1
                if self.sizes[event.seat] >= 3:
                    self.early[event.seat] += 1

    def policies(self) -> list[Policy]:
        """Return the rollout policy of every seat (its own: the greedy plan, or its quitting bar and keep-top play)."""
        own = greedy_policy if self.own_quit_at is None and not self.keep_top else \
            quit_at_policy(QUIT_AT if self.own_quit_at is None else self.own_quit_at, self.keep_top)
        other = greedy_policy if self.others_quit_at is None else quit_at_policy(self.others_quit_at)
        return [own if s == self.seat else quitting_policy if self.early[s] >= EARLY_QUITS else other
                for s in range(self.seats)]


# ------------------------------------------------------------------------------------------------ search


@dataclass
class SearchReport:
    """What searches did: worlds sampled, rollouts played, steps simulated, the last candidates' means."""

    worlds: int = 0
    rollouts: int = 0
    steps: int = 0
    means: dict[str, float] = field(default_factory=dict)


def pimc_turn(view: LamaView, choices: Sequence[Card | TurnAction], knowledge: LamaKnowledge, rng: random.Random,
              clock: SearchClock, *, options: LamaOptions | None = None, max_worlds: int | None = None,
              report: SearchReport | None = None, policies: Policy | Sequence[Policy] = greedy_policy,
              odds: MatchOdds | None = None, rounds_left: int | None = None, quit_at: int = QUIT_AT,
              prefer_first: float | None = None, keep_top: bool = False) -> Card | TurnAction:
    """Return the turn that did best over sampled worlds (determinized search, PIMC).

    Every choice is tried in every world sampled (common random numbers), the round played out by
    ``policies`` (one for every seat, or one per seat; default :func:`greedy_policy`) and scored by
    :func:`~arena.games.search.round_utility` (or, given ``odds``, by the seat's expected pairwise score at the
    match's end, :meth:`~arena.games.search.MatchOdds.score`, ``rounds_left`` after this one when the match has a
    fixed number of rounds). Worlds are sampled until ``clock`` expires (a world cut short
    does not count) or ``max_worlds``; with no complete world the first candidate is returned. With
    ``prefer_first`` the first candidate is the greedy turn quitting rather than drawing at ``quit_at`` points or
    less, and another is chosen only when it beats the first by that many standard errors of their paired
    difference (the best of several noisy means is biased upwards). With ``keep_top`` that first candidate plays
    a card of the top's value whenever it may (:func:`_keep_top`), as the seat's own rollouts then do.
    """
    first = _keep_top(_counts(view), choices, view.discard.value) if keep_top else greedy_turn(view, choices)
    assert isinstance(first, Card | TurnAction)
    if prefer_first is not None:
        turn = _quit_at(_counts(view), first, choices, quit_at)
        assert isinstance(turn, Card | TurnAction)
        first = turn
    candidates = [first, *(c for c in choices if c is not first)]
    if len(candidates) == 1:
        return first
    totals = [0.0] * len(candidates)
    squares = [0.0] * len(candidates)  # of each candidate's difference from the first, world by world
    worlds = 0
    seat = view.seat
    before = view.totals
    stop = False
    while not stop and (max_worlds is None or worlds < max_worlds):
        world = sample_world(view, knowledge, rng, options)
        world_seed = rng.getrandbits(32)
        scores = []
        for choice in candidates:
            trial = world.clone(random.Random(world_seed))
            events = trial.apply_trusted({seat: (choice,)})  # a choice of its prompt
            steps = 0
            if not any(type(e) is RoundScored or type(e) is MatchOver for e in events):
                steps = simulate(trial, policies, rounds=1).steps
            if report is not None:
                report.rollouts += 1
                report.steps += steps + 1
            scores.append(round_utility(before, trial._totals, seat) if odds is None
                          else odds.score(trial._totals, seat, rounds_left))
            if clock.expired() and max_worlds is None:
                stop = True
                break
        if len(scores) < len(candidates):
            break
        worlds += 1
        for i, score in enumerate(scores):
            totals[i] += score
            squares[i] += (score - scores[0]) ** 2
    if report is not None:
        report.worlds += worlds
        report.means = {c.text: t / max(1, worlds) for c, t in zip(candidates, totals, strict=True)}
    if not worlds:
        return first
    best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
    if prefer_first is not None and best != 0:
        mean = (totals[best] - totals[0]) / worlds
        spread = max(0.0, squares[best] / worlds - mean * mean) ** 0.5
        if mean <= prefer_first * spread / worlds ** 0.5:
            return first
    return candidates[best]


def options_from(raw: Mapping[str, Any]) -> LamaOptions:
    """Return the match's options from a :class:`~arena.games.base.MatchInfo`'s ``options`` (``None`` left out)."""
    from arena.games.lama import LAMA

    return LAMA.options({k: v for k, v in raw.items() if v is not None and k in ("target", "rounds", "climb")})

