"""Starts and stops bot processes, and keeps a table's seats connected.

A bot list is a TOML file of ``[[bot]]`` tables::

    [[bot]]
    name = "greedy"                                   # unique; shown on the leaderboard
    command = ["{python}", "bots/cabanga_greedy.py"]  # a list, or one string split like a shell would
    cwd = "."                                         # optional; relative paths start at the list's folder

``{python}`` in a command stands for the interpreter running the arena. A launched bot gets a clean
environment holding only ``PATH``, ``HOME``, ``LANG``, ``ARENA_ADDRESS`` and ``ARENA_TOKEN``; it runs in a new
session and process group, and is stopped by asking (Goodbye), then SIGTERM, then SIGKILL to the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import shlex
import signal
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.server import ArenaServer, RemoteSeat, Slot

log = logging.getLogger("arena.launcher")

CONNECT_TIMEOUT = 15.0
"""Seconds a launched bot has to start and say hello."""


class BotListError(ValueError):
    """A bot list that cannot be read or does not describe bots properly."""


class LaunchError(RuntimeError):
    """A bot process that could not be started or did not connect; ``bots`` names the bots at fault."""

    def __init__(self, message: str, bots: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.bots = list(bots)


@dataclass(frozen=True, slots=True)
class BotSpec:
    """One bot of a bot list: its name, the command that starts it, and its working directory."""

    name: str
    command: tuple[str, ...]
    cwd: Path

    def argv(self) -> list[str]:
        """Return the command with ``{python}`` replaced by this interpreter."""
        return [sys.executable if part == "{python}" else part for part in self.command]

    def fingerprint(self) -> str:
        """Return a hash of the command and of the files it names, so a changed bot is noticed."""
        digest = hashlib.sha256("\0".join(self.command).encode())
        for before, part in zip(("", *self.command), self.command, strict=False):
            path = self.cwd / (part.replace(".", "/") + ".py" if before == "-m" else part)
            if part != "{python}" and path.is_file():
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
    entries = data.get("bot")
    if not isinstance(entries, list) or not entries:
        raise BotListError(f"{source}: expected one or more [[bot]] tables")
    bots: list[BotSpec] = []
    for i, entry in enumerate(entries, 1):
        where = f"{source}: bot {i}"
        if not isinstance(entry, dict):
            raise BotListError(f"{where}: expected a table")
        unknown = sorted(set(entry) - {"name", "command", "cwd"})
        if unknown:
            raise BotListError(f"{where}: unknown key {unknown[0]!r} (keys: name, command, cwd)")
        name = entry.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > 64:
            raise BotListError(f"{where}: name must be a non-empty string of at most 64 characters, got {name!r}")
        where = f"{source}: bot {name!r}"
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
        if any(b.name == name for b in bots):
            raise BotListError(f"{source}: two bots are named {name!r}")
        bots.append(BotSpec(name, tuple(command), cwd))
    return bots


class BotProcess:
    """One running bot program: started in its own session, stopped by asking, terminating, killing."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        """Return whether the process has been started and has not exited."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def start(self, address: str, token: str) -> None:
        """Start the bot with ``address`` and ``token`` in its environment. Raises :class:`LaunchError`."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.spec.cwd),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "ARENA_ADDRESS": address,
            "ARENA_TOKEN": token,
        }
        if self.log_path is not None:
            try:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = open(self.log_path, "ab")  # noqa: SIM115 - kept open for the process's life
            except OSError as exc:
                raise LaunchError(f"bot {self.spec.name!r}: cannot open its log {str(self.log_path)!r}: {exc}",
                                  bots=[self.spec.name]) from None
        try:
            self._proc = subprocess.Popen(
                self.spec.argv(), cwd=self.spec.cwd, env=env, stdin=subprocess.DEVNULL,
                stdout=self._log or subprocess.DEVNULL, stderr=self._log or subprocess.DEVNULL,
                start_new_session=True, close_fds=True)
        except OSError as exc:
            self._close_log()
            raise LaunchError(f"bot {self.spec.name!r}: cannot start {self.spec.argv()!r}: {exc}",
                              bots=[self.spec.name]) from None

    async def stop(self, grace: float = 2.0) -> None:
        """Stop the process and its group: wait ``grace`` seconds for it to leave, then SIGTERM, then SIGKILL."""
        proc = self._proc
        if proc is None:
            return
        try:
            if not await self._wait(grace):
                self._signal_group(signal.SIGTERM)
                if not await self._wait(1.0):
                    self._signal_group(signal.SIGKILL)
                    await self._wait(2.0)
            # children that outlived their parent still belong to the group
            self._signal_group(signal.SIGKILL)
        finally:
            self._close_log()

    async def _wait(self, seconds: float) -> bool:
        assert self._proc is not None
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while self._proc.poll() is None:
            if loop.time() >= end:
                return False
            await asyncio.sleep(0.01)
        return True

    def _signal_group(self, sig: signal.Signals) -> None:
        assert self._proc is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None


class Table:
    """The bot processes of one table, each bound to a slot of the arena server, kept warm between matches.

    :meth:`seat` returns a referee seat per bot, starting (or restarting, with a new token) only the
    processes that are not already running and connected; up to ``keep`` idle processes stay warm for later
    matches, the least recently used beyond that are stopped.
    """

    def __init__(self, server: ArenaServer, *, log_dir: Path | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, keep: int = 0) -> None:
        self.server = server
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.keep = keep
        self._running: dict[tuple[str, int], tuple[Slot, BotProcess]] = {}
        self.starts = 0
        self.restarts = 0

    async def seat(self, bots: Sequence[BotSpec], names: Sequence[str] | None = None) -> list[RemoteSeat]:
        """Return one seat per bot in ``bots`` (a bot listed twice gets two processes), all connected.

        ``names`` are the seats' display names (default: the bots' names). Raises :class:`LaunchError`
        naming every bot that did not start or connect; ``error.bots`` holds their names.
        """
        names = list(names) if names is not None else [b.name for b in bots]
        keys: list[tuple[str, int]] = []
        for bot in bots:
            keys.append((bot.name, sum(1 for k in keys if k[0] == bot.name)))
        starting = []
        for key, bot, name in zip(keys, bots, names, strict=True):
            held = self._running.get(key)
            if held is not None and held[0].online and held[1].alive():
                self._running[key] = self._running.pop(key)  # most recently used last
                continue
            if held is not None:
                await self._stop(key)
                self.restarts += 1
            slot = self.server.add_slot(name)
            log_path = self.log_dir / f"{key[0]}-{key[1]}.log" if self.log_dir is not None else None
            proc = BotProcess(bot, log_path)
            slot.is_alive = proc.alive
            self._running[key] = (slot, proc)
            self.starts += 1
            try:
                proc.start(self.server.address, slot.token)
            except LaunchError:
                await self._stop(key)
                raise
            starting.append(key)
        failed = [msg for msg in await asyncio.gather(*(self._await_hello(k) for k in starting)) if msg]
        if failed:
            bad = [k for k in starting if self._running.get(k) is None or not self._running[k][0].online]
            for k in bad:
                await self._stop(k)
            raise LaunchError("; ".join(failed), bots=[k[0] for k in bad])
        await self._evict(set(keys))
        for key, name in zip(keys, names, strict=True):
            self._running[key][0].name = name
        return [RemoteSeat(self._running[k][0]) for k in keys]

    async def _evict(self, busy: set[tuple[str, int]]) -> None:
        idle = [k for k in self._running if k not in busy]
        for key in idle[: max(0, len(idle) - self.keep)]:
            await self._stop(key)

    async def _stop(self, key: tuple[str, int]) -> None:
        slot, proc = self._running.pop(key)
        self.server.remove_slot(slot)
        await proc.stop()

    async def _await_hello(self, key: tuple[str, int]) -> str:
        slot, proc = self._running[key]
        loop = asyncio.get_running_loop()
        end = loop.time() + self.connect_timeout
        while not slot.connected.is_set():
            if not proc.alive():
                return f"bot {key[0]!r} exited with code {proc.returncode} before connecting"
            if loop.time() >= end:
                return f"bot {key[0]!r} did not connect within {self.connect_timeout:.0f} s"
            await asyncio.sleep(0.01)
        return ""

    async def close(self) -> None:
        """Say goodbye to every bot and stop every process (ask, terminate, kill)."""
        keys = list(self._running)
        for key in keys:
            self.server.remove_slot(self._running[key][0])
        await asyncio.gather(*(self._running.pop(k)[1].stop() for k in keys))
