"""Cabanga! rules, one or more tests per rule id of docs/rules.md (C1-C17, G1, G2), on hand-set positions.

Most tests arrange a position with :meth:`CabangaState.arranged`, make one or two decisions through the
public interface and compare the events, zones and views with what the rule says.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import random
import re
from collections.abc import Mapping, Sequence
from typing import Any
from unittest.mock import ANY

import pytest
from costs import until_over

from arena.games.base import (
    DecisionKind,
    Event,
    GameError,
    IllegalDecisionError,
    MatchOver,
    OptionError,
    ParseError,
    Pick,
    RoundScored,
    random_decision,
)
from arena.games.cabanga import (
    CABANGA,
    DECK,
    DEFAULT_SYMBOLS,
    PILE_NAMES,
    ROWS,
    START_CARDS,
    CabangaOptions,
    CabangaState,
    CabangaView,
    Card,
    Colour,
    Drew,
    PenaltyCards,
    PlayCard,
    Played,
    Reshuffled,
    RoundStarted,
    Side,
    Threw,
    ThrowsClosed,
)

# Every row has a number card on top of its right pile, so that cards placed nowhere lie under it:
# R 1|18, B 3|18, P 5|18, Y 7|18. The other four start cards lie under the number cards.
TOPS = ("G1", "R18", "G3", "B18", "G5", "P18", "G7", "Y18")
NAMES = ("alice", "bob", "carol", "dave", "erin", "frank")


def c(text: str) -> Card:
    return Card.parse(text)


def cards(text: str) -> tuple[Card, ...]:
    return tuple(Card.parse(t) for t in text.split())


def pair(text: str) -> tuple[Card, Card]:
    left, right = cards(text)
    return left, right


def new_match(seats: int, seed: int, options: CabangaOptions | None = None) -> CabangaState:
    state = CABANGA.new_match(seats, seed, options)
    assert isinstance(state, CabangaState)
    return state


def arrange(*hands: str, **kwargs: Any) -> CabangaState:
    """A position from hands written as text, one string per seat; TOPS unless ``tops`` is given."""
    kwargs.setdefault("tops", TOPS)
    return CabangaState.arranged([h.split() for h in hands], **kwargs)


def play(state: CabangaState, text: str) -> list[Event]:
    (prompt,) = state.pending()
    assert prompt.kind == "play"
    return without_throws_closed(state.apply({prompt.seat: (PlayCard.parse(text),)}))


def throw(state: CabangaState, answers: Mapping[int, str] | None = None) -> list[Event]:
    """Answer the THROW step: ``answers`` maps a seat to its cards as text; unnamed seats throw nothing."""
    answers = answers or {}
    prompts = state.pending()
    assert prompts and all(p.kind == "throw" for p in prompts)
    return without_throws_closed(state.apply({p.seat: p.parse(answers.get(p.seat, "-")) for p in prompts}))


def without_throws_closed(events: list[Event]) -> list[Event]:
    """The events less ThrowsClosed, which follows every play (tested on its own): the rest is the rule's."""
    return [e for e in events if not isinstance(e, ThrowsClosed)]


def snapshot(state: CabangaState) -> tuple[Any, ...]:
    return (
        state.zones(),
        [state.view(s) for s in range(state.seats)],
        state.pending(),
        [e.to_json() for e in state.events],
        state.totals,
    )


def of_kind(events: Sequence[Event], kind: type[Event]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def blue_hands(seats: int) -> list[str]:
    """Two blue cards per seat, all different."""
    return [f"B{2 * s + 1} B{2 * s + 2}" for s in range(seats)]


def playout(seats: int, seed: int, rng: random.Random, options: CabangaOptions | None = None) -> CabangaState:
    state = new_match(seats, seed, options)
    for _ in until_over(state):
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
    return state


# ---------------------------------------------------------------------------------------------- cards


def test_c1_c2_c3_deck_is_72_number_cards_and_8_start_cards() -> None:
    deck = CABANGA.deck(CABANGA.options())
    assert len(deck) == len(set(deck)) == 80
    assert ROWS == (Colour.RED, Colour.BLUE, Colour.PURPLE, Colour.YELLOW)
    for colour in ROWS:
        assert sorted(card.value for card in deck if card.colour is colour) == list(range(1, 19))
    assert sorted(card.value for card in deck if card.colour is Colour.GREY) == [1, 3, 5, 7, 12, 14, 16, 18]


def test_c2_card_text_round_trips_for_every_card() -> None:
    texts = [card.text for card in DECK]
    assert texts[:3] == ["R1", "R2", "R3"] and texts[-1] == "G18" and "Y18" in texts
    for card in DECK:
        assert Card.parse(card.text) is card
        assert CABANGA.parse_card(str(card)) is card
        assert eval(repr(card)) is card
        assert Card(card.colour, card.value) is card
        assert copy.deepcopy(card) is card
        assert pickle.loads(pickle.dumps(card)) is card


@pytest.mark.parametrize("junk", ["", "R0", "R19", "G2", "X7", "r7", "R 7", "R07", "7R", "R7:left", 7, None])
def test_c2_card_parse_rejects_junk(junk: Any) -> None:
    with pytest.raises(ParseError, match=re.escape(repr(junk))):
        Card.parse(junk)


def test_c2_cards_are_frozen_and_sort_by_row_then_value() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        c("R7").value = 8  # type: ignore[misc]
    with pytest.raises(GameError):
        Card(Colour.GREY, 2)
    shuffled = list(DECK)
    random.Random(1).shuffle(shuffled)
    assert sorted(shuffled) == list(DECK)
    assert c("R18") < c("B1") < c("P1") < c("Y1") < c("G1")
    assert c("Y3").sort_key == (3, 3)


def test_c8_play_text_round_trips_and_rejects_junk() -> None:
    for card in DECK[:72]:
        for side in Side:
            action = PlayCard(card, side)
            assert PlayCard.parse(action.text) is action
            assert eval(repr(action)) is action
            assert action.text == f"{card.text}:{side.value}"
    for junk in ["G1:left", "R7:up", "R7", "R7:Left", "", "R19:left"]:
        with pytest.raises(ParseError, match=repr(junk)):
            PlayCard.parse(junk)
    with pytest.raises(GameError):
        PlayCard(c("G5"), Side.LEFT)


# ---------------------------------------------------------------------------------------------- C4


def test_c4_default_symbol_table() -> None:
    assert DEFAULT_SYMBOLS == (3, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3)
    assert sum(DEFAULT_SYMBOLS) == 26
    assert CABANGA.options().symbols == DEFAULT_SYMBOLS


@pytest.mark.parametrize(
    "raw",
    [
        [1] * 18,
        tuple([3] * 18),
        ",".join(["2"] * 18),
        " 3, 2,2,1,1,1,1,1,1,1,1,1,1,1,1,2,2,3 ",
        ["1", 2, 3] * 6,
    ],
)
def test_c4_symbols_option_forms(raw: Any) -> None:
    symbols = CABANGA.options({"symbols": raw}).symbols
    expected = [int(x) for x in raw.split(",")] if isinstance(raw, str) else [int(x) for x in raw]
    assert symbols == tuple(expected)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ([1] * 17, "[1, 1"),
        ([1] * 19, "[1, 1"),
        ([1] * 17 + [0], "0"),
        ([1] * 17 + [4], "4"),
        ([1] * 17 + [True], "True"),
        (",".join(["1"] * 17 + ["x"]), "'x'"),
        ("1,2,3", "'1,2,3'"),
        (5, "5"),
    ],
)
def test_c4_bad_symbols_option(raw: Any, shown: str) -> None:
    with pytest.raises(OptionError, match="symbols") as info:
        CABANGA.options({"symbols": raw})
    assert shown in str(info.value)


# ------------------------------------------------------------------------------------ C5, C6, C7: set-up


@pytest.mark.parametrize("seats", [3, 4, 5, 6])
def test_c5_c6_round_set_up(seats: int) -> None:
    state = new_match(seats, 7)
    zones = state.zones()
    for seat in range(seats):
        assert len(zones[f"hand {seat}"]) == 8
    assert len(zones["penalty pile"]) == 72 - 8 * seats
    assert zones["set aside"] == ()
    piles = [zones[name] for name in PILE_NAMES]
    assert all(len(pile) == 1 for pile in piles)
    assert sorted(pile[0] for pile in piles) == sorted(DECK[72:])
    (started,) = state.events
    assert isinstance(started, RoundStarted)
    assert started.round == 1 and started.hand_size == 8
    assert started.tops == tuple(pile[0] for pile in piles) == state.view(0).tops


def test_c5_c6_start_cards_and_hands_are_shuffled() -> None:
    tops = {new_match(4, seed).view(0).tops for seed in range(10)}
    hands = {new_match(4, seed).view(0).hand for seed in range(10)}
    assert len(tops) == 10 and len(hands) == 10


@pytest.mark.parametrize("seats", [2, 7, 0])
def test_c6_three_to_six_seats(seats: int) -> None:
    with pytest.raises(OptionError, match=rf"\b{seats}\b"):
        CABANGA.new_match(seats, 1)
    with pytest.raises(OptionError, match=rf"\b{seats}\b"):
        CabangaState.arranged([["R1"]] * seats)


def test_c7_first_starter_is_drawn_from_the_seed() -> None:
    starters = []
    for seed in range(40):
        state = new_match(5, seed)
        (started,) = state.events
        assert isinstance(started, RoundStarted)
        assert started.starter == random.Random(seed).randrange(5)
        assert state.pending()[0].seat == state.view(0).active == started.starter
        starters.append(started.starter)
    assert set(starters) == set(range(5))


@pytest.mark.parametrize(("seats", "starter", "active", "expected"), [(3, 2, 2, 0), (4, 1, 3, 2), (6, 5, 0, 0)])
def test_c7_next_round_starts_one_seat_clockwise(seats: int, starter: int, active: int, expected: int) -> None:
    hands = blue_hands(seats)
    hands[active] = "R9"
    state = arrange(*hands, starter=starter, active=active)
    events = play(state, "R9:left")
    assert isinstance(events[-2], RoundScored)
    started = events[-1]
    assert isinstance(started, RoundStarted)
    assert (started.round, started.starter) == (2, expected)
    assert state.pending()[0].seat == expected


@pytest.mark.parametrize(("seats", "active"), [(3, 0), (3, 2), (5, 4), (6, 3)])
def test_c7_play_goes_clockwise(seats: int, active: int) -> None:
    hands = blue_hands(seats)
    state = arrange(*hands, active=active)
    play(state, f"{hands[active].split()[0]}:left")
    if state.pending()[0].kind == "throw":
        assert state.view(0).active == active  # the turn is not over before the throws
        throw(state)
    assert state.pending()[0].seat == (active + 1) % seats
    assert state.view(0).active == (active + 1) % seats


# ---------------------------------------------------------------------------------------------- C8, C9


def test_c8_play_choices_are_the_hand_in_card_order_left_then_right() -> None:
    state = arrange("Y3 R7 B2", "P1 P2", "P3 P4")
    (prompt,) = state.pending()
    assert (prompt.seat, prompt.kind, prompt.pick) == (0, "play", Pick.ONE)
    assert prompt.choice_texts() == "R7:left R7:right B2:left B2:right Y3:left Y3:right"
    assert prompt.default == (PlayCard.parse("R7:left"),)  # the documented default: lowest card, left pile


@pytest.mark.parametrize(
    ("move", "pile", "row_tops"),
    [("R7:left", "R left", "R7 R18"), ("R7:right", "R right", "G1 R7"), ("Y17:left", "Y left", "Y17 Y18")],
)
def test_c8_card_goes_onto_the_chosen_pile_whatever_the_values(move: str, pile: str, row_tops: str) -> None:
    state = arrange("R7 Y17", "B1 B2", "B3 B4")
    before = state.zones()[pile]
    (played, *_) = play(state, move)
    assert state.zones()[pile] == (*before, PlayCard.parse(move).card)
    assert isinstance(played, Played) and played.row_tops == cards(row_tops)
    assert state.zones()["hand 0"] == cards("Y17" if move.startswith("R") else "R7")


@pytest.mark.parametrize(
    ("previous", "move", "penalty"),
    [
        (None, "R7:left", False),
        (Colour.RED, "R7:left", True),
        (Colour.BLUE, "R7:right", False),
        (Colour.YELLOW, "Y2:left", True),
        (Colour.YELLOW, "R7:left", False),
    ],
)
def test_c9_same_colour_as_previous_play_owes_one(previous: Colour | None, move: str, penalty: bool) -> None:
    state = arrange("R7 Y2 B9", "B1 B2", "P3 P4", previous_colour=previous, penalty=None)
    events = play(state, move)
    played = events[0]
    assert isinstance(played, Played) and played.penalty is penalty
    assert of_kind(events, Drew) == ([Drew(0, 1, 1)] if penalty else [])
    assert len(state.zones()["hand 0"]) == (3 if penalty else 2)


def test_c9_compares_with_the_previous_turn_and_thrown_cards_do_not_count() -> None:
    state = arrange("R9 B5", "R5 B6 B7", "B2 B3 P1")
    play(state, "R9:right")  # R 1|9: bob may throw R5
    assert state.view(1).previous_colour is None  # still the first turn of the round
    throw(state, {1: "R5"})
    assert state.view(1).previous_colour is Colour.RED
    assert not of_kind(play(state, "B6:left"), Drew)  # after red: no penalty
    (played, *_) = play(state, "B2:left")  # B 2|18, nobody holds a blue card between: no throw step
    assert isinstance(played, Played) and played.penalty


def test_c9_no_penalty_on_the_first_turn_of_a_round() -> None:
    checked = 0
    for seed in range(30):
        state = arrange("R9", "B1 B2", "P1 P2", seed=seed)
        events = play(state, "R9:left")  # the round ends; round 2 is dealt from the seed
        assert isinstance(events[-1], RoundStarted)
        assert state.view(0).previous_colour is None
        (prompt,) = state.pending()
        red = [a for a in prompt.choices if isinstance(a, PlayCard) and a.card.colour is Colour.RED]
        if red:  # play the colour that ended the last round
            checked += 1
            (played, *_) = state.apply({prompt.seat: (red[0],)})
            assert isinstance(played, Played) and not played.penalty
    assert checked >= 10


# ---------------------------------------------------------------------------------------- C10, C11: throws

THROW_HANDS = ("R9 R4 B9 Y2", "R2 R8 B5 Y17", "R10 Y4 P3", "R1 R5 B3")


@pytest.mark.parametrize(
    ("move", "candidates"),
    [
        ("R9:right", {1: "R2 R8", 3: "R5"}),  # R 1|9: R1 and R9 are no candidates, R10 is outside
        ("R9:left", {1: "R8", 3: "R5"}),  # R 9|3: R2 is not above 3
        ("R4:right", {1: "R2"}),  # R 1|4
        ("B9:right", {}),  # B 5|9: bob's B5 is on the edge, nobody holds B6..B8
        ("Y2:left", {1: "Y17", 2: "Y4"}),  # Y 2|18
    ],
)
def test_c10_throw_strictly_between_the_tops_of_the_row_just_played(move: str, candidates: dict[int, str]) -> None:
    # tops: R 1|3, B 5|7, P 12|14, Y 16|18; bob's Y17 lies in the yellow gap but only the row played counts
    state = arrange(*THROW_HANDS, tops=START_CARDS)
    events = play(state, move)
    prompts = state.pending()
    assert {p.seat: p.choice_texts() for p in prompts if p.kind == "throw"} == candidates
    for prompt in prompts:
        if prompt.kind == "throw":
            assert prompt.pick is Pick.SUBSET and prompt.default == ()
    if not candidates:  # no throw step: the turn ended within the same decision
        assert [p.seat for p in prompts] == [1] and prompts[0].kind == "play"
        assert len(events) == 1


@pytest.mark.parametrize(
    ("move", "throw_step"),
    [("R8:right", False), ("R7:right", False), ("R13:left", False), ("R6:left", True), ("R9:right", True)],
)
def test_c10_tops_one_apart_or_equal_leave_nothing_to_throw(move: str, throw_step: bool) -> None:
    # R 7|14 before the play; the other seats hold every other red card.
    mine = move.split(":")[0]
    reds = [card.text for card in DECK[:18] if card.text != mine]
    tops = ("G7", "G14", "G1", "G3", "G5", "G12", "G16", "G18")
    state = arrange(f"{mine} B1", " ".join(reds[:9]), " ".join(reds[9:]), tops=tops)
    play(state, move)
    kinds = {p.kind for p in state.pending()}
    assert kinds == {"throw" if throw_step else "play"}


def test_c11_throw_is_asked_of_every_seat_at_once_and_sealed() -> None:
    state = arrange(*THROW_HANDS, tops=START_CARDS)
    events = play(state, "Y2:left")
    assert events == [Played(0, c("Y2"), Side.LEFT, False, pair("Y2 G18"))]  # nothing about throws yet
    assert [p.seat for p in state.pending()] == [1, 2]
    view = state.view(2)
    assert (view.step, view.active, view.throw_row, view.throw_tops) == (
        "throw",
        0,
        Colour.YELLOW,
        cards("Y2 G18"),
    )
    events = throw(state, {2: "Y4", 1: "Y17"})
    assert events[:2] == [Threw(1, cards("Y17")), Threw(2, cards("Y4"))]  # together, in seat order


def test_c11_a_seat_that_does_not_answer_throws_nothing() -> None:
    state = arrange(*THROW_HANDS, tops=START_CARDS)
    play(state, "Y2:left")
    events = state.apply({p.seat: p.default for p in state.pending()})
    assert events == [ThrowsClosed(0)]
    assert state.pending()[0].seat == 1 and len(state.zones()["hand 1"]) == 4


def test_c12_thrown_cards_are_set_aside_and_leave_the_tops() -> None:
    state = arrange(*THROW_HANDS, tops=START_CARDS)
    play(state, "R9:right")
    tops = state.view(0).tops
    events = throw(state, {1: "R8 R2", 3: "R5"})
    assert events == [Threw(1, cards("R2 R8")), Threw(3, cards("R5")), Drew(0, 3, 3)]
    assert state.zones()["set aside"] == cards("R2 R8 R5")
    assert state.view(2).tops == tops
    assert state.zones()["hand 1"] == cards("B5 Y17") and state.zones()["hand 3"] == cards("R1 B3")
    # the penalty pile holds the cards placed nowhere, lowest on top: R3, R6, R7 come first
    assert state.zones()["hand 0"] == cards("R3 R4 R6 R7 B9 Y2")


def test_c13_the_set_aside_cards_are_reshuffled_when_the_penalty_pile_runs_out() -> None:
    state = arrange(
        "R9 B9",
        "R5 R6 B1",
        "R2 P1",
        "P2 P3",
        previous_colour=Colour.RED,
        penalty=["Y1", "Y2", "Y3"],
        set_aside=["B7"],
    )
    play(state, "R9:right")  # R 1|9, and red again: owes one
    events = throw(state, {1: "R5 R6", 2: "R2"})
    assert events == [Threw(1, cards("R5 R6")), Threw(2, cards("R2")), Reshuffled(4), Drew(0, 4, 4)]
    hand = set(state.zones()["hand 0"])
    assert len(hand) == 5 and set(cards("B9 Y1 Y2 Y3")) <= hand
    new_pile = set(state.zones()["penalty pile"])
    assert len(new_pile) == 3 and new_pile | (hand - set(cards("B9 Y1 Y2 Y3"))) == set(cards("B7 R5 R6 R2"))
    assert state.zones()["set aside"] == ()
    assert state.view(3).penalty_size == 3 and state.view(3).set_aside_size == 0


@pytest.mark.parametrize(
    ("thrown", "expected", "hand"),
    [
        ("-", [Drew(0, 0, 1)], "B9"),
        ("R5", [Threw(1, cards("R5")), Reshuffled(1), Drew(0, 1, 2)], "R5 B9"),
    ],
)
def test_c13_draws_are_skipped_when_both_piles_are_empty(thrown: str, expected: list[Event], hand: str) -> None:
    state = arrange("R9 B9", "R5 B1", "P2 P3", previous_colour=Colour.RED, penalty=[], set_aside=[])
    play(state, "R9:right")
    assert throw(state, {1: thrown}) == expected
    assert state.zones()["hand 0"] == cards(hand)
    assert state.zones()["penalty pile"] == state.zones()["set aside"] == ()


def test_c14_a_thrower_who_empties_their_hand_ends_the_round_at_the_end_of_the_turn() -> None:
    state = arrange("R9 B2", "R5", "P7 Y9")
    play(state, "R9:right")
    events = throw(state, {1: "R5"})
    # alice still draws R1 (the top of the penalty pile) before the round ends: B2 + R1 = 2 + 3
    assert events[:3] == [Threw(1, cards("R5")), Drew(0, 1, 1), RoundScored(1, (5, 0, 2), (5, 0, 2))]
    assert isinstance(events[3], RoundStarted) and (events[3].round, events[3].starter) == (2, 1)
    assert len(events) == 4


def test_c14_the_round_goes_on_while_every_hand_holds_a_card() -> None:
    state = arrange("R9 B2", "R5", "P7 Y9")
    play(state, "R9:right")
    assert throw(state, {1: "-"}) == []
    assert state.pending()[0].seat == 1 and state.view(1).round == 1


def test_c14_the_active_player_draws_even_after_playing_their_last_card() -> None:
    state = arrange("R9", "R5 B3", "R6 P7", previous_colour=Colour.RED)
    events = play(state, "R9:right")
    assert [p.seat for p in state.pending()] == [1, 2]  # the empty hand ends nothing before the throws
    events += throw(state, {1: "R5"})
    assert events == [
        Played(0, c("R9"), Side.RIGHT, True, pair("G1 R9")),
        Threw(1, cards("R5")),
        Drew(0, 2, 2),
    ]
    assert state.zones()["hand 0"] == cards("R1 R2")  # so the round goes on
    assert state.pending()[0].seat == 1


def test_c14_the_round_ends_when_the_active_player_has_nothing_left_to_draw() -> None:
    state = arrange("R9", "R5 B3", "R6 P7", previous_colour=Colour.RED, penalty=[])
    play(state, "R9:right")
    assert throw(state)[:2] == [Drew(0, 0, 1), RoundScored(1, (0, 3, 2), (0, 3, 2))]  # R5 B3: 1 + 2


# ---------------------------------------------------------------------------------- C15, C16, C17: scoring


def end_round(**kwargs: Any) -> list[Event]:
    """The round of the C14 test ends: alice holds B2 R1, bob nothing, carol P7 Y9."""
    state = arrange("R9 B2", "R5", "P7 Y9", **kwargs)
    play(state, "R9:right")
    return throw(state, {1: "R5"})


@pytest.mark.parametrize(
    ("symbols", "points"),
    [
        (None, (5, 0, 2)),
        ([1] * 18, (2, 0, 2)),
        ("3,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", (4, 0, 2)),
        ([2, 1, 1, 1, 1, 1, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1], (3, 0, 5)),
    ],
)
def test_c15_hands_score_their_penalty_symbols(symbols: Any, points: tuple[int, ...]) -> None:
    options = CABANGA.options({} if symbols is None else {"symbols": symbols})
    events = end_round(options=options, totals=[1, 2, 3])
    scored = of_kind(events, RoundScored)
    assert scored == [RoundScored(1, points, (1 + points[0], 2 + points[1], 3 + points[2]))]


@pytest.mark.parametrize(
    ("totals", "target", "over"),
    [
        ((12, 0, 0), 18, False),
        ((13, 0, 0), 18, True),
        ((0, 0, 16), 18, True),
        ((0, 17, 0), 18, False),
        ((20, 0, 0), 30, False),
        ((25, 0, 0), 30, True),
    ],
)
def test_c16_the_match_ends_after_a_round_in_which_a_total_reaches_the_target(
    totals: tuple[int, ...], target: int, over: bool
) -> None:
    events = end_round(totals=totals, options=CABANGA.options({"target": target}))
    assert isinstance(events[-1], MatchOver if over else RoundStarted)


@pytest.mark.parametrize(("round_", "totals", "over"), [(1, (40, 0, 0), False), (2, (0, 0, 0), True)])
def test_c16_rounds_option_plays_a_fixed_number_of_rounds(round_: int, totals: tuple[int, ...], over: bool) -> None:
    events = end_round(round=round_, totals=totals, options=CABANGA.options({"rounds": 2}))
    assert isinstance(events[-1], MatchOver if over else RoundStarted)


def test_c16_whole_matches_end_at_the_target_or_after_the_rounds() -> None:
    rng = random.Random(16)
    for seed in range(6):
        state = playout(4, seed, rng, CABANGA.options({"rounds": 3}))
        assert len(of_kind(state.events, RoundScored)) == 3
        state = playout(4, seed, rng)
        scored = of_kind(state.events, RoundScored)
        assert all(max(s.totals) < 18 for s in scored[:-1]) and max(scored[-1].totals) >= 18


@pytest.mark.parametrize(
    ("totals", "options", "places"),
    [
        ((13, 7, 5), {}, (3, 1, 1)),  # (18, 7, 7): a shared win
        ((10, 14, 13), {"target": 15}, (2, 1, 2)),  # (15, 14, 15)
        ((0, 5, 3), {"rounds": 1}, (1, 1, 1)),  # (5, 5, 5)
    ],
)
def test_c17_lowest_total_wins_and_equal_totals_share_the_place(
    totals: tuple[int, ...], options: dict[str, Any], places: tuple[int, ...]
) -> None:
    events = end_round(totals=totals, options=CABANGA.options(options))
    over = events[-1]
    assert isinstance(over, MatchOver) and over.places == places
    state = arrange("R9 B2", "R5", "P7 Y9", totals=totals, options=CABANGA.options(options))
    play(state, "R9:right")
    throw(state, {1: "R5"})
    assert state.over and state.result is not None and state.pending() == ()
    assert state.result.places == places and state.view(0).step is None
    with pytest.raises(IllegalDecisionError):
        state.apply({})


# ------------------------------------------------------------------------------- illegal decisions, options


def act(text: str) -> PlayCard | Card:
    return PlayCard.parse(text) if ":" in text else Card.parse(text)


ILLEGAL_PLAYS: dict[str, dict[int, Any]] = {
    "card not in hand": {0: ("R5:left",)},
    "wrong seat": {1: ("R5:left",)},
    "missing seat": {},
    "extra seat": {0: ("R9:left",), 1: ()},
    "two plays": {0: ("R9:left", "B2:left")},
    "pass": {0: ()},
    "a card, not a play": {0: ("R9",)},
}
ILLEGAL_THROWS: dict[str, dict[int, Any]] = {
    "duplicate card": {1: ("R5", "R5"), 2: ()},
    "card of another row": {1: ("B3",), 2: ()},
    "card outside the gap": {1: (), 2: ("R10",)},
    "another seat's card": {1: ("R4",), 2: ()},
    "missing seat": {1: ()},
    "seat not prompted": {1: (), 2: (), 3: ()},
    "the active seat": {0: (), 1: (), 2: ()},
    "a play, not a throw": {1: ("R5:left",), 2: ()},
}


def illegal_position(step: str) -> CabangaState:
    state = arrange("R9 B2", "R5 R7 B3", "R4 R10 Y4", "P7 Y9", penalty=None, seed=3)
    if step == "throw":
        play(state, "R9:right")  # R 1|9: bob may throw R5 R7, carol R4
    return state


@pytest.mark.parametrize(
    ("step", "decisions"),
    [("play", d) for d in ILLEGAL_PLAYS.values()] + [("throw", d) for d in ILLEGAL_THROWS.values()],
    ids=[f"c8-{k}" for k in ILLEGAL_PLAYS] + [f"c10-{k}" for k in ILLEGAL_THROWS],
)
def test_c8_c10_illegal_decisions_raise_and_change_nothing(step: str, decisions: dict[int, Any]) -> None:
    state = illegal_position(step)
    before = snapshot(state)
    decision = {seat: tuple(act(t) for t in texts) for seat, texts in decisions.items()}
    with pytest.raises(IllegalDecisionError) as info:
        state.apply(decision)
    assert isinstance(info.value, ValueError)
    assert snapshot(state) == before
    # the state goes on exactly as one that never saw the illegal decision
    fresh = illegal_position(step)
    legal = {p.seat: p.choices[-1:] for p in state.pending()}
    assert state.apply(legal) == fresh.apply(legal)
    assert snapshot(state) == snapshot(fresh)


def test_c10_a_throw_that_is_not_a_tuple_is_illegal() -> None:
    state = illegal_position("throw")
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError):
        state.apply({1: [c("R5")], 2: ()})  # type: ignore[dict-item]
    assert snapshot(state) == before


def test_c16_options_defaults_text_values_and_round_trip() -> None:
    assert CABANGA.options() == CABANGA.options({}) == CabangaOptions(18, None, DEFAULT_SYMBOLS)
    options = CABANGA.options({"target": " 30", "rounds": "3", "symbols": "1," * 17 + "2"})
    assert (options.target, options.rounds, options.symbols) == (30, 3, (1,) * 17 + (2,))
    assert CABANGA.options(options.to_json()) == options
    assert json.loads(json.dumps(options.to_json())) == options.to_json()
    assert CABANGA.options({"rounds": None}).rounds is None


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ({"target": 0}, "0"),
        ({"target": -3}, "-3"),
        ({"target": "x"}, "'x'"),
        ({"target": True}, "True"),
        ({"target": 2.5}, "2.5"),
        ({"rounds": 0}, "0"),
        ({"rounds": "many"}, "'many'"),
        ({"turns": 3}, "'turns'"),
    ],
)
def test_c16_bad_options_raise_option_error_naming_option_and_value(raw: dict[str, Any], shown: str) -> None:
    with pytest.raises(OptionError) as info:
        CABANGA.options(raw)
    assert shown in str(info.value) and next(iter(raw)) in str(info.value)


def test_c16_new_match_rejects_foreign_options() -> None:
    with pytest.raises(OptionError, match="CabangaOptions"):
        CABANGA.new_match(4, 1, {"target": 5})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hands": ["R5 B1", "R5", "P1"]}, "R5 is placed twice"),
        ({"hands": ["R5 B1", "P1", "P2"], "penalty": ["B1"]}, "B1 is placed twice"),
        ({"hands": ["R5 G12", "P1", "P2"]}, "start card G12"),
        ({"hands": ["R5", "P1", "P2"], "set_aside": ["G12"]}, "start card G12"),
        ({"hands": ["R5", "", "P2"]}, "hand 1 is empty"),
        ({"hands": ["R5", "P1", "P2"], "tops": ["B2", *TOPS[1:]]}, "B2 cannot be on top of the R left"),
        ({"hands": ["R5", "P1", "P2"], "tops": TOPS[:7]}, "tops must be 8 cards"),
        ({"hands": ["R5", "P1", "P2"], "tops": START_CARDS, "penalty": []}, "R1 is placed nowhere"),
        ({"hands": ["R5", "P1", "P2"], "active": 3}, "active"),
        ({"hands": ["R5", "P1", "P2"], "totals": [0, 18, 0]}, "target"),
        ({"hands": ["R5", "P1", "P2"], "totals": [0, 0]}, "totals"),
        ({"hands": ["R5", "P1", "P2"], "previous_colour": Colour.GREY}, "previous_colour"),
        ({"hands": ["R5", "P1", "P2"], "round": 3, "options": CABANGA.options({"rounds": 2})}, "round 3"),
        ({"hands": ["R5", "P1", "X2"]}, "'X2'"),
    ],
)
def test_c2_c3_arranged_rejects_impossible_positions(kwargs: dict[str, Any], message: str) -> None:
    kwargs = dict(kwargs)  # the parameter is shared between runs of the test in one process (mutmut's)
    hands = kwargs.pop("hands")
    with pytest.raises(GameError, match=message):
        arrange(*hands, **kwargs)


# ---------------------------------------------------------------------------------------------- G1, G2


def test_c2_c3_every_card_is_in_exactly_one_zone_at_every_step() -> None:
    rng = random.Random(2)
    for seats in (3, 6):
        state = new_match(seats, seats)
        for _ in until_over(state):
            zones = state.zones()
            assert sorted(card for pile in zones.values() for card in pile) == list(DECK)
            assert set(zones) == {f"hand {s}" for s in range(seats)} | {"penalty pile", "set aside", *PILE_NAMES}
            assert all(zones[name][0].colour is Colour.GREY for name in PILE_NAMES)
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


def test_g1_same_seed_and_decisions_give_identical_events() -> None:
    # six seats: the penalty pile runs out, so the reshuffles are covered too
    runs = [playout(6, seed, random.Random(99)) for seed in (5, 5, 6)]
    first, again, other = ([e.to_json() for e in run.events] for run in runs)
    assert {"event": "reshuffled", "count": ANY} in first
    assert first == again
    assert first != other


def test_g1_nothing_random_comes_from_outside_the_match_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = [e.to_json() for e in playout(6, 11, random.Random(1)).events]
    assert {"event": "reshuffled", "count": ANY} in expected

    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the shared random generator was used")

    for name in ("random", "shuffle", "randrange", "randint", "choice", "sample", "getrandbits"):
        monkeypatch.setattr(random, name, forbidden)
    assert [e.to_json() for e in playout(6, 11, random.Random(1)).events] == expected


def test_g2_view_hides_other_hands_and_pile_order() -> None:
    a = arrange("R9 B2", "R5 P1 P2", "R6 Y3 Y4", "B7 B8", penalty=["Y1", "Y2", "B1"])
    b = arrange("R9 B2", "R6 Y3 Y4", "R5 P1 P2", "B8 B7", penalty=["B1", "Y2", "Y1"])
    assert a.view(0) == b.view(0) and a.view(3) == b.view(3)
    assert a.view(1) != b.view(1)
    play(a, "R9:right")
    play(b, "R9:right")
    assert a.view(0) == b.view(0) and a.view(0).to_json() == b.view(0).to_json()
    view = a.view(1)
    assert isinstance(view, CabangaView) and view.hand == cards("R5 P1 P2")
    assert view.hand_sizes == (1, 3, 3, 2) and view.penalty_size == 3 and view.set_aside_size == 0


def test_g2_view_is_only_for_seats_at_the_table_and_shows_no_seed() -> None:
    state = new_match(4, 123_456_789)
    for seat in (-1, 4, "0", None):
        with pytest.raises(GameError):
            state.view(seat)  # type: ignore[arg-type]
    text = json.dumps(state.view(2).to_json())
    assert "123456789" not in text and "seed" not in text
    assert set(state.view(2).to_json()) == {
        "seat",
        "round",
        "active",
        "step",
        "hand",
        "tops",
        "previous_colour",
        "throw_row",
        "throw_tops",
        "hand_sizes",
        "penalty_size",
        "set_aside_size",
        "totals",
    }


class Public:
    """What anyone at the table knows from the public events alone."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.totals = [0] * seats
        self.active = -1

    def feed(self, event: Event) -> None:
        if isinstance(event, RoundStarted):
            self.round, self.tops = event.round, list(event.tops)
            self.sizes = [event.hand_size] * self.seats
            self.penalty, self.aside = 72 - event.hand_size * self.seats, 0
            self.last: Colour | None = None
            self.before: Colour | None = None
        elif isinstance(event, Played):
            self.tops[2 * ROWS.index(event.card.colour) + (event.side is Side.RIGHT)] = event.card
            self.sizes[event.seat] -= 1
            self.before, self.last, self.active = self.last, event.card.colour, event.seat
        elif isinstance(event, Threw):
            self.sizes[event.seat] -= len(event.cards)
            self.aside += len(event.cards)
        elif isinstance(event, Reshuffled):
            # the draws before the reshuffle emptied the penalty pile; Drew counts them all afterwards
            assert self.aside == event.count
            self.penalty, self.aside = self.penalty + event.count, 0
        elif isinstance(event, Drew):
            self.sizes[event.seat] += event.count
            self.penalty -= event.count
        elif isinstance(event, RoundScored):
            self.totals = list(event.totals)

    def check(self, view: CabangaView, kind: DecisionKind, choices: Sequence[Any]) -> None:
        assert (view.round, list(view.tops), list(view.hand_sizes)) == (self.round, self.tops, self.sizes)
        assert (view.penalty_size, view.set_aside_size) == (self.penalty, self.aside)
        assert list(view.totals) == self.totals and len(view.hand) == self.sizes[view.seat]
        assert view.step is kind
        if kind == "play":
            assert view.active == view.seat and view.previous_colour is self.last
            assert view.throw_row is None and view.throw_tops is None
            assert tuple(choices) == tuple(PlayCard(card, side) for card in view.hand for side in Side)
        else:
            assert view.active == self.active and view.previous_colour is self.before
            assert self.last is not None and view.throw_row is self.last
            row = ROWS.index(self.last)
            assert view.throw_tops == (self.tops[2 * row], self.tops[2 * row + 1])
            low, high = sorted(top.value for top in view.throw_tops)
            assert tuple(choices) == tuple(
                card for card in view.hand if card.colour is self.last and low < card.value < high
            )


def test_g2_every_view_is_rebuilt_from_the_hand_and_the_public_events() -> None:
    rng = random.Random(22)
    for seats in (3, 4, 5, 6):
        for seed in range(3):
            state = new_match(seats, seed)
            public = Public(seats)
            seen = 0
            for _ in until_over(state):
                for event in state.events[seen:]:
                    public.feed(event)
                seen = len(state.events)
                for prompt in state.pending():
                    public.check(state.view(prompt.seat), prompt.kind, prompt.choices)
                state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


def test_g2_events_are_public_text() -> None:
    state = arrange("R9 B2", "R5 R6", "P7 Y9", previous_colour=Colour.RED, penalty=["Y1"], set_aside=["B7"])
    events = play(state, "R9:right") + throw(state, {1: "R5"})
    assert [e.to_json() for e in events] == [
        {"event": "played", "seat": 0, "card": "R9", "side": "right", "penalty": True, "row_tops": ["G1", "R9"]},
        {"event": "threw", "seat": 1, "cards": ["R5"]},
        {"event": "reshuffled", "count": 2},
        {"event": "drew", "seat": 0, "count": 2, "owed": 2},
    ]
    assert [e.describe(NAMES) for e in events] == [
        "alice plays R9 on the right pile (R 1|9), owes 1 for playing R again",
        "bob throws R5 (Cabanga!)",
        "the penalty pile is empty: 2 set-aside cards are shuffled into a new one",
        "alice draws 2 penalty cards",
    ]
    assert Drew(2, 0, 1).describe(NAMES) == "carol draws 0 of 1 owed penalty cards; no cards are left"
    started = RoundStarted(2, 1, START_CARDS, 8)
    assert started.to_json() == {
        "event": "round_started",
        "round": 2,
        "starter": 1,
        "tops": ["G1", "G3", "G5", "G7", "G12", "G14", "G16", "G18"],
        "hand_size": 8,
    }
    assert started.describe(NAMES) == "round 2: 8 cards each, bob starts; rows R 1|3, B 5|7, P 12|14, Y 16|18"
    for event in new_match(3, 1).events:
        json.dumps(event.to_json())


# ---------------------------------------------------------------------- events for strong bots (issue 11)


def test_c11_throws_closed_follows_every_play_whether_or_not_a_seat_was_asked() -> None:
    rng = random.Random(11)
    state = new_match(5, 3)
    plays = closed = 0
    for _ in until_over(state):
        before = len(state.events)
        kinds = {p.kind for p in state.pending()}
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
        new = state.events[before:]
        if "play" in kinds:
            plays += 1
        closed += sum(isinstance(e, ThrowsClosed) for e in new)
        if "throw" in kinds or not any(p.kind == "throw" for p in state.pending()):
            # the turn's throws are over: exactly one ThrowsClosed, after the play and every throw, before draws
            names = [type(e).__name__ for e in new]
            assert names.count("ThrowsClosed") == 1, names
            at = names.index("ThrowsClosed")
            assert "Threw" not in names[at:] and "Drew" not in names[:at]
    assert plays == closed > 50


def test_c13_the_drawing_seat_alone_learns_its_penalty_cards() -> None:
    state = arrange("R9 B9", "R5 R6 B1", "R2 P1", "P2 P3", previous_colour=Colour.RED,
                    penalty=["Y1", "Y2", "Y3"], set_aside=["B7"])
    play(state, "R9:right")
    throw(state, {1: "R5 R6", 2: "R2"})
    (position, event), = state.private_events(0)
    assert isinstance(event, PenaltyCards) and event.seat == 0 and len(event.cards) == 4
    assert set(cards("Y1 Y2 Y3")) <= set(event.cards) and set(event.cards) <= set(state.zones()["hand 0"])
    assert isinstance(state.events[position - 1], Drew)  # right after the public count
    assert all(not state.private_events(s) for s in (1, 2, 3))
    assert all(not isinstance(e, PenaltyCards) for e in state.events)
    assert event.to_json() == {"event": "penalty_cards", "seat": 0, "cards": [c.text for c in event.cards]}
