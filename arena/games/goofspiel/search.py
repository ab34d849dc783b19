"""Goofspiel's part of the search toolkit (:mod:`arena.games.search` has the game-neutral half).

In Goofspiel everything is public but the order of the prizes to come and the bids being made now (GS9): every
seat's hand is its suit less the bids it made. So a world is a random order of the prizes to come, and what a
seat needs to guess is how the others bid. :class:`BidModel` fits that from this match: each other seat is a
mixture of simple plans (:data:`PLANS`: the prize's value, one above it, the card of the prize's rank, at
random), weighted by how often each plan named the card the seat bid. :func:`search_bid` tries every card of the
hand against bids and prize orders sampled from it, the rest of the round played on by the sampled plans (and
this seat by the rank plan), and keeps the card that won most.

Cards are ints here (their values); nothing does I/O; :mod:`time` is read by the clock only.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.games.search import SearchClock

Plan = Callable[[int, int, Sequence[int], Sequence[int], Sequence[int]], int]
"""A bidding plan: (prize value, pot, own hand sorted, prizes to come sorted, the others' highest cards) -> a card
of the hand."""


def plan_mirror(prize: int, pot: int, hand: Sequence[int], to_come: Sequence[int], others: Sequence[int]) -> int:
    """Bid the prize's value if held, else the nearest card above, else the highest."""
    return next((c for c in hand if c >= prize), hand[-1])


def plan_overbid(prize: int, pot: int, hand: Sequence[int], to_come: Sequence[int], others: Sequence[int]) -> int:
    """Bid the lowest card above the prize's value, else the lowest card."""
    return next((c for c in hand if c > prize), hand[0])


def plan_rank(prize: int, pot: int, hand: Sequence[int], to_come: Sequence[int], others: Sequence[int]) -> int:
    """Bid the card whose rank in the hand is the prize's (with the pot) rank among the prizes left."""
    worth = prize + pot
    rank = sum(1 for c in to_come if c < worth)
    prizes = len(to_come) + 1
    count = len(hand)
    return hand[min(count - 1, round(rank * (count - 1) / max(1, prizes - 1)))]


def plan_sure(prize: int, pot: int, hand: Sequence[int], to_come: Sequence[int], others: Sequence[int]) -> int:
    """The rank plan, but a card that beats every card the others hold when it costs no more (the matcher's)."""
    ranked = plan_rank(prize, pot, hand, to_come, others)
    top = max(others, default=0)
    sure = next((c for c in hand if c > top), None)
    return sure if sure is not None and sure <= ranked else ranked


PLANS: tuple[Plan, ...] = (plan_mirror, plan_overbid, plan_rank, plan_sure)
"""The plans a seat's bids are explained by; a share of every seat's bids is also taken as random."""

NOISE = 0.15
"""The chance given to a bid that no plan names (a random card of the hand)."""


@dataclass
class BidModel:
    """How each other seat bids, fitted from this match: per seat, a weight per plan (:data:`PLANS`) and a
    random share, updated by every bid it is seen to make (Bayes' rule on the plans' predictions, :meth:`seen`)."""

    seats: int
    weights: list[list[float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.weights = [[1.0] * (len(PLANS) + 1) for _ in range(self.seats)]

    def seen(self, seat: int, bid: int, prize: int, pot: int, hand: Sequence[int], to_come: Sequence[int],
             others: Sequence[int]) -> None:
        """Update ``seat``'s weights after it bid ``bid`` from ``hand`` for ``prize`` (the state it bid in)."""
        weights = self.weights[seat]
        for i, plan in enumerate(PLANS):
            weights[i] *= (1.0 - NOISE) * (plan(prize, pot, hand, to_come, others) == bid) + NOISE / len(hand)
        weights[-1] *= 1.0 / len(hand)
        total = sum(weights)
        self.weights[seat] = [w / total for w in weights]

    def plan_of(self, seat: int, rng: random.Random) -> Plan | None:
        """Return a plan drawn by ``seat``'s weights (``None``: it bids at random)."""
        pick = rng.random()
        for i, w in enumerate(self.weights[seat]):
            pick -= w
            if pick < 0:
                return PLANS[i] if i < len(PLANS) else None
        return None


@dataclass
class SearchReport:
    """What searches did: rollouts played, and the last search's mean score per card."""

    rollouts: int = 0
    means: dict[int, float] = field(default_factory=dict)


def playout(seat: int, my_bid: int, prize: int, pot: int, hands: Sequence[Sequence[int]], order: Sequence[int],
            totals: Sequence[int], plans: Sequence[Plan | None], carry: bool, rng: random.Random) -> list[int]:
    """Play the round on from the trick of ``prize``: ``seat`` bids ``my_bid`` now and then by the rank plan,
    every other seat by its plan (``None``: at random); ``order`` is the prizes to come, top first. Return the
    totals at the round's end (GS4, GS5: the single highest bid takes the prize and the pot)."""
    hands_ = [sorted(h) for h in hands]
    totals_ = list(totals)
    left = list(order)
    while True:
        to_come = sorted(left)
        bids = []
        for s, hand in enumerate(hands_):
            if s == seat:
                bid = my_bid if my_bid else plan_rank(prize, pot, hand, to_come, ())
            else:
                plan = plans[s]
                tops = [h[-1] for o, h in enumerate(hands_) if o != s and h]
                bid = plan(prize, pot, hand, to_come, tops) if plan is not None else hand[int(rng.random() * len(hand))]
            bids.append(bid)
        my_bid = 0
        for s, bid in enumerate(bids):
            hands_[s].remove(bid)
        high = max(bids)
        winners = [s for s, b in enumerate(bids) if b == high]
        if len(winners) == 1:
            totals_[winners[0]] += prize + pot
            pot = 0
        elif carry:
            pot += prize
        if not left:
            return totals_
        prize = left.pop()


def utility(totals: Sequence[int], seat: int) -> float:
    """Return ``seat``'s mean pairwise result against the others (1 ahead, 1/2 level, 0 behind; GS8), plus a
    hundredth of its mean margin, so that a bigger lead counts a little."""
    mine = totals[seat]
    others = [t for s, t in enumerate(totals) if s != seat]
    wins = sum(1.0 if mine > t else 0.5 if mine == t else 0.0 for t in others)
    margin = sum(mine - t for t in others)
    return (wins + 0.01 * margin) / max(1, len(others))


def search_bid(seat: int, prize: int, pot: int, hands: Sequence[Sequence[int]], to_come: Sequence[int],
               totals: Sequence[int], model: BidModel, carry: bool, rng: random.Random, clock: SearchClock, *,
               max_rollouts: int | None = None, report: SearchReport | None = None) -> int:
    """Return the card of ``hands[seat]`` that scored best over rollouts until ``clock`` expires (or
    ``max_rollouts`` per card): each rollout draws an order of the prizes to come and a plan per other seat from
    ``model``, and every card meets the same draws (common random numbers)."""
    mine = sorted(hands[seat])
    if len(mine) == 1:
        return mine[0]
    sums = [0.0] * len(mine)
    done = 0
    sim = random.Random()
    while max_rollouts is None or done < max_rollouts:
        order = list(to_come)
        rng.shuffle(order)
        plans = [model.plan_of(s, rng) if s != seat else None for s in range(len(hands))]
        world_seed = rng.getrandbits(32)
        scores = []
        for card in mine:
            sim.seed(world_seed)
            scores.append(utility(playout(seat, card, prize, pot, hands, order, totals, plans, carry, sim), seat))
        if max_rollouts is None and clock.expired():
            break
        done += 1
        for i, score in enumerate(scores):
            sums[i] += score
    if report is not None:
        report.rollouts += done * len(mine)
        report.means = {card: s / max(1, done) for card, s in zip(mine, sums, strict=True)}
    if not done:
        return plan_rank(prize, pot, mine, sorted(to_come), ())
    return mine[max(range(len(mine)), key=lambda i: (sums[i], -i))]
