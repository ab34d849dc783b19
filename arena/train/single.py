"""One learner against fixed opponents: any registered game as a Gymnasium environment.

The learner takes one seat; the others are played in-process by bundled bots (by name, as in a bot list) or by
any Python bot object (:mod:`arena.train.opponents`), told the match's events as the referee tells them. The
learner's seat rotates with every episode (0, 1, .., N-1, 0, ..), so that it plays every seat equally.

Observations, actions and masks are the PettingZoo environments' (:mod:`arena.train.spaces`): a step is one of
the learner's turns (one per candidate of a subset decision); the opponents' decisions happen in between. The mask
is also offered as :meth:`LearnerEnv.action_masks`, which maskable policies (sb3-contrib's ``MaskablePPO``) call.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any, cast

import gymnasium
import numpy as np
import numpy.typing as npt

from arena.games.base import Game
from arena.train.opponents import Opponent, Seated, make_opponents
from arena.train.spaces import Observation, observation_space, observe, setup
from arena.train.table import FinishedError, Table, TrainError, check_reward


class LearnerEnv(gymnasium.Env[Observation, np.int64]):
    """A match of ``game`` at ``seats`` seats where the learner plays one seat and ``opponents`` the others.

    ``opponents``: one opponent for every other seat (a bundled bot's name, or a function making a bot), or a
    list of one per other seat. ``options`` and ``reward`` as :class:`arena.train.aec.ArenaAEC`'s. The reward is
    the learner's, at the end of the match. Raises :class:`arena.games.base.GameError` for an unknown game, a
    seat count it refuses or bad options, and :class:`TrainError` for bad opponents.
    """

    def __init__(self, game: str | Game, seats: int, opponents: Opponent | Sequence[Opponent],
                 options: Mapping[str, Any] | None = None, *, reward: str = "pairwise",
                 render_mode: str | None = None) -> None:
        self._game, self._options, self._encoder = setup(game, seats, options)
        if render_mode not in (None, "ansi"):
            raise TrainError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.metadata = {"render_modes": ["ansi"]}
        self._reward = check_reward(reward)
        self._seats = seats
        self._spec = opponents
        self._bots = make_opponents(self._game, opponents, seats - 1, random.Random(0))
        self._table = Table(self._game, self._options, seats, self._encoder, tell=True)
        self._seated: Seated | None = None
        self._episodes = 0
        self._learner = 0
        self._deals = random.Random()
        self._observation: Observation | None = None
        self.observation_space = cast(gymnasium.spaces.Space[Observation], observation_space(self._encoder))
        self.action_space = gymnasium.spaces.Discrete(len(self._encoder.actions))

    @property
    def encoder(self) -> Any:
        """Return the game's encoder: the observation's layout, the actions' texts, the text form."""
        return self._encoder

    @property
    def seat(self) -> int:
        """Return the learner's seat in the current episode."""
        return self._learner

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Observation, dict[str, Any]]:
        """Deal a new match with the learner at the next seat; play the opponents up to the learner's first turn.

        ``seed`` starts the episodes again: the same seed, the same deals, seats and opponents' choices.
        """
        super().reset(seed=seed)
        if seed is not None:
            self._deals = random.Random(seed)
            self._episodes = 0
            self._bots = make_opponents(self._game, self._spec, self._seats - 1, random.Random(seed))
        self._learner = self._episodes % self._seats
        self._episodes += 1
        others = [s for s in range(self._seats) if s != self._learner]
        names = [f"seat_{s}" for s in range(self._seats)]
        self._table.start(self._deals.getrandbits(63))
        self._seated = Seated(self._table, dict(zip(others, self._bots, strict=True)), names)
        self._seated.start(self._options.to_json())
        return self._advance(), {"illegal_action": False, "seat": self._learner}

    def step(self, action: Any) -> tuple[Observation, float, bool, bool, dict[str, Any]]:
        """Answer the learner's turn with ``action``, play the opponents to its next turn or the match's end.

        An action outside the mask is replaced by the game's default, flagged in the info (``illegal_action``);
        one outside the action space raises :class:`arena.train.table.ActionError`, and a step after the end
        :class:`FinishedError`.
        """
        if self._seated is None:
            raise TrainError("reset() needs to be called before step")
        if self._table.over:
            raise FinishedError("step() called after the episode ended: call reset() first")
        illegal = self._table.answer(self._learner, action)
        observation = self._advance()
        info = {"illegal_action": illegal, "seat": self._learner}
        if self._table.over:
            return observation, self._table.rewards(self._reward)[self._learner], True, False, info
        return observation, 0.0, False, False, info

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Return the mask of the learner's legal actions now (as maskable policies ask for it)."""
        if self._observation is None:
            raise TrainError("reset() needs to be called before action_masks")
        return self._observation["action_mask"].astype(bool)

    def _advance(self) -> Observation:
        table = self._table
        assert self._seated is not None
        while not table.over and self._learner not in table.deciders():
            self._seated.answer()
        if table.over:
            self._seated.finish()
        observation = observe(table, self._learner)
        self._observation = observation
        return observation

    def render(self) -> str | None:
        """Return the learner's observation in text form (``render_mode="ansi"``)."""
        if self.render_mode is None or self._observation is None:
            return None
        return (f"seat {self._learner}:\n{self._encoder.text(self._observation['observation'])}\n"
                f"legal: {self._encoder.mask_text(self._observation['action_mask'])}")
