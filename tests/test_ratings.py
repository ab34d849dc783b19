"""TrueSkill behind the rating-system interface: ties as ties, seat order irrelevant, benched seats, tau 0."""

from __future__ import annotations

import itertools
import random

import pytest
import trueskill

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


def by_library(system: TrueSkillSystem, ratings: list[Rating], places: list[int | None]) -> list[Rating]:
    """The ``trueskill`` library's ratings for a match whose shared places hold two seats at most: each finisher
    averaged over both orders of its tied pair and every order of the benched seats below the finishers; each
    benched seat rated alone below them. (Only one place may be shared, or a tail of benched seats: then every
    order of them is one of the rotations ``rate`` averages.)"""
    env = system.env
    finished = sorted((s for s, p in enumerate(places) if p is not None), key=lambda s: places[s] or 0)
    benched = [s for s, p in enumerate(places) if p is None]

    places_in_order = sorted({places[s] for s in finished})

    def chain(seats: tuple[int, ...]) -> dict[int, tuple[float, float]]:
        """Rate one order: finishers by place, then each benched seat a place lower than the one before."""
        ranks = [places_in_order.index(places[s]) if places[s] is not None else i for i, s in enumerate(seats)]
        rated = env.rate([(env.create_rating(ratings[s].mu, ratings[s].sigma),) for s in seats], ranks=ranks)
        return {s: (r.mu, r.sigma) for s, (r,) in zip(seats, rated, strict=True)}

    def averaged(orders: list[tuple[int, ...]]) -> dict[int, Rating]:
        runs = [chain(order) for order in orders]
        return {s: Rating(sum(r[s][0] for r in runs) / len(runs), sum(r[s][1] for r in runs) / len(runs))
                for s in orders[0]}

    def orders(tail: list[int]) -> list[tuple[int, ...]]:
        """Every order of the finishers (by place, a tied pair either way round) followed by ``tail``."""
        out = []
        for tail_order in itertools.permutations(tail):
            for order in itertools.permutations(finished):
                if [places[s] for s in order] == [places[s] for s in finished]:
                    out.append((*order, *tail_order))
        return out

    after = list(ratings)
    whole = averaged(orders(benched))
    for s in finished:
        after[s] = whole[s]
    for b in benched:
        after[b] = averaged(orders([b]))[b]
    return after


@pytest.mark.parametrize("places", [[1, 2], [2, 1, 2], [1, 1, 3], [3, 1, 2, 3], [1, None], [1, 1, None],
                                    [2, None, 1, None], [None, 1, 3, None, 2]])
def test_places_are_rated_as_the_library_rates_wins_draws_and_benched_seats_below_every_finisher(
        places: list[int | None]) -> None:
    """Exact values: a shared place is the library's draw (averaged over both orders), a benched seat loses to
    every finisher, even a lone one or a shared first place, and is compared with no other benched seat."""
    rng = random.Random(str(places))
    ratings = [Rating(rng.uniform(18, 32), rng.uniform(2, 8)) for _ in places]
    for after, want in zip(rate(ratings, places), by_library(SYSTEM, ratings, places), strict=True):
        assert after.mu == pytest.approx(want.mu, abs=1e-6)
        assert after.sigma == pytest.approx(want.sigma, abs=1e-6)


def test_a_benched_seat_is_rated_as_the_last_place_not_as_a_draw() -> None:
    assert rate([Rating(), Rating()], [1, None]) == rate([Rating(), Rating()], [1, 2])
    assert rate([Rating()] * 3, [1, 1, None]) == rate([Rating()] * 3, [1, 1, 3])


def test_the_default_system_is_trueskill_with_the_ladders_settings_and_no_dynamics() -> None:
    system = TrueSkillSystem()
    assert (system.tau, system.draw_probability) == (0.0, DEFAULT_DRAW_PROBABILITY)
    env = trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=0, draw_probability=DEFAULT_DRAW_PROBABILITY)
    (win,), (loss,) = env.rate([(env.create_rating(),), (env.create_rating(),)], ranks=[0, 1])
    after = system.rate([system.initial(), system.initial()], [1, 2])
    assert [(r.mu, r.sigma) for r in after] == [pytest.approx((win.mu, win.sigma), abs=1e-9),
                                                pytest.approx((loss.mu, loss.sigma), abs=1e-9)]
    assert TrueSkillSystem.for_game("cabanga", 4).tau == 0.0
    assert TrueSkillSystem.for_game("cabanga", 4, tau=0.5).tau == 0.5


def test_the_settings_stored_with_a_ladder_database_read_as_before() -> None:
    """A database whose stored settings differ from ``describe()`` is rated again from scratch: the text must not
    change while the settings do not."""
    assert TrueSkillSystem().describe() == "trueskill mu=25 sigma=8.3333 beta=4.1667 tau=0 draw=0.05"
    assert (TrueSkillSystem(draw_probability=0.044, tau=25 / 300).describe()
            == "trueskill mu=25 sigma=8.3333 beta=4.1667 tau=0.0833333 draw=0.044")


def test_draw_probabilities_from_zero_up_to_but_not_including_one_are_accepted() -> None:
    assert TrueSkillSystem(draw_probability=0.0).margin == pytest.approx(0.0, abs=1e-6)
    for bad in (1.0, 1.5, -0.01):
        with pytest.raises(ValueError, match=rf"draw probability must be in \[0, 1\), not {bad}"):
            TrueSkillSystem(draw_probability=bad)
    with pytest.raises(ValueError, match="tau must be 0 or more, not -1"):
        TrueSkillSystem(tau=-1)


def test_places_below_one_and_miscounted_places_are_refused_with_what_was_given() -> None:
    with pytest.raises(ValueError, match=r"places start at 1, got \[0, 1\]"):
        rate([Rating(), Rating()], [0, 1])
    with pytest.raises(ValueError, match="got 2 and 3"):
        rate([Rating(), Rating()], [1, 2, 3])
    with pytest.raises(RatingError, match=r"cannot rate places \[1, 2\]: an upset too unlikely to rate"):
        rate([Rating(-100, 0.8), Rating(160, 0.8)], [1, 2])
    with pytest.raises(RatingError, match=r"cannot rate places \[1, 1\]: a draw too unlikely to rate"):
        rate([Rating(-100, 0.8), Rating(160, 0.8)], [1, 1])


def test_an_upset_at_the_edge_of_floating_point_is_refused_exactly_when_the_library_refuses_it() -> None:
    """Near an upset of 38 standard deviations the normal's tail ratio is noise (w jumps about, above 1 too):
    such a match raises RatingError whenever the library refuses it, and is never rated from the noise."""
    env = SYSTEM.env
    refused = 0
    for i in range(400):
        gap = 229.0 + i * 0.0075  # the loser's lead over the winner, across the region where w is noise
        try:
            env.rate([(env.create_rating(0, 0.8),), (env.create_rating(gap, 0.8),)], ranks=[0, 1])
        except FloatingPointError:
            refused += 1
            with pytest.raises(RatingError):
                rate([Rating(0, 0.8), Rating(gap, 0.8)], [1, 2])
        else:
            assert all(0 < r.sigma < 0.8 for r in rate([Rating(0, 0.8), Rating(gap, 0.8)], [1, 2]))
    assert 0 < refused < 400
