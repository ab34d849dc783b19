"""The order-free estimate and the sequential test: same matches in any order, same board; known answers."""

from __future__ import annotations

import math
import random
from collections import Counter

from arena.ladder.estimate import SCALE, Evidence, SequentialTest, Verdict, estimate, pair_scores, point_order
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
