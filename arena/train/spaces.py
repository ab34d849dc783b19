"""What the PettingZoo and Gymnasium environments share: the game's setup, spaces, and per-seat observations.

An observation is ``{"observation": float32 array, "action_mask": int8 array}``, the convention of PettingZoo's
classic games. A seat's observation is remade only when the seat is to decide, at the start and at the end of a
match; in between it keeps the last one with an empty mask. So an observation never depends on when other seats
decide: in a sealed window (a Cabanga! throw) only the seats holding a candidate are asked, and a view taken then
would tell the others that someone holds one.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import gymnasium
import numpy as np
import numpy.typing as npt

from arena.games import get_game
from arena.games.base import Game
from arena.games.encoding import Encoder, encoding_of
from arena.train.table import Table, TrainError, check_reward

Observation = dict[str, npt.NDArray[Any]]


def setup(game: str | Game, seats: int, options: Mapping[str, Any] | None) -> tuple[Game, Any, Encoder]:
    """Return the game, its checked options and its encoder. Raises :class:`arena.games.base.GameError` for an
    unknown game, a seat count it refuses or bad options, and :class:`EncodingError` for a game without an
    encoding."""
    the_game = get_game(game) if isinstance(game, str) else game
    if isinstance(seats, bool) or not isinstance(seats, int) or not the_game.min_seats <= seats <= the_game.max_seats:
        raise TrainError(f"{the_game.title} is played by {the_game.min_seats} to {the_game.max_seats} seats, "
                         f"not {seats!r}")
    checked = the_game.options(options)
    return the_game, checked, encoding_of(the_game.name).encoder(checked, seats)


def observation_space(encoder: Encoder) -> gymnasium.spaces.Dict:
    """Return the space of one seat's observations."""
    return gymnasium.spaces.Dict({
        "observation": gymnasium.spaces.Box(0.0, 1.0, (encoder.size,), np.float32),
        "action_mask": gymnasium.spaces.Box(0, 1, (len(encoder.actions),), np.int8),
    })


def observe(table: Table, seat: int) -> Observation:
    """Return ``seat``'s observation now, its mask holding the legal actions of its turn (if it has one)."""
    encoder = table.encoder
    ones: list[int] = []
    at: list[int] = []
    values: list[float] = []
    table.encode(seat, ones, at, values)
    observation = np.zeros(encoder.size, dtype=np.float32)
    observation[ones] = 1.0
    observation[at] = values
    mask = np.zeros(len(encoder.actions), dtype=np.int8)
    mask[table.legal(seat)] = 1
    return {"observation": observation, "action_mask": mask}


def waiting(observation: Observation) -> Observation:
    """Return ``observation`` with an empty mask (for a seat that has nothing to decide)."""
    return {"observation": observation["observation"], "action_mask": np.zeros_like(observation["action_mask"])}


class DealSeeds:
    """Where every environment draws its matches' seeds: a generator seeded by ``reset(seed=...)``, or from the
    system when never seeded. The seeds stay private to the environment (G1: the seed is never shown)."""

    def __init__(self) -> None:
        self._rng = random.Random()

    def reseed(self, seed: int | None) -> None:
        """Start the sequence of seeds again from ``seed`` (``None`` keeps the current sequence)."""
        if seed is not None:
            self._rng = random.Random(seed)

    def next(self) -> int:
        """Return the next match's seed."""
        return self._rng.getrandbits(63)


class SeatedEnv:
    """What the two PettingZoo environments of a match (:mod:`arena.train.aec`, :mod:`arena.train.parallel`) set
    up alike: the game, its encoder and table, the agents ``seat_0`` .. ``seat_{N-1}``, their spaces, the seeds.
    Placed before PettingZoo's base class, whose ``observation_space`` and ``action_space`` it answers."""

    possible_agents: list[str]
    observation_spaces: dict[str, gymnasium.spaces.Space[Any]]
    action_spaces: dict[str, gymnasium.spaces.Space[Any]]

    def _seat_up(self, game: str | Game, seats: int, options: Mapping[str, Any] | None, reward: str,
                 render_mode: str | None, **metadata: Any) -> None:
        """Set the environment up (see the environments' arguments); ``metadata`` adds to PettingZoo's."""
        self._game, self._options, self._encoder = setup(game, seats, options)
        if render_mode not in (None, "ansi"):
            raise TrainError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.metadata = {"name": f"arena_{self._game.name}_v0", "render_modes": ["ansi"], **metadata}
        self._reward = check_reward(reward)
        self._table = Table(self._game, self._options, seats, self._encoder)
        self._seeds = DealSeeds()
        self.possible_agents = [f"seat_{i}" for i in range(seats)]
        self._seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        space = observation_space(self._encoder)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        actions = gymnasium.spaces.Discrete(len(self._encoder.actions))
        self.action_spaces = dict.fromkeys(self.possible_agents, actions)
        self._observations: dict[str, Observation] = {}
        self._started = False

    @property
    def encoder(self) -> Any:
        """Return the game's encoder: the observation's layout, the actions' texts, the text form."""
        return self._encoder

    def observation_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space[Any]:
        return self.action_spaces[agent]
