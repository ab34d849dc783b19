"""Conformance checks run over every game and seat count: random playouts that must keep every invariant.

Random legal choices and random throw subsets; at every step every card is in exactly one place, totals
add up, no view holds another seat's hand, the order of a pile or the seed (G2), and the same seed and
decisions give the identical event sequence (G1).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from arena.games import all_games
from arena.games.base import (
    Decision,
    Game,
    MatchOver,
    MatchState,
    RoundScored,
    random_decision,
)

CONFIGS = [(game, seats) for game in all_games() for seats in range(game.min_seats, game.max_seats + 1)]
PLAYOUTS = 250  # per (game, seats): 2,750 in all
STEP_LIMIT = 20_000  # far beyond any real match; a match that reaches it does not end


def _texts(value: Any) -> Any:
    return value.text if hasattr(value, "text") else value


def _lists(node: Any) -> list[list[Any]]:
    """Every list found anywhere in a JSON-ready value."""
    found: list[list[Any]] = []
    if isinstance(node, dict):
        for child in node.values():
            found.extend(_lists(child))
    elif isinstance(node, list):
        found.append(node)
        for child in node:
            found.extend(_lists(child))
    return found


def _scalars(node: Any) -> list[Any]:
    if isinstance(node, dict):
        return [x for child in node.values() for x in _scalars(child)] + list(node)
    if isinstance(node, list):
        return [x for child in node for x in _scalars(child)]
    return [node]


def check_cards_in_one_place(game: Game, state: MatchState) -> None:
    zones = state.zones()
    placed = Counter(card for cards in zones.values() for card in cards)
    deck = Counter(game.deck(state_options(game, state), state.seats))
    assert placed == deck, f"cards not each in exactly one place: {placed - deck} extra, {deck - placed} missing"


def state_options(game: Game, state: MatchState) -> Any:
    return getattr(state, "options", game.options())


def in_deck_order(game: Game, state: MatchState, cards: Sequence[Any]) -> bool:
    """Whether ``cards`` lie in the order of the game's deck, or its reverse: the order in which a view lists a set
    of cards (a hand, the prizes still to come), so a list in it cannot show a pile's order."""
    deck = game.deck(state_options(game, state), state.seats)
    rank = {card: len(deck) - i for i, card in enumerate(reversed(deck))}  # a card's first place in the deck
    ranks = [rank[card] for card in cards]
    return ranks == sorted(ranks) or ranks == sorted(ranks, reverse=True)


def check_view_hides(game: Game, state: MatchState, seat: int) -> None:
    """G2: the view of ``seat`` holds its own hand, and no other hand, the order of a face-down pile (the game's
    ``hidden_order``), or the seed."""
    view = state.view(seat).to_json()
    zones = state.zones()
    own = sorted(c.text for c in zones[f"hand {seat}"])
    lists = [[_texts(x) for x in lst] for lst in _lists(view)]
    assert any(sorted(lst) == own for lst in lists), "the view does not hold the seat's own hand"
    for name, cards in zones.items():
        hand = name.startswith("hand ")
        if name == f"hand {seat}" or len(cards) < 2 or not (hand or name in game.hidden_order):
            continue  # the other zones are public
        secret = [c.text for c in cards]
        if sorted(secret) == own:
            continue  # an identical multiset of cards cannot be told apart
        if not hand and in_deck_order(game, state, cards):
            continue  # the pile's order is the order of the set of its cards, which may be public
        for lst in lists:
            assert lst != secret and lst != secret[::-1], f"seat {seat}'s view shows zone {name!r}: {lst}"
            if hand:
                assert sorted(lst) != sorted(secret), f"seat {seat}'s view shows {name!r}"
    assert state.seed not in _scalars(view), "the view shows the seed"
    assert "seed" not in _scalars(view), "the view has a seed field"


def playout(game: Game, seats: int, seed: int, rng: random.Random, *, checks: bool
            ) -> tuple[list[dict[int, Decision]], list[dict[str, Any]], MatchState]:
    state = game.new_match(seats, seed)
    decisions_log: list[dict[int, Decision]] = []
    for _ in range(STEP_LIMIT):
        if state.over:
            break
        prompts = state.pending()
        assert prompts, "a match that is not over must prompt some seat"
        assert [p.seat for p in prompts] == sorted({p.seat for p in prompts})
        if checks:
            check_cards_in_one_place(game, state)
            for prompt in prompts:
                check_view_hides(game, state, prompt.seat)
        decisions = {p.seat: random_decision(p, rng) for p in prompts}
        decisions_log.append(decisions)
        state.apply(decisions)
    else:
        pytest.fail(f"{game.name} seed {seed}: no end after {STEP_LIMIT} steps")
    assert state.pending() == ()
    if checks:
        check_cards_in_one_place(game, state)
    return decisions_log, [e.to_json() for e in state.events], state


def check_totals_add_up(game: Game, state: MatchState) -> None:
    running = [0] * state.seats
    rounds = 0
    for event in state.events:
        if isinstance(event, RoundScored):
            rounds += 1
            running = [t + p for t, p in zip(running, event.points, strict=True)]
            assert list(event.totals) == running, f"round {event.round}: totals do not add up"
    assert rounds >= 1
    final = state.events[-1]
    assert isinstance(final, MatchOver)
    assert list(final.totals) == running == list(state.totals)
    assert final.places == game.scoring.places(final.totals)  # which way totals count is the game's
    assert state.result is not None and state.result.totals == final.totals


@pytest.mark.parametrize(("game", "seats"), CONFIGS, ids=[f"{g.name}-{n}" for g, n in CONFIGS])
def test_g1_g2_random_playouts_keep_every_invariant(game: Game, seats: int) -> None:
    rng = random.Random(f"conformance/{game.name}/{seats}")
    for i in range(PLAYOUTS):
        seed = 10**12 + rng.randrange(10**9)  # large seeds: a leak of the seed cannot hide as a small count
        # every playout checks totals; one in ten also checks cards and views at every step (the costly part)
        _, _, state = playout(game, seats, seed, rng, checks=i % 10 == 0)
        check_totals_add_up(game, state)


@pytest.mark.parametrize(("game", "seats"), CONFIGS, ids=[f"{g.name}-{n}" for g, n in CONFIGS])
def test_g1_same_seed_and_decisions_give_identical_events(game: Game, seats: int) -> None:
    rng = random.Random(f"determinism/{game.name}/{seats}")
    first_deals = set()
    for _ in range(10):
        seed = rng.randrange(2**32)
        decisions, events, _ = playout(game, seats, seed, rng, checks=False)
        again = game.new_match(seats, seed)
        # every zone in its order: the seed may deal the hands (Cabanga!) or only shuffle a pile (Goofspiel)
        first_deals.add(tuple((name, tuple(c.text for c in cards)) for name, cards in again.zones().items()))
        for step in decisions:
            again.apply(step)
        assert [e.to_json() for e in again.events] == events
    assert len(first_deals) > 1, "ten seeds dealt the same cards: the seed is not used"


def test_design_rules_core_does_no_io() -> None:
    """STYLE.md 1: arena/games imports no grpc, asyncio, subprocess, click, sqlite3 or generated code (its bundled
    example bots, each game's ``bots`` folder, are programs that use the SDK, not the core)."""
    import ast
    import pathlib

    import arena.games

    banned = {"grpc", "asyncio", "subprocess", "click", "sqlite3", "socket", "os", "io", "arena.v2"}
    root = pathlib.Path(arena.games.__file__).parent
    files = sorted(f for f in root.rglob("*.py") if "bots" not in f.relative_to(root).parts)
    assert len(files) >= 4 and any(f.name == "rules.py" for f in files)
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not any(name == b or name.startswith(b + ".") for b in banned), f"{path.name} imports {name}"
                if name.startswith("arena"):
                    assert name.startswith("arena.games"), f"{path.name} imports {name} from outside the core"
