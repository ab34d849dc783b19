"""One bot process: started sandboxed, its output kept in its log, stopped by asking, terminating, killing.

A launched bot gets a clean environment holding only ``PATH``, ``HOME`` and ``TMPDIR`` (a private scratch folder),
``LANG``, ``PYTHONUNBUFFERED``, ``GRPC_EXPERIMENTS`` (:mod:`arena.protocol.transport`), ``ARENA_ADDRESS`` and
``ARENA_TOKEN``, ``ARENA_GAMES`` (every game's package, as the arena found it), and for games registered by name
the ``PYTHONPATH`` that finds them; it runs in a new session and process group under the sandbox's supervisor
(``arena/launch/supervisor.c``), in its jail where the machine gives one (:func:`arena.launch.jail.jail_binds` is
what the jail shows of the machine), and is stopped by asking (Goodbye), then through its supervisor (SIGTERM,
SIGKILL), then SIGKILL to the group. Its output goes through a pipe to its log, which is cut at a size limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import logging
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from arena.games import ENVIRONMENT as GAMES_ENVIRONMENT
from arena.games import game_packages
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.jail import jail_binds, jail_path, registered_game_folders
from arena.launch.sandbox import (
    JAIL_SCRATCH,
    Cgroups,
    Isolation,
    Mode,
    Sandbox,
    choose_sandbox,
    clean_stale_cgroups,
    clean_stale_stages,
)
from arena.launch.supervisor_constants import CPU_EXIT_CODE, JAIL_SOCKET
from arena.protocol import transport

log = logging.getLogger("arena.launch.process")

STOP_GRACE = 2.0
"""Seconds a bot has to leave after Goodbye before it is stopped by force."""


class LaunchError(RuntimeError):
    """A bot process that could not be started or did not connect; ``bots`` names the bots at fault."""

    def __init__(self, message: str, bots: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.bots = list(bots)


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
        self._frozen = False
        """Whether the supervisor was told to freeze the bot, and nothing since to thaw it."""

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
        :data:`arena.launch.supervisor_constants.JAIL_SOCKET`), or a TCP address. Must be called with an event loop
        running (the loop reads the bot's output into its log and sees the process end).
        """
        argv = self.spec.argv()
        self._check_command(argv)
        jailed = self.sandbox.isolation is Isolation.JAIL
        if not jailed:
            self.scratch = tempdir.new_folder("scratch")
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
        # every game's package as the arena found it: a Python bot plays the package the arena referees, and
        # starts without reading the installed distributions' entry points (arena.games._package)
        env[GAMES_ENVIRONMENT] = ",".join(f"{name}={package}" for name, package in game_packages().items())
        games = registered_game_folders()
        if games:  # games registered by name (ARENA_GAMES): a Python bot finds them on its path as the arena does
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
        self._frozen = False
        self._control(b"renew\n")

    def freeze(self) -> None:
        """Tell the supervisor the bot waits, warm, for a later match: it is frozen (with cgroups), and
        spends nothing meanwhile. Once: a pool freezes its idle processes after every seating, and a word to
        a supervisor wakes it (and writes the freezer) each time."""
        if not self._frozen:
            self._frozen = True
            self._control(b"freeze\n")

    def thaw(self) -> None:
        """Tell the supervisor to thaw a frozen bot (before it is asked to leave)."""
        self._frozen = False
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
    """Return the log file name of the ``index``-th process of the bot whose log key is ``name``
    (:attr:`BotSpec.log_key`): no folder, no hidden file, and never one file for two names. A name of letters,
    digits, ``.``, ``_`` and ``-`` not starting with a dot is kept; any other is made safe and followed by a hash of
    it (``a:b`` and ``a_b`` would both become ``a_b``)."""
    safe = _UNSAFE.sub("_", name).lstrip(".")
    if safe != name or not safe:
        safe = f"{safe or 'bot'}.{hashlib.sha256(name.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return f"{safe}-{index}.log"


def raise_open_files() -> None:
    """Raise this process's limit of open files to its hard limit: every bot costs the arena a few descriptors
    (its socket, connections, pipes), and each bot's own connections are bounded (PRIVATE_CONNECTIONS)."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
