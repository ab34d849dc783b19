"""Goofspiel rule tests (docs/rules.md GS1-GS9, G1, G2), table-driven on hand-set states from
GoofspielState.arranged and on seeded matches."""

from __future__ import annotations

import copy
import pickle
import random
from collections import Counter
from typing import Any

import pytest
from costs import capped, until_over

from arena.games import get_game
from arena.games.base import (
    Decision,
    GameError,
    IllegalDecisionError,
    MatchOver,
    OptionError,
    ParseError,
    Pick,
    RoundScored,
    Scoring,
    random_decision,
)
from arena.games.goofspiel import (
    CARDS,
    GOOFSPIEL,
    BidsRevealed,
    Card,
    GoofspielOptions,
    GoofspielState,
    GoofspielView,
    PrizeTurned,
    RoundStarted,
    Ties,
    suit,
)
from arena.protocol import codec

NAMES = ["ann", "bob", "cat", "dan", "eve", "fay"]


def bid(*values: int) -> dict[int, Decision]:
    """The decisions of every seat, by seat: seat s bids the card ``values[s]``."""
    return {seat: (Card(value),) for seat, value in enumerate(values)}


def texts(cards: Any) -> list[str]:
    return [c.text for c in cards]


def play_out(state: GoofspielState, rng: random.Random) -> None:
    for _ in until_over(state):
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


def carry(**kwargs: Any) -> GoofspielOptions:
    return GoofspielOptions(ties=Ties.CARRY, **kwargs)


# ----------------------------------------------------------------------------------------------- GS1


def test_gs1_every_seat_holds_one_to_cards_and_the_prize_deck_is_another_set() -> None:
    state = GOOFSPIEL.new_match(3, 7)
    zones = state.zones()
    for seat in range(3):
        assert texts(zones[f"hand {seat}"]) == [str(v) for v in range(1, 14)]
    prizes = [*zones["prize"], *zones["prize deck"]]
    assert sorted(c.value for c in prizes) == list(range(1, 14))
    assert Counter(c for cards in zones.values() for c in cards) == Counter(GOOFSPIEL.deck(state.options, 3))


@pytest.mark.parametrize("cards", [3, 5, 13])
def test_gs1_option_cards_sets_the_hands_and_the_prize_deck(cards: int) -> None:
    state = GOOFSPIEL.new_match(2, 1, GOOFSPIEL.options({"cards": str(cards)}))
    view = state.view(0)
    assert [c.value for c in view.hand] == list(range(1, cards + 1))
    assert view.prize is not None and len(view.to_come) == cards - 1
    assert sorted([view.prize, *view.to_come]) == list(suit(cards))
    assert GOOFSPIEL.deck(state.options, 2) == tuple(c for c in suit(cards) for _ in range(3))


@pytest.mark.parametrize("raw", [{"cards": 2}, {"cards": 14}, {"cards": "x"}, {"cards": True}, {"ties": "split"},
                                 {"rounds": 0}, {"colour": "red"}])
def test_gs1_bad_options_are_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(OptionError, match=str(next(iter(raw)))):
        GOOFSPIEL.options(raw)


def test_gs1_options_read_back_their_json() -> None:
    options = GOOFSPIEL.options({"cards": "7", "ties": " carry ", "rounds": "2"})
    assert options == GoofspielOptions(cards=7, ties=Ties.CARRY, rounds=2)
    assert GOOFSPIEL.options(options.to_json()) == options
    assert GOOFSPIEL.options().to_json() == {"cards": 13, "ties": "discard", "rounds": 1}


def test_gs1_the_prize_deck_is_shuffled_from_the_seed() -> None:
    decks = {tuple(texts(GOOFSPIEL.new_match(2, seed).zones()["prize deck"])) for seed in range(10)}
    assert len(decks) == 10
    again = GOOFSPIEL.new_match(2, 3)
    assert again.zones() == GOOFSPIEL.new_match(2, 3).zones()


@pytest.mark.parametrize(("text", "value"), [("1", 1), ("7", 7), ("13", 13)])
def test_gs1_card_text_round_trip(text: str, value: int) -> None:
    card = Card.parse(text)
    assert card is Card(value) and card.value == value and card.text == text == str(card)
    assert eval(repr(card), {"Card": Card}) is card
    assert pickle.loads(pickle.dumps(card)) is card and copy.deepcopy(card) is card


@pytest.mark.parametrize("junk", ["0", "14", "07", " 7", "L7", "", "seven"])
def test_gs1_card_parse_rejects_junk(junk: str) -> None:
    with pytest.raises(ParseError, match="not a Goofspiel card"):
        Card.parse(junk)


def test_gs1_cards_are_frozen_and_ordered_by_value() -> None:
    assert sorted(reversed(CARDS)) == list(CARDS)
    with pytest.raises(AttributeError):
        Card(3)._value = 4
    with pytest.raises(GameError):
        Card(14)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"hands": ["1 2", "1"], "prizes": "3", "prize": "4"}, "same number"),
    ({"hands": ["1 2", "1 1"], "prizes": "3", "prize": "4"}, "not a part"),
    ({"hands": ["1 2", "1 2"], "prizes": "3 5", "prize": "4"}, "prize deck holds 2"),
    ({"hands": ["1 2", "1 2"], "prizes": "4", "prize": "4"}, "prize cards are not"),
    ({"hands": ["1 2", "1 2"], "prizes": "3", "prize": "4", "pot": "5"}, "only under option ties=carry"),
    ({"hands": ["1 2"], "prizes": "3", "prize": "4"}, "2 to 6 seats"),
    ({"hands": ["1 2", "1 2"], "prizes": "3", "prize": "4", "totals": [0]}, "totals"),
    ({"hands": ["1 2", "1 2"], "prizes": "3", "prize": "4", "taken": ["5 6", ""], "totals": [3, 0]}, "totals"),
    ({"hands": ["1 2", "1 2"], "prizes": "3", "prize": "4", "round": 2}, "round"),
    ({"hands": ["1 2", "1 X"], "prizes": "3", "prize": "4"}, "not a Goofspiel card"),
])
def test_gs1_arranged_refuses_impossible_states(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(GameError, match=match):
        GoofspielState.arranged(**kwargs)


def test_gs1_zones_hold_every_card_once_at_every_step() -> None:
    rng = random.Random(5)
    for seats in (2, 6):
        state = GOOFSPIEL.new_match(seats, 11, carry(rounds=2, cards=6))
        deck = Counter(GOOFSPIEL.deck(state.options, seats))
        for _ in capped():
            assert Counter(c for cards in state.zones().values() for c in cards) == deck
            if state.over:
                break
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


# ----------------------------------------------------------------------------------------------- GS2


def test_gs2_a_new_match_has_turned_its_first_prize() -> None:
    state = GOOFSPIEL.new_match(2, 4)
    started, turned = state.events
    assert started == RoundStarted(1, 13)
    assert isinstance(turned, PrizeTurned) and turned.trick == 1 and turned.pot == 0
    assert state.zones()["prize"] == (turned.prize,) and state.view(1).prize is turned.prize


def test_gs2_each_trick_turns_the_top_of_the_prize_deck() -> None:
    state = GoofspielState.arranged(hands=["1 2 3", "1 2 3"], prizes="9 5", prize="7")
    events = state.apply(bid(3, 1))
    assert events[-1] == PrizeTurned(12, Card(9), 0)
    assert state.view(0).prize is Card(9) and texts(state.view(0).to_come) == ["5"]
    assert state.trick == 12


# ----------------------------------------------------------------------------------------------- GS3


def test_gs3_every_seat_is_asked_at_once_to_bid_a_card_of_its_hand() -> None:
    state = GoofspielState.arranged(hands=["1 4 9", "2 3 13", "5 6 7"], prizes="8 10", prize="11")
    prompts = state.pending()
    assert [p.seat for p in prompts] == [0, 1, 2]
    assert all(p.kind == "bid" and p.pick is Pick.ONE for p in prompts)
    assert [p.choice_texts() for p in prompts] == ["1 4 9", "2 3 13", "5 6 7"]


def test_gs3_bids_are_revealed_together_and_leave_the_hands() -> None:
    state = GoofspielState.arranged(hands=["1 4 9", "2 3 13", "5 6 7"], prizes="8 10", prize="11")
    events = state.apply(bid(4, 13, 5))
    assert events[0] == BidsRevealed(11, (Card(4), Card(13), Card(5)), 1, 11)
    assert texts(state.view(0).hand) == ["1", "9"]
    assert [texts(bids)[-1] for bids in state.view(2).bids] == ["4", "13", "5"]


@pytest.mark.parametrize("bad", [{0: (Card(2),), 1: (Card(2),)}, {0: (Card(1),)}, {0: (), 1: (Card(2),)},
                                 {0: (Card(1), Card(3)), 1: (Card(2),)}])
def test_gs3_a_bid_not_in_hand_or_a_missing_seat_is_refused_and_nothing_changes(bad: dict[int, Decision]) -> None:
    state = GoofspielState.arranged(hands=["1 3", "2 4"], prizes="5", prize="6")
    before = (state.zones(), state.view(0), state.view(1), list(state.events))
    with pytest.raises(IllegalDecisionError):
        state.apply(bad)
    assert (state.zones(), state.view(0), state.view(1), list(state.events)) == before


def test_gs3_no_view_holds_a_bid_before_it_is_revealed() -> None:
    """The state holds no half-made trick: a view between two reveals is the same whatever the seats will bid."""
    state = GOOFSPIEL.new_match(3, 8)
    views = [state.view(s) for s in range(3)]
    assert all(v.bids == ((), (), ()) for v in views)
    state.apply(bid(13, 1, 7))
    assert state.view(0).bids == ((Card(13),), (Card(1),), (Card(7),))


# ----------------------------------------------------------------------------------------------- GS4


def test_gs4_the_single_highest_bid_takes_the_prize() -> None:
    state = GoofspielState.arranged(hands=["2 8", "3 9", "1 5"], prizes="4", prize="6", totals=[1, 2, 3])
    events = state.apply(bid(8, 3, 5))
    assert events[0] == BidsRevealed(12, (Card(8), Card(3), Card(5)), 0, 6)
    assert state.totals == (7, 2, 3)
    assert state.zones()["taken 0"] == (Card(6),)


def test_gs4_the_winner_takes_the_pot_with_the_prize() -> None:
    state = GoofspielState.arranged(hands=["2 8", "3 9"], prizes="4", prize="6", pot="10 12", options=carry())
    assert state.view(0).pot == 22
    events = state.apply(bid(2, 3))
    assert events[0] == BidsRevealed(12, (Card(2), Card(3)), 1, 28)
    assert state.totals == (0, 28) and state.view(0).pot == 0
    assert sorted(state.zones()["taken 1"]) == [Card(6), Card(10), Card(12)]


# ----------------------------------------------------------------------------------------------- GS5


def test_gs5_a_tie_discards_the_prize_by_default() -> None:
    state = GoofspielState.arranged(hands=["2 8", "8 9", "1 5"], prizes="4", prize="6")
    events = state.apply(bid(8, 8, 5))
    assert events[0] == BidsRevealed(12, (Card(8), Card(8), Card(5)), None, 0)
    assert state.totals == (0, 0, 0) and Card(6) in state.zones()["discarded"]
    assert events[1] == PrizeTurned(13, Card(4), 0)


def test_gs5_a_lower_tie_does_not_stop_the_single_highest_bid() -> None:
    state = GoofspielState.arranged(hands=["2 8", "2 9", "1 5"], prizes="4", prize="6")
    assert state.apply(bid(2, 2, 5))[0].winner == 2  # type: ignore[attr-defined]


def test_gs5_under_carry_a_tie_puts_the_prize_in_the_pot_for_the_next_trick() -> None:
    state = GoofspielState.arranged(hands=["2 7 8", "3 7 9"], prizes="4 11", prize="6", options=carry())
    events = state.apply(bid(7, 7))
    assert events == [BidsRevealed(11, (Card(7), Card(7)), None, 0), PrizeTurned(12, Card(4), 6)]
    assert state.view(1).pot == 6 and state.zones()["pot"] == (Card(6),)
    events = state.apply(bid(8, 9))  # a second tie would grow it; this one is won
    assert events[0] == BidsRevealed(12, (Card(8), Card(9)), 1, 10)


def test_gs5_a_pot_grows_over_several_ties() -> None:
    state = GoofspielState.arranged(hands=["1 2 3", "1 2 3"], prizes="4 5", prize="6", options=carry())
    state.apply(bid(1, 1))
    state.apply(bid(2, 2))
    assert state.view(0).pot == 10 and state.view(0).prize is Card(5)
    assert state.apply(bid(3, 3))[0] == BidsRevealed(13, (Card(3), Card(3)), None, 0)
    assert state.over and state.totals == (0, 0)


def test_gs5_a_pot_left_after_the_last_trick_is_discarded() -> None:
    state = GoofspielState.arranged(hands=["1 2", "1 3"], prizes="4", prize="6", options=carry(rounds=2))
    state.apply(bid(1, 1))
    events = state.apply(bid(2, 3))
    assert events[0] == BidsRevealed(13, (Card(2), Card(3)), 1, 10)
    state = GoofspielState.arranged(hands=["1 2", "1 2"], prizes="4", prize="6", options=carry(rounds=2))
    state.apply(bid(1, 1))
    events = state.apply(bid(2, 2))
    assert isinstance(events[1], RoundScored) and events[1].points == (0, 0)
    assert isinstance(events[2], RoundStarted) and state.view(0).pot == 0


# ----------------------------------------------------------------------------------------------- GS6


def test_gs6_the_default_bid_is_the_lowest_card_in_hand() -> None:
    state = GoofspielState.arranged(hands=["3 9 12", "1 2 13"], prizes="4 5", prize="6")
    assert [p.default for p in state.pending()] == [(Card(3),), (Card(1),)]
    assert all(p.default == (p.choices[0],) for p in state.pending())


# ----------------------------------------------------------------------------------------------- GS7


def test_gs7_a_round_is_cards_tricks_then_it_is_scored() -> None:
    state = GOOFSPIEL.new_match(2, 3, GOOFSPIEL.options({"cards": 5}))
    rng = random.Random(2)
    reveals = 0
    for _ in until_over(state):
        events = state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
        reveals += sum(isinstance(e, BidsRevealed) for e in events)
    assert reveals == 5
    scored = [e for e in state.events if isinstance(e, RoundScored)]
    assert len(scored) == 1 and scored[0].totals == state.totals
    won = [0, 0]
    for e in state.events:
        if isinstance(e, BidsRevealed) and e.winner is not None:
            won[e.winner] += e.won
    assert scored[0].points == tuple(won)


@pytest.mark.parametrize("rounds", [1, 2, 4])
def test_gs7_option_rounds_deals_that_many_rounds_afresh_and_keeps_totals(rounds: int) -> None:
    state = GOOFSPIEL.new_match(3, 9, GOOFSPIEL.options({"rounds": rounds, "cards": 4}))
    rng = random.Random(rounds)
    play_out(state, rng)
    started = [e for e in state.events if isinstance(e, RoundStarted)]
    scored = [e for e in state.events if isinstance(e, RoundScored)]
    assert [e.round for e in started] == [e.round for e in scored] == list(range(1, rounds + 1))
    running = [0, 0, 0]
    for e in scored:
        running = [t + p for t, p in zip(running, e.points, strict=True)]
        assert list(e.totals) == running
    assert state.round == rounds


def test_gs7_a_new_round_gives_full_hands_and_clears_the_bids() -> None:
    state = GoofspielState.arranged(hands=["1", "2"], prizes="", prize="3", totals=[4, 0],
                                    options=GoofspielOptions(cards=3, rounds=2), seed=5)
    events = state.apply(bid(1, 2))
    assert [type(e) for e in events] == [BidsRevealed, RoundScored, RoundStarted, PrizeTurned]
    assert events[1] == RoundScored(1, (0, 3), (4, 3))
    view = state.view(0)
    assert (view.round, view.trick, texts(view.hand), view.bids, view.totals) == (2, 1, ["1", "2", "3"], ((), ()),
                                                                                  (4, 3))


# ----------------------------------------------------------------------------------------------- GS8


@pytest.mark.parametrize(("totals", "places"), [
    ((10, 20), (2, 1)),
    ((30, 30, 5), (1, 1, 3)),
    ((0, 7, 7, 9), (4, 2, 2, 1)),
])
def test_gs8_higher_totals_take_the_better_places(totals: tuple[int, ...], places: tuple[int, ...]) -> None:
    assert GOOFSPIEL.scoring is Scoring.HIGHER_WINS
    assert Scoring.HIGHER_WINS.places(totals) == places


def test_gs8_match_over_carries_the_places_of_the_highest_totals() -> None:
    state = GoofspielState.arranged(hands=["1", "2", "2"], prizes="", prize="5", totals=[9, 3, 3])
    events = state.apply(bid(1, 2, 2))
    assert events[-1] == MatchOver((9, 3, 3), (1, 2, 2))
    assert state.result is not None and state.result.places[0] == 1
    state = GoofspielState.arranged(hands=["1", "2", "3"], prizes="", prize="5", totals=[9, 3, 3])
    assert state.apply(bid(1, 2, 3))[-1] == MatchOver((9, 3, 8), (1, 3, 2))


def test_gs8_no_decision_after_the_match_is_over() -> None:
    state = GoofspielState.arranged(hands=["1", "2"], prizes="", prize="5")
    state.apply(bid(1, 2))
    assert state.over and state.pending() == () and state.view(0).prize is None
    with pytest.raises(IllegalDecisionError, match="over"):
        state.apply(bid(1, 2))


# ----------------------------------------------------------------------------------------------- GS9


def test_gs9_the_view_holds_the_hand_the_public_table_and_the_prizes_to_come_as_a_set() -> None:
    state = GoofspielState.arranged(hands=["1 4 9", "2 3 13"], prizes="10 8", prize="11", totals=[5, 0],
                                    taken=["5", ""])
    view = state.view(1)
    assert view == GoofspielView(seat=1, round=1, trick=11, prize=Card(11), pot=0, hand=(Card(2), Card(3), Card(13)),
                                 to_come=(Card(8), Card(10)), bids=view.bids, totals=(5, 0))
    assert texts(view.bids[0]) == ["2", "3", "5", "6", "7", "8", "10", "11", "12", "13"]
    assert view.to_json()["to_come"] == ["8", "10"]  # lowest first, whatever the order face down


def test_gs9_a_view_is_rebuilt_from_the_hand_and_the_public_events() -> None:
    """Every seat's view follows from its own hand and the public events alone (no private events exist)."""
    for seed in range(5):
        state = GOOFSPIEL.new_match(3, seed, carry(rounds=2, cards=7))
        rng = random.Random(seed)
        for _ in capped():
            for seat in range(3):
                assert rebuild(state.events, seat, state.options, 3) == state.view(seat)
                assert state.private_events(seat) == []
            if state.over:
                break
            state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


def rebuild(events: Any, seat: int, options: GoofspielOptions, seats: int) -> GoofspielView:
    """A seat's view from the public events, as a bot that keeps history would build it."""
    round_ = trick = pot = 0
    prize: Card | None = None
    totals = [0] * seats
    bids: list[list[Card]] = [[] for _ in range(seats)]
    to_come: set[Card] = set()
    for event in events:
        if isinstance(event, RoundStarted):
            round_, bids, to_come = event.round, [[] for _ in range(seats)], set(suit(event.cards))
        elif isinstance(event, PrizeTurned):
            trick, prize, pot = event.trick, event.prize, event.pot
            to_come.discard(event.prize)
        elif isinstance(event, BidsRevealed):
            for s, card in enumerate(event.bids):
                bids[s].append(card)
            if event.winner is not None:
                totals[event.winner] += event.won
            prize, pot = None, 0  # the next PrizeTurned says what is carried (none after a round's last trick)
        elif isinstance(event, RoundScored):
            assert list(event.totals) == totals
    hand = tuple(c for c in suit(options.cards) if c not in bids[seat])
    return GoofspielView(seat, round_, trick, prize, pot, hand, tuple(sorted(to_come)),
                         tuple(tuple(b) for b in bids), tuple(totals))


def test_gs9_the_view_and_events_survive_the_wire() -> None:
    game_codec = codec.codec_for("goofspiel")
    state = GoofspielState.arranged(hands=["1 4 9", "2 3 13", "5 6 7"], prizes="8 10", prize="11", pot="12",
                                    options=carry())
    view = state.view(2)
    assert game_codec.decode_view(game_codec.encode_view(view)) == view
    for event in [*state.apply(bid(4, 3, 7)), BidsRevealed(3, (Card(1), Card(1)), None, 0)]:
        assert codec.event_from_proto(codec.event_to_proto(event, game_codec), game_codec) == event


def test_gs9_a_view_whose_bids_are_not_whole_tricks_is_refused() -> None:
    from arena.games.codec import CodecError
    from arena.games.goofspiel import goofspiel_pb2

    game_codec = codec.codec_for("goofspiel")
    with pytest.raises(CodecError, match="whole tricks"):
        game_codec.decode_view(goofspiel_pb2.View(totals=[0, 0], bids=["1", "2", "3"]))


# ----------------------------------------------------------------------------------------------- G1, G2


def test_g1_the_same_seed_and_bids_give_the_same_match() -> None:
    def run(seed: int) -> list[dict[str, Any]]:
        state = GOOFSPIEL.new_match(4, seed, carry(rounds=2))
        play_out(state, random.Random(seed))
        return [e.to_json() for e in state.events]

    assert run(12) == run(12)
    assert run(12) != run(13)


@pytest.mark.parametrize("seats", [1, 7, True, "3"])
def test_g1_seat_counts_outside_two_to_six_are_refused(seats: Any) -> None:
    with pytest.raises(OptionError):
        GOOFSPIEL.new_match(seats, 1)


def test_g2_the_view_never_shows_the_order_of_the_prize_deck() -> None:
    state = GOOFSPIEL.new_match(2, 21)
    deck = texts(state.zones()["prize deck"])
    assert deck != sorted(deck, key=int)  # a seed whose deck is not in order: the test means something
    for seat in range(2):
        view = state.view(seat).to_json()
        assert view["to_come"] == sorted(deck, key=int)
        assert "seed" not in view and 21 not in view.values()


def test_registry_finds_the_game_and_its_parts() -> None:
    game = get_game("goofspiel")
    assert game is GOOFSPIEL and game.kinds == ("bid",) and game.hidden_order == ("prize deck",)
    assert codec.codec_for("goofspiel").kinds == ("bid",)


def test_events_describe_themselves() -> None:
    assert RoundStarted(2, 13).describe(NAMES) == "round 2: every seat holds 1..13, 13 prizes face down"
    assert PrizeTurned(3, Card(7), 5).describe(NAMES) == "trick 3: prize 7 turned up with a pot of 5"
    assert BidsRevealed(3, (Card(7), Card(9)), 1, 12).describe(NAMES) == "bids ann 7, bob 9: bob takes 12"
    assert "nobody takes" in BidsRevealed(3, (Card(9), Card(9)), None, 0).describe(NAMES)
