"""`arena compare`'s interval of a mean pairwise score over deal sets."""

from __future__ import annotations

import math

import pytest

from arena.ladder.estimate import mean_score_interval


def test_the_interval_is_the_mean_and_1_96_standard_errors_over_deal_sets() -> None:
    scores = [0.5, 0.5, 1.0, 1.0, 0.0, 0.75]
    mean = sum(scores) / 6
    error = math.sqrt(sum((s - mean) ** 2 for s in scores) / 5 / 6)
    assert mean_score_interval(scores) == pytest.approx((mean - 1.96 * error, mean + 1.96 * error))
    assert mean_score_interval(scores, z=1.0) == pytest.approx((mean - error, mean + error))


def test_the_interval_stays_within_0_and_1_and_needs_two_deal_sets() -> None:
    assert mean_score_interval([0.5, 0.5, 1.0, 1.0]) == pytest.approx((0.75 - 1.96 * math.sqrt(1 / 48), 1.0))
    assert mean_score_interval([1.0, 0.0]) == (0.0, 1.0)
    assert mean_score_interval([0.75, 0.75]) == (0.75, 0.75)
    assert mean_score_interval([0.75]) is None and mean_score_interval([]) is None
