"""The hard house bots' parts (issue 36): packed Cabanga! worlds and their sampler, the packed rollout against
the engine, the opponent models of the three games, the searches of plays and sealed throws, and the clock.

Each test names what a planted mistake would break: a sampler that deals a played card or ignores an inference,
a rollout that draws or throws otherwise than the engine, a model that does not move when its seat plays, a
search that runs past its clock.
"""

from __future__ import annotations

import asyncio
import random
import signal
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.core.referee import Clock, referee_match
from arena.games.base import Decision, Game, MatchInfo, MatchState, Prompt
from arena.games.bot import Bot
from arena.games.cabanga import CABANGA, CabangaState, Card, PlayCard, Side
from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
from arena.games.cabanga.bots.hard.bot import HardCabanga
from arena.games.cabanga.search import (
    _INT_OF,
    CabangaKnowledge,
    CabangaModel,
    PackedWorld,
    PlanCache,
    SeatPolicy,
    WorldSampler,
    hard_search,
    knowledge_from,
    pack,
    pack_world,
    playout,
    rollout,
    rollout_throw,
    throw_options,
)
from arena.games.cabanga.search import greedy_policy as cabanga_greedy
from arena.games.goofspiel import GOOFSPIEL
from arena.games.goofspiel.bots.hard.bot import HardGoofspiel
from arena.games.goofspiel.bots.matcher.bot import MatcherGoofspiel
from arena.games.goofspiel.search import BidModel, plan_mirror, plan_overbid
from arena.games.lama import LAMA, LamaState
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.games.lama.bots.hard.bot import HardLama
from arena.games.lama.search import LamaModel, greedy_policy, quitting_policy
from arena.games.search import Policy, SearchClock, told_events
from arena.sdk import local_seat

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALL_CARDS = Counter(range(72))


def after(seats: int, seed: int, steps: int) -> CabangaState:
    """A Cabanga! match played ``steps`` steps on by greedy seats (which throw every card they may)."""
    state = CABANGA.new_match(seats, seed)
    assert isinstance(state, CabangaState)
    for _ in range(steps):
        if state.over:
            break
        state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
    return state


def cards_of(masks: list[int]) -> list[int]:
    """The card ints of a hand given as four row masks."""
    return [row * 18 + v - 1 for row, mask in enumerate(masks) for v in range(1, 19) if mask >> v & 1]


def hidden_of(world: PackedWorld, seat: int) -> Counter[int]:
    """The card ints ``seat`` cannot see in a packed world: other hands, the penalty pile, the set-aside cards."""
    cards = Counter(c for s, masks in enumerate(world.hands) if s != seat for c in cards_of(masks))
    cards.update(world.penalty)
    cards.update(world.aside)
    return cards


def hidden_in(state: CabangaState, seat: int) -> Counter[int]:
    cards = Counter(_INT_OF[c] for s, hand in enumerate(state._hands) if s != seat for c in hand)
    cards.update(_INT_OF[c] for c in state._penalty)
    cards.update(_INT_OF[c] for c in state._set_aside)
    return cards


# ------------------------------------------------------------------------------------------ the sampler


@SETTINGS
@given(seats=st.integers(3, 6), seed=st.integers(0, 10_000), steps=st.integers(0, 400), pick=st.integers(0, 5))
def test_g2_c10_c13_a_packed_world_agrees_with_every_public_event(seats: int, seed: int, steps: int,
                                                                  pick: int) -> None:
    """A packed world shows the seat its own hand, every hand size, the tops, the totals and the step of its view
    (G2); it hides exactly the cards the real match hides (none played, none twice: the 72 cards are all
    somewhere); no seat holds a card of a gap it let pass beyond the cards it drew since (C10); a rebuilt penalty
    pile holds only cards it was rebuilt from (C13)."""
    state = after(seats, seed, steps)
    if state.over:
        return
    prompts = state.pending()
    seat = prompts[pick % len(prompts)].seat
    view = state.view(seat)
    knowledge = knowledge_from(state, seat)
    sampler = WorldSampler(view, knowledge)
    rng = random.Random(seed)
    real = pack_world(state)
    for _ in range(5):
        world = sampler.sample(rng)
        assert world.hands[seat] == real.hands[seat] and world.sizes == real.sizes
        assert [sum(m.bit_count() for m in masks) for masks in world.hands] == world.sizes
        assert (world.tops, world.totals, world.active, world.previous) == (real.tops, real.totals, real.active,
                                                                            real.previous)
        assert (world.throw, world.row, world.owed) == (real.throw, real.row, real.owed)
        assert hidden_of(world, seat) == hidden_in(state, seat)
        assert len(world.penalty) == len(state._penalty) and len(world.aside) == len(state._set_aside)
        for s in range(seats):
            if s != seat:
                held = {CABANGA_CARDS[c] for c in cards_of(world.hands[s])}
                assert len(held & knowledge.cannot_hold[s]) <= knowledge.free[s]
        if knowledge.pool is not None:
            assert {CABANGA_CARDS[c] for c in world.penalty} <= knowledge.pool
    assert sampler.relaxed == 0  # the inference is sound against greedy seats: it never has to be dropped


CABANGA_CARDS = {i: c for c, i in _INT_OF.items()}


def test_c13_after_a_reshuffle_a_packed_world_draws_only_from_the_rebuilt_pile() -> None:
    """Six greedy seats, 98 steps in: the penalty pile was rebuilt from 24 set-aside cards and 18 are left; every
    packed world's pile is 18 of those 24, and the other cards the seat cannot see are in the hands."""
    state = after(6, 0, 98)
    seat = state.pending()[0].seat
    knowledge = knowledge_from(state, seat)
    assert knowledge.pool is not None and len(knowledge.pool) == 24 and len(state._penalty) == 18
    sampler = WorldSampler(state.view(seat), knowledge)
    rng = random.Random(2)
    pool = {_INT_OF[c] for c in knowledge.pool}
    for _ in range(50):
        world = sampler.sample(rng)
        assert len(world.penalty) == 18 and set(world.penalty) <= pool
        assert hidden_of(world, seat) == hidden_in(state, seat)


def test_c10_an_untrusted_seat_may_hold_the_cards_of_a_gap_it_let_pass() -> None:
    """With seat 1 trusted, no world gives it R11 (it threw nothing into the gap R11); untrusted (a seat seen
    keeping cards back), some worlds do, as often as the cards' count says."""
    state = CabangaState.arranged([["R10", "Y5"], ["B3", "B4", "P6"], ["R5", "Y9", "P10"]],
                                  tops=["G1", "G12", "G3", "G14", "G5", "G16", "G7", "G18"])
    state.apply({0: (state.pending()[0].choices[0],)})  # R10 onto the left pile: only R11 lies between
    while not state.over and state.pending()[0].kind == "throw":
        state.apply({p.seat: p.choices for p in state.pending()})
    knowledge = knowledge_from(state, 0)
    r11 = _INT_OF[Card.parse("R11")]
    for trusted, expect in (([True, True, True], False), ([True, False, True], True)):
        sampler = WorldSampler(state.view(0), knowledge, trusted)
        rng = random.Random(4)
        got = any(r11 in cards_of(sampler.sample(rng).hands[1]) for _ in range(200))
        assert got is expect


# ------------------------------------------------------------------------------------------ the rollout


@pytest.mark.parametrize(("seats", "seed", "steps", "horizon"),
                         [(3, 1, 0, 100_000), (4, 2, 30, 100_000), (5, 3, 61, 7), (6, 4, 90, 100_000),
                          (3, 7, 150, 3), (4, 9, 77, 100_000)])
def test_c8_c15_the_packed_rollout_is_the_engines_own_play(seats: int, seed: int, steps: int, horizon: int) -> None:
    """With every seat greedy and the pile in its order, the packed rollout plays, throws, draws and reshuffles
    as the engine does (through :func:`playout`, checked against the engine in tests/test_search.py): the same
    steps and the same standings for every first play."""
    state = after(seats, seed, steps)
    while state.pending()[0].kind != "play":
        state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
    greedy = [SeatPolicy()] * seats
    cache = PlanCache(state.options.symbols)
    for play in state.pending()[0].choices:
        assert isinstance(play, PlayCard)
        reference = playout(pack(state), play, random.Random(11), horizon)
        packed = rollout(pack_world(state), (_INT_OF[play.card], play.side is Side.RIGHT), greedy, cache,
                         random.Random(11), horizon)
        assert packed == reference


@given(st.integers(1, 18), st.integers(1, 18), st.integers(1, (1 << 19) - 2),
       st.lists(st.integers(1, 3), min_size=18, max_size=18), st.booleans())
@settings(max_examples=200, deadline=None)
def test_c8_the_greedy_rows_shortcut_is_trying_every_play(left: int, right: int, mask: int, symbols: list[int],
                                                         default_symbols: bool) -> None:
    """The greedy plan's best play in a row found without trying every play (:func:`greedy_row`: the nearest
    value below or above each top, runs of the hand's values, ties to the most symbols, then the lower value and
    the left pile) is the one trying every play finds, in the engine's order of choices."""
    from arena.games.cabanga.search import greedy_row

    mask &= ~1  # bit 0 is no value
    if not mask:
        mask = 1 << 9
    table = CABANGA.options({}).symbols if default_symbols else tuple(symbols)
    cache = PlanCache(table)
    assert greedy_row(left, right, mask, cache.by_value) == cache.tried_row(left, right, mask, False)


def test_c10_c12_a_throw_rollout_throws_what_it_is_told_and_others_by_their_policy() -> None:
    """At a THROW step: throwing its gap card sheds its symbols from the seat's standing and gives the player a
    draw; a seat whose policy never throws keeps its cards."""
    state = CabangaState.arranged([["R10", "Y5", "B9"], ["R11", "B4", "P6"], ["R13", "Y9",
                                                                            "P10"]],
                                  tops=["G1", "G14", "G3", "G12", "G5", "G16", "G7", "G18"])
    state.apply({0: (PlayCard.parse("R10:left"),)})  # R 10|14: R11..R13 lie between
    assert state.pending()[0].kind == "throw"
    world = pack_world(state)
    cache = PlanCache(state.options.symbols)
    r11 = 1 << 11
    never = [SeatPolicy(), SeatPolicy(), SeatPolicy(throw=0.0)]
    kept = rollout_throw(world, 1, 0, never, cache, random.Random(1), max_steps=0)
    thrown = rollout_throw(world, 1, r11, never, cache, random.Random(1), max_steps=0)
    symbols = state.options.symbols
    assert kept[1][1] - thrown[1][1] == symbols[10]  # R11 left seat 1's hand
    assert thrown[1][0] - kept[1][0] >= 0  # seat 0 drew one card more (its standing cannot fall)
    assert kept[1][2] == thrown[1][2] == world.totals[2] + sum(symbols[v - 1] for v in (13, 9, 10))


def test_c9_c10_the_worlds_plan_opens_the_gaps_no_other_seat_of_the_world_can_fill() -> None:
    """The world's plan (``SeatPolicy(exact=True)``) costs a play the cards of the gap it opens that the other
    seats hold in the world, times their throwing chances, plus one for a repeated colour (C9); on a tie the most
    symbols, then LEFT before RIGHT. Own hand R4 R16 B5, tops R 2|18 and B 4|6."""
    from arena.games.cabanga.search import exact_row

    by_value = PlanCache(CABANGA.options({}).symbols).by_value
    tops = [2, 18, 4, 6, 1, 18, 1, 18]
    r = [1 << 4 | 1 << 16, 1 << 5, 0, 0]

    def play(seat1_red: list[int], throw1: float = 1.0, previous: int = -1) -> tuple[int, int, bool]:
        held = 0
        for v in seat1_red:
            held |= 1 << v
        hands = [r, [held, 0, 0, 0], [0, 0, 0, 0]]
        return exact_row(hands, 0, (1, 2), tops, previous, [1.0, throw1, 1.0], by_value)

    assert play([]) == (0, 16, False)  # nothing to fill: the most symbols (R16), LEFT first
    assert play([17]) == (0, 16, True)  # R17 out: R16 on the right pile, opening 3..15 (nobody's)
    assert play([17, 10]) == (0, 4, True)  # R16's gaps both held: R4 beside R2 opens none
    assert play([17, 10], throw1=0.0) == (0, 16, False)  # a seat that never throws fills no gap
    assert play([], previous=0) == (1, 5, False)  # red again owes a card: B5 closes B 4|6 for nothing


# ------------------------------------------------------------------------------------- the opponent model


def never_throws(state: MatchState, prompt: Prompt) -> Decision:
    return () if prompt.kind == "throw" else cabanga_greedy(state, prompt)


def sheds(state: MatchState, prompt: Prompt) -> Decision:
    """Play the costliest card wherever it opens the widest gap; throw everything."""
    if prompt.kind == "throw":
        return prompt.choices
    assert isinstance(state, CabangaState)
    symbols = state.options.symbols

    def key(play: PlayCard) -> tuple[int, int]:
        row = ["R", "B", "P", "Y"].index(play.card.text[0])
        other = state._piles[2 * row + (play.side is Side.LEFT)][-1].value
        return symbols[play.card.value - 1], abs(other - play.card.value)

    plays = [play for play in prompt.choices if isinstance(play, PlayCard)]
    return (max(plays, key=key),)


def test_the_cabanga_model_learns_who_throws_and_who_sheds_as_they_play() -> None:
    """Seat 1 never throws, seat 2 sheds its costliest cards, seat 0 (the observer) and seat 3 are greedy: after
    a match, seat 1's throwing chance is below 1 and it is not trusted, seat 2's dumping chance is above seat 3's
    and seat 3 is trusted to throw everything; before any play every seat is taken as greedy."""
    state = CABANGA.new_match(4, 3)
    assert isinstance(state, CabangaState)
    policies: list[Policy] = [cabanga_greedy, never_throws, sheds, cabanga_greedy]
    knowledge, model = CabangaKnowledge(0, 4), CabangaModel(0, 4)
    assert model.trusted() == [True] * 4 and [model.dump_rate(s) for s in range(4)] == [0.0] * 4
    seen = 0
    rates = []
    while not state.over:
        told = told_events(state, 0)
        model.observe(told[seen:], knowledge, tuple(state._hands[0]))
        seen = len(told)
        rates.append(model.throw_rate(1))
        state.apply({p.seat: policies[p.seat](state, p) for p in state.pending()})
    assert rates[0] == 1.0 and rates[-1] < 0.7
    assert model.trusted() == [True, False, True, True]
    assert model.dump_rate(2) > model.dump_rate(3) + 0.1
    rollouts = model.policies()
    assert rollouts[1].throw == model.throw_rate(1) and rollouts[3].throw == 1.0
    assert knowledge.played or knowledge.aside or state.over  # the knowledge saw the events too


def test_g2_the_cabanga_model_tells_the_worlds_that_made_each_seats_last_play_from_those_that_did_not() -> None:
    """Every seat greedy: the true world (packed from the engine's state) always fits every seat's last play
    (:meth:`CabangaModel.fit` 1), its hand then rebuilt from its hand now, its play and its throws; worlds dealt
    only from what seat 0 may know do not always (``miss`` then); and a seat that drew since is not judged."""
    from arena.games.cabanga.search import _gap_factor

    rng = random.Random(2)
    judged = rebuilt = 0
    sampled: list[float] = []
    for seats, seed in ((3, 5), (4, 6), (5, 7), (4, 8)):
        state = CABANGA.new_match(seats, seed)
        assert isinstance(state, CabangaState)
        knowledge, model = CabangaKnowledge(0, seats), CabangaModel(0, seats)
        cache = PlanCache(state.options.symbols)
        seen = 0
        then: dict[int, tuple[list[int], list[int], int, float]] = {}  # seat: its hand, tops, previous row, factor
        while not state.over:
            told = told_events(state, 0)
            model.observe(told[seen:], knowledge, tuple(state._hands[0]))
            seen = len(told)
            prompt = state.pending()[0]
            if prompt.kind == "play" and prompt.seat == 0 and any(last is not None for last in model.last):
                judged += 1
                world = pack_world(state)
                assert model.fit(world, cache, 0.25) == 1.0
                for s, last in enumerate(model.last):
                    if last is not None and s in then:
                        rebuilt += bool(model.thrown_since[s])
                        hand, tops, previous, factor = then[s]
                        assert model.hand_then(world, s) == hand
                        assert (last[0], last[1], last[5]) == (tops, previous, pytest.approx(factor))
                sampler = WorldSampler(state.view(0), knowledge, model.trusted())
                sampled += [model.fit(sampler.sample(rng), cache, 0.25) for _ in range(4)]
            if prompt.kind == "play":
                packed = pack_world(state)
                then[prompt.seat] = (packed.hands[prompt.seat], packed.tops, packed.previous,
                                     _gap_factor(state.view(prompt.seat)))
            state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
    assert judged >= 40 and rebuilt >= 5
    assert 0.0 < sum(f < 1.0 for f in sampled) < len(sampled)
    assert set(sampled) <= {0.25 ** k for k in range(5)}


def test_the_lama_model_learns_an_early_quitter() -> None:
    """A seat that quits with a full hand is played in rollouts by the quitting policy once seen twice."""
    from arena.games.lama.rules import Quit, RoundStarted

    model = LamaModel(0, 3)
    assert model.policies() == [greedy_policy] * 3
    model.observe([RoundStarted(1, 0, LAMA_DISCARD, 6), Quit(1)])
    assert model.policies()[1] is greedy_policy
    model.observe([RoundStarted(2, 1, LAMA_DISCARD, 6), Quit(1), Quit(2)])
    assert model.policies() == [greedy_policy, quitting_policy, greedy_policy]


LAMA_DISCARD = LAMA.new_match(2, 1).view(0).discard


def test_l10_l12_the_lama_search_by_match_odds_scores_a_match_it_ends_by_places() -> None:
    """With the match odds as its utility, a turn that empties the hand and so ends the match (the chip given
    back, L10; the other seat past 40, L12) is worth exactly 1, the pairwise score of the place it wins, in every
    sampled world; by the round's points it is worth the points gained on the other seat instead."""
    import random

    from arena.games.lama.search import SearchReport, knowledge_from, pimc_turn
    from arena.games.search import MatchOdds

    state = LamaState.arranged(hands=["L3", "L5 L6"], discard="L3", totals=[38, 39])
    view, prompt = state.view(0), state.pending()[0]
    means = []
    for odds in (MatchOdds(40, 11.0, 8.0), None):
        report = SearchReport()
        pimc_turn(view, prompt.choices, knowledge_from(state, 0), random.Random(1),  # type: ignore[arg-type]
                  SearchClock(1e9), max_worlds=6, report=report, odds=odds)
        means.append(report.means)
    assert means[0]["L3"] == 1.0 and 0.0 <= means[0]["quit"] < 1.0
    assert means[1]["L3"] > 10.0  # the chip back and the other seat's hand
    bot = HardLama(worlds=6)  # the shipped bot values rounds by the match odds
    assert bot.turn(view, prompt.choices).text == "L3"  # type: ignore[arg-type]
    assert bot.report.means["L3"] == 1.0


def test_l6_l7_the_lama_search_keeps_the_plans_turn_unless_another_is_clearly_better() -> None:
    """With ``prefer_first`` the first candidate is the quit-at-10 plan's turn (quit, at 5 points with nothing to
    play, where the greedy plan draws) and a better mean by less than that many standard errors of the paired
    difference does not displace it; without, the better mean wins."""
    import random

    from arena.games.lama.search import SearchReport, knowledge_from, pimc_turn, quit_at_policy

    state = LamaState.arranged(hands=["L5 L5", "L3 L4 L5 L6 LL LL"], discard="L2")
    view, prompt = state.view(0), state.pending()[0]
    chosen = []
    for prefer in (None, 0.0, 1e9):
        report = SearchReport()
        chosen.append(pimc_turn(view, prompt.choices, knowledge_from(state, 0), random.Random(1),  # type: ignore[arg-type]
                                SearchClock(1e9), max_worlds=30, report=report, policies=quit_at_policy(10),
                                quit_at=10, prefer_first=prefer).text)
        assert report.means["draw"] > report.means["quit"]  # the same worlds each time: drawing did better
        assert next(iter(report.means)) == ("quit" if prefer is not None else "draw")
    assert chosen == ["draw", "draw", "quit"]


def greedy_lama_turns(matches: int) -> Iterator[tuple[LamaState, Prompt]]:
    """Yield every turn of ``matches`` two-seat L.A.M.A. matches (seeds 0, 1, ...) that the greedy plan plays, each
    before it is played."""
    for seed in range(matches):
        state = LAMA.new_match(2, seed)
        assert isinstance(state, LamaState)
        while not state.over:
            prompt = state.pending()[0]
            yield state, prompt
            state.apply({prompt.seat: greedy_policy(state, prompt)})


def test_l5_l6_the_quit_at_plan_quits_where_the_greedy_plan_draws_and_plays_as_it_does() -> None:
    """The own seat's rollout plan with a higher quitting bar (:func:`quit_at_policy`): a hand of 4 to 10 points
    that cannot play quits instead of drawing; any hand that can play plays the greedy plan's card."""
    from arena.games.lama.search import quit_at_policy

    plan = quit_at_policy(10)
    seen: Counter[str] = Counter()
    for state, prompt in greedy_lama_turns(40):
        mine, greedy = plan(state, prompt), greedy_policy(state, prompt)
        points = sum(10 if v == 7 else v for v in range(1, 8) if state._hands[prompt.seat][v])
        if greedy[0].text == "draw" and points <= 10:
            assert mine[0].text == "quit"
            seen["quit"] += 1
        else:
            assert mine == greedy
            seen["same"] += 1
    assert seen["quit"] > 0 and seen["same"] > 0
    assert LamaModel(0, 2, own_quit_at=10).policies()[1] is greedy_policy


def test_l4_the_keep_top_plan_plays_the_tops_value_whenever_it_may_and_the_search_starts_from_it() -> None:
    """The hard bot's own rollout plan (:func:`quit_at_policy` with ``keep_top``): where a card of the top's value
    may be played it plays one (where the greedy plan may play the card one higher instead), else it plays, draws
    and quits as the quit-at-10 plan does; the search's first candidate is that plan's turn."""
    import random

    from arena.games.lama.search import SearchReport, knowledge_from, pimc_turn, quit_at_policy

    plan, bar = quit_at_policy(10, keep_top=True), quit_at_policy(10)
    own = LamaModel(0, 2, own_quit_at=10, keep_top=True).policies()[0]
    seen: Counter[str] = Counter()
    for state, prompt in greedy_lama_turns(40):
        mine, other = plan(state, prompt), bar(state, prompt)
        assert own(state, prompt) == mine
        top = state._top
        if any(getattr(c, "value", None) == top for c in prompt.choices):
            assert getattr(mine[0], "value", None) == top
            seen["kept" if mine != other else "same play"] += 1
        else:
            assert mine == other
            seen["as the bar"] += 1
    assert seen["kept"] > 0 and seen["same play"] > 0 and seen["as the bar"] > 0

    state = LamaState.arranged(hands=["L3 L4 L4", "L1 L2 L5 L6 LL LL"], discard="L3")
    view, prompt = state.view(0), state.pending()[0]
    chosen = []
    for keep in (False, True):
        report = SearchReport()
        chosen.append(pimc_turn(view, prompt.choices, knowledge_from(state, 0), random.Random(1),  # type: ignore[arg-type]
                                SearchClock(1e9), max_worlds=10, report=report, quit_at=10, prefer_first=1e9,
                                keep_top=keep).text)
        assert next(iter(report.means)) == chosen[-1]
    assert chosen == ["L4", "L3"]  # the greedy plan plays the value it holds most of; the keep-top plan the top's


def test_the_goofspiel_model_finds_the_plan_a_seat_bids_by() -> None:
    """After a few bids of the prize's value, the mirror plan outweighs the others, and the overbid plan after
    bids one above."""
    for plan in (plan_mirror, plan_overbid):
        model = BidModel(2)
        hand = list(range(1, 14))
        to_come = list(range(1, 14))
        for prize in (5, 9, 2, 11):
            to_come.remove(prize)
            bid = plan(prize, 0, hand, to_come, [13])
            model.seen(1, bid, prize, 0, hand, to_come, [13])
            hand.remove(bid)
        weights = model.weights[1]
        from arena.games.goofspiel.search import PLANS

        assert max(range(len(weights)), key=weights.__getitem__) == PLANS.index(plan)


# ------------------------------------------------------------------------------------- search and clock


class CountingClock(SearchClock):
    """A clock that expires after ``checks`` looks: the search must stop at the first look that says so."""

    def __init__(self, checks: int) -> None:
        super().__init__(1e9)
        self.checks = checks
        self.looks = 0

    def expired(self) -> bool:
        self.looks += 1
        return self.looks > self.checks


def _overrun(signum: int, frame: object) -> None:
    raise TimeoutError("the search ran 20 s past an expired clock")


@pytest.mark.parametrize("kind", ["determinized", "ismcts"])
def test_the_hard_search_stops_at_the_first_expired_look_of_its_clock(kind: str) -> None:
    """The search looks at its clock after every rollout (ISMCTS: every iteration, one rollout each) and stops at
    once: the rollouts played are the looks."""
    from arena.games.cabanga.search import SearchReport, ismcts_search, ranked_plays

    search = hard_search if kind == "determinized" else ismcts_search

    state = after(4, 8, 21)
    while state.pending()[0].kind != "play":
        state.apply({p.seat: cabanga_greedy(state, p) for p in state.pending()})
    prompt = state.pending()[0]
    view = state.view(prompt.seat)
    plays = ranked_plays(view, [p for p in prompt.choices if isinstance(p, PlayCard)], state.options.symbols)
    for checks in (0, 5, 40):
        clock = CountingClock(checks)
        report = SearchReport()
        signal.signal(signal.SIGALRM, _overrun)
        signal.alarm(20)  # a search that never looks at its clock fails here instead of running on
        try:
            choice = search(view, plays, knowledge_from(state, prompt.seat), CabangaModel(prompt.seat, 4),
                            random.Random(1), clock, PlanCache(state.options.symbols), report=report)
        finally:
            signal.alarm(0)
        assert 0 <= choice < len(plays)
        assert report.rollouts == checks + 1 == clock.looks


@pytest.mark.parametrize(("left", "deadline", "share"), [(1.0, 1.0, 0.4), (0.2, 1.0, 0.4), (1.0, 1.0, 0.9),
                                                         (3.0, 1.0, 0.4), (0.02, 1.0, 0.4)])
def test_the_clock_spends_its_share_of_the_deadline_and_never_the_margin(left: float, deadline: float,
                                                                         share: float) -> None:
    """The budget is at most the share of the deadline (plus 1/20 of a bank) and leaves 30 ms of what is left."""
    clock = SearchClock(1e9, share=share)
    budget = clock.start(left, deadline)
    bank = max(0.0, left - deadline)
    assert budget <= share * min(deadline, left) + bank / 20 + 1e-9
    assert budget <= max(0.0, left - 0.03) + 1e-9
    assert budget == pytest.approx(max(0.0, min(share * min(deadline, left) + bank / 20, left - 0.03)))


@pytest.mark.parametrize("told", ["deadline", "clock", "neither"])
def test_a_search_bot_searches_its_share_of_what_it_was_told(told: str) -> None:
    """Told the match's deadline at its start, the time a request allows, or neither (an in-process seat), each
    hard and medium bot budgets its decision by what it knows: the share of that time (and at most its own cap),
    the arena's default deadline (1 s) when it knows nothing. A bot told only the deadline must not search
    unbounded (the hard bots did) or past that deadline (the medium ones did, at their 100 ms cap)."""
    from arena.games.cabanga.bots.search.bot import SearchCabanga
    from arena.games.lama.bots.search.bot import SearchLama

    deadline = 0.05
    cases: list[tuple[Game, Bot, int]] = [(CABANGA, HardCabanga(worlds=2), 3), (LAMA, HardLama(worlds=2), 2),
                                          (GOOFSPIEL, HardGoofspiel(rollouts=2), 2),
                                          (CABANGA, SearchCabanga(worlds=2), 3), (LAMA, SearchLama(worlds=2), 2)]
    for game, bot, seats in cases:
        state = game.new_match(seats, 5)
        prompt = state.pending()[0]
        if told == "deadline":
            bot.on_match_start(MatchInfo("m", game.name, prompt.seat, ("a", "b", "c")[:seats], {},
                                         Clock(deadline), 3))
        elif told == "clock":
            bot.on_clock(deadline)
        decision = bot.decide(prompt, state.view(prompt.seat))
        prompt.check(decision)
        clock = bot.clock  # type: ignore[attr-defined]
        allowed = 1.0 if told == "neither" else deadline
        assert clock.budget == pytest.approx(min(clock.ms / 1000, 0.4 * allowed, allowed - 0.03)), \
            (type(bot).__name__, told)


def test_the_hard_cabanga_bot_searches_throws_and_keeps_to_its_choices() -> None:
    """Asked to throw, the hard bot answers one of the throws it weighs (all, none, all but one), having searched."""
    state = CabangaState.arranged([["R10", "Y5", "B9"], ["R11", "R12", "P6"], ["R13", "Y9", "P10"]],
                                  tops=["G1", "G14", "G3", "G12", "G5", "G16", "G7", "G18"])
    state.apply({0: (PlayCard.parse("R10:left"),)})
    prompt = next(p for p in state.pending() if p.seat == 1)
    view = state.view(1)
    bot = HardCabanga(worlds=30)
    answer = tuple(bot.throw(view, prompt.choices))  # type: ignore[arg-type]
    assert answer in throw_options(view, prompt.choices)  # type: ignore[arg-type]
    assert set(throw_options(view, prompt.choices)) >= {(), tuple(prompt.choices)}  # type: ignore[arg-type]
    assert bot.report.worlds == 30 and bot.report.rollouts > 30


def test_the_ismcts_variant_plays_whole_matches_and_weighs_throws_in_its_tree() -> None:
    """ISMCTS (``--ismcts``) answers a throw with one of the throws it weighs, its iterations counted, and plays a
    match to its end without a fault."""
    state = CabangaState.arranged([["R10", "Y5", "B9"], ["R11", "R12", "P6"], ["R13", "Y9", "P10"]],
                                  tops=["G1", "G14", "G3", "G12", "G5", "G16", "G7", "G18"])
    state.apply({0: (PlayCard.parse("R10:left"),)})
    prompt = next(p for p in state.pending() if p.seat == 1)
    view = state.view(1)
    bot = HardCabanga(ismcts=True, iterations=40)
    answer = tuple(bot.throw(view, prompt.choices))  # type: ignore[arg-type]
    assert answer in throw_options(view, prompt.choices)  # type: ignore[arg-type]
    assert bot.report.rollouts == 40 and set(bot.report.means) == {str(i) for i in range(len(bot.report.means))}
    assert len(bot.report.means) == len(throw_options(view, prompt.choices))  # type: ignore[arg-type]
    _match([HardCabanga(seed=2, ismcts=True, iterations=20), GreedyCabanga(), GreedyCabanga()], CABANGA, seed=5)


def _match(bots: Sequence[Bot], game: Game, seed: int) -> list[dict[int, str]]:
    seats = [local_seat(bot, f"b{i}") for i, bot in enumerate(bots)]
    record = asyncio.run(referee_match(game, seats, seed=seed, clock=Clock(5.0)))
    assert record.faults == [] and record.result is not None
    return record.steps


def test_the_hard_cabanga_bot_with_the_worlds_plan_for_its_own_turns_plays_whole_matches() -> None:
    """``own_exact``: its own later turns in the rollouts by the world's plan; a whole match without a fault, and
    not the match the greedy plan's rollouts play."""
    runs = [_match([HardCabanga(seed=3, worlds=6, own_exact=exact), GreedyCabanga(), GreedyCabanga()], CABANGA,
                   seed=8) for exact in (False, True)]
    assert runs[0] != runs[1]


def test_c14_the_hard_search_cuts_its_rollouts_at_the_horizon_it_is_given() -> None:
    """``horizon``: no rollout runs past that many steps (scored by the standings then); without it a rollout
    plays the round out, which takes longer from the round's first play."""
    state = CABANGA.new_match(3, 4)
    assert isinstance(state, CabangaState)
    prompt = state.pending()[0]
    mean_steps = []
    for horizon in (3, 100_000):
        bot = HardCabanga(worlds=10, horizon=horizon)
        bot.play(state.view(prompt.seat), prompt.choices)  # type: ignore[arg-type]
        assert bot.report.rollouts >= 20
        mean_steps.append(bot.report.steps / bot.report.rollouts)
    assert mean_steps[0] <= 3 + 1 < mean_steps[1]


def test_the_hard_bots_are_deterministic_for_a_seed_with_a_fixed_search() -> None:
    """Same seed, same number of worlds: the same match; another deal: another match."""
    cases: list[tuple[Game, Callable[[], Bot], Callable[[], Bot]]] = [
        (CABANGA, lambda: HardCabanga(seed=4, worlds=3), GreedyCabanga),
        (LAMA, lambda: HardLama(seed=4, worlds=3), GreedyLama),
        (GOOFSPIEL, lambda: HardGoofspiel(seed=4, rollouts=3), MatcherGoofspiel)]
    for game, make, other in cases:
        seats = 3 if game is CABANGA else 2
        runs = [_match([make(), *(other() for _ in range(seats - 1))], game, seed=11) for _ in range(2)]
        assert runs[0] == runs[1]
        assert _match([make(), *(other() for _ in range(seats - 1))], game, seed=12) != runs[0]


# ------------------------------------------------------------------------------------------------ names


def test_the_house_levels_are_bundled_and_the_old_names_find_them_for_a_release(tmp_path: Path) -> None:
    """Every game lists its three levels first, hard first; an old name in an author's list finds the bot it
    became (under the old name), and a name that never was one is still an error."""
    from arena.games import bot_list, game_names
    from arena.launch.botlist import BotListError, bundled_aliases, bundled_bots, load_bot_list, parse_bot_list

    for game in game_names():
        path = bot_list(game)
        assert path is not None
        names = [bot.name for bot in load_bot_list(path)]
        assert names[:3] == [f"{game}-hard", f"{game}-medium", f"{game}-easy"]
    known = bundled_bots()
    aliases = bundled_aliases()
    assert aliases["cabanga-search"] == "cabanga-medium" and aliases["lama-search"] == "lama-medium"
    for old, new in aliases.items():
        assert old not in known and new in known
        (bot,) = parse_bot_list({"bot": [{"bundled": old}]}, tmp_path)
        assert (bot.name, bot.command) == (old, known[new].command)
    with pytest.raises(BotListError, match="'cabanga-nothing'"):
        parse_bot_list({"bot": [{"bundled": "cabanga-nothing"}]}, tmp_path)
