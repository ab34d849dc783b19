"""Fields of in-process bots for the rating benchmarks: the bundled bots and weakened copies of the greedy one.

Matches are played by driving the pure game engine (``pending``/``view``/``apply``) with the bots' policies,
as the referee would, with no gRPC and no processes: some 300 Cabanga! matches a second on one core.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the example bots live in the repo's bots/

from arena.games import get_game
from arena.games.cabanga.bots.greedy.bot import GreedyCabanga
from arena.games.cabanga.bots.random.bot import RandomCabanga
from arena.games.cabanga.bots.thrower.bot import ThrowerCabanga
from arena.games.cabanga.bots.tidy.bot import TidyCabanga
from arena.games.goofspiel.bots.matcher.bot import MatcherGoofspiel
from arena.games.goofspiel.bots.mirror.bot import MirrorGoofspiel
from arena.games.goofspiel.bots.overbid.bot import OverbidGoofspiel
from arena.games.goofspiel.bots.random.bot import RandomGoofspiel
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.games.lama.bots.quitter.bot import QuitterLama
from arena.games.lama.bots.random.bot import RandomLama
from arena.games.lama.bots.steady.bot import SteadyLama
from arena.sdk import Bot


class Sloppy(Bot):
    """A bot that decides as ``inner`` does, except that with probability ``epsilon`` it takes a random choice."""

    def __init__(self, inner: Bot, epsilon: float, seed: object) -> None:
        self.inner = inner
        self.epsilon = epsilon
        self.rng = random.Random(str(seed))

    def play(self, view: Any, choices: Sequence[Any]) -> Any:
        return self.rng.choice(choices) if self.rng.random() < self.epsilon else self.inner.play(view, choices)  # type: ignore[attr-defined]

    def throw(self, view: Any, candidates: Sequence[Any]) -> Iterable[Any]:
        return self.inner.throw(view, candidates)  # type: ignore[attr-defined,no-any-return]

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        return self.rng.choice(choices) if self.rng.random() < self.epsilon else self.inner.turn(view, choices)  # type: ignore[attr-defined]


Factory = Callable[[object], Bot]
"""Makes a bot from a seed (bots without randomness ignore it)."""


def _sloppy(make: Callable[[], Bot], epsilon: float) -> Factory:
    return lambda seed: Sloppy(make(), epsilon, seed)


BUNDLED: dict[str, dict[str, Factory]] = {
    "cabanga": {"cabanga-greedy": lambda s: GreedyCabanga(), "cabanga-tidy": lambda s: TidyCabanga(),
                "cabanga-thrower": lambda s: ThrowerCabanga(hash(str(s))),
                "cabanga-random": lambda s: RandomCabanga(hash(str(s)))},
    "lama": {"lama-greedy": lambda s: GreedyLama(), "lama-steady": lambda s: SteadyLama(),
             "lama-quitter": lambda s: QuitterLama(), "lama-random": lambda s: RandomLama(hash(str(s)))},
    "goofspiel": {"goofspiel-matcher": lambda s: MatcherGoofspiel(), "goofspiel-mirror": lambda s: MirrorGoofspiel(),
                  "goofspiel-overbid": lambda s: OverbidGoofspiel(),
                  "goofspiel-random": lambda s: RandomGoofspiel(hash(str(s)))},
}

GREEDY: dict[str, Callable[[], Bot]] = {"cabanga": GreedyCabanga, "lama": GreedyLama}


def graded_field(game: str, epsilons: Sequence[float]) -> dict[str, Factory]:
    """Return the bundled bots of ``game`` plus a greedy bot playing at random with each probability in ``epsilons``."""
    field = dict(BUNDLED[game])
    for eps in epsilons:
        field[f"{game}-greedy-e{round(eps * 100):02d}"] = _sloppy(GREEDY[game], eps)
    return field


def play(game_name: str, bots: Sequence[Bot], seed: int) -> tuple[int, ...]:
    """Play one match of ``game_name`` (default options) between ``bots`` by seat; return the places."""
    game = get_game(game_name)
    state = game.new_match(len(bots), seed, game.options())
    while not state.over:
        state.apply({p.seat: bots[p.seat].decide(p, state.view(p.seat)) for p in state.pending()})
    result = state.result
    assert result is not None
    return tuple(result.places)
