"""Starts and stops bot processes, and keeps a table's seats connected.

A bot list is a TOML file of ``[[bot]]`` tables, with an optional ``[limits]`` table for all of them::

    [limits]                                          # optional: every bot's limits (see arena.launch.sandbox.Limits)
    memory_mb = 1024

    [[bot]]
    name = "greedy"                                   # unique; shown on the leaderboard
    command = ["{python}", "greedy/bot.py"]           # a list, or one string split like a shell would
    cwd = "."                                         # optional; relative paths start at the list's folder
    limits = { cpu_seconds = 60 }                     # optional: this bot's own limits
    files = ["weights.bin", "lib/"]                   # optional: more of what its jail shows it, under cwd

``{python}`` in a command stands for the interpreter running the arena. A launched bot gets a clean
environment holding only ``PATH``, ``HOME`` and ``TMPDIR`` (a private scratch folder), ``LANG``,
``PYTHONUNBUFFERED``, ``GRPC_EXPERIMENTS`` (:mod:`arena.protocol.transport`), ``ARENA_ADDRESS`` and
``ARENA_TOKEN`` (and for games registered by name, ``ARENA_GAMES`` and the ``PYTHONPATH`` that finds them); it
runs in a new session and process group under the sandbox's supervisor (:mod:`arena.launch.sandbox`), in its jail
where the machine gives one (:func:`jail_binds` is what the jail shows of the machine), and is stopped by
asking (Goodbye), then through its supervisor (SIGTERM, SIGKILL), then SIGKILL to the group. Its output goes
through a pipe to its log, which is cut at a size limit. Each launched bot reaches the arena through a server
and Unix socket of its own; a :class:`BotSession` owns the seat: the process, that server and the slot.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import glob
import hashlib
import importlib.util
import itertools
import logging
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from arena.core.deals import DealKey, DealLedger
from arena.games import ENVIRONMENT as GAMES_ENVIRONMENT
from arena.games import registered
from arena.launch.sandbox import (
    CPU_EXIT_CODE,
    DEFAULT_LIMITS,
    JAIL_SCRATCH,
    JAIL_SOCKET,
    Bind,
    Cgroups,
    Isolation,
    Limits,
    LimitsError,
    Mode,
    Sandbox,
    choose_sandbox,
    clean_stale_cgroups,
    clean_stale_stages,
    interpreter_folders,
    make_bot_group,
    remove_bot_group,
)
from arena.protocol import transport
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer, ServerError, Slot

log = logging.getLogger("arena.launch.launcher")

CONNECT_TIMEOUT = 15.0
"""Seconds a launched bot has to start and say hello."""
STOP_GRACE = 2.0
"""Seconds a bot has to leave after Goodbye before it is stopped by force."""
STUCK_GRACE = 0.2
"""The same for a bot that still owes answers (stuck, or spinning): it will not read the Goodbye."""


class BotListError(ValueError):
    """A bot list that cannot be read or does not describe bots properly."""


class LaunchError(RuntimeError):
    """A bot process that could not be started or did not connect; ``bots`` names the bots at fault."""

    def __init__(self, message: str, bots: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.bots = list(bots)


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
    neighbours: tuple[tuple[str, Path], ...] = field(default=(), compare=False, repr=False)
    """The other bots of its list, each by name and the file of its program (:func:`parse_bot_list` sets it): a
    folder that holds one of them is never shown whole (:func:`jail_binds`)."""

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
    """Return the folder of the bundled example bots and their lists (``GAME.toml``): the ``bots`` package,
    installed with the arena or in the source tree."""
    import bots

    return Path(bots.__file__).resolve().parent


def bundled_bots() -> dict[str, BotSpec]:
    """Return every bundled example bot, by name, from the bundled lists of all games."""
    found: dict[str, BotSpec] = {}
    for path in sorted(bundled_folder().glob("*.toml")):
        for bot in load_bot_list(path):
            found.setdefault(bot.name, bot)
    return found


def _bundled_bot(entry: dict[str, Any], shared: Limits, where: str) -> BotSpec:
    """Return the bundled bot an entry names with ``bundled = "NAME"``, wherever the arena is installed; the
    entry may rename it (``name``) and set its ``limits``, nothing else."""
    wanted = entry["bundled"]
    extra = sorted(set(entry) - {"bundled", "name", "limits"})
    if extra:
        raise BotListError(f"{where}: a bundled bot takes only name and limits besides bundled, not {extra[0]!r}")
    known = bundled_bots()
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


_announced = False


def machine_sandbox(mode: Mode | str = Mode.AUTO) -> Sandbox:
    """Return the isolation bots get for ``mode`` (probed once), saying once in the log what it is.

    Raises :class:`arena.launch.sandbox.SandboxError` when ``mode`` is strict and the machine cannot give it.
    """
    global _announced
    sandbox = choose_sandbox(mode)
    if not _announced:
        _announced = True
        log.info("%s", sandbox.describe())
        if sandbox.cgroups is not None:
            clean_stale_cgroups(sandbox.cgroups)
        if sandbox.drop_uid:
            clean_stale_stages()
    return sandbox


def describe_exit(code: int | None) -> str:
    """Return how a bot process ended, for a fault's detail: the status and what it means."""
    if code is None:
        return "still running"
    if code == CPU_EXIT_CODE:
        return f"killed by the sandbox over its CPU limit per match (status {code})"
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    if signum:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(signum).name} (status {code})"
    return f"exited with code {code}"


class _LogPump:
    """Copies a bot's output from a pipe into its log file, up to ``limit`` bytes in that file.

    Past the limit a line says so, and the rest is read at most ``CHUNK`` bytes every ``PAUSE`` seconds and
    dropped: a bot that floods its output is slowed down (its writes block), never the arena.
    """

    CHUNK = 1 << 16
    PAUSE = 0.05

    def __init__(self, fd: int, file: IO[bytes], limit: int) -> None:
        self.fd = fd
        self.file = file
        self.limit = limit
        self.room = max(0, limit - file.tell())
        self.loop = asyncio.get_running_loop()
        self.closed = False
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._readable)

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, self.CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # every writer has gone
            self.close()
            return
        self._keep(data)
        if self.room == 0:
            self.loop.remove_reader(self.fd)
            self.loop.call_later(self.PAUSE, self._resume)

    def _keep(self, data: bytes) -> None:
        if self.room == 0:
            return
        part = data[: self.room]
        self.room -= len(part)
        with contextlib.suppress(OSError):
            self.file.write(part)
            if self.room == 0:
                self.file.write(f"\n[arena: log cut at {self.limit} bytes; later output dropped]\n".encode())
            self.file.flush()

    def note(self, data: bytes) -> None:
        """Write ``data`` of the arena's own into the log, within the same limit as the bot's output."""
        self._keep(data)

    def _resume(self) -> None:
        if not self.closed:
            self.loop.add_reader(self.fd, self._readable)

    def close(self) -> None:
        """Keep what is still in the pipe (up to the limit), then close the pipe and the file."""
        if self.closed:
            return
        self.closed = True
        self.loop.remove_reader(self.fd)
        with contextlib.suppress(OSError):
            for _ in range(16):
                data = os.read(self.fd, self.CHUNK)
                if not data:
                    break
                self._keep(data)
        os.close(self.fd)
        self.file.close()


_SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/")


def _sdk_folders() -> list[str]:
    """Return the folders of the ``arena`` package a Python bot imports: this one, and the one a clean
    interpreter finds (an editable install may point elsewhere)."""
    global _sdk_cache
    if _sdk_cache is None:
        import arena

        found = {os.path.dirname(os.path.realpath(arena.__file__ or ""))}
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            done = subprocess.run([sys.executable, "-I", "-c", "import arena, os; print(os.path.dirname("
                                   "os.path.realpath(arena.__file__)))"], cwd="/", capture_output=True,
                                  text=True, timeout=20, check=False)
            if done.returncode == 0 and done.stdout.strip():
                found.add(done.stdout.strip())
        _sdk_cache = sorted(f for f in found if f)
    return list(_sdk_cache)


_sdk_cache: list[str] | None = None


SDK_FILES = ("__init__.py", "sdk", "protocol/__init__.py", "protocol/codec.py", "protocol/transport.py", "text.py",
             "games", "v2")
"""What a Python bot's jail shows of the ``arena`` package, relative to it: the SDK and what it imports (the
games' folders, the protocol's codec and gRPC environment, the envelope's generated code), never the arena's own
modules (cli, core, ladder, launch, the protocol's server, tools, web...). tests/test_bot_files.py checks that the
SDK and the bundled bots import nothing else."""

JAIL_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""The system's folders of programs, on every jailed bot's ``PATH`` after its interpreter's or program's own."""


def _sdk_files() -> list[str]:
    """Return the files and folders of :data:`SDK_FILES` in each ``arena`` package a Python bot may import, with
    the compiled forms of the single files (the bot cannot write them, and would compile them at every start)."""
    found: list[str] = []
    for folder in _sdk_folders():
        for name in SDK_FILES:
            path = os.path.join(folder, name)
            if os.path.exists(path):
                found.append(path)
            if name.endswith(".py"):
                parent, file = os.path.split(name)
                found += glob.glob(os.path.join(glob.escape(os.path.join(folder, parent)), "__pycache__",
                                                f"{file[:-3]}.*.pyc"))
    return found


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


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _shown_folder(spec: BotSpec, part: _Part) -> Path | None:
    """Return the folder the jail shows whole for ``part``: the outermost that holds no other bot's program (a
    bot that runs the same program does not count), or None: the jail shows the program and the bot's files."""
    others = [main for _, main in spec.neighbours if main != part.main]
    return next((f for f in part.folders if not any(_inside(main, f) for main in others)), None)


def shared_folders(bots: Sequence[BotSpec]) -> list[str]:
    """Return one warning per folder that holds a bot and another bot of its list, naming them and the fix.

    ``bots`` come from one bot list (:func:`parse_bot_list`, which tells each bot its neighbours); a bot given
    alone is checked against its neighbours all the same (``arena check`` checks one bot of a list).
    """
    shared: dict[Path, list[str]] = {}
    for bot in bots:
        for part in _program_parts(bot):
            if part.folders and _shown_folder(bot, part) is None:
                folder = part.folders[-1]
                names = shared.setdefault(folder, [])
                names += [n for n in [bot.name] + [other for other, main in bot.neighbours
                                                   if main != part.main and _inside(main, folder)]
                          if n not in names]
    return [f"bots {', '.join(map(repr, names[:-1]))} and {names[-1]!r} share the folder {str(folder)!r}, so the jail "
            f"shows a bot there only its program and its files: give each bot a folder of its own, or name the "
            f"files each one reads with `files = [...]` in its bot list entry" for folder, names in shared.items()]


def _without(folder: str, hidden: set[str]) -> list[str]:
    """Return ``folder``, or when a path of ``hidden`` lies inside it, everything in it but that path (and but a
    link that leads to it: bound, the link would show what it leads to)."""
    if not any(h.startswith(folder.rstrip("/") + "/") for h in hidden) or not os.path.isdir(folder):
        return [folder]
    kept: list[str] = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if entry.path in hidden:
                continue
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if not any(_inside(Path(h), Path(real)) or _inside(Path(real), Path(h)) for h in hidden):
                    kept.append(entry.path)
                continue
            kept += _without(entry.path, hidden)
    return kept


def jail_binds(spec: BotSpec) -> list[Bind]:
    """Return what a bot's jail shows read-only beyond the system's runtime.

    That is: the interpreter it runs under, the ``proto`` folder and the games' ``.proto`` files, for a Python bot
    the SDK of the ``arena`` package (:data:`SDK_FILES`), the files its bot list entry names (``files``) and its own
    folder: the folder of its program or of the first file its command names, or the packages of ``-m pkg.module``
    under its working directory (see :func:`_program_parts`). Never the working directory as a whole (for the
    bundled bots that is the project's root, with the database and logs), never what later arguments name, and never
    a folder that holds another bot of its list: then only the program's file (and its packages' ``__init__.py``).
    Where the interpreter's folders hold the ``arena`` package, the bundled bots or another bot, those are left out
    of them.
    """
    argv = spec.argv()
    broad: list[str] = []  # the machine's folders, which may hold what the bot must not see
    own: list[str] = []
    program = argv[0]
    found = str(spec.cwd / program) if os.sep in program else shutil.which(program)
    python = spec.command[0] == "{python}"
    if found is not None and os.path.exists(found):
        real = os.path.realpath(found)
        python = python or os.path.basename(real).startswith("python")
        if (python or os.sep not in program) and not real.startswith(_SYSTEM):
            parent = os.path.dirname(real)
            broad.append(os.path.dirname(parent) if os.path.basename(parent) == "bin" else parent)
    if python:
        broad += interpreter_folders()
        own += _sdk_files()
        own += [folder for _, folder in registered_game_folders()]
    # the protocol's definition: the envelope (proto/ beside the arena package, where it is) and each game's
    # messages (arena/games/<name>/<name>.proto): public, and what a bot in another language may load at run time
    own += [str(Path(sdk).parent / "proto") for sdk in _sdk_folders() if (Path(sdk).parent / "proto").is_dir()]
    own += [path for sdk in _sdk_folders()
            for path in sorted(glob.glob(os.path.join(glob.escape(sdk), "games", "*", "*.proto")))]
    hidden = {*_sdk_folders(), *(str(Path(sdk).parent / "bots") for sdk in _sdk_folders())}
    hidden |= {str(main.parent) for _, main in spec.neighbours}
    for part in _program_parts(spec):
        folder = _shown_folder(spec, part)
        own.append(str(folder if folder is not None else part.main))
        own += [str(n) for n in part.needs if folder is None or not _inside(n, folder)]
        hidden |= {str(f) for f in part.folders if folder is None or not _inside(f, folder)}
    own += [str(path) for path in spec.files]
    shown = [path for folder in dict.fromkeys(broad) for path in _without(folder, hidden)]
    return [Bind(path) for path in sorted({*shown, *own})]


def registered_game_folders() -> list[tuple[str, str]]:
    """Return (game, its package's folder) for every game registered by name (:func:`arena.games.register`,
    ``ARENA_GAMES``) whose package can be found: a Python bot is shown it, read-only, and finds it on its
    ``PYTHONPATH``. Installed games (entry points) live in the interpreter's folders, shown already."""
    found = []
    for name, package in registered().items():
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.submodule_search_locations:
            found.append((name, os.path.realpath(next(iter(spec.submodule_search_locations)))))
    return found


def jail_path(spec: BotSpec) -> str:
    """Return the ``PATH`` of a jailed bot: the folder of its interpreter or program, then :data:`JAIL_PATH`;
    never the arena's own ``PATH``, whose folders the jail does not hold."""
    program = spec.argv()[0]
    found = str(spec.cwd / program) if os.sep in program else shutil.which(program)
    first = [os.path.dirname(os.path.abspath(found))] if found is not None and os.path.exists(found) else []
    return ":".join(dict.fromkeys([*first, *JAIL_PATH]))


class BotProcess:
    """One running bot program: sandboxed, in its own session, stopped by asking, terminating, killing.

    :attr:`ended` resolves, once the process has exited, to how it ended (:func:`describe_exit`): the
    process's end is watched through a pidfd (or a thread where there is none), never polled.
    """

    def __init__(self, spec: BotSpec, log_path: Path | None = None, *, sandbox: Sandbox | None = None,
                 group: Cgroups | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        self.group = group
        """The bot's cgroup at its table (:func:`arena.launch.sandbox.make_bot_group`): every process of the bot
        there runs in it, bounded together; ``None``: the process is bounded alone."""
        self.scratch: Path | None = None
        self._log_start = 0
        """Where this process's output begins in its log (a log file is appended to by each restart)."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._pump: _LogPump | None = None
        self._ended: asyncio.Future[str] | None = None

    @property
    def pid(self) -> int | None:
        """The process id of the bot's outermost process (its supervisor when sandboxed)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def ended(self) -> asyncio.Future[str]:
        """A future that resolves to how the process ended (set up by :meth:`start`)."""
        assert self._ended is not None, "the process has not been started"
        return self._ended

    def alive(self) -> bool:
        """Return whether the process has been started and has not exited (asking the system, not the loop)."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def _check_command(self, argv: Sequence[str]) -> None:
        program = argv[0]
        if os.sep in program:
            path = self.spec.cwd / program
            found = path.is_file() and os.access(path, os.X_OK)
        else:
            found = shutil.which(program, path=os.environ.get("PATH", os.defpath)) is not None
        if not found:
            raise LaunchError(f"bot {self.spec.name!r}: cannot start {list(argv)!r}: {program!r} is not an "
                              "executable file", bots=[self.spec.name])

    def start(self, address: str, token: str) -> None:
        """Start the bot with ``address`` and ``token`` in its environment. Raises :class:`LaunchError`.

        ``address`` is ``unix:PATH`` of the bot's own socket (in the jail the bot finds it at
        :data:`arena.launch.sandbox.JAIL_SOCKET`), or a TCP address. Must be called with an event loop running (the
        loop reads the bot's output into its log and sees the process end).
        """
        argv = self.spec.argv()
        self._check_command(argv)
        jailed = self.sandbox.isolation is Isolation.JAIL
        if not jailed:
            self.scratch = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        home = JAIL_SCRATCH if jailed else str(self.scratch)
        socket = address.removeprefix("unix:") if address.startswith("unix:") else None
        env = {
            "PATH": jail_path(self.spec) if jailed else os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": home,
            "TMPDIR": home,
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "ARENA_ADDRESS": f"unix:{JAIL_SOCKET}" if jailed and socket is not None else address,
            "ARENA_TOKEN": token,
        }
        if transport.experiments():
            env["GRPC_EXPERIMENTS"] = transport.experiments()
        games = registered_game_folders()
        if games:  # games registered by name (ARENA_GAMES): a Python bot finds them as the arena does
            env[GAMES_ENVIRONMENT] = ",".join(f"{name}={package}" for name, package in registered().items())
            env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(os.path.dirname(f) for _, f in games))
        log_file: IO[bytes] | None = None
        read_end = write_end = -1
        try:
            if self.log_path is not None:
                try:
                    self.log_path.parent.mkdir(parents=True, exist_ok=True)
                    log_file = open(self.log_path, "ab", buffering=0)  # noqa: SIM115 - the pump closes it
                    self._log_start = log_file.tell()
                except OSError as exc:
                    raise LaunchError(f"bot {self.spec.name!r}: cannot open its log {str(self.log_path)!r}: "
                                      f"{exc}", bots=[self.spec.name]) from None
                read_end, write_end = os.pipe()
            sandboxed = self.sandbox.isolation is not Isolation.NONE
            command = self.sandbox.command(argv, self.spec.limits, cwd=str(self.spec.cwd),
                                           binds=jail_binds(self.spec) if jailed else (), socket=socket, env=env,
                                           group=self.group)
            output: int = write_end if write_end >= 0 else subprocess.DEVNULL
            try:
                self._proc = subprocess.Popen(
                    command, cwd=self.spec.cwd, env=env,
                    stdin=subprocess.PIPE if sandboxed else subprocess.DEVNULL,
                    stdout=output, stderr=output, start_new_session=True, close_fds=True)
            except OSError as exc:
                # out of processes or descriptors is the arena's trouble, not the bot's: nobody is charged
                blame = [] if exc.errno in (errno.EMFILE, errno.ENFILE, errno.EAGAIN, errno.ENOMEM) \
                    else [self.spec.name]
                raise LaunchError(f"bot {self.spec.name!r}: cannot start {argv!r}: {exc}", bots=blame) from None
            self._watch_exit(self._proc)
            if log_file is not None:
                self._pump = _LogPump(read_end, log_file, self.spec.limits.log_kb * 1024)
                log_file = None
                read_end = -1
        except BaseException:
            if log_file is not None:
                log_file.close()
            if read_end >= 0:
                os.close(read_end)
            self._remove_scratch()
            raise
        finally:
            if write_end >= 0:
                os.close(write_end)

    def _watch_exit(self, proc: subprocess.Popen[bytes]) -> None:
        """Resolve :attr:`ended` when ``proc`` exits: a pidfd in the event loop, or a thread that waits."""
        loop = asyncio.get_running_loop()
        ended: asyncio.Future[str] = loop.create_future()
        self._ended = ended

        def done() -> None:
            if not ended.done():
                ended.set_result(describe_exit(proc.wait()))

        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            import threading

            def wait() -> None:
                proc.wait()
                with contextlib.suppress(RuntimeError):  # the loop is closed
                    loop.call_soon_threadsafe(done)

            threading.Thread(target=wait, name=f"wait-{self.spec.name}", daemon=True).start()
            return

        def readable() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            done()

        loop.add_reader(pidfd, readable)

    def new_match(self) -> None:
        """Tell the supervisor a match begins: the bot is thawed, its CPU allowance starts again."""
        self._control(b"renew\n")

    def freeze(self) -> None:
        """Tell the supervisor the bot waits, warm, for a later match: it is frozen (with cgroups), and
        spends nothing meanwhile."""
        self._control(b"freeze\n")

    def thaw(self) -> None:
        """Tell the supervisor to thaw a frozen bot (before it is asked to leave)."""
        self._control(b"thaw\n")

    def note(self, line: str) -> None:
        """Write a line of the arena's own into the bot's log (say, a marker at each match start)."""
        if self._pump is not None:
            self._pump.note(f"[arena] {line}\n".encode())

    def output_tail(self, limit: int = 1200, head: int = 400) -> str:
        """Return this process's output so far (its log), for the message of a bot that failed: all of it when
        it is short, else its first ``head`` characters (up to a line end: where a panic or a traceback says
        what went wrong first) and its last ones, ``limit`` in all, with a line marking what is left out."""
        if self._pump is not None and not self.alive():
            self._pump.close()  # the process has gone: keep what is left in the pipe
            self._pump = None
        if self.log_path is None:
            return ""
        try:
            with open(self.log_path, "rb") as file:
                file.seek(0, os.SEEK_END)
                size = file.tell() - self._log_start
                file.seek(self._log_start)
                if size <= limit:
                    return file.read().decode("utf-8", "replace").strip()
                first = file.read(head)
                first = first[: first.rfind(b"\n") + 1] or first
                file.seek(-(limit - len(first)), os.SEEK_END)
                last = file.read()
        except OSError:
            return ""
        left_out = size - len(first) - len(last)
        return (f"{first.decode('utf-8', 'replace').rstrip()}\n[... {left_out} bytes left out ...]\n"
                f"{last.decode('utf-8', 'replace').strip()}")

    def _control(self, message: bytes) -> None:
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                os.set_blocking(stdin.fileno(), False)
                os.write(stdin.fileno(), message)

    def _close_control(self) -> None:
        """Close the supervisor's input: it stops the bot (SIGTERM, then SIGKILL) and everything it started."""
        stdin = self._proc.stdin if self._proc is not None else None
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError):
                stdin.close()

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop the process and its group: wait ``grace`` seconds for it to leave, then make it.

        Sandboxed, the supervisor is told to stop the bot (SIGTERM, SIGKILL half a second later, then every
        process the bot started); the group gets SIGTERM, and SIGKILL if anything is left after 1.5 s.
        """
        proc = self._proc
        if proc is None:
            return
        try:
            if not await self._wait(grace):
                self._close_control()
                self._signal_group(signal.SIGTERM)
                if not await self._wait(1.5):
                    self._signal_group(signal.SIGKILL)
                    await self._wait(2.0)
            # children that outlived their parent still belong to the group
            self._signal_group(signal.SIGKILL)
        finally:
            self._close_control()
            if self._pump is not None:
                self._pump.close()
                self._pump = None
            self._remove_scratch()

    def _remove_scratch(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    async def _wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the process to end; return whether it has."""
        try:
            await asyncio.wait_for(asyncio.shield(self.ended), seconds)
        except TimeoutError:
            return False
        return True

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def log_file_name(name: str, index: int) -> str:
    """Return the log file name of the ``index``-th process of bot ``name``: no folder, no hidden file."""
    return f"{_UNSAFE.sub('_', name).lstrip('.') or 'bot'}-{index}.log"


REMOTE_CONNECT_TIMEOUT = 120.0
"""Seconds the arena waits for a remote bot (one it does not start) to connect with its token."""

Key = tuple[str, int]
"""A process of a table: the bot's name, and which of that bot's processes (0, 1...)."""


class BotSession:
    """One seat holder and everything of it: the bot's process, its own server and socket, its slot.

    A launched bot gets a server of its own (:meth:`arena.protocol.server.ArenaServer.private`) on a Unix socket in
    ``folder``, which only its jail holds; its hello, its connections and its floods stay there. A remote bot
    (one with a token) has a slot on the ``shared`` server and no process. The session is the one owner of
    the seat's life: :meth:`start` waits for whichever comes first of the hello, the process's end and the
    time limit; :meth:`stop` says goodbye, stops the process and then the server.
    """

    def __init__(self, spec: BotSpec, name: str, *, shared: ArenaServer, folder: Path | None,
                 sandbox: Sandbox, log_path: Path | None, group: Cgroups | None = None) -> None:
        self.spec = spec
        self.name = name
        self.remote = spec.remote
        self.server = shared if self.remote else ArenaServer.private()
        self.folder = folder
        self.process: BotProcess | None = None if self.remote else BotProcess(spec, log_path, sandbox=sandbox,
                                                                                group=group)
        self.slot: Slot = shared.add_slot(name, spec.token) if self.remote else self.server.add_slot(name)

    @property
    def ready(self) -> bool:
        """Return whether the seat can play a match as it is: connected, running, owing no answers."""
        running = self.process is None or self.process.alive()
        return self.slot.online and running and not self.slot.owes_answers

    @property
    def stuck(self) -> bool:
        return self.slot.owes_answers or not self.slot.online

    def new_match(self) -> None:
        if self.process is not None:
            self.process.new_match()

    def freeze(self) -> None:
        """Freeze the idle process until its next match (:meth:`BotProcess.freeze`)."""
        if self.process is not None:
            self.process.freeze()

    def note(self, line: str) -> None:
        """Write a marker line into the bot's log (a remote bot has none)."""
        if self.process is not None:
            self.process.note(line)

    def seat(self, name: str) -> RemoteSeat:
        """Return the referee seat of this session, shown as ``name``."""
        self.slot.name = name
        return RemoteSeat(self.slot, self.process.ended if self.process is not None else None)

    async def start(self, timeout: float) -> str:
        """Start the bot and wait for its hello; return why it did not connect ("" when it did).

        Raises :class:`LaunchError` when the process cannot be started.
        """
        if self.process is not None:
            assert self.folder is not None
            self.folder.mkdir(mode=0o700)
            try:
                address = await self.server.start(f"unix:{self.folder / 'arena.sock'}")
            except ServerError as exc:
                raise LaunchError(f"bot {self.name!r}: no socket for it: {exc}") from None  # not the bot's fault
            self.process.start(address, self.slot.token)
        hello = asyncio.ensure_future(self.slot.connected.wait())
        waits: set[asyncio.Future[Any]] = {hello}
        if self.process is not None:
            waits.add(self.process.ended)
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hello.cancel()
        if self.slot.connected.is_set():
            return ""
        bot = self.spec.name
        if self.process is not None and self.process.ended.done():
            tail = self.process.output_tail()
            said = f"; its output was: {tail}" if tail else ""
            return f"bot {bot!r} {self.process.ended.result()} before connecting{said}"
        if self.remote:
            return (f"remote bot {bot!r} did not connect to {self.server.address} with its token within "
                    f"{timeout:.0f} s")
        return f"bot {bot!r} did not connect within {timeout:.0f} s"

    async def stop(self) -> None:
        """Say goodbye, stop the process (briefly for a stuck one, which will not read it) and its server."""
        stuck = self.stuck
        if self.process is not None:
            self.process.thaw()  # a frozen bot would not read its goodbye
        self.server.remove_slot(self.slot)
        try:
            if self.process is not None:
                await self.process.stop(STUCK_GRACE if stuck else STOP_GRACE)
        finally:
            if not self.remote:
                await self.server.stop(0)
                if self.folder is not None:
                    shutil.rmtree(self.folder, ignore_errors=True)


FOLDER_PREFIX = "arena-bots-"
"""A table's private folder of sockets, in the temporary folder: the prefix, the arena's pid, a random part."""


def _remove_stale_folders() -> None:
    """Remove the socket folders of arenas that are gone (killed before they could clear up)."""
    with contextlib.suppress(OSError):
        for entry in Path(tempfile.gettempdir()).glob(f"{FOLDER_PREFIX}*-*"):
            pid = entry.name.removeprefix(FOLDER_PREFIX).split("-")[0]
            if pid.isdigit() and entry.is_dir() and not _alive(int(pid)):
                shutil.rmtree(entry, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def raise_open_files() -> None:
    """Raise this process's limit of open files to its hard limit: every bot costs the arena a few descriptors
    (its socket, connections, pipes), and each bot's own connections are bounded (PRIVATE_CONNECTIONS)."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


class ProcessPool:
    """The bot processes of one table, each with its own socket, kept warm between matches.

    :meth:`seat` returns a referee seat per bot, starting (or restarting, with a new token) only the
    processes that are not already running, connected and idle; up to ``keep`` idle processes stay warm for
    later matches, the least recently used beyond that are stopped. A process that still owes answers from
    its previous match (stuck, or spinning) is restarted. No process is ever seated at a deal it has played:
    ``ledger`` (:class:`arena.core.deals.DealLedger`) picks each seat's process, and a new one is started when no
    warm process of the bot qualifies. ``sandbox`` is the isolation of the bots (default:
    the strongest this machine gives, :func:`machine_sandbox`). ``server`` is the shared server, where
    remote bots connect; each launched bot has a server of its own (:class:`BotSession`).
    """

    def __init__(self, server: ArenaServer, *, log_dir: Path | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, keep: int = 0, sandbox: Sandbox | None = None,
                 ledger: DealLedger | None = None) -> None:
        self.server = server
        self.ledger = ledger if ledger is not None else DealLedger()
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.keep = keep
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        raise_open_files()
        self._running: dict[Key, BotSession] = {}
        self._groups: dict[str, Cgroups] = {}
        """Each launched bot's cgroup at this table (with cgroups): all its processes here, bounded together."""
        self._folder: Path | None = None
        self._made = 0
        self.starts = 0
        self.restarts = 0

    def _session_folder(self) -> Path:
        """Return a new folder for one launched bot's socket, inside the table's private folder."""
        if self._folder is None:
            _remove_stale_folders()
            self._folder = Path(tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{os.getpid()}-"))
        self._made += 1
        return self._folder / str(self._made)

    async def seat(self, bots: Sequence[BotSpec], names: Sequence[str] | None = None, *,
                   deal: DealKey, match: str = "") -> list[RemoteSeat]:
        """Return one seat per bot in ``bots`` (a bot listed twice gets two processes), all connected, for a
        match of ``deal``: no process gets a seat at a deal it has played before.

        ``names`` are the seats' display names (default: the bots' names). ``match`` names the match about to
        be played: each bot's log gets a marker line with it and the seat. Raises :class:`LaunchError`
        naming every bot that did not start or connect (with the end of its output when it has a log);
        ``error.bots`` holds their names.
        """
        names = list(names) if names is not None else [b.name for b in bots]
        keys: list[Key] = []
        for bot in bots:
            keys.append(self.ledger.lane(bot.name, deal, keys))
            if bot.remote and keys[-1][1] > 0:  # one stream per token: the arena cannot start another
                raise LaunchError(f"remote bot {bot.name!r} has played this deal already (or holds another seat): "
                                  "it cannot be seated at it", bots=[bot.name])
        starting: list[BotSession] = []
        try:
            for key, bot, name in zip(keys, bots, names, strict=True):
                held = self._running.get(key)
                if held is not None and held.ready:
                    self._running[key] = self._running.pop(key)  # most recently used last
                    held.new_match()
                    continue
                if held is not None:
                    await self._stop(key)
                    self.restarts += 1
                log_path = self.log_dir / log_file_name(*key) if self.log_dir is not None else None
                session = BotSession(bot, name, shared=self.server, sandbox=self.sandbox, log_path=log_path,
                                     folder=None if bot.remote else self._session_folder(),
                                     group=None if bot.remote else self._group(bot))
                self._running[key] = session
                self.starts += 1
                starting.append(session)
            timeouts = [max(self.connect_timeout, REMOTE_CONNECT_TIMEOUT) if s.remote else self.connect_timeout
                        for s in starting]
            results = await asyncio.gather(*(s.start(t) for s, t in zip(starting, timeouts, strict=True)),
                                           return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                raise errors[0]
        except BaseException:
            for key in [k for k, s in self._running.items() if s in starting]:
                await self._stop(key)
            raise
        failed = [r for r in results if isinstance(r, str) and r]
        if failed:
            bad = [k for k, s in self._running.items() if s in starting and not s.slot.online]
            for k in bad:
                await self._stop(k)
            raise LaunchError("; ".join(failed), bots=[k[0] for k in bad])
        await self._evict(set(keys))
        self.ledger.played(keys, deal)
        seats = []
        for seat, (key, name) in enumerate(zip(keys, names, strict=True)):
            session = self._running[key]
            session.note(f"match {match or '(unnamed)'} starts: seat {seat} as {name}")
            seats.append(session.seat(name))
        return seats

    def _group(self, bot: BotSpec) -> Cgroups | None:
        """Return the cgroup of ``bot`` at this table, made at its first process (``None`` without cgroups)."""
        if self.sandbox.cgroups is None or self.sandbox.isolation is Isolation.NONE:
            return None
        if bot.name not in self._groups:
            try:
                self._groups[bot.name] = make_bot_group(self.sandbox.cgroups, bot.limits)
            except OSError as exc:  # the arena's trouble (cgroups gone, out of them), not the bot's
                raise LaunchError(f"bot {bot.name!r}: cannot make its cgroup: {exc}") from None
        return self._groups[bot.name]

    async def retire(self, name: str) -> None:
        """Stop every process of the bot called ``name`` (say, a bot the ladder leaves out)."""
        for key in [k for k in self._running if k[0] == name]:
            await self._stop(key)
        group = self._groups.pop(name, None)
        if group is not None:
            remove_bot_group(group)

    async def _evict(self, busy: set[Key]) -> None:
        """Stop the idle processes beyond ``keep``, and freeze the others until they play again."""
        idle = [k for k in self._running if k not in busy]
        for key in idle[: max(0, len(idle) - self.keep)]:
            await self._stop(key)
        for key in idle[max(0, len(idle) - self.keep):]:
            self._running[key].freeze()

    async def _stop(self, key: Key) -> None:
        self.ledger.forget(key)  # the lane's next process is a new one
        await self._running.pop(key).stop()

    async def close(self) -> None:
        """Say goodbye to every bot and stop every process (ask, terminate, kill)."""
        sessions = list(self._running.values())
        for key in self._running:
            self.ledger.forget(key)
        self._running.clear()
        await asyncio.gather(*(s.stop() for s in sessions))
        for group in self._groups.values():
            remove_bot_group(group)
        self._groups.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
