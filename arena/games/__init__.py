"""The games: the contract every game meets (:mod:`arena.games.base`) and the registry of games.

A game is one folder, a Python package (``arena/games/cabanga/`` for instance) holding everything about it:
``GAME`` in its ``__init__`` (the :class:`~arena.games.base.Game`, its rules pure and without I/O), and beside
it the parts the rest of arena asks for by module name: ``codec`` (its messages on the wire), ``bot`` (the
typed bot base class of the Python SDK), ``tools`` (what ``arena check`` and ``arena new`` need, its draw
rates), ``web`` (its renderer in the browser), ``encoding`` (its views as numbers, for training: optional,
:mod:`arena.games.encoding`), and its bundled example bots, if it ships any: the bot list
``bots/bots.toml`` (:data:`BOT_LIST`, :func:`bot_list`), each bot in a folder of its own beside it
(``bots/NAME/bot.py``). docs/adding-a-game.md walks through one.

Games are found, by name, in three places, and loaded only when asked for (a bot's import loads its own game
and no other):

- :data:`BUILTIN`, the games that ship with arena: one line per game;
- the ``arena.games`` entry point group of every installed distribution (``name = "package"``), so that a
  game may come from another package;
- :func:`register`, which the command line and the Python SDK call with the ``ARENA_GAMES`` environment
  variable (``name=package`` pairs separated by commas; :func:`register_text`), for a game that is importable
  but not installed (a folder on ``PYTHONPATH``). The arena names every game's package there for the bots it
  launches: a registered game is found without reading the entry points, so a bot starts without them.

Nothing in the contract does I/O or imports grpc, asyncio, subprocess or click.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from arena.games.base import Game, GameError

BUILTIN: dict[str, str] = {
    "cabanga": "arena.games.cabanga",
    "goofspiel": "arena.games.goofspiel",
    "lama": "arena.games.lama",
}
"""The games that ship with arena: name to package. The first is the default game (:func:`default_game`)."""

BOT_LIST = "bots/bots.toml"
"""Where a game's folder holds the list of its bundled example bots (relative to the folder), when it ships any:
``arena match``, ``arena ladder`` and a contest's house bots play them when given no bot list, and an author's
list names one with ``bundled = "NAME"``. Each bot has a folder of its own beside the list (``bots/NAME/``), which
is all a jail shows of the bundled bots, and to that bot only (:mod:`arena.launch.jail`)."""

ENTRY_POINT_GROUP = "arena.games"
ENVIRONMENT = "ARENA_GAMES"
"""The environment variable naming games to register: ``name=package`` pairs separated by commas."""

T = TypeVar("T")

_loaded: dict[str, Game] = {}
_registered: dict[str, str] = {}
_installed: dict[str, str] | None = None
"""The games of the installed distributions' entry points, read once per process."""


def register(name: str, package: str) -> None:
    """Register the game ``name`` whose folder is the importable package ``package`` (it wins over any other)."""
    if _registered.get(name) != package:
        _registered[name] = package
        _loaded.pop(name, None)


def unregister(name: str) -> None:
    """Forget a game :func:`register` added (a built-in or installed game of that name is found again)."""
    _registered.pop(name, None)
    _loaded.pop(name, None)


def registered() -> dict[str, str]:
    """Return the games :func:`register` added, name to package (what a launched bot is told in
    :data:`ENVIRONMENT`)."""
    return dict(_registered)


def register_text(text: str) -> None:
    """Register the games ``text`` names as ``name=package`` pairs separated by commas (the form of
    :data:`ENVIRONMENT`). Raises :class:`GameError` for an item that is not ``name=package``."""
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, package = item.partition("=")
        if not sep or not name.strip() or not package.strip():
            raise GameError(f"{ENVIRONMENT}: {item!r} is not name=package")
        register(name.strip(), package.strip())


def game_packages() -> dict[str, str]:
    """Return every registered game's package by the game's name: built in, then entry points, then
    :func:`register` (a later source wins)."""
    global _installed
    if _installed is None:
        from importlib import metadata  # read once, and only by a process that looks past the registered games

        _installed = {entry.name: entry.value for entry in metadata.entry_points(group=ENTRY_POINT_GROUP)}
    return {**BUILTIN, **_installed, **_registered}


def _package(name: str) -> str | None:
    """Return the package of game ``name``, None for an unknown game. A game :func:`register` added wins over the
    others, so it is found without reading the installed distributions' entry points: a bot the arena launches is
    told every game's package (:data:`ENVIRONMENT`), and starts without reading them (60-75 ms of CPU in the jail
    here; docs/figures.md)."""
    package = _registered.get(name)
    return package if package is not None else game_packages().get(name)


def default_game() -> str:
    """Return the game a command plays when it is told none and no bot list settles one (``arena ladder`` alone
    plays its bundled bots): the first registered, which is the first of :data:`BUILTIN`."""
    return next(iter(game_packages()))


def game_names() -> list[str]:
    """Return the names of every registered game, sorted."""
    return sorted(game_packages())


def all_games() -> list[Game]:
    """Return every registered game, loaded, in the order of their names."""
    return [get_game(name) for name in game_names()]


def get_game(name: str) -> Game:
    """Return the game called ``name``, loading its package on first use. Raises :class:`GameError` otherwise."""
    game = _loaded.get(name)
    if game is not None:
        return game
    package = _package(name)
    if package is None:
        raise GameError(f"unknown game {name!r}; the games are {', '.join(sorted(game_packages()))}")
    module = _import(package, name)
    game = getattr(module, "GAME", None)
    if not isinstance(game, Game):
        raise GameError(f"game {name!r}: its package {package} has no GAME (an arena.games.base.Game)")
    if game.name != name:
        raise GameError(f"game {name!r}: its package {package} holds the game {game.name!r}")
    _loaded[name] = game
    return game


def game_part(name: str, part: str) -> ModuleType:
    """Return the module ``part`` (``codec``, ``bot``, ``tools``, ``web``) of game ``name``'s folder.

    Raises :class:`GameError` for an unknown game or a game without that part.
    """
    package = _package(name)
    if package is None:
        get_game(name)  # raises the unknown game's error
        raise AssertionError("unreachable")
    return _import(f"{package}.{part}", name, part)


def game_part_value(name: str, part: str, attribute: str, kind: type[T]) -> T:
    """Return ``attribute`` of game ``name``'s module ``part`` (the ``CODEC`` of its ``codec``, the ``TOOLS`` of its
    ``tools``), checked to be a ``kind``. Raises :class:`GameError` for an unknown game or one without it."""
    value = getattr(game_part(name, part), attribute, None)
    if not isinstance(value, kind):
        raise GameError(f"game {name!r}: its {part} module has no {attribute} "
                        f"(an {kind.__module__}.{kind.__qualname__})")
    return value


def game_folder(name: str) -> Path | None:
    """Return the folder of game ``name``'s package, found without importing the game (only the packages above
    it); None when it cannot be found. Raises :class:`GameError` for an unknown game."""
    package = _package(name)
    if package is None:
        get_game(name)  # raises the unknown game's error
        raise AssertionError("unreachable")
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def bot_list(name: str) -> Path | None:
    """Return the list of game ``name``'s bundled example bots (:data:`BOT_LIST` in its folder), or None when the
    game ships none. Raises :class:`GameError` for an unknown game."""
    folder = game_folder(name)
    path = folder / BOT_LIST if folder is not None else None
    return path if path is not None and path.is_file() else None


def _import(module: str, game: str, part: str = "") -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module == exc.name or module.startswith(exc.name + ".")):
            what = f"has no {part} module" if part else "cannot be imported"
            raise GameError(f"game {game!r} {what} ({module})") from None
        raise
