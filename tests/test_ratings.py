"""TrueSkill behind the rating-system interface: ties as ties, seat order irrelevant, benched seats, tau 0."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.games.tools import game_tools
from arena.ladder.ratings import DEFAULT_DRAW_PROBABILITY, Rating, RatingError, TrueSkillSystem, draw_probability

SYSTEM = TrueSkillSystem(draw_probability=0.05)


def rate(ratings: list[Rating], places: list[int | None]) -> list[Rating]:
    return SYSTEM.rate(ratings, places)


def test_tied_seats_that_started_equal_end_exactly_equal() -> None:
    cases = [[1, 1, 3], [2, 1, 2], [1, 2, 2], [1, 1, 1, 4], [1, 2, 2, 2], [1, 1, 3, 3], [1, 1, 1, 4, 4, 6]]
    for places in cases:
        after = rate([Rating()] * len(places), list(places))
        for a, b in itertools.combinations(range(len(places)), 2):
            if places[a] == places[b]:
                assert after[a] == after[b], (places, a, b)
            else:
                better, worse = (a, b) if places[a] < places[b] else (b, a)
                assert after[better].mu > after[worse].mu


def test_a_shared_first_place_is_rated_as_a_draw_not_a_win() -> None:
    tie = rate([Rating(), Rating()], [1, 1])
    win = rate([Rating(), Rating()], [1, 2])
    assert tie[0] == tie[1]
    assert tie[0].mu == pytest.approx(Rating().mu)  # a draw between equals moves neither mean
    assert tie[0].sigma < Rating().sigma  # but teaches something
    assert win[0].mu > tie[0].mu > win[1].mu


def test_the_seat_a_bot_sat_in_does_not_change_its_rating() -> None:
    rng = random.Random(5)
    ratings = [Rating(rng.uniform(15, 35), rng.uniform(1, 8)) for _ in range(5)]
    places: list[int | None] = [1, 2, 2, None, None]
    base = rate(ratings, places)
    for order in itertools.permutations(range(5)):
        after = rate([ratings[i] for i in order], [places[i] for i in order])
        for seat, i in enumerate(order):
            assert after[seat].mu == pytest.approx(base[i].mu, abs=1e-9)
            assert after[seat].sigma == pytest.approx(base[i].sigma, abs=1e-9)


def test_two_benched_seats_are_not_rated_as_equals_nor_against_each_other() -> None:
    weak, strong, a, b = Rating(15, 2), Rating(35, 2), Rating(25, 2), Rating(25, 2)
    after = rate([a, b, weak, strong], [1, 2, None, None])
    alone = rate([a, b, weak], [1, 2, None])
    # the weak bot crashing beside a strong one gains nothing from it: rated as if the strong one were absent
    assert after[2] == alone[2]
    assert after[2].mu < weak.mu and after[3].mu < strong.mu  # both lost to every finisher
    # with shared last places (as before issue 12) the weak bot would have gained from the draw
    tied = rate([a, b, weak, strong], [1, 2, 3, 3])
    assert tied[2].mu > after[2].mu


def test_a_benched_seat_loses_to_every_finisher() -> None:
    after = rate([Rating()] * 4, [1, 1, 3, None])
    assert after[3].mu < after[2].mu < after[0].mu == after[1].mu
    assert rate([Rating(), Rating()], [None, None]) == [Rating(), Rating()]  # nothing was compared


def test_winners_gain_losers_lose_and_everyone_gets_surer() -> None:
    after = rate([Rating()] * 4, [1, 2, 3, 4])
    assert [r.mu for r in after] == sorted((r.mu for r in after), reverse=True)
    assert all(r.sigma < Rating().sigma for r in after)
    assert Rating().conservative == pytest.approx(0.0)
    assert Rating(30, 2).conservative == pytest.approx(24.0)


def test_tau_zero_lets_sigma_shrink_without_a_floor() -> None:
    fixed, learning = TrueSkillSystem(tau=0.0), TrueSkillSystem(tau=25 / 300)
    ratings = {"f": [Rating(), Rating()], "l": [Rating(), Rating()]}
    for i in range(400):
        places = [1, 2] if i % 3 else [2, 1]
        ratings["f"] = fixed.rate(ratings["f"], places)
        ratings["l"] = learning.rate(ratings["l"], places)
    assert ratings["f"][0].sigma < 0.6 < ratings["l"][0].sigma
    assert fixed.describe() != learning.describe()


def test_draw_probability_is_the_measured_one_per_game_and_seats() -> None:
    measured = game_tools("cabanga").draw_rates[4]
    assert draw_probability("cabanga", 4) == measured < 0.10
    assert TrueSkillSystem.for_game("cabanga", 4).draw_probability == measured
    assert draw_probability("cabanga", 9) == draw_probability("no-such-game", 4) == DEFAULT_DRAW_PROBABILITY
    assert 0 < draw_probability("nosuchgame", 4) < 1


def test_rate_rejects_bad_arguments_and_reports_impossible_upsets() -> None:
    with pytest.raises(ValueError):
        rate([Rating()], [1])
    with pytest.raises(ValueError):
        rate([Rating(), Rating()], [1])
    with pytest.raises(ValueError):
        TrueSkillSystem(tau=-1)
    with pytest.raises(RatingError):
        rate([Rating(-100, 0.8), Rating(160, 0.8)], [1, 2])


@pytest.mark.parametrize("draw, tau", [(0.044, 0.0), (0.10, 25 / 300), (0.30, 0.0)])
def test_the_written_out_graph_rates_as_the_trueskill_library_does(draw: float, tau: float) -> None:
    """The ladder's TrueSkill is the library's factor graph written out for one-player teams: same ratings
    (to the library's stopping tolerance, far below what the board shows) and the same refusals."""
    system = TrueSkillSystem(draw_probability=draw, tau=tau)
    env = system.env
    rng = random.Random(f"{draw}/{tau}")
    refused = 0
    for _ in range(600):
        n = rng.randint(2, 6)
        ratings = [Rating(rng.uniform(-20, 70), rng.uniform(0.2, 9)) for _ in range(n)]
        ranks = sorted(rng.randint(0, n - 1) for _ in range(n))
        ties = [ranks[i] == ranks[i + 1] for i in range(n - 1)]
        try:
            expected = [r for (r,) in env.rate([(env.create_rating(r.mu, r.sigma),) for r in ratings], ranks=ranks)]
        except FloatingPointError:
            refused += 1
            with pytest.raises(FloatingPointError):
                system._chain(ratings, ties)
            continue
        for (mu, sigma), want in zip(system._chain(ratings, ties), expected, strict=True):
            assert mu == pytest.approx(want.mu, abs=1e-5)
            assert sigma == pytest.approx(want.sigma, abs=1e-5)
    assert refused < 600  # matches were rated: the comparison compared something
