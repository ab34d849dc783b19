"""The supervisor every bot runs under: it applies the bot's limits, counts its CPU and stops it.

The arena never forks (it has imported grpc), so limits are applied in a fresh process: the arena runs each bot
as ``python -I -S arena/launch/supervisor.py [LIMITS] -- COMMAND...`` (this file, by path, standard library only:
it imports nothing of the arena, and the arena's side, :mod:`arena.launch.sandbox`, builds its command line and
imports what the two share from here, never the reverse). The supervisor runs outside the bot's jail, as the
arena's user, and:

- with cgroups, makes the bot's own group below the arena's cgroup in each hierarchy
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

With the jail, the command it starts is ``bwrap`` (bubblewrap) building the bot's jail
(:meth:`arena.launch.sandbox.Sandbox.command`).

Its native twin, ``supervisor.c`` beside it, does all of this in a process of a few hundred KiB instead of an
interpreter's 8 MiB, and is what the arena runs where a C compiler builds it (:mod:`arena.launch.native`); this
script is the fallback. The two take the same command line and must behave the same: a change here is a change
there (tests/test_sandbox.py runs the supervisor's tests against both).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import select
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

MIB = 1 << 20
CPU_EXIT_CODE = 128 + signal.SIGXCPU
"""The supervisor's exit status when it killed the bot for spending more CPU in a match than allowed."""
STOP_GRACE = 0.5
"""Seconds between the SIGTERM and the SIGKILL with which the supervisor stops a bot."""
CPU_POLL = 0.25
"""Seconds between two looks at the bot's CPU time."""
JAIL_SOCKET = "/run/arena/arena.sock"
"""Where a jailed bot finds its own socket to the arena."""
CGROUP_PREFIX = "arena-bot-"
"""Name of a bot process's cgroup, followed by the pid of the supervisor that made it."""
STAGE_PREFIX = "arena-jail-"
"""The supervisor's empty folder in /tmp where its bot's child stages what the jail shows (``--drop-uid``),
followed by the supervisor's pid."""
HOST_UID_BASE = 2_100_000_000
"""Where the arena runs as root, a jailed bot process runs as host uid ``HOST_UID_BASE + its supervisor's pid``
(and the same gid): a uid of its own, owning nothing, that no other process of the machine has. The range
reserved is ``HOST_UID_BASE`` to ``HOST_UID_BASE + HOST_UID_SPAN - 1``."""
HOST_UID_SPAN = 1 << 22
"""Linux's largest ``pid_max``: every live supervisor's pid gives a different uid."""
# a bot's default limits (arena.launch.sandbox.Limits), and the supervisor's defaults
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPU_SECONDS = 300
DEFAULT_OPEN_FILES = 256
DEFAULT_DISK_MB = 64
DEFAULT_PROCESSES = 128


# ----------------------------------------------------------------------------- shared with the arena's side
# cgroups and /proc, for the supervisor and for arena.launch.sandbox, which imports them from here.


def write_limits(folders: dict[str, str], memory: int, pids: int) -> None:
    """Write a bot's limits into its cgroup ``folders`` (controller to folder): processes, memory (with swap
    where it is accounted), the default CPU share."""
    def write(controller: str, name: str, value: str) -> None:
        with open(os.path.join(folders[controller], name), "w", encoding="ascii") as f:
            f.write(value)

    with contextlib.suppress(OSError):  # before any child group; newer kernels always count the hierarchy
        write("memory", "memory.use_hierarchy", "1")
    write("pids", "pids.max", str(pids))
    write("memory", "memory.limit_in_bytes", str(memory))
    with contextlib.suppress(OSError):  # only where swap is accounted
        write("memory", "memory.memsw.limit_in_bytes", str(memory))
    write("cpu", "cpu.shares", "1024")


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


# ----------------------------------------------------------------------------------------- the supervisor
# Everything below runs in the supervisor process only (``python -I -S supervisor.py``): standard library only,
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


@dataclass
class _BotGroup:
    """The bot's cgroups (v1): one folder per controller, made by the supervisor, removed when the bot ends."""

    folders: dict[str, str] = field(default_factory=dict)
    cpu_folder: str = ""
    """The folder whose ``cpuacct.usage`` is the bot's CPU time: the bot's group when in one, else this."""

    @classmethod
    def make(cls, parents: Sequence[tuple[str, str]], memory: int, pids: int, *, shared: bool) -> _BotGroup:
        """Make the process's group below ``parents``: with the limits, or, ``shared``, below a bot's group
        (:func:`arena.launch.sandbox.make_bot_group`) that holds them for all the bot's processes."""
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
            group.cpu_folder = dict(parents)["cpuacct"] if shared else group.folders["cpuacct"]
            if not shared:
                write_limits(group.folders, memory, pids)
        except (OSError, KeyError) as exc:
            group.remove()
            if isinstance(exc, KeyError):  # a --cgroup list without a controller the bot's group needs
                raise OSError(f"no {exc} controller among the --cgroup folders") from None
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
            with open(os.path.join(self.cpu_folder, "cpuacct.usage"), encoding="ascii") as f:
                return int(f.read()) / 1e9
        except (OSError, ValueError):
            return 0.0

    def freeze(self, frozen: bool) -> None:
        """Freeze the process (an idle warm bot spends nothing between its matches), or thaw it."""
        if "freezer" in self.folders:
            with contextlib.suppress(OSError):
                self.write("freezer", "freezer.state", "FROZEN" if frozen else "THAWED")

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
            _remove_tree(folder)
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
        self.stage: str | None = None
        """An empty folder where the bot's child mounts what its jail shows (``--drop-uid``)."""

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
            self.group = _BotGroup.make(parents, args.memory + args.fsize, args.pids, shared=args.in_bot_group)
            self.cpu_base = self.group.cpu_seconds()  # the bot's other processes at the table spent the rest
        if args.drop_uid:  # a name no other live supervisor has (its pid), made here, empty: never someone else's
            self.stage = f"/tmp/{STAGE_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
            os.mkdir(self.stage, 0o700)
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
                command = list(args.command)
                uid = HOST_UID_BASE + os.getppid() if args.drop_uid else None
                if args.seccomp or uid is not None:
                    command = _jail_command(command, args.seccomp, uid=uid, stage=self.stage)
                if uid is not None:
                    _drop_to(uid)
                _set_limit(resource.RLIMIT_CORE, 0)
                _set_limit(resource.RLIMIT_AS, args.memory)
                _set_limit(resource.RLIMIT_NOFILE, args.nofile)
                _set_limit(resource.RLIMIT_FSIZE, args.fsize)
                os.execvp(command[0], command)
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
        try:  # what start() made is removed even when it fails half-way (the stage, or the fork, after the group)
            try:
                self.start()
            except OSError as exc:
                self.say(f"cannot make the bot's cgroup: {exc}" if self.group is None and self.args.cgroup
                         else f"cannot start the bot: {exc}")
                return 126
            return self.supervise(wake_r)
        finally:
            if self.group is not None:
                self.group.kill()
                self.group.remove()
            if self.stage is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(self.stage)

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
                else:
                    self.control(data)
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

    def control(self, data: bytes) -> None:
        """Act on what the arena wrote: ``renew`` (a match starts: thaw, the CPU allowance starts again),
        ``freeze`` (the bot waits, warm, for a later match), ``thaw``."""
        for word in data.split():
            if word == b"renew":
                self.freeze(False)
                self.cpu_base = self.cpu_used()
            elif word in (b"freeze", b"thaw"):
                self.freeze(word == b"freeze")

    def freeze(self, frozen: bool) -> None:
        if self.group is not None:
            self.group.freeze(frozen)

    def request_stop(self) -> None:
        self.freeze(False)  # a frozen bot could neither leave nor die
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


_BWRAP_OPTION_ARGS = {"--uid": 1, "--gid": 1, "--cap-drop": 1, "--hostname": 1, "--proc": 1, "--dev": 1,
                      "--size": 1, "--perms": 1, "--tmpfs": 1, "--dir": 1, "--chdir": 1, "--remount-ro": 1,
                      "--symlink": 2, "--setenv": 2, "--ro-bind": 2, "--seccomp": 1}
"""The bubblewrap options :func:`arena.launch.sandbox.jail_arguments` writes, and how many values each takes."""


def _jail_command(command: list[str], seccomp: str | None, *, uid: int | None, stage: str | None) -> list[str]:
    """Return the ``bwrap`` command with the seccomp filter open (``--seccomp FD``) and, for a bot that will
    run as host ``uid``, each ``--ro-bind SOURCE`` outside the system's folders staged: bound (while still
    root, in a mount namespace of this process's own) into ``stage``, a tmpfs that any uid may cross, so that
    bubblewrap can show what its unprivileged uid could not reach (an interpreter below a home folder of
    mode 0700, a bot's socket in the arena's private folder), read-only and with their own permissions. The
    bot's socket becomes ``uid``'s, so that it may connect (no one else reaches it)."""
    staged = 0
    if uid is not None:
        assert stage is not None
        _private_mounts(stage)
    out = [command[0]]
    if seccomp:
        out += ["--seccomp", str(_inherited(os.open(seccomp, os.O_RDONLY)))]
    i = 1
    while i < len(command) and command[i] != "--":
        option = command[i]
        if option not in _BWRAP_OPTION_ARGS and option.startswith("--") and option not in _BWRAP_FLAGS:
            raise ValueError(f"unexpected bubblewrap option {option!r}")
        count = _BWRAP_OPTION_ARGS.get(option, 0)
        values = command[i + 1: i + 1 + count]
        if option == "--ro-bind" and uid is not None and stage is not None and not values[0].startswith(_SYSTEM):
            if values[1] == JAIL_SOCKET:
                os.chown(values[0], uid, uid)
            staged += 1
            out += ["--ro-bind", _bind(values[0], os.path.join(stage, str(staged))), values[1]]
        else:
            out += [option, *values]
        i += 1 + count
    return out + command[i:]


_BWRAP_FLAGS = {"--unshare-all", "--unshare-user", "--disable-userns", "--new-session", "--die-with-parent",
                "--clearenv", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup"}
"""bubblewrap's options without a value that a jail may hold (tests/test_jail_proof.py takes one namespace away
with ``--unshare-uts``): any other option is refused, since its values could not be told from the next option."""


_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/")
_CLONE_NEWNS, _MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20000, 2, 4, 4096, 16384, 1 << 18


def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def _private_mounts(stage: str) -> None:
    """Give this process mount namespace of its own, with a small tmpfs at ``stage`` (an empty folder)."""
    libc = _libc()
    _check(libc.unshare(_CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    _check(libc.mount(b"arena-stage", stage.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, b"mode=0755,size=1m"),
           f"mount tmpfs {stage}")


def _bind(source: str, target: str) -> str:
    """Bind ``source`` (a folder or a file) at ``target``; return ``target``."""
    if os.path.isdir(source):
        os.mkdir(target)
    else:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _check(_libc().mount(source.encode(), target.encode(), None, _MS_BIND | _MS_REC, None), f"bind {source}")
    return target


def _inherited(fd: int) -> int:
    os.set_inheritable(fd, True)
    return fd


def _drop_to(uid: int) -> None:
    """Become host ``uid`` (and gid) for good, with no supplementary groups: the root supervisor's bot child,
    after it has joined its cgroup and opened what the jail shows."""
    os.chdir("/")
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or os.getgroups():
        raise OSError(f"could not drop to uid {uid}")


def _set_limit(which: int, value: int) -> None:
    _, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m arena.launch.supervisor",
        description="Run COMMAND as a bot under resource limits, supervised (see arena/launch/supervisor.py).")
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY_MB * MIB, metavar="BYTES",
                        help="address space per process (RLIMIT_AS); with cgroups, plus --fsize, the bot's memory")
    parser.add_argument("--cpu", type=int, default=DEFAULT_CPU_SECONDS, metavar="SECONDS",
                        help="CPU seconds per match for the whole bot; 'renew' on stdin starts a match")
    parser.add_argument("--nofile", type=int, default=DEFAULT_OPEN_FILES, metavar="N",
                        help="open files per process (RLIMIT_NOFILE)")
    parser.add_argument("--fsize", type=int, default=DEFAULT_DISK_MB * MIB, metavar="BYTES",
                        help="largest file written (RLIMIT_FSIZE)")
    parser.add_argument("--pids", type=int, default=DEFAULT_PROCESSES, metavar="N",
                        help="processes and threads of the bot (cgroup pids.max)")
    parser.add_argument("--cgroup", action="append", default=[], metavar="CONTROLLER=FOLDER",
                        help="make the bot's cgroup below FOLDER in CONTROLLER's v1 hierarchy (repeat for each)")
    parser.add_argument("--in-bot-group", action="store_true",
                        help="the --cgroup folders are the bot's group, which holds the limits of all its "
                             "processes (and counts their CPU time)")
    parser.add_argument("--seccomp", metavar="FILE", help="the seccomp filter (BPF) for bwrap --seccomp")
    parser.add_argument("--drop-uid", action="store_true",
                        help=f"run the command (bwrap) as host uid {HOST_UID_BASE} + this supervisor's pid")
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
