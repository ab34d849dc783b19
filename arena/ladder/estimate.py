"""The order-free estimate behind the leaderboard: a batch fit over every stored match, with honest intervals.

Every match is read as the pairwise results of its seats (a seat ahead of another scores 1, a shared place
1/2; a benched seat loses to every seat that finished and is not compared with another benched seat), and a
Bradley-Terry model is fitted to all of them at once by maximum likelihood (Hunter's MM algorithm, with one
virtual draw of every bot against an average bot so that a bot that always wins or always loses still gets a
finite estimate). The fit depends on the matches, not on their order: the same matches in any order give the
same board. Strengths are printed on TrueSkill's scale (the field's mean at 25, and a difference of d means
about the same chance of finishing ahead as a TrueSkill mu difference of d).

The seats of one deal set share their hands, so the deal set, not the match, is the unit of independence (as
a game pair is in fastchess): the 95% intervals and the rank ranges come from a bootstrap that draws deal
sets (Poisson weights, a fixed seed: the same matches give the same intervals).

Whether two bots are in the right order is decided by a sequential test on their paired results: for each
deal set both played, the mean score of one against the other (:class:`SequentialTest`).
"""

from __future__ import annotations

import enum
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.ladder.ratings import BETA, MU, Outcome

SCALE = math.sqrt(2) * BETA / 1.702
"""TrueSkill points per unit of log-strength: a logistic of slope 1.702 matches a normal cdf of sd sqrt(2) beta."""

PRIOR_DRAWS = 1.0
"""Virtual draws of every bot against an average bot: keeps estimates finite, weighs nothing after a few deals."""

Pair = tuple[str, str]


def pair_scores(outcome: Outcome) -> Iterable[tuple[str, str, float]]:
    """Yield ``(a, b, score of a against b)`` for every comparable pair of seats of one match (a < b by name)."""
    seats = len(outcome.bots)
    for i in range(seats):
        for j in range(i + 1, seats):
            pi, pj = outcome.places[i], outcome.places[j]
            if pi is None and pj is None:
                continue  # two benched seats say nothing about each other
            a, b = outcome.bots[i], outcome.bots[j]
            if a == b:
                continue
            if pi is None:
                score = 0.0
            elif pj is None:
                score = 1.0
            else:
                score = 1.0 if pi < pj else 0.5 if pi == pj else 0.0
            yield (a, b, score) if a < b else (b, a, 1.0 - score)


@dataclass
class Evidence:
    """The pairwise results of stored matches, kept per deal set (built incrementally, order-free)."""

    deals: dict[int, dict[Pair, list[float]]] = field(default_factory=dict)
    """Deal set -> (a, b) with a < b -> [a's score against b summed over the set's matches, comparisons]."""
    by_pair: dict[Pair, dict[int, list[float]]] = field(default_factory=dict)
    """The same cells by pair, then deal set."""
    totals: dict[Pair, list[float]] = field(default_factory=dict)
    """(a, b) -> [a's score against b over every match, comparisons]."""
    matches: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: Iterable[Outcome]) -> Evidence:
        evidence = cls()
        for outcome in outcomes:
            evidence.add(outcome)
        return evidence

    def add(self, outcome: Outcome) -> None:
        pairs = self.deals.setdefault(outcome.deal, {})
        for a, b, score in pair_scores(outcome):
            cell = pairs.get((a, b))
            if cell is None:
                cell = pairs[a, b] = self.by_pair.setdefault((a, b), {})[outcome.deal] = [0.0, 0.0]
            cell[0] += score
            cell[1] += 1
            total = self.totals.setdefault((a, b), [0.0, 0.0])
            total[0] += score
            total[1] += 1
        for bot in outcome.bots:
            self.matches[bot] = self.matches.get(bot, 0) + 1

    @property
    def bots(self) -> list[str]:
        return sorted(self.matches)

    def paired(self, a: str, b: str) -> list[float]:
        """Return ``a``'s mean score against ``b`` in every deal set in which they met (by deal number)."""
        key, flip = ((a, b), False) if a < b else ((b, a), True)
        cells = self.by_pair.get(key, {})
        means = (cells[deal][0] / cells[deal][1] for deal in sorted(cells))
        return [1.0 - mean for mean in means] if flip else list(means)

    def matrices(self, bots: Sequence[str]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Return W (W[i, j]: i's score against j) and N (comparisons of i and j) over every match."""
        index = {b: i for i, b in enumerate(bots)}
        n = len(bots)
        wins = np.zeros((n, n))
        comparisons = np.zeros((n, n))
        for (a, b), (score, count) in self.totals.items():
            i, j = index[a], index[b]
            wins[i, j] += score
            wins[j, i] += count - score
            comparisons[i, j] += count
            comparisons[j, i] += count
        return wins, comparisons


class _Design:
    """The evidence as arrays: one row per (deal set, pair), for fast weighted sums in the bootstrap."""

    def __init__(self, evidence: Evidence, bots: Sequence[str]) -> None:
        index = {b: i for i, b in enumerate(bots)}
        n = len(bots)
        self.n = n
        deals = sorted(evidence.deals)
        rows: list[int] = []
        cols: list[int] = []
        wins: list[float] = []
        counts: list[float] = []
        for d, deal in enumerate(deals):
            for (a, b), (score, count) in sorted(evidence.deals[deal].items()):
                rows.append(d)
                cols.append(index[a] * n + index[b])
                wins.append(score)
                counts.append(count)
        self.deals = len(deals)
        self.rows = np.asarray(rows, dtype=np.int64)
        self.cols = np.asarray(cols, dtype=np.int64)
        self.wins = np.asarray(wins, dtype=np.float64)
        self.counts = np.asarray(counts, dtype=np.float64)

    def totals(self, weights: npt.NDArray[np.float64] | None = None
               ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Return W (W[i, j]: i's score against j) and N (comparisons between i and j), weighted by deal set."""
        w = self.wins if weights is None else self.wins * weights[self.rows]
        c = self.counts if weights is None else self.counts * weights[self.rows]
        size = self.n * self.n
        upper_w = np.bincount(self.cols, weights=w, minlength=size).reshape(self.n, self.n)
        upper_c = np.bincount(self.cols, weights=c, minlength=size).reshape(self.n, self.n)
        comparisons = upper_c + upper_c.T
        wins = np.asarray(upper_w + (upper_c - upper_w).T, dtype=np.float64)
        return wins, np.asarray(comparisons, dtype=np.float64)


def fit(wins: npt.NDArray[np.float64], comparisons: npt.NDArray[np.float64],
        start: npt.NDArray[np.float64] | None = None, iterations: int = 100, tolerance: float = 1e-9
        ) -> npt.NDArray[np.float64]:
    """Return Bradley-Terry log-strengths maximising the likelihood of ``wins`` out of ``comparisons``.

    ``wins[i, j]`` is i's score against j (draws count 1/2), ``comparisons[i, j]`` the number of comparisons.
    Each bot also has :data:`PRIOR_DRAWS` virtual draws against a bot of log-strength 0, which makes the
    likelihood strictly concave: Newton's method converges in a few steps from anywhere.
    """
    n = wins.shape[0]
    theta = np.zeros(n) if start is None else start.copy()
    score = wins.sum(axis=1) + PRIOR_DRAWS / 2
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j]: i ahead of j
        prior = 1.0 / (1.0 + np.exp(-theta))
        gradient = score - (comparisons * p).sum(axis=1) - PRIOR_DRAWS * prior
        curvature = comparisons * p * (1.0 - p)
        hessian = curvature - np.diag(curvature.sum(axis=1) + PRIOR_DRAWS * prior * (1.0 - prior))
        step = np.linalg.solve(hessian, gradient)
        largest = float(np.max(np.abs(step)))
        if largest > 2.0:  # far from the optimum: keep the step short
            step *= 2.0 / largest
        theta = theta - step
        if largest < tolerance:
            break
    return np.asarray(theta, dtype=np.float64)


class Verdict(enum.Enum):
    """Where a sequential test stands for an ordered pair (first, second)."""

    OPEN = "open"
    FIRST = "first is better"
    SECOND = "second is better"
    EQUAL = "no difference within the zone"

    @property
    def decided(self) -> bool:
        return self is not Verdict.OPEN


@dataclass(frozen=True, slots=True)
class SequentialTest:
    """A sequential probability ratio test on paired per-deal-set scores, with per-pair error control.

    A pair's evidence is, for each deal set both bots played, the first bot's mean score against the second
    (1 ahead, 1/2 level, 0 behind, averaged over the set's rotations): a deal set is one observation, as a
    game pair is in fastchess's pentanomial statistics. Two one-sided generalised SPRTs (normal approximation
    with the observed variance, as fishtest's GSPRT) test a mean score of 1/2 against 1/2 + ``zone`` and
    against 1/2 - ``zone``: the first to accept its alternative names the better bot; both accepting 1/2 means
    no difference within the zone. ``alpha`` bounds the chance of naming a better bot when they are equal,
    ``beta`` the chance of missing a difference of ``zone``; a true difference wider than the zone is called
    the wrong way round far more rarely than ``alpha``.
    """

    zone: float = 0.03
    alpha: float = 0.05
    beta: float = 0.05
    min_deals: int = 16
    """Deal sets a pair must share before the test may decide (the variance is measured, not assumed)."""

    def __post_init__(self) -> None:
        if not 0 < self.zone < 0.5:
            raise ValueError(f"the indifference zone must be between 0 and 0.5, not {self.zone}")
        for name, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0 < value < 0.5:
                raise ValueError(f"{name} must be between 0 and 0.5, not {value}")

    @property
    def bounds(self) -> tuple[float, float]:
        """Return the log-likelihood-ratio bounds (accept the null below, the alternative above)."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, scores: Sequence[float]) -> tuple[float, float]:
        """Return the log-likelihood ratios of "first better by the zone" and "second better by the zone"."""
        n = len(scores)
        if n < 2:
            return 0.0, 0.0
        mean = math.fsum(scores) / n
        variance = max(math.fsum((x - mean) ** 2 for x in scores) / (n - 1), 1e-4)

        def one(mu1: float) -> float:
            return n * ((mean - 0.5) ** 2 - (mean - mu1) ** 2) / (2 * variance)

        return one(0.5 + self.zone), one(0.5 - self.zone)

    def verdict(self, scores: Sequence[float]) -> Verdict:
        """Return the verdict on the paired scores ``scores`` of the first bot against the second."""
        if len(scores) < self.min_deals:
            return Verdict.OPEN
        lower, upper = self.bounds
        up, down = self.llr(scores)
        if up >= upper:
            return Verdict.FIRST
        if down >= upper:
            return Verdict.SECOND
        if up <= lower and down <= lower:
            return Verdict.EQUAL
        return Verdict.OPEN

    def describe(self) -> str:
        return f"zone {self.zone:g}, alpha {self.alpha:g}, beta {self.beta:g} per pair"


@dataclass(frozen=True, slots=True)
class BotEstimate:
    """One bot's line of the order-free board."""

    bot: str
    strength: float
    low: float
    high: float
    rank_low: int
    rank_high: int
    matches: int

    @property
    def ranks(self) -> str:
        """Return the rank range as printed: "3", or "1-2" when the bot is not separated from others."""
        return str(self.rank_low) if self.rank_low == self.rank_high else f"{self.rank_low}-{self.rank_high}"


@dataclass(frozen=True, slots=True)
class NeighbourPair:
    """Two bots next to each other on the board (``first`` above ``second``) and the evidence between them."""

    first: str
    second: str
    beats: float
    """The fitted probability that ``first`` finishes ahead of ``second`` when they meet."""
    superiority: float
    """The share of bootstrap replicates in which ``first`` is the stronger (likelihood of superiority)."""
    ahead: int
    level: int
    behind: int
    """Deal sets both played in which ``first`` scored more than / as much as / less than ``second``."""
    mean_score: float
    verdict: Verdict

    def describe(self) -> str:
        paired = (f"on {self.ahead + self.level + self.behind} shared deal sets {self.ahead} ahead, {self.level} "
                  f"level, {self.behind} behind (mean score {self.mean_score:.3f})")
        verdict = {Verdict.OPEN: "open", Verdict.FIRST: "decided", Verdict.SECOND: "decided the other way",
                   Verdict.EQUAL: "equal within the zone"}[self.verdict]
        return (f"{self.first} beats {self.second} with probability {self.beats:.3f} "
                f"(stronger in {self.superiority:.0%} of resamples); {paired}; {verdict}")

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "second": self.second, "beats": round(self.beats, 4),
                "superiority": round(self.superiority, 4), "ahead": self.ahead, "level": self.level,
                "behind": self.behind, "mean_score": round(self.mean_score, 4), "verdict": self.verdict.value}


@dataclass(frozen=True, slots=True)
class Estimate:
    """The order-free board: bots best first, and each pair of neighbours."""

    bots: list[BotEstimate]
    pairs: list[NeighbourPair]
    replicates: int

    @property
    def order(self) -> list[str]:
        return [b.bot for b in self.bots]

    @property
    def open_pairs(self) -> int:
        return sum(1 for p in self.pairs if not p.verdict.decided)

    def decided(self, bot: str) -> bool:
        """Return whether every neighbour pair ``bot`` is part of is decided."""
        return all(p.verdict.decided for p in self.pairs if bot in (p.first, p.second))


def point_order(evidence: Evidence) -> list[str]:
    """Return the bots best first by the fitted strengths (no bootstrap: cheap enough to call per deal set)."""
    bots = evidence.bots
    if not bots:
        return []
    logs = fit(*evidence.matrices(bots))
    return [bots[i] for i in sorted(range(len(bots)), key=lambda i: (-logs[i], bots[i]))]


def neighbour_verdicts(evidence: Evidence, order: Sequence[str], test: SequentialTest) -> list[tuple[Pair, Verdict]]:
    """Return the sequential test's verdict for each pair of neighbours in ``order``."""
    return [((a, b), test.verdict(evidence.paired(a, b))) for a, b in itertools.pairwise(order)]


def estimate(evidence: Evidence, *, test: SequentialTest | None = None, replicates: int = 200,
             seed: int = 0) -> Estimate:
    """Return the order-free board of ``evidence``: fit, 95% bootstrap intervals over deal sets, rank ranges.

    The bootstrap is seeded by ``seed`` and the evidence only, so the same matches give the same board.
    """
    test = test or SequentialTest()
    bots = evidence.bots
    n = len(bots)
    if n == 0:
        return Estimate([], [], 0)
    design = _Design(evidence, bots)
    logs = fit(*design.totals())
    logs -= logs.mean()  # printed around 25, TrueSkill's mean
    rng = np.random.default_rng([seed, design.deals, len(design.rows)])
    samples = np.empty((replicates, n))
    for r in range(replicates):
        weights = rng.poisson(1.0, design.deals).astype(np.float64)
        sample = fit(*design.totals(weights), start=logs, tolerance=1e-6)
        samples[r] = sample - sample.mean()
    # a replicate's rank of each bot: 1 + how many bots are stronger in it
    ranks = 1 + (samples[:, None, :] > samples[:, :, None]).sum(axis=2)
    order = sorted(range(n), key=lambda i: (-logs[i], bots[i]))
    rows = []
    for i in order:
        low, high = np.quantile(samples[:, i], [0.025, 0.975]) if replicates else (logs[i], logs[i])
        rank_low, rank_high = np.quantile(ranks[:, i], [0.025, 0.975]) if replicates else (1, n)
        rows.append(BotEstimate(bots[i], MU + SCALE * float(logs[i]), MU + SCALE * float(low),
                                MU + SCALE * float(high), math.floor(rank_low), math.ceil(rank_high),
                                evidence.matches.get(bots[i], 0)))
    pairs = []
    for i, j in itertools.pairwise(order):
        a, b = bots[i], bots[j]
        scores = evidence.paired(a, b)
        pairs.append(NeighbourPair(
            a, b, beats=float(1 / (1 + math.exp(logs[j] - logs[i]))),
            superiority=float(np.mean(samples[:, i] > samples[:, j])) if replicates else 0.5,
            ahead=sum(1 for s in scores if s > 0.5), level=sum(1 for s in scores if s == 0.5),
            behind=sum(1 for s in scores if s < 0.5),
            mean_score=math.fsum(scores) / len(scores) if scores else 0.5, verdict=test.verdict(scores)))
    return Estimate(rows, pairs, replicates)


def mean_score_interval(scores: Sequence[float], z: float = 1.96) -> tuple[float, float] | None:
    """Return the interval of a mean pairwise score over deal sets (:meth:`Evidence.paired`, one score per deal
    set: the rotations of one deal share its cards, the deal sets are independent): the mean plus and minus
    ``z`` standard errors (1.96: 95%, the normal approximation), clipped to [0, 1]; ``None`` under two deal sets.
    """
    n = len(scores)
    if n < 2:
        return None
    mean = math.fsum(scores) / n
    spread = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / (n - 1) / n)
    return max(0.0, mean - z * spread), min(1.0, mean + z * spread)
