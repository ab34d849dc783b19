"""``bot.toml``: the manifest at the root of a submission's folder, which says what the bot is called, how to run
(and build) it, which games it plays and in which runtime.

::

    name = "my-bot"          # on the leaderboard: 1-32 of a-z 0-9 - _, starting with a letter or digit
    command = ["bot.py"]     # the program and its arguments, run in the folder after the runtime's program
    games = ["cabanga"]      # the games it plays
    runtime = "python"       # one of the contest's runtimes
    build = ["make"]         # optional: run in the folder before the check
    description = "..."      # optional: up to 500 characters, shown on the author's page

This module checks the manifest on its own; whether the games and the runtime are the contest's is the contest's
check, since only it knows them.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "bot.toml"
MANIFEST_BYTES = 64 * 1024
"""The biggest bot.toml read: a manifest is a few lines; anything bigger is a mistake or an attack."""

NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
"""A bot's or a runtime's name: it appears in URLs, file names and the leaderboard, so plain lower-case ASCII."""

GAME = re.compile(r"[a-z0-9_-]{1,32}")
"""A game's name, as the games registry spells them."""

COMMAND_ITEMS = 32
COMMAND_ITEM_CHARS = 256
DESCRIPTION_CHARS = 500

EXAMPLE = '''name = "my-bot"
command = ["bot.py"]
games = ["cabanga"]
runtime = "python"
'''
"""The smallest complete bot.toml, shown in messages about a missing one."""

_EXAMPLES = {
    "name": 'name = "my-bot"',
    "command": 'command = ["bot.py"]',
    "games": 'games = ["cabanga"]',
    "runtime": 'runtime = "python"',
    "build": 'build = ["make"]',
    "description": 'description = "plays the lowest card that wins"',
}
_REQUIRED = ("name", "command", "games", "runtime")
_KNOWN = (*_REQUIRED, "build", "description")


class ManifestError(ValueError):
    """A bot.toml that is missing, unreadable or breaks a rule; the message names the key and shows an example."""


@dataclass(frozen=True, slots=True)
class Manifest:
    """A submission's bot.toml, checked: its ``name`` on the leaderboard, the ``command`` run (after the runtime's
    program) in its folder, the ``games`` it plays, its ``runtime``, the optional ``build`` command run in the folder
    before the check (None: nothing to build), and the ``description`` shown on the author's page."""

    name: str
    command: tuple[str, ...]
    games: tuple[str, ...]
    runtime: str
    build: tuple[str, ...] | None = None
    description: str = ""

    def to_toml(self) -> str:
        """Return this manifest as bot.toml text, which :func:`parse_manifest` reads back to an equal manifest."""
        lines = [f"name = {_toml_string(self.name)}", f"command = {_toml_list(self.command)}",
                 f"games = {_toml_list(self.games)}", f"runtime = {_toml_string(self.runtime)}"]
        if self.build is not None:
            lines.append(f"build = {_toml_list(self.build)}")
        if self.description:
            lines.append(f"description = {_toml_string(self.description)}")
        return "\n".join(lines) + "\n"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    """Return ``text`` as a TOML basic string: quotes, backslashes and control characters escaped (TOML allows
    none of them raw), everything else as it is."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _toml_list(items: tuple[str, ...]) -> str:
    """Return ``items`` as a TOML array of basic strings."""
    return "[" + ", ".join(_toml_string(item) for item in items) + "]"


def _describe(value: object) -> str:
    """Return what ``value`` is in TOML's words, for a message about a wrong type."""
    kinds = ((bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"), (list, "a list"),
             (dict, "a table"))
    for kind, words in kinds:
        if isinstance(value, kind):
            return f"{value!r} ({words})"
    return f"{value!r} (a date or time)"


def _text(key: str, value: object, what: str) -> str:
    """Return ``value`` when it is a string. Raises :class:`ManifestError` naming ``key``, showing an example."""
    if not isinstance(value, str):
        raise ManifestError(f"{key!r} must be {what}, for example {_EXAMPLES[key]}; got {_describe(value)}")
    return value


def _name(key: str, value: object, pattern: re.Pattern[str], rule: str) -> str:
    """Return ``value`` when it is a string that ``pattern`` matches whole. Raises :class:`ManifestError` saying
    ``rule``."""
    text = _text(key, value, "a string")
    if not pattern.fullmatch(text):
        raise ManifestError(f"{key!r} is {text!r}, which is not a valid name: {rule}, for example {_EXAMPLES[key]}")
    return text


_NAME_RULE = "1 to 32 characters of a-z 0-9 - _, starting with a letter or a digit"


def _command(key: str, value: object) -> tuple[str, ...]:
    """Return ``value`` as a command: a list of 1 to :data:`COMMAND_ITEMS` strings of at most
    :data:`COMMAND_ITEM_CHARS` characters, without NUL, the first not empty, none an absolute path or with a ``..``
    part (the command runs in the bot's folder with the runtime's program in front; it names nothing outside).
    Raises :class:`ManifestError` naming ``key`` and the bad item."""
    example = _EXAMPLES[key]
    if not isinstance(value, list):
        raise ManifestError(f"{key!r} must be a list of strings, for example {example}; got {_describe(value)}")
    if not 1 <= len(value) <= COMMAND_ITEMS:
        extra = "; leave it out for no build" if key == "build" and not value else ""
        raise ManifestError(f"{key!r} must have 1 to {COMMAND_ITEMS} items, not {len(value)}{extra}, for example "
                            f"{example}")
    items: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ManifestError(f"{key!r} must hold strings, for example {example}; got {_describe(item)}")
        if len(item) > COMMAND_ITEM_CHARS:
            raise ManifestError(f"{key!r} item {item[:40] + '...'!r} is longer than {COMMAND_ITEM_CHARS} characters")
        if "\x00" in item:
            raise ManifestError(f"{key!r} item {item!r} has a NUL character")
        if item.startswith("/"):
            # the jail shows the bot only its folder: a path outside it means nothing there
            raise ManifestError(f"{key!r} item {item!r} is an absolute path: name files relative to the "
                                "bot's folder (the contest puts the runtime's program in front)")
        if ".." in item.split("/"):
            raise ManifestError(f"{key!r} item {item!r} has a '..' part: name files inside the bot's folder")
        items.append(item)
    if not items[0]:
        raise ManifestError(f"{key!r} starts with an empty string: the first item is the program, for example "
                            f"{example}")
    return tuple(items)


def _games(value: object) -> tuple[str, ...]:
    """Return ``value`` as the games: a non-empty list of distinct game names. Raises :class:`ManifestError`."""
    example = _EXAMPLES["games"]
    if not isinstance(value, list):
        raise ManifestError(f"'games' must be a list of game names, for example {example}; got {_describe(value)}")
    if not value:
        raise ManifestError(f"'games' is empty: name at least one game the bot plays, for example {example}")
    games: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise ManifestError(f"'games' must hold strings, for example {example}; got {_describe(item)}")
        if not GAME.fullmatch(item):
            raise ManifestError(f"'games' names {item!r}, which is not a game name: 1 to 32 characters of a-z 0-9 "
                                f"- _, for example {example}")
        if item in games:
            raise ManifestError(f"'games' names {item!r} twice")
        games.append(item)
    return tuple(games)


def parse_manifest(text: str) -> Manifest:
    """Return the manifest that the bot.toml ``text`` describes.

    Raises :class:`ManifestError` when ``text`` is not TOML, misses a required key (``name``, ``command``,
    ``games``, ``runtime``), has a key this module does not know, or has a value of the wrong type or form; the
    message names the key and shows an example.
    """
    try:
        # a str from Python may hold lone surrogates, which no file could; TOML's escapes cannot make them
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ManifestError(f"bot.toml is not valid Unicode text ({exc.reason} at character {exc.start})") from None
    try:
        table: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"bot.toml is not valid TOML ({exc}); a complete one looks like:\n{EXAMPLE}") from None
    unknown = sorted(set(table) - set(_KNOWN))
    if unknown:
        raise ManifestError(f"bot.toml has unknown keys {', '.join(map(repr, unknown))}: the known ones are "
                            f"{', '.join(_KNOWN)}")
    for key in _REQUIRED:
        if key not in table:
            raise ManifestError(f"bot.toml misses {key!r}, for example {_EXAMPLES[key]}; a complete one looks "
                                f"like:\n{EXAMPLE}")
    name = _name("name", table["name"], NAME, _NAME_RULE)
    command = _command("command", table["command"])
    games = _games(table["games"])
    runtime = _name("runtime", table["runtime"], NAME, _NAME_RULE)
    build = _command("build", table["build"]) if "build" in table else None
    description = _text("description", table.get("description", ""), "a string")
    if len(description) > DESCRIPTION_CHARS:
        raise ManifestError(f"'description' has {len(description)} characters, more than {DESCRIPTION_CHARS}: "
                            "shorten it")
    return Manifest(name=name, command=command, games=games, runtime=runtime, build=build, description=description)


def read_manifest(folder: Path, *, shown: str | None = None) -> Manifest:
    """Return the manifest in ``folder``'s bot.toml.

    Raises :class:`ManifestError` when there is none, when it is a symlink, not a regular file, bigger than
    :data:`MANIFEST_BYTES` or not UTF-8, or when :func:`parse_manifest` refuses it (its message then starts with the
    file's path). Messages name the folder ``shown`` (default: its path) and the file relative to it: a contest
    names no path of its own to an author.
    """
    path = Path(folder) / MANIFEST
    where = str(folder) if shown is None else shown
    named = str(path) if shown is None else MANIFEST
    try:
        info = path.lstat()
    except FileNotFoundError:
        raise ManifestError(f"no bot.toml in {where!r}: a submission's folder needs one, for example:\n"
                            f"{EXAMPLE}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ManifestError(f"{named!r} is a symbolic link: bot.toml must be a regular file in the folder")
    if not stat.S_ISREG(info.st_mode):
        raise ManifestError(f"{named!r} is not a regular file")
    try:
        # O_NOFOLLOW: a bot.toml swapped for a symlink since the lstat is refused, not followed
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ManifestError(f"cannot read {named!r}: {exc.strerror}") from None
    with open(handle, "rb") as source:
        # one byte past the limit tells a too-big file from one exactly at it, whatever lstat said
        raw = source.read(MANIFEST_BYTES + 1)
    if len(raw) > MANIFEST_BYTES:
        raise ManifestError(f"{named!r} is bigger than {MANIFEST_BYTES // 1024} KiB: a bot.toml is a few lines")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{named!r} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return parse_manifest(text)
    except ManifestError as exc:
        raise ManifestError(f"{named!r}: {exc}") from None
