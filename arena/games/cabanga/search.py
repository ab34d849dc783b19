"""Cabanga!'s half of the search toolkit (:mod:`arena.games.search` has the game-neutral half).

- :class:`CabangaKnowledge`: what a seat has learnt from the events it was told: the cards played this round
  (on the piles), the thrown cards still set aside, the cards the penalty pile was rebuilt from, and the cards
  each other seat is believed not to hold (a card of a gap it did not throw into, C10).
- :func:`sample_world`: a :class:`CabangaState` dealt from the seat's view and knowledge alone (G2).
- :func:`clone`: a copy of a state to play on, fast.
- :func:`greedy_policy`: the rollout policy, the bundled greedy bot's plan read from the state (own hand and
  public piles only); :func:`greedy_play` the same for a view.
- :func:`pimc_play`: determinized search (perfect-information Monte Carlo) of a PLAY decision.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games.base import Decision, Event, MatchState, Pick, Prompt
from arena.games.cabanga.rules import (
    _BETWEEN,
    _ROW_OF,
    NUMBER_CARDS,
    ROWS,
    CabangaOptions,
    CabangaState,
    CabangaView,
    Card,
    Drew,
    PenaltyCards,
    PlayCard,
    Played,
    Reshuffled,
    RoundStarted,
    Side,
    Threw,
    ThrowsClosed,
    _card_order,
)
from arena.games.search import SearchClock, Slot, deal, round_utility

# --------------------------------------------------------------------------------------------- knowledge


@dataclass
class CabangaKnowledge:
    """What ``seat`` knows beyond its view, kept up to date by :meth:`observe` from the events it is told.

    Facts (public events): ``played`` (number cards on the piles this round), ``aside`` (thrown cards set aside
    since the last reshuffle), ``pool`` (after a reshuffle, the cards the penalty pile was rebuilt from: it
    holds only those), ``starter`` and ``penalty_owed`` (whether the play of this turn repeated a colour, C9).
    Inferences (``assume_full_throws``: every seat throws every card it may, as the bundled bots do):
    ``cannot_hold[s]``, cards seat ``s`` held none of when a gap of their colour opened and it threw nothing of
    them; ``free[s]`` counts the cards it drew since, which the inference does not cover. ``drawn`` lists the
    penalty cards this seat drew itself (its private :class:`~arena.games.cabanga.PenaltyCards`).
    """

    seat: int
    seats: int
    assume_full_throws: bool = True
    played: set[Card] = field(default_factory=set)
    aside: set[Card] = field(default_factory=set)
    pool: set[Card] | None = None
    starter: int | None = None
    penalty_owed: bool = False
    cannot_hold: list[set[Card]] = field(default_factory=list)
    free: list[int] = field(default_factory=list)
    drawn: list[Card] = field(default_factory=list)
    _gap: tuple[int, frozenset[Card]] | None = None
    _threw: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self.played = set()
        self.aside = set()
        self.pool = None
        self.penalty_owed = False
        self.cannot_hold = [set() for _ in range(self.seats)]
        self.free = [0] * self.seats
        self.drawn = []
        self._gap = None
        self._threw = set()

    def observe(self, events: Iterable[Event]) -> None:
        """Take in the events this seat was told, oldest first (public ones and its own private ones)."""
        for event in events:
            kind = type(event)
            if kind is Played:
                assert isinstance(event, Played)
                self._played(event)
            elif kind is Threw:
                assert isinstance(event, Threw)
                self.aside.update(event.cards)
                self._threw.add(event.seat)
                if self.pool is not None:
                    self.pool.difference_update(event.cards)
            elif kind is ThrowsClosed:
                self._close_throws()
            elif kind is Reshuffled:
                # C13: the set-aside cards are now the penalty pile, in an order nobody knows
                self.pool = set(self.aside)
                self.aside = set()
            elif kind is Drew:
                assert isinstance(event, Drew)
                self.free[event.seat] += event.count
            elif kind is RoundStarted:
                assert isinstance(event, RoundStarted)
                self._reset()
                self.starter = event.starter
            elif kind is PenaltyCards:
                assert isinstance(event, PenaltyCards)
                if event.seat == self.seat:
                    self.drawn.extend(event.cards)

    def _played(self, event: Played) -> None:
        card = event.card
        self.played.add(card)
        if self.pool is not None:
            self.pool.discard(card)
        self.penalty_owed = event.penalty
        left, right = event.row_tops
        a, b = (left.value, right.value) if left.value < right.value else (right.value, left.value)
        between = _BETWEEN[_ROW_OF[card]][a][b]
        self._gap = (event.seat, between) if between else None
        self._threw = set()

    def _close_throws(self) -> None:
        gap = self._gap
        self._gap = None
        if gap is None or not self.assume_full_throws:
            return
        player, between = gap
        for other in range(self.seats):
            if other in (player, self.seat) or other in self._threw:
                continue  # a seat that threw may have kept some back; say nothing about it
            self._exclude(other, between)

    def _exclude(self, seat: int, cards: frozenset[Card]) -> None:
        # the new inference covers every card the seat holds now, the free ones too
        old = self.cannot_hold[seat]
        if not self.free[seat]:
            old.update(cards)
        elif len(cards) >= len(old):
            self.cannot_hold[seat] = set(cards)
            self.free[seat] = 0
        else:
            old.update(cards)

    def unseen(self, view: CabangaView) -> list[Card]:
        """Return the number cards whose place ``view``'s seat does not know, in card order."""
        known = set(view.hand) | self.played | self.aside | set(view.tops)
        return [c for c in NUMBER_CARDS if c not in known]


def knowledge_from(state: CabangaState, seat: int, **kwargs: Any) -> CabangaKnowledge:
    """Return the knowledge ``seat`` has at this point of ``state``: built from the events it was told only."""
    from arena.games.search import told_events

    knowledge = CabangaKnowledge(seat, state.seats, **kwargs)
    knowledge.observe(told_events(state, seat))
    return knowledge


# ------------------------------------------------------------------------------------------------ worlds


def sample_world(view: CabangaView, knowledge: CabangaKnowledge, rng: random.Random,
                 options: CabangaOptions | None = None, *, tries: int = 64) -> CabangaState:
    """Return a match state that agrees with ``view`` and ``knowledge``, its hidden cards dealt at random.

    The seat's own hand, the pile tops, every count, the totals and the step are the view's; the cards the
    seat cannot see (other hands, the penalty pile in a random order, set-aside cards it missed) are the
    unseen ones (:meth:`CabangaKnowledge.unseen`), dealt so that no seat gets a card it is believed not to
    hold and a rebuilt penalty pile holds only cards it was rebuilt from. The world's generator (later
    reshuffles and deals) is seeded from ``rng``, never from the match: nothing hidden is read (G2).
    ``options`` are the match's (default: the defaults). Raises :class:`ValueError` for a view of a match
    that is over.
    """
    if view.step is None:
        raise ValueError("the match is over: there is no world to sample")
    seats = len(view.hand_sizes)
    me = view.seat
    unseen = knowledge.unseen(view)
    aside_known = [c for c in NUMBER_CARDS if c in knowledge.aside]
    hidden_aside = view.set_aside_size - len(aside_known)
    need = sum(n for s, n in enumerate(view.hand_sizes) if s != me) + view.penalty_size + max(0, hidden_aside)
    if hidden_aside < 0 or len(unseen) < need:
        # the knowledge missed events (a skipped request): trust only what the view shows
        knowledge = CabangaKnowledge(me, seats, assume_full_throws=False)
        unseen = knowledge.unseen(view)
        aside_known, hidden_aside = [], view.set_aside_size
        need = sum(n for s, n in enumerate(view.hand_sizes) if s != me) + view.penalty_size + hidden_aside
    # cards beyond what the slots hold were played under the tops unseen: leave them out at random
    extra = len(unseen) - need
    if extra > 0:
        rng.shuffle(unseen)
        unseen = sorted(unseen[extra:], key=_card_order)
    slots: list[Slot] = []
    for s, size in enumerate(view.hand_sizes):
        if s == me:
            continue
        free = min(size, knowledge.free[s]) if knowledge.cannot_hold[s] else size
        slots.append(Slot(f"hand {s}", size - free, frozenset(knowledge.cannot_hold[s])))
        slots.append(Slot(f"free {s}", free))
    pool = frozenset(knowledge.pool) if knowledge.pool is not None and len(
        knowledge.pool.intersection(unseen)) >= view.penalty_size else None
    slots.append(Slot("penalty", view.penalty_size, only=pool))
    slots.append(Slot("aside", hidden_aside))
    dealt = deal(unseen, slots, rng, tries=tries).cards

    world = CabangaState.__new__(CabangaState)
    MatchState.__init__(world, seats, rng.randrange(1 << 62))
    world.options = options if options is not None else CabangaOptions()
    world._round = view.round
    world._starter = knowledge.starter if knowledge.starter is not None else view.active
    world._active = view.active
    world._previous_colour = view.previous_colour
    hands: list[list[Card]] = []
    for s in range(seats):
        hand = list(view.hand) if s == me else dealt[f"hand {s}"] + dealt[f"free {s}"]
        hands.append(sorted(hand, key=_card_order))
    world._hands = hands
    world._piles = [[top] for top in view.tops]
    penalty = dealt["penalty"]
    rng.shuffle(penalty)
    world._penalty = penalty
    world._set_aside = aside_known + dealt["aside"]
    world._totals = list(view.totals)
    world._step = view.step
    if view.step == "throw":
        assert view.throw_row is not None and view.throw_tops is not None
        row = ROWS.index(view.throw_row)
        world._row = row
        world._owed = 1 if knowledge.penalty_owed else 0
        a, b = sorted((view.throw_tops[0].value, view.throw_tops[1].value))
        between = _BETWEEN[row][a][b]
        prompts = []
        for other, hand in enumerate(hands):
            if other != view.active and not between.isdisjoint(hand):
                eligible = tuple(card for card in hand if card in between)
                prompts.append(Prompt(other, "throw", Pick.SUBSET, eligible, ()))
        world._pending = tuple(prompts)
    else:
        world._row = -1
        world._owed = 0
        world._pending = (world._play_prompt(),)
    return world


# ---------------------------------------------------------------------------------------------- policies


def _play_cost(play: PlayCard, hand: Sequence[Card], tops: Sequence[Card], previous: Any, factor: float,
               symbols: Sequence[int]) -> tuple[float, int]:
    card = play.card
    row = _ROW_OF[card]
    value = card.value
    if play.side is Side.LEFT:
        a, b = value, tops[2 * row + 1].value
    else:
        a, b = tops[2 * row].value, value
    low, high = (a, b) if a < b else (b, a)
    gap = high - low - 1
    if gap > 0:
        colour = card.colour
        gap -= sum(1 for c in hand if c.colour is colour and low < c.value < high and c is not card)
        if gap < 0:
            gap = 0
    return (1.0 if card.colour is previous else 0.0) + gap * factor, -symbols[value - 1]


def _gap_factor(view: CabangaView) -> float:
    """Return what one card of an open gap costs the greedy plan: how likely the others hold some, by how many
    cards they hold of those the seat has not seen."""
    others = sum(n for s, n in enumerate(view.hand_sizes) if s != view.seat)
    unseen = max(1, 72 - len(view.hand) - view.set_aside_size)
    return min(1.0, others / unseen * 2)


def greedy_play(view: CabangaView, choices: Sequence[PlayCard], symbols: Sequence[int]) -> PlayCard:
    """Return the bundled greedy bot's play: the least expected penalty (a repeated colour, the gap others may
    throw into, weighted by how many cards they hold), the costliest card on a tie."""
    factor = _gap_factor(view)
    return min(choices, key=lambda p: _play_cost(p, view.hand, view.tops, view.previous_colour, factor, symbols))


def ranked_plays(view: CabangaView, choices: Sequence[PlayCard], symbols: Sequence[int]) -> list[PlayCard]:
    """Return ``choices`` best first by the greedy plan (the order :func:`pimc_play` tries them in)."""
    factor = _gap_factor(view)
    return sorted(choices, key=lambda p: _play_cost(p, view.hand, view.tops, view.previous_colour, factor, symbols))


def greedy_policy(state: MatchState, prompt: Prompt) -> Decision:
    """The rollout policy: the greedy play from the prompted seat's own hand and the public piles; every throw.

    Reads the state as :func:`greedy_play` reads a view, nothing of other hands (the bundled greedy bot's plan).
    """
    if prompt.kind == "throw":
        return prompt.choices
    assert isinstance(state, CabangaState)
    seat = prompt.seat
    hands = state._hands
    hand = hands[seat]
    tops = [pile[-1] for pile in state._piles]
    size = len(hand)
    others = sum(map(len, hands)) - size
    unseen = max(1, 72 - size - len(state._set_aside))
    factor = min(1.0, others / unseen * 2)
    previous = state._previous_colour
    symbols = state.options.symbols
    best: Any = None
    best_key: tuple[float, int] | None = None
    for play in prompt.choices:
        assert isinstance(play, PlayCard)
        key = _play_cost(play, hand, tops, previous, factor, symbols)
        if best_key is None or key < best_key:
            best, best_key = play, key
    return (best,)


# ---------------------------------------------------------------------------------------- fast playouts

# A number card as an int: its index in card order (row * 18 + value - 1), so a sorted hand of ints is in card
# order, a card's row is ``i // 18`` and the cards of a row between two values are one range of ints.
_INT_OF: dict[Card, int] = {card: i for i, card in enumerate(NUMBER_CARDS)}


@dataclass(slots=True)
class Packed:
    """A world at a PLAY step, as ints, for :func:`playout`: what the round's play reads and nothing else.

    ``tops`` are the eight pile tops' values; ``previous`` the row of the colour played the turn before (-1 on
    a round's first turn); ``points`` each card int's penalty symbols (C4, the match's table)."""

    seats: int
    active: int
    previous: int
    hands: list[list[int]]
    tops: list[int]
    penalty: list[int]
    aside: list[int]
    totals: list[int]
    points: list[int]


def pack(world: CabangaState) -> Packed:
    """Return ``world`` (at a PLAY step) as ints for :func:`playout`."""
    if world._step != "play":
        raise ValueError("a world is packed at a PLAY step")
    index = _INT_OF
    symbols = world.options.symbols
    previous = world._previous_colour
    return Packed(
        seats=world.seats,
        active=world._active,
        previous=ROWS.index(previous) if previous is not None else -1,
        hands=[[index[c] for c in hand] for hand in world._hands],
        tops=[pile[-1].value for pile in world._piles],
        penalty=[index[c] for c in world._penalty],
        aside=[index[c] for c in world._set_aside],
        totals=list(world._totals),
        points=[symbols[i % 18] for i in range(72)],
    )


def playout(packed: Packed, play: PlayCard, rng: random.Random, max_steps: int = 100_000) -> tuple[int, list[int]]:
    """Play ``play`` for the active seat of ``packed``, then the round on with :func:`greedy_policy` for every
    seat, as ``world.clone(rng)``, ``_apply`` of the play and :func:`simulate` ``(rounds=1, max_steps)`` would.

    The same rules (C8-C15) and the same decisions, on ints instead of cards, events and prompts: about five
    times faster, so a search samples more worlds in its time. Returns the steps simulated after ``play`` and
    every seat's standing at the end: its total plus its hand's symbols, which are its new totals when the
    round ended (:func:`standing`). ``packed`` is not changed; ``rng`` draws the reshuffles (C13) as the
    engine's generator would.
    """
    seats = packed.seats
    hands = [hand[:] for hand in packed.hands]
    tops = packed.tops[:]
    penalty = packed.penalty[:]
    aside = packed.aside[:]
    points = packed.points
    active = packed.active
    previous = packed.previous
    card = _INT_OF[play.card]
    right = play.side is Side.RIGHT
    steps = 0
    while True:
        # C8: the play
        hand = hands[active]
        hand.remove(card)
        row = card // 18
        tops[2 * row + right] = card % 18 + 1
        owed = 1 if row == previous else 0  # C9
        a, b = tops[2 * row], tops[2 * row + 1]
        low, high = (a, b) if a < b else (b, a)
        if high - low > 1:
            # C10, C12: every other seat throws every card of the row strictly between the tops
            first, stop = row * 18 + low, row * 18 + high - 1
            throwers = [s for s in range(seats) if s != active and any(first <= c < stop for c in hands[s])]
            if throwers:
                if steps >= max_steps:
                    break  # the throw step is one more step of the engine's
                steps += 1
                for s in throwers:
                    thrown = [c for c in hands[s] if first <= c < stop]
                    hands[s] = [c for c in hands[s] if not first <= c < stop]
                    aside.extend(thrown)
                    owed += len(thrown)
        if owed:
            # C13: draw what is owed; the set-aside cards are reshuffled when the penalty pile runs out
            hand = hands[active]
            drawn = 0
            while drawn < owed:
                if not penalty:
                    if not aside:
                        break
                    penalty, aside = aside, []
                    rng.shuffle(penalty)
                hand.append(penalty.pop())
                drawn += 1
            hand.sort()
        previous = row
        if not all(hands) or steps >= max_steps:
            break  # C14: the round ends; or the horizon
        active = (active + 1) % seats
        steps += 1
        card, right = _greedy_int(hands, active, tops, previous, len(aside), points)
    return steps, [total + sum(points[c] for c in hand) for total, hand in zip(packed.totals, hands, strict=True)]


# The values strictly between two values, as a bit mask (bit v for the value v), by (low, high).
_INSIDE: list[list[int]] = [[((1 << high) - 1) ^ ((1 << (low + 1)) - 1) if high > low + 1 else 0
                             for high in range(19)] for low in range(19)]


def _greedy_int(hands: list[list[int]], seat: int, tops: list[int], previous: int, aside: int,
                points: list[int]) -> tuple[int, bool]:
    """Return :func:`greedy_policy`'s play on ints: the same costs, the same order of choices, the same ties.

    A card's own value is one end of the gap it opens, never inside it, so the hand's cards inside are counted
    from a bit mask of the hand's values in the row."""
    hand = hands[seat]
    size = len(hand)
    others = sum(map(len, hands)) - size
    unseen = max(1, 72 - size - aside)
    factor = min(1.0, others / unseen * 2)
    held = [0, 0, 0, 0]
    for card in hand:
        held[card // 18] |= 1 << (card % 18 + 1)
    inside = _INSIDE
    best_card = -1
    best_right = False
    best_cost = 0.0
    best_tie = 0
    for card in hand:
        row = card // 18
        value = card % 18 + 1
        colour_cost = 1.0 if row == previous else 0.0
        tie = -points[card]
        mask = held[row]
        for right in (False, True):
            other = tops[2 * row] if right else tops[2 * row + 1]
            low, high = (value, other) if value < other else (other, value)
            gap = high - low - 1
            if gap > 0:
                gap -= (mask & inside[low][high]).bit_count()
            cost = colour_cost + gap * factor
            if best_card < 0 or cost < best_cost or (cost == best_cost and tie < best_tie):
                best_card, best_right, best_cost, best_tie = card, right, cost, tie
    return best_card, best_right


# ------------------------------------------------------------------------------------------------ search


def standing(state: CabangaState) -> list[int]:
    """Return every seat's total as if the round ended now: its total plus its hand's penalty symbols (C15).

    The evaluation of a rollout cut short by a horizon.
    """
    symbols = state.options.symbols
    return [total + sum(symbols[c.value - 1] for c in hand) for total, hand in zip(state._totals, state._hands,
                                                                                    strict=True)]


@dataclass
class SearchReport:
    """What one search did: worlds sampled, rollouts played, steps simulated, each candidate's mean utility."""

    worlds: int = 0
    rollouts: int = 0
    steps: int = 0
    means: dict[str, float] = field(default_factory=dict)


def pimc_play(view: CabangaView, choices: Sequence[PlayCard], knowledge: CabangaKnowledge, rng: random.Random,
              clock: SearchClock, *, options: CabangaOptions | None = None, width: int = 6,
              horizon: int | None = None, max_worlds: int | None = None,
              report: SearchReport | None = None) -> PlayCard:
    """Return the play that did best over sampled worlds (determinized search, PIMC).

    The ``width`` best plays by the greedy plan are tried in every world sampled (common random numbers: each
    candidate meets the same deal and the same later shuffles), the round played out by :func:`greedy_policy`
    for every seat (:func:`playout`, the engine's play on ints), and scored by
    :func:`~arena.games.search.round_utility`. Worlds are sampled until ``clock`` expires (checked after every
    rollout; a world cut short does not count) or ``max_worlds``; with no complete world the greedy play is
    returned.
    """
    opts = options if options is not None else CabangaOptions()
    ranked = ranked_plays(view, choices, opts.symbols)
    candidates = ranked[:width]
    if len(candidates) == 1:
        return candidates[0]
    totals = [0.0] * len(candidates)
    worlds = 0
    seat = view.seat
    before = view.totals
    max_steps = horizon if horizon is not None else 100_000
    stop = False
    while not stop and (max_worlds is None or worlds < max_worlds):
        packed = pack(sample_world(view, knowledge, rng, opts))
        world_seed = rng.getrandbits(32)
        scores = []
        for play in candidates:
            steps, after = playout(packed, play, random.Random(world_seed), max_steps)
            if report is not None:
                report.rollouts += 1
                report.steps += steps + 1
            scores.append(round_utility(before, after, seat))
            if clock.expired() and max_worlds is None:
                stop = True
                break
        if len(scores) < len(candidates):
            break
        worlds += 1
        for i, score in enumerate(scores):
            totals[i] += score
    if report is not None:
        report.worlds += worlds
        report.means = {p.text: t / max(1, worlds) for p, t in zip(candidates, totals, strict=True)}
    if not worlds:
        return candidates[0]
    best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
    return candidates[best]


def options_from(raw: Mapping[str, Any]) -> CabangaOptions:
    """Return the match's options from a :class:`~arena.games.base.MatchInfo`'s ``options`` (``None`` left out)."""
    from arena.games.cabanga import CABANGA

    return CABANGA.options({k: v for k, v in raw.items() if v is not None and k in ("target", "rounds", "symbols")})
