"""The scheduler keeps testing everyone: new bots first, fair shares, the least decided neighbours next."""

from __future__ import annotations

import random
from statistics import NormalDist

import pytest

from arena.ladder.ratings import Rating, TrueSkillSystem
from arena.ladder.scheduler import FairScheduler, FieldState, open_pairs_first, win_probability_of_order

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
    with pytest.raises(ValueError, match="2 bots cannot fill 3 seats"):
        scheduler.next_group(FieldState(["a", "b"], {}, {}), 3, random.Random(0))
    assert sorted(scheduler.next_group(FieldState(["a", "b", "c"], {}, {}), 3, random.Random(0))) == ["a", "b", "c"]


def group(played: dict[str, int], seats: int, ratings: dict[str, Rating] | None = None,
          bots: list[str] | None = None) -> list[str]:
    """The bots the default scheduler picks, sorted (their seating is the rng's)."""
    state = FieldState(bots or sorted(played), ratings or {}, played)
    return sorted(FairScheduler().next_group(state, seats, random.Random(0)))


# far apart but for the pair e-f: the open pair every test below falls back on
SPREAD = {"a": Rating(60, 1), "b": Rating(50, 1), "c": Rating(40, 1), "d": Rating(30, 1), "e": Rating(20, 3),
          "f": Rating(19, 3)}


def test_new_bots_play_fewest_matches_first_and_a_bot_not_yet_counted_has_played_none() -> None:
    assert group({"a": 5, "b": 2, "c": 0} | dict.fromkeys("def", 100), 2, SPREAD) == ["b", "c"]
    # "z" is in the field but not in the counts: it has played nothing, fewer than "a" and "b"
    played = {"a": 1, "b": 1} | dict.fromkeys("cdef", 100)
    assert group(played, 2, SPREAD, bots=[*played, "z"]) == ["a", "z"]


def test_a_bot_is_new_below_new_matches_not_at_it() -> None:
    # nobody is short of a fair share here (mean 7.8): "a" is new, the other seat goes to the open pair e-f
    played = {"a": 7} | dict.fromkeys("bcdef", 8)
    assert group(played, 2, SPREAD) == ["a", "e"]


def test_starved_bots_play_fewest_matches_first() -> None:
    played = {"a": 30, "b": 20, "c": 9} | dict.fromkeys("def", 100)  # all three under 75% of the mean (58)
    assert group(played, 2, SPREAD) == ["b", "c"]


def test_a_bot_is_starved_below_min_share_of_the_mean_not_at_it() -> None:
    # mean 48: "a" has exactly 75% of it and is not starved; 35 would be
    ratings = {"a": Rating(60, 1), "b": Rating(40, 1), "c": Rating(20, 3), "d": Rating(19, 3)}
    assert group({"a": 36, "b": 52, "c": 52, "d": 52}, 2, ratings) == ["c", "d"]
    assert group({"a": 35, "b": 52, "c": 52, "d": 52}, 2, ratings) == ["a", "c"]


def test_the_last_seat_of_a_pair_goes_to_the_member_with_fewer_matches() -> None:
    ratings = {"a": Rating(60, 3), "b": Rating(59, 3), "c": Rating(40, 2), "d": Rating(39, 2),
               "e": Rating(0, 1)}
    assert group({"a": 50, "b": 50, "c": 60, "d": 50, "e": 50}, 3, ratings) == ["a", "b", "d"]


def test_open_pairs_come_widest_overlap_first_then_fewest_matches_then_by_name_and_decided_ones_last() -> None:
    ratings = {"x": Rating(30, 1), "a": Rating(28, 1), "b": Rating(20, 1), "y": Rating(18, 1),
               "m": Rating(10, 2), "n": Rating(9, 2), "p": Rating(-5, 1)}
    played = dict.fromkeys(ratings, 10)
    # b-y and x-a overlap the same: the pair whose first bot's name comes first goes first
    assert open_pairs_first(sorted(ratings), ratings, set(), played) == [
        ("m", "n"), ("b", "y"), ("x", "a"), ("y", "m"), ("a", "b"), ("n", "p")]
    assert open_pairs_first(sorted(ratings), ratings, {frozenset("mn"), frozenset("xa")}, played) == [
        ("b", "y"), ("y", "m"), ("a", "b"), ("n", "p"), ("m", "n"), ("x", "a")]
    # of equal overlaps the pair with fewer matches between its two bots goes first, whichever bot has them
    assert open_pairs_first(sorted(ratings), ratings, set(), played | {"y": 2, "b": 12})[1:3] == [
        ("b", "y"), ("x", "a")]
    assert open_pairs_first(sorted(ratings), ratings, set(), played | {"b": 14, "x": 7})[1:3] == [
        ("x", "a"), ("b", "y")]
    # a bot missing from the counts has played none
    for missing in ("b", "y"):
        counts = {bot: n for bot, n in (played | {"x": 5, "a": 5}).items() if bot != missing}
        assert open_pairs_first(sorted(ratings), ratings, set(), counts)[1:3] == [("b", "y"), ("x", "a")], missing


def test_neighbours_are_taken_in_order_of_mu_then_name_and_a_bot_without_a_rating_has_the_first_one() -> None:
    ratings = {"c": Rating(40, 2), "a": Rating(30, 2), "b": Rating(30, 2)}
    # "d" has no rating yet (25, 8.3): it is last, neighbour of "b"
    assert open_pairs_first(["a", "b", "c", "d"], ratings, set(), dict.fromkeys("abcd", 3)) == [
        ("a", "b"), ("b", "d"), ("c", "a")]


def test_the_probability_that_an_order_is_right_is_the_normal_one() -> None:
    assert win_probability_of_order(Rating(26, 3), Rating(22, 4)) == pytest.approx(NormalDist().cdf(0.8), abs=1e-12)
    assert win_probability_of_order(Rating(22, 4), Rating(26, 3)) == pytest.approx(NormalDist().cdf(-0.8), abs=1e-12)
    assert win_probability_of_order(Rating(25, 1), Rating(24, 0)) == pytest.approx(NormalDist().cdf(1), abs=1e-12)
    assert win_probability_of_order(Rating(25, 2), Rating(25, 2)) == 0.5
    # certain skills: a higher mean is surely right, equal means are a coin toss
    assert win_probability_of_order(Rating(25, 0), Rating(24, 0)) == 1.0
    assert win_probability_of_order(Rating(25, 0), Rating(25, 0)) == 0.5


def test_of_about_equally_undecided_pairs_the_one_whose_processes_are_warm_goes_first() -> None:
    """Issue 23: overlaps in the same step of ``tolerance`` are about equal; the pair that would start fewer
    processes (``seats`` a bot, less those held warm) goes first. A wider step of overlap still wins."""
    ratings = {"a": Rating(40, 2), "b": Rating(39, 2), "c": Rating(20, 2), "d": Rating(19.2, 2),
               "e": Rating(0, 2), "f": Rating(-3, 2)}
    played = dict.fromkeys(ratings, 10)
    overlaps = {pair: 1 - win_probability_of_order(ratings[pair[0]], ratings[pair[1]])
                for pair in [("a", "b"), ("c", "d"), ("e", "f")]}
    assert overlaps["a", "b"] < overlaps["c", "d"] < overlaps["a", "b"] + 0.05  # a-b and c-d: about equal
    assert overlaps["e", "f"] < overlaps["a", "b"] - 0.05  # e-f: clearly more decided
    cold = open_pairs_first(sorted(ratings), ratings, set(), played, warm={}, seats=3, tolerance=0.05)
    assert cold[:3] == [("c", "d"), ("a", "b"), ("e", "f")]  # no process warm: the overlaps' own order
    warm = {"a": 3, "b": 2, "f": 3, "e": 3}
    assert open_pairs_first(sorted(ratings), ratings, set(), played, warm=warm, seats=3,
                            tolerance=0.05)[:3] == [("a", "b"), ("c", "d"), ("e", "f")]
    # a warm process beyond the seats a bot needs saves nothing
    assert open_pairs_first(sorted(ratings), ratings, set(), played, warm={"a": 9, "c": 3, "d": 3}, seats=3,
                            tolerance=0.05)[:2] == [("c", "d"), ("a", "b")]
    # tolerance 0: the pool is never looked at
    assert open_pairs_first(sorted(ratings), ratings, set(), played, warm=warm, seats=3,
                            tolerance=0.0)[:2] == [("c", "d"), ("a", "b")]
    # a decided pair still waits, warm or not
    assert open_pairs_first(sorted(ratings), ratings, {frozenset("ab")}, played, warm=warm, seats=3,
                            tolerance=0.05)[-1] == ("a", "b")


def test_the_pool_never_takes_a_seat_from_a_new_or_starved_bot() -> None:
    """Issue 23: rules 1 and 2 (new bots, fair shares) do not look at the pool: a cold new bot still plays."""
    ratings = {b: Rating(20 + 3 * i, 1.0) for i, b in enumerate("abcdef")}
    warm = {b: 4 for b in "abcde"}
    new = FairScheduler().next_group(FieldState(list(ratings), ratings, dict.fromkeys("abcde", 100) | {"f": 2},
                                                warm=warm), SEATS, random.Random(1))
    assert "f" in new
    starved = FairScheduler().next_group(FieldState(list(ratings), ratings, dict.fromkeys("abcde", 100) | {"f": 60},
                                                    warm=warm), SEATS, random.Random(1))
    assert "f" in starved


def test_the_group_prefers_warm_bots_among_equals_and_plays_the_same_without_a_pool() -> None:
    """A field of equally undecided neighbours: with warm processes the group is the warm bots; without any
    pool figures it is the one the scheduler always chose."""
    ratings = {b: Rating(30 - 6 * i, 4.0) for i, b in enumerate("abcdefgh")}
    played = dict.fromkeys(ratings, 40)
    state = FieldState(list(ratings), ratings, played)
    plain = FairScheduler().next_group(state, SEATS, random.Random(3))
    assert sorted(plain) == sorted(FairScheduler(warm_tolerance=0).next_group(state, SEATS, random.Random(3)))
    warm = {b: SEATS for b in "efgh"}
    chosen = FairScheduler().next_group(FieldState(list(ratings), ratings, played, warm=warm), SEATS,
                                        random.Random(3))
    assert sorted(chosen) == ["e", "f", "g", "h"] != sorted(plain)


def test_a_pair_is_charged_the_starts_its_bots_lack_exactly() -> None:
    """Each bot of a pair needs ``seats`` processes: a fully warm bot costs no start, a bot the pool does not
    hold costs ``seats``, one held once ``seats - 1``; and without a tolerance the pool is not looked at."""
    ratings = {"a": Rating(40, 2), "b": Rating(39, 2), "c": Rating(20, 2), "d": Rating(19.2, 2)}
    played = dict.fromkeys(ratings, 10)

    def first(warm: dict[str, int], tolerance: float = 0.05) -> tuple[str, str]:
        pairs = open_pairs_first(sorted(ratings), ratings, set(), played, warm=warm, seats=3, tolerance=tolerance)
        return pairs[0]

    # c-d overlaps more (the same step): it goes first whenever a-b would not start fewer processes
    assert first({}) == ("c", "d")
    assert first({"a": 3, "b": 3, "c": 2, "d": 3}) == ("a", "b")  # 0 starts against 1
    assert first({"a": 1, "b": 1}) == ("a", "b")  # 4 starts against 6: a bot not held lacks all 3
    assert first({"a": 3, "b": 3}, tolerance=0.0) == ("c", "d")
    assert open_pairs_first(sorted(ratings), ratings, set(), played, warm={"a": 3, "b": 3}, seats=3)[0] == ("c", "d")
