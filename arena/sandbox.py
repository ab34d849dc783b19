"""Limits and isolation for bot processes, and the small supervisor that applies them.

The arena never forks (it has imported grpc), so limits are applied in a fresh process: the launcher runs
each bot as ``python -I -S arena/sandbox.py [LIMITS] -- COMMAND...`` (this file, by path, standard library
only). The supervisor runs outside the bot's jail, as the arena's user, and:

- with cgroups (:class:`Cgroups`), makes the bot's own group below the arena's cgroup in each hierarchy
  (``arena-bot-<its pid>``): a process count (``pids.max``), memory including tmpfs and shared memory, the
  default CPU share (so that a spinning bot gets one share of the machine, never the others' shares), and CPU
  time read from the group's ``cpuacct.usage``, which nothing in the jail can change. The bot's process
  joins the group before it executes anything; when the bot ends, or is stopped, the group is frozen, every
  process in it killed, and the group removed;
- forks the bot with its resource limits set (address space, open files, largest file, no core dumps) and
  ``/dev/null`` as its standard input; without cgroups it stays as the bot's parent (a child subreaper), so
  every process the bot starts is still a descendant that it kills when the bot ends;
- counts the CPU time of the bot per match (``renew`` on its standard input starts a new match) and kills
  the bot when it spends more than its allowance;
- stops the bot when its standard input closes (the arena asks it to, or the arena itself is gone, even by
  ``kill -9``): SIGTERM, then SIGKILL half a second later, then the whole group.

With :attr:`Isolation.JAIL` the command it starts is ``bwrap`` (bubblewrap) building the bot's jail
(:meth:`Sandbox.command`): new user, PID, mount, network, IPC, UTS and cgroup namespaces, a non-root user
without capabilities and with ``no_new_privs``, no way to make user namespaces, a new session, and an
allowlist of read-only folders (the system's runtime, the interpreter, the bot's own folder), its own socket
and a private size-limited scratch (``HOME`` and ``TMPDIR``). See README "Sandbox".
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
SUPERVISOR = os.path.abspath(__file__)
CPU_EXIT_CODE = 128 + signal.SIGXCPU
"""The supervisor's exit status when it killed the bot for spending more CPU in a match than allowed."""
STOP_GRACE = 0.5
"""Seconds between the SIGTERM and the SIGKILL with which the supervisor stops a bot."""
CPU_POLL = 0.25
"""Seconds between two looks at the bot's CPU time."""
JAIL_UID = 65534
"""The user and group id a jailed bot has inside its jail (``nobody``)."""
JAIL_SOCKET = "/run/arena/arena.sock"
"""Where a jailed bot finds its own socket to the arena."""
JAIL_SCRATCH = "/tmp"
"""The jailed bot's private scratch (a tmpfs of ``disk_mb``): its ``HOME`` and ``TMPDIR``."""
CGROUP_PREFIX = "arena-bot-"
"""Name of a bot's cgroup, followed by the pid of the supervisor that made it."""
CGROUP_V1_CONTROLLERS = ("pids", "memory", "cpu", "cpuacct", "freezer")
INSTALL_HINT = "install bubblewrap for the bot jail (Debian/Ubuntu: apt-get install bubblewrap)"


class LimitsError(ValueError):
    """A limit that is not a positive number, or a key that names no limit."""


class SandboxError(RuntimeError):
    """The isolation asked for (``--sandbox strict``) is not available on this machine."""


@dataclass(frozen=True, slots=True)
class Limits:
    """What one bot process may use. Every field has a safe default; the bot list may change each one.

    ``memory_mb``: address space (RLIMIT_AS) of each of the bot's processes, MiB; with cgroups also the memory
    of the whole bot (every process, plus what it keeps in its scratch and shared memory, plus ``disk_mb``).
    ``cpu_seconds``: CPU time the bot (all its processes) may use per match.
    ``open_files``: open file descriptors (RLIMIT_NOFILE) per process.
    ``disk_mb``: the largest file the bot may write (RLIMIT_FSIZE), and in the jail the size of its scratch.
    ``log_kb``: what is kept of its output (stdout and stderr) in its log file; the rest is dropped.
    ``processes``: processes and threads of the whole bot (cgroup ``pids.max``; only with cgroups).
    """

    memory_mb: int = 1024
    cpu_seconds: int = 300
    open_files: int = 256
    disk_mb: int = 64
    log_kb: int = 1024
    processes: int = 128

    KEYS = ("memory_mb", "cpu_seconds", "open_files", "disk_mb", "log_kb", "processes")

    def __post_init__(self) -> None:
        for key in self.KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitsError(f"limit {key} must be a whole number of at least 1, got {value!r}")
        if self.open_files < 16:
            raise LimitsError(f"limit open_files must be at least 16, got {self.open_files!r}")
        if self.processes < 8:
            raise LimitsError(f"limit processes must be at least 8, got {self.processes!r}")

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
                "--nofile", str(self.open_files), "--fsize", str(self.disk_mb * MIB),
                "--pids", str(self.processes)]


DEFAULT_LIMITS = Limits()


class Isolation(enum.Enum):
    """How much a launched bot is kept apart from the machine."""

    NONE = "none"  # a plain process in its own session: no limits (for machines without the means)
    LIMITS = "limits"  # resource limits and the supervisor; the bot shares the file system and network
    JAIL = "jail"  # limits, supervisor, and a bubblewrap jail


class Mode(enum.Enum):
    """What the operator asks for with ``--sandbox``."""

    AUTO = "auto"  # the strongest the machine gives
    STRICT = "strict"  # the jail and cgroups, or refuse to run
    LIMITS = "limits"  # resource limits (and cgroups where they can be had), no jail


@dataclass(frozen=True, slots=True)
class Cgroups:
    """Where the supervisor makes a bot's cgroups: the arena's own group in each hierarchy (cgroup v1)."""

    version: int
    parents: tuple[tuple[str, str], ...]
    """(controller, folder of the arena's own cgroup in that controller's hierarchy)."""

    def arguments(self) -> list[str]:
        return [part for controller, folder in self.parents for part in ("--cgroup", f"{controller}={folder}")]


@dataclass(frozen=True, slots=True)
class Bind:
    """A folder or file of the machine that a jailed bot sees, read-only, at the same path."""

    path: str


@dataclass(frozen=True, slots=True)
class Sandbox:
    """The isolation chosen for this machine: jail or not, cgroups or not, and why not."""

    isolation: Isolation
    cgroups: Cgroups | None = None
    reason: str = ""
    """Why the isolation is less than the jail with cgroups (empty when it is that)."""
    bwrap: str = "bwrap"

    @property
    def level(self) -> str:
        """Return the isolation level as stored with a ladder: ``strict``, ``jail``, ``limits+cgroups``,
        ``limits`` or ``none``."""
        if self.isolation is Isolation.JAIL:
            return "strict" if self.cgroups is not None else "jail"
        if self.isolation is Isolation.LIMITS:
            return "limits+cgroups" if self.cgroups is not None else "limits"
        return "none"

    def describe(self) -> str:
        """Return one line saying what a bot gets here."""
        parts = {
            Isolation.JAIL: "bubblewrap jail (no network, no capabilities, read-only allowlist, own /proc)",
            Isolation.LIMITS: "resource limits, no jail (bots share the network and the file system)",
            Isolation.NONE: "no isolation",
        }[self.isolation]
        if self.isolation is not Isolation.NONE:
            parts += f", cgroups v{self.cgroups.version}" if self.cgroups is not None else ", rlimits only"
        text = f"bot sandbox: {self.level}: {parts}"
        return f"{text} ({self.reason})" if self.reason else text

    def command(self, argv: Sequence[str], limits: Limits, *, cwd: str, binds: Iterable[Bind] = (),
                socket: str | None = None, env: dict[str, str] | None = None) -> list[str]:
        """Return the command that runs ``argv`` (in folder ``cwd``) under this isolation with ``limits``.

        In the jail the bot sees only the system's runtime, ``binds`` (read-only), ``socket`` (the host path of
        its own socket, at :data:`JAIL_SOCKET`) and a private scratch at :data:`JAIL_SCRATCH`; ``env`` is its
        whole environment.
        """
        if self.isolation is Isolation.NONE:
            return list(argv)
        command = [sys.executable, "-I", "-S", SUPERVISOR, *limits.arguments()]
        if self.cgroups is not None:
            command += self.cgroups.arguments()
        if self.isolation is Isolation.JAIL:
            command += ["--", *jail_arguments(self.bwrap, limits, cwd=cwd, binds=binds, socket=socket, env=env)]
        else:
            command.append("--")
        return [*command, *argv]


def _system_binds() -> list[str]:
    """Return bwrap's arguments for the system's read-only runtime: /usr, the /lib and /bin folders, bits of /etc."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "nsswitch.conf", "passwd", "group",
                 "alternatives", "ssl", "ca-certificates"):
        path = f"/etc/{name}"
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


def jail_arguments(bwrap: str, limits: Limits, *, cwd: str, binds: Iterable[Bind] = (),
                   socket: str | None = None, env: dict[str, str] | None = None) -> list[str]:
    """Return the ``bwrap`` command (up to the bot's own command) that builds a bot's jail."""
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(JAIL_UID),
            "--gid", str(JAIL_UID), "--cap-drop", "ALL", "--new-session", "--die-with-parent",
            "--hostname", "bot", "--proc", "/proc", "--dev", "/dev", *_system_binds()]
    # the scratch first: a bot's folder may lie below /tmp, and is then bound over the scratch
    args += ["--size", str(max(limits.disk_mb * MIB, 1 << 16)), "--perms", "0700", "--tmpfs", JAIL_SCRATCH]
    seen: set[str] = set()
    for bind in sorted(binds, key=lambda b: b.path):
        if bind.path in seen or bind.path in ("/", "/usr") or not os.path.exists(bind.path):
            continue
        seen.add(bind.path)
        args += ["--ro-bind", bind.path, bind.path]
    if socket is not None:
        args += ["--ro-bind", socket, JAIL_SOCKET]
    args += ["--dir", cwd, "--chdir", cwd, "--remount-ro", "/"]
    if env is not None:
        args.append("--clearenv")
        for key, value in sorted(env.items()):
            args += ["--setenv", key, value]
    return [*args, "--"]


# ------------------------------------------------------------------------------------------- detection


def own_cgroups() -> dict[str, str]:
    """Return this process's cgroup path per v1 controller (and ``""`` for the v2 group), from /proc."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup", encoding="ascii") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                found[controller] = path
    return found


def cgroup_parents(root: str = "/sys/fs/cgroup") -> tuple[Cgroups | None, str]:
    """Return where bot cgroups can be made (below the arena's own groups), or ``None`` and why not.

    cgroup v1 with pids, memory, cpu, cpuacct and freezer hierarchies: the folder of the arena's own group in
    each, if it may make groups there (root may). cgroup v2 is not used yet (see README "Sandbox").
    """
    own = own_cgroups()
    if not own:
        return None, "no /proc/self/cgroup"
    parents = []
    for controller in CGROUP_V1_CONTROLLERS:
        if controller not in own:
            if "" in own and len(own) == 1:
                return None, "cgroup v2 only here; the arena uses cgroup v1 hierarchies"
            return None, f"no cgroup v1 {controller} hierarchy"
        folder = os.path.join(root, controller, own[controller].lstrip("/"))
        if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
            return None, f"cgroup folder {folder} is missing or not writable (cgroups need root)"
        parents.append((controller, folder))
    probe = sorted({os.path.join(os.path.realpath(folder), f"{CGROUP_PREFIX}probe-{os.getpid()}")
                    for _, folder in parents})
    try:
        for path in probe:
            os.mkdir(path)
    except OSError as exc:
        return None, f"cannot make a cgroup: {exc.strerror or exc}"
    finally:
        for path in probe:
            with contextlib.suppress(OSError):
                os.rmdir(path)
    return Cgroups(1, tuple(parents)), ""


def clean_stale_cgroups(cgroups: Cgroups) -> int:
    """Kill and remove the bot cgroups whose supervisor is gone (an arena killed hard); return how many.

    A supervisor stopped by SIGKILL cannot clear up after itself; its bot died with it (``--die-with-parent``)
    or is killed here, so nothing survives the arena for longer than the next start.
    """
    removed = 0
    for _, folder in cgroups.parents:
        with contextlib.suppress(OSError):
            for entry in os.listdir(folder):
                if not entry.startswith(CGROUP_PREFIX):
                    continue
                pid = entry.removeprefix(CGROUP_PREFIX).split("-")[-1]
                if pid.isdigit() and not _is_supervisor(int(pid)):
                    _kill_group_procs(os.path.join(folder, entry))
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(folder, entry))
                        removed += 1
    return removed


def _is_supervisor(pid: int) -> bool:
    """Return whether ``pid`` is a supervisor with cgroups (of this or of any other installation)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
    except OSError:
        return False
    return b"sandbox.py\0" in cmdline and b"\0--cgroup\0" in cmdline


def _kill_group_procs(folder: str) -> None:
    for _ in range(50):
        pids = _group_pids(folder)
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _group_pids(folder: str) -> list[int]:
    try:
        with open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as f:
            return [int(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return []


_PROBE = """
import ctypes, os, sys
status = dict(line.split(':', 1) for line in open('/proc/self/status'))
libc = ctypes.CDLL(None, use_errno=True)
checks = {
    'no capabilities': int(status['CapEff'], 16) == 0 and int(status['CapBnd'], 16) == 0,
    'no_new_privs': status['NoNewPrivs'].strip() == '1',
    'not root': os.getuid() != 0,
    'mount refused': libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) != 0,
    'umount refused': libc.umount2(b'/proc', 0) != 0,
    'own processes only': len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3,
}
bad = [name for name, ok in checks.items() if not ok]
print('jail ok' if not bad else 'jail fails: ' + ', '.join(bad))
sys.exit(1 if bad else 0)
"""

_detected: Sandbox | None = None


def detect_sandbox(*, refresh: bool = False) -> Sandbox:
    """Return the strongest isolation this machine gives a bot, probing once per process.

    The jail needs Linux and bubblewrap that can build it here (run as root, or unprivileged user namespaces);
    the probe runs a real jail and checks from inside (no capabilities, ``no_new_privs``, mount refused, own
    ``/proc``). cgroups need a v1 hierarchy the arena may write (:func:`cgroup_parents`).
    """
    global _detected
    if _detected is not None and not refresh:
        return _detected
    import shutil
    import subprocess

    if not sys.platform.startswith("linux"):
        _detected = Sandbox(Isolation.LIMITS if os.name == "posix" else Isolation.NONE,
                            reason=f"no bubblewrap jail on {sys.platform}")
        return _detected
    cgroups, why_not = cgroup_parents()
    reasons = [] if cgroups is not None else [f"no cgroups: {why_not}"]
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        _detected = Sandbox(Isolation.LIMITS, cgroups, "; ".join([f"bubblewrap is missing: {INSTALL_HINT}",
                                                                  *reasons]))
        return _detected
    probe = jail_arguments(bwrap, DEFAULT_LIMITS, cwd="/", binds=[Bind(p) for p in interpreter_folders()],
                           env={"PATH": "/usr/bin:/bin"})
    try:
        done = subprocess.run([*probe, sys.executable, "-I", "-S", "-c", _PROBE], stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=20, check=False)
        ok = done.returncode == 0
        text = (done.stdout or done.stderr).decode("utf-8", "replace").strip().splitlines()
        failure = text[-1] if text else f"status {done.returncode}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        ok, failure = False, str(exc)
    if not ok:
        _detected = Sandbox(Isolation.LIMITS, cgroups, "; ".join([f"bubblewrap cannot build the jail here: "
                                                                  f"{failure}", *reasons]))
        return _detected
    _detected = Sandbox(Isolation.JAIL, cgroups, "; ".join(reasons), bwrap=bwrap)
    return _detected


def choose_sandbox(mode: Mode | str = Mode.AUTO) -> Sandbox:
    """Return the sandbox for ``mode``: auto (the strongest here), strict (jail and cgroups, or
    :class:`SandboxError`), limits (no jail; cgroups where they can be had)."""
    mode = Mode(mode)
    machine = detect_sandbox()
    if mode is Mode.STRICT:
        if machine.isolation is not Isolation.JAIL or machine.cgroups is None:
            raise SandboxError(f"--sandbox strict needs the bubblewrap jail and cgroups, and this machine "
                               f"gives {machine.level}: {machine.reason}")
        return machine
    if mode is Mode.LIMITS and machine.isolation is Isolation.JAIL:
        return Sandbox(Isolation.LIMITS, machine.cgroups, "asked for with --sandbox limits")
    return machine


def interpreter_folders() -> list[str]:
    """Return the folders a ``{python}`` bot needs read-only: this interpreter's prefixes and site-packages."""
    import site
    import sysconfig

    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        with contextlib.suppress(KeyError):
            folders.add(sysconfig.get_paths()[key])
    with contextlib.suppress(AttributeError):
        folders.update(site.getsitepackages())
    return sorted(_outermost(os.path.realpath(f) for f in folders if f and os.path.isdir(f)))


def _outermost(paths: Iterable[str]) -> list[str]:
    """Return ``paths`` without those inside another one of them."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


# ----------------------------------------------------------------------------------------- the supervisor
# Everything below runs in the supervisor process (``python -I -S sandbox.py``): standard library only,
# single-threaded, so forking is safe here.

_PR_SET_CHILD_SUBREAPER = 36


def _read_cpu(pid: int) -> float:
    """Return the CPU seconds of ``pid`` and of the children it has reaped (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    # fields[0] is the state (field 3); utime, stime, cutime, cstime are fields 14-17
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """Return every live process below ``root`` (scanning /proc). Also for the arena (a local Ray cluster's
    workers, tests): standard library only, as everything here."""
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


def processes_naming(text: str) -> list[int]:
    """Return the live processes whose command line holds ``text`` (scanning /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


@dataclass
class _BotGroup:
    """The bot's cgroups (v1): one folder per controller, made by the supervisor, removed when the bot ends."""

    folders: dict[str, str] = field(default_factory=dict)

    @classmethod
    def make(cls, parents: Sequence[tuple[str, str]], memory: int, pids: int) -> _BotGroup:
        group = cls()
        name = f"{CGROUP_PREFIX}{os.getpid()}"
        made: dict[str, str] = {}  # controllers mounted together (cpu,cpuacct) share one folder
        try:
            for controller, parent in parents:
                real = os.path.realpath(parent)
                if real not in made:
                    os.mkdir(os.path.join(parent, name), 0o700)
                    made[real] = os.path.join(parent, name)
                group.folders[controller] = made[real]
            group.write("pids", "pids.max", str(pids))
            group.write("memory", "memory.limit_in_bytes", str(memory))
            with contextlib.suppress(OSError):  # only where swap is accounted
                group.write("memory", "memory.memsw.limit_in_bytes", str(memory))
            group.write("cpu", "cpu.shares", "1024")
        except OSError:
            group.remove()
            raise
        return group

    def write(self, controller: str, name: str, value: str) -> None:
        with open(os.path.join(self.folders[controller], name), "w", encoding="ascii") as f:
            f.write(value)

    def join(self) -> None:
        """Move the calling process into every folder of the group (in the bot's process, before exec)."""
        for folder in set(self.folders.values()):
            with open(os.path.join(folder, "cgroup.procs"), "w", encoding="ascii") as f:
                f.write(str(os.getpid()))

    def cpu_seconds(self) -> float:
        try:
            with open(os.path.join(self.folders["cpuacct"], "cpuacct.usage"), encoding="ascii") as f:
                return int(f.read()) / 1e9
        except (OSError, ValueError, KeyError):
            return 0.0

    def pids(self) -> list[int]:
        return _group_pids(self.folders["pids"]) if "pids" in self.folders else []

    def kill(self) -> None:
        """Freeze the group, kill every process in it, thaw it: nothing in it can fork away meanwhile."""
        freezer = self.folders.get("freezer")
        for _ in range(200):
            pids = self.pids()
            if not pids:
                return
            if freezer is not None:
                with contextlib.suppress(OSError):
                    self.write("freezer", "freezer.state", "FROZEN")
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if freezer is not None:
                with contextlib.suppress(OSError):
                    self.write("freezer", "freezer.state", "THAWED")
            time.sleep(0.005)

    def remove(self) -> None:
        for folder in set(self.folders.values()):
            for _ in range(100):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # a process that has been killed but is not gone yet
                    _kill_group_procs(folder)
                    time.sleep(0.01)
        self.folders.clear()


class _Supervisor:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.child = 0
        self.status: int | None = None
        self.stop_at: float | None = None
        self.kill_at: float | None = None
        self.cpu_base = 0.0
        self.note = ""
        self.group: _BotGroup | None = None

    def say(self, text: str) -> None:
        with contextlib.suppress(OSError):
            os.write(2, f"[arena sandbox] {text}\n".encode())

    def cpu_used(self) -> float:
        """CPU seconds of the bot: of its cgroup, or of the supervisor's reaped children and live descendants."""
        if self.group is not None:
            return self.group.cpu_seconds()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = usage.ru_utime + usage.ru_stime  # everything already reaped by the supervisor
        return total + sum(_read_cpu(pid) for pid in descendants(os.getpid()))

    def start(self) -> None:
        args = self.args
        if args.cgroup:
            parents = [tuple(item.split("=", 1)) for item in args.cgroup]
            self.group = _BotGroup.make(parents, args.memory + args.fsize, args.pids)
        pid = os.fork()
        if pid == 0:  # the bot
            try:
                for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGXCPU, signal.SIGCHLD, signal.SIGTERM,
                            signal.SIGINT, signal.SIGHUP):
                    signal.signal(sig, signal.SIG_DFL)
                signal.set_wakeup_fd(-1)
                if self.group is not None:
                    self.group.join()
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
        try:
            self.start()
        except OSError as exc:
            self.say(f"cannot make the bot's cgroup: {exc}")
            return 126
        try:
            return self.supervise(wake_r)
        finally:
            if self.group is not None:
                self.group.kill()
                self.group.remove()

    def supervise(self, wake_r: int) -> int:
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
        if self.group is not None:
            self.group.kill()
        if self.reap():
            for pid in descendants(os.getpid()):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def reap_all(self) -> None:
        """Kill and reap every descendant: orphans of the bot were re-parented to this supervisor, and every
        process of the bot's cgroup."""
        if self.group is not None:
            self.group.kill()
        deadline = time.monotonic() + 5.0
        while self.reap() and time.monotonic() < deadline:
            for pid in descendants(os.getpid()):
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
                        help="address space per process (RLIMIT_AS); with cgroups, plus --fsize, the bot's memory")
    parser.add_argument("--cpu", type=int, default=DEFAULT_LIMITS.cpu_seconds, metavar="SECONDS",
                        help="CPU seconds per match for the whole bot; 'renew' on stdin starts a match")
    parser.add_argument("--nofile", type=int, default=DEFAULT_LIMITS.open_files, metavar="N",
                        help="open files per process (RLIMIT_NOFILE)")
    parser.add_argument("--fsize", type=int, default=DEFAULT_LIMITS.disk_mb * MIB, metavar="BYTES",
                        help="largest file written (RLIMIT_FSIZE)")
    parser.add_argument("--pids", type=int, default=DEFAULT_LIMITS.processes, metavar="N",
                        help="processes and threads of the bot (cgroup pids.max)")
    parser.add_argument("--cgroup", action="append", default=[], metavar="CONTROLLER=FOLDER",
                        help="make the bot's cgroup below FOLDER in CONTROLLER's v1 hierarchy (repeat for each)")
    parser.add_argument("command", nargs="+", help="the bot's command, after --")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the supervisor: start the bot under its limits, return its exit status."""
    args = _parse(sys.argv[1:] if argv is None else argv)
    if not args.cgroup:
        # without cgroups, orphans of the bot come to us instead of init, so none outlives it
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    return _Supervisor(args).run()


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # a normal interpreter exit takes tens of ms here, and the arena is waiting
