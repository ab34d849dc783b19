"""Goofspiel: the game's folder. Its rules (pure, :mod:`.rules`) are re-exported here; the registry
(:mod:`arena.games`) finds the game as ``GAME``, and its other parts by their module names: ``codec``, ``bot``,
``tools``, ``web``.
"""

from arena.games.goofspiel.rules import *  # noqa: F403
from arena.games.goofspiel.rules import GOOFSPIEL as GAME  # noqa: F401  # the registry reads it
