"""L.A.M.A. rule tests (docs/rules.md L1-L12, G1, G2), table-driven on hand-set states from LamaState.arranged."""

from __future__ import annotations

import copy
import pickle
import random
import re
from collections import Counter
from typing import Any

import pytest
from costs import capped, until_over

from arena.games.base import (
    Decision,
    GameError,
    IllegalDecisionError,
    MatchOver,
    OptionError,
    ParseError,
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
)

NAMES = ["ann", "bob", "cat", "dan", "eve", "fay"]


def cards(text: str) -> list[Card]:
    return [Card.parse(w) for w in text.split()]


def arrange(
    hands: list[str],
    top: str,
    *,
    draw: str | None = None,
    **kwargs: Any,
) -> LamaState:
    """A state with ``hands``, ``top`` face up and ``draw`` (top first) as the draw pile.

    ``draw=None`` puts every card not in hands or on top in the draw pile; otherwise the cards left over go
    under ``top`` in the discard pile (``draw=""`` is an empty draw pile).
    """
    rest = Counter(DECK)
    rest.subtract(c for hand in hands for c in cards(hand))
    rest.subtract(cards(top))
    if draw is None:
        return LamaState.arranged(hands=hands, discard=[top], **kwargs)
    rest.subtract(cards(draw))
    under = [c for c in CARDS for _ in range(rest[c])]
    return LamaState.arranged(hands=hands, discard=[*under, top], draw=cards(draw), **kwargs)


def choices(state: LamaState) -> list[str]:
    (prompt,) = state.pending()
    return [a.text for a in prompt.choices]


def act(state: LamaState, text: str) -> list[Any]:
    (prompt,) = state.pending()
    return state.apply({prompt.seat: (parse_action(text),)})


def snapshot(state: LamaState) -> Any:
    return (
        state.zones(),
        [state.view(s) for s in range(state.seats)],
        [e.to_json() for e in state.events],
        state.pending(),
        state.totals,
    )


def hand(state: LamaState, seat: int) -> list[str]:
    return [c.text for c in state.view(seat).hand]


# ---------------------------------------------------------------------------------------------------- L1


def test_l1_deck_is_eight_of_each_value_and_eight_llamas() -> None:
    deck = LAMA.deck(LAMA.options())
    assert len(deck) == 56
    assert Counter(c.text for c in deck) == {t: 8 for t in ["L1", "L2", "L3", "L4", "L5", "L6", "LL"]}


@pytest.mark.parametrize(
    ("text", "value"), [("L1", 1), ("L2", 2), ("L3", 3), ("L4", 4), ("L5", 5), ("L6", 6), ("LL", 7)]
)
def test_l1_card_text_round_trip(text: str, value: int) -> None:
    card = Card.parse(text)
    assert card is Card.parse(text) is LAMA.parse_card(text) is Card(value)
    assert str(card) == card.text == text
    assert card.value == value
    assert repr(card) == f"Card.parse({text!r})"
    assert eval(repr(card)) is card
    assert copy.copy(card) is card and copy.deepcopy(card) is card
    assert pickle.loads(pickle.dumps(card)) is card


@pytest.mark.parametrize("junk", ["", "L0", "L7", "L8", "ll", "l3", " L3", "L3 ", "L", "LLL", "3", "draw", "LX"])
def test_l1_card_parse_rejects_junk(junk: str) -> None:
    with pytest.raises(ParseError, match=re.escape(repr(junk))):
        Card.parse(junk)


@pytest.mark.parametrize("value", [0, 8, -1, True])
def test_l1_card_value_out_of_range_rejected(value: int) -> None:
    with pytest.raises(GameError, match=f"not {value!r}$"):
        Card(value)


def test_l1_cards_sort_one_to_six_then_llama() -> None:
    shuffled = [LLAMA, *cards("L6 L1 L3 L2 L5 L4")]
    assert [c.text for c in sorted(shuffled)] == ["L1", "L2", "L3", "L4", "L5", "L6", "LL"]
    one, six, llama = Card.parse("L1"), Card.parse("L6"), LLAMA
    assert six < llama and llama > six and six <= six and llama >= one and not llama < one and not one > six
    with pytest.raises(TypeError):
        _ = one < 2  # type: ignore[operator]


def test_l1_card_is_frozen() -> None:
    card = Card.parse("L3")
    with pytest.raises(AttributeError):
        card.value = 4  # type: ignore[misc]
    with pytest.raises(AttributeError):
        card._value = 4
    assert card.value == 3


def test_l1_parse_action_reads_cards_draw_and_quit() -> None:
    assert parse_action("draw") is DRAW and DRAW.text == "draw"
    assert parse_action("quit") is QUIT and QUIT.text == "quit"
    assert parse_action("LL") is LLAMA
    with pytest.raises(ParseError, match="'pass'"):
        parse_action("pass")


@pytest.mark.parametrize(
    ("hands", "discard", "draw", "match"),
    [
        (["L1", "L2"], ["L3"], ["L4"], "deck"),  # far too few cards
        (["L1 L1 L1 L1 L1 L1 L1 L1 L1", "L2"], ["L3"], None, r"\+1 L1"),  # nine L1
    ],
)
def test_l1_arranged_rejects_cards_that_are_not_the_deck(
    hands: list[str], discard: list[str], draw: list[str] | None, match: str
) -> None:
    with pytest.raises(GameError, match=match):
        LamaState.arranged(hands=hands, discard=discard, draw=draw)


def test_l1_arranged_rejects_an_extra_card_in_the_draw_pile() -> None:
    good = arrange(["L1", "L2"], "L3")
    draw = list(good.zones()["draw pile"])
    LamaState.arranged(hands=["L1", "L2"], discard=["L3"], draw=draw)  # the deck exactly: accepted
    with pytest.raises(GameError, match=r"\+1 LL"):
        LamaState.arranged(hands=["L1", "L2"], discard=["L3"], draw=[*draw, LLAMA])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"active": 1, "quit": {1}}, "active seat 1 has quit"),
        ({"active": 2}, "active seat 2"),
        ({"quit": {0, 1}}, "has quit"),
        ({"totals": [1]}, "totals"),
        ({"totals": [-1, 0]}, "totals"),
        ({"round": 0}, "round"),
        ({"round": 3, "options": LamaOptions(rounds=2)}, "past the last round"),
    ],
)
def test_l1_arranged_rejects_impossible_states(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(GameError, match=match):
        arrange(["L1", "L2"], "L3", **kwargs)


def test_l1_zones_hold_the_whole_deck_at_every_step() -> None:
    deck = Counter(DECK)
    for seed in range(30):
        state = LAMA.new_match(2 + seed % 5, seed)
        rng = random.Random(seed)
        for _ in capped():
            zones = state.zones()
            assert set(zones) == {f"hand {s}" for s in range(state.seats)} | {"draw pile", "discard pile"}
            assert Counter(c for zone in zones.values() for c in zone) == deck
            if state.over:
                break
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


# ---------------------------------------------------------------------------------------------------- L2


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_l2_deal_six_each_one_face_up_rest_is_draw_pile(seats: int) -> None:
    state = LAMA.new_match(seats, 123)
    (started,) = state.events
    assert isinstance(started, RoundStarted)
    assert (started.round, started.hand_size) == (1, 6)
    zones = state.zones()
    assert [len(zones[f"hand {s}"]) for s in range(seats)] == [6] * seats
    assert zones["discard pile"] == (started.discard,)
    assert len(zones["draw pile"]) == 56 - 6 * seats - 1
    view = state.view(0)
    assert view.hand_sizes == (6,) * seats and view.discard_size == 1 and view.draw_size == 56 - 6 * seats - 1


@pytest.mark.parametrize("seats", [1, 7, 0])
def test_l2_seat_counts_outside_two_to_six_rejected(seats: int) -> None:
    with pytest.raises(OptionError, match=f"not {seats}$"):
        LAMA.new_match(seats, 0)
    with pytest.raises(OptionError, match=f"not {seats}$"):
        LamaState(seats, 0)
    with pytest.raises(OptionError, match=f"not {seats}$"):
        LamaState.arranged(hands=["L1"] * seats, discard=["L2"])
    LAMA.new_match(min(max(seats, 2), 6), 0)  # the nearest count inside the range plays


@pytest.mark.parametrize("seed", [-1, True, "7", 1.0])
def test_g1_bad_seed_rejected(seed: object) -> None:
    with pytest.raises(OptionError, match=re.escape(repr(seed))):
        LAMA.new_match(2, seed)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match=re.escape(repr(seed))):
        LamaState.arranged(hands=["L1", "L1"], discard=["L2"], seed=seed)  # type: ignore[arg-type]


def test_l2_draw_takes_the_top_of_the_draw_pile() -> None:
    state = arrange(["L1 L1", "L1 L1"], "L4", draw="L6 LL L2")
    act(state, "draw")
    act(state, "draw")
    assert hand(state, 0) == ["L1", "L1", "L6"]
    assert hand(state, 1) == ["L1", "L1", "LL"]
    assert state.zones()["draw pile"] == (Card.parse("L2"),)


def test_l2_empty_draw_pile_is_never_reshuffled() -> None:
    state = arrange(["L1 L1", "L1 L1", "L2"], "L4", draw="L6")
    act(state, "draw")
    discard_size = state.view(0).discard_size
    assert discard_size > 40 and state.view(0).draw_size == 0
    assert choices(state) == ["quit"]  # seat 1 holds only L1s on L4, and the discard is not reused
    act(state, "quit")
    assert choices(state) == ["quit"]
    assert state.view(2).discard_size == discard_size


def test_l2_each_round_is_a_fresh_deal() -> None:
    state = arrange(["L3", "L1 L2"], "L3", draw="")  # the draw pile is empty in round 1
    act(state, "L3")
    view = state.view(0)
    assert view.round == 2
    assert view.hand_sizes == (6, 6) and view.discard_size == 1 and view.draw_size == 56 - 13
    assert Counter(c for zone in state.zones().values() for c in zone) == Counter(DECK)


# ---------------------------------------------------------------------------------------------------- L3


def test_l3_first_starter_comes_from_the_seed() -> None:
    starters = []
    for seed in range(200):
        state = LAMA.new_match(4, seed)
        started = state.events[0]
        assert isinstance(started, RoundStarted)
        assert started.starter == random.Random(seed).randrange(4) == state.pending()[0].seat
        assert LAMA.new_match(4, seed).events[0] == started
        starters.append(started.starter)
    assert set(starters) == {0, 1, 2, 3}


@pytest.mark.parametrize(("seats", "active", "following"), [(3, 0, 1), (3, 1, 2), (3, 2, 0), (6, 5, 0)])
def test_l3_play_goes_clockwise(seats: int, active: int, following: int) -> None:
    state = arrange(["L1"] * seats, "L4", active=active)
    assert state.pending()[0].seat == active
    act(state, "draw")
    assert state.pending()[0].seat == following == state.view(0).active


# ---------------------------------------------------------------------------------------------------- L4


@pytest.mark.parametrize(
    ("top", "held", "plays"),
    [
        ("L3", "L1 L3 L4 L5 LL", ["L3", "L4"]),  # same or one higher
        ("L1", "L1 L2 L3", ["L1", "L2"]),
        ("L5", "L6 L6 L6", ["L6"]),  # distinct plays only
        ("L6", "L1 L5 L6 LL", ["L6", "LL"]),  # after a 6: a 6 or a llama
        ("L6", "L1 L5", []),
        ("LL", "L1 L2 L6 LL", ["L1", "LL"]),  # after a llama: a llama or a 1 (the wrap)
        ("LL", "L2 L6", []),
        ("L4", "L3 L6 LL", []),  # lower or two higher is not a play
    ],
)
def test_l4_legal_plays(top: str, held: str, plays: list[str]) -> None:
    state = arrange([held, "L1"], top)
    assert choices(state) == [*plays, "draw", "quit"]


def test_l4_llama_then_one() -> None:
    state = arrange(["L1 L3", "L1"], "LL")
    events = act(state, "L1")
    assert events == [Played(0, Card.parse("L1"))]
    assert state.view(1).discard.text == "L1"


def test_l4_six_then_llama() -> None:
    state = arrange(["LL L3", "L1"], "L6")
    act(state, "LL")
    assert state.view(1).discard is LLAMA and hand(state, 0) == ["L3"]


def test_l4_play_moves_the_card_to_the_discard_pile() -> None:
    state = arrange(["L4 L4 L5", "L1"], "L4", draw="L2")
    before = state.zones()["discard pile"]
    events = act(state, "L5")
    assert events == [Played(0, Card.parse("L5"))]
    assert state.zones()["discard pile"] == (*before, Card.parse("L5"))
    assert hand(state, 0) == ["L4", "L4"] and state.view(1).hand_sizes == (2, 1)
    assert events[0].to_json() == {"event": "played", "seat": 0, "card": "L5"}
    assert events[0].describe(NAMES) == "ann plays L5"


@pytest.mark.parametrize("bad", ["L5", "L4", "L2", "LL"])  # L5, L4, L2: not in hand; LL: held, not legal on L3
def test_l4_illegal_card_rejected_and_state_unchanged(bad: str) -> None:
    state = arrange(["L3 LL", "L1"], "L3")
    assert choices(state) == ["L3", "draw", "quit"]
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError, match=bad):
        act(state, bad)
    assert snapshot(state) == before


@pytest.mark.parametrize(
    ("top", "held", "draw", "default"),
    [
        ("L3", "L4 L3 LL", "L1", "L3"),  # the lowest legal play
        ("LL", "LL L1", "L1", "L1"),  # after a llama the 1 is the lowest
        ("L3", "L6 LL", "L1", "draw"),  # no play: draw
        ("L3", "L6 LL", "", "quit"),  # no play, no draw: quit
    ],
)
def test_l4_default_is_lowest_play_else_draw_else_quit(top: str, held: str, draw: str, default: str) -> None:
    (prompt,) = arrange([held, "L1"], top, draw=draw).pending()
    assert [a.text for a in prompt.default] == [default]
    assert prompt.default == (prompt.choices[0],)


# ---------------------------------------------------------------------------------------------------- L5


def test_l5_draw_ends_the_turn_and_hides_the_card() -> None:
    state = arrange(["L3", "L1", "L1"], "L3", draw="LL L2")
    events = act(state, "draw")
    assert events == [Drew(0)]
    assert events[0].to_json() == {"event": "drew", "seat": 0}
    assert events[0].describe(NAMES) == "ann draws a card"
    assert hand(state, 0) == ["L3", "LL"]
    assert state.pending()[0].seat == 1  # no play in the same turn
    assert state.view(1).hand_sizes == (2, 1, 1) and state.view(1).draw_size == 1


def test_l5_no_draw_from_an_empty_draw_pile() -> None:
    assert choices(arrange(["L3 L6", "L1"], "L3", draw="")) == ["L3", "quit"]
    assert choices(arrange(["L3 L6", "L1"], "L3", draw="L2")) == ["L3", "draw", "quit"]


def test_l5_the_last_player_still_in_may_not_draw() -> None:
    state = arrange(["L3 L6", "L1", "L1"], "L3", quit={1, 2})
    assert state.view(0).draw_size > 0
    assert choices(state) == ["L3", "quit"]
    assert choices(arrange(["L3 L6", "L1", "L1"], "L3", quit={1})) == ["L3", "draw", "quit"]


def test_l5_draw_when_not_allowed_rejected_and_state_unchanged() -> None:
    state = arrange(["L3 L6", "L1", "L1"], "L3", quit={1, 2})
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError, match="draw"):
        state.apply({0: (DRAW,)})
    assert snapshot(state) == before


def test_l5_a_seat_becomes_last_in_and_loses_the_draw() -> None:
    state = arrange(["L3 L6", "L1 L1"], "L3", draw="L6 L6")
    act(state, "draw")
    assert choices(state) == ["draw", "quit"]
    act(state, "quit")
    assert hand(state, 0) == ["L3", "L6", "L6"] and state.view(0).draw_size == 1
    assert choices(state) == ["L3", "quit"]


# ---------------------------------------------------------------------------------------------------- L6


def test_l6_cannot_play_or_draw_must_quit() -> None:
    state = arrange(["L1 L6", "L1"], "L4", draw="")
    (prompt,) = state.pending()
    assert prompt.choices == (QUIT,) and prompt.default == (QUIT,)
    events = act(state, "quit")
    assert events == [Quit(0)]
    assert events[0].to_json() == {"event": "quit", "seat": 0}
    assert events[0].describe(NAMES) == "ann quits"


def test_l6_quit_keeps_the_cards_in_the_hand_zone() -> None:
    state = arrange(["L1 L6", "L2", "L3"], "L4")
    act(state, "quit")
    assert [c.text for c in state.zones()["hand 0"]] == ["L1", "L6"]
    view = state.view(0)
    assert view.in_round == (False, True, True) and view.hand_sizes == (2, 1, 1) and hand(state, 0) == ["L1", "L6"]


@pytest.mark.parametrize(
    ("seats", "active", "gone", "following"),
    [
        (4, 0, {1}, 2),
        (4, 0, {1, 2}, 3),
        (4, 3, {0}, 1),
        (4, 2, {3, 0, 1}, 2),
        (3, 2, {0}, 1),
        (3, 2, set(), 0),
    ],
)
def test_l6_seats_that_quit_are_skipped(seats: int, active: int, gone: set[int], following: int) -> None:
    state = arrange(["L3 L4"] * seats, "L3", active=active, quit=gone)
    act(state, "L4")
    assert state.pending()[0].seat == following


def test_l6_quit_seat_is_skipped_for_the_rest_of_the_round() -> None:
    state = arrange(["L1 L1", "L1 L1", "L1 L1"], "L4")
    act(state, "draw")  # 0
    act(state, "quit")  # 1
    seats = []
    for _ in range(4):
        seats.append(state.pending()[0].seat)
        act(state, "draw")
    assert seats == [2, 0, 2, 0]


# ---------------------------------------------------------------------------------------------------- L7


@pytest.mark.parametrize("action", ["draw", "quit"])
def test_l7_draw_and_quit_allowed_when_a_play_is_possible(action: str) -> None:
    state = arrange(["L3 L4", "L1", "L2"], "L3", draw="L6")
    assert choices(state) == ["L3", "L4", "draw", "quit"]
    events = act(state, action)
    assert events == [Drew(0) if action == "draw" else Quit(0)]


# ---------------------------------------------------------------------------------------------------- L8


def test_l8_round_ends_at_once_when_a_hand_is_emptied() -> None:
    state = arrange(["L3", "L1 L2", "L5"], "L3", totals=[4, 0, 0])
    events = act(state, "L3")
    assert [type(e) for e in events] == [Played, RoundScored, RoundStarted]
    assert isinstance(events[1], RoundScored) and events[1].round == 1
    assert state.round == 2


def test_l8_round_ends_when_every_seat_has_quit() -> None:
    state = arrange(["L3", "L1 L2", "L5"], "L6", active=2, quit={0, 1})
    events = act(state, "quit")
    assert [type(e) for e in events] == [Quit, RoundScored, RoundStarted]
    assert events[1] == RoundScored(1, (3, 3, 5), (3, 3, 5))


def test_l8_round_goes_on_while_a_seat_is_still_in() -> None:
    state = arrange(["L3 L3", "L1 L2", "L5"], "L3", quit={1})
    assert act(state, "L3") == [Played(0, Card.parse("L3"))]  # one card left: not emptied
    assert act(state, "quit") == [Quit(2)]  # seat 0 is still in
    assert state.round == 1 and state.pending()[0].seat == 0


# ---------------------------------------------------------------------------------------------------- L9


@pytest.mark.parametrize(
    ("held", "points"),
    [
        ("L5 L5 L5 L2", 7),  # each distinct value once
        ("L6", 6),
        ("L6 L6 L6 L6", 6),
        ("LL", 10),
        ("LL LL LL", 10),  # llamas add 10 once
        ("LL LL L1 L1", 11),
        ("L1 L2 L3 L4 L5 L6 LL", 31),
    ],
)
def test_l9_unplayed_cards_score(held: str, points: int) -> None:
    state = arrange(["L4", held], "L4", totals=[0, 5])
    (_, scored, _) = act(state, "L4")
    assert scored == RoundScored(1, (0, points), (0, 5 + points))


def test_l9_five_five_five_two_scores_seven() -> None:
    state = arrange(["L5 L5 L5 L2", "L1"], "L6", quit={1})
    (_, scored, _) = act(state, "quit")
    assert isinstance(scored, RoundScored) and scored.points == (7, 1)


def test_l9_laid_down_cards_of_a_quit_seat_score() -> None:
    state = arrange(["L2", "LL L6 L6", "L3"], "L2", quit={1})
    (_, scored, _) = act(state, "L2")
    assert isinstance(scored, RoundScored) and scored.points == (0, 16, 3)
    assert scored.describe(NAMES[:3]) == "round 1 scored: ann +0 = 0, bob +16 = 16, cat +3 = 3"


# --------------------------------------------------------------------------------------------------- L10


@pytest.mark.parametrize(("before", "change"), [(0, 0), (1, -1), (9, -1), (10, -10), (11, -10), (25, -10)])
def test_l10_emptied_hand_gives_back_a_chip(before: int, change: int) -> None:
    state = arrange(["L4", "L1 L1"], "L4", totals=[before, 3])
    (_, scored, _) = act(state, "L4")
    assert scored == RoundScored(1, (change, 1), (before + change, 4))


def test_l10_no_chip_back_when_the_round_ends_by_quitting() -> None:
    state = arrange(["L4", "L1"], "L6", quit={1}, totals=[12, 0])
    (_, scored, _) = act(state, "quit")
    assert isinstance(scored, RoundScored) and scored.points == (4, 1)


# --------------------------------------------------------------------------------------------------- L11


@pytest.mark.parametrize("emptier", [0, 1, 2])
def test_l11_next_round_starts_with_the_seat_that_emptied_its_hand(emptier: int) -> None:
    hands = ["L1 L2", "L1 L2", "L1 L2"]
    hands[emptier] = "L4"
    state = arrange(hands, "L4", active=emptier)
    (_, _, started) = act(state, "L4")
    assert isinstance(started, RoundStarted) and (started.round, started.starter) == (2, emptier)
    assert state.pending()[0].seat == emptier == state.view(0).active


@pytest.mark.parametrize(("gone", "last"), [({0, 1}, 2), ({1, 2}, 0), ({0, 2}, 1)])
def test_l11_next_round_starts_with_the_last_seat_to_quit(gone: set[int], last: int) -> None:
    state = arrange(["L1", "L1", "L1"], "L4", active=last, quit=gone)
    (_, _, started) = act(state, "quit")
    assert isinstance(started, RoundStarted) and started.starter == last
    assert state.pending()[0].seat == last
    assert state.view(0).in_round == (True, True, True)


# --------------------------------------------------------------------------------------------------- L12


@pytest.mark.parametrize(
    ("totals", "options", "over"),
    [
        ([37, 0], LamaOptions(), True),  # 37 + 3 reaches 40
        ([36, 0], LamaOptions(), False),  # 39
        ([30, 0], LamaOptions(target=33), True),
        ([0, 0], LamaOptions(target=3), True),
        ([0, 0], LamaOptions(target=4), False),
    ],
)
def test_l12_match_ends_when_a_total_reaches_the_target(totals: list[int], options: LamaOptions, over: bool) -> None:
    state = arrange(["L1 L2", "L4"], "L4", active=1, totals=totals, options=options)
    events = act(state, "L4")
    assert state.over == over
    assert isinstance(events[-1], MatchOver if over else RoundStarted)
    if over:
        assert state.pending() == () and state.view(0).active is None
        assert state.result is not None and state.result.totals == (totals[0] + 3, 0)


@pytest.mark.parametrize(
    ("round_", "rounds", "totals", "over"),
    [(2, 2, [0, 0], True), (1, 2, [90, 0], False), (3, 3, [90, 0], True), (1, 1, [0, 0], True)],
)
def test_l12_rounds_option_plays_exactly_that_many_rounds(
    round_: int, rounds: int, totals: list[int], over: bool
) -> None:
    state = arrange(["L1 L2", "L4"], "L4", active=1, totals=totals, round=round_, options=LamaOptions(rounds=rounds))
    act(state, "L4")
    assert state.over == over


@pytest.mark.parametrize("rounds", [1, 3, 5])
def test_l12_new_match_with_rounds_option_plays_that_many_rounds(rounds: int) -> None:
    for seed in range(10):
        state = LAMA.new_match(3, seed, LAMA.options({"rounds": rounds}))
        rng = random.Random(seed)
        for _ in until_over(state):
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
        assert sum(isinstance(e, RoundScored) for e in state.events) == rounds


def test_l12_equal_totals_share_the_place() -> None:
    state = arrange(["L4", "L1 L2", "L2 L1", "L6"], "L4", totals=[30, 40, 40, 0])
    events = act(state, "L4")
    assert events[-1] == MatchOver((20, 43, 43, 6), (2, 3, 3, 1))
    state = arrange(["L4", "L1 L2", "L2 L1"], "L4", totals=[47, 40, 40])
    events = act(state, "L4")
    assert events[-1] == MatchOver((37, 43, 43), (1, 2, 2))
    state = arrange(["L4", "L3", "L3"], "L4", totals=[13, 0, 0], options=LamaOptions(rounds=1))
    events = act(state, "L4")
    assert events[-1] == MatchOver((3, 3, 3), (1, 1, 1))
    assert state.result is not None and state.result.places[:3] == (1, 1, 1)


def test_l12_no_decision_after_the_match_is_over() -> None:
    state = arrange(["L4", "L1"], "L4", options=LamaOptions(rounds=1))
    act(state, "L4")
    with pytest.raises(IllegalDecisionError, match="over"):
        state.apply({0: (QUIT,)})


def test_l12_options_defaults_and_text_values() -> None:
    assert LAMA.options() == LamaOptions(40, None)
    options = LAMA.options({"target": "25", "rounds": " 3 "})
    assert options == LamaOptions(target=25, rounds=3)
    assert LAMA.options(options.to_json()) == options
    assert LAMA.options(LamaOptions().to_json()) == LamaOptions()


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ({"target": 0}, "0"),
        ({"target": -5}, "-5"),
        ({"target": "forty"}, "'forty'"),
        ({"target": True}, "True"),
        ({"target": 4.5}, "4.5"),
        ({"rounds": 0}, "0"),
        ({"rounds": "two"}, "'two'"),
        ({"colour": "red"}, "'colour'"),
    ],
)
def test_l12_bad_options_rejected(raw: dict[str, Any], shown: str) -> None:
    with pytest.raises(OptionError, match=shown) as info:
        LAMA.options(raw)
    assert next(iter(raw)) in str(info.value)


@pytest.mark.parametrize(
    ("target", "rounds", "shown"),
    [(0, None, "target.*0"), (40, 0, "rounds.*0"), (True, None, "True"), (40, "3", "'3'")],
)
def test_l12_bad_options_rejected_when_constructed(target: Any, rounds: Any, shown: str) -> None:
    with pytest.raises(OptionError, match=shown):
        LamaOptions(target=target, rounds=rounds)


def test_l12_new_match_needs_lama_options() -> None:
    with pytest.raises(OptionError, match="LamaOptions"):
        LAMA.new_match(2, 0, {"target": 3})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- wrong decisions


@pytest.mark.parametrize(
    "decisions",
    [
        {1: (QUIT,)},  # the wrong seat
        {},  # the prompted seat is missing
        {0: (QUIT,), 1: (QUIT,)},  # an extra seat
        {0: ()},  # no action
        {0: (QUIT, QUIT)},  # two actions
        {0: [QUIT]},  # not a tuple
        {0: (Card.parse("L5"),)},  # a card not in hand
    ],
)
def test_l4_malformed_decisions_rejected_and_state_unchanged(decisions: dict[int, Decision]) -> None:
    state = arrange(["L3 L4", "L1"], "L3", draw="L6")
    before = snapshot(state)
    with pytest.raises(IllegalDecisionError):
        state.apply(decisions)
    assert snapshot(state) == before
    assert isinstance(IllegalDecisionError("x"), ValueError)
    state.apply({0: (QUIT,)})  # the same state still takes a legal decision
    assert state.pending()[0].seat == 1


# ---------------------------------------------------------------------------------------------------- G1


def _playout(seed: int, seats: int = 4) -> tuple[list[dict[int, Decision]], list[dict[str, Any]]]:
    state = LAMA.new_match(seats, seed)
    rng = random.Random(seed * 7 + 1)
    decisions = []
    for _ in until_over(state):
        step = {p.seat: random_decision(p, rng) for p in state.pending()}
        decisions.append(step)
        state.apply(step)
    return decisions, [e.to_json() for e in state.events]


@pytest.mark.parametrize("seed", [0, 1, 99, 2**40])
def test_g1_same_seed_and_decisions_give_the_same_events(seed: int) -> None:
    decisions, events = _playout(seed)
    again = LAMA.new_match(4, seed)
    for step in decisions:
        again.apply(step)
    assert [e.to_json() for e in again.events] == events
    other = LAMA.new_match(4, seed + 1)
    assert [other.zones()[f"hand {s}"] for s in range(4)] != [
        LAMA.new_match(4, seed).zones()[f"hand {s}"] for s in range(4)
    ]


def test_g1_later_rounds_are_dealt_from_the_seed() -> None:
    def next_deal(seed: int) -> Any:
        state = arrange(["L4", "L1"], "L4", seed=seed)
        act(state, "L4")
        return state.zones()

    assert next_deal(5) == next_deal(5)
    assert next_deal(5) != next_deal(6)


def test_g1_events_are_json_with_cards_as_text() -> None:
    _, events = _playout(3)
    assert events[0]["event"] == "round_started" and isinstance(events[0]["discard"], str)
    assert events[-1]["event"] == "match_over"
    kinds = {e["event"] for e in events}
    assert kinds <= {"round_started", "played", "drew", "quit", "round_scored", "match_over"}
    started = RoundStarted(2, 1, LLAMA, 6)
    assert started.to_json() == {
        "event": "round_started",
        "round": 2,
        "starter": 1,
        "discard": "LL",
        "hand_size": 6,
    }
    assert started.describe(NAMES) == "round 2: 6 cards each, LL face up, bob starts"


# ---------------------------------------------------------------------------------------------------- G2


def test_g2_view_hides_other_hands_the_draw_order_and_the_seed() -> None:
    base = arrange(["L1 L2 L3", "L4 L5 L6", "LL LL"], "L3", draw="L1 L6 LL", seed=1)
    other_hand = arrange(["L1 L2 L3", "LL L1 L1", "LL LL"], "L3", draw="L1 L6 LL", seed=1)
    other_draw = arrange(["L1 L2 L3", "L4 L5 L6", "LL LL"], "L3", draw="LL L1 L6", seed=1)
    other_seed = arrange(["L1 L2 L3", "L4 L5 L6", "LL LL"], "L3", draw="L1 L6 LL", seed=2)
    for state in (other_hand, other_draw, other_seed):
        assert state.zones() != base.zones() or state.seed != base.seed
        assert state.view(0) == base.view(0)
        assert state.view(0).to_json() == base.view(0).to_json()
    assert other_hand.view(1) != base.view(1)  # the views do show the seat's own hand


def test_g2_view_holds_only_public_fields() -> None:
    state = arrange(["L1 L2 L3", "L4 L5 L6", "LL LL"], "L3", draw="L1 L6 LL", quit={2}, totals=[3, 0, 12])
    assert state.view(1).to_json() == {
        "seat": 1,
        "round": 1,
        "active": 0,
        "hand": ["L4", "L5", "L6"],
        "discard": "L3",
        "discard_size": 56 - 8 - 3,
        "draw_size": 3,
        "hand_sizes": [3, 3, 2],
        "in_round": [True, True, False],
        "totals": [3, 0, 12],
    }


@pytest.mark.parametrize("seat", [-1, 3, 10, "0", None])
def test_g2_view_of_a_seat_not_at_the_table_rejected(seat: Any) -> None:
    state = arrange(["L1", "L2", "L3"], "L3")
    with pytest.raises(GameError, match=repr(seat)):
        state.view(seat)


class _Public:
    """What any seat knows from the public events alone (G2: a view is its hand plus this)."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.totals = [0] * seats
        self.round = 0
        self.sizes: list[int] = []
        self.in_round: list[bool] = []
        self.discard: list[Card] = []
        self.draw = 0
        self.active: int | None = None

    def see(self, event: Any) -> None:
        if isinstance(event, RoundStarted):
            self.round = event.round
            self.sizes = [event.hand_size] * self.seats
            self.in_round = [True] * self.seats
            self.discard = [event.discard]
            self.draw = 56 - self.seats * event.hand_size - 1
            self.active = event.starter
        elif isinstance(event, Played):
            self.sizes[event.seat] -= 1
            self.discard.append(event.card)
            self.active = self._next(event.seat)
        elif isinstance(event, Drew):
            self.sizes[event.seat] += 1
            self.draw -= 1
            self.active = self._next(event.seat)
        elif isinstance(event, Quit):
            self.in_round[event.seat] = False
            self.active = self._next(event.seat)
        elif isinstance(event, RoundScored):
            self.totals = list(event.totals)
        elif isinstance(event, MatchOver):
            self.active = None

    def _next(self, seat: int) -> int | None:
        for step in range(1, self.seats + 1):
            if self.in_round[(seat + step) % self.seats]:
                return (seat + step) % self.seats
        return None


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_g2_view_is_rebuilt_from_the_hand_and_the_public_events(seats: int) -> None:
    for seed in range(15):
        state = LAMA.new_match(seats, seed)
        rng = random.Random(seed)
        public = _Public(seats)
        seen = 0
        for _ in capped():
            for event in state.events[seen:]:
                public.see(event)
            seen = len(state.events)
            for seat in range(seats):
                view = state.view(seat)
                assert view.round == public.round and view.active == public.active
                assert list(view.hand_sizes) == public.sizes and len(view.hand) == public.sizes[seat]
                assert list(view.in_round) == public.in_round and list(view.totals) == public.totals
                assert view.discard == public.discard[-1] and view.discard_size == len(public.discard)
                assert view.draw_size == public.draw
            if state.over:
                break
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


# ------------------------------------------------------------- option climb=any: the rulebook's literal words


@pytest.mark.parametrize(
    ("top", "held", "plays"),
    [
        ("L2", "L1 L2 L4 L6 LL", ["L2", "L4", "L6", "LL"]),  # any higher value, the llama above them all
        ("L6", "L1 L5 L6 LL", ["L6", "LL"]),  # after a 6 still only a 6 or a llama
        ("LL", "L1 L2 L6 LL", ["L1", "LL"]),  # after a llama only a llama or a 1
        ("L5", "L1 L2", []),
    ],
)
def test_l4_climb_any_allows_the_same_or_any_higher_value(top: str, held: str, plays: list[str]) -> None:
    options = LAMA.options({"climb": "any"})
    state = arrange([held, "L1"], top, options=options)
    assert choices(state) == [*plays, "draw", "quit"]
    assert choices(arrange([held, "L1"], top)) == [  # the default, L4: the same or exactly one higher
        c for c in ["L1", "L2", "L3", "L4", "L5", "L6", "LL"]
        if c in held.split() and c in {"L1": ["L1", "L2"], "L2": ["L2", "L3"], "L5": ["L5", "L6"],
                                       "L6": ["L6", "LL"], "LL": ["L1", "LL"]}[top]] + ["draw", "quit"]


def test_l4_climb_option_is_checked_and_kept_out_of_default_options() -> None:
    assert LAMA.options().to_json() == {"target": 40, "rounds": None}
    assert LAMA.options({"climb": "any"}).to_json() == {"target": 40, "rounds": None, "climb": "any"}
    assert LAMA.options(LAMA.options({"climb": "any"}).to_json()).climb == "any"
    with pytest.raises(OptionError, match="climb must be one of one, any"):
        LAMA.options({"climb": "two"})


def test_l4_climb_any_plays_whole_matches() -> None:
    rng = random.Random(4)
    for seed in range(20):
        state = LAMA.new_match(4, seed, LAMA.options({"climb": "any"}))
        for _ in range(20_000):  # a rule that never ends a round fails here instead of hanging the suite
            if state.over:
                break
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
        assert state.over, f"match {seed} with climb=any did not end within 20,000 steps"


def test_l5_the_drawing_seat_alone_learns_the_card_it_drew() -> None:
    state = arrange(["L1 L3", "L1"], "L5", draw="L2 L4")
    act(state, "draw")
    assert state.private_events(0) == [(1, DrewCard(0, Card.parse("L2")))]
    assert state.private_events(1) == [] and all(not isinstance(e, DrewCard) for e in state.events)
