"""Limits and isolation for bot processes, and the small supervisor that applies them.

The arena never forks (it has imported grpc), so limits are applied in a fresh process: the launcher runs
each bot as ``python -I -S arena/sandbox.py [LIMITS] -- COMMAND...`` (this file, by path, standard library
only), itself inside ``unshare`` when the machine allows (:func:`detect_isolation`). The supervisor:

- forks the bot with its resource limits set (address space, open files, largest file, no core dumps) and
  ``/dev/null`` as its standard input; it stays as the bot's parent (PID 1 of the bot's PID namespace, or a
  child subreaper without one), so every process the bot starts, even one that leaves its session, is still
  a descendant: when the bot ends, the supervisor kills them all before it exits with the bot's status;
- counts the CPU time of the bot per match (``renew`` on its standard input starts a new match) and kills
  the bot when it spends more than its allowance;
- stops the bot when its standard input closes (the arena asks it to, or the arena itself is gone):
  SIGTERM, then SIGKILL half a second later;
- in :attr:`Isolation.NAMESPACES` mode it runs as root of a new user, PID, mount, IPC and network namespace:
  the network holds only a loopback that is down, ``/proc`` shows only the bot's own processes, the whole
  file system is read-only except a private size-limited scratch folder (``HOME``, ``TMPDIR``), and paths
  the operator names are masked. The bot reaches the arena through the Unix socket's path.

Without namespaces (:attr:`Isolation.LIMITS`) the bot has the limits and the supervisor but shares the
network, the file system and the view of other processes with the arena's user; see README "Sandbox".
"""

from __future__ import annotations

import argparse
import contextlib
import enum
import os
import resource
import select
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIB = 1 << 20
SUPERVISOR = os.path.abspath(__file__)
CPU_EXIT_CODE = 128 + signal.SIGXCPU
"""The supervisor's exit status when it killed the bot for spending more CPU in a match than allowed."""
STOP_GRACE = 0.5
"""Seconds between the SIGTERM and the SIGKILL with which the supervisor stops a bot."""
CPU_POLL = 0.25
"""Seconds between two looks at the bot's CPU time."""
UNSHARE_FLAGS = ("--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc")
UNSHARE_ROOT_FLAGS = ("--pid", "--fork", "--kill-child", "--mount-proc", "--net", "--ipc")


class LimitsError(ValueError):
    """A limit that is not a positive number, or a key that names no limit."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot process may use. Every field has a safe default; the bot list may change each one.

    ``memory_mb``: address space (RLIMIT_AS) of each of the bot's processes, MiB.
    ``cpu_seconds``: CPU time the bot (all its processes) may use per match.
    ``open_files``: open file descriptors (RLIMIT_NOFILE) per process.
    ``disk_mb``: the largest file the bot may write (RLIMIT_FSIZE), and with namespaces the size of its
    private scratch folder.
    ``log_kb``: what is kept of its output (stdout and stderr) in its log file; the rest is dropped.
    """

    memory_mb: int = 1024
    cpu_seconds: int = 300
    open_files: int = 256
    disk_mb: int = 64
    log_kb: int = 1024

    KEYS = ("memory_mb", "cpu_seconds", "open_files", "disk_mb", "log_kb")

    def __post_init__(self) -> None:
        for key in self.KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitsError(f"limit {key} must be a whole number of at least 1, got {value!r}")
        if self.open_files < 16:
            raise LimitsError(f"limit open_files must be at least 16, got {self.open_files!r}")

    def updated(self, raw: dict[str, Any]) -> Limits:
        """Return these limits with the values of ``raw`` (limit name to value). Raises :class:`LimitsError`."""
        unknown = sorted(set(raw) - set(self.KEYS))
        if unknown:
            raise LimitsError(f"unknown limit {unknown[0]!r} (limits: {', '.join(self.KEYS)})")
        values = {key: raw.get(key, getattr(self, key)) for key in self.KEYS}
        return Limits(**values)

    def arguments(self) -> list[str]:
        """Return the supervisor's command-line options for these limits."""
        return ["--memory", str(self.memory_mb * MIB), "--cpu", str(self.cpu_seconds),
                "--nofile", str(self.open_files), "--fsize", str(self.disk_mb * MIB)]


DEFAULT_LIMITS = Limits()


class Isolation(enum.Enum):
    """How much a launched bot is kept apart from the machine."""

    NONE = "none"  # a plain process in its own session: no limits (for machines without the means)
    LIMITS = "limits"  # resource limits and the supervisor, no namespaces
    NAMESPACES = "namespaces"  # limits, supervisor, and own user, PID, mount, IPC and network namespaces


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The isolation chosen for this machine and the ``unshare`` flags that give it."""

    isolation: Isolation
    unshare: tuple[str, ...] = ()
    reason: str = ""
    """Why the isolation is not :attr:`Isolation.NAMESPACES` (empty when it is)."""

    def command(self, argv: Sequence[str], limits: Limits, scratch: str | None = None,
                hide: Sequence[str] = ()) -> list[str]:
        """Return the command that runs ``argv`` under this isolation with ``limits``.

        ``scratch`` is the bot's private folder (with namespaces a tmpfs is mounted on it); ``hide`` are paths
        masked from the bot (namespaces only).
        """
        if self.isolation is Isolation.NONE:
            return list(argv)
        command = [sys.executable, "-I", "-S", SUPERVISOR, *limits.arguments()]
        if self.isolation is Isolation.NAMESPACES:
            command.append("--namespaces")
            if scratch is not None:
                command += ["--scratch", scratch]
            for path in hide:
                command += ["--hide", path]
            command = ["unshare", *self.unshare, "--", *command]
        return [*command, "--", *argv]


_detected: Sandbox | None = None


def detect_isolation(*, refresh: bool = False) -> Sandbox:
    """Return the strongest isolation this machine gives a bot, probing once per process.

    Namespaces need Linux, util-linux ``unshare`` and either unprivileged user namespaces or root; the probe
    runs the real supervisor in them (read-only file system, scratch tmpfs). Without them a bot still gets the
    limits and the supervisor; on a system without ``resource`` limits, nothing.
    """
    global _detected
    if _detected is not None and not refresh:
        return _detected
    import shutil
    import subprocess
    import tempfile

    if not sys.platform.startswith("linux"):
        _detected = Sandbox(Isolation.LIMITS if os.name == "posix" else Isolation.NONE,
                            reason=f"no namespaces on {sys.platform}")
        return _detected
    unshare = shutil.which("unshare")
    reason = "util-linux unshare is not installed"
    if unshare is not None:
        with tempfile.TemporaryDirectory(prefix="arena-probe-") as scratch:
            for flags in (UNSHARE_FLAGS, UNSHARE_ROOT_FLAGS) if os.geteuid() == 0 else (UNSHARE_FLAGS,):
                probe = [unshare, *flags, "--", sys.executable, "-I", "-S", SUPERVISOR, "--namespaces",
                         "--scratch", scratch, "--probe"]
                try:
                    done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=20,
                                          check=False)
                except (OSError, subprocess.TimeoutExpired) as exc:
                    reason = f"unshare failed: {exc}"
                    continue
                if done.returncode == 0:
                    _detected = Sandbox(Isolation.NAMESPACES, tuple(flags))
                    return _detected
                text = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
                reason = f"unshare {' '.join(flags)} failed: {text[-1] if text else f'status {done.returncode}'}"
    _detected = Sandbox(Isolation.LIMITS, reason=reason)
    return _detected


# ----------------------------------------------------------------------------------------- the supervisor
# Everything below runs in the supervisor process (``python -I -S sandbox.py``): standard library only,
# single-threaded, so forking is safe here.

_MS_BIND = 0x1000
_MS_REC = 0x4000
_MS_NOSUID = 0x2
_MS_NODEV = 0x4
_MOUNT_ATTR_RDONLY = 0x1
_AT_FDCWD = -100
_AT_RECURSIVE = 0x8000
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (a syscall newer than 5.1)
_PR_SET_CHILD_SUBREAPER = 36


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = _libc()
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _set_readonly(path: str, readonly: bool, recursive: bool) -> None:
    import ctypes

    class MountAttr(ctypes.Structure):
        _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                    ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]

    attr = MountAttr(_MOUNT_ATTR_RDONLY if readonly else 0, 0 if readonly else _MOUNT_ATTR_RDONLY, 0, 0)
    libc = _libc()
    flags = _AT_RECURSIVE if recursive else 0
    _check(libc.syscall(_SYS_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(attr),
                        ctypes.sizeof(attr)), f"mount_setattr {path}")


def seal_file_system(scratch: str | None, scratch_bytes: int, hide: Sequence[str]) -> None:
    """In a fresh mount namespace: mask ``hide``, make everything read-only but a tmpfs on ``scratch``."""
    for path in hide:
        if os.path.isdir(path):
            _mount("tmpfs", path, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=4k,nr_inodes=4,mode=0555")
        elif os.path.exists(path):
            _mount("/dev/null", path, None, _MS_BIND)
    if scratch is not None:
        _mount("tmpfs", scratch, "tmpfs", _MS_NOSUID | _MS_NODEV,
               f"size={max(scratch_bytes, 4096)},nr_inodes=4096,mode=0700")
    _set_readonly("/", True, recursive=True)
    if scratch is not None:
        _set_readonly(scratch, False, recursive=False)


def _read_cpu(pid: int) -> float:
    """Return the CPU seconds of ``pid`` and of the children it has reaped (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # fields[0] is the state (field 3); utime, stime, cutime, cstime are fields 14-17
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _descendants(root: int) -> list[int]:
    """Return every live process below ``root`` (scanning /proc; cheap inside a PID namespace)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class _Supervisor:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.pid_namespace = args.namespaces and os.getpid() == 1
        self.child = 0
        self.status: int | None = None
        self.stop_at: float | None = None
        self.kill_at: float | None = None
        self.cpu_base = 0.0
        self.note = ""

    def say(self, text: str) -> None:
        with contextlib.suppress(OSError):
            os.write(2, f"[arena sandbox] {text}\n".encode())

    def cpu_used(self) -> float:
        """CPU seconds of the bot: every process of the namespace, or (without one) the bot and what it reaped."""
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = usage.ru_utime + usage.ru_stime  # everything already reaped by the supervisor
        pids = _descendants(os.getpid()) if self.pid_namespace else [self.child]
        return total + sum(_read_cpu(pid) for pid in pids)

    def start(self) -> None:
        args = self.args
        pid = os.fork()
        if pid == 0:  # the bot
            try:
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGCHLD, signal.SIGTERM,
                            signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                signal.set_wakeup_fd(-1)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.close(null)
                os.closerange(3, 1 << 16)
                _set_limit(resource.RLIMIT_CORE, 0)
                _set_limit(resource.RLIMIT_AS, args.memory)
                _set_limit(resource.RLIMIT_NOFILE, args.nofile)
                _set_limit(resource.RLIMIT_FSIZE, args.fsize)
                os.execvp(args.command[0], args.command)
            except BaseException as exc:  # nothing may escape a forked child
                with contextlib.suppress(OSError):
                    os.write(2, f"[arena sandbox] cannot run {args.command!r}: {exc}\n".encode())
            os._exit(127)
        self.child = pid

    def run(self) -> int:
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        stop = lambda *_: self.request_stop()  # noqa: E731
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, stop)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.start()
        control: int | None = 0
        next_cpu = time.monotonic() + CPU_POLL
        while self.status is None:
            wake_at = min(next_cpu, self.kill_at) if self.kill_at is not None else next_cpu
            timeout = max(0.0, wake_at - time.monotonic())
            readable, _, _ = select.select([fd for fd in (control, wake_r) if fd is not None], [], [], timeout)
            if wake_r in readable:
                with contextlib.suppress(OSError):
                    os.read(wake_r, 512)
            if control is not None and control in readable:
                data = b""
                with contextlib.suppress(OSError):
                    data = os.read(control, 512)
                if not data:  # the arena closed our input, or is gone: stop the bot
                    control = None
                    self.request_stop()
                elif b"renew" in data:
                    self.cpu_base = self.cpu_used()
            self.reap()
            now = time.monotonic()
            if self.status is None and self.kill_at is not None and now >= self.kill_at:
                self.kill_all()
                self.kill_at = None
            if self.status is None and now >= next_cpu:
                next_cpu = now + CPU_POLL
                spent = self.cpu_used() - self.cpu_base
                if spent > self.args.cpu:
                    self.note = "cpu"
                    self.say(f"the bot used {spent:.1f} s of CPU in this match, over its limit of "
                             f"{self.args.cpu} s: killed")
                    self.kill_all()
        self.reap_all()
        if self.note == "cpu":
            return CPU_EXIT_CODE
        status = self.status
        assert status is not None
        return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)

    def request_stop(self) -> None:
        if self.stop_at is None and self.child:
            self.stop_at = time.monotonic()
            self.kill_at = self.stop_at + STOP_GRACE
            with contextlib.suppress(OSError):
                os.kill(self.child, signal.SIGTERM)

    def reap(self) -> bool:
        """Reap the children that have ended (noting the bot's status); return whether any child is left."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return False
            if pid == 0:
                return True
            if pid == self.child:
                self.status = status

    def kill_all(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self.child, signal.SIGKILL)
        if self.reap():
            for pid in _descendants(os.getpid()):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def reap_all(self) -> None:
        """Kill and reap every descendant: orphans of the bot were re-parented to this supervisor.

        Every process the bot left behind is in the subtree of a child of the supervisor (its parent, or an
        orphan re-parented here), so with no child left there is nothing to look for.
        """
        deadline = time.monotonic() + 5.0
        while self.reap() and time.monotonic() < deadline:
            for pid in _descendants(os.getpid()):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)


def _set_limit(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m arena.sandbox",
        description="Run COMMAND as a bot under resource limits, supervised (see arena/sandbox.py).")
    parser.add_argument("--memory", type=int, default=DEFAULT_LIMITS.memory_mb * MIB, metavar="BYTES",
                        help="address space per process (RLIMIT_AS)")
    parser.add_argument("--cpu", type=int, default=DEFAULT_LIMITS.cpu_seconds, metavar="SECONDS",
                        help="CPU seconds per match for the whole bot; 'renew' on stdin starts a match")
    parser.add_argument("--nofile", type=int, default=DEFAULT_LIMITS.open_files, metavar="N",
                        help="open files per process (RLIMIT_NOFILE)")
    parser.add_argument("--fsize", type=int, default=DEFAULT_LIMITS.disk_mb * MIB, metavar="BYTES",
                        help="largest file written (RLIMIT_FSIZE); with --namespaces also the scratch size")
    parser.add_argument("--namespaces", action="store_true",
                        help="run inside unshare: seal the file system (read-only, scratch tmpfs, --hide)")
    parser.add_argument("--scratch", default=None, metavar="DIR", help="the bot's private folder")
    parser.add_argument("--hide", action="append", default=[], metavar="PATH",
                        help="a file or folder masked from the bot (with --namespaces)")
    parser.add_argument("--probe", action="store_true", help="set up the namespaces and exit 0 if it worked")
    parser.add_argument("command", nargs="*", help="the bot's command, after --")
    args = parser.parse_args(argv)
    if not args.probe and not args.command:
        parser.error("no command given (put it after --)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the supervisor: set up the namespaces' file system, start the bot, return its exit status."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.namespaces:
        try:
            seal_file_system(args.scratch, args.fsize, args.hide)
        except OSError as exc:
            print(f"[arena sandbox] cannot seal the file system: {exc}", file=sys.stderr)
            return 126
    if args.probe:
        return 0
    if not args.namespaces or os.getpid() != 1:
        # without a PID namespace, orphans of the bot come to us instead of init, so none outlives it
        with contextlib.suppress(OSError):
            _libc().prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    return _Supervisor(args).run()


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # a normal interpreter exit takes tens of ms here, and the arena is waiting
