"""The search toolkit (arena/games/search.py, cabanga_search.py, lama_search.py) and the search bots (issue 21).

Sampled worlds agree with everything the seat was told and with nothing it was not (G2); ``simulate`` is the
engine's own play; the clock keeps a decision within its deadline; the bots are deterministic for a seed.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest
from costs import until_over
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.referee import Clock, referee_match
from arena.games.base import RoundScored
from arena.games.cabanga import CABANGA, CabangaState, Card, PlayCard
from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
from arena.games.cabanga.bots.search.bot import SearchCabanga
from arena.games.cabanga.search import greedy_policy as cabanga_greedy
from arena.games.cabanga.search import knowledge_from as cabanga_knowledge
from arena.games.cabanga.search import pack, playout
from arena.games.cabanga.search import sample_world as sample_cabanga
from arena.games.cabanga.search import standing as cabanga_standing
from arena.games.lama import LAMA, LamaState
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.games.lama.bots.search.bot import SearchLama
from arena.games.lama.search import greedy_policy as lama_greedy
from arena.games.lama.search import knowledge_from as lama_knowledge
from arena.games.lama.search import sample_world as sample_lama
from arena.games.search import SearchClock, Slot, deal, simulate
from arena.sdk import local_seat

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cabanga_after(seats: int, seed: int, steps: int) -> CabangaState:
    """A Cabanga! match played ``steps`` steps on by greedy seats (which throw every card they may)."""
    state = CABANGA.new_match(seats, seed)
    for _ in range(steps):
        if state.over:
            break
        state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
    return state


def lama_after(seats: int, seed: int, steps: int) -> LamaState:
    """A L.A.M.A. match played ``steps`` steps on by greedy seats (which play whenever they can)."""
    state = LAMA.new_match(seats, seed)
    for _ in range(steps):
        if state.over:
            break
        prompt = state.pending()[0]
        state.apply({prompt.seat: lama_greedy(state, prompt)})
    return state


def cabanga_hidden(state: CabangaState, seat: int) -> Counter[Card]:
    """The cards ``seat`` cannot see: the other hands, the penalty pile, the set-aside cards."""
    cards = Counter(c for s, hand in enumerate(state._hands) if s != seat for c in hand)
    cards.update(state._penalty)
    cards.update(state._set_aside)
    return cards


# ------------------------------------------------------------------------------------------- Cabanga!


@SETTINGS
@given(seats=st.integers(3, 6), seed=st.integers(0, 10_000), steps=st.integers(0, 400), pick=st.integers(0, 5))
def test_g2_c10_c13_a_sampled_cabanga_world_agrees_with_the_view_and_everything_told(
        seats: int, seed: int, steps: int, pick: int) -> None:
    """Every sampled world shows the seat exactly its view (G2), holds the same hidden cards, deals no seat a
    card it did not throw into a gap (C10, the full-throw inference, which is sound against these seats) beyond
    the cards it drew since, and rebuilds the penalty pile only from the set-aside cards it came from (C13)."""
    state = cabanga_after(seats, seed, steps)
    if state.over:
        return
    prompts = state.pending()
    seat = prompts[pick % len(prompts)].seat
    view = state.view(seat)
    knowledge = cabanga_knowledge(state, seat)
    for s in range(seats):  # the inference holds in the real match: it is sound
        if s != seat:
            assert len(set(state._hands[s]) & knowledge.cannot_hold[s]) <= knowledge.free[s]
    rng = random.Random(seed)
    for _ in range(5):
        world = sample_cabanga(view, knowledge, rng, state.options)
        assert world.view(seat) == view
        assert cabanga_hidden(world, seat) == cabanga_hidden(state, seat)
        assert [p.seat for p in world.pending()] == [p.seat for p in prompts] or view.step == "throw"
        if view.step == "throw":
            assert world.pending()[[p.seat for p in world.pending()].index(seat)] == prompts[pick % len(prompts)]
        for s in range(seats):
            if s != seat:
                assert len(set(world._hands[s]) & knowledge.cannot_hold[s]) <= knowledge.free[s]
        if knowledge.pool is not None:
            assert set(world._penalty) <= knowledge.pool
        simulate(world, cabanga_greedy, rounds=None)  # a sampled world plays on to the end
        assert world.over


def test_g2_a_sampled_cabanga_world_does_not_depend_on_the_hidden_cards() -> None:
    """Two matches that look the same to seat 0 but hide different cards give the same sampled worlds (G2)."""
    mine = ["R3", "B9", "Y12"]
    first = CabangaState.arranged([mine, ["R5", "P7"], ["B2", "Y4"]])
    second = CabangaState.arranged([mine, ["B15", "P1"], ["Y4", "P2"]])  # the rest is the penalty pile
    assert first.view(0) == second.view(0) and first.zones() != second.zones()
    for seed in range(20):
        a = sample_cabanga(first.view(0), cabanga_knowledge(first, 0), random.Random(seed))
        b = sample_cabanga(second.view(0), cabanga_knowledge(second, 0), random.Random(seed))
        assert a.zones() == b.zones()


def test_c10_a_seat_that_threw_nothing_into_a_gap_is_dealt_none_of_its_cards() -> None:
    """After a gap of R2..R9 that seat 1 threw nothing into, no sampled world gives seat 1 a card of that gap."""
    state = CabangaState.arranged([["R10", "Y5"], ["B3", "B4", "P6"], ["R5", "Y9", "P10"]],
                                  tops=["G1", "G12", "G3", "G14", "G5", "G16", "G7", "G18"])
    state.apply({0: (state.pending()[0].choices[0],)})  # R10 onto the left pile: R 10|12 leaves only R11
    while not state.over and state.pending()[0].kind == "throw":
        state.apply({p.seat: p.choices for p in state.pending()})
    knowledge = cabanga_knowledge(state, 0)
    gap = {c for c in knowledge.cannot_hold[1]}
    assert gap == {Card.parse("R11")} and gap == knowledge.cannot_hold[2]
    for seed in range(30):
        world = sample_cabanga(state.view(0), knowledge, random.Random(seed))
        assert not gap & set(world._hands[1]) and not gap & set(world._hands[2])


def test_simulate_from_a_cabanga_world_is_the_engines_own_play() -> None:
    """``simulate`` on a clone gives the events, totals and end that ``apply`` gives for the same decisions."""
    for seed in range(6):
        state = cabanga_after(4, seed, 17 * seed)
        copy = state.clone()
        played = simulate(copy, cabanga_greedy, rounds=None, record=True)
        start = len(state.events)
        for _ in until_over(state):
            state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
        assert played.events == list(state.events[start:])
        assert played.over and copy.result == state.result and copy.zones() == state.zones()


def engine_playout(world: CabangaState, play: PlayCard, seed: int, horizon: int) -> tuple[int, list[int]]:
    """What :func:`playout` must equal: the play applied to a clone, the round played on by the engine."""
    trial = world.clone(random.Random(seed))
    events = trial._apply({trial._active: (play,)})
    if any(isinstance(event, RoundScored) for event in events):
        return 0, list(trial._totals)  # the play itself ended the round (C14): nothing more to play
    done = simulate(trial, cabanga_greedy, rounds=1, max_steps=horizon)
    return done.steps, cabanga_standing(trial) if done.rounds == 0 else list(trial._totals)


@SETTINGS
@given(seats=st.integers(3, 6), seed=st.integers(0, 10_000), steps=st.integers(0, 400),
       horizon=st.sampled_from([0, 1, 2, 3, 7, 100_000]))
def test_c8_c15_the_fast_playout_is_the_engines_own_play(seats: int, seed: int, steps: int, horizon: int) -> None:
    """``playout`` on ints gives the steps and standings the engine gives for every play of a sampled world,
    with the greedy plan for every seat after it, to the end of the round or a horizon cut mid-turn."""
    state = cabanga_after(seats, seed, steps)
    if state.over or state.pending()[0].kind != "play":
        return
    seat = state.pending()[0].seat
    rng = random.Random(seed)
    world = sample_cabanga(state.view(seat), cabanga_knowledge(state, seat), rng)
    packed = pack(world)
    for play in state.pending()[0].choices:
        assert isinstance(play, PlayCard)
        world_seed = rng.getrandbits(32)
        assert playout(packed, play, random.Random(world_seed), horizon) == engine_playout(world, play, world_seed,
                                                                                          horizon)


def test_c14_a_play_that_ends_the_round_is_scored_by_that_round_alone() -> None:
    """A seat playing its last card with no gap to throw into ends the round (C14): the search scores that
    play with this round's symbols (C15), not with a next round played on after it."""
    state = CabangaState.arranged(
        hands=[["B12"], ["R4", "P9"], ["Y3", "Y5"]], tops=["R2", "R15", "B6", "B7", "P15", "P17", "Y14", "Y16"],
        totals=[3, 6, 0])
    play = PlayCard.parse("B12:left")  # B12 on B6: the gap 8..11 of blue, which nobody holds
    steps, after = playout(pack(state), play, random.Random(1))
    symbols = state.options.symbols
    assert steps == 0
    assert after == [3, 6 + symbols[3] + symbols[8], 0 + symbols[2] + symbols[4]]
    assert (steps, after) == engine_playout(state, play, 1, 100_000)


# -------------------------------------------------------------------------------------------- L.A.M.A.


@SETTINGS
@given(seats=st.integers(2, 6), seed=st.integers(0, 10_000), steps=st.integers(0, 300))
def test_g2_l4_l5_a_sampled_lama_world_agrees_with_the_view_and_everything_told(
        seats: int, seed: int, steps: int) -> None:
    """Every sampled world shows the seat exactly its view (G2), holds the same hidden cards, and deals no seat
    a value it could have played when it drew or quit (L4-L7, the play-when-you-can inference, sound against
    these seats) beyond the cards it drew since."""
    state = lama_after(seats, seed, steps)
    if state.over:
        return
    seat = state.pending()[0].seat
    view = state.view(seat)
    knowledge = lama_knowledge(state, seat)

    def hidden(s: LamaState) -> Counter[int]:
        cards = Counter(c.value for c in s._draw)
        for other, counts in enumerate(s._hands):
            if other != seat:
                cards.update({v: n for v, n in enumerate(counts) if n})
        return cards

    def held(s: LamaState, other: int) -> int:
        return sum(s._hands[other][v] for v in knowledge.cannot_hold[other])

    for other in range(seats):
        if other != seat:
            assert held(state, other) <= knowledge.free[other]
    rng = random.Random(seed)
    for _ in range(5):
        world = sample_lama(view, knowledge, rng, state.options)
        assert world.view(seat) == view and world.pending() == state.pending()
        assert hidden(world) == hidden(state)
        for other in range(seats):
            if other != seat:
                assert held(world, other) <= knowledge.free[other]
        simulate(world, lama_greedy, rounds=None)
        assert world.over


def test_g2_a_sampled_lama_world_does_not_depend_on_the_hidden_cards() -> None:
    """Two matches that look the same to seat 0 but hide different cards give the same sampled worlds (G2)."""
    first = LamaState.arranged(hands=["L1 L6", "LL L6", "L1 L1"], discard="L2")  # the rest is the draw pile
    second = LamaState.arranged(hands=["L1 L6", "L1 L3", "LL L6"], discard="L2")
    assert first.view(0) == second.view(0) and first.zones() != second.zones()
    for seed in range(20):
        a = sample_lama(first.view(0), lama_knowledge(first, 0), random.Random(seed))
        b = sample_lama(second.view(0), lama_knowledge(second, 0), random.Random(seed))
        assert a.zones() == b.zones()


def test_simulate_from_a_lama_world_is_the_engines_own_play() -> None:
    """``simulate`` on a clone gives the events, totals and end that ``apply`` gives for the same decisions."""
    for seed in range(6):
        state = lama_after(3, seed, 13 * seed)
        copy = state.clone()
        played = simulate(copy, lama_greedy, rounds=None, record=True)
        start = len(state.events)
        for _ in until_over(state):
            prompt = state.pending()[0]
            state.apply({prompt.seat: lama_greedy(state, prompt)})
        assert played.events == list(state.events[start:])
        assert played.over and copy.result == state.result and copy.zones() == state.zones()


# ------------------------------------------------------------------------------------ dealing and clock


def test_deal_keeps_facts_and_inferences_and_says_when_it_drops_inferences() -> None:
    rng = random.Random(3)
    for _ in range(50):
        done = deal(list(range(10)), [Slot("a", 3, excluded=frozenset({0, 1, 2})), Slot("p", 4, only=frozenset(
            {0, 1, 2, 3, 4})), Slot("rest", 3)], rng)
        assert not done.relaxed and not set(done.cards["a"]) & {0, 1, 2} and set(done.cards["p"]) <= set(range(5))
        assert sorted(c for cards in done.cards.values() for c in cards) == list(range(10))
    impossible = deal([1, 2], [Slot("a", 2, excluded=frozenset({1}))], rng)
    assert impossible.relaxed and sorted(impossible.cards["a"]) == [1, 2]
    with pytest.raises(ValueError, match="slots hold"):
        deal([1, 2], [Slot("a", 3)], rng)


@pytest.mark.parametrize(("ms", "left", "deadline", "most"), [
    (100, 1.0, 1.0, 0.100),   # the bot's own setting
    (100, 0.2, 0.2, 0.080),   # 0.4 of the deadline
    (100, 0.05, 0.05, 0.020),
    (800, 3.0, 1.0, 0.500),   # 0.4 of the deadline and a twentieth of the bank left
    (100, 0.01, 1.0, 0.0),    # nothing left: no search
])
def test_the_clock_budgets_within_the_deadline_and_the_bank(ms: float, left: float, deadline: float,
                                                           most: float) -> None:
    budget = SearchClock(ms).start(left, deadline)
    assert budget == pytest.approx(most, abs=1e-9) and budget <= max(0.0, left - 0.03)


# ------------------------------------------------------------------------------------------------ bots


def _places(bots: list[object], game: str, seed: int) -> list[dict[int, str]]:
    from arena.games import get_game

    seats = [local_seat(bot, f"b{i}") for i, bot in enumerate(bots)]  # type: ignore[arg-type]
    record = asyncio.run(referee_match(get_game(game), seats, seed=seed, clock=Clock(5.0)))
    assert record.faults == [] and record.result is not None
    return record.steps


def test_the_search_bots_are_deterministic_for_a_seed_with_a_fixed_number_of_worlds() -> None:
    for game, make, other in (("cabanga", lambda: SearchCabanga(seed=4, worlds=2), GreedyCabanga),
                              ("lama", lambda: SearchLama(seed=4, worlds=3), GreedyLama)):
        runs = [_places([make(), other(), other()], game, seed=11) for _ in range(2)]
        assert runs[0] == runs[1]
        varied = _places([make(), other(), other()], game, seed=12)
        assert varied != runs[0]  # not a constant: another deal, another match


def test_the_search_bots_answer_within_a_short_clock() -> None:
    """With 200 ms a decision and 100 ms to spend, a search stops in time, with worlds searched."""
    bot = SearchCabanga(ms=100)
    state = CABANGA.new_match(4, 5)
    prompt = state.pending()[0]
    bot.on_events(list(state.events))
    bot.on_clock(0.2)
    import time

    start = time.perf_counter()
    choice = bot.play(state.view(prompt.seat), prompt.choices)
    assert time.perf_counter() - start < 0.15 and choice in prompt.choices
    assert bot.report.worlds >= 1


def test_a_state_copies_itself_and_a_game_without_copies_says_so() -> None:
    """clone is the rules' own method (the search toolkit reads no private field of a state); a game whose
    rules do not offer copies refuses with a GameError, not a half-made state."""
    from arena.games import get_game
    from arena.games.base import GameError

    state = get_game("cabanga").new_match(4, 3)
    copy = state.clone()
    assert copy is not state and copy.view(0) == state.view(0) and copy.pending() == state.pending()
    copy.apply({p.seat: (p.choices[0],) if p.pick.value == "one" else () for p in copy.pending()})
    assert copy.view(0) != state.view(0) or copy.pending() != state.pending()  # the original did not move
    goofspiel = get_game("goofspiel").new_match(2, 1)
    with pytest.raises(GameError, match="goofspiel does not offer copies"):
        goofspiel.clone()
