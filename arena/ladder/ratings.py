"""Rating systems behind one interface; TrueSkill is the ladder's (DESIGN.md "Ladder").

A match is rated once, from its places (the game's: its best total first, equal totals tie): one ``rate()`` call per
match, never per decision (about 0.1 ms at 4 seats: the ``trueskill`` library's factor graph, written out for
one-player teams in :meth:`TrueSkillSystem._chain`). A benched seat (played by the defaults after too many faults) is
given the place ``None``: it is rated as losing to every seat that finished, and never compared with another
benched seat (two crashed programs say nothing about each other).

TrueSkill chains the seats in order of place, so of two tied seats the one written first would get a
slightly different update than the other. :meth:`TrueSkillSystem.rate` removes that: when places are shared it
rates the match once per rotation of every tied group and averages, so tied seats that started equal end
equal, and no bot's update depends on the seat it sat in.

For programs that do not change, the dynamics factor ``tau`` is 0: with TrueSkill's default (sigma / 100)
sigma never falls below about 0.7 and the rating becomes a moving average of the last ~140 matches, so the
same matches fed in another order gave another board most of the time (issue 12). ``tau > 0`` is an option
for bots that learn. ``draw_probability`` is the rate of shared places measured per game and seat count
(each game's ``tools.draw_rates``, printed by ``benchmarks/draws.py``), not TrueSkill's 10%.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import trueskill

from arena.games.base import GameError
from arena.games.tools import DEFAULT_DRAW_RATE, game_tools

MU = 25.0
SIGMA = MU / 3
BETA = SIGMA / 2

DEFAULT_DRAW_PROBABILITY = DEFAULT_DRAW_RATE
"""For a game and seat count without a measured draw rate."""

MIN_DELTA = trueskill.DELTA
"""The message passing stops when no message moves more than this (the library's default)."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A bot's skill estimate: mean ``mu`` and uncertainty ``sigma``."""

    mu: float = MU
    sigma: float = SIGMA

    @property
    def conservative(self) -> float:
        """Return mu - 3 sigma: the skill the bot has with high confidence."""
        return self.mu - 3 * self.sigma


class RatingError(ArithmeticError):
    """A rating system could not rate a match (an upset too unlikely for its floating-point arithmetic)."""


Places = Sequence[int | None]
"""Each seat's place (1 = best, equal places tie), or ``None`` for a benched seat."""


class RatingSystem(Protocol):
    """What the ladder needs of a rating model: a first rating, and the ratings after a match."""

    def initial(self) -> Rating:
        """Return the rating of a bot that has not played."""
        ...

    def rate(self, ratings: Sequence[Rating], places: Places) -> list[Rating]:
        """Return the ratings after a match in which seat i (rated ``ratings[i]``) took place ``places[i]``.

        Raises ValueError for bad arguments and :class:`RatingError` when the match cannot be rated.
        """
        ...

    def describe(self) -> str:
        """Return the settings that change ratings; a database rated with other settings is rated again."""
        ...


def draw_probability(game: str, seats: int) -> float:
    """Return the draw probability TrueSkill is given for ``game`` at ``seats`` seats: how often two seats next to
    each other in a match's final order share their place, as the game's folder measured it (its ``tools``)."""
    try:
        return game_tools(game).draw_rate(seats)
    except GameError:
        return DEFAULT_DRAW_PROBABILITY


class TrueSkillSystem:
    """TrueSkill (the ``trueskill`` library) with ties and benched seats handled as the module says."""

    def __init__(self, *, draw_probability: float = DEFAULT_DRAW_PROBABILITY, tau: float = 0.0) -> None:
        if not 0.0 <= draw_probability < 1.0:
            raise ValueError(f"draw probability must be in [0, 1), not {draw_probability}")
        if tau < 0:
            raise ValueError(f"tau must be 0 or more, not {tau}")
        self.draw_probability = draw_probability
        self.tau = tau
        self.env = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=tau, draw_probability=draw_probability)
        self.margin = trueskill.calc_draw_margin(draw_probability, 2, self.env)
        """The draw margin between two one-player teams."""

    @classmethod
    def for_game(cls, game: str, seats: int, *, tau: float = 0.0) -> TrueSkillSystem:
        """Return the system for ``game`` at ``seats`` seats, with its measured draw probability."""
        return cls(draw_probability=draw_probability(game, seats), tau=tau)

    def initial(self) -> Rating:
        return Rating()

    def describe(self) -> str:
        return f"trueskill mu={MU:g} sigma={SIGMA:.4f} beta={BETA:.4f} tau={self.tau:g} draw={self.draw_probability:g}"

    def rate(self, ratings: Sequence[Rating], places: Places) -> list[Rating]:
        if len(ratings) != len(places) or len(ratings) < 2:
            raise ValueError(f"need one place per rating and two or more seats, got {len(ratings)} and {len(places)}")
        finished = [s for s, p in enumerate(places) if p is not None]
        benched = [s for s, p in enumerate(places) if p is None]
        if any(p is not None and p < 1 for p in places):
            raise ValueError(f"places start at 1, got {list(places)}")
        if not finished or len(finished) + min(1, len(benched)) < 2:
            return list(ratings)  # nobody finished, or one seat alone: nothing was compared
        after = list(ratings)
        if not benched:
            return self._rate_chain(ratings, places, finished, [])
        # the finishers: rated above the benched seats, whose order among themselves is rotated and averaged
        whole = self._rate_chain(ratings, places, finished, benched)
        for s in finished:
            after[s] = whole[s]
        # each benched seat: below every finisher, compared with no other benched seat
        for b in benched:
            after[b] = self._rate_chain(ratings, places, finished, [b])[b]
        return after

    def _rate_chain(self, ratings: Sequence[Rating], places: Places, finished: Sequence[int],
                    benched: Sequence[int]) -> list[Rating]:
        """Rate ``finished`` by place then ``benched`` below them, averaging over rotations of equal ranks.

        Tied finishers are rotated within their place; benched seats take distinct last places, rotated, so
        every order of them weighs the same.
        """
        groups: dict[int, list[int]] = {}
        # within a place, seats in order of rating (then seat): the same ratings and places give the same
        # updates whatever the seating
        for seat in sorted(finished, key=lambda s: (places[s], ratings[s].mu, ratings[s].sigma, s)):
            place = places[seat]
            assert place is not None
            groups.setdefault(place, []).append(seat)
        tail = sorted(benched, key=lambda s: (ratings[s].mu, ratings[s].sigma, s))
        runs = math.lcm(*(len(g) for g in groups.values()), max(1, len(tail)))
        seats = [*finished, *tail]
        # the chain's ranks do not change between rotations: each place's group in turn, then each benched seat
        ranks = [rank for rank, group in enumerate(groups.values()) for _ in group]
        ranks += range(len(groups), len(groups) + len(tail))
        ties = [ranks[i] == ranks[i + 1] for i in range(len(ranks) - 1)]
        mus: dict[int, list[float]] = {s: [] for s in seats}
        sigmas: dict[int, list[float]] = {s: [] for s in seats}
        for shift in range(runs):
            order = [group[(i + shift) % len(group)] for group in groups.values() for i in range(len(group))]
            order += [tail[(i + shift) % len(tail)] for i in range(len(tail))]
            try:
                rated = self._chain([ratings[s] for s in order], ties)
            except FloatingPointError as exc:
                raise RatingError(f"TrueSkill cannot rate places {list(places)}: {exc}") from None
            for seat, (mu, sigma) in zip(order, rated, strict=True):
                mus[seat].append(mu)
                sigmas[seat].append(sigma)
        out = list(ratings)
        for s in seats:
            out[s] = Rating(math.fsum(mus[s]) / runs, math.fsum(sigmas[s]) / runs)
        return out

    def _chain(self, ratings: Sequence[Rating], ties: Sequence[bool]) -> list[tuple[float, float]]:
        """Return (mu, sigma) after a match of one-player teams finishing in the order given.

        ``ties[j]`` says whether teams ``j`` and ``j + 1`` shared their place. This is the ``trueskill``
        library's ``rate`` on already sorted teams: its factor graph, its message schedule and stopping rule,
        its draw margin and its v and w functions (on its normal distribution), with the graph written out
        for teams of one player in flat lists of Gaussians in natural parameters (precision ``pi``,
        precision-adjusted mean ``tau``). So the ratings are the library's to rounding
        (``tests/test_ratings.py`` compares them), and an upset too unlikely raises ``FloatingPointError`` as
        the library does. The library builds a graph of objects at every call, about 1 ms at 4 seats; this
        takes about a tenth of that, which lets one ladder head rate hundreds of matches a second
        (``benchmarks/cluster.py``).
        """
        n = len(ratings)
        beta2 = BETA**2
        # each seat's prior (tau widens sigma), and its performance (the skill plus noise of variance beta^2):
        # the fixed message the team-performance variable t_i gets from below
        variances = [r.sigma**2 + self.tau**2 for r in ratings]
        prior = [(1.0 / var, r.mu / var) for r, var in zip(ratings, variances, strict=True)]
        base_pi = [pi / (1.0 + beta2 * pi) for pi, _ in prior]
        base_tau = [tau / (1.0 + beta2 * pi) for pi, tau in prior]
        # messages of the difference factor j (d_j = t_j - t_{j+1}) to t_j (left) and t_{j+1} (right), to
        # d_j (down), and of the truncation factor to d_j (trunc)
        diffs = n - 1
        left_pi, left_tau = [0.0] * diffs, [0.0] * diffs
        right_pi, right_tau = [0.0] * diffs, [0.0] * diffs
        down_pi, down_tau = [0.0] * diffs, [0.0] * diffs
        trunc_pi, trunc_tau = [0.0] * diffs, [0.0] * diffs
        cdf, pdf, margin = self.env.cdf, self.env.pdf, self.margin

        def team(i: int, without: int) -> tuple[float, float]:
            """Return t_i without the message of difference factor ``without`` as (mean, variance)."""
            pi, tau = base_pi[i], base_tau[i]
            if i > 0 and without != i - 1:
                pi, tau = pi + right_pi[i - 1], tau + right_tau[i - 1]
            if i < diffs and without != i:
                pi, tau = pi + left_pi[i], tau + left_tau[i]
            return (tau / pi if pi else 0.0), (1.0 / pi if pi else math.inf)

        def down(j: int) -> None:
            (mu_a, var_a), (mu_b, var_b) = team(j, j), team(j + 1, j)
            pi = 1.0 / (var_a + var_b)
            down_pi[j], down_tau[j] = pi, pi * (mu_a - mu_b)

        def truncate(j: int) -> float:
            """Match d_j's moments to the truncated Gaussian of the result; return how far d_j moved."""
            pi, tau = down_pi[j], down_tau[j]
            sqrt_pi = math.sqrt(pi)
            x, m = tau / sqrt_pi, margin * sqrt_pi
            if ties[j]:
                a, b = m - abs(x), -m - abs(x)
                denom = cdf(a) - cdf(b)
                if not denom:
                    raise FloatingPointError("a draw too unlikely to rate")
                v = (pdf(b) - pdf(a)) / denom
                w = v**2 + (a * pdf(a) - b * pdf(b)) / denom
                v = -v if x < 0 else v
            else:
                y = x - m
                denom = cdf(y)
                v = pdf(y) / denom if denom else -y
                w = v * (v + y)
                if not 0 < w < 1:
                    raise FloatingPointError("an upset too unlikely to rate")
            new_pi, new_tau = pi / (1.0 - w), (tau + sqrt_pi * v) / (1.0 - w)
            old_pi, old_tau = pi + trunc_pi[j], tau + trunc_tau[j]
            trunc_pi[j], trunc_tau[j] = new_pi - pi, new_tau - tau
            pi_delta = abs(old_pi - new_pi)
            return 0.0 if pi_delta == math.inf else max(abs(old_tau - new_tau), math.sqrt(pi_delta))

        def up(j: int, side: int) -> None:
            """Send t_j (side 0: t_j = d_j + t_{j+1}) or t_{j+1} (side 1: t_{j+1} = t_j - d_j) its message."""
            d_var = 1.0 / trunc_pi[j] if trunc_pi[j] else math.inf
            d_mu = trunc_tau[j] / trunc_pi[j] if trunc_pi[j] else 0.0
            if side == 0:
                mu, var = team(j + 1, j)
                pi = 1.0 / (d_var + var)
                left_pi[j], left_tau[j] = pi, pi * (d_mu + mu)
            else:
                mu, var = team(j, j)
                pi = 1.0 / (var + d_var)
                right_pi[j], right_tau[j] = pi, pi * (mu - d_mu)

        for _ in range(10):
            if diffs == 1:
                down(0)
                delta = truncate(0)
            else:
                delta = 0.0
                for j in range(diffs - 1):
                    down(j)
                    delta = max(delta, truncate(j))
                    up(j, 1)
                for j in range(diffs - 1, 0, -1):
                    down(j)
                    delta = max(delta, truncate(j))
                    up(j, 0)
            if delta <= MIN_DELTA:
                break
        up(0, 0)
        up(diffs - 1, 1)
        out = []
        for i, (pi, tau) in enumerate(prior):
            # what the differences taught t_i goes down to the skill through the performance's noise
            msg_pi = (right_pi[i - 1] if i > 0 else 0.0) + (left_pi[i] if i < diffs else 0.0)
            msg_tau = (right_tau[i - 1] if i > 0 else 0.0) + (left_tau[i] if i < diffs else 0.0)
            a = 1.0 / (1.0 + beta2 * msg_pi)
            pi, tau = pi + a * msg_pi, tau + a * msg_tau
            out.append((tau / pi, math.sqrt(1.0 / pi)))
        return out


@dataclass(frozen=True, slots=True)
class Outcome:
    """One stored match as the ratings see it: its deal set and rotation, the bots by seat, their places."""

    deal: int
    rotation: int
    bots: tuple[str, ...]
    places: tuple[int | None, ...]
    """Each seat's place, ``None`` for a benched seat."""
