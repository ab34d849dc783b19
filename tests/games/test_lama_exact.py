"""L.A.M.A. exact-behaviour tests (docs/rules.md L1-L12, G1, G2) beside tests/games/test_lama.py.

They pin what the rule tests left loose, each found by mutation testing (scripts/mutation.py lama,
docs/mutation.md): the card objects and their order, the prompt table that every turn looks up,
the choices under option ``climb=any``, copies of a match for searches, the exact messages of refused
arrangements and options.

A note on the tables built when the module is imported (the seven cards, the two playable values per top, the
table of prompts): mutmut tests each mutant in a process forked from one that imported the module already, so
a mutant of the code that builds them is only seen by a test that builds them again. The tests below do, and
check what they build against the rules as docs/rules.md states them, not against the tables in use.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import FrozenInstanceError
from typing import Any

import pytest
from costs import until_over

from arena.games.base import (
    Decision,
    GameError,
    MatchOver,
    OptionError,
    Pick,
    Prompt,
    RoundScored,
    random_decision,
)
from arena.games.lama import (
    CARDS,
    DECK,
    DRAW,
    LAMA,
    LLAMA,
    QUIT,
    Card,
    Drew,
    DrewCard,
    LamaOptions,
    LamaState,
    Played,
    Quit,
    RoundStarted,
    parse_action,
    rules,
)

NAMES = ["ann", "bob", "cat", "dan", "eve", "fay"]

# L4 as docs/rules.md states it: the values that may be played on each top, the same one or exactly one higher,
# after a 6 a 6 or a llama, after a llama a llama or a 1.
FOLLOWS = {
    "L1": ("L1", "L2"),
    "L2": ("L2", "L3"),
    "L3": ("L3", "L4"),
    "L4": ("L4", "L5"),
    "L5": ("L5", "L6"),
    "L6": ("L6", "LL"),
    "LL": ("L1", "LL"),
}


def c(text: str) -> Card:
    return Card.parse(text)


def arrange(hands: list[str], top: str, *, draw: str | None = None, **kwargs: Any) -> LamaState:
    """A state with ``hands``, ``top`` face up and ``draw`` (top first; ``None``: every card left over) as the
    draw pile; the cards left over when ``draw`` is given lie under ``top``."""
    if draw is None:
        return LamaState.arranged(hands=hands, discard=[top], **kwargs)
    rest = Counter(DECK)
    rest.subtract(c(w) for text in [*hands, top, draw] for w in text.split())
    under = [card for card in CARDS for _ in range(rest[card])]
    return LamaState.arranged(hands=hands, discard=[*under, c(top)], draw=draw, **kwargs)


def texts(actions: Any) -> list[str]:
    return [a.text for a in actions]


def act(state: LamaState, text: str) -> list[Any]:
    (prompt,) = state.pending()
    return state.apply({prompt.seat: (parse_action(text),)})


CLIMB_ANY = LamaOptions(climb="any")


# ---------------------------------------------------------------------------------------------------- L1


@pytest.mark.parametrize("value", range(1, 8))
def test_l1_l9_a_card_built_afresh_holds_its_value_text_and_points(value: int) -> None:
    """L1 (values 1..6 and the llama, written L1..L6 and LL) and L9 (a card scores its face value, a llama 10)."""
    text = "LL" if value == 7 else f"L{value}"
    points = 10 if value == 7 else value
    for card in (Card._make(value), CARDS[value - 1], Card(value)):
        assert isinstance(card, Card)
        assert (card.value, card.text, card.points, str(card)) == (value, text, points, text)
    assert Card(value) is Card.parse(text) is CARDS[value - 1]


def test_l1_cards_compare_strictly_by_value() -> None:
    three, four = c("L3"), c("L4")
    assert not three < three and three <= three and not three > three and three >= three
    assert three < four and three <= four and not three > four and not three >= four
    assert four > three and four >= three and not four < three and not four <= three
    assert c("L6") < LLAMA and c("L1") < LLAMA  # the llama sorts after every number


@pytest.mark.parametrize("other", [3, "L3", None])
def test_l1_cards_do_not_compare_with_other_things(other: Any) -> None:
    three = c("L3")
    with pytest.raises(TypeError):
        _ = three < other
    with pytest.raises(TypeError):
        _ = three <= other
    with pytest.raises(TypeError):
        _ = three > other
    with pytest.raises(TypeError):
        _ = three >= other


def test_l1_a_card_cannot_be_changed_or_deleted() -> None:
    card = c("L3")
    with pytest.raises(FrozenInstanceError, match="cannot assign to field '_value' of a Card"):
        card._value = 4
    with pytest.raises(FrozenInstanceError, match="cannot delete field '_value' of a Card"):
        del card._value
    assert card.value == 3 and card.text == "L3"


def test_l1_arranged_cards_that_are_not_the_deck_are_named_each_once() -> None:
    good = LamaState.arranged(hands=["L1", "L2"], discard=["L3"])
    draw = list(good.zones()["draw pile"])
    draw.remove(LLAMA)
    draw.append(c("L1"))
    with pytest.raises(GameError) as info:
        LamaState.arranged(hands=["L1", "L2"], discard=["L3"], draw=draw)
    assert str(info.value) == "the arranged cards are not the 56-card deck (8 of each card): +1 L1, -1 LL"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"hands": ["L1", "L2"], "discard": []},
         "the discard pile cannot be empty: a card is turned face up at the deal (L2)"),
        ({"hands": ["L1", ""], "discard": ["L3"]}, "hand 1 is empty: a round ends as soon as a hand is emptied (L8)"),
        ({"quit": [3]}, "quit seat 3 is not at this 3-seat table"),
        ({"quit": [-1]}, "quit seat -1 is not at this 3-seat table"),
        ({"quit": [True]}, "quit seat True is not at this 3-seat table"),
        ({"quit": [1.0]}, "quit seat 1.0 is not at this 3-seat table"),
        ({"quit": ["1"]}, "quit seat '1' is not at this 3-seat table"),
        ({"active": 3}, "active seat 3 is not at this 3-seat table"),
        ({"active": True}, "active seat True is not at this 3-seat table"),
        ({"active": 1.0}, "active seat 1.0 is not at this 3-seat table"),
        ({"totals": [True, 0, 0]}, "totals must be 3 integers >= 0, got [True, 0, 0]"),
        ({"totals": [1.0, 0, 0]}, "totals must be 3 integers >= 0, got [1.0, 0, 0]"),
        ({"round": True}, "round must be an integer >= 1, got True"),
        ({"round": 1.0}, "round must be an integer >= 1, got 1.0"),
    ],
)
def test_l1_arranged_refuses_a_state_that_cannot_happen_with_its_reason(kwargs: dict[str, Any], message: str) -> None:
    """The arrangement a test or a bot author sets up is refused, and the message says why (L1, L2, L6, L8)."""
    arguments: dict[str, Any] = {"hands": ["L1", "L2", "L4"], "discard": ["L3"]} | kwargs
    with pytest.raises(GameError) as info:
        LamaState.arranged(**arguments)
    assert str(info.value) == message


@pytest.mark.parametrize("seats", [3.0, "3", None])
def test_l2_a_state_needs_an_integer_seat_count(seats: Any) -> None:
    with pytest.raises(OptionError, match=f"L.A.M.A. is played by 2 to 6 seats, not {seats!r}"):
        LamaState(seats, 0)


# ---------------------------------------------------------------------------------------------------- L4-L7


@pytest.mark.parametrize("top", list(FOLLOWS))
def test_l4_the_two_playable_values_of_each_top(top: str) -> None:
    assert tuple(CARDS[v - 1].text for v in rules._playable_values(c(top).value)) == FOLLOWS[top]


def test_l4_l5_l6_l7_the_prompt_table_rebuilt_holds_the_rules_choices() -> None:
    """Every entry of the table of turn prompts, built again: for each seat, top, pair of playable cards held or
    not, and draw allowed or not, the plays (L4, lower first), then draw when allowed (L5, L7), then quit (L6)."""
    table = rules._build_pending()
    assert len(table) == 6 * 7 * 4 * 2
    for seat in range(6):
        for top in FOLLOWS:
            low, high = (c(t) for t in FOLLOWS[top])
            for has_low in (False, True):
                for has_high in (False, True):
                    for can_draw in (False, True):
                        plays = [card for card, held in ((low, has_low), (high, has_high)) if held]
                        choices = (*plays, *([DRAW] if can_draw else []), QUIT)
                        key = rules._pending_key(seat, c(top).value, has_low + 2 * has_high, can_draw)
                        assert table[key] == (Prompt(seat, "turn", Pick.ONE, choices, (choices[0],)),)


def test_l4_l5_l6_every_turn_prompt_of_a_table_follows_the_rules() -> None:
    """The same, from arranged states: every seat of a 6-seat table, every top, every pair held or not."""
    for seat in range(6):
        for top, (low, high) in FOLLOWS.items():
            for held in ([], [low], [high], [low, high]):
                hands = ["L1"] * 6
                hands[seat] = " ".join(held) or ("L4" if top in ("L1", "L2", "L6", "LL") else "L1")
                for draw, quit_ in (("L2", ()), ("", ()), ("L2", [s for s in range(6) if s != seat])):
                    state = arrange(hands, top, draw=draw, active=seat, quit=quit_)
                    can_draw = draw != "" and not quit_
                    expected = [*held, *(["draw"] if can_draw else []), "quit"]
                    (prompt,) = state.pending()
                    assert (prompt.seat, prompt.kind, prompt.pick) == (seat, "turn", Pick.ONE)
                    assert texts(prompt.choices) == expected and texts(prompt.default) == expected[:1]


# --------------------------------------------------------------------------- option climb=any (L4's literal words)


@pytest.mark.parametrize(
    ("top", "held", "draw", "quit_", "choices"),
    [
        ("L2", "L2 L5 LL L1", "L6", (), ["L2", "L5", "LL", "draw", "quit"]),
        ("L2", "L2 L5 LL L1", "", (), ["L2", "L5", "LL", "quit"]),  # L5: no draw from an empty draw pile
        ("L2", "L2 L5 LL L1", "L6", (1, 2), ["L2", "L5", "LL", "quit"]),  # L5: the last seat in may not draw
        ("L2", "L2 L5 LL L1", "L6", (1,), ["L2", "L5", "LL", "draw", "quit"]),
        ("L4", "L1 L3", "L6", (), ["draw", "quit"]),
        ("L4", "L1 L3", "", (), ["quit"]),  # L6: no play, no draw: quit
        ("LL", "L6 L1 LL", "L6", (), ["L1", "LL", "draw", "quit"]),
    ],
)
def test_l4_l5_l6_climb_any_prompt_is_exact(
    top: str, held: str, draw: str, quit_: tuple[int, ...], choices: list[str]
) -> None:
    state = arrange([held, "L1 L1", "L1 L1"], top, draw=draw, quit=quit_, options=CLIMB_ANY)
    (prompt,) = state.pending()
    actions = tuple(parse_action(t) for t in choices)
    assert prompt == Prompt(0, "turn", Pick.ONE, actions, (actions[0],))  # the default: the first choice


def test_l4_climb_any_applies_the_default_and_plays_a_card_two_higher() -> None:
    state = arrange(["L2 L5", "L1 L1", "L3"], "L2", draw="L6", options=CLIMB_ANY)
    (prompt,) = state.pending()
    assert state.apply({0: prompt.default}) == [Played(0, c("L2"))]
    assert act(state, "draw") == [Drew(1)]
    assert texts(state.pending()[0].choices) == ["L3", "quit"]  # seat 1 drew the last card (L5)
    act(state, "quit")
    events = act(state, "L5")  # two above the L2 on top: only with climb=any; seat 0's hand is empty
    assert events[:2] == [Played(0, c("L5")), RoundScored(1, (0, 7, 3), (0, 7, 3))]  # L9: L1 L1 L6 is 7


# ---------------------------------------------------------------------------------------------------- L8-L12


def test_l8_l9_l10_l11_a_whole_round_event_by_event() -> None:
    """A round of three seats played out by hand, every turn's choices and every event checked."""
    state = arrange(["L4 LL", "L2 L5 L5 L6", "L1 L1 L3 L6"], "L3", draw="L6 LL L2", active=1, totals=[12, 3, 0])
    steps = [
        # (seat, its choices, its action, what it holds after)
        (1, ["draw", "quit"], "draw", "L2 L5 L5 L6 L6"),  # L4: no 3 or 4; L5: draws the top card, L6
        (2, ["L3", "draw", "quit"], "L3", "L1 L1 L6"),
        (0, ["L4", "draw", "quit"], "L4", "LL"),
        (1, ["L5", "draw", "quit"], "L5", "L2 L5 L6 L6"),
        (2, ["L6", "draw", "quit"], "quit", "L1 L1 L6"),  # L7: quits though it could play
        (0, ["draw", "quit"], "draw", "LL LL"),  # draws the llama; seat 2 is skipped from now on (L3, L6)
        (1, ["L5", "L6", "draw", "quit"], "L6", "L2 L5 L6"),
        (0, ["LL", "draw", "quit"], "LL", "LL"),  # L4: a llama on a 6
        (1, ["draw", "quit"], "draw", "L2 L2 L5 L6"),  # nothing on a llama but a 1 or a llama; draws the last card
        (0, ["LL", "quit"], None, ""),  # L5: the draw pile is empty
    ]
    for seat, choices, action, after in steps:
        (prompt,) = state.pending()
        assert (prompt.seat, texts(prompt.choices)) == (seat, choices)
        if action is None:
            break
        events = act(state, action)
        assert events == [{"draw": Drew(seat), "quit": Quit(seat)}.get(action, Played(seat, parse_action(action)))]
        assert texts(state.view(seat).hand) == after.split()
    view = state.view(2)
    assert (view.hand_sizes, view.in_round) == ((1, 4, 3), (True, True, False))
    assert (view.draw_size, view.discard.text) == (0, "LL")
    events = act(state, "LL")  # L8: seat 0 plays its last card
    assert events[:2] == [
        Played(0, LLAMA),
        # L10: seat 0 gives back a 10 chip (12 -> 2); L9: seat 1 holds 2, 5 and 6, seat 2 laid down 1, 1 and 6
        RoundScored(1, (-10, 13, 7), (2, 16, 7)),
    ]
    started = events[2]
    assert isinstance(started, RoundStarted) and len(events) == 3  # 16 < 40: the match goes on (L12)
    assert (started.round, started.starter, started.hand_size) == (2, 0, 6)  # L11: the seat that emptied its hand
    view = state.view(1)
    assert (view.round, view.active, view.totals, view.in_round) == (2, 0, (2, 16, 7), (True, True, True))
    assert (view.hand_sizes, view.draw_size, view.discard_size) == ((6, 6, 6), 56 - 19, 1)
    assert view.discard is started.discard


@pytest.mark.parametrize(("target", "over"), [(1, True), (2, False)])
def test_l12_the_smallest_target_is_one(target: int, over: bool) -> None:
    options = LAMA.options({"target": target})
    assert options == LamaOptions(target=target)
    state = arrange(["L4", "L1 L1"], "L4", options=options)
    events = act(state, "L4")
    assert events[1] == RoundScored(1, (0, 1), (0, 1))  # L9: seat 1 holds two 1s, scored once
    assert len(events) == 3 and state.over is over
    if over:  # a total of 1 reaches a target of 1
        assert events[2] == MatchOver((0, 1), (1, 2))
    else:
        assert isinstance(events[2], RoundStarted) and events[2].round == 2


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"colour": "red"}, "lama has no option 'colour'; its options are climb, rounds, target"),
        ({"target": "forty"}, "option target must be an integer, got 'forty'"),
        ({"target": 0}, "option target must be at least 1, got 0"),
        ({"rounds": "two"}, "option rounds must be an integer, got 'two'"),
        ({"rounds": 0}, "option rounds must be at least 1, got 0"),
        ({"climb": 3}, "option climb must be one of one, any, got 3"),
        ({"climb": None}, "option climb must be one of one, any, got None"),
        ({"climb": "up"}, "option climb must be one of one, any, got 'up'"),
    ],
)
def test_l4_l12_a_bad_option_is_refused_with_its_name(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as info:
        LAMA.options(raw)
    assert str(info.value) == message


def test_l4_l12_option_text_is_read_without_surrounding_blanks() -> None:
    assert LAMA.options({"climb": " any "}) == LamaOptions(climb="any")
    assert LAMA.options({"climb": "one\n", "target": " 7 ", "rounds": "2 "}) == LamaOptions(7, 2, "one")


# ---------------------------------------------------------------------------------------------------- G1, G2


def test_g1_a_state_made_without_options_plays_the_default_options() -> None:
    state = LamaState(4, 9)
    assert state.options == LamaOptions() and (state.seats, state.seed, state.round) == (4, 9, 1)
    assert state.events == LAMA.new_match(4, 9).events
    assert state.zones() == LAMA.new_match(4, 9, LamaOptions()).zones()


def test_g1_an_arranged_state_deals_later_rounds_from_seed_zero_by_default() -> None:
    def next_round(**seed: int) -> Any:
        state = LamaState.arranged(hands=["L4", "L1"], discard=["L4"], **seed)
        act(state, "L4")
        return state.seed, state.zones(), state.events[-1]

    assert next_round() == next_round(seed=0)
    assert next_round()[1:] != next_round(seed=1)[1:]


@pytest.mark.parametrize(("seed", "options"), [(1, LamaOptions()), (2, CLIMB_ANY), (3, LamaOptions(rounds=2))])
def test_g1_a_copy_of_a_match_plays_on_exactly_as_the_match_and_apart_from_it(seed: int, options: LamaOptions) -> None:
    """A search plays on copies (MatchState.clone): the same seat to play, views, zones, totals and options, the
    same events for the same decisions (later deals included), and nothing played on the copy reaches the match."""
    state = LAMA.new_match(3, seed, options)
    rng = random.Random(seed)
    for _ in range(7):
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
    def seen(match: LamaState) -> Any:
        return match.zones(), [match.view(s) for s in range(3)], match.pending(), match.totals

    before = seen(state)
    logged = len(state.events)
    copy = state.clone()
    assert (copy.seats, copy.seed, copy.round, copy.options, copy.over) == (3, seed, state.round, options, False)
    assert seen(copy) == before
    assert copy.events == []
    decisions: list[dict[int, Decision]] = []
    for _ in until_over(copy):
        decisions.append({p.seat: random_decision(p, rng) for p in copy.pending()})
        copy.apply(decisions[-1])
    assert sum(isinstance(e, RoundScored) for e in copy.events) >= 1
    assert seen(state) == before and len(state.events) == logged
    for step in decisions:
        state.apply(step)
    assert list(state.events[logged:]) == list(copy.events) and state.result == copy.result


def test_g2_the_card_drawn_is_told_to_the_drawing_seat_alone_in_json() -> None:
    state = arrange(["L1 L3", "L1", "L2"], "L5", draw="L6 L4", active=1)
    act(state, "draw")
    ((position, told),) = state.private_events(1)
    assert position == 1 and told == DrewCard(1, c("L6"))
    assert told.to_json() == {"event": "drew_card", "seat": 1, "card": "L6"}
    assert told.describe(NAMES) == "bob draws L6 (seen by bob only)"
    assert state.private_events(0) == [] and state.private_events(2) == []
    assert [e.to_json() for e in state.events] == [{"event": "drew", "seat": 1}]
