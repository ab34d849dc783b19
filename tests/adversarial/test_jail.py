"""Hostile bots against the jail, the cgroups and the per-bot sockets: each attack is a real process in a real
match. The attack fails or is contained, the attacker alone takes the faults, and the well-behaved bots finish
at the default deadline (1 s) with no fault.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from adversarial_harness import GOOD, HOSTILE, ROOT, Arena, hostile

from arena.core.deals import DealKey
from arena.core.referee import Clock, FaultKind, MatchRecord, referee_match
from arena.games import get_game
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.process import log_file_name
from arena.launch.procs import processes_naming
from arena.launch.runner import serving
from arena.launch.sandbox import Isolation, own_cgroups

pytestmark = pytest.mark.process

DEFAULT_DEADLINE = 1.0
CI = os.environ.get("CI") == "true"
CGROUPS_DUE = CI and os.geteuid() == 0 and any(own_cgroups())  # root on a machine with cgroup v1 hierarchies


def needs(arena: Arena, *, jail: bool = False, cgroups: bool = False) -> None:
    sandbox = arena.pool.sandbox
    missing = [what for what, wanted, there in (("the bubblewrap jail", jail, sandbox.isolation is Isolation.JAIL),
                                                ("cgroups", cgroups, sandbox.cgroups is not None))
               if wanted and not there]
    if missing:
        if (CI or sandbox.broken_jail) and ((jail and sandbox.isolation is not Isolation.JAIL) or CGROUPS_DUE):
            pytest.fail(f"CI must have {' and '.join(missing)}: {sandbox.describe()}")
        pytest.skip(f"no {' and '.join(missing)} here: {sandbox.describe()}")


def only_the_attacker(record: MatchRecord, *kinds: FaultKind) -> None:
    """The match is whole; faults (if any) are the attacker's (seat 0) and of ``kinds``."""
    assert record.result is not None
    assert all(f.seat == 0 for f in record.faults), f"a well-behaved seat was charged: {record.faults}"
    assert {f.kind for f in record.faults} <= set(kinds), record.faults


def log_lines(arena: Arena, name: str, prefix: str) -> list[str]:
    return [line for line in (arena.log_dir / log_file_name(name, 0)).read_text().splitlines()
            if line.startswith(prefix)]


def test_a_jailed_bot_cannot_undo_its_jail_or_read_what_is_not_its_own(arena: Arena, tmp_path: Path) -> None:
    needs(arena, jail=True)
    db = tmp_path / "arena.db"
    db.write_text("the ladder's secret seed")
    arena.healthy()  # the good bots run: their sockets exist
    sockets = [str(s.folder / "arena.sock") for s in arena.pool._running.values() if s.folder is not None]
    other_arena = arena.server.address.removeprefix("unix:")
    paths = [str(db), str(arena.log_dir), str(ROOT / "bots"), str(ROOT / "arena.db"), other_arena, *sockets,
             str(Path.home() / ".bashrc"), str(Path.home() / ".ssh"), "/etc/shadow", "/var", str(tmp_path)]
    name = "hostile-escape"
    record = arena.play(hostile(name, "escape", *paths), deadline=DEFAULT_DEADLINE)
    assert record.result is not None and record.faults == [], record.faults
    arena.retire(name)
    lines = log_lines(arena, name, "escape ")
    assert len(lines) >= 12 + len(paths), lines
    escaped = [line for line in lines if ": blocked" not in line]
    assert escaped == [], escaped
    assert not (HOSTILE.parent / "x").exists() and db.read_text() == "the ladder's secret seed"
    arena.healthy()


def test_a_fork_bomb_costs_only_the_bomber(arena: Arena) -> None:
    needs(arena, cgroups=True)
    mark = f"arena-bomb-{os.getpid()}-{time.monotonic_ns()}"
    name = "hostile-bomb"
    try:
        record = arena.play(hostile(name, "fork-bomb", "200", mark), deadline=DEFAULT_DEADLINE)
        spinning = len(processes_naming(mark))
        only_the_attacker(record, FaultKind.TIMEOUT, FaultKind.CRASH, FaultKind.DISCONNECT)
        assert 0 < spinning < 128, spinning  # the bot's processes and threads are at most 128
    finally:
        arena.retire(name)
    assert processes_naming(mark) == [], "processes of the fork bomb outlived the bot"
    arena.healthy()


def test_a_memory_bomb_through_tmpfs_meets_the_bots_limits(arena: Arena) -> None:
    needs(arena, jail=True, cgroups=True)
    name = "hostile-tmpfs"
    record = arena.play(hostile(name, "tmpfs-bomb", memory_mb=400, disk_mb=16), deadline=DEFAULT_DEADLINE)
    only_the_attacker(record, FaultKind.TIMEOUT, FaultKind.CRASH, FaultKind.DISCONNECT)
    arena.retire(name)
    lines = log_lines(arena, name, "tmpfs-bomb")
    # the scratch is full at its size; /dev/shm at the memory limit (the write fails, or the bot is killed)
    assert lines and "/tmp stopped at" in lines[0] and int(lines[0].split(" at ")[1].split()[0]) <= 16, lines
    assert all(int(line.split(" at ")[1].split()[0]) < 420 for line in lines), lines
    arena.healthy()


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_helper_processes_holding_connections_cannot_exhaust_the_arenas_descriptors(arena: Arena) -> None:
    arena.healthy()
    before = _open_fds()
    name = "hostile-fds"
    log = arena.log_dir / log_file_name(name, 0)
    try:
        record = arena.play(hostile(name, "fd-flood", "300"), deadline=DEFAULT_DEADLINE)
        # forking after gRPC started may cost the attacker its own stream: its fault, nobody else's
        only_the_attacker(record, FaultKind.DISCONNECT, FaultKind.TIMEOUT, FaultKind.CRASH)
        # the helpers go on connecting after the match (the bot is stopped only when retired): wait until each
        # has all it could get, and count the arena's descriptors while they hold them
        end = time.monotonic() + 30
        while log.read_text().count("fd-flood helper holds") < 4 and time.monotonic() < end:
            arena.run(lambda: asyncio.sleep(0.05))  # the loop turns: the arena accepts, the bot's log is read
        # the last refusals close (a burst of accepted connections is closed on the loop's next turns): what is
        # left is what the arena holds while the helpers hold theirs
        arena.run(lambda: asyncio.sleep(0.3))
        during = _open_fds()
    finally:
        arena.retire(name)
    assert log.read_text().count("fd-flood helper holds") == 4, "the helpers did not all open their connections"
    assert during - before < 60, f"the arena held {during - before} more descriptors during the flood"
    arena.healthy()


def test_a_hello_flood_from_one_bot_never_keeps_a_restarting_bot_out(arena: Arena) -> None:
    name = "hostile-hellos"
    flooder = hostile(name, "hello-flood")
    own = (FaultKind.DISCONNECT, FaultKind.TIMEOUT)  # what flooding may cost the flooder itself
    record = arena.play(flooder, deadline=DEFAULT_DEADLINE)
    only_the_attacker(record, *own)
    for _ in range(2):  # a well-behaved bot restarts while the flood goes on: it connects, and plays clean
        arena.retire(GOOD[1].name)
        record = arena.play(flooder, deadline=DEFAULT_DEADLINE)
        only_the_attacker(record, *own)
    session = arena.pool._running[(name, 0)]
    assert session.server.refusals.total > 0  # its own waiting room was full, and refused its streams
    arena.retire(name)
    arena.healthy()


def test_a_tokenless_flood_of_the_listener_keeps_no_remote_bot_out(tmp_path: Path) -> None:
    """A flood from one peer host fills that host's waiting room on --listen; a remote bot elsewhere gets in."""
    import socket

    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here: the flood needs a second peer host")
    token = "remote-token-0123456789abcdef"
    game = get_game("cabanga")
    far = BotSpec("far", (), ROOT, token=token)

    async def scenario() -> MatchRecord:
        async with serving("[::]:0") as server:
            port = next(a for a in server.addresses if not a.startswith("unix:")).rsplit(":", 1)[1]
            flood = subprocess.Popen([sys.executable, "-m", "tests.adversarial.hostile", "listen-flood",
                                      f"[::1]:{port}", "60"], cwd=ROOT, stderr=subprocess.DEVNULL)
            remote = None
            pool = ProcessPool(server)
            try:
                await asyncio.sleep(1.0)  # the flood is in
                env = {"PATH": os.environ["PATH"], "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_TOKEN": token}
                remote = subprocess.Popen([sys.executable, "-m", "arena.games.cabanga.bots.tidy.bot"], cwd=ROOT,
                                          env=env)
                seats = await pool.seat([far, *GOOD[:2]], deal=DealKey(game.name, 4))
                record = await referee_match(game, seats, 4, game.options({"rounds": 1}),
                                          clock=Clock(DEFAULT_DEADLINE))
                assert server.refusals.total > 0, "the flood was never refused"
                return record
            finally:
                await pool.close()
                flood.kill()
                flood.wait()
                if remote is not None:
                    remote.wait(timeout=10)

    record = asyncio.run(scenario())
    assert record.result is not None and record.faults == [], record.faults
