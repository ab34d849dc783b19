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

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from arena.games.search import MatchOdds, SearchClock, Slot, deal, round_utility

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


# The values strictly between a row's two tops as a bit mask, by the tops as one int (left | right << 5).
_GAP_OF_PAIR: list[int] = [0] * (19 << 5)
for _left in range(19):
    for _right in range(19):
        _GAP_OF_PAIR[_left | _right << 5] = _INSIDE[min(_left, _right)][max(_left, _right)]

# The seats other than each seat, in seat order, by the number of seats.
_OTHERS: dict[int, list[tuple[int, ...]]] = {n: [tuple(s for s in range(n) if s != a) for a in range(n)]
                                             for n in range(1, 7)}


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


# ------------------------------------------------------------------------------------- packed worlds (hard)

# A packed world keeps each hand as four row masks (bit v for the value v, 1..18): a play flips one bit, a throw
# is one ``&``, the greedy plan of a row is one dictionary look-up (:class:`PlanCache`), and no card object, event
# or prompt is made per step. Card ints are those of :data:`_INT_OF`: ``row * 18 + value - 1``.

_CARD_OF: tuple[Card, ...] = NUMBER_CARDS
_FOUR = (0, 1, 2, 3)
_ROW_BIT: tuple[tuple[int, int], ...] = tuple((i // 18, 1 << (i % 18 + 1)) for i in range(72))


@dataclass(slots=True)
class PackedWorld:
    """A whole sampled world of one round, as ints, at a PLAY or a THROW step.

    ``hands[s][row]``: seat ``s``'s values of ``row`` as a bit mask; ``sizes[s]`` its card count. ``tops``: the
    eight pile tops' values. ``previous``: the row played the turn before (-1: none yet). ``penalty``: the
    penalty pile's card ints; ``ordered`` says it is in the pile's order (drawn from its end, as the engine does;
    a world packed from a real state), otherwise it is in no order and a draw takes a random one of it (the same
    law as a shuffled pile, without shuffling). ``aside``: the set-aside card ints. At a THROW step ``row`` is the
    row just played and ``owed`` what the active seat owes so far (C9).
    """

    seats: int
    active: int
    previous: int
    throw: bool
    row: int
    owed: int
    hands: list[list[int]]
    sizes: list[int]
    tops: list[int]
    penalty: list[int]
    aside: list[int]
    totals: list[int]
    ordered: bool = False
    seen: list[int] = field(default_factory=lambda: [0, 0, 0, 0])


def pack_world(world: CabangaState) -> PackedWorld:
    """Return ``world`` (at a PLAY or THROW step) packed, its penalty pile in its order (``ordered``)."""
    if world._step not in ("play", "throw"):
        raise ValueError("a world is packed at a PLAY or THROW step")
    index = _INT_OF
    hands = []
    for hand in world._hands:
        masks = [0, 0, 0, 0]
        for card in hand:
            row, bit = _ROW_BIT[index[card]]
            masks[row] |= bit
        hands.append(masks)
    previous = world._previous_colour
    throw = world._step == "throw"
    return PackedWorld(
        seats=world.seats, active=world._active, previous=ROWS.index(previous) if previous is not None else -1,
        throw=throw, row=world._row if throw else -1, owed=world._owed if throw else 0, hands=hands,
        sizes=[len(h) for h in world._hands], tops=[pile[-1].value for pile in world._piles],
        penalty=[index[c] for c in world._penalty], aside=[index[c] for c in world._set_aside],
        totals=list(world._totals), ordered=True, seen=_seen_masks(
            [c for pile in world._piles for c in pile[1:]] + list(world._set_aside)))


def _seen_masks(cards: Iterable[Card]) -> list[int]:
    masks = [0, 0, 0, 0]
    for card in cards:
        row, bit = _ROW_BIT[_INT_OF[card]]
        masks[row] |= bit
    return masks


CACHE_ROWS = 200_000
"""Rows a :class:`PlanCache` table holds at most between searches (about 40 MB of tuples)."""


class PlanCache:
    """The rollout policies' choice within one row, by the row's two tops and the hand's values in it, remembered.

    For the greedy plan (:func:`greedy_policy`): the least (gap left open, -symbols) of the row's plays, first in
    card order and LEFT before RIGHT; for the dumping plan: the most symbols, then the least gap. Both depend on
    the row alone, so a step is at most four look-ups, and the same rows come back in every rollout of a search.
    """

    def __init__(self, symbols: Sequence[int]) -> None:
        self.points = [symbols[i % 18] for i in range(72)]
        self.symbols = tuple(symbols)
        self.greedy: dict[int, tuple[int, int, int, bool]] = {}
        self.dump: dict[int, tuple[int, int, int, bool]] = {}
        self.mask_points: dict[int, int] = {}
        self.tracked_rows: dict[int, tuple[tuple[int, int, int, bool], ...]] = {}
        self.by_value = (0, *symbols)

    def trim(self, most: int = CACHE_ROWS) -> None:
        """Forget every table that holds more than ``most`` rows (a long match's searches meet many)."""
        for table in (self.greedy, self.dump, self.mask_points, self.tracked_rows):
            if len(table) > most:
                table.clear()

    def tracked(self, left: int, right: int, mask: int, seen: int) -> tuple[tuple[int, int, int, bool], ...]:
        """Return the tracking plan's candidates in a row: (cards still out in the gap, symbols, value, right side)
        for every play no other play beats on both (fewer cards out, more symbols shed), fewest out first.

        The tracking plan is a card-counting heuristic's: a play costs the cards of its gap that are neither in
        the hand nor known out of play (``seen``), times 1.5 times the chance another seat holds one, plus one for
        a repeated colour, less 0.3 a symbol shed; the least cost wins (the heuristic of
        ``benchmarks/outside_bots/cabanga_tracker.py``, which beats the greedy plan)."""
        key = left | right << 5 | mask << 10 | seen << 29
        found = self.tracked_rows.get(key)
        if found is not None:
            return found
        symbols = self.symbols
        known = mask | seen
        plays = []
        for value in range(1, 19):
            if not mask >> value & 1:
                continue
            for side_right in (False, True):
                other = left if side_right else right
                low, high = (value, other) if value < other else (other, value)
                out = (_INSIDE[low][high] & ~known).bit_count() if high - low > 1 else 0
                plays.append((out, symbols[value - 1], value, side_right))
        plays.sort(key=lambda p: (p[0], -p[1]))
        kept: list[tuple[int, int, int, bool]] = []
        for play in plays:
            if not kept or play[1] > kept[-1][1]:
                kept.append(play)
        found = self.tracked_rows[key] = tuple(kept)
        return found

    def row_plan(self, left: int, right: int, mask: int, dump: bool) -> tuple[int, int, int, bool]:
        """Return (gap, -symbols, value, right side) of the row's best play for the plan (remembered)."""
        key = left | right << 5 | mask << 10
        table = self.dump if dump else self.greedy
        found = table.get(key)
        if found is not None:
            return found
        if not dump:
            found = table[key] = greedy_row(left, right, mask, self.by_value)
            return found
        found = table[key] = self.tried_row(left, right, mask, dump)
        return found

    def tried_row(self, left: int, right: int, mask: int, dump: bool) -> tuple[int, int, int, bool]:
        """Return :meth:`row_plan` found by trying every play of the row, in the engine's order of choices (the
        reference :func:`greedy_row` must agree with)."""
        inside = _INSIDE
        symbols = self.symbols
        best_order: tuple[int, int] | None = None
        best = (0, 0, 0, False)
        rest = mask
        while rest:  # the hand's values in the row, lowest first
            low_bit = rest & -rest
            rest ^= low_bit
            value = low_bit.bit_length() - 1
            tie = -symbols[value - 1]
            for side_right, other in ((False, right), (True, left)):
                low, high = (value, other) if value < other else (other, value)
                gap = high - low - 1
                if gap > 0:
                    gap -= (mask & inside[low][high]).bit_count()
                order = (tie, gap) if dump else (gap, tie)
                if best_order is None or order < best_order:
                    best_order = order
                    best = (gap, tie, value, side_right)
        return best


def greedy_row(left: int, right: int, mask: int, by_value: Sequence[int]) -> tuple[int, int, int, bool]:
    """Return (gap, -symbols, value, right side) of the greedy plan's best play in a row with tops ``left`` and
    ``right`` from the hand's values ``mask`` (bit v for the value v; ``by_value[v]`` its symbols): the least gap
    left open (the hand's own cards in it count as closed), the most symbols on a tie, then the first in the
    engine's order of choices (the lower value, the left pile), as trying every play finds it
    (:meth:`PlanCache.tried_row`, the reference).

    Without trying every play: onto a pile, the hand's nearest value below the other top leaves the least gap
    below it, and so does every value of the unbroken run of the hand's values down from it (the run's own cards
    close the gap they open); the same above; a card of the other top's own value leaves a gap of -1, as the
    greedy plan counts it (``high - low - 1``)."""
    best: tuple[int, int, int, bool] | None = None
    for side_right, other in ((False, right), (True, left)):
        if mask >> other & 1:
            found = (-1, -by_value[other], other, side_right)
            if best is None or found < best:
                best = found
            continue
        below = mask & ((1 << other) - 1)
        if below:
            v = below.bit_length() - 1
            most = by_value[v]
            value = v
            w = v - 1
            while w and mask >> w & 1:
                if by_value[w] >= most:  # the lower value on a tie
                    most, value = by_value[w], w
                w -= 1
            found = (other - v - 1, -most, value, side_right)
            if best is None or found < best:
                best = found
        above = mask >> (other + 1)
        if above:
            v = other + (above & -above).bit_length()
            most = by_value[v]
            value = v
            w = v + 1
            while mask >> w & 1:
                if by_value[w] > most:  # the lower value on a tie
                    most, value = by_value[w], w
                w += 1
            found = (v - other - 1, -most, value, side_right)
            if best is None or found < best:
                best = found
    assert best is not None
    return best


@dataclass(frozen=True, slots=True)
class SeatPolicy:
    """How a rollout plays one seat: ``throw`` the chance it throws what it may at a gap (else nothing), ``dump``
    the chance a play is the dumping plan (the costliest card) instead of its plan (greedy, or tracking)."""

    throw: float = 1.0
    dump: float = 0.0
    track: bool = False
    """Play by the tracking plan (:meth:`PlanCache.tracked`) instead of the greedy plan."""
    noise: float = 0.0
    """The chance a play is one of the seat's plays at random (epsilon-greedy): no seat plays its plan always."""
    colour: float = 1.0
    """What the greedy plan counts a repeated colour (C9: one card drawn) at; the bundled greedy bot's is 1."""
    scale: float = 2.0
    """The greedy plan's cost of a card of an open gap: the other seats' cards over the unseen ones, times this,
    at most 1 (the bundled greedy bot's is 2). A plan that weighs the colour more than the gaps (``colour`` 2, or
    ``scale`` 1) beats the bundled one in greedy-against-greedy matches: docs/figures.md."""
    exact: bool = False
    """Play by the world's plan instead (:func:`exact_row`): a play costs the cards of the gap it opens that the
    other seats hold in the sampled world, each times that seat's throwing chance, plus one for a repeated colour;
    the most symbols shed on a tie. The search's own later turns see the world they are played in, as the search
    itself would choose them (a better plan than the greedy one's guess of the gap's cost)."""


def exact_row(hands: Sequence[Sequence[int]], seat: int, others: Sequence[int], tops: Sequence[int], previous: int,
              throws: Sequence[float], by_value: Sequence[int]) -> tuple[int, int, bool]:
    """Return (row, value, right side) of ``seat``'s play by the world's plan (:class:`SeatPolicy` ``exact``): the
    least expected draw, the cards of the gap it opens that the ``others`` hold (``hands``, row masks) times their
    throwing chances (``throws``), plus one if its row is ``previous`` (C9); on a tie the most symbols
    (``by_value[v]``), then the first in the engine's order of choices (row, value, LEFT before RIGHT)."""
    hand = hands[seat]
    inside = _INSIDE
    best_cost = 1e9
    best_tie = 0
    row = value = -1
    right = False
    for r in _FOUR:
        mask = hand[r]
        if not mask:
            continue
        held = [(hands[s][r], throws[s]) for s in others]
        base = 1.0 if r == previous else 0.0
        left_top, right_top = tops[2 * r], tops[2 * r + 1]
        rest = mask
        while rest:
            low_bit = rest & -rest
            rest ^= low_bit
            v = low_bit.bit_length() - 1
            tie = -by_value[v]
            for side_right, other in ((False, right_top), (True, left_top)):
                gap = inside[v][other] if v < other else inside[other][v]
                cost = base
                if gap:
                    for cards, chance in held:
                        if cards & gap:
                            cost += (cards & gap).bit_count() * chance
                if cost < best_cost or (cost == best_cost and tie < best_tie):
                    best_cost, best_tie, row, value, right = cost, tie, r, v, side_right
    return row, value, right


def rollout(world: PackedWorld, first: tuple[int, bool], policies: Sequence[SeatPolicy], cache: PlanCache,
            rng: random.Random, max_steps: int = 100_000) -> tuple[int, list[int]]:
    """Play ``first`` in a copy of ``world`` (at a PLAY step: the active seat's play, as (card int, right side)),
    then the round on by ``policies``; return (steps, standings).

    A seat's policy says how often it throws at a gap and how often it plays the dumping plan instead of the
    greedy one (:class:`SeatPolicy`). The rules are the engine's (C8-C15), steps counted as :func:`simulate`
    counts them: with every policy the greedy one (``throw`` 1, ``dump`` 0) and an ``ordered`` pile, the same
    plays, throws, draws and reshuffles as the engine with the same ``rng`` (:func:`playout`). Standings: each
    seat's total plus its hand's symbols (:func:`standing`). ``world`` is not changed.
    """
    return RolloutPlan(policies, cache).run(world, first, rng, max_steps)


def rollout_throw(world: PackedWorld, seat: int, thrown: int, policies: Sequence[SeatPolicy], cache: PlanCache,
                  rng: random.Random, max_steps: int = 100_000) -> tuple[int, list[int]]:
    """At a THROW step: ``seat`` throws the values of the mask ``thrown`` (of the throw row), every other seat
    by its policy; then the round goes on as in :func:`rollout`."""
    return RolloutPlan(policies, cache).run_throw(world, seat, thrown, rng, max_steps)


_Prepared = tuple[list[float], list[float], list[bool], bool, list[bool], list[float], list[float], list[float],
                  list[bool]]


class RolloutPlan:
    """The rollouts of one search: every seat's policy read once into lists by seat, then :meth:`run` and
    :meth:`run_throw` as :func:`rollout` and :func:`rollout_throw` (which make one for each call)."""

    def __init__(self, policies: Sequence[SeatPolicy], cache: PlanCache) -> None:
        tracks = [policy.track for policy in policies]
        self.cache = cache
        self.prepared: _Prepared = ([policy.dump for policy in policies], [policy.throw for policy in policies],
                                    tracks, any(tracks),
                                    [not p.track and p.dump <= 0.0 and p.noise <= 0.0 and p.colour == 1.0 and
                                     p.scale == 2.0 and not p.exact for p in policies],
                                    [policy.noise for policy in policies], [policy.colour for policy in policies],
                                    [policy.scale for policy in policies], [policy.exact for policy in policies])

    def run(self, world: PackedWorld, first: tuple[int, bool], rng: random.Random,
            max_steps: int = 100_000) -> tuple[int, list[int]]:
        """Return :func:`rollout` ``(world, first, ...)``."""
        return _run(world, first, -1, self.prepared, self.cache, rng, max_steps)

    def run_throw(self, world: PackedWorld, seat: int, thrown: int, rng: random.Random,
                  max_steps: int = 100_000) -> tuple[int, list[int]]:
        """Return :func:`rollout_throw` ``(world, seat, thrown, ...)``."""
        return _run(world, thrown, seat, self.prepared, self.cache, rng, max_steps)


def _run(world: PackedWorld, first: tuple[int, bool] | int | None, decider: int, prepared: _Prepared,
         cache: PlanCache, rng: random.Random, max_steps: int) -> tuple[int, list[int]]:
    """The packed rollout: ``first`` is the active seat's play at a PLAY step (``None``: its own plan's, counted as
    a step), or ``decider``'s throw mask at a THROW step."""
    seats = world.seats
    hands = [h[:] for h in world.hands]
    sizes = world.sizes[:]
    tops = world.tops[:]
    penalty = world.penalty[:]
    aside = world.aside[:]
    ordered = world.ordered
    gaps = _GAP_OF_PAIR
    others_of = _OTHERS[seats]
    greedy_get = cache.greedy.get
    dump_rows = cache.dump
    dumps, throws, tracks, tracking, plain, noises, colours, scales, exacts = prepared
    seen = world.seen[:]
    seen_count = sum(m.bit_count() for m in seen) if tracking else 0
    tracked = cache.tracked
    pairs = [tops[0] | tops[1] << 5, tops[2] | tops[3] << 5, tops[4] | tops[5] << 5, tops[6] | tops[7] << 5]
    row_plan = cache.row_plan
    random_ = rng.random
    active = world.active
    previous = world.previous
    steps = 0
    total_cards = sum(sizes)
    mine = 0
    owed = 0
    row = value = 0
    right = False
    if world.throw:
        row = world.row
        owed = world.owed
        stage = 1  # the throw of the row just played
        assert isinstance(first, int)
        mine = first
    elif first is None:
        stage = 2  # the active seat's plan chooses
        steps = -1
    else:
        assert isinstance(first, tuple)
        value = first[0] % 18 + 1
        row = first[0] // 18
        right = first[1]
        stage = 0
    while True:
        if stage == 2:
            # the next play, by the seat's plan
            steps += 1
            hand = hands[active]
            size = sizes[active]
            unseen = 72 - size - len(aside)
            factor = (total_cards - size) / (unseen if unseen > 1 else 1) * 2
            if factor > 1.0:
                factor = 1.0
            if plain[active]:
                # the greedy plan (:func:`greedy_policy`): the least expected penalty, the costliest card on a tie;
                # the same floats as its ``colour + gap * factor``, so the same ties
                best_cost = 1e9
                best_tie = 0
                for r in _FOUR:
                    mask = hand[r]
                    if mask:
                        plan = greedy_get(pairs[r] | mask << 10)
                        if plan is None:
                            plan = row_plan(tops[2 * r], tops[2 * r + 1], mask, False)
                        cost = plan[0] * factor
                        if r == previous:
                            cost = 1.0 + cost
                        if cost < best_cost or (cost == best_cost and plan[1] < best_tie):
                            best_cost, best_tie, row, value, right = cost, plan[1], r, plan[2], plan[3]
            elif exacts[active]:  # never plain: a measuring knob kept off the greedy plan's way
                # the world's plan: what the other seats of this world would throw into the gap, by their chances
                row, value, right = exact_row(hands, active, others_of[active], tops, previous, throws,
                                              cache.by_value)
            else:
                chance = dumps[active]
                dumping = chance > 0.0 and random_() < chance
                noise = noises[active]
                if noise > 0.0 and random_() < noise:
                    # a play at random: a card of the hand, a pile
                    k = int(random_() * sizes[active])
                    for r in _FOUR:
                        count = hand[r].bit_count()
                        if k < count:
                            rest = hand[r]
                            for _ in range(k):
                                rest &= rest - 1
                            row, value, right = r, (rest & -rest).bit_length() - 1, random_() < 0.5
                            break
                        k -= count
                elif tracks[active] and not dumping:
                    # the tracking plan: the cards still out in the gap, times the chance another seat holds one
                    out_cost = (total_cards - size) / max(1, 72 - seen_count - size)
                    out_cost = 1.5 * (out_cost if out_cost < 1.0 else 1.0)
                    best_cost = 1e9
                    for r in _FOUR:
                        mask = hand[r]
                        if mask:
                            base_cost = 1.0 if r == previous else 0.0
                            for out, symbols_shed, v, side in tracked(tops[2 * r], tops[2 * r + 1], mask, seen[r]):
                                cost = base_cost + out * out_cost - 0.3 * symbols_shed
                                if cost < best_cost:
                                    best_cost, row, value, right = cost, r, v, side
                elif dumping:
                    # the dumping plan: the costliest card first, then the least expected penalty
                    best_cost = 0.0
                    best_tie = 0
                    row = -1
                    for r in _FOUR:
                        mask = hand[r]
                        if mask:
                            plan = dump_rows.get(pairs[r] | mask << 10)
                            if plan is None:
                                plan = row_plan(tops[2 * r], tops[2 * r + 1], mask, True)
                            cost = (1.0 if r == previous else 0.0) + plan[0] * factor
                            if row < 0 or plan[1] < best_tie or (plan[1] == best_tie and cost < best_cost):
                                best_cost, best_tie, row, value, right = cost, plan[1], r, plan[2], plan[3]
                else:
                    # the greedy plan, at the seat's own weights
                    factor = (total_cards - size) / (unseen if unseen > 1 else 1) * scales[active]
                    if factor > 1.0:
                        factor = 1.0
                    colour = colours[active]
                    best_cost = 1e9
                    best_tie = 0
                    for r in _FOUR:
                        mask = hand[r]
                        if mask:
                            plan = greedy_get(pairs[r] | mask << 10)
                            if plan is None:
                                plan = row_plan(tops[2 * r], tops[2 * r + 1], mask, False)
                            cost = plan[0] * factor
                            if r == previous:
                                cost = colour + cost
                            if cost < best_cost or (cost == best_cost and plan[1] < best_tie):
                                best_cost, best_tie, row, value, right = cost, plan[1], r, plan[2], plan[3]
            stage = 0
        if stage == 0:
            # C8: the play; C9: a repeated colour owes one card
            hands[active][row] ^= 1 << value
            sizes[active] -= 1
            total_cards -= 1
            tops[2 * row + right] = value
            pairs[row] = tops[2 * row] | tops[2 * row + 1] << 5
            if tracking and not seen[row] >> value & 1:
                seen[row] |= 1 << value
                seen_count += 1
            owed = 1 if row == previous else 0
        # C10-C12: the other seats throw into the gap of the row just played
        gap_mask = gaps[pairs[row]]
        if gap_mask:
            prompted = False
            for s in others_of[active]:
                held = hands[s][row] & gap_mask
                if not held:
                    continue
                if not prompted:
                    prompted = True
                    if stage == 0:
                        if steps >= max_steps:
                            return steps, _standings(world.totals, hands, cache)
                        steps += 1
                if s == decider and stage == 1:
                    throw = held & mine
                else:
                    p = throws[s]
                    throw = held if p >= 1.0 or (p > 0.0 and random_() < p) else 0
                if throw:
                    hands[s][row] ^= throw
                    seen[row] |= throw
                    count = throw.bit_count()
                    seen_count += count
                    sizes[s] -= count
                    total_cards -= count
                    owed += count
                    base = row * 18 - 1
                    while throw:
                        low_bit = throw & -throw
                        aside.append(base + low_bit.bit_length() - 1)
                        throw ^= low_bit
        if owed:
            # C13: draw what is owed; the set-aside cards become the pile when it runs out
            hand = hands[active]
            drawn = 0
            while drawn < owed:
                if not penalty:
                    if not aside:
                        break
                    penalty, aside = aside, []
                    for card in penalty if tracking else ():  # back in the pile: no longer known out of play
                        bit = 1 << (card % 18 + 1)
                        if seen[card // 18] & bit:
                            seen[card // 18] ^= bit
                            seen_count -= 1
                    if ordered:
                        rng.shuffle(penalty)
                if ordered:
                    card = penalty.pop()
                else:
                    i = int(random_() * len(penalty))
                    card = penalty[i]
                    penalty[i] = penalty[-1]
                    penalty.pop()
                hand[card // 18] |= 1 << (card % 18 + 1)
                drawn += 1
            sizes[active] += drawn
            total_cards += drawn
        previous = row
        if 0 in sizes or steps >= max_steps:
            return steps, _standings(world.totals, hands, cache)  # C14: the round ends; or the horizon
        active = (active + 1) % seats
        stage = 2


def _standings(totals: Sequence[int], hands: Sequence[Sequence[int]], cache: PlanCache) -> list[int]:
    """Return each seat's total plus its hand's symbols (C15), a row mask's symbols remembered."""
    known = cache.mask_points
    out = []
    for total, masks in zip(totals, hands, strict=True):
        for mask in masks:
            if mask:
                found = known.get(mask)
                if found is None:
                    found = known[mask] = sum(cache.symbols[v - 1] for v in range(1, 19) if mask >> v & 1)
                total += found
        out.append(total)
    return out


def partial_sample(rng: random.Random) -> Callable[[Sequence[int], int], tuple[list[int], list[int]]]:
    """Return ``sample(cards, k)``: ``k`` of ``cards`` drawn without replacement, uniformly, and the cards left (a
    partial Fisher-Yates shuffle of a copy, on ``rng.random``: cheaper than :meth:`random.Random.sample` for these
    sizes, and the same law)."""
    random_ = rng.random

    def sample(cards: Sequence[int], k: int) -> tuple[list[int], list[int]]:
        pool = list(cards)
        n = len(pool)
        if k > n:
            raise ValueError(f"cannot draw {k} of {n} cards")
        for i in range(k):
            j = i + int(random_() * (n - i))
            pool[i], pool[j] = pool[j], pool[i]
        return pool[:k], pool[k:]

    return sample


class WorldSampler:
    """Deals packed worlds that agree with a seat's view and knowledge (the same law as :func:`sample_world`).

    Built once a decision from the view, the knowledge and which seats' inferences to trust (``trusted[s]``:
    seat ``s`` is believed to throw every card it may, so the cards of a gap it did not throw into are not in
    its hand, C10; default: every seat, as :class:`CabangaKnowledge` assumes); then :meth:`sample` deals one
    world in a few microseconds: a hand is drawn from the cards it may hold, the rest is the penalty pile in no
    order (a packed world draws from it at random, which is the law of a shuffled pile). ``relaxed`` counts the
    deals that had to drop an inference (a seat that cannot be dealt its hand otherwise).
    """

    def __init__(self, view: CabangaView, knowledge: CabangaKnowledge, trusted: Sequence[bool] | None = None
                 ) -> None:
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
        index = _INT_OF
        self.view = view
        self.seats = seats
        self.me = me
        self.unseen = [index[c] for c in unseen]
        self.extra = len(unseen) - (sum(n for s, n in enumerate(view.hand_sizes) if s != me) + view.penalty_size
                                    + hidden_aside)
        self.hidden_aside = hidden_aside
        self.penalty_size = view.penalty_size
        self.aside_known = [index[c] for c in aside_known]
        pool = knowledge.pool
        self.pool: frozenset[int] | None = None
        if pool is not None and len(pool.intersection(unseen)) >= view.penalty_size:
            self.pool = frozenset(index[c] for c in pool)
        # the hands: (seat, cards under the inference, excluded card ints as a mask, cards drawn since)
        self.constrained: list[tuple[int, int, int]] = []
        self.free: list[tuple[int, int]] = []
        for s, size in enumerate(view.hand_sizes):
            if s == me:
                continue
            trust = trusted is None or trusted[s]
            excluded = knowledge.cannot_hold[s] if trust else set()
            free = min(size, knowledge.free[s]) if excluded else size
            if size - free:
                mask = 0
                for card in excluded:
                    mask |= 1 << index[card]
                self.constrained.append((s, size - free, mask))
            self.free.append((s, free))
        self.constrained.sort(key=lambda slot: -slot[2].bit_count())
        own = [0, 0, 0, 0]
        for card in view.hand:
            row, bit = _ROW_BIT[index[card]]
            own[row] |= bit
        self.own = own
        self.tops = [c.value for c in view.tops]
        self.previous = ROWS.index(view.previous_colour) if view.previous_colour is not None else -1
        self.throw = view.step == "throw"
        self.row = ROWS.index(view.throw_row) if view.throw_row is not None else -1
        self.owed = 1 if self.throw and knowledge.penalty_owed else 0
        self.seen = _seen_masks(knowledge.played | knowledge.aside)
        self.relaxed = 0

    def sample(self, rng: random.Random) -> PackedWorld:
        """Return one world dealt at random under the constraints."""
        avail = self.unseen
        sample = partial_sample(rng)
        if self.extra > 0:
            _, avail = sample(avail, self.extra)
        penalty: list[int] | None = None
        if self.pool is not None:
            pool = self.pool
            penalty, _ = sample([c for c in avail if c in pool], self.penalty_size)
            taken = set(penalty)
            avail = [c for c in avail if c not in taken]
        hands: list[list[int]] = [[0, 0, 0, 0] for _ in range(self.seats)]
        hands[self.me] = self.own[:]
        sizes = list(self.view.hand_sizes)
        row_bit = _ROW_BIT
        for seat, size, excluded in self.constrained:
            allowed = [c for c in avail if not excluded >> c & 1]
            if len(allowed) < size:
                self.relaxed += 1
                allowed = avail
            chosen, _ = sample(allowed, size)
            masks = hands[seat]
            for c in chosen:
                row, bit = row_bit[c]
                masks[row] |= bit
            taken = set(chosen)
            avail = [c for c in avail if c not in taken]
        wanted = sum(n for _, n in self.free)
        chosen, avail = sample(avail, wanted)
        at = 0
        for seat, n in self.free:
            masks = hands[seat]
            for c in chosen[at:at + n]:
                row, bit = row_bit[c]
                masks[row] |= bit
            at += n
        aside = self.aside_known[:]
        if penalty is None:
            if self.hidden_aside > 0:
                hidden, avail = sample(avail, self.hidden_aside)
                aside.extend(hidden)
            penalty = avail
        else:
            aside.extend(avail)
        return PackedWorld(self.seats, self.view.active, self.previous, self.throw, self.row, self.owed, hands,
                           sizes, self.tops[:], penalty, aside, list(self.view.totals), seen=self.seen)


# ------------------------------------------------------------------------------------------ opponent model

WIDE_GAP = 4
"""A play that leaves this many values or more open between its row's tops is a wide one (a plan that sheds
costly cards makes many; the greedy plan few)."""

GREEDY_WIDE_RATE = 0.3
"""About the most of its plays that the greedy plan makes wide in a match (greedy self-play, 3 seats: 0.10-0.31
a seat); a seat's dumping chance is how far above this its own share is (:meth:`CabangaModel.dump_rate`)."""

THROW_SHARE = 0.3
"""A seat that threw at fewer than this share of the gaps it likely could have thrown into is taken to throw
only sometimes (the chance that it held a card of a gap is an estimate from its hand size, and runs high: a seat
that throws everything shows about half of it)."""


@dataclass
class CabangaModel:
    """What each other seat has shown of its plan in this match, fitted as it plays (G2: public events only).

    Throwing: ``chances[s]`` sums, over every gap another seat opened, the chance that ``s`` held a card of it
    (from its hand size and the cards the observing seat has not seen), plus one for every gap it is later seen
    to have kept a card of (it plays a card of a gap it did not throw, having drawn nothing since); ``throws[s]``
    counts the gaps it threw into; ``kept[s]`` the gaps it kept cards of. Its throwing chance is ``(throws + 2)
    / (chances + 2)`` (a prior of two full throws), at most 1. Playing: ``plays[s]`` and ``wide[s]``, its plays
    and those that left a wide gap (:data:`WIDE_GAP`).
    """

    seat: int
    seats: int
    track: bool = False
    noise: float = 0.0
    own_track: bool = False
    own_colour: float = 1.0
    """The observing seat's own rollout plan's weights (:class:`SeatPolicy` ``colour`` and ``scale``)."""
    own_scale: float = 2.0
    others_colour: float = 1.0
    """The other seats' rollout plans' weights (the same)."""
    others_scale: float = 2.0
    own_exact: bool = False
    """The observing seat's own later turns in a rollout by the world's plan (:class:`SeatPolicy` ``exact``)."""
    others_exact: bool = False
    """The other seats' turns by the world's plan too (each knowing the world's hands: a stronger opponent)."""
    throws: list[float] = field(default_factory=list)
    chances: list[float] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)
    plays: list[int] = field(default_factory=list)
    wide: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    _gaps: list[list[tuple[frozenset[Card], int]]] = field(default_factory=list)
    _drawn: list[int] = field(default_factory=list)
    _gap: tuple[int, frozenset[Card]] | None = None
    _threw: set[int] = field(default_factory=set)
    tops: list[int] = field(default_factory=list)
    """The eight pile tops' values as the events tell them, and the row played last (-1: none this round)."""
    previous: int = -1
    last: list[tuple[list[int], int, int, int, bool, float] | None] = field(default_factory=list)
    """Each other seat's last play this round, if it drew nothing since: (the tops before it, the row played
    before it, its row, value, right side, the greedy plan's gap factor then); ``thrown_since`` its throws since."""
    thrown_since: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.seats
        self.throws = [0.0] * n
        self.chances = [0.0] * n
        self.kept = [0] * n
        self.plays = [0] * n
        self.wide = [0] * n
        self.sizes = [0] * n
        self._new_round(0)

    def _new_round(self, hand_size: int) -> None:
        self.sizes = [hand_size] * self.seats
        self._gaps = [[] for _ in range(self.seats)]
        self._drawn = [0] * self.seats
        self._gap = None
        self._threw = set()
        self.previous = -1
        self.last = [None] * self.seats
        self.thrown_since = [[] for _ in range(self.seats)]

    def observe(self, events: Iterable[Event], knowledge: CabangaKnowledge, hand: Sequence[Card] = ()) -> None:
        """Take in ``events`` (oldest first) and update ``knowledge`` with them too, event by event; ``hand`` is
        the observing seat's hand as last seen (its cards are not in anyone else's)."""
        for event in events:
            knowledge.observe((event,))
            kind = type(event)
            if kind is Played:
                assert isinstance(event, Played)
                seat = event.seat
                self._remember(seat, event, knowledge)
                self.sizes[seat] -= 1
                if seat != self.seat:
                    self._seen_play(seat, event)
                left, right = event.row_tops
                a, b = sorted((left.value, right.value))
                between = _BETWEEN[_ROW_OF[event.card]][a][b]
                self._gap = (seat, between) if between else None
                self._threw = set()
            elif kind is Threw:
                assert isinstance(event, Threw)
                self.sizes[event.seat] -= len(event.cards)
                self._threw.add(event.seat)
                self.thrown_since[event.seat].extend(_INT_OF[c] for c in event.cards)
            elif kind is ThrowsClosed:
                self._close(knowledge, hand)
            elif kind is Drew:
                assert isinstance(event, Drew)
                self.sizes[event.seat] += event.count
                self._drawn[event.seat] += event.count
                if event.count:
                    self.last[event.seat] = None  # its hand then is no longer its hand now plus what it shed
            elif kind is RoundStarted:
                assert isinstance(event, RoundStarted)
                self._new_round(event.hand_size)
                self.tops = [c.value for c in event.tops]

    def _remember(self, seat: int, event: Played, knowledge: CabangaKnowledge) -> None:
        row = _ROW_OF[event.card]
        if seat != self.seat and len(self.tops) == 8:
            size = self.sizes[seat]
            unseen = 72 - size - len(knowledge.aside)
            factor = min(1.0, (sum(self.sizes) - size) / (unseen if unseen > 1 else 1) * 2)
            self.last[seat] = (self.tops[:], self.previous, row, event.card.value, event.side is Side.RIGHT, factor)
            self.thrown_since[seat] = []
        if len(self.tops) == 8:
            self.tops[2 * row], self.tops[2 * row + 1] = event.row_tops[0].value, event.row_tops[1].value
        self.previous = row

    def hand_then(self, world: PackedWorld, seat: int) -> list[int]:
        """Return ``seat``'s hand (row masks) when it made its last play (:attr:`last`), were ``world`` true: its
        hand now, the card it played, the cards it threw since."""
        last = self.last[seat]
        assert last is not None
        hand = world.hands[seat][:]
        hand[last[2]] |= 1 << last[3]
        for card in self.thrown_since[seat]:
            hand[card // 18] |= 1 << (card % 18 + 1)
        return hand

    def fit(self, world: PackedWorld, cache: PlanCache, miss: float) -> float:
        """Return how likely ``world``'s hands made each other seat's last play, relative to the most likely: per
        seat whose hand then is known in the world (its hand now, its play, its throws since; nothing drawn
        since), 1 when it is the greedy plan's play with that hand, else ``miss`` (or its dumping chance, if
        higher); the product over the seats. Worlds kept with this chance are weighted by what the seats did, not
        only by what they could not hold (importance by rejection)."""
        chance = 1.0
        for seat, last in enumerate(self.last):
            if last is None or seat == self.seat:
                continue
            tops, previous, played_row, value, right, factor = last
            hand = self.hand_then(world, seat)
            best_cost = 1e9
            best_tie = 0
            best = (-1, -1, False)
            for r in _FOUR:
                mask = hand[r]
                if mask:
                    plan = cache.row_plan(tops[2 * r], tops[2 * r + 1], mask, False)
                    cost = plan[0] * factor
                    if r == previous:
                        cost = 1.0 + cost
                    if cost < best_cost or (cost == best_cost and plan[1] < best_tie):
                        best_cost, best_tie, best = cost, plan[1], (r, plan[2], plan[3])
            if best != (played_row, value, right):
                chance *= max(miss, self.dump_rate(seat))
        return chance

    def _seen_play(self, seat: int, event: Played) -> None:
        self.plays[seat] += 1
        left, right = event.row_tops
        if abs(left.value - right.value) - 1 >= WIDE_GAP:
            self.wide[seat] += 1
        kept = False
        for between, drawn in self._gaps[seat]:
            if event.card in between and drawn == self._drawn[seat]:
                kept = True  # it held this card when the gap opened and threw nothing of it
        if kept:
            self.kept[seat] += 1
            self.chances[seat] += 1.0

    def _close(self, knowledge: CabangaKnowledge, hand: Sequence[Card]) -> None:
        gap = self._gap
        self._gap = None
        if gap is None:
            return
        player, between = gap
        mine = set(hand)
        open_cards = [c for c in between if c not in mine and c not in knowledge.played and c not in knowledge.aside]
        unseen = max(1, 72 - len(knowledge.played) - len(knowledge.aside) - len(mine))
        for other in range(self.seats):
            if other in (player, self.seat):
                continue
            if other in self._threw:
                self.throws[other] += 1
                self.chances[other] += 1.0
                continue
            # the cards it may hold: not those of an earlier gap it let pass (as far as its draws allow)
            cannot = knowledge.cannot_hold[other] if not knowledge.free[other] else set()
            its = [c for c in open_cards if c not in cannot]
            if its:
                size = max(0, self.sizes[other])
                self.chances[other] += 1.0 - (1.0 - min(1.0, len(its) / unseen)) ** size
                self._gaps[other].append((frozenset(its), self._drawn[other]))

    def throw_rate(self, seat: int) -> float:
        """Return the chance that ``seat`` throws what it may at a gap: 1 while nothing says otherwise (it was
        never seen keeping a card back, and it threw at least :data:`THROW_SHARE` of its expected chances), else
        its throws over its chances (with one of each as a prior)."""
        throws, chances = self.throws[seat], self.chances[seat]
        if not self.kept[seat] and (chances < 4.0 or throws >= THROW_SHARE * chances):
            return 1.0
        return min(1.0, (throws + 1.0) / (chances + 1.0))

    def dump_rate(self, seat: int) -> float:
        """Return the chance that a play of ``seat`` follows the dumping plan rather than the greedy one: how far
        its share of wide plays is above the most the greedy plan shows (:data:`GREEDY_WIDE_RATE`)."""
        share = (self.wide[seat] + 6 * GREEDY_WIDE_RATE) / (self.plays[seat] + 6)
        return max(0.0, min(1.0, (share - GREEDY_WIDE_RATE) / (1.0 - GREEDY_WIDE_RATE)))

    def trusted(self) -> list[bool]:
        """Return, per seat, whether its gaps tell what it does not hold (it throws all it may, as far as seen)."""
        return [s == self.seat or (self.throw_rate(s) >= 1.0) for s in range(self.seats)]

    def policies(self) -> list[SeatPolicy]:
        """Return the rollout policy of every seat: its fitted chances; the observing seat's own plan greedy."""
        return [SeatPolicy(track=self.track or self.own_track, colour=self.own_colour, scale=self.own_scale,
                           exact=self.own_exact)
                if s == self.seat else
                SeatPolicy(self.throw_rate(s), self.dump_rate(s), self.track, self.noise, self.others_colour,
                           self.others_scale, self.others_exact) for s in range(self.seats)]


# ----------------------------------------------------------------------------------------- the hard search


def throw_options(view: CabangaView, candidates: Sequence[Card]) -> list[tuple[Card, ...]]:
    """Return the throws the hard search weighs: every candidate, none, and every candidate but one (up to four
    candidates; with more, every candidate but the one worth most, and but the one worth least)."""
    cards = tuple(candidates)
    options: list[tuple[Card, ...]] = [cards, ()]
    if len(cards) >= 2:
        if len(cards) <= 4:
            options += [tuple(c for c in cards if c != leave) for leave in cards]
        else:
            options += [cards[1:], cards[:-1]]
    return list(dict.fromkeys(options))


FIT_TRIES = 20
"""Deals a world may be dealt again for not fitting the seats' last plays (:meth:`CabangaModel.fit`)."""

PREFER_FIRST = 1.0
"""Standard errors by which an option must beat the first (the greedy plan's play, or every throw) to be chosen."""


def hard_search(view: CabangaView, options: Sequence[Any], knowledge: CabangaKnowledge, model: CabangaModel,
                rng: random.Random, clock: SearchClock, cache: PlanCache, *, max_worlds: int | None = None,
                min_worlds: int = 0, report: SearchReport | None = None, odds: MatchOdds | None = None,
                rounds_left: int | None = None, prefer_first: float = PREFER_FIRST, likely: float | None = None,
                horizon: int = 100_000) -> int:
    """Return the index of the best of ``options`` over worlds sampled until ``clock`` expires (or ``max_worlds``).

    ``options`` are, at a PLAY step, plays (:class:`PlayCard`), at a THROW step, throws (tuples of the throw
    row's cards). Each world is dealt by a :class:`WorldSampler` that trusts only the seats ``model`` believes
    throw everything; every option meets the same world and the same later draws (common random numbers); the
    round is played on by every seat's fitted policy (:meth:`CabangaModel.policies`) and scored by
    :func:`~arena.games.search.round_utility`. Options far behind the best are dropped as worlds come in
    (successive rejection: a mean more than :data:`PRUNE_Z` standard errors of the paired difference below the
    best's, from 24 worlds on), so the time goes to the close ones, and the search ends early when one option is
    clearly ahead of every other. With no complete world the first option is returned; another is chosen only when
    it beats the first by ``prefer_first`` standard errors of their paired difference. ``likely``: a world is
    kept with the chance :meth:`CabangaModel.fit` gives it (a world where a seat's last play was not its plan's
    with that chance), else dealt again (at most :data:`FIT_TRIES` deals). ``horizon``: a rollout stops after
    this many steps and is scored by the standings then (each seat's total plus its hand's symbols).
    """
    if len(options) == 1:
        return 0
    cache.trim()
    sampler = WorldSampler(view, knowledge, model.trusted())
    plan = RolloutPlan(model.policies(), cache)
    seat = view.seat
    before = view.totals
    throwing = view.step == "throw"
    moves: list[Any] = []
    for option in options:
        if throwing:
            mask = 0
            for card in option:
                mask |= 1 << card.value
            moves.append(mask)
        else:
            moves.append((_INT_OF[option.card], option.side is Side.RIGHT))
    n = len(options)
    sums = [0.0] * n
    alive = list(range(n))
    history: list[list[float]] = [[] for _ in range(n)]  # each option's score in every world it met
    worlds = 0
    sim = random.Random()
    stop = False
    while not stop and (max_worlds is None or worlds < max_worlds):
        world = sampler.sample(rng)
        if likely is not None:
            for _ in range(FIT_TRIES):
                if rng.random() < model.fit(world, cache, likely):
                    break
                world = sampler.sample(rng)
        world_seed = rng.getrandbits(32)
        scores: list[tuple[int, float]] = []
        for i in alive:
            sim.seed(world_seed)
            if throwing:
                steps, after = plan.run_throw(world, seat, moves[i], sim, horizon)
            else:
                steps, after = plan.run(world, moves[i], sim, horizon)
            if report is not None:
                report.rollouts += 1
                report.steps += steps + 1
            scores.append((i, odds.score(after, seat, rounds_left) if odds is not None else
                           round_utility(before, after, seat)))
            if max_worlds is None and worlds >= min_worlds and clock.expired():
                stop = True
                break
        if len(scores) < len(alive):
            break
        worlds += 1
        for i, score in scores:
            sums[i] += score
            history[i].append(score)
        if worlds >= 24 and worlds % max(8, worlds // 8) == 0 and len(alive) > 1:  # its cost kept a small share
            alive = _survivors(alive, sums, history)
            if len(alive) == 1 and max_worlds is None:
                break  # every other option is clearly behind: the rest of the time is not needed
    if report is not None:
        report.worlds += worlds
        report.means = {str(i): sums[i] / max(1, len(history[i])) for i in alive}
    if not worlds:
        return 0
    best = max(alive, key=lambda i: (sums[i], -i))
    if best != 0 and 0 in alive and worlds > 1:
        # the first option (the greedy plan's, or every throw) is kept unless another beats it clearly: the
        # best of many noisy means is biased upwards (the winner's curse)
        mean, spread = _paired(history[best], history[0])
        if mean < prefer_first * spread / worlds ** 0.5:
            return 0
    return best


PRUNE_Z = 3.0
"""Standard errors of the paired difference by which an option must trail the best to be dropped."""


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Return the mean and standard deviation of ``a[k] - b[k]`` over the worlds both met (the same worlds, the
    same draws: their difference varies far less than either score)."""
    k = len(a)
    total = 0.0
    square = 0.0
    for x, y in zip(a, b, strict=True):
        d = x - y
        total += d
        square += d * d
    mean = total / k
    return mean, max(0.0, square / k - mean * mean) ** 0.5


def _survivors(alive: list[int], sums: list[float], history: Sequence[Sequence[float]]) -> list[int]:
    """Return the options of ``alive`` not clearly behind the best: every alive option met every world so far, so
    each is compared with the best on the same worlds (common random numbers), by :data:`PRUNE_Z` standard errors
    of the paired difference."""
    best = max(alive, key=lambda i: sums[i])
    worlds = len(history[best])
    kept = []
    for i in alive:
        if i != best:
            mean, spread = _paired(history[best], history[i])
            if mean > PRUNE_Z * max(spread, 1e-9) / worlds ** 0.5:
                continue
        kept.append(i)
    return kept


# ------------------------------------------------------------------------------------------------ ISMCTS

EXPLORATION = 0.7
"""UCB1's exploration constant of the ISMCTS, in standard deviations of the rewards seen so far."""

WIDENING = 1.5
"""Progressive widening below the root: a node visited n times may try the k best moves by the greedy plan, k =
1 + WIDENING * sqrt(n); with few visits a node plays as the rollout would, so a thin branch is not judged by moves
no seat would make."""


def _moves_by_plan(hand: list[int], tops: list[int], previous: int, factor: float,
                   symbols: Sequence[int]) -> list[tuple[float, int, int, int, bool]]:
    """Return a hand's plays as (greedy cost, -symbols, row, value, right), best first by the greedy plan (its
    costs and its order of choices on ties)."""
    inside = _INSIDE
    moves = []
    for r in _FOUR:
        mask = hand[r]
        rest = mask
        colour = 1.0 if r == previous else 0.0
        left, right_top = tops[2 * r], tops[2 * r + 1]
        while rest:
            low_bit = rest & -rest
            rest ^= low_bit
            value = low_bit.bit_length() - 1
            tie = -symbols[value - 1]
            for side_right, other in ((False, right_top), (True, left)):
                low, high = (value, other) if value < other else (other, value)
                gap = high - low - 1
                if gap > 0:
                    gap -= (mask & inside[low][high]).bit_count()
                moves.append((colour + gap * factor, tie, r, value, side_right))
    moves.sort(key=lambda m: (m[0], m[1]))  # stable: card order, left before right, on a tie
    return moves


def _utilities(before: Sequence[int], after: Sequence[int], odds: MatchOdds | None,
               rounds_left: int | None) -> list[float]:
    """Return every seat's utility of a rollout's standings: its match odds, or its round utility."""
    seats = len(after)
    if odds is not None:
        return [odds.score(after, s, rounds_left) for s in range(seats)]
    gains = [a - b for a, b in zip(after, before, strict=True)]
    total = sum(gains)
    return [(total - g) / (seats - 1) - g for g in gains]


def ismcts_search(view: CabangaView, options: Sequence[Any], knowledge: CabangaKnowledge, model: CabangaModel,
                  rng: random.Random, clock: SearchClock, cache: PlanCache, *, max_iterations: int | None = None,
                  report: SearchReport | None = None, odds: MatchOdds | None = None, rounds_left: int | None = None,
                  opponents_in_tree: bool = False, exploration: float = EXPLORATION,
                  widening: float = WIDENING) -> int:
    """Return the index of the best of ``options`` by information-set Monte Carlo tree search (ISMCTS).

    Single-observer ISMCTS (Cowling, Powley and Whitehouse 2012) on packed worlds: each iteration deals one world
    that agrees with the seat's view, knowledge and the opponent models (:class:`WorldSampler`, as
    :func:`hard_search` deals them), walks down one tree shared by every world, its nodes the observer's
    information sets as far as the public moves tell them apart (the cards a seat draws are not told apart: a
    node holds the moves legal in any world, and a move is judged against the worlds in which it was legal, UCB1
    with availability counts), adds one node and plays the round on by the fitted rollout policies
    (:class:`RolloutPlan`). At a node of the observer the move is chosen by UCB1 among the moves legal in this
    world, under progressive widening (:data:`WIDENING`); the other seats' plays are their fitted policies' (or,
    ``opponents_in_tree``, chosen by UCB1 for their own utility, as SO-ISMCTS proper does). The sealed throw is
    sequenced as the multiple-observer variant has it: the other seats throw by their policies, which do not see
    the observer's choice, and the observer's throw (at the root: ``options``; below it: everything, or nothing)
    is a node of its own. The utility is :func:`~arena.games.search.round_utility` (or the match ``odds``) of the
    round's end. Iterations run until ``clock`` expires (looked at after every iteration) or ``max_iterations``;
    the answer is the root option visited most.
    """
    n = len(options)
    if n == 1:
        return 0
    cache.trim()
    sampler = WorldSampler(view, knowledge, model.trusted())
    plan = RolloutPlan(model.policies(), cache)
    prepared = plan.prepared
    throws_p = prepared[1]
    me = view.seat
    seats = len(view.hand_sizes)
    before = list(view.totals)
    symbols = cache.symbols
    throwing = view.step == "throw"
    root_moves: list[Any] = []
    for option in options:
        if throwing:
            mask = 0
            for card in option:
                mask |= 1 << card.value
            root_moves.append(mask)
        else:
            root_moves.append((_INT_OF[option.card] // 18, _INT_OF[option.card] % 18 + 1, option.side is Side.RIGHT))
    # an edge: [visits, reward sum, availability, child node]; a node: {move key: edge}
    root: dict[Any, list[Any]] = {}
    iterations = 0
    steps_total = 0
    reward_n = 0
    reward_sum = 0.0
    reward_sq = 0.0
    log = math.log
    sqrt = math.sqrt
    random_ = rng.random
    others_of = _OTHERS[seats]
    gaps = _GAP_OF_PAIR
    while max_iterations is None or iterations < max_iterations:
        if max_iterations is None and iterations and clock.expired():
            break
        world = sampler.sample(rng)
        hands = world.hands
        sizes = world.sizes
        tops = world.tops
        penalty = world.penalty
        aside = world.aside
        active = world.active
        previous = world.previous
        sd = sqrt(max(1e-12, reward_sq / reward_n - (reward_sum / reward_n) ** 2)) if reward_n > 1 else 1.0
        c = exploration * sd
        path: list[tuple[list[Any], int]] = []
        node: dict[Any, list[Any]] = root
        expanded = False
        over = False
        depth = 0
        # the step at hand: (row, value, right) to play for ``active``, or a pending throw of ``row``
        if throwing:
            row = world.row
            owed = world.owed
            stage = 1
        else:
            stage = 2
        while True:
            if stage == 2:
                # a PLAY of ``active``: chosen in the tree (the observer, or every seat), or by its policy
                key_of: list[Any]
                if depth == 0:
                    key_of = list(range(n))
                    allowed = n
                else:
                    hand = hands[active]
                    size = sizes[active]
                    unseen = 72 - size - len(aside)
                    factor = (sum(sizes) - size) / (unseen if unseen > 1 else 1) * 2
                    if factor > 1.0:
                        factor = 1.0
                    in_tree = active == me or opponents_in_tree
                    if not in_tree or expanded:
                        move = _policy_move(hands, active, tops, previous, factor, prepared, cache, random_)
                        if not expanded:
                            child = node.get(move)
                            if child is None:
                                child = node[move] = [0, 0.0, 0, {}]
                            node = child[3]
                        row, value, right = move
                        stage = 0
                        continue
                    ranked = _moves_by_plan(hand, tops, previous, factor, symbols)
                    key_of = [(m[2], m[3], m[4]) for m in ranked]
                    visits = sum(e[0] for e in node.values()) if node else 0
                    allowed = min(len(key_of), 1 + int(widening * sqrt(visits)))
                chosen = _select(node, key_of, allowed, c, log, sqrt)
                if chosen is None:  # a move never tried here: add it, then the rollout from after it
                    key: Any = next(k for k in key_of[:allowed] if k not in node)
                    edge = node[key] = [0, 0.0, 0, {}]
                    expanded = True
                else:
                    key = chosen
                    edge = node[key]
                for k in key_of[:allowed]:
                    e = node.get(k)
                    if e is not None:
                        e[2] += 1
                path.append((edge, active))
                node = edge[3]
                depth += 1
                move = root_moves[key] if depth == 1 else key
                row, value, right = move
                stage = 0
                continue
            if stage == 0:
                hands[active][row] ^= 1 << value
                sizes[active] -= 1
                tops[2 * row + right] = value
                owed = 1 if row == previous else 0
            # the throws into the gap of the row just played
            gap_mask = gaps[tops[2 * row] | tops[2 * row + 1] << 5]
            if gap_mask:
                for s in others_of[active]:
                    held = hands[s][row] & gap_mask
                    if not held:
                        continue
                    if s == me:
                        if stage == 1 and depth == 0:
                            legal_t = list(range(n))
                            chosen = _select(node, legal_t, n, c, log, sqrt)
                            if chosen is None:
                                chosen = next(k for k in legal_t if k not in node)
                                node[chosen] = [0, 0.0, 0, {}]
                                expanded = True
                            for k in legal_t:
                                e = node.get(k)
                                if e is not None:
                                    e[2] += 1
                            edge = node[chosen]
                            path.append((edge, me))
                            node = edge[3]
                            depth += 1
                            throw = held & root_moves[chosen]
                        elif expanded:
                            throw = held
                        else:
                            keys: list[Any] = [("throw", True), ("throw", False)]
                            visits = sum(e[0] for e in node.values()) if node else 0
                            allowed_t = min(2, 1 + int(widening * sqrt(visits)))
                            chosen = _select(node, keys, allowed_t, c, log, sqrt)
                            if chosen is None:
                                chosen = next(k for k in keys[:allowed_t] if k not in node)
                                node[chosen] = [0, 0.0, 0, {}]
                                expanded = True
                            for k in keys[:allowed_t]:
                                e = node.get(k)
                                if e is not None:
                                    e[2] += 1
                            edge = node[chosen]
                            path.append((edge, me))
                            node = edge[3]
                            depth += 1
                            throw = held if chosen[1] else 0
                    else:
                        p = throws_p[s]
                        throw = held if p >= 1.0 or (p > 0.0 and random_() < p) else 0
                    if throw:
                        hands[s][row] ^= throw
                        count = throw.bit_count()
                        sizes[s] -= count
                        owed += count
                        base = row * 18 - 1
                        while throw:
                            low_bit = throw & -throw
                            aside.append(base + low_bit.bit_length() - 1)
                            throw ^= low_bit
            if owed:
                hand = hands[active]
                drawn = 0
                while drawn < owed:
                    if not penalty:
                        if not aside:
                            break
                        penalty, aside = aside, []
                    i = int(random_() * len(penalty))
                    card = penalty[i]
                    penalty[i] = penalty[-1]
                    penalty.pop()
                    hand[card // 18] |= 1 << (card % 18 + 1)
                    drawn += 1
                sizes[active] += drawn
            previous = row
            owed = 0
            steps_total += 1
            if 0 in sizes:
                over = True
                break
            active = (active + 1) % seats
            stage = 2
            if expanded:
                break
        if over:
            after = _standings(world.totals, hands, cache)
        else:
            rest = PackedWorld(seats, active, previous, False, -1, 0, hands, sizes, tops, penalty, aside,
                               world.totals, seen=world.seen)
            steps, after = _run(rest, None, -1, prepared, cache, rng, 100_000)
            steps_total += steps + 1
        utilities = _utilities(before, after, odds, rounds_left)
        mine = utilities[me]
        reward_n += 1
        reward_sum += mine
        reward_sq += mine * mine
        for edge, seat in path:
            edge[0] += 1
            edge[1] += utilities[seat]
        iterations += 1
    if report is not None:
        report.worlds += iterations
        report.rollouts += iterations
        report.steps += steps_total
        report.means = {str(k): e[1] / e[0] for k, e in root.items() if e[0]}
    if not root:
        return 0
    best: int = max(root, key=lambda k: (root[k][0], root[k][1] / max(1, root[k][0]), -k))
    return best


def _select(node: dict[Any, list[Any]], keys: Sequence[Any], allowed: int, c: float, log: Callable[[float], float],
            sqrt: Callable[[float], float]) -> Any:
    """Return the key of ``keys[:allowed]`` UCB1 picks (availability counts), or ``None`` when one is untried."""
    best: Any = None
    best_score = -1e18
    for k in keys[:allowed]:
        e = node.get(k)
        if e is None or not e[0]:
            return None
        score = e[1] / e[0] + c * sqrt(log(e[2] + 1) / e[0])
        if score > best_score:
            best, best_score = k, score
    return best


def _policy_move(hands: list[list[int]], seat: int, tops: list[int], previous: int, factor: float,
                 prepared: _Prepared, cache: PlanCache, random_: Callable[[], float]) -> tuple[int, int, bool]:
    """Return ``seat``'s play by its rollout policy (greedy, or dumping at its fitted chance), as (row, value,
    right); the tracking plan is played as the greedy one here."""
    dumps = prepared[0]
    chance = dumps[seat]
    dumping = chance > 0.0 and random_() < chance
    hand = hands[seat]
    best_cost = 1e9
    best_tie = 0
    row = value = -1
    right = False
    found = False
    for r in _FOUR:
        mask = hand[r]
        if mask:
            plan = cache.row_plan(tops[2 * r], tops[2 * r + 1], mask, dumping)
            cost = plan[0] * factor + (1.0 if r == previous else 0.0)
            if dumping:
                if not found or plan[1] < best_tie or (plan[1] == best_tie and cost < best_cost):
                    best_cost, best_tie, row, value, right, found = cost, plan[1], r, plan[2], plan[3], True
            elif cost < best_cost or (cost == best_cost and plan[1] < best_tie):
                best_cost, best_tie, row, value, right = cost, plan[1], r, plan[2], plan[3]
    return row, value, right
