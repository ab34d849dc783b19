"""The game interface shared by every game (arena/games/base.py): prompts, places, events, clocks, match states.

Exact outcomes, worked out by hand from the interface's documentation (and the rules G1, G2, C17, GS8 of
docs/rules.md where they apply); the positions are Cabanga!'s, set by hand, and small Goofspiel and L.A.M.A.
matches for what Cabanga! overrides.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from typing import Any

import pytest
from costs import until_over

from arena.games import get_game
from arena.games.base import (
    Clock,
    Decision,
    FaultKind,
    GameError,
    IllegalDecisionError,
    MatchOver,
    MatchResult,
    OptionError,
    ParseError,
    Pick,
    Prompt,
    RoundScored,
    Scoring,
    SeatFaulted,
    check_known_options,
    decision_text,
    parse_int_option,
    places_from_totals,
    random_decision,
)
from arena.games.cabanga import CABANGA, CabangaState, Card, Colour, PenaltyCards, PlayCard

NAMES = ("alice", "bob", "carol", "dave")
TOPS = ("G1", "R18", "G3", "B18", "G5", "P18", "G7", "Y18")


def c(text: str) -> Card:
    return Card.parse(text)


def p(text: str) -> PlayCard:
    return PlayCard.parse(text)


PLAY = Prompt(0, "play", Pick.ONE, (p("R9:left"), p("R9:right"), p("B2:left"), p("B2:right")), (p("R9:left"),))
THROW = Prompt(1, "throw", Pick.SUBSET, (c("R5"), c("R7")), ())


def message(text: str) -> str:
    return f"^{re.escape(text)}$"


# ------------------------------------------------------------------------------------------ decisions, prompts


def test_a_decision_reads_as_its_actions_or_a_dash_for_none() -> None:
    assert decision_text(()) == "-"
    assert decision_text((p("R9:left"),)) == "R9:left"
    assert decision_text((c("R5"), c("R7"))) == "R5 R7"
    assert decision_text((5, "x")) == "5 'x'"  # type: ignore[arg-type]  # an in-process bot's junk, shown as is


def test_a_prompt_of_one_takes_exactly_one_of_its_choices() -> None:
    for choice in PLAY.choices:
        assert PLAY.check((choice,)) is None
    choices = "R9:left R9:right B2:left B2:right"
    assert PLAY.choice_texts() == choices
    wrong: list[tuple[Decision, str]] = [
        ((), "-"),
        ((p("R9:left"), p("B2:left")), "R9:left B2:left"),
        ((p("R5:left"),), "R5:left"),
        ((c("R9"),), "R9"),
    ]
    for decision, shown in wrong:
        with pytest.raises(IllegalDecisionError, match=message(
                f"seat 0: {shown!r} is not one of the legal play choices {choices}")):
            PLAY.check(decision)
    with pytest.raises(IllegalDecisionError, match=message(
            "seat 0: a decision is a tuple of actions, got [PlayCard.parse('R9:left')]")):
        PLAY.check([p("R9:left")])  # type: ignore[arg-type]


def test_a_prompt_of_a_subset_takes_any_distinct_candidates_in_any_order() -> None:
    for decision in [(), (c("R5"),), (c("R7"),), (c("R5"), c("R7")), (c("R7"), c("R5"))]:
        assert THROW.check(decision) is None
    with pytest.raises(IllegalDecisionError, match=message("seat 1: 'B3' is not among the throw candidates R5 R7")):
        THROW.check((c("R5"), c("B3")))
    with pytest.raises(IllegalDecisionError, match=message("seat 1: 'R5 R7 R5' names a choice more than once")):
        THROW.check((c("R5"), c("R7"), c("R5")))
    with pytest.raises(IllegalDecisionError, match=message("seat 1: a decision is a tuple of actions, got None")):
        THROW.check(None)  # type: ignore[arg-type]


def test_a_prompt_parses_the_text_of_a_decision() -> None:
    assert THROW.parse("-") == () == THROW.parse("") == THROW.parse("  -  ")
    assert THROW.parse(" R7  R5 ") == (c("R7"), c("R5"))
    assert PLAY.parse("B2:right") == (p("B2:right"),)
    with pytest.raises(ParseError, match=message("seat 1: 'R9' in 'R5 R9' is none of the throw choices R5 R7")):
        THROW.parse("R5 R9")
    with pytest.raises(ParseError, match=message("seat 1: '-' in '- R5' is none of the throw choices R5 R7")):
        THROW.parse("- R5")
    with pytest.raises(IllegalDecisionError, match="names a choice more than once"):
        THROW.parse("R5 R5")
    with pytest.raises(IllegalDecisionError, match="'-' is not one of the legal play choices"):
        PLAY.parse("-")
    with pytest.raises(IllegalDecisionError, match="'R9:left R9:right' is not one of"):
        PLAY.parse("R9:left R9:right")


def test_a_random_decision_is_uniform_over_the_legal_ones() -> None:
    rng = random.Random(3)
    ones = Counter(random_decision(PLAY, rng) for _ in range(4000))
    assert set(ones) == {(choice,) for choice in PLAY.choices}
    assert all(850 < n < 1150 for n in ones.values()), ones  # 1000 each expected; 5 standard deviations
    subsets = Counter(random_decision(THROW, rng) for _ in range(4000))
    assert set(subsets) == {(), (c("R5"),), (c("R7"),), (c("R5"), c("R7"))}  # in choice order, never repeated
    assert all(850 < n < 1150 for n in subsets.values()), subsets
    assert random_decision(Prompt(2, "throw", Pick.SUBSET, (), ()), rng) == ()


# -------------------------------------------------------------------------------------- places, C17 and GS8


@pytest.mark.parametrize(
    ("totals", "lower", "higher"),
    [
        ((5, 3, 5, 1), (3, 2, 3, 1), (1, 3, 1, 4)),
        ((7, 7, 7), (1, 1, 1), (1, 1, 1)),
        ((0, 9), (1, 2), (2, 1)),
        ((4,), (1,), (1,)),
        ((), (), ()),
    ],
)
def test_c17_gs8_places_count_the_strictly_better_totals(
    totals: tuple[int, ...], lower: tuple[int, ...], higher: tuple[int, ...]
) -> None:
    assert places_from_totals(totals) == lower == Scoring.LOWER_WINS.places(totals)
    assert Scoring.HIGHER_WINS.places(totals) == higher
    assert MatchResult.from_totals(list(totals)) == MatchResult(totals, lower)


def test_c17_gs8_which_total_is_better() -> None:
    assert Scoring.LOWER_WINS.better(3, 5) and not Scoring.LOWER_WINS.better(5, 3)
    assert Scoring.HIGHER_WINS.better(5, 3) and not Scoring.HIGHER_WINS.better(3, 5)
    assert not Scoring.LOWER_WINS.better(4, 4) and not Scoring.HIGHER_WINS.better(4, 4)
    assert (Scoring("lower"), Scoring("higher")) == (Scoring.LOWER_WINS, Scoring.HIGHER_WINS)  # stored, sent
    assert [game.scoring for game in map(get_game, ("cabanga", "lama", "goofspiel"))] == [
        Scoring.LOWER_WINS, Scoring.LOWER_WINS, Scoring.HIGHER_WINS]


# ------------------------------------------------------------------------------------------------ events


def test_g2_the_shared_events_as_json_and_as_text() -> None:
    over = MatchOver((5, 3, 5, 1), (3, 2, 3, 1))
    assert over.to_json() == {"event": "match_over", "totals": [5, 3, 5, 1], "places": [3, 2, 3, 1]}
    assert over.describe(NAMES) == "match over: 1. dave (1), 2. bob (3), 3. alice (5), 3. carol (5)"
    scored = RoundScored(2, (3, 0, 4), (5, 2, 4))
    assert scored.to_json() == {"event": "round_scored", "round": 2, "points": [3, 0, 4], "totals": [5, 2, 4]}
    assert scored.describe(NAMES) == "round 2 scored: alice +3 = 5, bob +0 = 2, carol +4 = 4"
    faulted = SeatFaulted(1, FaultKind.TIMEOUT)
    assert faulted.to_json() == {"event": "seat_faulted", "seat": 1, "kind": "timeout"}
    assert faulted.describe(NAMES) == "bob faulted (timeout): the default is applied"
    assert not over.quiet and not scored.quiet and not faulted.quiet
    # the fault kinds are stored and sent by these names
    assert [kind.value for kind in FaultKind] == ["timeout", "crash", "disconnect", "malformed", "illegal", "benched"]


def test_a_clock_needs_a_positive_deadline_and_a_bank_of_zero_or_more() -> None:
    assert (Clock().deadline, Clock().bank) == (1.0, 0.0)
    assert Clock(0.001, 0).bank == 0 and Clock(2, 30).deadline == 2
    for deadline in (0, -1, math.nan):
        with pytest.raises(ValueError, match=message(f"deadline must be positive seconds, got {deadline!r}")):
            Clock(deadline)
    for bank in (-0.5, math.nan):
        with pytest.raises(ValueError, match=message(f"time bank must be zero or more seconds, got {bank!r}")):
            Clock(1, bank)


# ------------------------------------------------------------------------------------------ options


def test_an_integer_option_is_an_int_or_its_text_at_least_its_minimum() -> None:
    assert parse_int_option("target", 5, minimum=1) == 5
    assert parse_int_option("target", " 7 ", minimum=1) == 7
    assert parse_int_option("target", 3, minimum=3) == 3 == parse_int_option("target", "3", minimum=3)
    for value, error in [
        (True, "option target must be an integer, got True"),
        ("7.0", "option target must be an integer, got '7.0'"),
        ("", "option target must be an integer, got ''"),
        (2.0, "option target must be an integer, got 2.0"),
        (None, "option target must be an integer, got None"),
        (2, "option target must be at least 3, got 2"),
        ("2", "option target must be at least 3, got 2"),
        (-4, "option target must be at least 3, got -4"),
    ]:
        with pytest.raises(OptionError, match=message(error)):
            parse_int_option("target", value, minimum=3)


def test_only_known_options_are_taken() -> None:
    check_known_options("cabanga", {"target": 1, "rounds": 2}, ("target", "rounds"))
    check_known_options("cabanga", {}, ())
    with pytest.raises(OptionError, match=message("cabanga has no option 'turns'; its options are rounds, target")):
        check_known_options("cabanga", {"target": 1, "turns": 2}, ("target", "rounds"))


# ------------------------------------------------------------------------------------------ starting a match


@pytest.mark.parametrize(
    ("seats", "seed", "error"),
    [
        (True, 1, "seats must be an integer, got True"),
        ("4", 1, "seats must be an integer, got '4'"),
        (2, 1, "Cabanga! is played by 3 to 6 seats, not 2"),
        (7, 1, "Cabanga! is played by 3 to 6 seats, not 7"),
        (4, -1, "seed must be an integer >= 0, got -1"),
        (4, True, "seed must be an integer >= 0, got True"),
        (4, 1.0, "seed must be an integer >= 0, got 1.0"),
        (4, "1", "seed must be an integer >= 0, got '1'"),
    ],
)
def test_g1_a_match_needs_a_seat_count_the_game_takes_and_a_seed(seats: Any, seed: Any, error: str) -> None:
    with pytest.raises(OptionError, match=message(error)):
        CABANGA.new_match(seats, seed)


def test_g1_a_match_at_either_end_of_the_seat_range_from_seed_0() -> None:
    for seats in (3, 6):
        state = CABANGA.new_match(seats, 0)
        assert isinstance(state, CabangaState)
        assert (state.seats, state.seed, state.options) == (seats, 0, CABANGA.options())
        assert state.zones()["hand 0"] == CABANGA.new_match(seats, 0).zones()["hand 0"]


def test_g2_a_view_is_only_for_a_seat_at_the_table() -> None:
    state = CABANGA.new_match(4, 1)
    for seat in (True, False, -1, 4, 1.0):
        with pytest.raises(GameError, match=message(f"seat {seat!r} is not at this 4-seat cabanga table")):
            state.view(seat)  # type: ignore[arg-type]
    assert [state.view(seat).seat for seat in range(4)] == [0, 1, 2, 3]


# ------------------------------------------------------------------------------------------ applying decisions


def throw_step() -> CabangaState:
    """Alice played R9 onto R right (R 1|9) after red: bob (R5 R6) and carol (R2) are asked to throw."""
    state = CabangaState.arranged([h.split() for h in ("R9 B9", "R5 R6 B1", "R2 P1", "P2 P3")], tops=TOPS,
                                  previous_colour=Colour.RED, penalty=["Y1"], set_aside=["B7"], seed=3)
    state.apply({0: (p("R9:right"),)})
    assert [prompt.seat for prompt in state.pending()] == [1, 2]
    return state


@pytest.mark.parametrize(
    ("decisions", "shown"),
    [
        ({1: ()}, "[1]"),
        ({1: (), 2: (), 3: ()}, "[1, 2, 3]"),
        ({1: (), 3: ()}, "[1, 3]"),
        ({2: (), 1: None}, "[1, 2]"),
        ({}, "[]"),
    ],
)
def test_decisions_for_other_seats_than_those_prompted_are_refused(decisions: dict[int, Any], shown: str) -> None:
    state = throw_step()
    before = (state.zones(), list(state.events), state.pending())
    with pytest.raises(IllegalDecisionError, match=message(
            f"decisions for seats {shown} do not match the prompted seats [1, 2]")):
        state.apply(decisions)
    assert (state.zones(), list(state.events), state.pending()) == before


def test_an_illegal_decision_of_any_seat_changes_nothing() -> None:
    state = throw_step()
    before = (state.zones(), list(state.events), state.pending())
    with pytest.raises(IllegalDecisionError, match="seat 2: 'R5' is not among the throw candidates R2"):
        state.apply({1: (c("R5"),), 2: (c("R5"),)})  # bob's answer is legal, carol's is not: nothing happens
    assert (state.zones(), list(state.events), state.pending()) == before


def test_a_match_is_over_exactly_when_its_last_event_is_match_over() -> None:
    state = CabangaState.arranged([["R9"], ["B1", "B2"], ["P4", "P5"]], tops=TOPS, penalty=[],
                                  options=CABANGA.options({"rounds": 2}))
    events = state.apply({0: (p("R9:left"),)})  # alice's hand is empty: round 1 ends, round 2 is dealt
    assert not isinstance(events[-1], MatchOver)
    assert not state.over and state.result is None and state.pending()
    rng = random.Random(1)
    for _ in until_over(state):
        state.apply({prompt.seat: random_decision(prompt, rng) for prompt in state.pending()})
    last = state.events[-1]
    assert isinstance(last, MatchOver) and state.result == MatchResult(last.totals, last.places)
    assert state.pending() == ()
    with pytest.raises(IllegalDecisionError, match=message("the cabanga match is over; no decision is pending")):
        state.apply({})


# -------------------------------------------------------------------------------------------- G1: clones


def drawn_after_throws(state: CabangaState) -> tuple[Card, ...]:
    """Bob and carol throw 3 cards after alice's red-on-red: she owes 4, draws Y1, then the set-aside cards
    B7 R5 R6 R2 are shuffled into a new penalty pile and she draws 3 of them."""
    state.apply({1: (c("R5"), c("R6")), 2: (c("R2"),)})
    ((_, drawn),) = state.private_events(0)[-1:]
    assert isinstance(drawn, PenaltyCards) and drawn.cards[0] == c("Y1") and len(drawn.cards) == 4
    return drawn.cards


def test_g1_a_clone_draws_from_a_copy_of_the_generator_or_from_the_one_it_is_given() -> None:
    state = throw_step()
    twin = state.clone()
    other = state.clone(random.Random(99))
    assert (twin.seats, twin.seed, twin.over, list(twin.events)) == (4, 3, False, [])
    assert [twin.private_events(s) for s in range(4)] == [[], [], [], []]
    expected = drawn_after_throws(twin)
    assert drawn_after_throws(state) == expected  # the clone's draws did not move the original's generator
    pile = [c("B7"), c("R5"), c("R6"), c("R2")]  # the set-aside cards, in the order they were set aside
    random.Random(99).shuffle(pile)
    assert drawn_after_throws(other) == (c("Y1"), *reversed(pile[1:]))  # drawn from the end, the top


def test_g1_a_game_without_copies_says_so_and_the_windows_default_to_closed() -> None:
    goofspiel = get_game("goofspiel").new_match(2, 1)
    with pytest.raises(GameError, match=message("goofspiel does not offer copies of a match state")):
        goofspiel.clone()
    lama = get_game("lama").new_match(3, 1)
    rng = random.Random(2)
    for state in (goofspiel, lama):
        for _ in range(6):
            assert (state.opens_window(), state.in_window()) == (False, False)
            state.apply({prompt.seat: random_decision(prompt, rng) for prompt in state.pending()})
    lama_copy = lama.clone()
    assert (lama_copy.seats, lama_copy.seed, lama_copy.over) == (3, 1, False) and lama_copy.zones() == lama.zones()
