"""TrueSkill ratings: ties rated as ties, seat order irrelevant, and the choice of the next group."""

from __future__ import annotations

import itertools
import random

import pytest

from arena.ratings import Rating, RatingError, choose_group, quality, rate


def test_tied_seats_that_started_equal_end_exactly_equal() -> None:
    cases = [[1, 1, 3], [2, 1, 2], [1, 2, 2], [1, 1, 1, 4], [1, 2, 2, 2], [1, 1, 3, 3], [1, 1, 1, 4, 4, 6]]
    for places in cases:
        after = rate([Rating()] * len(places), places)
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


def test_a_draw_with_a_stronger_bot_raises_the_weaker_one() -> None:
    weak, strong = Rating(20.0, 3.0), Rating(30.0, 3.0)
    after = rate([weak, strong], [1, 1])
    assert after[0].mu > weak.mu and after[1].mu < strong.mu


def test_the_seat_a_bot_sat_in_does_not_change_its_rating() -> None:
    rng = random.Random(5)
    ratings = [Rating(rng.uniform(15, 35), rng.uniform(1, 8)) for _ in range(5)]
    places = [1, 2, 2, 4, 4]
    base = rate(ratings, places)
    for order in itertools.permutations(range(5)):
        after = rate([ratings[i] for i in order], [places[i] for i in order])
        for seat, i in enumerate(order):
            assert after[seat].mu == pytest.approx(base[i].mu, abs=1e-9)
            assert after[seat].sigma == pytest.approx(base[i].sigma, abs=1e-9)


def test_winners_gain_losers_lose_and_everyone_gets_surer() -> None:
    after = rate([Rating()] * 4, [1, 2, 3, 4])
    assert [r.mu for r in after] == sorted((r.mu for r in after), reverse=True)
    assert all(r.sigma < Rating().sigma for r in after)
    assert Rating().conservative == pytest.approx(0.0)
    assert Rating(30, 2).conservative == pytest.approx(24.0)


def test_rate_rejects_bad_arguments_and_reports_impossible_upsets() -> None:
    with pytest.raises(ValueError):
        rate([Rating()], [1])
    with pytest.raises(ValueError):
        rate([Rating(), Rating()], [1])
    with pytest.raises(RatingError):
        rate([Rating(-100, 0.8), Rating(160, 0.8)], [1, 2])


def test_choose_group_plays_the_most_uncertain_bot_with_the_closest_match() -> None:
    ratings = {"a": Rating(25, 2), "b": Rating(25, 8), "c": Rating(40, 1), "d": Rating(24, 2), "e": Rating(5, 1)}
    played = dict.fromkeys(ratings, 3)
    group = choose_group(sorted(ratings), ratings, played, 3, random.Random(1))
    assert group[0] == "b"  # highest sigma
    assert sorted(group[1:]) == ["a", "d"]  # the closest pair to play with it
    assert quality([ratings[b] for b in group]) >= quality([ratings[b] for b in ("b", "c", "e")])


def test_choose_group_is_deterministic_distinct_and_fair_on_fresh_ratings() -> None:
    bots = [f"bot{i:02d}" for i in range(12)]
    first = choose_group(bots, {}, {}, 4, random.Random("x"))
    assert first == choose_group(bots, {}, {}, 4, random.Random("x"))
    assert len(set(first)) == 4 and set(first) <= set(bots)
    assert first[0] == "bot00"  # all equally unsure: the fewest matches, then the name
    played = dict.fromkeys(bots, 1) | {"bot00": 5}
    assert choose_group(bots, {}, played, 4, random.Random("x"))[0] == "bot01"
    assert sorted(choose_group(bots[:4], {}, {}, 4, random.Random(0))) == bots[:4]
    with pytest.raises(ValueError):
        choose_group(bots[:2], {}, {}, 3, random.Random(0))
