"""Where ``arena serve`` finds what a game needs in the browser: the ``web`` module of the game's folder.

Such a module is pure (it lives in the rules core) and has ``table(state, seat)``, the table at a moment as
JSON-ready data (``seat=None``: from above, every hand; a seat: only what that seat sees), and ``SCRIPT``, the
name of a JavaScript file beside it that draws that data (it registers ``window.ArenaGames[name]``). No game is
named here: a new game plugs in by shipping its ``web`` module and script.

The viewer's contract with every game: a frame's table has a ``round`` (an int: the round menu jumps by it), and
an event whose JSON says ``"event": "round_started"`` with a ``round`` starts that round in the event log.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any, Protocol, cast

from arena.games import game_part
from arena.games.base import MatchState


class _WebModule(Protocol):
    __name__: str
    SCRIPT: str

    def table(self, state: MatchState, seat: int | None) -> dict[str, Any]: ...


@dataclass(frozen=True)
class GameWeb:
    """A game's web renderer: its table function and its script's text."""

    name: str
    module: _WebModule

    def table(self, state: MatchState, seat: int | None) -> dict[str, Any]:
        """Return the table of ``state`` as seen by ``seat`` (``None``: from above)."""
        return self.module.table(state, seat)

    def script(self) -> bytes:
        """Return the renderer's JavaScript."""
        package = self.module.__name__.rpartition(".")[0]
        return resources.files(package).joinpath(self.module.SCRIPT).read_bytes()


_CACHE: dict[str, GameWeb] = {}


def game_web(name: str) -> GameWeb:
    """Return the web renderer of game ``name``. Raises :class:`GameError` for a game without one."""
    if name in _CACHE:
        return _CACHE[name]
    module = cast(_WebModule, game_part(name, "web"))
    _CACHE[name] = web = GameWeb(name, module)
    return web
