"""The jail's policy: what a bot's jail shows it of the machine, and the ``PATH`` it gets there.

A jailed bot sees the system's runtime, its interpreter, for a Python bot the SDK of the ``arena`` package
(:data:`SDK_FILES`) and the games registered by name, the files its bot list entry names, and its own folder, never
a folder that holds another bot of its list (:func:`jail_binds`), and never the games' bundled bots (each game's
``bots`` folder, :func:`bundled_bot_folders`) but a bundled bot its own folder there. The jail itself is built by
:mod:`arena.launch.sandbox`.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.games import BOT_LIST, game_folder, game_names, registered
from arena.launch.botlist import _SYSTEM, BotSpec, _Part, _program_parts
from arena.launch.sandbox import Bind, interpreter_folders


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


SDK_FILES = ("__init__.py", "sdk", "protocol/__init__.py", "protocol/codec.py", "protocol/http2.py", "text.py",
             "games", "v2")
"""What a Python bot's jail shows of the ``arena`` package, relative to it: the SDK and what it imports (the
games' folders, the protocol's codec and HTTP/2, the envelope's generated code), never the
arena's own modules (cli, core, ladder, launch, the protocol's server, tools, web...), nor the games' bundled bots
(``games/*/bots``, :func:`bundled_bot_folders`). tests/test_bot_files.py checks that the SDK and the bundled bots
import nothing else (a bundled bot nothing of another's folder)."""

JAIL_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""The system's folders of programs, on every jailed bot's ``PATH`` after its interpreter's or program's own."""


def bundled_bot_folders() -> list[str]:
    """Return the folders that hold bundled bots, which no jail shows whole: the ``bots`` folder (beside its list,
    :data:`arena.games.BOT_LIST`) of every registered game, and of every game folder in each ``arena`` package a
    Python bot may import (built in or not, registered or not). A bundled bot is shown its own folder in it."""
    found: set[str] = set()
    for name in game_names():
        folder = game_folder(name)
        bots = folder / Path(BOT_LIST).parent if folder is not None else None
        if bots is not None and bots.is_dir():
            found.add(str(bots))
    for sdk in _sdk_folders():
        pattern = os.path.join(glob.escape(sdk), "games", "*", Path(BOT_LIST).parent.name, "")
        found |= {os.path.realpath(path) for path in glob.glob(pattern)}
    return sorted(found)


def _sdk_files(bundled: set[str]) -> list[str]:
    """Return the files and folders of :data:`SDK_FILES` in each ``arena`` package a Python bot may import, with
    the compiled forms of the single files (the bot cannot write them, and would compile them at every start);
    the folders without what ``bundled`` holds (the games' bundled bots)."""
    found: list[str] = []
    for folder in _sdk_folders():
        for name in SDK_FILES:
            path = os.path.join(folder, name)
            if os.path.exists(path):
                found += _without(path, bundled)
            if name.endswith(".py"):
                parent, file = os.path.split(name)
                found += glob.glob(os.path.join(glob.escape(os.path.join(folder, parent)), "__pycache__",
                                                f"{file[:-3]}.*.pyc"))
    return found


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _shown_folder(spec: BotSpec, part: _Part, kept: Sequence[str] = ()) -> Path | None:
    """Return the folder the jail shows whole for ``part``: the outermost that holds no other bot's program (a
    bot that runs the same program does not count) and is or holds none of the folders ``kept`` (the ``arena``
    package, the games' bundled bots: a bundled bot run as ``-m arena.games.GAME.bots.NAME.bot`` is shown
    ``bots/NAME``, never ``arena`` or ``bots``), or None: the jail shows the program and the bot's files."""
    others = [main for _, main in spec.neighbours if main != part.main]
    return next((f for f in part.folders if not any(_inside(main, f) for main in others)
                 and not any(_inside(Path(k), f) for k in kept)), None)


def shared_folders(bots: Sequence[BotSpec]) -> list[str]:
    """Return one warning per folder that holds a bot and another bot of its list, naming them and the fix.

    ``bots`` come from one bot list (:func:`arena.launch.botlist.parse_bot_list`, which tells each bot its
    neighbours); a bot given alone is checked against its neighbours all the same (``arena check`` checks one bot
    of a list).
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
    the SDK of the ``arena`` package (:data:`SDK_FILES`), the files its bot list entry names (``files``) and its
    own folder: the folder of its program or of the first file its command names, or the packages of
    ``-m pkg.module`` under its working directory (see :func:`arena.launch.botlist._program_parts`). Never the
    working directory as a whole (for the bundled bots that is the project's root, with the database and logs),
    never what later arguments name, and never a folder that holds another bot of its list: then only the
    program's file (and its packages' ``__init__.py``). Never the games' bundled bots either
    (:func:`bundled_bot_folders`: the SDK's ``games`` and the games registered by name are shown without them),
    but to a bundled bot its own folder there. Where the interpreter's folders hold the ``arena`` package, the
    bundled bots or another bot, those are left out of them.
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
    bundled = set(bundled_bot_folders())
    if python:
        broad += interpreter_folders()
        own += _sdk_files(bundled)
        own += [path for _, folder in registered_game_folders() for path in _without(folder, bundled)]
    # the protocol's definition: the envelope (proto/ beside the arena package, where it is) and each game's
    # messages (arena/games/<name>/<name>.proto): public, and what a bot in another language may load at run time
    own += [str(Path(sdk).parent / "proto") for sdk in _sdk_folders() if (Path(sdk).parent / "proto").is_dir()]
    own += [path for sdk in _sdk_folders()
            for path in sorted(glob.glob(os.path.join(glob.escape(sdk), "games", "*", "*.proto")))]
    hidden = {*_sdk_folders(), *(str(Path(sdk).parent / "bots") for sdk in _sdk_folders()), *bundled}
    hidden |= {str(main.parent) for _, main in spec.neighbours}
    kept = [*_sdk_folders(), *bundled]
    for part in _program_parts(spec):
        folder = _shown_folder(spec, part, kept)
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
