"""The warm process pool of a table: a seat per bot for each match, its processes kept between matches.

:class:`ProcessPool` starts each launched bot in a :class:`arena.launch.session.BotSession` of its own, keeps idle
processes warm (frozen) for later matches, and never seats a process at a deal it has played.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from arena.core.deals import DealKey, DealLedger
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError, log_file_name, machine_sandbox, raise_open_files
from arena.launch.sandbox import Cgroups, Isolation, Sandbox, make_bot_group, remove_bot_group
from arena.launch.session import BotSession
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer

CONNECT_TIMEOUT = 15.0
"""Seconds a launched bot has to start and say hello."""
REMOTE_CONNECT_TIMEOUT = 120.0
"""Seconds the arena waits for a remote bot (one it does not start) to connect with its token."""

Key = tuple[str, int]
"""A process of a table: the bot's name, and which of that bot's processes (0, 1...)."""


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


class ProcessPool:
    """The bot processes of one table, each with its own socket, kept warm between matches.

    :meth:`seat` returns a referee seat per bot, starting (or restarting, with a new token) only the
    processes that are not already running, connected and idle; up to ``keep`` idle processes stay warm for
    later matches, the least recently used beyond that are stopped. A process that still owes answers from
    its previous match (stuck, or spinning) is restarted. No process is ever seated at a deal it has played:
    ``ledger`` (:class:`arena.core.deals.DealLedger`) picks each seat's process, and a new one is started when no
    warm process of the bot qualifies. ``sandbox`` is the isolation of the bots (default: the strongest this
    machine gives, :func:`arena.launch.process.machine_sandbox`). ``server`` is the shared server, where remote
    bots connect; each launched bot has a server of its own (:class:`BotSession`).
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
