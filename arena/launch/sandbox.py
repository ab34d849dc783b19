"""Limits and isolation for bot processes: what the arena asks of the supervisor that applies them.

The arena never forks (it has imported grpc), so limits are applied in a fresh process: the arena runs
each bot as ``arena-supervisor [LIMITS] -- COMMAND...``, with the command line that :meth:`Sandbox.command` builds.
The supervisor is ``arena/launch/supervisor.c`` (which says what it does), built with the package or at first use
(:mod:`arena.launch.native`); where it cannot be had there is no isolation at all (:attr:`Isolation.NONE`, said
with the reason), never a second supervisor. This module also finds what the machine gives (the supervisor,
bubblewrap, seccomp, cgroups: :func:`detect_sandbox`), and makes and clears the bots' cgroups at a table.

With :attr:`Isolation.JAIL` the command the supervisor starts is ``bwrap`` (bubblewrap) building the bot's jail
(:meth:`Sandbox.command`): new user, PID, mount, network, IPC, UTS and cgroup namespaces, a non-root user
without capabilities and with ``no_new_privs``, no way to make user namespaces, a new session, and an
allowlist of read-only folders (the system's runtime, the interpreter, the bot's own folder), its own socket
and a private size-limited scratch (``HOME`` and ``TMPDIR``). See README "Sandbox".
"""

from __future__ import annotations

import contextlib
import enum
import glob
import os
import select
import signal
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arena.launch import native, tempdir
from arena.launch.native import Supervisor
from arena.launch.procs import descendants
from arena.launch.supervisor_constants import (
    CGROUP_PREFIX,
    DEFAULT_CPU_SECONDS,
    DEFAULT_DISK_MB,
    DEFAULT_MEMORY_MB,
    DEFAULT_OPEN_FILES,
    DEFAULT_PROCESSES,
    HOST_UID_BASE,
    HOST_UID_SPAN,
    JAIL_SOCKET,
    MIB,
    STAGE_PREFIX,
)

JAIL_UID = 65534
"""The user and group id a jailed bot has inside its jail (``nobody``)."""
JAIL_SCRATCH = "/tmp"
"""The jailed bot's private scratch (a tmpfs of ``disk_mb``): its ``HOME`` and ``TMPDIR``."""
BOT_GROUP_PREFIX = "arena-botgroup-"
"""Name of a bot's cgroup at a table (holding every process of the bot there, :func:`make_bot_group`),
followed by the arena's pid and a serial number."""
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

    memory_mb: int = DEFAULT_MEMORY_MB
    cpu_seconds: int = DEFAULT_CPU_SECONDS
    open_files: int = DEFAULT_OPEN_FILES
    disk_mb: int = DEFAULT_DISK_MB
    log_kb: int = 1024
    processes: int = DEFAULT_PROCESSES

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

    NONE = "none"  # a plain process in its own session: no limits (where there is no supervisor)
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
    seccomp: str | None = None
    """The file of the jail's seccomp filter (BPF, :mod:`arena.launch.jailfilter`); ``None``: no filter."""
    drop_uid: bool = False
    """Whether the supervisor drops a jailed bot to a host uid of its own (:data:`HOST_UID_BASE`): the arena
    runs as root."""
    broken_jail: str = ""
    """Why the jail fails its self-check where bubblewrap is installed (empty: it holds, or there is no
    bubblewrap): the isolation is then less than the machine was set up for, which is said loudly."""
    supervisor: Supervisor | None = None
    """The supervisor that runs each bot; ``None``: this machine's (:func:`arena.launch.native.default_supervisor`,
    built at first use in an editable install)."""

    def supervisor_used(self) -> Supervisor:
        """Return the supervisor that runs the bots: :attr:`supervisor`, or this machine's."""
        return self.supervisor if self.supervisor is not None else native.default_supervisor()

    @property
    def level(self) -> str:
        """Return the isolation level as stored with a ladder: ``strict``, ``jail``, ``limits+cgroups``,
        ``limits`` or ``none``."""
        if self.isolation is Isolation.JAIL:
            return "strict" if self.cgroups is not None and self.seccomp is not None else "jail"
        broken = " (jail broken)" if self.broken_jail else ""
        if self.isolation is Isolation.LIMITS:
            return ("limits+cgroups" if self.cgroups is not None else "limits") + broken
        return "none" + broken

    def warning(self) -> str:
        """Return the line to say loudly at start when bots run with less than this machine was set up for ("" when
        they do not): without isolation because the supervisor cannot be had, or without the jail because
        bubblewrap is installed but its jail does not hold here."""
        if self.isolation is Isolation.NONE and self.supervisor is not None and not self.supervisor.available:
            return (f"warning: bots run without isolation: {self.supervisor.describe()}; "
                    "--sandbox strict refuses to run without it")
        if not self.broken_jail:
            return ""
        return (f"warning: bubblewrap is installed but the bot jail fails its self-check here "
                f"({self.broken_jail}): bots run at {self.level}, without the jail; fix the jail, or give "
                "--sandbox limits to choose this")

    def describe(self) -> str:
        """Return one line saying what a bot gets here."""
        parts = {
            Isolation.JAIL: "bubblewrap jail (no network, no capabilities, read-only allowlist, own /proc)",
            Isolation.LIMITS: "resource limits, no jail (bots share the network and the file system)",
            Isolation.NONE: "no isolation",
        }[self.isolation]
        if self.isolation is Isolation.JAIL:
            parts += ", seccomp filter" if self.seccomp is not None else ", no seccomp filter"
            if self.drop_uid:
                parts += f", each bot process its own host uid from {HOST_UID_BASE}"
        if self.isolation is not Isolation.NONE:
            parts += f", cgroups v{self.cgroups.version} per bot" if self.cgroups is not None else ", rlimits only"
            supervisor = self.supervisor_used().describe()
            parts += f", {supervisor}" if supervisor else ""
        if self.isolation is Isolation.LIMITS and os.name == "posix" and os.geteuid() == 0:
            parts += "; bots run as the arena's user, root: use the jail for bots you do not trust"
        text = f"bot sandbox: {self.level}: {parts}"
        return f"{text} ({self.reason})" if self.reason else text

    def command(self, argv: Sequence[str], limits: Limits, *, cwd: str, binds: Iterable[Bind] = (),
                socket: str | None = None, env: dict[str, str] | None = None,
                group: Cgroups | None = None) -> list[str]:
        """Return the command that runs ``argv`` (in folder ``cwd``) under this isolation with ``limits``.

        In the jail the bot sees only the system's runtime, ``binds`` (read-only), ``socket`` (the host path of
        its own socket, at :data:`JAIL_SOCKET`) and a private scratch at :data:`JAIL_SCRATCH`; ``env`` is its
        whole environment. ``group`` is the bot's cgroup (:func:`make_bot_group`), which holds the limits of
        all the bot's processes; without it (and with cgroups) the process gets a group of its own with them.
        """
        if self.isolation is Isolation.NONE:
            return list(argv)
        command = [*self.supervisor_used().prefix, *limits.arguments()]
        if group is not None:
            command += [*group.arguments(), "--in-bot-group"]
        elif self.cgroups is not None:
            command += self.cgroups.arguments()
        if self.isolation is Isolation.JAIL and self.seccomp is not None:
            command += ["--seccomp", self.seccomp]
        if self.isolation is Isolation.JAIL and self.drop_uid:
            command.append("--drop-uid")
        if self.isolation is Isolation.JAIL:
            command += ["--", *jail_arguments(self.bwrap, limits, cwd=cwd, binds=binds, socket=socket, env=env)]
        else:
            command.append("--")
        return [*command, *argv]


def _system_binds() -> list[str]:
    """Return bwrap's arguments for the system's read-only runtime: /usr, the /lib and /bin folders, bits of /etc
    (the JDK's configuration among them)."""
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
    # The JDK's own configuration, which Debian and Ubuntu keep in /etc/java-<N>-openjdk and link from the JDK's
    # conf/ and lib/ in /usr/lib/jvm (java.security, jvm.cfg, logging.properties...): without it a JVM stops at
    # its first security check ("Error loading java.security file"). Public defaults, read-only, like ssl.
    for path in sorted(glob.glob("/etc/java-*-openjdk")):
        args += ["--ro-bind", path, path]
    return args


def jail_arguments(bwrap: str, limits: Limits, *, cwd: str, binds: Iterable[Bind] = (),
                   socket: str | None = None, env: dict[str, str] | None = None) -> list[str]:
    """Return the ``bwrap`` command (up to the bot's own command) that builds a bot's jail."""
    size = str(max(limits.disk_mb * MIB, 1 << 16))
    args = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--uid", str(JAIL_UID),
            "--gid", str(JAIL_UID), "--cap-drop", "ALL", "--new-session", "--die-with-parent",
            "--hostname", "bot", "--proc", "/proc",
            # /dev as Flatpak keeps it: bubblewrap's devices (null, zero, full, random, urandom, tty, a private
            # pts), read-only, and a shm of the scratch's size, counted in the bot's cgroup
            "--dev", "/dev", "--size", size, "--perms", "1777", "--tmpfs", "/dev/shm", "--remount-ro", "/dev",
            *_system_binds()]
    # the scratch first: a bot's folder may lie below /tmp, and is then bound over the scratch
    args += ["--size", size, "--perms", "0700", "--tmpfs", JAIL_SCRATCH]
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




def clean_stale_stages(folder: str = "/tmp") -> int:
    """Remove the stage folders of supervisors that are gone (killed by SIGKILL); return how many."""
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.listdir(folder):
            pid = entry.removeprefix(STAGE_PREFIX).split("-")[0]
            if entry.startswith(STAGE_PREFIX) and pid.isdigit() and not tempdir.alive(int(pid)):
                with contextlib.suppress(OSError):
                    os.rmdir(os.path.join(folder, entry))  # empty on the host: the mounts were the child's
                    removed += 1
    return removed


CPU_SHARES = 1024
"""A bot's CPU share (cgroup v1 ``cpu.shares``): the kernel's default, as every other group has."""


def write_limits(folders: dict[str, str], memory: int, pids: int, cpu_shares: int = CPU_SHARES) -> None:
    """Write a bot's limits into its cgroup ``folders`` (controller to folder): processes, memory (with swap where
    it is accounted), its CPU share (by default the kernel's default; as the supervisor writes them for a group of
    its own)."""
    def write(controller: str, name: str, value: str) -> None:
        with open(os.path.join(folders[controller], name), "w", encoding="ascii") as f:
            f.write(value)

    with contextlib.suppress(OSError):  # before any child group; newer kernels always count the hierarchy
        write("memory", "memory.use_hierarchy", "1")
    write("pids", "pids.max", str(pids))
    write("memory", "memory.limit_in_bytes", str(memory))
    with contextlib.suppress(OSError):  # only where swap is accounted
        write("memory", "memory.memsw.limit_in_bytes", str(memory))
    write("cpu", "cpu.shares", str(cpu_shares))


def _remove_tree(folder: str) -> None:
    """Remove a cgroup folder and the groups below it, killing what is still in them (a process killed but not
    gone yet keeps its group busy for a moment)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
    for _ in range(100):
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:  # a process that has been killed but is not gone yet
            _kill_group_procs(folder)
            time.sleep(0.01)


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


_bot_groups = 0


def make_bot_group(cgroups: Cgroups, limits: Limits, tables: int = 1, cpu_shares: int = CPU_SHARES) -> Cgroups:
    """Make a bot's cgroup in a process pool, below the arena's own groups: every process of the bot there runs
    in a group of its own below it (:meth:`Sandbox.command` with ``group``), and this one bounds them together:
    ``memory_mb`` plus ``disk_mb`` and ``processes``, each times the ``tables`` the pool serves (what a bot may
    hold at each table where it plays at once), ``cpu_shares`` (by default one bot's share; fewer: a bot whose
    matches yield to others', as a contest's scrimmages do), and (read by each supervisor) the CPU time of a
    match. Remove it with :func:`remove_bot_group`. Raises :class:`OSError`."""
    global _bot_groups
    _bot_groups += 1
    name = f"{BOT_GROUP_PREFIX}{os.getpid()}-{_bot_groups}"
    folders: dict[str, str] = {}
    made: dict[str, str] = {}
    try:
        for controller, parent in cgroups.parents:
            real = os.path.realpath(parent)
            if real not in made:
                os.mkdir(os.path.join(parent, name), 0o700)
                made[real] = os.path.join(parent, name)
            folders[controller] = made[real]
        write_limits(folders, (limits.memory_mb + limits.disk_mb) * MIB * tables, limits.processes * tables,
                     cpu_shares)
    except OSError:
        remove_bot_group(Cgroups(cgroups.version, tuple(folders.items())))
        raise
    return Cgroups(cgroups.version, tuple(folders.items()))


def remove_bot_group(group: Cgroups) -> None:
    """Kill whatever is left in a bot's group and its process groups, and remove them."""
    for folder in {folder for _, folder in group.parents}:
        _remove_tree(folder)


def clean_stale_cgroups(cgroups: Cgroups) -> int:
    """Kill and remove the bot cgroups whose supervisor is gone (an arena killed hard); return how many.

    A supervisor stopped by SIGKILL cannot clear up after itself; its bot died with it (``--die-with-parent``)
    or is killed here, so nothing survives the arena for longer than the next start.
    """
    removed = 0
    for _, folder in cgroups.parents:
        with contextlib.suppress(OSError):
            for entry in os.listdir(folder):
                if entry.startswith(BOT_GROUP_PREFIX):
                    arena = entry.removeprefix(BOT_GROUP_PREFIX).split("-")[0]
                    if arena.isdigit() and not tempdir.alive(int(arena)):
                        _remove_tree(os.path.join(folder, entry))
                        removed += 1
                    continue
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
    # this version's supervisor, or an older arena's: their bots are not stale
    return native.is_supervisor_command(cmdline) and b"\0--cgroup\0" in cmdline


_PROBE = r"""
import ctypes, errno, json, os, sys, time
numbers = json.loads(sys.argv[1])
status = dict(line.split(':', 1) for line in open('/proc/self/status'))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def refused(name, *args):
    if name not in numbers:
        return True
    result = libc.syscall(ctypes.c_long(numbers[name]), *[ctypes.c_long(a) for a in args])
    if result == 0 and name == 'clone':
        os._exit(0)  # the child of a clone that should have been refused
    return result == -1 and ctypes.get_errno() in (errno.EPERM, errno.ENOSYS)

def unwritable(path):
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # opened, never written
    except OSError:
        return True
    return False

checks = {
    'no capabilities': int(status['CapEff'], 16) == 0 and int(status['CapBnd'], 16) == 0,
    'no_new_privs': status['NoNewPrivs'].strip() == '1',
    'not root': os.getuid() != 0,
    'mount refused': libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) != 0,
    'umount refused': libc.umount2(b'/proc', 0) != 0,
    'own processes only': len([p for p in os.listdir('/proc') if p.isdigit()]) <= 3,
    '/proc/sys read-only': unwritable('/proc/sys/kernel/core_pattern') and unwritable('/proc/sys/vm/drop_caches'),
    '/proc/sysrq-trigger read-only': unwritable('/proc/sysrq-trigger'),
    '/dev read-only': unwritable('/dev/arena-probe'),
}
if numbers:
    checks['seccomp filter on'] = status.get('Seccomp', '0').strip() == '2'
    checks['ptrace refused'] = refused('ptrace', 16, 1)  # PTRACE_ATTACH to the jail's pid 1
    checks['clone of a namespace refused'] = refused('clone', 0x10000000 | 17)  # CLONE_NEWUSER | SIGCHLD
    checks['personality refused'] = refused('personality', 0x0400000)  # READ_IMPLIES_EXEC
    for name in numbers:
        if name not in ('ptrace', 'clone', 'personality'):
            checks[name + '() refused'] = refused(name, 0, 0, 0, 0, 0)
bad = [name for name, ok in checks.items() if not ok]
print('jail ok' if not bad else 'jail fails: ' + ', '.join(bad), flush=True)
if not bad:
    time.sleep(30)  # until the arena has looked at this process from outside and stops it
sys.exit(1 if bad else 0)
"""

_detected: Sandbox | None = None


def detect_sandbox(*, refresh: bool = False) -> Sandbox:
    """Return the strongest isolation this machine gives a bot, probing once per process.

    The jail needs Linux and bubblewrap that can build it here (run as root, or unprivileged user namespaces);
    the probe runs a real jail, under the supervisor as a bot would, and checks from inside (no capabilities,
    ``no_new_privs``, mount refused, own ``/proc``, ``/proc/sys`` and ``/dev`` read-only, every call of the
    seccomp filter refused, ptrace of the jail's pid 1 refused) and from outside (no process of the jail is
    host root; where the arena runs as root, each runs as a uid of the arena's reserved range). The seccomp
    filter needs libseccomp (:mod:`arena.launch.jailfilter`); cgroups need a v1 hierarchy the arena may write
    (:func:`cgroup_parents`).
    """
    global _detected
    if _detected is not None and not refresh:
        return _detected
    import shutil

    chosen = native.default_supervisor()
    if not chosen.available:
        _detected = Sandbox(Isolation.NONE, reason=f"no supervisor: {chosen.why_not}", supervisor=chosen)
        return _detected
    if not sys.platform.startswith("linux"):
        _detected = Sandbox(Isolation.LIMITS, reason=f"no bubblewrap jail on {sys.platform}", supervisor=chosen)
        return _detected
    cgroups, why_not = cgroup_parents()
    reasons = [] if cgroups is not None else [f"no cgroups: {why_not}"]
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        _detected = Sandbox(Isolation.LIMITS, cgroups, "; ".join([f"bubblewrap is missing: {INSTALL_HINT}",
                                                                  *reasons]), supervisor=chosen)
        return _detected
    from arena.launch import jailfilter

    seccomp: str | None = None
    numbers: dict[str, int] = {}
    try:
        built = jailfilter.build()
        seccomp, numbers = built.path, jailfilter.syscall_numbers([*jailfilter.denied_calls(), "ptrace", "clone",
                                                                    "personality"])
    except jailfilter.FilterError as exc:
        reasons.append(f"no seccomp filter: {exc}")
    jail = Sandbox(Isolation.JAIL, None, bwrap=bwrap, seccomp=seccomp, drop_uid=os.geteuid() == 0,
                   supervisor=chosen)
    failure = probe_jail(jail, numbers)
    if failure and seccomp is not None:
        reasons.append(f"no seccomp filter: the jail does not hold with it: {failure}")
        jail = Sandbox(Isolation.JAIL, None, bwrap=bwrap, drop_uid=jail.drop_uid, supervisor=chosen)
        seccomp = None
        failure = probe_jail(jail, {})
    if failure:
        _detected = Sandbox(Isolation.LIMITS, cgroups, "; ".join([f"bubblewrap cannot build the jail here: "
                                                                  f"{failure}", *reasons]), broken_jail=failure,
                            supervisor=chosen)
        return _detected
    _detected = Sandbox(Isolation.JAIL, cgroups, "; ".join(reasons), bwrap=bwrap, seccomp=seccomp,
                        drop_uid=jail.drop_uid, supervisor=chosen)
    return _detected


def probe_command(jail: Sandbox, numbers: dict[str, int]) -> list[str]:
    """Return the command that runs the probe in a real jail of ``jail`` (supervisor, uid, filter, bubblewrap,
    as for a bot). ``numbers``: the calls the filter must refuse, by number."""
    import json

    return jail.command([sys.executable, "-I", "-S", "-c", _PROBE, json.dumps(numbers)], DEFAULT_LIMITS, cwd="/",
                        binds=[Bind(p) for p in interpreter_folders()], env={"PATH": "/usr/bin:/bin"})


def probe_jail(jail: Sandbox, numbers: dict[str, int], timeout: float = 20.0) -> str:
    """Run the probe in a real jail of ``jail``; return what does not hold ("" when it all does)."""
    return run_probe(probe_command(jail, numbers), own_uids=jail.drop_uid, timeout=timeout)


def run_probe(command: Sequence[str], *, own_uids: bool, timeout: float = 20.0) -> str:
    """Run a probe command (:func:`probe_command`) and check it from inside and outside; return what does not
    hold ("" when it all does). ``own_uids``: each jailed process must run as a uid of the arena's range."""
    import subprocess

    try:
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        return str(exc)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
        if line != "jail ok":
            proc.stdin.close()  # the supervisor stops the probe and clears up after it (its stage too)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            proc.kill()
            err = proc.stderr.read(1 << 16).decode("utf-8", "replace").strip() if proc.wait(timeout) is not None \
                else ""
            text = line or err or f"no answer within {timeout:.0f} s"
            return text.splitlines()[-1] if text else f"status {proc.returncode}"
        jailed = descendants(proc.pid)
        uids = {uid for uid in map(_host_uid, jailed) if uid is not None}
        if not jailed or not uids:
            return "cannot see the jail's processes from outside"
        if own_uids and not all(HOST_UID_BASE <= uid < HOST_UID_BASE + HOST_UID_SPAN for uid in uids):
            return f"the jail's processes run as host uids {sorted(uids)}, not uids of their own"
        if 0 in uids:
            return "the jail's processes run as host root"
        return ""
    finally:
        for pid in descendants(proc.pid):  # the jail's processes: its supervisor sees them gone at once
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            if proc.stdin is not None:
                proc.stdin.close()  # the supervisor stops, and clears up after the probe (its stage too)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in descendants(proc.pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=timeout)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _host_uid(pid: int) -> int | None:
    """Return the largest of the real, effective, saved and file-system host uids of ``pid``."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return max(int(x) for x in line.split()[1:])
    except (OSError, ValueError):
        return None
    return None


def choose_sandbox(mode: Mode | str = Mode.AUTO) -> Sandbox:
    """Return the sandbox for ``mode``: auto (the strongest here), strict (jail and cgroups, or
    :class:`SandboxError`), limits (no jail; cgroups where they can be had)."""
    mode = Mode(mode)
    machine = detect_sandbox()
    if mode is Mode.STRICT:
        if machine.isolation is not Isolation.JAIL or machine.cgroups is None or machine.seccomp is None:
            raise SandboxError(f"--sandbox strict needs the bubblewrap jail with its seccomp filter, and cgroups, "
                               f"and this machine gives {machine.level}: {machine.reason}")
        return machine
    if mode is Mode.LIMITS and (machine.isolation is Isolation.JAIL or machine.broken_jail):
        return Sandbox(Isolation.LIMITS, machine.cgroups, "asked for with --sandbox limits",
                       supervisor=machine.supervisor)
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
