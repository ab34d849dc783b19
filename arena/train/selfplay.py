"""Self-play in a batch: N matches stepped together in-process, their observations as one array.

Every row of a batch is one match's current turn (as an AEC environment would select it): the seat to decide,
its observation and its mask. :meth:`SelfPlay.step` takes one action per row, answers each match's turn and
returns the next batch; a match that ended in that step reports its rewards in its row and is dealt again at once,
so every row always has a turn. One policy plays every seat (or the caller picks, row by row, by ``seats``).

Numpy only (no PettingZoo, no Gymnasium): the fast path for training, about as fast per decision as the rules
engine itself (``python benchmarks/train.py`` prints both). Observations, masks and rewards are those of the
PettingZoo environments (:mod:`arena.train.aec`).
"""

from __future__ import annotations

import contextlib
import gc
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from arena.games.base import Game
from arena.games.encoding import Encoder
from arena.train.spaces import setup
from arena.train.table import ActionError, Table, TrainError, check_reward


@dataclass
class Batch:
    """One turn of every match of a :class:`SelfPlay`, row by row.

    The arrays are the batch's own and are overwritten by its next step: copy what must be kept.
    """

    observations: npt.NDArray[np.float32]
    """Shape (N, observation size): each row's observation (the deciding seat's view)."""
    masks: npt.NDArray[np.bool_]
    """Shape (N, actions): each row's legal actions."""
    seats: npt.NDArray[np.int64]
    """Shape (N,): the seat deciding in each row."""
    done: npt.NDArray[np.bool_]
    """Shape (N,): the row's match ended with the previous step (its turn is a new match's first)."""
    rewards: npt.NDArray[np.float32]
    """Shape (N, seats): each seat's reward of the match that ended (zero where ``done`` is false)."""
    illegal: npt.NDArray[np.bool_]
    """Shape (N,): the previous step's action in this row was not legal; the default was applied."""


class SelfPlay:
    """``n`` matches of ``game`` at ``seats`` seats, played together by actions given row by row.

    ``options`` and ``reward`` as :class:`arena.train.aec.ArenaAEC`'s; ``seed`` seeds the deals (the same seed
    and actions, the same batches). Raises :class:`arena.games.base.GameError` for an unknown game, a seat count
    it refuses or bad options.
    """

    def __init__(self, game: str | Game, seats: int, n: int, options: Mapping[str, Any] | None = None, *,
                 reward: str = "pairwise", seed: int = 0) -> None:
        self._game, self._options, self.encoder = setup(game, seats, options)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TrainError(f"n must be a number of matches >= 1, got {n!r}")
        self._reward = check_reward(reward)
        self.n = n
        self.seats = seats
        encoder: Encoder = self.encoder
        self.size = encoder.size
        self.actions = len(encoder.actions)
        self._deals = random.Random(seed)
        self._tables = [Table(self._game, self._options, seats, encoder) for _ in range(n)]
        self._batch = Batch(
            observations=np.zeros((n, self.size), dtype=np.float32),
            masks=np.zeros((n, self.actions), dtype=np.bool_),
            seats=np.zeros(n, dtype=np.int64),
            done=np.zeros(n, dtype=np.bool_),
            rewards=np.zeros((n, seats), dtype=np.float32),
            illegal=np.zeros(n, dtype=np.bool_),
        )
        self._started = False

    @property
    def decisions(self) -> int:
        """Return the decisions answered so far (prompts, as a referee counts them), over every match."""
        return sum(table.decisions for table in self._tables)

    def reset(self) -> Batch:
        """Deal a new match in every row and return the first batch."""
        with _collector_paused():
            for table in self._tables:
                table.start(self._deals.getrandbits(63))
            self._started = True
        batch = self._batch
        batch.done[:] = False
        batch.rewards[:] = 0.0
        batch.illegal[:] = False
        with _collector_paused():
            self._fill()
        return batch

    def step(self, actions: npt.ArrayLike) -> Batch:
        """Answer every row's turn with its action (an index per row) and return the next batch.

        An action outside a row's mask is replaced by the game's default and flagged in ``illegal``; actions that
        are not N indices of the action space raise :class:`arena.train.table.ActionError` before anything is
        applied.
        """
        if not self._started:
            raise TrainError("reset() needs to be called before step")
        chosen = np.asarray(actions)
        if chosen.shape != (self.n,) or not np.issubdtype(chosen.dtype, np.integer):
            raise ActionError(f"actions must be {self.n} integer indices, one per row, got shape {chosen.shape} "
                              f"of {chosen.dtype}")
        if self.n and (chosen.min() < 0 or chosen.max() >= self.actions):
            bad = chosen[(chosen < 0) | (chosen >= self.actions)][0]
            raise ActionError(f"action {int(bad)!r} is out of range: the action space has {self.actions} actions, "
                              f"0..{self.actions - 1}")
        batch = self._batch
        seats = batch.seats.tolist()
        illegal = batch.illegal
        done = batch.done
        rewards = batch.rewards
        done[:] = False
        rewards[:] = 0.0
        reward = self._reward
        deals = self._deals
        with _collector_paused():
            for i, (table, action) in enumerate(zip(self._tables, chosen.tolist(), strict=True)):
                illegal[i] = table.answer_index(seats[i], action)
                if table.over:
                    done[i] = True
                    rewards[i] = table.rewards(reward)
                    table.start(deals.getrandbits(63))
            self._fill()
        return batch

    def _fill(self) -> None:
        """Write every row's observation, mask and deciding seat."""
        batch = self._batch
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        legal: list[int] = []
        seats: list[int] = []
        ends = []  # per row: where its entries of ones, at and legal end
        for table in self._tables:
            seats.append(table.next_turn(ones, at, values, legal))
            ends.append((len(ones), len(at), len(legal)))
        # each row's positions are the row's own: shift them to the row's place in the flat arrays
        counts = np.diff(np.array([(0, 0, 0), *ends]), axis=0)
        rows = np.arange(self.n)
        observations = batch.observations.reshape(-1)
        observations[:] = 0.0
        observations[np.repeat(rows * self.size, counts[:, 0]) + ones] = 1.0
        observations[np.repeat(rows * self.size, counts[:, 1]) + at] = values
        masks = batch.masks.reshape(-1)
        masks[:] = False
        masks[np.repeat(rows * self.actions, counts[:, 2]) + legal] = True
        batch.seats[:] = seats


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cycle collector for one step of the batch.

    A step makes thousands of small objects (views, prompts, events) while every match's history stays alive,
    so the collector would run several times a step and walk all of it: measured, that cost as much as the rules.
    Nothing a step makes forms a cycle (reference counts free it all), and the collector runs as usual between
    steps, on what accumulated.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
