"""The example bots: the heuristic ones clearly beat the random one (in-process, seeded, so deterministic)."""

from __future__ import annotations

import asyncio

import pytest

from arena.core.referee import referee_match
from arena.games import bot_list, game_names, get_game
from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
from arena.games.cabanga.bots.random.bot import RandomCabanga
from arena.games.goofspiel.bots.matcher.bot import MatcherGoofspiel
from arena.games.goofspiel.bots.random.bot import RandomGoofspiel
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.games.lama.bots.random.bot import RandomLama
from arena.games.lama.bots.steady.bot import SteadyLama
from arena.launch.botlist import load_bot_list
from arena.sdk import Bot, local_seat


def win_rate(game_name: str, make: type[Bot], random_bot: type[Bot], matches: int) -> float:
    """Share of ``matches`` 4-seat matches won (shared wins count) by one ``make()`` against three random bots."""
    game = get_game(game_name)
    wins = 0
    for i in range(matches):
        seat = i % 4
        seats = [local_seat(random_bot(100 * i + s), f"r{s}") for s in range(4)]  # type: ignore[call-arg]
        seats[seat] = local_seat(make(), "hero")
        record = asyncio.run(referee_match(game, seats, seed=i))
        assert record.result is not None and record.faults == []
        wins += record.result.places[seat] == 1
    return wins / matches


@pytest.mark.parametrize(("game", "hero", "random_bot"), [
    ("cabanga", GreedyCabanga, RandomCabanga),
    ("lama", GreedyLama, RandomLama),
    ("lama", SteadyLama, RandomLama),
    ("goofspiel", MatcherGoofspiel, RandomGoofspiel),
])
def test_heuristic_bot_clearly_beats_random(game: str, hero: type[Bot], random_bot: type[Bot]) -> None:
    # a random seat wins about a quarter of 4-seat matches; these win most (benchmarks/bot_strength.py)
    assert win_rate(game, hero, random_bot, 40) >= 0.6


@pytest.mark.parametrize("game", game_names())
def test_bundled_bot_lists_name_runnable_modules(game: str) -> None:
    from pathlib import Path

    path = bot_list(game)  # the game ships its bundled bots in its folder: arena/games/GAME/bots/
    assert path == Path(__file__).resolve().parent.parent / "arena" / "games" / game / "bots" / "bots.toml"
    bots = load_bot_list(path)
    assert len(bots) >= 4  # enough for the default 4-seat ladder
    for bot in bots:
        assert bot.command[:2] == ("{python}", "-m")
        assert (bot.cwd / (bot.command[2].replace(".", "/") + ".py")).is_file()
