"""The bot list: the TOML file that names the bots, how each starts and what it may use.

A bot list is a TOML file of ``[[bot]]`` tables, with an optional ``[limits]`` table for all of them::

    [limits]                                          # optional: every bot's limits (see arena.launch.sandbox.Limits)
    memory_mb = 1024

    [[bot]]
    name = "greedy"                                   # unique; shown on the leaderboard
    command = ["{python}", "greedy/bot.py"]           # a list, or one string split like a shell would
    cwd = "."                                         # optional; relative paths start at the list's folder
    limits = { cpu_seconds = 60 }                     # optional: this bot's own limits
    files = ["weights.bin", "lib/"]                   # optional: more of what its jail shows it, under cwd

``{python}`` in a command stands for the interpreter running the arena. A bot list entry may also name a bundled
example bot (``bundled = "NAME"``) or a remote bot (``token``: it connects by itself). How a listed bot is launched
is :mod:`arena.launch.process`; what its jail shows it, :mod:`arena.launch.jail`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import os
import shlex
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.games import bot_list, game_names
from arena.launch.sandbox import DEFAULT_LIMITS, Limits, LimitsError


class BotListError(ValueError):
    """A bot list that cannot be read or does not describe bots properly."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot of a bot list: its name, the command that starts it, its working directory and its limits."""

    name: str
    command: tuple[str, ...]
    cwd: Path
    limits: Limits = field(default=DEFAULT_LIMITS, compare=False)
    token: str | None = field(default=None, compare=False, repr=False)
    """For a remote bot (no command): the token the operator gave it; it connects by itself."""
    games: tuple[str, ...] = field(default=(), compare=False)
    """The games the bot says it plays (bot list key ``games``); empty: not said. ``arena check`` reads it."""
    files: tuple[Path, ...] = field(default=(), compare=False)
    """Files and folders under ``cwd`` that its jail shows it beyond its program (bot list key ``files``)."""
    log_name: str | None = field(default=None, compare=False)
    """What its log files are named after (a contest's bot: its submission's id); ``None``: its name
    (:attr:`log_key`)."""
    neighbours: tuple[tuple[str, Path], ...] = field(default=(), compare=False, repr=False)
    """The other bots of its list, each by name and the file of its program (:func:`parse_bot_list` sets it): a
    folder that holds one of them is never shown whole (:func:`arena.launch.jail.jail_binds`)."""

    def plays(self, game: str) -> bool:
        """Return whether it says it plays ``game``: its ``games`` name it, or name none (a bot that does not say
        plays any)."""
        return not self.games or game in self.games

    @property
    def log_key(self) -> str:
        """Return what its log files are named after (:func:`arena.launch.process.log_file_name`)."""
        return self.name if self.log_name is None else self.log_name

    @property
    def remote(self) -> bool:
        """Return whether the arena waits for this bot to connect instead of starting it."""
        return self.token is not None

    def argv(self) -> list[str]:
        """Return the command with ``{python}`` replaced by this interpreter."""
        return [sys.executable if part == "{python}" else part for part in self.command]

    def fingerprint(self) -> str:
        """Return a hash of the command and of the files it names, so a changed bot is noticed."""
        digest = hashlib.sha256("\0".join(self.command or ("remote", self.name)).encode())
        for before, part in zip(("", *self.command), self.command, strict=False):
            path = self.cwd / (part.replace(".", "/") + ".py" if before == "-m" else part)
            with contextlib.suppress(OSError):  # an argument that is no file (a name too long for one, say)
                if part != "{python}" and path.is_file():
                    digest.update(path.read_bytes())
        for path in self.files:
            if path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]


def load_bot_list(path: str | Path) -> list[BotSpec]:
    """Return the bots of the TOML bot list at ``path``.

    Raises :class:`BotListError` with a one-line reason for a missing, unreadable or malformed list.
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BotListError(f"bot list {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BotListError(f"cannot read bot list {str(path)!r}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise BotListError(f"bot list {str(path)!r} is not valid TOML: {exc}") from None
    return parse_bot_list(data, path.resolve().parent, str(path))


def parse_bot_list(data: dict[str, Any], base: Path, source: str = "bot list") -> list[BotSpec]:
    """Return the bots described by parsed TOML ``data``; relative paths start at ``base``."""
    unknown_top = sorted(set(data) - {"bot", "limits"})
    if unknown_top:
        raise BotListError(f"{source}: unknown key {unknown_top[0]!r} (a bot list holds [[bot]] and [limits])")
    entries = data.get("bot")
    if not isinstance(entries, list) or not entries:
        raise BotListError(f"{source}: expected one or more [[bot]] tables")
    shared = _limits(DEFAULT_LIMITS, data.get("limits", {}), f"{source}: [limits]")
    bots: list[BotSpec] = []
    for i, entry in enumerate(entries, 1):
        where = f"{source}: bot {i}"
        if not isinstance(entry, dict):
            raise BotListError(f"{where}: expected a table")
        unknown = sorted(set(entry) - {"name", "command", "cwd", "limits", "token", "games", "files", "bundled"})
        if unknown:
            raise BotListError(f"{where}: unknown key {unknown[0]!r} (keys: name, command, cwd, limits, token, "
                               "games, files, bundled)")
        if "bundled" in entry:
            bot = _bundled_bot(entry, shared, where)
            if any(b.name == bot.name for b in bots):
                raise BotListError(f"{source}: two bots are named {bot.name!r}")
            bots.append(bot)
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            raise BotListError(f"{where}: name must be a non-empty string of at most 64 characters, got {name!r}")
        where = f"{source}: bot {name!r}"
        if any(b.name == name for b in bots):
            raise BotListError(f"{source}: two bots are named {name!r}")
        if "token" in entry:
            bots.append(_remote_bot(name, entry, bots, where, base))
            continue
        command = entry.get("command")
        if isinstance(command, str):
            try:
                command = shlex.split(command)
            except ValueError as exc:
                raise BotListError(f"{where}: command {entry['command']!r} does not parse: {exc}") from None
        if (not isinstance(command, list) or not command
                or not all(isinstance(part, str) and part for part in command)):
            raise BotListError(f"{where}: command must be a non-empty list of strings, got {command!r}")
        cwd_text = entry.get("cwd", ".")
        if not isinstance(cwd_text, str):
            raise BotListError(f"{where}: cwd must be a string, got {cwd_text!r}")
        cwd = (base / cwd_text).resolve()
        if not cwd.is_dir():
            raise BotListError(f"{where}: working directory {str(cwd)!r} does not exist")
        limits = _limits(shared, entry.get("limits", {}), f"{where}: limits")
        games = entry.get("games", [])
        if not isinstance(games, list) or not all(isinstance(g, str) and g for g in games):
            raise BotListError(f"{where}: games must be a list of game names, got {games!r}")
        files = _files(entry.get("files", []), cwd, where)
        bots.append(BotSpec(name, tuple(command), cwd, limits, games=tuple(games), files=files))
    return with_neighbours(bots)


def bundled_folder() -> Path:
    """Return the folder of the bundled examples in other languages (``js``, ``cpp``, ``go``), which ``arena new``
    copies: the ``bots`` package, installed with the arena or in the source tree. The bundled Python bots live in
    their games' folders (:func:`bundled_list`)."""
    import bots

    return Path(bots.__file__).resolve().parent


def bundled_lists() -> list[Path]:
    """Return the bundled bot lists of every registered game that ships one (``bots/bots.toml`` in the game's
    folder, :func:`arena.games.bot_list`), in the order of the games' names."""
    return [path for game in game_names() if (path := bot_list(game)) is not None]


BOT_ALIASES = "aliases.toml"
"""Beside a game's bundled list: ``[aliases]`` old name = new name, the bundled bots' old names kept for a release."""


def bundled_bots() -> dict[str, BotSpec]:
    """Return every bundled example bot, by name, from the bundled lists of all games."""
    found: dict[str, BotSpec] = {}
    for path in bundled_lists():
        for bot in load_bot_list(path):
            found.setdefault(bot.name, bot)
    return found


def bundled_aliases() -> dict[str, str]:
    """Return the bundled bots' old names, each with its new name (``aliases.toml`` beside each game's list)."""
    found: dict[str, str] = {}
    for path in bundled_lists():
        aliases = path.with_name(BOT_ALIASES)
        if aliases.is_file():
            for old, new in tomllib.loads(aliases.read_text()).get("aliases", {}).items():
                found.setdefault(str(old), str(new))
    return found


def _bundled_bot(entry: dict[str, Any], shared: Limits, where: str) -> BotSpec:
    """Return the bundled bot an entry names with ``bundled = "NAME"``, wherever the arena is installed; the
    entry may rename it (``name``) and set its ``limits``, nothing else."""
    wanted = entry["bundled"]
    extra = sorted(set(entry) - {"bundled", "name", "limits"})
    if extra:
        raise BotListError(f"{where}: a bundled bot takes only name and limits besides bundled, not {extra[0]!r}")
    known = bundled_bots()
    if isinstance(wanted, str) and wanted not in known:
        wanted_now = bundled_aliases().get(wanted)  # an old name, for one release: the bot under its old name
        if wanted_now in known:
            known = {**known, wanted: known[wanted_now]}
    if not isinstance(wanted, str) or wanted not in known:
        raise BotListError(f"{where}: bundled must name a bundled bot ({', '.join(sorted(known))}), got {wanted!r}")
    bot = known[wanted]
    name = entry.get("name", wanted)
    if not isinstance(name, str) or not name.strip() or len(name) > 64:
        raise BotListError(f"{where}: name must be a non-empty string of at most 64 characters, got {name!r}")
    limits = _limits(shared, entry.get("limits", {}), f"{where}: limits")
    return BotSpec(name, bot.command, bot.cwd, limits, games=bot.games, files=bot.files)


def merge_bot_lists(lists: Sequence[tuple[str, Sequence[BotSpec]]]) -> list[BotSpec]:
    """Return the bots of several lists (source, bots) as one list; two bots of one name are an error."""
    merged: list[BotSpec] = []
    where: dict[str, str] = {}
    for source, bots in lists:
        for bot in bots:
            if bot.name in where:
                raise BotListError(f"bot {bot.name!r} is in both {where[bot.name]} and {source}: rename one")
            where[bot.name] = source
            merged.append(bot)
    return with_neighbours(merged)


def _files(raw: object, cwd: Path, where: str) -> tuple[Path, ...]:
    """Return the paths a bot list entry's ``files`` names: each exists, under the bot's ``cwd`` (resolved)."""
    if not isinstance(raw, list) or not all(isinstance(text, str) and text for text in raw):
        raise BotListError(f"{where}: files must be a list of paths relative to its cwd, got {raw!r}")
    found: list[Path] = []
    for text in raw:
        if os.path.isabs(text) or text.startswith("~"):
            raise BotListError(f"{where}: files entry {text!r} must be relative to the bot's cwd {str(cwd)!r}")
        path = (cwd / text).resolve()
        if not path.is_relative_to(cwd):
            raise BotListError(f"{where}: files entry {text!r} leads out of the bot's cwd {str(cwd)!r} (to "
                               f"{str(path)!r}); name only what lies under it")
        if path == cwd:
            raise BotListError(f"{where}: files entry {text!r} is the bot's whole cwd {str(cwd)!r}; name the files "
                               "and folders it reads")
        if not path.exists():
            raise BotListError(f"{where}: files entry {text!r} does not exist (no {str(path)!r})")
        if text.endswith("/") and not path.is_dir():
            raise BotListError(f"{where}: files entry {text!r} is not a folder")
        found.append(path)
    return tuple(dict.fromkeys(found))


def with_neighbours(bots: Sequence[BotSpec]) -> list[BotSpec]:
    """Return ``bots``, each knowing the others' programs (:attr:`BotSpec.neighbours`), as in one bot list."""
    mains = {bot.name: [part.main for part in _program_parts(bot)] for bot in bots}
    return [dataclasses.replace(bot, neighbours=tuple((other, main) for other, found in mains.items()
                                                      if other != bot.name for main in found))
            for bot in bots]


def _remote_bot(name: str, entry: dict[str, Any], bots: Sequence[BotSpec], where: str, base: Path) -> BotSpec:
    """Return a remote bot: a name and the token the operator gave it, nothing to start."""
    token = entry["token"]
    if "command" in entry or "cwd" in entry or "limits" in entry or "files" in entry:
        raise BotListError(f"{where}: a bot with a token is remote: it has no command, cwd, limits or files")
    if not isinstance(token, str) or len(token) < 16 or not token.isprintable() or " " in token:
        raise BotListError(f"{where}: token must be a string of at least 16 printable characters without spaces")
    if any(b.token == token for b in bots):
        raise BotListError(f"{where}: another bot has the same token")
    return BotSpec(name, (), base, token=token)


def _limits(base: Limits, raw: object, where: str) -> Limits:
    if not isinstance(raw, dict):
        raise BotListError(f"{where} must be a table, got {raw!r}")
    try:
        return base.updated(raw)
    except LimitsError as exc:
        raise BotListError(f"{where}: {exc}") from None


_SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/")


@dataclass(frozen=True, slots=True)
class _Part:
    """A program of a bot's own that its command names: a script, a module or the program itself."""

    main: Path
    """The file that runs (for ``-m`` the module's file), resolved."""
    needs: tuple[Path, ...] = ()
    """Files it cannot run without besides: for ``-m pkg.module`` the ``__init__.py`` of its packages."""
    folders: tuple[Path, ...] = ()
    """The folders that may be shown whole with it, outermost first: the first that holds no other bot is."""


def _program_parts(spec: BotSpec) -> list[_Part]:
    """Return the programs of the bot's own that its command names: the program itself when it is given by its path
    and is not an interpreter (``./build/bot``: its folder, or the one above its ``bin``), and the first file its
    command names after the program's options (``python bots/x/bot.py`` gives ``bots/x``, ``node js/bot.js`` gives
    ``js``), or the module of ``-m pkg.sub.module`` under ``cwd`` (its packages ``pkg``, ``pkg/sub``)."""
    if spec.remote:
        return []
    argv = spec.argv()
    parts: list[_Part] = []
    program = spec.cwd / argv[0]
    if os.sep in argv[0] and spec.command[0] != "{python}" and program.is_file():
        real = program.resolve()
        if not real.name.startswith("python") and not str(real).startswith(_SYSTEM):
            bin_folder = real.parent.name == "bin"
            parts.append(_Part(real, folders=(real.parent.parent, real.parent) if bin_folder else (real.parent,)))
    for before, part in itertools.pairwise(argv):  # the script or module: the first argument of its kind
        if before == "-m":
            parts += _module_part(spec.cwd, part)
            break
        if part.startswith("-") or before in ("-c", "-W", "-X", "-e", "--eval", "-r", "--require"):
            continue
        path = (spec.cwd / part).resolve()
        if path.is_file():
            parts.append(_Part(path, folders=(path.parent,)))
        elif path.is_dir() and path != Path("/"):
            parts.append(_Part(path, folders=(path,)))
        break
    return parts


def _module_part(cwd: Path, dotted: str) -> list[_Part]:
    """Return the part for ``-m dotted`` when the module lies under ``cwd`` (not, say, in site-packages)."""
    names = dotted.split(".")
    packages = [cwd.joinpath(*names[:i]).resolve() for i in range(1, len(names))]
    target = cwd.joinpath(*names).resolve()
    if target.is_dir():  # a package run by its __main__
        packages.append(target)
        main = target / "__main__.py"
    else:
        main = target.with_suffix(".py")
    if not main.is_file():
        return []
    needs = tuple(p / "__init__.py" for p in packages if (p / "__init__.py").is_file())
    return [_Part(main, needs, tuple(packages))]  # a top-level module has no folder: never the working directory
