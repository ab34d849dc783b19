"""Hostile bots against what host root would give them, and against limits that hold per process only.

The arena runs as root here (as it must for cgroups): each attack runs in a real ladder (`arena ladder
--sandbox strict`), or at a real table, and must be refused or contained, charging nobody but the attacker.
With CI=true a machine without the strict sandbox fails these tests instead of skipping them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from adversarial_harness import GOOD, HOSTILE, ROOT, Arena, hostile

from arena.core.deals import DealKey
from arena.core.referee import Clock, MatchRecord, referee_match
from arena.games import get_game
from arena.ladder.store import Store
from arena.launch import jailfilter
from arena.launch.process import log_file_name
from arena.launch.procs import descendants, processes_naming
from arena.launch.sandbox import detect_sandbox
from arena.launch.supervisor_constants import HOST_UID_BASE, HOST_UID_SPAN

pytestmark = pytest.mark.process

CI = os.environ.get("CI") == "true"
GOOD_ENTRIES = [(name, f'"-m", "arena.games.cabanga.bots.{name}.bot"') for name in ("greedy", "tidy", "random")]


def strict() -> None:
    sandbox = detect_sandbox()
    if sandbox.level != "strict":
        if (CI and os.geteuid() == 0) or sandbox.broken_jail:
            pytest.fail(f"CI must give the strict sandbox: {sandbox.describe()}")
        pytest.skip(f"no strict sandbox here: {sandbox.describe()}")


def ladder(tmp_path: Path, hostile_args: str, *, seats: int, matches: int, deadline: str,
           limits: str = "", mark: str = "") -> tuple[Store, set[int]]:
    """Run `arena ladder --sandbox strict` with the good bots and a hostile one; return its database, and the
    host uids of the processes whose command line holds ``mark``, looked at from outside while it ran."""
    bots = tmp_path / "bots.toml"
    entries = [*GOOD_ENTRIES[: seats - 1], ("hostile", f'"{HOSTILE}", {hostile_args}')]
    start = time.monotonic()
    bots.write_text("".join(f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", {args}]\ncwd = "{ROOT}"\n'
                            f'{limits if name == "hostile" else ""}\n' for name, args in entries))
    db = tmp_path / "ladder.db"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from arena.cli import run; run()", "ladder", "--bots", str(bots), "--game", "cabanga",
         "--seats", str(seats), "--matches", str(matches), "--tables", "1", "--seed", "17", "--db", str(db), "-o",
         "rounds=1", "--deadline", deadline, "--max-faults", "2", "--sandbox", "strict", "--log-dir",
         str(tmp_path / "logs")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path, start_new_session=True)
    uids: set[int] = set()
    try:
        while mark and proc.poll() is None and time.monotonic() < start + 240:
            jailed = [pid for pid in processes_naming(mark) if not _is_supervisor(pid)]
            uids |= {uid for pid in jailed if (uid := _host_uid(pid)) is not None}
            time.sleep(0.05)
        _, err = proc.communicate(timeout=240)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    return Store(db, readonly=True), uids


def _is_supervisor(pid: int) -> bool:
    """The supervisor runs as the arena's user (root): it is outside the jail, and drops its child's uid."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        return True
    # arena-supervisor: installed with the package, or arena-supervisor-HASH built at first use
    return os.path.basename(words[0]).startswith(b"arena-supervisor")


def _host_uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return next(max(int(x) for x in line.split()[1:]) for line in f if line.startswith("Uid:"))
    except (OSError, ValueError, StopIteration):
        return None


def faults_by_bot(store: Store) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name, kind in store.db.execute(
            "SELECT b.name, f.kind FROM faults f JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat "
            "JOIN bots b ON b.id = s.bot_id").fetchall():
        found.setdefault(name, set()).add(kind)
    return found


def test_a_jailed_bot_is_no_host_root_and_the_kernel_and_filter_refuse_what_root_could_do(tmp_path: Path) -> None:
    strict()
    numbers = jailfilter.syscall_numbers([*jailfilter.denied_calls(), "ptrace", "clone", "personality"])
    mark = f"arena-host-root-{os.getpid()}-{time.monotonic_ns()}"
    store, uids = ladder(tmp_path, f'"host-root", {json.dumps(json.dumps(numbers))}, "{mark}"', seats=3,
                         matches=3, deadline="1.0", mark=mark)
    try:
        assert store.match_count() == 3
        assert "hostile" not in faults_by_bot(store)  # the attacks cost it nothing: they were only refused
    finally:
        store.close()
    logs = sorted((tmp_path / "logs").rglob("hostile-*.log"))
    assert logs
    for log in logs:  # each of its processes tried
        attacks = [line for line in log.read_text().splitlines() if line.startswith("escape ")]
        # the sysctls, sysrq, /dev, ptrace of pid 1, a namespace, a personality, and every call of the filter
        assert len(attacks) == 7 + 3 + len(numbers) - 3, attacks
        assert [line for line in attacks if ": blocked" not in line] == []
    # seen from outside: bubblewrap and the bot ran as host uids of their own, never root
    assert uids and 0 not in uids, uids
    if os.geteuid() == 0:
        assert all(HOST_UID_BASE <= uid < HOST_UID_BASE + HOST_UID_SPAN for uid in uids), uids


def _anon_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("RssAnon:"):  # its own memory: shared libraries count once, in the cgroup
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def test_memory_held_across_all_of_a_bots_processes_stays_under_its_one_limit(arena: Arena) -> None:
    strict()
    name = "hostile-hoard"
    bot = hostile(name, "hoard", "1200", memory_mb=2048, disk_mb=16)
    game = get_game("cabanga")
    peak = 0.0
    stop = threading.Event()

    def sample(supervisors: list[int]) -> None:
        nonlocal peak
        while not stop.wait(0.01):
            peak = max(peak, sum(_anon_mib(pid) for s in supervisors for pid in descendants(s)))

    async def match() -> MatchRecord:
        arena.seed += 1
        seats = await arena.pool.seat([bot, bot, GOOD[0]], deal=DealKey(game.name, arena.seed))
        supervisors = [s.process.pid for k, s in arena.pool._running.items()
                       if k[0] == name and s.process is not None and s.process.pid is not None]
        assert len(supervisors) == 2  # seated twice: two processes of the one bot
        sampler = threading.Thread(target=sample, args=(supervisors,), daemon=True)
        sampler.start()
        try:
            # time enough for both processes to take their memory, one after the other
            return await referee_match(game, seats, arena.seed, game.options({"rounds": 1}), clock=Clock(5.0),
                                    max_faults=2, match_id=f"hoard{arena.seed}")
        finally:
            stop.set()
            sampler.join()

    try:
        record = arena.run(match, timeout=120)
        assert record.result is not None
        assert all(f.seat in (0, 1) for f in record.faults), record.faults  # the hoarder's seats only
        held = sum((arena.log_dir / log_file_name(name, i)).read_text().count("hoard:") for i in (0, 1))
        assert held >= 1, "the hoarder never held its memory"
        # each process alone may hold 1,200 MiB (its address space holds its threads too, hundreds of MiB);
        # together they meet the bot's one limit (memory plus scratch)
        assert peak <= 2048 + 16 + 8, f"the bot's processes held {peak:.0f} MiB together"
    finally:
        arena.retire(name)
    arena.healthy()


def test_a_bot_spinning_in_every_process_charges_no_innocent_bot_at_a_short_deadline(tmp_path: Path) -> None:
    strict()
    store, _ = ladder(tmp_path, '"spin-all", "3"', seats=4, matches=8, deadline="0.1")
    try:
        assert store.match_count() == 8
        faults = faults_by_bot(store)
    finally:
        store.close()
    assert set(faults) <= {"hostile"}, faults


def test_an_idle_warm_bot_is_frozen_and_spends_nothing_until_it_plays_again(arena: Arena) -> None:
    strict()
    name = "hostile-spinner"
    arena.play(hostile(name, "spin-all", "2"), deadline=1.0)
    try:
        arena.healthy()  # the spinner waits, warm, while the others play
        group = arena.pool._groups[name]
        usage = os.path.join(dict(group.parents)["cpuacct"], "cpuacct.usage")
        before = int(Path(usage).read_text())
        time.sleep(0.5)
        spent = (int(Path(usage).read_text()) - before) / 1e9
        assert spent < 0.05, f"an idle bot spent {spent:.2f} s of CPU in 0.5 s"
        record = arena.play(hostile(name, "spin-all", "2"), deadline=1.0)  # thawed: it plays again
        assert record.result is not None and all(f.seat == 0 for f in record.faults), record.faults
    finally:
        arena.retire(name)
    arena.healthy()


def test_the_bot_groups_of_a_table_are_gone_after_it(arena: Arena) -> None:
    strict()
    arena.healthy()
    groups = dict(arena.pool._groups)
    assert set(groups) >= {bot.name for bot in GOOD}
    folders = {folder for group in groups.values() for _, folder in group.parents}
    assert all(os.path.isdir(folder) for folder in folders)
    for bot in GOOD:
        arena.retire(bot.name)
    assert not [folder for folder in folders if os.path.isdir(folder)]
    arena.healthy()
