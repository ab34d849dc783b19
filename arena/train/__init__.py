"""Training: every registered game as PettingZoo and Gymnasium environments, and a batched self-play path.

Install the extra first: ``pip install 'arena[train]'`` (PettingZoo, Gymnasium; numpy is arena's own).

- :class:`ArenaAEC` (:mod:`arena.train.aec`): a PettingZoo AEC environment, one agent at a time;
- :class:`ArenaParallel` (:mod:`arena.train.parallel`): a PettingZoo Parallel environment, the seats of a
  simultaneous decision together;
- :class:`LearnerEnv` (:mod:`arena.train.single`): a Gymnasium environment, one learner against fixed opponents
  (bundled bots by name, or bot objects) played in-process;
- :class:`SelfPlay` (:mod:`arena.train.selfplay`): N matches stepped together, observations as one array (numpy
  only).

All are built from the game interface and see views only: each game's encoding (its folder's ``encoding``
module, :mod:`arena.games.encoding`) turns a seat's view into numbers. docs/training.md walks through them.
This package imports nothing of arena but the games and the rules engine's table log; never gRPC.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.games.encoding import EncodingError
from arena.train.selfplay import Batch, SelfPlay
from arena.train.table import REWARDS, ActionError, FinishedError, TrainError

if TYPE_CHECKING:
    from arena.train.aec import ArenaAEC
    from arena.train.parallel import ArenaParallel
    from arena.train.single import LearnerEnv

__all__ = ["REWARDS", "ActionError", "ArenaAEC", "ArenaParallel", "Batch", "EncodingError", "FinishedError",
           "LearnerEnv", "SelfPlay", "TrainError"]

_LAZY = {"ArenaAEC": "arena.train.aec", "ArenaParallel": "arena.train.parallel", "LearnerEnv": "arena.train.single"}


def __getattr__(name: str) -> Any:
    """Import the environments that need the extra's packages only when asked for, with a message that names the
    extra when they are missing."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'arena.train' has no attribute {name!r}")
    import importlib

    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if exc.name in ("pettingzoo", "gymnasium"):
            raise ModuleNotFoundError(f"arena.train.{name} needs {exc.name}: pip install 'arena[train]'",
                                      name=exc.name) from None
        raise
