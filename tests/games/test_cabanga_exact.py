"""Cabanga! rules, exact outcomes the tests of test_cabanga.py left open (found by mutation testing).

Each test names its rule id (docs/rules.md: C1-C17, G1, G2). Every expected value below is worked out from the
rule on a hand-set position, in the comments next to it, not copied from a run.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

import pytest
from costs import until_over

from arena.games.base import Event, GameError, ParseError, RoundScored, random_decision
from arena.games.cabanga import (
    CABANGA,
    DECK,
    PILE_NAMES,
    START_CARDS,
    CabangaState,
    Card,
    Colour,
    Drew,
    PenaltyCards,
    PlayCard,
    Played,
    RoundStarted,
    Side,
    Threw,
    ThrowsClosed,
)

# R 1|18, B 3|18, P 5|18, Y 7|18; G12, G14, G16, G18 lie under the number cards.
TOPS = ("G1", "R18", "G3", "B18", "G5", "P18", "G7", "Y18")
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")


def c(text: str) -> Card:
    return Card.parse(text)


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in text.split())


def arrange(*hands: str, **kwargs: Any) -> CabangaState:
    kwargs.setdefault("tops", TOPS)
    return CabangaState.arranged([h.split() for h in hands], **kwargs)


def play(state: CabangaState, text: str) -> list[Event]:
    (prompt,) = state.pending()
    assert prompt.kind == "play"
    return state.apply({prompt.seat: (PlayCard.parse(text),)})


def throw(state: CabangaState, answers: Mapping[int, str] | None = None) -> list[Event]:
    answers = answers or {}
    return state.apply({p.seat: p.parse(answers.get(p.seat, "-")) for p in state.pending()})


def snapshot(state: CabangaState) -> tuple[Any, ...]:
    return (
        state.zones(),
        [state.view(s) for s in range(state.seats)],
        state.pending(),
        state.totals,
        state.over,
        state.opens_window(),
        state.in_window(),
    )


# ------------------------------------------------------------------------------------------- C2: text forms


@pytest.mark.parametrize("junk", [["R7"], {"R7": 1}, {"R7"}, b"R7", 7.0])
def test_c2_c8_parse_refuses_any_value_that_is_no_text_with_a_parse_error(junk: Any) -> None:
    # a bot's answer decoded from JSON may be a list or a dict: a ParseError (a fault), never a TypeError
    with pytest.raises(ParseError):
        Card.parse(junk)
    with pytest.raises(ParseError):
        PlayCard.parse(junk)


def test_c1_c2_card_order_is_strict() -> None:
    for card in DECK:
        assert not card < card and card <= card and not card > card
    assert c("R7") < c("R8") and not c("R8") < c("R7") and not c("R8") <= c("R7")
    assert c("Y18") < c("G1") and c("G18") > c("G16")


# ------------------------------------------------------------------------------------ G2: the public events


def test_g2_each_event_reads_as_the_rule_it_follows() -> None:
    # no penalty: no "owes" clause
    played = Played(0, c("R7"), Side.LEFT, False, (c("R7"), c("R18")))
    assert played.describe(NAMES) == "alice plays R7 on the left pile (R 7|18)"
    assert Threw(1, cards("R2 R8")).describe(NAMES) == "bob throws R2 R8 (Cabanga!)"
    assert Drew(2, 1, 1).describe(NAMES) == "carol draws 1 penalty card"
    assert Drew(2, 3, 3).describe(NAMES) == "carol draws 3 penalty cards"
    assert Drew(2, 2, 3).describe(NAMES) == "carol draws 2 of 3 owed penalty cards; no cards are left"
    assert ThrowsClosed(3).to_json() == {"event": "throws_closed", "seat": 3}
    assert ThrowsClosed(3).describe(NAMES) == "throws closed after dave's play"
    drawn = PenaltyCards(4, cards("Y1 B2"))
    assert drawn.describe(NAMES) == "erin draws Y1 B2 (seen by erin only)"
    assert PenaltyCards(5, ()).describe(NAMES) == "frank draws nothing (seen by frank only)"


def test_g2_a_view_in_a_throw_step_names_the_colours_and_tops_as_text() -> None:
    # blue before, then R9 onto R right: R 1|9, bob may throw R5
    state = arrange("R9 B2", "R5 B6", "P7 Y9", previous_colour=Colour.BLUE)
    play(state, "R9:right")
    view = state.view(1).to_json()
    assert (view["previous_colour"], view["throw_row"], view["throw_tops"]) == ("B", "R", ["G1", "R9"])
    assert (view["step"], view["active"], view["hand"]) == ("throw", 0, ["R5", "B6"])
    throw(state)
    view = state.view(1).to_json()  # bob's turn: red was played before, no throw step
    assert (view["previous_colour"], view["throw_row"], view["throw_tops"]) == ("R", None, None)


# --------------------------------------------------------------------------------- C10, C11: the throw window


def test_c10_c11_a_gap_opens_a_window_whether_or_not_a_seat_is_asked() -> None:
    state = arrange("R9 R17 B2 P9", "R5 B6", "P7 Y9")
    assert (state.opens_window(), state.in_window()) == (False, False)
    play(state, "R9:right")  # R 1|9: bob holds R5, so he is asked
    assert (state.opens_window(), state.in_window()) == (True, True)
    throw(state)
    assert (state.opens_window(), state.in_window()) == (False, False)
    play(state, "B6:left")  # B 6|18: nobody else holds a blue card from 7 to 17; the window opens all the same
    assert (state.opens_window(), state.in_window()) == (True, False)
    assert [p.kind for p in state.pending()] == ["play"]
    play(state, "P7:left")  # P 7|18: alice's P9 lies between, so she is asked
    assert (state.opens_window(), state.in_window()) == (True, True)
    throw(state)
    play(state, "R17:right")  # R 1|17, red was not played just before: no penalty; bob's R5 may go
    assert (state.opens_window(), state.in_window()) == (True, True)


# ------------------------------------------------------------------------------------------ G1: clones


def test_g1_a_clone_plays_on_exactly_as_the_original_and_apart_from_it() -> None:
    # mid-turn: alice played R9 after red (owes 1), the throw step is pending, and a reshuffle lies ahead
    state = arrange(
        "R9 B9 P9",
        "R5 R6 B1",
        "R2 P1 P4",
        "P2 P3 Y4",
        previous_colour=Colour.RED,
        penalty=["Y1", "Y2", "Y3"],
        set_aside=["B7"],
        totals=[5, 3, 1, 0],
        round=2,
        starter=3,
        options=CABANGA.options({"rounds": 3}),
        seed=8,
    )
    play(state, "R9:right")
    before = snapshot(state)
    copy = state.clone()
    assert snapshot(copy) == before and copy.events == [] and copy.seed == state.seed
    # the same decisions give the same events to the end of the match, the shuffles included
    rng_a, rng_b = random.Random(4), random.Random(4)
    seen = len(state.events)
    steps = 0
    for _ in until_over(state):
        assert snapshot(copy) == snapshot(state)
        a = {p.seat: random_decision(p, rng_a) for p in state.pending()}
        b = {p.seat: random_decision(p, rng_b) for p in copy.pending()}
        assert copy.apply(b) == state.apply(a)
        steps += 1
    assert copy.over and copy.result == state.result and list(copy.events) == list(state.events)[seen:]
    assert sum(isinstance(e, RoundScored) for e in copy.events) == 2 and steps > 10


def test_g1_playing_on_a_clone_leaves_the_original_as_it_was() -> None:
    state = arrange("R9 B9", "R5 R6 B1", "R2 P1", "P2 P3", previous_colour=Colour.RED, penalty=["Y1"],
                    set_aside=["B7"], totals=[1, 2, 3, 4])
    play(state, "R9:right")
    before = snapshot(state)
    events = list(state.events)
    copy = state.clone()
    throw(copy, {1: "R5 R6", 2: "R2"})  # changes hands, the set-aside cards, the penalty pile, the turn
    play(copy, "B1:left")
    assert snapshot(state) == before and list(state.events) == events
    assert [e for e in throw(state) if not isinstance(e, ThrowsClosed)] == [Drew(0, 1, 1)]


def test_g1_a_clone_of_a_finished_match_is_finished() -> None:
    state = arrange("R9", "R5 B3", "R6 P7", options=CABANGA.options({"rounds": 1}), penalty=[])
    play(state, "R9:left")  # R 9|18: nobody holds R10..R17; alice's hand is empty, the only round ends
    assert state.over
    copy = state.clone()
    assert copy.over and copy.pending() == () and copy.totals == state.totals == (0, 3, 2)


# --------------------------------------------------------------------------------- arranged positions


def test_c2_c3_an_arranged_position_holds_every_card_once_with_start_cards_at_the_bottom() -> None:
    every_row = ("R2", "R17", "B9", "G3", "P1", "P18", "G7", "Y10")
    # the cards placed nowhere go onto the penalty pile (penalty None), or under their rows (penalty given)
    starts = tuple(card.text for card in START_CARDS)
    for tops, penalty in ((starts, None), (TOPS, None), (TOPS, ["Y1"]), (every_row, None), (every_row, [])):
        state = arrange("R9 B2", "R5", "P7 Y9", tops=tops, penalty=penalty)
        zones = state.zones()
        assert sorted(card for zone in zones.values() for card in zone) == list(DECK)
        for name, top in zip(PILE_NAMES, tops, strict=True):
            pile = zones[name]
            assert pile[-1] == c(top) and pile[0].colour is Colour.GREY
            assert all(card.colour is not Colour.GREY for card in pile[1:])
            assert all(card.colour.value == name[0] for card in pile[1:])


@pytest.mark.parametrize(
    ("tops", "missing"),
    [
        # the red row has only start cards on top; the blue row's number card must not take the red cards
        (("G1", "G3", "B18", "G5", "P18", "G7", "Y18", "G12"), "R1"),
        # the blue row has only start cards on top; the purple row's number card must not take the blue cards
        (("G1", "R18", "G3", "G5", "P18", "G7", "Y18", "G12"), "B1"),
    ],
)
def test_c2_a_card_placed_nowhere_lies_only_under_its_own_row(tops: tuple[str, ...], missing: str) -> None:
    with pytest.raises(GameError, match=f"card {missing} is placed nowhere and the {missing[0]} row has no number"):
        arrange("R9", "P1", "P2", tops=tops, penalty=[])


@pytest.mark.parametrize(
    ("hands", "kwargs", "message"),
    [
        (["R5 B1", "R5", "P1"], {}, "card R5 is placed twice: in hand 0 and in hand 1"),
        (["R5 B1", "P1", "P2"], {"penalty": ["B1"]}, "card B1 is placed twice: in hand 0 and in penalty pile"),
        (["R5 B1", "P1", "P2"], {"set_aside": ["B1"]}, "card B1 is placed twice: in hand 0 and in set aside"),
        (["R5 R18", "P1", "P2"], {}, "card R18 is placed twice: in R right and in hand 0"),
        (["R5", "P1 G12", "P2"], {}, "start card G12 cannot be in hand 1; it stays on a pile"),
        (["R5", "P1", "P2"], {"set_aside": ["G12"]}, "start card G12 cannot be in set aside; it stays on a pile"),
        (["R5", "P1", "P2"], {"penalty": ["G12"]}, "start card G12 cannot be in penalty pile; it stays on a pile"),
        (["R5", "P1", "P2"], {"tops": TOPS[:7]}, re.escape(
            "tops must be 8 cards, one per pile (R left, R right, B left, B right, P left, P right, Y left, Y right)")),
        (["R5", "P1", "P2"], {"active": 3}, "active must be a seat 0..2, got 3"),
        (["R5", "P1", "P2", "P3"], {"active": -1}, "active must be a seat 0..3, got -1"),
        (["R5", "P1", "P2"], {"starter": 3}, "starter must be a seat 0..2, got 3"),
        (["R5", "P1", "P2"], {"starter": "1"}, "starter must be a seat 0..2, got '1'"),
        (["R5", "P1", "P2"], {"starter": -1}, "starter must be a seat 0..2, got -1"),
        (["R5", "P1", "P2"], {"totals": [0, -1, 0]}, re.escape("totals must be 3 integers >= 0, got [0, -1, 0]")),
        (["R5", "P1", "P2"], {"totals": [0, "1", 0]}, re.escape("totals must be 3 integers >= 0, got [0, '1', 0]")),
        (["R5", "P1", "P2"], {"round": 0}, "round must be an integer >= 1, got 0"),
        (["R5", "P1", "P2"], {"round": "2"}, "round must be an integer >= 1, got '2'"),
    ],
)
def test_c2_c3_c7_arranged_names_exactly_what_is_wrong(hands: list[str], kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        arrange(*hands, **kwargs)


def test_c7_an_arranged_starter_may_be_any_seat_and_defaults_to_the_active_one() -> None:
    for starter in range(3):
        state = arrange("R9", "B1 B2", "P1 P2", starter=starter, round=1, penalty=[])
        play(state, "R9:left")  # R 9|18: nothing to throw; alice is empty-handed, round 2 starts
        assert state.pending()[0].seat == (starter + 1) % 3
    state = arrange("B1 B2", "B3 B4", "R9", active=2, penalty=[])
    play(state, "R9:left")
    assert state.pending()[0].seat == 0  # the starter was carol, the active seat: the seat after her starts


def test_g1_an_arranged_position_shuffles_from_its_seed_which_is_0_unless_given() -> None:
    def reshuffled(**kwargs: Any) -> tuple[int | None, tuple[Card, ...]]:
        state = arrange("R9 B9", "R5 R6 R7 R8 B1", "P2 P3", previous_colour=Colour.RED, penalty=[], **kwargs)
        play(state, "R9:right")
        throw(state, {1: "R5 R6 R7 R8"})  # 4 set aside, owes 5: alice draws the 4 in their shuffled order
        ((_, drawn),) = state.private_events(0)
        assert isinstance(drawn, PenaltyCards)
        return state.seed, drawn.cards

    default = reshuffled()
    assert default == reshuffled(seed=0) and default[0] == 0
    orders = {reshuffled(seed=seed)[1] for seed in range(8)}
    assert len(orders) > 2  # the seed decides the order
    assert reshuffled(seed=5) == reshuffled(seed=5)
    expected = list(cards("R5 R6 R7 R8"))
    random.Random(0).shuffle(expected)
    assert default[1] == tuple(reversed(expected))  # drawn from the top, the end of the shuffled list


# ------------------------------------------------------------------------------------------------ C16: options


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"turns": 3}, "cabanga has no option 'turns'; its options are rounds, symbols, target"),
        ({"target": 0}, "option target must be at least 1, got 0"),
        ({"target": "many"}, "option target must be an integer, got 'many'"),
        ({"rounds": 0}, "option rounds must be at least 1, got 0"),
        ({"rounds": True}, "option rounds must be an integer, got True"),
    ],
)
def test_c16_an_option_error_names_the_game_the_option_and_the_value(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=f"^{re.escape(message)}$"):
        CABANGA.options(raw)


def test_c16_a_target_of_1_ends_the_match_after_the_first_round_anyone_scores() -> None:
    options = CABANGA.options({"target": 1})
    assert (options.target, options.rounds) == (1, None)
    state = arrange("R9", "B1 B2", "P4 P5", options=options, penalty=[])
    play(state, "R9:left")  # R 9|18: nothing to throw, alice's hand is empty: bob 3 + 2, carol 1 + 1
    assert state.over and state.totals == (0, 5, 2)
    assert state.result is not None and state.result.places == (1, 3, 2)


# ------------------------------------------------------------------------------- C10 and C7, C16 over a match


def test_c10_every_other_seat_may_throw_those_before_the_active_seat_too() -> None:
    # carol (seat 2) plays R9 onto R right: R 1|9; alice, bob and dave hold red cards between, carol's R4 is hers
    state = arrange("R2 B1", "R8 R10 B2", "R9 R4 B3", "R5 R3 B4", active=2)
    play(state, "R9:right")
    assert {p.seat: p.choice_texts() for p in state.pending()} == {0: "R2", 1: "R8", 3: "R3 R5"}
    events = throw(state, {0: "R2", 3: "R5"})
    assert [e for e in events if isinstance(e, Threw)] == [Threw(0, cards("R2")), Threw(3, cards("R5"))]
    assert [e for e in events if isinstance(e, Drew)] == [Drew(2, 2, 2)]


@pytest.mark.parametrize("seats", [3, 5])
def test_c7_c16_rounds_are_numbered_on_and_each_starts_one_seat_further(seats: int) -> None:
    rounds = 7
    state = CABANGA.new_match(seats, 40 + seats, CABANGA.options({"rounds": rounds}))
    rng = random.Random(seats)
    for _ in range(20_000):  # far beyond 7 rounds: a round counter that stops counting must fail, not hang
        if state.over:
            break
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
    assert state.over
    started = [e for e in state.events if isinstance(e, RoundStarted)]
    scored = [e for e in state.events if isinstance(e, RoundScored)]
    assert [e.round for e in started] == [e.round for e in scored] == list(range(1, rounds + 1))
    first = started[0].starter
    assert [e.starter for e in started] == [(first + i) % seats for i in range(rounds)]
