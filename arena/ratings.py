"""TrueSkill ratings (the ``trueskill`` library) and the choice of who plays whom next.

A match is rated once, from its places (lowest total first, equal totals tie, a benched seat last): one
``rate()`` call per match, never per decision (about 1 ms at 4 seats).
"""

from __future__ import annotations

import itertools
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


def rate(ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """Return the ratings after a match in which seat i (rated ``ratings[i]``) took place ``places[i]``.

    Places start at 1; equal places are a tie. Raises ValueError when the lengths differ or fewer than two.
    """
    if len(ratings) != len(places) or len(ratings) < 2:
        raise ValueError(f"need one place per rating and two or more seats, got {len(ratings)} and {len(places)}")
    groups = [(r._ts(),) for r in ratings]
    rated = ENV.rate(groups, ranks=[p - 1 for p in places])
    return [Rating(g[0].mu, g[0].sigma) for g in rated]


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
    combos = list(itertools.combinations(rest, seats - 1))
    if len(combos) > MAX_CANDIDATE_GROUPS:
        combos = rng.sample(combos, MAX_CANDIDATE_GROUPS)
    best = max(combos, key=lambda c: (quality([ratings.get(b, default) for b in (anchor, *c)]),
                                      -sum(played.get(b, 0) for b in c)))
    return [anchor, *best]
