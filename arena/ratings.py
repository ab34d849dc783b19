"""TrueSkill ratings (the ``trueskill`` library) and the choice of who plays whom next.

A match is rated once, from its places (lowest total first, equal totals tie, a benched seat last): one
``rate()`` call per match, never per decision (about 1 ms at 4 seats).

TrueSkill chains the seats in order of place, so of two tied seats the one written first would get a
slightly different update than the other. :func:`rate` removes that: when places are shared it rates the
match once per rotation of every tied group and averages, so tied seats that started equal end equal, and
no bot's update depends on the seat it sat in.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import trueskill

ENV = trueskill.TrueSkill(draw_probability=0.10)
"""The rating environment: TrueSkill's defaults (mu 25, sigma 25/3), ties expected one time in ten."""

MAX_CANDIDATE_GROUPS = 24
"""Groups whose match quality is computed per choice; more would cost ladder time for little gain."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A bot's skill estimate: mean ``mu`` and uncertainty ``sigma``."""

    mu: float = ENV.mu
    sigma: float = ENV.sigma

    @property
    def conservative(self) -> float:
        """Return mu - 3 sigma: the skill the bot has with high confidence (the leaderboard's order)."""
        return self.mu - 3 * self.sigma

    def _ts(self) -> trueskill.Rating:
        return ENV.create_rating(self.mu, self.sigma)


class RatingError(ArithmeticError):
    """TrueSkill could not rate a match (an upset too unlikely for its floating-point arithmetic)."""


def rate(ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """Return the ratings after a match in which seat i (rated ``ratings[i]``) took place ``places[i]``.

    Places start at 1; equal places are a tie, rated as a draw between those seats. Raises ValueError when
    the lengths differ or there are fewer than two, and :class:`RatingError` when TrueSkill's arithmetic
    fails (a result far too unlikely for the ratings: the caller keeps the old ratings).
    """
    if len(ratings) != len(places) or len(ratings) < 2:
        raise ValueError(f"need one place per rating and two or more seats, got {len(ratings)} and {len(places)}")
    groups: dict[int, list[int]] = {}
    # within a place, seats in order of rating (then seat): the same ratings and places give the same
    # updates whatever the seating
    for seat in sorted(range(len(places)), key=lambda s: (places[s], ratings[s].mu, ratings[s].sigma, s)):
        groups.setdefault(places[seat], []).append(seat)
    runs = math.lcm(*(len(g) for g in groups.values()))
    mus: list[list[float]] = [[] for _ in ratings]
    sigmas: list[list[float]] = [[] for _ in ratings]
    for shift in range(runs):
        # every tied group rotated by ``shift``: over all runs each tied seat takes every position equally often
        order = [group[(i + shift) % len(group)] for group in groups.values() for i in range(len(group))]
        try:
            rated = ENV.rate([(ratings[s]._ts(),) for s in order], ranks=[places[s] - 1 for s in order])
        except FloatingPointError as exc:
            raise RatingError(f"TrueSkill cannot rate places {list(places)}: {exc}") from None
        for seat, (new,) in zip(order, rated, strict=True):
            mus[seat].append(float(new.mu))
            sigmas[seat].append(float(new.sigma))
    return [Rating(math.fsum(m) / runs, math.fsum(s) / runs) for m, s in zip(mus, sigmas, strict=True)]


def quality(ratings: Sequence[Rating]) -> float:
    """Return TrueSkill's match quality of these ratings meeting (0..1; higher is closer to a draw)."""
    return float(ENV.quality([(r._ts(),) for r in ratings]))


def choose_group(
    bots: Sequence[str],
    ratings: Mapping[str, Rating],
    played: Mapping[str, int],
    seats: int,
    rng: random.Random,
) -> list[str]:
    """Return ``seats`` distinct bots to play the next deal set.

    The most uncertain bot (highest sigma, then fewest matches, then name) always plays, so every bot plays
    often and unsettled ratings are tested first; the others are the group of best match quality among a
    bounded random sample of candidate groups. Deterministic for the same inputs and ``rng`` state.
    Raises ValueError when there are fewer bots than seats.
    """
    if len(bots) < seats:
        raise ValueError(f"{len(bots)} bots cannot fill {seats} seats")
    default = Rating()
    order = sorted(bots, key=lambda b: (-ratings.get(b, default).sigma, played.get(b, 0), b))
    anchor, rest = order[0], sorted(order[1:])
    if len(rest) == seats - 1:
        return [anchor, *rest]
    if math.comb(len(rest), seats - 1) > MAX_CANDIDATE_GROUPS:
        candidates: set[tuple[str, ...]] = set()
        while len(candidates) < MAX_CANDIDATE_GROUPS:  # sampled without listing every combination
            candidates.add(tuple(sorted(rng.sample(rest, seats - 1))))
        combos = sorted(candidates)
    else:
        combos = list(itertools.combinations(rest, seats - 1))
    best = max(combos, key=lambda c: (quality([ratings.get(b, default) for b in (anchor, *c)]),
                                      -sum(played.get(b, 0) for b in c)))
    return [anchor, *best]
