"""Cabanga!: the game's folder. Its rules (pure, :mod:`.rules`) are re-exported here; the
registry (:mod:`arena.games`) finds the game as ``GAME``, and its other parts by their module names: ``codec``,
``bot``, ``tools``, ``web``, ``search``.
"""

from arena.games.cabanga.rules import *  # noqa: F403
from arena.games.cabanga.rules import CABANGA as GAME  # noqa: F401  # the registry reads it
