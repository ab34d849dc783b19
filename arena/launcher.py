"""Starts and stops bot processes, and keeps a table's seats connected.

A bot list is a TOML file of ``[[bot]]`` tables, with an optional ``[limits]`` table for all of them::

    [limits]                                          # optional: every bot's limits (see arena.sandbox.Limits)
    memory_mb = 1024

    [[bot]]
    name = "greedy"                                   # unique; shown on the leaderboard
    command = ["{python}", "bots/cabanga_greedy.py"]  # a list, or one string split like a shell would
    cwd = "."                                         # optional; relative paths start at the list's folder
    limits = { cpu_seconds = 60 }                     # optional: this bot's own limits

``{python}`` in a command stands for the interpreter running the arena. A launched bot gets a clean
environment holding only ``PATH``, ``HOME`` and ``TMPDIR`` (a private scratch folder), ``LANG``,
``PYTHONUNBUFFERED``, ``GRPC_EXPERIMENTS`` (:mod:`arena.transport`), ``ARENA_ADDRESS`` and ``ARENA_TOKEN``; it
runs in a new session and process group under the sandbox's supervisor (:mod:`arena.sandbox`), and is stopped
by asking (Goodbye), then through its supervisor (SIGTERM, SIGKILL), then SIGKILL to the group. Its output goes
through a pipe to its log, which is cut at a size limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
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

from arena import transport
from arena.deals import DealKey, DealLedger
from arena.sandbox import CPU_EXIT_CODE, DEFAULT_LIMITS, Isolation, Limits, LimitsError, Sandbox, detect_isolation
from arena.server import ArenaServer, RemoteSeat, Slot

log = logging.getLogger("arena.launcher")

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
        unknown = sorted(set(entry) - {"name", "command", "cwd", "limits", "token"})
        if unknown:
            raise BotListError(f"{where}: unknown key {unknown[0]!r} (keys: name, command, cwd, limits, token)")
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
        bots.append(BotSpec(name, tuple(command), cwd, limits))
    return bots


def _remote_bot(name: str, entry: dict[str, Any], bots: Sequence[BotSpec], where: str, base: Path) -> BotSpec:
    """Return a remote bot: a name and the token the operator gave it, nothing to start."""
    token = entry["token"]
    if "command" in entry or "cwd" in entry or "limits" in entry:
        raise BotListError(f"{where}: a bot with a token is remote: it has no command, cwd or limits")
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


def machine_sandbox() -> Sandbox:
    """Return the isolation this machine gives bots (probed once), saying once in the log what it is."""
    global _announced
    sandbox = detect_isolation()
    if not _announced:
        _announced = True
        if sandbox.isolation is Isolation.NAMESPACES:
            log.info("bot sandbox: limits, and own user, PID, mount, IPC and network namespaces (no network, "
                     "read-only file system)")
        else:
            log.warning("bot sandbox: %s only, no namespaces (%s): bots share the network and the file "
                        "system with the arena's user", sandbox.isolation.value, sandbox.reason)
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


class BotProcess:
    """One running bot program: sandboxed, in its own session, stopped by asking, terminating, killing."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, *, sandbox: Sandbox | None = None,
                 hide: Sequence[Path] = ()) -> None:
        self.spec = spec
        self.log_path = log_path
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        # a folder holding the bot's own is not masked: the bot would not start
        self.hide = [str(Path(p).resolve()) for p in hide if not spec.cwd.resolve().is_relative_to(Path(p).resolve())]
        self.scratch: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._pump: _LogPump | None = None

    @property
    def pid(self) -> int | None:
        """The process id of the bot's outermost process (its supervisor or ``unshare`` when sandboxed)."""
        return self._proc.pid if self._proc is not None else None

    def alive(self) -> bool:
        """Return whether the process has been started and has not exited."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.poll()

    def exit_detail(self) -> str:
        """Return how the process ended (for a fault's detail)."""
        return describe_exit(self.returncode)

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

        Must be called with an event loop running (the loop reads the bot's output into its log).
        """
        argv = self.spec.argv()
        self._check_command(argv)
        self.scratch = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.scratch),
            "TMPDIR": str(self.scratch),
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "ARENA_ADDRESS": address,
            "ARENA_TOKEN": token,
        }
        if transport.experiments():
            env["GRPC_EXPERIMENTS"] = transport.experiments()
        log_file: IO[bytes] | None = None
        read_end = write_end = -1
        try:
            if self.log_path is not None:
                try:
                    self.log_path.parent.mkdir(parents=True, exist_ok=True)
                    log_file = open(self.log_path, "ab", buffering=0)  # noqa: SIM115 - the pump closes it
                except OSError as exc:
                    raise LaunchError(f"bot {self.spec.name!r}: cannot open its log {str(self.log_path)!r}: "
                                      f"{exc}", bots=[self.spec.name]) from None
                read_end, write_end = os.pipe()
            sandboxed = self.sandbox.isolation is not Isolation.NONE
            command = self.sandbox.command(argv, self.spec.limits, str(self.scratch), self.hide)
            output: int = write_end if write_end >= 0 else subprocess.DEVNULL
            try:
                self._proc = subprocess.Popen(
                    command, cwd=self.spec.cwd, env=env,
                    stdin=subprocess.PIPE if sandboxed else subprocess.DEVNULL,
                    stdout=output, stderr=output, start_new_session=True, close_fds=True)
            except OSError as exc:
                raise LaunchError(f"bot {self.spec.name!r}: cannot start {argv!r}: {exc}",
                                  bots=[self.spec.name]) from None
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

    def new_match(self) -> None:
        """Tell the supervisor a match begins: the bot's CPU allowance starts again."""
        self._control(b"renew\n")

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


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def log_file_name(name: str, index: int) -> str:
    """Return the log file name of the ``index``-th process of bot ``name``: no folder, no hidden file."""
    return f"{_UNSAFE.sub('_', name).lstrip('.') or 'bot'}-{index}.log"


REMOTE_CONNECT_TIMEOUT = 120.0
"""Seconds the arena waits for a remote bot (one it does not start) to connect with its token."""


class RemoteBot(BotProcess):
    """Stands in for the process of a remote bot: the arena starts and stops nothing, it only waits.

    The bot connects by itself with the token the operator gave it. If its stream breaks, the token works
    again for a new stream before the bot's next match (one stream at a time, never two).
    """

    def __init__(self, spec: BotSpec, slot: Slot) -> None:
        super().__init__(spec, sandbox=Sandbox(Isolation.NONE))  # nothing runs here to isolate
        self._slot = slot

    def alive(self) -> bool:
        return not self._slot.connected.is_set() or self._slot.online

    def exit_detail(self) -> str:
        return "disconnected"

    def start(self, address: str, token: str) -> None:
        return None

    def new_match(self) -> None:
        return None

    async def stop(self, grace: float = 0.0) -> None:
        return None


class Table:
    """The bot processes of one table, each bound to a slot of the arena server, kept warm between matches.

    :meth:`seat` returns a referee seat per bot, starting (or restarting, with a new token) only the
    processes that are not already running, connected and idle; up to ``keep`` idle processes stay warm for
    later matches, the least recently used beyond that are stopped. A process that still owes answers from
    its previous match (stuck, or spinning) is restarted. No process is ever seated at a deal it has played:
    ``ledger`` (:class:`arena.deals.DealLedger`) picks each seat's process, and a new one is started when no
    warm process of the bot qualifies. ``sandbox`` is the isolation of the bots (default: the strongest this
    machine gives, :func:`machine_sandbox`); ``hide`` are files and folders the bots must not see (with
    namespaces), such as the ladder's database; the log folder is always hidden.
    """

    def __init__(self, server: ArenaServer, *, log_dir: Path | None = None,
                 connect_timeout: float = CONNECT_TIMEOUT, keep: int = 0, sandbox: Sandbox | None = None,
                 hide: Sequence[Path] = (), ledger: DealLedger | None = None) -> None:
        self.server = server
        self.ledger = ledger if ledger is not None else DealLedger()
        self.log_dir = log_dir
        self.connect_timeout = connect_timeout
        self.keep = keep
        self.sandbox = sandbox if sandbox is not None else machine_sandbox()
        # the log folder too: a process could read what another process of its bot saw (its deals)
        self.hide = [*hide, *([log_dir] if log_dir is not None else [])]
        self._running: dict[tuple[str, int], tuple[Slot, BotProcess]] = {}
        self.starts = 0
        self.restarts = 0

    async def seat(self, bots: Sequence[BotSpec], names: Sequence[str] | None = None, *,
                   deal: DealKey) -> list[RemoteSeat]:
        """Return one seat per bot in ``bots`` (a bot listed twice gets two processes), all connected, for a
        match of ``deal``: no process gets a seat at a deal it has played before.

        ``names`` are the seats' display names (default: the bots' names). Raises :class:`LaunchError`
        naming every bot that did not start or connect; ``error.bots`` holds their names.
        """
        names = list(names) if names is not None else [b.name for b in bots]
        keys: list[tuple[str, int]] = []
        for bot in bots:
            keys.append(self.ledger.lane(bot.name, deal, keys))
            if bot.remote and keys[-1][1] > 0:  # one stream per token: the arena cannot start another
                raise LaunchError(f"remote bot {bot.name!r} has played this deal already (or holds another seat): "
                                  "it cannot be seated at it", bots=[bot.name])
        starting = []
        for key, bot, name in zip(keys, bots, names, strict=True):
            held = self._running.get(key)
            if held is not None and held[0].online and held[1].alive() and not held[0].owes_answers:
                self._running[key] = self._running.pop(key)  # most recently used last
                held[1].new_match()
                continue
            if held is not None:
                await self._stop(key)
                self.restarts += 1
            slot = self.server.add_slot(name, bot.token)
            log_path = self.log_dir / log_file_name(*key) if self.log_dir is not None else None
            proc: BotProcess = RemoteBot(bot, slot) if bot.remote else \
                BotProcess(bot, log_path, sandbox=self.sandbox, hide=self.hide)
            slot.is_alive = proc.alive
            slot.exit_detail = proc.exit_detail
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
        self.ledger.played(keys, deal)
        for key, name in zip(keys, names, strict=True):
            self._running[key][0].name = name
        return [RemoteSeat(self._running[k][0]) for k in keys]

    async def retire(self, name: str) -> None:
        """Stop every process of the bot called ``name`` (say, a bot the ladder leaves out)."""
        for key in [k for k in self._running if k[0] == name]:
            await self._stop(key)

    async def _evict(self, busy: set[tuple[str, int]]) -> None:
        idle = [k for k in self._running if k not in busy]
        for key in idle[: max(0, len(idle) - self.keep)]:
            await self._stop(key)

    async def _stop(self, key: tuple[str, int]) -> None:
        slot, proc = self._running.pop(key)
        self.ledger.forget(key)  # the lane's next process is a new one
        stuck = slot.owes_answers or not slot.online
        self.server.remove_slot(slot)
        await proc.stop(STUCK_GRACE if stuck else STOP_GRACE)

    async def _await_hello(self, key: tuple[str, int]) -> str:
        slot, proc = self._running[key]
        loop = asyncio.get_running_loop()
        remote = isinstance(proc, RemoteBot)
        timeout = max(self.connect_timeout, REMOTE_CONNECT_TIMEOUT) if remote else self.connect_timeout
        end = loop.time() + timeout
        while not slot.connected.is_set():
            if not proc.alive():
                return f"bot {key[0]!r} {proc.exit_detail()} before connecting"
            if loop.time() >= end:
                if remote:
                    return (f"remote bot {key[0]!r} did not connect to {self.server.address} with its token "
                            f"within {timeout:.0f} s")
                return f"bot {key[0]!r} did not connect within {timeout:.0f} s"
            await asyncio.sleep(0.01)
        return ""

    async def close(self) -> None:
        """Say goodbye to every bot and stop every process (ask, terminate, kill)."""
        keys = list(self._running)
        stuck = {k for k in keys if self._running[k][0].owes_answers or not self._running[k][0].online}
        for key in keys:
            self.server.remove_slot(self._running[key][0])
            self.ledger.forget(key)
        await asyncio.gather(*(self._running.pop(k)[1].stop(STUCK_GRACE if k in stuck else STOP_GRACE)
                               for k in keys))
