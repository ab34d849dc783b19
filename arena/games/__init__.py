"""The pure rules core: every game behind one interface (see :mod:`arena.games.base`).

Nothing in this package does I/O or imports grpc, asyncio, subprocess, click or generated code.
"""

from __future__ import annotations

from arena.games.base import Game, GameError
from arena.games.cabanga import CABANGA
from arena.games.lama import LAMA

GAMES: dict[str, Game] = {game.name: game for game in (CABANGA, LAMA)}


def get_game(name: str) -> Game:
    """Return the game called ``name`` (``cabanga`` or ``lama``). Raises :class:`GameError` otherwise."""
    try:
        return GAMES[name]
    except KeyError:
        raise GameError(f"unknown game {name!r}; the games are {', '.join(sorted(GAMES))}") from None
