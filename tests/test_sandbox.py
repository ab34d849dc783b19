"""The sandbox of bot processes: limits from the bot list, the supervisor, cgroups, the jail, the log pump.

The supervisor (arena/launch/supervisor.c) is run directly with small programs instead of bots (no gRPC), under
every isolation this machine gives: limits only always, limits with cgroups and the bubblewrap jail where they can
be had. These tests are its specification: they run against this machine's build of it, or the one
ARENA_SUPERVISOR names (.ci/run runs them again against a build with sanitizers). With CI=true a machine without
the jail or the supervisor fails these tests instead of skipping them.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from processes import gone

from arena.games import game_packages
from arena.launch import native
from arena.launch.botlist import BotListError, BotSpec, parse_bot_list
from arena.launch.process import BotProcess, LaunchError, log_file_name
from arena.launch.sandbox import (
    DEFAULT_LIMITS,
    Bind,
    Cgroups,
    Isolation,
    Limits,
    LimitsError,
    Sandbox,
    detect_sandbox,
    interpreter_folders,
    own_cgroups,
)
from arena.launch.supervisor_constants import (
    BWRAP_OPTIONS,
    CGROUP_PREFIX,
    CPU_EXIT_CODE,
    HOST_UID_BASE,
    HOST_UID_SPAN,
    JAIL_SOCKET,
    RUN_FAILED_EXIT_CODE,
    STAGE_PREFIX,
    START_FAILED_EXIT_CODE,
    USAGE_EXIT_CODE,
)

MACHINE = detect_sandbox()
CI = os.environ.get("CI") == "true"
CGROUPS_DUE = CI and os.geteuid() == 0 and any(own_cgroups())  # root on a machine with cgroup v1 hierarchies
MODES = [Sandbox(Isolation.LIMITS)]
if MACHINE.cgroups is not None:
    MODES.append(Sandbox(Isolation.LIMITS, MACHINE.cgroups))
if MACHINE.isolation is Isolation.JAIL:
    MODES.append(MACHINE)
# the supervisor under test: this machine's build, or the one ARENA_SUPERVISOR names; with CI=true a machine
# without it fails (test_ci_has_...)
SUPERVISOR = native.default_supervisor()
supervised = pytest.mark.skipif(not SUPERVISOR.available and not CI, reason=f"no supervisor here: {SUPERVISOR.why_not}")
SUPERVISED = [pytest.param(mode, id=mode.level, marks=[supervised]) for mode in MODES]
# a jail test skips only where there is no bubblewrap at all: where it is installed and its jail fails, they fail
jail = pytest.mark.skipif(MACHINE.isolation is not Isolation.JAIL and not CI and not MACHINE.broken_jail,
                          reason=f"no bubblewrap jail here: {MACHINE.reason}")
cgroups = pytest.mark.skipif(MACHINE.cgroups is None and not CGROUPS_DUE, reason=f"no cgroups here: {MACHINE.reason}")


def start(sandbox: Sandbox, code: str, scratch: Path, limits: Limits = DEFAULT_LIMITS,
          binds: list[str] | None = None, socket: str | None = None) -> subprocess.Popen[str]:
    """Start ``python -c code`` under ``sandbox``, its stdin the supervisor's control pipe."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(scratch), "TMPDIR": str(scratch)}
    command = sandbox.command([sys.executable, "-I", "-S", "-c", code], limits, cwd=str(scratch),
                              binds=[Bind(p) for p in [*interpreter_folders(), *(binds or [])]], socket=socket,
                              env=env | ({"HOME": "/tmp", "TMPDIR": "/tmp"} if sandbox.isolation is Isolation.JAIL
                                         else {}))
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True, cwd=scratch)


def run(sandbox: Sandbox, code: str, scratch: Path, limits: Limits = DEFAULT_LIMITS,
        binds: list[str] | None = None, socket: str | None = None) -> tuple[int, str, str]:
    proc = start(sandbox, code, scratch, limits, binds, socket)
    status = proc.wait(timeout=30)  # stdin stays open: closing it would stop the bot
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdin.close()
    return status, out, err


def alive(pid: int) -> bool:
    return not gone(pid)


# ------------------------------------------------------------------------------------------- the bot list


def test_limits_come_from_the_bot_list_with_safe_defaults(tmp_path: Path) -> None:
    data = {"limits": {"memory_mb": 512, "log_kb": 10},
            "bot": [{"name": "a", "command": ["x"]}, {"name": "b", "command": "x", "limits": {"cpu_seconds": 5}}]}
    a, b = parse_bot_list(data, tmp_path)
    assert a.limits == Limits(memory_mb=512, log_kb=10)
    assert b.limits == Limits(memory_mb=512, log_kb=10, cpu_seconds=5)
    plain, = parse_bot_list({"bot": [{"name": "c", "command": "x"}]}, tmp_path)
    assert plain.limits == DEFAULT_LIMITS
    assert DEFAULT_LIMITS.memory_mb == 1024 and DEFAULT_LIMITS.open_files == 256 and DEFAULT_LIMITS.processes == 128


@pytest.mark.parametrize(("data", "message"), [
    ({"limits": {"memory": 5}, "bot": [{"name": "a", "command": "x"}]}, "unknown limit 'memory'"),
    ({"bot": [{"name": "a", "command": "x", "limits": {"cpu_seconds": 0}}]}, "cpu_seconds must be"),
    ({"bot": [{"name": "a", "command": "x", "limits": {"open_files": "many"}}]}, "open_files must be"),
    ({"bot": [{"name": "a", "command": "x", "limits": 7}]}, "limits must be a table"),
    ({"bots": [{"name": "a", "command": "x"}]}, "unknown key 'bots'"),
])
def test_bad_limits_are_one_line_errors(tmp_path: Path, data: dict[str, object], message: str) -> None:
    with pytest.raises(BotListError, match=message) as error:
        parse_bot_list(data, tmp_path)
    assert "\n" not in str(error.value)


def test_limits_check_their_values() -> None:
    with pytest.raises(LimitsError):
        Limits(memory_mb=-1)
    with pytest.raises(LimitsError):
        Limits(open_files=3)
    assert Limits().updated({"disk_mb": 1}).disk_mb == 1


def test_log_file_names_stay_in_the_log_folder_and_never_meet() -> None:
    assert log_file_name("greedy", 2) == "greedy-2.log"
    for name in ("../../etc/passwd", ".hidden", "a/b", "", "..", "x\n"):
        file = log_file_name(name, 1)
        assert "/" not in file and not file.startswith(".") and file.endswith("-1.log")
    # two names that mangle alike (':' and '_') keep two files, and neither takes a plain name's
    names = ["alice:my_bot:v1", "alice_my:bot:v1", "alice_my_bot_v1", "alice_my_bot_v1.", ".alice_my_bot_v1"]
    assert len({log_file_name(name, 0) for name in names}) == len(names)


# ------------------------------------------------------------------------------------------ the supervisor


@pytest.mark.process
@supervised
def test_the_supervisor_reads_the_command_line_the_arena_writes() -> None:
    """Every option :meth:`Sandbox.command` writes is one it knows (``--name VALUE`` or ``--name=VALUE``), and a
    bad command line ends in its usage and USAGE_EXIT_CODE, never in a bot run with other limits."""
    done = subprocess.run([*SUPERVISOR.prefix, "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and "usage: arena-supervisor" in done.stdout, done.stderr
    jail = Sandbox(Isolation.JAIL, Cgroups(1, (("pids", "/p"),)), seccomp="/f", drop_uid=True, supervisor=SUPERVISOR)
    command = jail.command(["bot"], DEFAULT_LIMITS, cwd="/", group=Cgroups(1, (("pids", "/g"),)))
    written = {word for word in command[1:command.index("--")] if word.startswith("--")}
    assert written == {"--memory", "--cpu", "--nofile", "--fsize", "--pids", "--cgroup", "--in-bot-group",
                       "--seccomp", "--drop-uid"}
    assert all(option in done.stdout for option in written), sorted(written)
    for args in (["--cpu", "lots", "--", "true"], ["--cpu"], ["--memory=1x", "--", "true"], ["--nope", "--", "true"],
                 ["--cpu", "5"]):
        bad = subprocess.run([*SUPERVISOR.prefix, *args], capture_output=True, text=True, timeout=30, check=False)
        assert bad.returncode == USAGE_EXIT_CODE and bad.stderr.startswith("usage: arena-supervisor"), (args, bad)
    good = subprocess.Popen([*SUPERVISOR.prefix, "--cpu=5", "--memory", str(900 << 20), "--", sys.executable, "-c",
                             "import resource; print(resource.getrlimit(resource.RLIMIT_AS)[0])"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert good.stdin is not None and good.stdout is not None
    assert good.wait(timeout=30) == 0  # its input stays open until the bot has ended: closing it stops the bot
    assert good.stdout.read() == f"{900 << 20}\n"
    good.stdin.close()
    good.stdout.close()


def test_the_jail_command_holds_only_options_the_supervisor_reads() -> None:
    """The supervisor reads bubblewrap's command by BWRAP_OPTIONS (it stages every --ro-bind source) and refuses any
    other option: each one :func:`jail_arguments` writes is in the table with the number of values it takes."""
    from arena.launch.sandbox import jail_arguments

    args = jail_arguments("bwrap", DEFAULT_LIMITS, cwd="/srv/bot", binds=[Bind("/srv/bot")], socket="/run/s.sock",
                          env={"PATH": "/usr/bin"})
    i = 1
    seen = set()
    while args[i] != "--":
        assert args[i] in BWRAP_OPTIONS, f"jail_arguments writes {args[i]!r}, which the supervisor refuses"
        seen.add(args[i])
        i += 1 + BWRAP_OPTIONS[args[i]]
    assert i == len(args) - 1 and {"--ro-bind", "--setenv", "--unshare-all", "--tmpfs", "--remount-ro"} <= seen


@pytest.mark.process
@supervised
def test_a_supervisor_that_cannot_start_the_bot_says_why(tmp_path: Path) -> None:
    """126: the bot's cgroup cannot be made; 127: its command cannot be run (each with a line on stderr)."""
    def status(*args: str) -> tuple[int, str]:
        proc = subprocess.Popen([*SUPERVISOR.prefix, *args], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stdin is not None and proc.stderr is not None
        code = proc.wait(timeout=30)  # its input stays open until the bot has ended: closing it stops the bot
        err = proc.stderr.read()
        proc.stdin.close()
        proc.stderr.close()
        return code, err

    code, err = status("--cgroup", f"pids={tmp_path}/none", "--", sys.executable, "-c", "pass")
    assert code == START_FAILED_EXIT_CODE and err.startswith("[arena sandbox] cannot make the bot's cgroup"), err
    assert not (tmp_path / "none").exists()
    # a group made below one folder, and then a controller missing: said in a line, and the group made removed
    code, err = status("--cgroup", f"pids={tmp_path}", "--", sys.executable, "-c", "pass")
    assert code == START_FAILED_EXIT_CODE and err.startswith("[arena sandbox] cannot make the bot's cgroup"), err
    assert "cpuacct" in err and "Traceback" not in err and list(tmp_path.iterdir()) == [], err
    code, err = status("--", str(tmp_path / "no-such-program"))
    assert code == RUN_FAILED_EXIT_CODE and err.startswith("[arena sandbox] cannot run") and "no-such-program" in err, \
        err


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="--drop-uid is for an arena that runs as root")
@supervised
def test_a_root_supervisor_stages_the_jails_folders_and_drops_the_uid(tmp_path: Path) -> None:
    """What the supervisor does before bubblewrap (``--drop-uid``, ``--seccomp``), seen by a stand-in for bwrap
    that prints what it got: it runs as the supervisor's own host uid, with no groups; a private folder and
    the bot's socket are staged (bound into a tmpfs that uid reaches), the socket made its; the system's
    folders and the rest of the command pass unchanged; the filter is an open descriptor."""
    import tempfile

    private = tmp_path / "bot"  # below pytest's folder of mode 0700: out of the bot's uid's reach
    private.mkdir()
    (private / "code.txt").write_text("the bot's code")
    sock = tmp_path / "s.sock"
    sock.write_text("")
    seccomp = tmp_path / "filter.bpf"
    seccomp.write_text("bpf")
    shown = Path(tempfile.mkdtemp(prefix="arena-fake-bwrap-"))
    try:
        shown.chmod(0o755)
        bwrap = shown / "bwrap"
        bwrap.write_text('#!/bin/sh\nid -u; id -G; echo "$@"; eval "cat <&$2"; echo; cat "$4/code.txt"; echo\n'
                         'stat -c %u "$8"\n')
        bwrap.chmod(0o755)
        command = [str(bwrap), "--ro-bind", str(private), str(private), "--unshare-all", "--ro-bind", str(sock),
                   JAIL_SOCKET, "--ro-bind", "/usr", "/usr", "--", "bot", "--ro-bind"]
        proc = subprocess.Popen([*SUPERVISOR.prefix, "--seccomp", str(seccomp), "--drop-uid", "--", *command],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.wait(timeout=30)
        out, err = proc.stdout.read(), proc.stderr.read()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    finally:
        for path in shown.iterdir():
            path.unlink()
        shown.rmdir()
    assert proc.returncode == 0, err
    uid, groups, args, bpf, code, owner = out.splitlines()
    assert HOST_UID_BASE <= int(uid) < HOST_UID_BASE + HOST_UID_SPAN and groups == uid and owner == uid
    words = args.split()
    stage = os.path.dirname(words[3])
    assert words[:2] == ["--seccomp", words[1]] and words[1].isdigit() and bpf == "bpf"
    assert words[2:] == ["--ro-bind", f"{stage}/1", str(private), "--unshare-all", "--ro-bind", f"{stage}/2",
                         JAIL_SOCKET, "--ro-bind", "/usr", "/usr", "--", "bot", "--ro-bind"]
    assert os.path.basename(stage).startswith(STAGE_PREFIX) and not os.path.exists(stage)  # removed at the end
    assert code == "the bot's code"


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_resource_limits_are_set_in_the_bot(sandbox: Sandbox, tmp_path: Path) -> None:
    code = ("import resource as r; print(*(r.getrlimit(getattr(r, 'RLIMIT_' + k))[0] "
            "for k in ('AS', 'NOFILE', 'CORE', 'FSIZE')))")
    limits = Limits(memory_mb=700, open_files=100, disk_mb=3)
    status, out, err = run(sandbox, code, tmp_path, limits)
    assert status == 0, err
    assert out.split() == [str(700 << 20), "100", "0", str(3 << 20)]


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_the_bots_exit_status_comes_through(sandbox: Sandbox, tmp_path: Path) -> None:
    assert run(sandbox, "raise SystemExit(7)", tmp_path)[0] == 7
    assert run(sandbox, "import os, signal; os.kill(os.getpid(), signal.SIGKILL)", tmp_path)[0] == 137


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_memory_beyond_the_limit_is_refused(sandbox: Sandbox, tmp_path: Path) -> None:
    code = "x = bytearray(300 << 20)"
    status, _, err = run(sandbox, code, tmp_path, Limits(memory_mb=150))
    assert status == 1 and "MemoryError" in err


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_processes_that_leave_the_session_die_with_the_bot(sandbox: Sandbox, tmp_path: Path) -> None:
    code = ("import os, signal, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "    signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
            "    time.sleep(60)\n"
            "    os._exit(0)\n"
            "time.sleep(0.2)\n")
    proc = start(sandbox, code, tmp_path)
    assert proc.wait(timeout=10) == 0
    # the escapee runs the same command line as the bot, which has ended
    leftovers = [p for p in os.listdir("/proc") if p.isdigit() and _cmdline(p).endswith(code.encode())
                 and alive(int(p))]
    assert leftovers == [], "a process of the bot outlived it"


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().rstrip(b"\0")
    except OSError:
        return b""


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_closing_the_control_pipe_stops_a_bot_that_ignores_sigterm(sandbox: Sandbox, tmp_path: Path) -> None:
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('ready', flush=True)\n"
            "time.sleep(60)\n")
    proc = start(sandbox, code, tmp_path)
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == "ready\n"
    began = time.monotonic()
    proc.stdin.close()
    # SIGTERM ignored, then SIGKILL; in the jail SIGTERM ends bubblewrap, and with it the bot's PID namespace
    assert proc.wait(timeout=10) in ((137, 143) if sandbox.isolation is Isolation.JAIL else (137,))
    assert time.monotonic() - began < 3


@pytest.mark.process
@supervised
def test_sigterm_to_the_supervisor_stops_its_bot(tmp_path: Path) -> None:
    """The arena's last resort before SIGKILL to the group: the supervisor stops the bot as when its input closes."""
    proc = start(Sandbox(Isolation.LIMITS),
                 "print('ready', flush=True)\nimport time; time.sleep(60)", tmp_path)
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    assert proc.stdout.readline() == "ready\n"
    proc.terminate()
    assert proc.wait(timeout=10) == 143  # the bot's status: ended by the SIGTERM passed on
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        stream.close()


@pytest.mark.process
@pytest.mark.parametrize("sandbox", SUPERVISED)
def test_cpu_time_is_limited_per_match(sandbox: Sandbox, tmp_path: Path) -> None:
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.7: pass\n"
    # 0.7 s, a new match, 0.7 s again: within a limit of 1 s per match
    code = spin + "print('renew', flush=True)\ntime.sleep(0.4)\n" + spin
    proc = start(sandbox, code, tmp_path, Limits(cpu_seconds=1))
    assert proc.stdout is not None and proc.stdin is not None
    assert proc.stdout.readline() == "renew\n"
    proc.stdin.write("renew\n")
    proc.stdin.flush()
    assert proc.wait(timeout=20) == 0
    # without the new match, the second spin goes over the limit: killed, with its own status and a line
    status, _, err = run(sandbox, spin + spin + "time.sleep(1)\n", tmp_path, Limits(cpu_seconds=1))
    assert status == CPU_EXIT_CODE
    assert "over its limit of 1 s" in err


# ------------------------------------------------------------------------------------------- the jail


def test_ci_has_the_jail_and_cgroups() -> None:
    """CI installs bubblewrap (.ci/run) and runs as root: a missing jail there is a failure, never a skip; so
    are missing cgroups where the machine has cgroup v1 hierarchies (cgroup v2 is not used yet), and a missing
    supervisor (CI has a C compiler)."""
    if CI:
        assert MACHINE.isolation is Isolation.JAIL, MACHINE.describe()
        assert SUPERVISOR.available, SUPERVISOR.why_not
    if CGROUPS_DUE:
        assert MACHINE.cgroups is not None, MACHINE.describe()


@pytest.mark.process
@jail
def test_a_jailed_bot_has_no_capabilities_no_network_and_only_its_own_socket(tmp_path: Path) -> None:
    with socket.socket() as tcp, socket.socket(socket.AF_UNIX) as unix:
        tcp.bind(("127.0.0.1", 0))
        tcp.listen()
        path = tmp_path / "s.sock"
        unix.bind(str(path))
        unix.listen()
        code = ("import ctypes, os, socket\n"
                "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
                "print(int(status['CapEff'], 16), int(status['CapBnd'], 16), status['NoNewPrivs'].strip())\n"
                f"u = socket.socket(socket.AF_UNIX); u.connect({JAIL_SOCKET!r}); print('unix ok')\n"
                "t = socket.socket(); t.settimeout(2)\n"
                f"print('tcp refused', t.connect_ex(('127.0.0.1', {tcp.getsockname()[1]})) != 0)\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "print('mount', libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())\n"
                "print('umount', libc.umount2(b'/proc', 0), libc.umount2(b'/usr', 0))\n"
                "print('processes', len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
                "print('uid', os.getuid())\n")
        status, out, err = run(MACHINE, code, tmp_path, socket=str(path))
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0] == "0 0 1"  # no effective capabilities, none to get back, no_new_privs
    assert lines[1:3] == ["unix ok", "tcp refused True"]
    assert lines[3] == "mount -1 1"  # EPERM
    assert lines[4] == "umount -1 -1"
    assert int(lines[5].split()[1]) <= 3  # its /proc shows its own processes only
    assert lines[6] == "uid 65534"


@pytest.mark.process
@jail
def test_a_jailed_bot_sees_an_allowlist_and_writes_only_its_scratch(tmp_path: Path) -> None:
    own = tmp_path / "own"
    own.mkdir()
    (own / "bot.txt").write_text("mine")
    secret = tmp_path / "arena.db"
    secret.write_text("the ladder's seed")
    code = ("import os\n"
            "open('/tmp/notes', 'w').write('scratch')\n"
            f"print(open({str(own / 'bot.txt')!r}).read())\n"
            f"print(os.path.exists({str(secret)!r}), os.path.exists({str(Path.home())!r} + '/.bashrc'))\n"
            f"for p in ({str(own / 'x')!r}, '/usr/x', '/x'):\n"
            "    try:\n        open(p, 'w')\n    except OSError as e:\n        print(e.errno)\n")
    status, out, err = run(MACHINE, code, tmp_path, binds=[str(own)])
    assert status == 0, err
    assert out.split() == ["mine", "False", "False", "30", "30", "30"]  # EROFS: read-only file system
    assert secret.read_text() == "the ladder's seed" and sorted(p.name for p in own.iterdir()) == ["bot.txt"]


@pytest.mark.process
@cgroups
def test_a_bot_in_cgroups_has_a_process_count_and_its_group_goes_with_it(tmp_path: Path) -> None:
    assert MACHINE.cgroups is not None
    code = ("import os, time\n"
            "kids = 0\n"
            "try:\n"
            "    for _ in range(40):\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(30); os._exit(0)\n"
            "        kids += 1\n"
            "except OSError as e:\n"
            "    print('fork refused', e.errno)\n"
            "print('forked', kids, flush=True)\n")
    status, out, err = run(Sandbox(Isolation.LIMITS, MACHINE.cgroups), code, tmp_path, Limits(processes=10))
    assert status == 0, err
    assert "fork refused 11" in out and int(out.split()[-1]) < 10  # EAGAIN at the limit
    for _, folder in MACHINE.cgroups.parents:
        assert not [e for e in os.listdir(folder) if e.startswith(CGROUP_PREFIX) and e.endswith(f"-{os.getpid()}")]


@pytest.mark.process
@cgroups
def test_the_group_of_a_live_supervisor_is_not_stale(tmp_path: Path) -> None:
    """An arena starting clears the groups of supervisors that are gone (killed hard), and only those."""
    from arena.launch.sandbox import clean_stale_cgroups

    assert MACHINE.cgroups is not None
    proc = start(Sandbox(Isolation.LIMITS, MACHINE.cgroups),
                 "print('up', flush=True)\nimport time; time.sleep(30)", tmp_path)
    assert proc.stdout is not None and proc.stdin is not None
    group = os.path.join(MACHINE.cgroups.parents[0][1], f"{CGROUP_PREFIX}{proc.pid}")
    try:
        assert proc.stdout.readline() == "up\n"
        clean_stale_cgroups(MACHINE.cgroups)
        assert os.path.isdir(group) and proc.poll() is None
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert not os.path.exists(group)  # removed by the supervisor when its bot ended


@pytest.mark.process
@cgroups
def test_memory_in_a_tmpfs_counts_against_the_bot(tmp_path: Path) -> None:
    """A jailed bot filling /dev/shm (a tmpfs not limited by size) meets its cgroup's memory limit."""
    code = ("import os\n"
            "with open('/dev/shm/hoard', 'wb') as f:\n"
            "    for _ in range(400):\n"
            "        f.write(b'x' * (1 << 20))\n"
            "print('wrote 400 MiB')\n")
    sandbox = MACHINE if MACHINE.isolation is Isolation.JAIL else Sandbox(Isolation.LIMITS, MACHINE.cgroups)
    status, out, _ = run(sandbox, code, tmp_path, Limits(memory_mb=100, disk_mb=16))
    assert "wrote 400 MiB" not in out
    assert status != 0


# ------------------------------------------------------------------------------------------- the launcher


def test_a_missing_program_is_a_launch_error(tmp_path: Path) -> None:
    async def main() -> None:
        with pytest.raises(LaunchError, match="cannot start"):
            BotProcess(BotSpec("nope", ("no-such-program-anywhere",), tmp_path)).start("unix:/x", "t")
    asyncio.run(main())


@pytest.mark.process
def test_bot_output_goes_to_its_log_cut_at_the_limit(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(2000):\n    print('line', i, 'x' * 100)\nprint('err', file=sys.stderr)\n"
    spec = BotSpec("chatty", (sys.executable, "-c", code), tmp_path, Limits(log_kb=16))
    log = tmp_path / "logs" / "chatty-0.log"

    async def main() -> None:
        proc = BotProcess(spec, log)
        proc.start(f"unix:{listening(tmp_path)}", "token")
        await proc.stop(grace=10)
        assert proc.returncode == 0

    asyncio.run(main())
    data = log.read_bytes()
    assert data.startswith(b"line 0 ")
    assert 16 * 1024 < len(data) < 16 * 1024 + 100
    assert data.endswith(b"later output dropped]\n")


@pytest.mark.process
def test_a_bot_sees_a_clean_environment(tmp_path: Path) -> None:
    code = "import os, json; print(json.dumps(dict(os.environ)))"
    spec = BotSpec("env", (sys.executable, "-c", code), tmp_path)
    log = tmp_path / "env.log"

    async def main() -> str:
        proc = BotProcess(spec, log)
        proc.start(f"unix:{listening(tmp_path)}", "tok")
        scratch = str(proc.scratch)
        await proc.stop(grace=10)
        return scratch

    os.environ["ARENA_TEST_SECRET"] = "do not pass on"
    try:
        scratch = asyncio.run(main())
    finally:
        del os.environ["ARENA_TEST_SECRET"]
    env = json.loads(log.read_text().splitlines()[0])
    env.pop("PWD", None)  # bubblewrap sets it with the working directory
    assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONUNBUFFERED", "GRPC_EXPERIMENTS", "ARENA_ADDRESS",
                        "ARENA_TOKEN", "ARENA_GAMES"}
    assert env["ARENA_TOKEN"] == "tok"
    # every game's package as the arena found it, so a Python bot plays that package (and reads no entry points)
    assert dict(item.split("=") for item in env["ARENA_GAMES"].split(",")) == game_packages()
    assert env["GRPC_EXPERIMENTS"] == os.environ["GRPC_EXPERIMENTS"] != ""  # the arena's gRPC settings
    if MACHINE.isolation is Isolation.JAIL:  # a private tmpfs, gone with the jail; the socket at a fixed place
        assert env["HOME"] == env["TMPDIR"] == "/tmp" and env["ARENA_ADDRESS"] == f"unix:{JAIL_SOCKET}"
    else:
        assert env["HOME"] == env["TMPDIR"] == scratch
        assert not Path(scratch).exists()  # removed when the bot stopped


def listening(folder: Path) -> Path:
    """Return the path of a Unix socket in ``folder`` (a bot's own socket, which its jail holds)."""
    path = folder / "s.sock"
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(path))
    return path


@pytest.mark.process
def test_launched_bots_reach_the_arena_that_also_listens_on_tcp() -> None:
    """The bots the arena starts use its Unix socket, which reaches into their network namespace."""
    from arena.core.referee import Clock
    from arena.games import get_game
    from arena.launch.runner import run_match

    root = Path(__file__).resolve().parent.parent
    game = get_game("lama")
    bots = [BotSpec(n, ("{python}", "-m", f"arena.games.lama.bots.{n}.bot"), root) for n in ("greedy", "random")]
    record = asyncio.run(run_match(game, bots, 3, game.options({"rounds": 1}), clock=Clock(1.0),
                                   address="127.0.0.1:0"))
    assert record.result is not None and record.faults == []


@pytest.mark.process
def test_when_the_arena_is_killed_its_bots_go_too(tmp_path: Path) -> None:
    """kill -9 of `arena match`: each supervisor sees its input close and stops its bot and all it started."""
    root = Path(__file__).resolve().parent.parent
    mark = f"arena-orphan-{os.getpid()}-{time.monotonic_ns()}"
    hostile = root / "tests" / "adversarial" / "hostile.py"
    bots = tmp_path / "bots.toml"
    bots.write_text("".join(f'[[bot]]\nname = "b{i}"\ncommand = ["{{python}}", "{hostile}", "fork", "{mark}"]\n\n'
                            for i in range(3)))
    arena = subprocess.Popen([sys.executable, "-c", "from arena.cli import run; run()", "match", "--bots", str(bots),
                              "--game", "cabanga", "--deadline", "30", "--seed", "1"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=root)
    try:
        deadline = time.monotonic() + 30
        while not _escaped(mark) and time.monotonic() < deadline:  # the first bot asked has forked
            time.sleep(0.05)
        assert _escaped(mark)
        # the machine's supervisor runs them (the same program as here: ARENA_SUPERVISOR is passed on)
        programs = {_cmdline(str(p)).split(b"\0", 1)[0] for p in _marked(mark) if _supervisor(_cmdline(str(p)))}
        assert programs == {SUPERVISOR.prefix[0].encode()}
    finally:
        arena.kill()
        arena.wait()
    deadline = time.monotonic() + 5
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(mark) == [], "processes of the bots outlived the arena"
    if MACHINE.cgroups is not None:  # and their cgroups went with them: any left belong to live supervisors
        deadline = time.monotonic() + 5
        while _orphan_groups() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _orphan_groups() == []


def _orphan_groups() -> list[str]:
    assert MACHINE.cgroups is not None
    found = []
    for _, folder in MACHINE.cgroups.parents:
        for entry in os.listdir(folder):
            pid = entry.removeprefix(CGROUP_PREFIX)
            if entry.startswith(CGROUP_PREFIX) and pid.isdigit() and not _supervisor(_cmdline(pid)):
                found.append(os.path.join(folder, entry))
    return found


def _supervisor(cmdline: bytes) -> bool:
    """Whether a command line is a supervisor's: this arena's, or an older one's running beside."""
    return native.is_supervisor_command(cmdline + b"\0")


def _escaped(mark: str) -> list[int]:
    return [p for p in _marked(mark) if b"time.sleep(120)" in _cmdline(str(p))]


def _marked(mark: str) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and mark.encode() in _cmdline(p) and alive(int(p))]


def test_strict_refuses_a_machine_without_the_jail_and_auto_says_what_it_got(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from arena.cli import main
    from arena.launch import sandbox as sandbox_module
    from arena.launch.sandbox import SandboxError, choose_sandbox

    bare = Sandbox(Isolation.LIMITS, reason="bubblewrap is missing: apt-get install bubblewrap")
    monkeypatch.setattr(sandbox_module, "_detected", bare)
    with pytest.raises(SandboxError, match="needs the bubblewrap jail with its seccomp filter, and cgroups"):
        choose_sandbox("strict")
    assert choose_sandbox("auto") is bare and choose_sandbox("limits") is bare
    cgroups = Cgroups(1, (("pids", "/nowhere"),))
    unfiltered = Sandbox(Isolation.JAIL, cgroups, reason="no seccomp filter: libseccomp is not available")
    monkeypatch.setattr(sandbox_module, "_detected", unfiltered)
    assert unfiltered.level == "jail"
    with pytest.raises(SandboxError, match="gives jail: no seccomp filter"):  # strict needs the filter too
        choose_sandbox("strict")
    monkeypatch.setattr(sandbox_module, "_detected", bare)
    result = CliRunner().invoke(main, ["sandbox", "--sandbox", "strict"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "apt-get install bubblewrap" in result.stderr
    result = CliRunner().invoke(main, ["sandbox"])
    assert result.exit_code == 0 and result.output.startswith("bot sandbox: limits: ")


@pytest.mark.process
def test_a_jail_that_fails_its_self_check_where_bubblewrap_is_installed_is_said_loudly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from arena.cli import main
    from arena.launch import sandbox as sandbox_module
    from arena.launch.sandbox import choose_sandbox

    broken = Sandbox(Isolation.LIMITS, reason="bubblewrap cannot build the jail here: jail fails: not root",
                     broken_jail="jail fails: not root")
    monkeypatch.setattr(sandbox_module, "_detected", broken)
    assert broken.level == "limits (jail broken)"  # stored with a ladder, shown on its leaderboard
    assert choose_sandbox("auto") is broken
    assert choose_sandbox("limits").warning() == ""  # chosen: nothing to warn about
    result = CliRunner().invoke(main, ["match", "--seed", "1", "-o", "rounds=1"])
    assert "warning: bubblewrap is installed but the bot jail fails its self-check here (jail fails: not root)" \
        in result.stderr
    assert Sandbox(Isolation.LIMITS, reason="bubblewrap is missing").warning() == ""


@cgroups
def test_a_bot_group_takes_the_cpu_share_it_is_given() -> None:
    """A contest's scrimmage bots yield to its ladder's: their groups get fewer CPU shares than a bot's default."""
    from arena.launch.sandbox import CPU_SHARES, make_bot_group, remove_bot_group

    assert MACHINE.cgroups is not None
    shares = {}
    for asked in (CPU_SHARES, CPU_SHARES // 8):
        group = make_bot_group(MACHINE.cgroups, Limits(), cpu_shares=asked)
        try:
            cpu = dict(group.parents)["cpu"]
            shares[asked] = int(Path(cpu, "cpu.shares").read_text())
        finally:
            remove_bot_group(group)
    assert shares == {CPU_SHARES: CPU_SHARES, CPU_SHARES // 8: CPU_SHARES // 8}
