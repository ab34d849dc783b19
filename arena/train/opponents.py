"""Fixed opponents played in-process: a game's bundled bots by name, or any Python bot object.

A bundled bot is a program (``bots/NAME/bot.py`` in its game's folder, listed in ``bots/bots.toml``) whose command
runs a module (``python -m MODULE``); its bot is the one :class:`arena.games.bot.Bot` subclass that module
defines, made with no arguments. A class or function that takes a ``seed`` is given one from the environment's
generator, so that seeded episodes repeat. Importing a bundled bot's module imports what it does (the SDK, and
with it gRPC), but nothing connects: its decisions are plain calls.
"""

from __future__ import annotations

import importlib
import inspect
import random
import tomllib
from collections.abc import Callable, Sequence
from typing import Any

from arena.games import bot_list
from arena.games.base import Clock, Game, MatchInfo, MatchResult
from arena.games.bot import Bot
from arena.train.table import Table, TrainError

Opponent = str | Bot | Callable[[], Bot]
"""A fixed opponent: a bundled bot's name (``cabanga-greedy``), a bot object, or a function making one."""

CLOCK = Clock()
"""The clock in-process bots are told (they are never timed)."""


def bundled_names(game: Game) -> list[str]:
    """Return the names of ``game``'s bundled bots that can be played in-process (their command runs a module)."""
    return sorted(_bundled_modules(game))


def _bundled_modules(game: Game) -> dict[str, str]:
    path = bot_list(game.name)
    if path is None:
        return {}
    with path.open("rb") as file:
        data = tomllib.load(file)
    found = {}
    for entry in data.get("bot", []):
        command = entry.get("command", [])
        if isinstance(command, list) and "-m" in command[:-1]:
            found[entry.get("name", "")] = command[command.index("-m") + 1]
    return found


def bundled_bot(game: Game, name: str, rng: random.Random) -> Bot:
    """Return a new bot object of ``game``'s bundled bot ``name``. Raises :class:`TrainError` for an unknown name."""
    modules = _bundled_modules(game)
    if name not in modules:
        path = bot_list(game.name)  # an old name, kept for one release (the bundled list's aliases.toml)
        aliases = path.with_name("aliases.toml") if path is not None else None
        if aliases is not None and aliases.is_file():
            with aliases.open("rb") as file:
                new = tomllib.load(file).get("aliases", {}).get(name)
            if new in modules:
                modules = {**modules, name: modules[new]}
    if name not in modules:
        raise TrainError(f"{name!r} is not a bundled bot of {game.title} that can play in-process; they are "
                         f"{', '.join(sorted(modules)) or 'none'} (or pass a bot object)")
    module = importlib.import_module(modules[name])
    classes = [value for value in vars(module).values()
               if inspect.isclass(value) and issubclass(value, Bot) and value.__module__ == module.__name__]
    if len(classes) != 1:
        raise TrainError(f"bundled bot {name!r}: its module {module.__name__} defines {len(classes)} bot classes, "
                         "not one; pass a bot object instead")
    bot: Bot = _made(classes[0], rng)
    return bot


def _made(make: Callable[..., Any], rng: random.Random) -> Any:
    """Return ``make()``, given a ``seed`` from ``rng`` where it takes one (so that seeded episodes repeat)."""
    try:
        takes_seed = "seed" in inspect.signature(make).parameters
    except (TypeError, ValueError):
        takes_seed = False
    return make(seed=rng.getrandbits(63)) if takes_seed else make()


def make_opponents(game: Game, spec: Opponent | Sequence[Opponent], count: int, rng: random.Random) -> list[Bot]:
    """Return ``count`` bot objects from ``spec``: one opponent for every seat, or a list of one per seat.

    Raises :class:`TrainError` for a list of the wrong length, an unknown name, or one bot object for several
    seats (a bot keeps a match's history: give a name or a function that makes one).
    """
    specs: list[Opponent]
    if isinstance(spec, str | Bot) or callable(spec):
        specs = [spec] * count
    else:
        specs = list(spec)
        if len(specs) != count:
            raise TrainError(f"opponents: {count} are needed (one per other seat), got {len(specs)}")
    bots: list[Bot] = []
    for item in specs:
        if isinstance(item, Bot):
            if any(item is other for other in bots):
                raise TrainError(f"opponents: one {type(item).__name__} object cannot play several seats; pass its "
                                 "bundled name or a function that makes one")
            bots.append(item)
        elif isinstance(item, str):
            bots.append(bundled_bot(game, item, rng))
        elif callable(item):
            made = _made(item, rng)
            if not isinstance(made, Bot):
                raise TrainError(f"opponents: {item!r} made {made!r}, not an arena.games.bot.Bot")
            bots.append(made)
        else:
            raise TrainError(f"an opponent is a bundled bot's name, a bot object or a function making one, "
                             f"got {item!r}")
    return bots


class Seated:
    """Bots sitting at a table's seats: told the match's start, its events and its end as the referee tells them."""

    def __init__(self, table: Table, bots: dict[int, Bot], names: Sequence[str]) -> None:
        self._table = table
        self._bots = bots
        self._names = tuple(names)

    def start(self, options: dict[str, Any]) -> None:
        """Tell every bot that a match starts."""
        for seat, bot in self._bots.items():
            bot.on_match_start(MatchInfo("", self._table.game.name, seat, self._names, options, CLOCK, 1))

    def answer(self) -> None:
        """Let every bot with a decision to make answer it (the table applies the step once all are in)."""
        table = self._table
        for seat in [s for s in table.deciders() if s in self._bots]:
            bot = self._bots[seat]
            news = table.news(seat)
            if news:
                bot.on_events(news)
            bot.on_clock(CLOCK.deadline)
            prompt = table.prompt(seat)
            try:
                decision = bot.decide(prompt, table.view(seat))
            except Exception:  # a bot's bug is its fault: the default, as the referee applies it
                decision = prompt.default
            table.answer_whole(seat, decision)

    def finish(self) -> None:
        """Tell every bot that the match is over."""
        places, totals = self._table.result()
        for seat, bot in self._bots.items():
            bot.on_match_end(MatchResult(totals, places), self._table.news(seat))
