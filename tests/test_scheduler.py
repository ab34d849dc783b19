"""The scheduler keeps testing everyone: new bots first, fair shares, the least decided neighbours next."""

from __future__ import annotations

import random

import pytest

from arena.ladder.ratings import Rating, TrueSkillSystem
from arena.ladder.scheduler import FairScheduler, FieldState

SEATS = 4


def simulate(skill: dict[str, float], deals: int, seed: int = 0) -> dict[str, int]:
    """Run the scheduler with TrueSkill on matches won by a known skill (plus noise); return the matches played."""
    rng = random.Random(seed)
    system = TrueSkillSystem()
    scheduler = FairScheduler()
    ratings: dict[str, Rating] = {}
    played: dict[str, int] = {}
    for deal in range(deals):
        group = scheduler.next_group(FieldState(sorted(skill), ratings, played), SEATS, random.Random(deal))
        assert len(set(group)) == SEATS
        for _ in range(SEATS):
            perf = [skill[b] + rng.gauss(0, 1) for b in group]
            places = [1 + sum(1 for q in perf if q > p) for p in perf]
            after = system.rate([ratings.get(b, Rating()) for b in group], places)
            ratings.update(zip(group, after, strict=True))
            for b in group:
                played[b] = played.get(b, 0) + 1
    return played


def test_a_field_with_one_hopeless_bot_still_plays_the_best_bots_their_fair_share() -> None:
    skill = {f"bot{i}": 3.0 - 0.3 * i for i in range(7)} | {"hopeless": -50.0}
    played = simulate(skill, 300)
    total = sum(played.values())
    fair = total / len(skill)
    assert played["bot0"] >= 0.7 * fair and played["bot1"] >= 0.7 * fair  # issue 12: 3% of the matches
    assert all(n >= 0.7 * fair for n in played.values())
    assert played["hopeless"] <= 1.2 * fair  # and the hopeless bot does not hog the tables


def test_new_bots_play_first_and_a_starved_bot_plays_next() -> None:
    scheduler = FairScheduler(new_matches=8)
    bots = [f"b{i}" for i in range(6)]
    ratings = {b: Rating(20 + i, 1.0) for i, b in enumerate(bots)}
    played = dict.fromkeys(bots, 100) | {"b5": 3}
    group = scheduler.next_group(FieldState(bots, ratings, played), SEATS, random.Random(1))
    assert "b5" in group  # new: fewer than 8 matches
    played = dict.fromkeys(bots, 100) | {"b0": 40}
    assert "b0" in scheduler.next_group(FieldState(bots, ratings, played), SEATS, random.Random(1))  # starved


def test_the_least_decided_neighbours_play_and_decided_pairs_wait() -> None:
    scheduler = FairScheduler()
    bots = ["a", "b", "c", "d", "e", "f"]
    # a-b overlap most (close means, wide sigmas); e-f next; the rest are far apart
    ratings = {"a": Rating(30, 3), "b": Rating(29.5, 3), "c": Rating(20, 0.5), "d": Rating(10, 0.5),
               "e": Rating(0, 2), "f": Rating(-1, 2)}
    played = dict.fromkeys(bots, 50)
    group = scheduler.next_group(FieldState(bots, ratings, played), SEATS, random.Random(2))
    assert sorted(group) == ["a", "b", "e", "f"]
    decided = {frozenset(("a", "b"))}
    group = scheduler.next_group(FieldState(bots, ratings, played, decided), SEATS, random.Random(2))
    assert {"e", "f"} <= set(group) and not {"a", "b"} <= set(group)


def test_the_group_is_deterministic_and_rejects_too_few_bots() -> None:
    scheduler = FairScheduler()
    state = FieldState([f"x{i}" for i in range(10)], {}, {})
    assert scheduler.next_group(state, SEATS, random.Random("s")) == scheduler.next_group(state, SEATS,
                                                                                          random.Random("s"))
    with pytest.raises(ValueError):
        scheduler.next_group(FieldState(["a", "b"], {}, {}), 3, random.Random(0))
