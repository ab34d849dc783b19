"""The order-free estimate and the sequential test: same matches in any order, same board; known answers."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter
from fractions import Fraction

import numpy as np
import numpy.typing as npt
import pytest

from arena.ladder.estimate import (
    SCALE,
    BotEstimate,
    Estimate,
    Evidence,
    NeighbourPair,
    SequentialTest,
    Verdict,
    estimate,
    fit,
    neighbour_verdicts,
    pair_scores,
    point_order,
)
from arena.ladder.ratings import Outcome

STRENGTH = {"ace": 2.0, "bob": 1.0, "cat": 0.5, "dan": 0.0}


def simulated(deals: int, seed: int = 1, strength: dict[str, float] | None = None) -> list[Outcome]:
    """Return deal sets of 3 of the bots, 3 rotations each, places drawn from a known strength (Gumbel noise)."""
    strength = strength or STRENGTH
    rng = random.Random(seed)
    bots = sorted(strength)
    out = []
    for deal in range(deals):
        group = rng.sample(bots, 3)
        for rotation in range(3):
            seating = [group[(s - rotation) % 3] for s in range(3)]
            perf = [strength[b] - random.Random(f"{seed}/{deal}/{b}/{rotation}").expovariate(1.0) for b in seating]
            places = tuple(1 + sum(1 for q in perf if q > p) for p in perf)
            out.append(Outcome(deal, rotation, tuple(seating), places))
    return out


def test_the_same_matches_in_another_order_give_the_same_board() -> None:
    outcomes = simulated(120)
    shuffled = list(outcomes)
    random.Random(7).shuffle(shuffled)
    one = estimate(Evidence.of(outcomes), replicates=60)
    two = estimate(Evidence.of(shuffled), replicates=60)
    assert one == two
    assert one.order == ["ace", "bob", "cat", "dan"]


def test_intervals_hold_the_estimate_and_narrow_with_more_deals() -> None:
    few = estimate(Evidence.of(simulated(30)), replicates=80)
    many = estimate(Evidence.of(simulated(600)), replicates=80)
    for board in (few, many):
        assert all(b.low <= b.strength <= b.high for b in board.bots)
    width = {b.bot: b.high - b.low for b in few.bots}
    assert all(b.high - b.low < width[b.bot] / 2 for b in many.bots)
    assert [b.ranks for b in many.bots] == ["1", "2", "3", "4"]


def test_bots_that_are_not_separated_share_a_rank_range() -> None:
    board = estimate(Evidence.of(simulated(20, strength={"ace": 1.0, "bob": 1.0, "cat": 0.0, "dan": -3.0})),
                     replicates=100)
    ranks = {b.bot: (b.rank_low, b.rank_high) for b in board.bots}
    assert board.bots[0].ranks == "1-2" and board.bots[1].rank_low == 1  # the equal pair is not separated
    assert ranks["dan"] == (4, 4)
    top = board.pairs[0]
    assert {top.first, top.second} == {"ace", "bob"} and 0.3 < top.beats < 0.7
    assert "beats" in top.describe() and "shared deal sets" in top.describe()


def test_benched_seats_lose_to_finishers_and_are_not_compared_with_each_other() -> None:
    scores = sorted(pair_scores(Outcome(0, 0, ("a", "b", "c", "d"), (2, 1, None, None))))
    assert scores == [("a", "b", 0.0), ("a", "c", 1.0), ("a", "d", 1.0), ("b", "c", 1.0), ("b", "d", 1.0)]


def test_a_bot_that_always_wins_gets_a_finite_estimate() -> None:
    outcomes = [Outcome(d, 0, ("a", "b"), (1, 2)) for d in range(20)]
    board = estimate(Evidence.of(outcomes), replicates=20)
    assert board.order == ["a", "b"] and board.bots[0].strength < 100
    assert point_order(Evidence.of(outcomes)) == ["a", "b"]


def paired(mean: float, deals: int, seed: int) -> list[float]:
    """Per-deal-set scores of 4 rotations, each won with probability ``mean`` (known answer)."""
    rng = random.Random(seed)
    return [sum(rng.random() < mean for _ in range(4)) / 4 for _ in range(deals)]


def first_verdict(test: SequentialTest, scores: list[float]) -> tuple[Verdict, int]:
    for n in range(1, len(scores) + 1):
        verdict = test.verdict(scores[:n])
        if verdict.decided:
            return verdict, n
    return Verdict.OPEN, len(scores)


def test_the_sequential_test_names_the_better_bot_when_the_difference_is_known() -> None:
    test = SequentialTest(zone=0.05, alpha=0.05, beta=0.05)
    better = [first_verdict(test, paired(0.6, 3000, seed))[0] for seed in range(20)]
    worse = [first_verdict(test, paired(0.4, 3000, seed))[0] for seed in range(20)]
    assert better.count(Verdict.FIRST) >= 19 and Verdict.SECOND not in better
    assert worse.count(Verdict.SECOND) >= 19 and Verdict.FIRST not in worse


def test_the_sequential_test_stays_open_on_a_tie_and_then_finds_no_difference() -> None:
    test = SequentialTest(zone=0.05, alpha=0.05, beta=0.05)
    verdicts = [first_verdict(test, paired(0.5, 4000, seed)) for seed in range(20)]
    early = [test.verdict(paired(0.5, 30, seed)) for seed in range(20)]
    assert early.count(Verdict.OPEN) >= 18 and Verdict.EQUAL not in early  # too little to call them equal
    assert sum(v is Verdict.EQUAL for v, _ in verdicts) >= 17  # alpha per side: a winner named rarely
    assert min(n for v, n in verdicts if v is Verdict.EQUAL) > 30
    assert not test.verdict([0.5] * (test.min_deals - 1)).decided


def test_paired_scores_follow_the_deal_sets_both_played() -> None:
    evidence = Evidence.of([Outcome(0, 0, ("a", "b", "c"), (1, 2, 3)), Outcome(0, 1, ("c", "a", "b"), (1, 1, 3)),
                            Outcome(1, 0, ("a", "c", "d"), (3, 1, 2))])
    assert evidence.paired("a", "b") == [1.0]  # one deal set: a ahead of b in both matches
    assert evidence.paired("b", "a") == [0.0]
    assert evidence.paired("a", "c") == [0.75, 0.0]  # ahead, then level; then behind in deal set 1
    assert evidence.paired("b", "d") == []


def pair_outcomes(deals: int, win: float, seed: int) -> list[Outcome]:
    """One match per deal set between "hi" and "lo", in which "hi" finishes ahead with probability ``win``."""
    rng = random.Random(seed)
    return [Outcome(deal, 0, ("hi", "lo"), (1, 2) if rng.random() < win else (2, 1)) for deal in range(deals)]


def test_a_95_percent_interval_is_as_wide_as_the_analytic_standard_error_says() -> None:
    """Two bots, "hi" ahead with probability 0.6 over 400 independent deal sets: the maximum-likelihood
    difference of log-strengths is logit(p) with standard error 1/sqrt(n p (1 - p)); each bot's strength is
    half of it around the mean, so its 95% interval spans 2 * 1.96 * se / 2 (on the printed scale). A 90%
    interval labelled 95% is a sixth narrower."""
    deals, win = 400, 0.6
    ratios = []
    for seed in range(4):
        outcomes = pair_outcomes(deals, win, seed)
        observed = sum(1 for o in outcomes if o.places[0] == 1) / deals
        se = 1 / math.sqrt(deals * observed * (1 - observed))
        board = estimate(Evidence.of(outcomes), replicates=1000, seed=seed)
        hi = next(b for b in board.bots if b.bot == "hi")
        ratios.append((hi.high - hi.low) / (SCALE * 1.96 * se))
    mean = sum(ratios) / len(ratios)
    assert 0.92 < mean < 1.08, ratios


def sprt_errors(test: SequentialTest, mean: float, runs: int, seed: int) -> Counter[Verdict]:
    """Run ``test`` on ``runs`` simulated pairs whose per-deal-set score has mean ``mean`` (scores 0, 1/2, 1,
    sd about 0.3) until it decides (at most 3000 deal sets); return the verdicts."""
    rng = random.Random(seed)
    ahead = 0.2 + (mean - 0.5)  # P(1); P(0) = 0.2 - (mean - 0.5); the rest 1/2
    behind = 0.2 - (mean - 0.5)
    verdicts: Counter[Verdict] = Counter()
    for _ in range(runs):
        scores: list[float] = []
        verdict = Verdict.OPEN
        while verdict is Verdict.OPEN and len(scores) < 3000:
            r = rng.random()
            scores.append(1.0 if r < ahead else 0.0 if r < ahead + behind else 0.5)
            verdict = test.verdict(scores)
        verdicts[verdict] += 1
    return verdicts


def test_the_sequential_test_keeps_alpha_and_beta_apart() -> None:
    """alpha bounds naming a better bot when the two are equal, beta missing a difference of the zone; with
    alpha != beta, swapping them shows in either error rate (simulated, 400 pairs each)."""
    strict_alpha = SequentialTest(zone=0.1, alpha=0.02, beta=0.25, min_deals=8)
    equal = sprt_errors(strict_alpha, 0.5, 400, seed=1)
    false_alarms = (equal[Verdict.FIRST] + equal[Verdict.SECOND]) / 400
    assert false_alarms <= 0.09, equal  # each one-sided test errs about alpha; swapped: 45%
    better = sprt_errors(strict_alpha, 0.6, 400, seed=2)
    assert better[Verdict.FIRST] / 400 >= 0.6, better
    strict_beta = SequentialTest(zone=0.1, alpha=0.25, beta=0.02, min_deals=8)
    better = sprt_errors(strict_beta, 0.6, 400, seed=3)
    missed = better[Verdict.EQUAL] / 400
    assert missed <= 0.09, better  # swapped: about one in three


# Exact checks: each value below is computed independently (by hand, with fractions, or by a second, simpler
# implementation: Hunter's MM iteration instead of Newton's method), so that a wrong sign, bound or index fails.

def test_pair_scores_name_each_pair_once_smaller_name_first_with_ties_and_a_bot_met_twice_skipped() -> None:
    # seats: zed 1st, amy 2nd (tie with bo), bo 2nd, zed again (a second seat of one bot), cy benched
    outcome = Outcome(0, 0, ("zed", "amy", "bo", "zed", "cy"), (1, 2, 2, 4, None))
    assert list(pair_scores(outcome)) == [
        ("amy", "zed", 0.0), ("bo", "zed", 0.0), ("cy", "zed", 0.0),  # zed (seat 0) ahead; zed vs zed skipped
        ("amy", "bo", 0.5), ("amy", "zed", 1.0), ("amy", "cy", 1.0),  # a shared place is 1/2
        ("bo", "zed", 1.0), ("bo", "cy", 1.0),
        ("cy", "zed", 0.0),  # zed 4th still finished: the benched cy is behind it
    ]
    assert list(pair_scores(Outcome(0, 0, ("b", "a"), (None, 1)))) == [("a", "b", 1.0)]
    assert list(pair_scores(Outcome(0, 0, ("a", "b"), (None, None)))) == []
    assert list(pair_scores(Outcome(0, 0, ("x", "y", "z"), (None, None, 1)))) == [("x", "z", 0.0), ("y", "z", 0.0)]


def test_bots_without_a_single_comparison_sit_at_the_mean_with_no_interval() -> None:
    # every seat benched, or a bot seated against itself: matches played, nothing to compare
    for outcomes in ([Outcome(0, 0, ("b", "a"), (None, None))], [Outcome(0, 0, ("a", "a"), (1, 2))]):
        board = estimate(Evidence.of(outcomes), replicates=10)
        bots = sorted(set(outcomes[0].bots))
        assert board.order == bots == point_order(Evidence.of(outcomes))
        assert [(b.strength, b.low, b.high, b.ranks) for b in board.bots] == [(25.0, 25.0, 25.0, "1") for _ in bots]
        assert [b.matches for b in board.bots] == [outcomes[0].bots.count(b) for b in bots]  # seats held
        assert [(p.beats, p.superiority, p.ahead + p.level + p.behind, p.mean_score) for p in board.pairs] == [
            (0.5, 0.0, 0, 0.5) for _ in bots[1:]]


def three_deals() -> list[Outcome]:
    return [Outcome(0, 0, ("a", "b", "c"), (1, 2, 3)), Outcome(0, 1, ("c", "a", "b"), (1, 1, 3)),
            Outcome(1, 0, ("a", "c", "d"), (3, 1, 2)), Outcome(1, 1, ("d", "a", "c"), (None, 1, 2))]


def test_evidence_keeps_each_pair_per_deal_set_and_in_total() -> None:
    evidence = Evidence.of(three_deals())
    assert evidence.deals == {0: {("a", "b"): [2.0, 2], ("a", "c"): [1.5, 2], ("b", "c"): [1.0, 2]},
                              1: {("a", "c"): [1.0, 2], ("a", "d"): [1.0, 2], ("c", "d"): [2.0, 2]}}
    assert evidence.by_pair == {("a", "b"): {0: [2.0, 2]}, ("a", "c"): {0: [1.5, 2], 1: [1.0, 2]},
                                ("b", "c"): {0: [1.0, 2]}, ("a", "d"): {1: [1.0, 2]}, ("c", "d"): {1: [2.0, 2]}}
    assert evidence.totals == {("a", "b"): [2.0, 2], ("a", "c"): [2.5, 4], ("b", "c"): [1.0, 2],
                               ("a", "d"): [1.0, 2], ("c", "d"): [2.0, 2]}
    assert evidence.matches == {"a": 4, "b": 2, "c": 4, "d": 2}
    assert evidence.bots == ["a", "b", "c", "d"]
    assert evidence.paired("c", "a") == [0.25, 0.5]
    assert evidence.paired("d", "c") == [0.0]
    wins, comparisons = evidence.matrices(["d", "c", "b", "a"])
    assert wins.tolist() == [[0, 0, 0, 1], [2, 0, 1, 1.5], [0, 1, 0, 0], [1, 2.5, 2, 0]]
    assert comparisons.tolist() == [[0, 2, 0, 2], [2, 0, 2, 4], [0, 2, 0, 2], [2, 4, 2, 0]]


def test_paired_scores_are_in_deal_order_whatever_order_the_deal_sets_came_in() -> None:
    outcomes = [Outcome(deal, 0, ("a", "b"), (1, 2) if deal % 2 else (2, 1)) for deal in (5, 2, 9, 4)]
    assert Evidence.of(outcomes).paired("a", "b") == [0.0, 0.0, 1.0, 1.0]  # deals 2, 4, 5, 9
    assert Evidence.of(outcomes).paired("b", "a") == [1.0, 1.0, 0.0, 0.0]


def mm_fit(wins: list[list[float]], comparisons: list[list[float]]) -> list[float]:
    """Bradley-Terry log-strengths with one virtual draw of each bot against a bot of strength 1, by Hunter's
    MM iteration (gamma_i = wins_i / sum_j n_ij / (gamma_i + gamma_j)), a different algorithm from Newton's."""
    n = len(wins)
    gamma = [1.0] * n
    for _ in range(200_000):
        largest = 0.0
        for i in range(n):
            denominator = 1.0 / (gamma[i] + 1.0) + sum(comparisons[i][j] / (gamma[i] + gamma[j])
                                                       for j in range(n) if j != i)
            new = (sum(wins[i]) + 0.5) / denominator
            largest = max(largest, abs(math.log(new / gamma[i])))
            gamma[i] = new
        if largest < 1e-15:
            break
    return [math.log(g) for g in gamma]


def test_the_fit_is_the_maximum_likelihood_of_the_model_with_one_virtual_draw() -> None:
    wins = [[0, 3, 1.5], [1, 0, 2], [0.5, 0, 0]]
    comparisons = [[0, 4, 2], [4, 0, 2], [2, 2, 0]]
    logs = fit(np.array(wins, dtype=float), np.array(comparisons, dtype=float))
    assert logs.tolist() == pytest.approx(mm_fit(wins, comparisons), abs=1e-10)
    # from far away (steps cut to 2 at most) it converges to the same point
    start = np.array([5.0, -5.0, 0.0])
    again = fit(np.array(wins, dtype=float), np.array(comparisons, dtype=float), start=start)
    assert start.tolist() == [5.0, -5.0, 0.0]  # the caller's start is not changed
    assert again.tolist() == pytest.approx(mm_fit(wins, comparisons), abs=1e-10)


def test_one_newton_step_of_the_fit_is_exact() -> None:
    # two bots, a ahead in all k = 3 comparisons: from 0 the first Newton step is (s, -s) with s = 2k / (2k + 1)
    wins, comparisons = np.array([[0.0, 3.0], [0.0, 0.0]]), np.array([[0.0, 3.0], [3.0, 0.0]])
    assert fit(wins, comparisons, iterations=1).tolist() == pytest.approx([6 / 7, -6 / 7], abs=1e-15)
    # a lone bot started at 10: the gradient 1/2 - sigmoid(10) over a tiny curvature asks for a huge step
    lone = fit(np.zeros((1, 1)), np.zeros((1, 1)), start=np.array([10.0]), iterations=1)
    assert lone.tolist() == [8.0]
    # nearer: from 1.5 the step of 2.13 is still cut to 2; from 1 the full Newton step of 1.18 is taken
    for start, step in ((1.5, 2.0), (1.0, (sigmoid(1.0) - 0.5) / (sigmoid(1.0) * (1 - sigmoid(1.0))))):
        newton = (sigmoid(start) - 0.5) / (sigmoid(start) * (1 - sigmoid(start)))
        assert (2 < newton < 3) if start == 1.5 else newton < 2
        assert fit(np.zeros((1, 1)), np.zeros((1, 1)), start=np.array([start]), iterations=1).tolist() == [
            pytest.approx(start - step, abs=1e-15)]
    assert fit(np.zeros((1, 1)), np.zeros((1, 1)), start=np.array([10.0])).tolist() == pytest.approx([0.0],
                                                                                                   abs=1e-12)


def test_the_sequential_test_checks_its_settings() -> None:
    for zone in (0.0, 0.5, -0.1):
        with pytest.raises(ValueError, match=f"^the indifference zone must be between 0 and 0.5, not {zone}$"):
            SequentialTest(zone=zone)
    for name in ("alpha", "beta"):
        for value in (0.0, 0.5, 0.7):
            with pytest.raises(ValueError, match=f"^{name} must be between 0 and 0.5, not {value}$"):
                SequentialTest(alpha=value) if name == "alpha" else SequentialTest(beta=value)
    SequentialTest(zone=1e-9, alpha=1e-9, beta=1e-9)
    SequentialTest(zone=0.4999, alpha=0.4999, beta=0.4999)
    default = SequentialTest()
    assert default.describe() == "zone 0.03, alpha 0.05, beta 0.05 per pair"
    assert SequentialTest(zone=0.1, alpha=0.02, beta=0.25).describe() == "zone 0.1, alpha 0.02, beta 0.25 per pair"
    assert SequentialTest(alpha=0.1, beta=0.2).bounds == (pytest.approx(math.log(2 / 9)), pytest.approx(math.log(8)))


def exact_llr(scores: list[Fraction], zone: Fraction) -> tuple[float, float]:
    n = len(scores)
    mean = sum(scores, Fraction(0)) / n
    variance = max(sum(((x - mean) ** 2 for x in scores), Fraction(0)) / (n - 1), Fraction(1, 10_000))
    half = Fraction(1, 2)
    up, down = (float(n * ((mean - half) ** 2 - (mean - mu) ** 2) / (2 * variance))
                for mu in (half + zone, half - zone))
    return up, down


def test_the_log_likelihood_ratios_are_exact() -> None:
    test = SequentialTest(zone=0.1)
    cases = [[1, 1, Fraction(1, 2), 0], [Fraction(3, 4), Fraction(1, 4), Fraction(1, 2)], [0, 1],
             [Fraction(1, 4)] * 5, [1] * 3]  # the last two: no variance, measured as 1e-4
    for case in cases:
        scores = [Fraction(x) for x in case]
        assert test.llr([float(x) for x in scores]) == pytest.approx(exact_llr(scores, Fraction(1, 10)), rel=1e-12)
    assert test.llr([]) == (0.0, 0.0) and test.llr([1.0]) == (0.0, 0.0)  # one deal set has no variance


class AtBounds(SequentialTest):
    """A test whose bounds are set by hand, to check what happens exactly at a bound."""

    lower: float = -1.0
    upper: float = 1.0

    @property
    def bounds(self) -> tuple[float, float]:
        return type(self).lower, type(self).upper


def test_the_verdict_is_reached_exactly_at_a_bound_and_needs_min_deals() -> None:
    scores = [1.0, 0.5, 1.0, 0.5, 0.0, 1.0]  # first ahead: up > 0 > down
    up, down = SequentialTest(zone=0.1).llr(scores)
    assert down < 0 < up

    def at(lower: float, upper: float) -> SequentialTest:
        return type("Bounds", (AtBounds,), {"lower": lower, "upper": upper})(zone=0.1, min_deals=6)

    assert at(-50.0, up).verdict(scores) is Verdict.FIRST
    assert at(-50.0, math.nextafter(up, math.inf)).verdict(scores) is Verdict.OPEN
    flipped = [1.0 - s for s in scores]
    flipped_up, flipped_down = SequentialTest(zone=0.1).llr(flipped)
    assert flipped_up < 0 < flipped_down
    assert at(-50.0, flipped_down).verdict(flipped) is Verdict.SECOND
    assert at(-50.0, math.nextafter(flipped_down, math.inf)).verdict(flipped) is Verdict.OPEN
    assert at(up, 50.0).verdict(scores) is Verdict.EQUAL  # both at or below the lower bound
    assert at(math.nextafter(up, -math.inf), 50.0).verdict(scores) is Verdict.OPEN
    assert at(down, 50.0).verdict(scores) is Verdict.OPEN  # only one of the two below it
    assert at(flipped_down, 50.0).verdict(flipped) is Verdict.EQUAL  # up below, down at the lower bound
    assert at(-50.0, up).verdict(scores[:5]) is Verdict.OPEN  # min_deals 6
    default = SequentialTest()
    assert default.verdict([1.0] * 16) is Verdict.FIRST and default.verdict([1.0] * 15) is Verdict.OPEN
    assert default.verdict([0.0] * 16) is Verdict.SECOND


def test_verdicts_say_whether_they_are_decided() -> None:
    assert [v.decided for v in Verdict] == [False, True, True, True]


def test_a_neighbour_pair_describes_itself_for_people_and_machines() -> None:
    pair = NeighbourPair("ann", "bob", beats=0.612345, superiority=0.876543, ahead=5, level=2, behind=1,
                         mean_score=0.5678901, verdict=Verdict.OPEN)
    text = ("ann beats bob with probability 0.612 (stronger in 88% of resamples); on 8 shared deal sets 5 ahead, "
            "2 level, 1 behind (mean score 0.568); ")
    assert pair.describe() == text + "open"
    ends = {Verdict.FIRST: "decided", Verdict.SECOND: "decided the other way", Verdict.EQUAL: "equal within the zone"}
    for verdict, end in ends.items():
        assert dataclasses.replace(pair, verdict=verdict).describe() == text + end
    assert pair.to_json() == {"first": "ann", "second": "bob", "beats": 0.6123, "superiority": 0.8765, "ahead": 5,
                              "level": 2, "behind": 1, "mean_score": 0.5679, "verdict": "open"}
    assert BotEstimate("x", 25.0, 24.0, 26.0, 3, 3, 7).ranks == "3"
    assert BotEstimate("x", 25.0, 24.0, 26.0, 1, 2, 7).ranks == "1-2"


def test_the_board_without_resamples_is_the_fit_itself() -> None:
    """a ahead of b in 3 of 5 deal sets, behind in one, level in one: by symmetry the fit is (t, -t) with
    3.5 + 1/2 = 5 s(2t) + s(t) (a's score and virtual half draw, against what the model expects)."""
    outcomes = [Outcome(deal, 0, ("a", "b"), (2, 1) if deal == 0 else (1, 1) if deal == 4 else (1, 2))
                for deal in range(5)]
    low, high = 0.0, 5.0
    for _ in range(200):  # bisection on the increasing 5 s(2t) + s(t)
        t = (low + high) / 2
        low, high = (t, high) if 5 * sigmoid(2 * t) + sigmoid(t) < 4.0 else (low, t)
    board = estimate(Evidence.of(outcomes), replicates=0)
    assert board.replicates == 0 and board.order == ["a", "b"]
    a, b = board.bots
    assert (a.strength, b.strength) == (pytest.approx(25 + SCALE * t), pytest.approx(25 - SCALE * t))
    assert (a.low, a.high, b.low, b.high) == (a.strength, a.strength, b.strength, b.strength)
    assert (a.rank_low, a.rank_high, b.rank_low, b.rank_high) == (1, 2, 1, 2)
    assert (a.matches, b.matches) == (5, 5)
    (pair,) = board.pairs
    assert pair.beats == pytest.approx(sigmoid(2 * t)) and pair.superiority == 0.5
    assert (pair.ahead, pair.level, pair.behind, pair.mean_score) == (3, 1, 1, 0.7)
    assert estimate(Evidence()) == Estimate([], [], 0)
    assert point_order(Evidence()) == []


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def quantile(values: list[float], q: float) -> float:
    """numpy's default (linear) quantile."""
    ordered = sorted(values)
    h = (len(ordered) - 1) * q
    below = math.floor(h)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def test_intervals_ranks_and_superiority_are_those_of_the_resampled_deal_sets(monkeypatch: pytest.MonkeyPatch
                                                                              ) -> None:
    """Record the Poisson weight of each deal set in each replicate, weigh the matches again here and fit each
    replicate (with ``fit``, checked against the MM iteration above), and rebuild the intervals, rank ranges
    and superiority from those fits."""
    outcomes = simulated(9, seed=3)
    drawn: list[list[float]] = []
    real = np.random.default_rng

    class Recording:
        def __init__(self, seed: list[int]) -> None:
            self.rng = real(seed)

        def poisson(self, lam: float, size: int) -> npt.NDArray[np.int64]:
            weights = self.rng.poisson(lam, size)
            drawn.append([float(w) for w in weights])
            return weights

    monkeypatch.setattr(np.random, "default_rng", Recording)
    test = SequentialTest(zone=0.2, min_deals=2)
    board = estimate(Evidence.of(outcomes), replicates=40, seed=5, test=test)
    monkeypatch.undo()
    assert len(drawn) == 40 and all(len(w) == 9 for w in drawn)
    bots = sorted(STRENGTH)
    deals = sorted({o.deal for o in outcomes})

    def centred(weights: dict[int, float]) -> list[float]:
        wins = [[0.0] * 4 for _ in bots]
        comparisons = [[0.0] * 4 for _ in bots]
        for o in outcomes:
            places = [int(p or 0) for p in o.places]  # nobody is benched here
            for s, t in itertools.permutations(range(3), 2):
                i, j = bots.index(o.bots[s]), bots.index(o.bots[t])
                wins[i][j] += weights[o.deal] * (1.0 if places[s] < places[t] else 0.5 if places[s] == places[t] else 0)
                comparisons[i][j] += weights[o.deal]
        logs = fit(np.array(wins), np.array(comparisons)).tolist()  # checked against mm_fit above
        return [x - sum(logs) / 4 for x in logs]

    point = centred(dict.fromkeys(deals, 1.0))
    samples = [centred(dict(zip(deals, weights, strict=True))) for weights in drawn]
    order = sorted(range(4), key=lambda i: -point[i])
    assert board.order == [bots[i] for i in order]
    assert sum(b.strength for b in board.bots) / 4 == pytest.approx(25.0)
    for line, i in zip(board.bots, order, strict=True):
        column = [sample[i] for sample in samples]
        ranks = [1 + sum(1 for x in sample if x > sample[i]) for sample in samples]
        assert line.strength == pytest.approx(25 + SCALE * point[i], abs=1e-8)
        assert line.low == pytest.approx(25 + SCALE * quantile(column, 0.025), abs=1e-6)
        assert line.high == pytest.approx(25 + SCALE * quantile(column, 0.975), abs=1e-6)
        assert (line.rank_low, line.rank_high) == (math.floor(quantile(ranks, 0.025)),
                                                   math.ceil(quantile(ranks, 0.975)))
        assert line.matches == sum(1 for o in outcomes if bots[i] in o.bots)
    evidence = Evidence.of(outcomes)
    for pair, (i, j) in zip(board.pairs, itertools.pairwise(order), strict=True):
        assert (pair.first, pair.second) == (bots[i], bots[j])
        assert pair.beats == pytest.approx(sigmoid(point[i] - point[j]), abs=1e-9)
        stronger = sum(1 for s in samples if s[i] > s[j] + 1e-9)  # a tie (prior only) may go either way
        assert stronger / 40 <= pair.superiority <= sum(1 for s in samples if s[i] > s[j] - 1e-9) / 40
        scores = evidence.paired(bots[i], bots[j])
        assert pair.verdict is test.verdict(scores)
    assert board.replicates == 40
    assert [b.ranks for b in board.bots] != ["1", "2", "3", "4"]  # nine deal sets do not separate them all


def test_the_board_takes_its_settings_and_is_its_seeds() -> None:
    evidence = Evidence.of(simulated(12, seed=4))
    default = estimate(evidence)
    assert default.replicates == 200 and default == estimate(evidence, replicates=200, seed=0)
    other = estimate(evidence, seed=1)
    assert [(b.low, b.high) for b in other.bots] != [(b.low, b.high) for b in default.bots]
    assert all(p.verdict is Verdict.OPEN for p in default.pairs)  # the default test wants 16 deal sets
    loose = SequentialTest(zone=0.4, alpha=0.4, beta=0.4, min_deals=2)
    decided = estimate(evidence, test=loose, replicates=10)
    assert [p.verdict for p in decided.pairs] == [loose.verdict(evidence.paired(p.first, p.second))
                                                  for p in decided.pairs]
    assert any(p.verdict.decided for p in decided.pairs)
    assert neighbour_verdicts(evidence, decided.order, loose) == [((p.first, p.second), p.verdict)
                                                                   for p in decided.pairs]


def test_neighbours_that_never_met_have_no_paired_evidence_and_stay_open() -> None:
    # a beats b in three deal sets, c beats d in one: the board is a, c, d, b and a-c, d-b never met
    outcomes = [Outcome(d, 0, ("a", "b"), (1, 2)) for d in range(3)] + [Outcome(3, 0, ("c", "d"), (1, 2))]
    board = estimate(Evidence.of(outcomes), replicates=20, test=SequentialTest(min_deals=1))
    assert board.order == ["a", "c", "d", "b"] == point_order(Evidence.of(outcomes))
    top, middle, bottom = board.pairs
    assert (top.ahead, top.level, top.behind, top.mean_score, top.verdict) == (0, 0, 0, 0.5, Verdict.OPEN)
    assert (middle.ahead, middle.level, middle.behind, middle.mean_score) == (1, 0, 0, 1.0)
    assert bottom.mean_score == 0.5 and bottom.verdict is Verdict.OPEN


def test_ties_in_strength_are_ordered_by_name() -> None:
    outcomes = [Outcome(0, 0, ("b", "a"), (1, 1)), Outcome(1, 0, ("c", "a"), (1, 1))]
    assert point_order(Evidence.of(outcomes)) == ["a", "b", "c"]  # level with a: b and c are equal
    assert estimate(Evidence.of(outcomes), replicates=5).order == ["a", "b", "c"]


def test_open_pairs_and_decided_bots_follow_the_verdicts() -> None:
    def line(bot: str) -> BotEstimate:
        return BotEstimate(bot, 25.0, 24.0, 26.0, 1, 3, 1)

    def pair(first: str, second: str, verdict: Verdict) -> NeighbourPair:
        return NeighbourPair(first, second, 0.5, 0.5, 0, 0, 0, 0.5, verdict)

    board = Estimate([line("a"), line("b"), line("c"), line("d")],
                     [pair("a", "b", Verdict.EQUAL), pair("b", "c", Verdict.OPEN), pair("c", "d", Verdict.FIRST)], 9)
    assert board.order == ["a", "b", "c", "d"]
    assert board.open_pairs == 1
    assert [board.decided(bot) for bot in ("a", "b", "c", "d", "nobody")] == [True, False, False, True, True]
