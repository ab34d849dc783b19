"""The Python SDK: a decision goes to the bot method named for its kind; importing the SDK loads no game."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from costs import until_over

from arena.games import all_games, get_game
from arena.games.base import Pick, random_decision
from arena.games.bot import Bot, kind_clashes
from arena.games.cabanga.bot import CabangaBot
from arena.games.lama.bot import LamaBot

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.process
def test_importing_the_sdk_loads_neither_the_referee_nor_any_game() -> None:
    code = "import sys, arena.sdk; print(' '.join(sorted(m for m in sys.modules if m.startswith('arena'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                            cwd=ROOT).stdout.split()
    assert "arena.sdk" in loaded and "arena.games" in loaded
    assert "arena.core.referee" not in loaded and "arena.protocol.server" not in loaded
    assert not [m for m in loaded if m.startswith("arena.games.") and m.count(".") >= 2
                and m.split(".")[2] in {g.name for g in all_games()}], loaded


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.name)
def test_every_games_decision_kinds_can_be_bot_methods(game: Any) -> None:
    assert game.kinds and not kind_clashes(game.kinds)


class Recorder(Bot):
    """Answers every kind through a method of its name, and records which one was called."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.rng = random.Random(1)

    def play(self, view: Any, choices: Sequence[Any]) -> Any:
        self.called.append("play")
        return choices[0]

    def throw(self, view: Any, candidates: Sequence[Any]) -> list[Any]:
        self.called.append("throw")
        return list(candidates)

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        self.called.append("turn")
        return choices[-1]


@pytest.mark.parametrize("name", ["cabanga", "lama"])
def test_a_decision_goes_to_the_method_named_for_its_kind(name: str) -> None:
    state = get_game(name).new_match(4, 5)
    bot, rng = Recorder(), random.Random(5)
    for _ in until_over(state):
        prompts = state.pending()
        for prompt in prompts:
            decision = bot.decide(prompt, state.view(prompt.seat))
            assert bot.called[-1] == prompt.kind
            prompt.check(decision)  # one choice for pick one, the candidates as a tuple for a subset
            assert (decision == tuple(prompt.choices)) if prompt.pick is Pick.SUBSET else len(decision) == 1
        state.apply({p.seat: random_decision(p, rng) for p in prompts})
    assert set(bot.called) == set(get_game(name).kinds)


def test_a_bot_without_the_kinds_method_says_which_game_it_does_not_play() -> None:
    state = get_game("lama").new_match(2, 1)
    prompt = state.pending()[0]
    with pytest.raises(NotImplementedError, match="has no method 'turn'"):
        Bot().decide(prompt, state.view(prompt.seat))
    with pytest.raises(NotImplementedError, match=r"does not play L\.A\.M\.A\."):
        LamaBot().decide(prompt, state.view(prompt.seat))
    cabanga = get_game("cabanga").new_match(3, 1)
    first = cabanga.pending()[0]
    with pytest.raises(NotImplementedError, match="does not play Cabanga!"):
        CabangaBot().decide(first, cabanga.view(first.seat))
