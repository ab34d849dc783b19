"""No bot process ever plays the same deal twice (README "Fair deals").

Ladders of real bot processes: every bot is a memory bot (``tests/bots/memory.py``) that fingerprints every
deal it is seated at and writes ``REPEAT`` to its log when one comes back. Over several deal sets at 3 and 4
seats on one table and on two, and at 6 seats on one, none ever does; with a pool that forgets which deals its
processes played (as tables did before), they do: the test can fail.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
from collections import Counter
from collections.abc import Collection
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.core.deals import DealKey, DealLedger, Lane
from arena.core.referee import Clock
from arena.games import get_game
from arena.ladder.executor import LocalExecutor
from arena.ladder.ladder import Ladder, LadderConfig, Timing
from arena.ladder.store import Store
from arena.ladder.workers import WorkerExecutor
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.process import BotProcess, LaunchError, log_file_name, machine_sandbox
from arena.launch.runner import serving
from arena.launch.sandbox import Isolation
from arena.protocol.server import ArenaServer

ROOT = Path(__file__).resolve().parent.parent
DEAL_SETS = 3


class ForgetfulLedger(DealLedger):
    """Remembers no deal: every seat goes to the bot's first free process, as before deals were tracked."""

    def played(self, lanes: Collection[Lane], deal: DealKey) -> None:
        return None


def memory_bots(count: int) -> list[BotSpec]:
    return [BotSpec(f"memory-{i}", ("{python}", "-m", "tests.bots.memory"), ROOT) for i in range(count)]


def run_ladder(folder: Path, seats: int, tables: int, bots: int, ledger: type[DealLedger] = DealLedger,
               workers: int = 1) -> tuple[Timing, dict[str, list[str]], int]:
    """Run a Cabanga! ladder of ``DEAL_SETS`` deal sets of memory bots on one process's tables, or on
    ``workers`` worker processes' (:mod:`arena.ladder.workers`, each with its own pool and ledger); return its
    timing, every log by file and the processes the pools started (at seating and ahead)."""
    game = get_game("cabanga")
    config = LadderConfig(game, game.options({"rounds": 1}), seats, 11, memory_bots(bots),
                          matches=DEAL_SETS * seats, tables=tables, clock=Clock(2.0), log_dir=folder / "logs")

    def make_pool(server: ArenaServer) -> ProcessPool:  # one pool serves every table, as in a ladder
        return ProcessPool(server, log_dir=folder / "logs", keep=None, ledger=ledger())

    store = Store(folder / "ladder.db")
    executor: LocalExecutor | WorkerExecutor
    if workers > 1:
        executor = WorkerExecutor(tables, workers=workers, seats=seats, log_dir=folder / "logs")
    else:
        executor = LocalExecutor(tables, seats=seats, make_pool=make_pool)
    try:
        timing = asyncio.run(Ladder(config, store, on_note=lambda _: None, executor=executor).run())
        assert store.match_count() == DEAL_SETS * seats
    finally:
        store.close()
    logs = {str(path): path.read_text().splitlines() for path in sorted((folder / "logs").glob("*.log"))}
    if isinstance(executor, WorkerExecutor):
        return timing, logs, executor.figures.starts
    assert executor.pool is not None
    return timing, logs, executor.pool.starts


def lines(logs: dict[str, list[str]], word: str) -> list[str]:
    return [line for text in logs.values() for line in text if line.split(" ", 1)[0] == word]


# two tables sharing one pool at 3 and 4 seats: one table is the same pool with no other table to keep apart from
# (every other ladder and match test plays one), and six seats add no mechanism and 36 process starts (13 s)
@pytest.mark.process
@pytest.mark.parametrize(("seats", "tables", "bots"), [(3, 2, 4), (4, 2, 4)])
def test_no_bot_process_ever_sees_a_deal_again(tmp_path: Path, seats: int, tables: int, bots: int) -> None:
    _, logs, processes = run_ladder(tmp_path, seats, tables, bots)
    assert lines(logs, "REPEAT") == [], "a process was seated at a deal it had played"
    # the memory bots did see every deal: each deal set's round 1, at every seat of every rotation
    starts = Counter(line.split(" ", 3)[3] for line in lines(logs, "deal") if line.split()[1] == "1")
    assert sorted(starts.values()) == [seats * seats] * DEAL_SETS
    assert len(lines(logs, "hand")) == DEAL_SETS * seats * seats
    # the tables share one pool: a bot's processes serve any table, each with a scratch folder of its own; a bot
    # needs a process per rotation, and one more per other table whose match holds one of its processes
    marks = [line.split(" ")[1:] for line in lines(logs, "process")]
    assert len(marks) == processes == len({mark for mark, _ in marks})
    assert all(others == "0" for _, others in marks), "a process found another process's mark in its scratch"
    assert processes <= bots * (seats + tables - 1)


@pytest.mark.process
def test_no_bot_process_of_any_worker_sees_a_deal_again(tmp_path: Path) -> None:
    """Two tables in two worker processes, each with a pool and a ledger of its own: a process lives in one worker,
    and each worker is given two rotations of every deal set, so it needs two processes of each bot, no more."""
    seats, bots = 4, 4
    _, logs, processes = run_ladder(tmp_path, seats, 2, bots, workers=2)
    assert lines(logs, "REPEAT") == [], "a process was seated at a deal it had played"
    starts = Counter(line.split(" ", 3)[3] for line in lines(logs, "deal") if line.split()[1] == "1")
    assert sorted(starts.values()) == [seats * seats] * DEAL_SETS
    assert processes == bots * seats
    # the workers' processes share the log folder, each in a file of its own
    marks = [line.split(" ")[1:] for line in lines(logs, "process")]
    assert len(logs) == len(marks) == len({mark for mark, _ in marks}) == processes


@pytest.mark.process
def test_without_the_ledger_warm_processes_see_their_deals_again(tmp_path: Path) -> None:
    """The control: a pool that forgets deals seats a bot's one warm process at every rotation."""
    seats = 3
    _, logs, processes = run_ladder(tmp_path, seats, 1, seats, ledger=ForgetfulLedger)
    assert processes == seats
    # every process sees each deal set once per rotation: all but the first time are repeats
    assert len(lines(logs, "REPEAT")) == DEAL_SETS * seats * (seats - 1)


def test_the_ledger_gives_each_rotation_its_own_process() -> None:
    ledger = DealLedger()
    deals = [DealKey("cabanga", seed) for seed in (5, 6)]
    names = ["a", "b", "c"]
    for deal in deals:
        for rotation in range(3):
            seating = names[-rotation:] + names[:-rotation] if rotation else names
            lanes: list[Lane] = []
            for name in seating:
                lanes.append(ledger.lane(name, deal, lanes))
            assert lanes == [(name, rotation) for name in seating]  # lane k plays rotation k of every deal
            ledger.played(lanes, deal)
    # a bot seated twice at one match gets two lanes; a stopped process's lane starts afresh
    assert ledger.lane("a", deals[0], [("a", 0)]) == ("a", 3)
    ledger.forget(("a", 1))
    assert ledger.lane("a", deals[0], [("a", 0)]) == ("a", 1)


SHM_KEY = 0x5EED1
SHM_PROGRAM = f"import ctypes; print(ctypes.CDLL(None).shmget({SHM_KEY}, 4096, 0o1666))"


@pytest.mark.process
def test_bot_processes_share_no_sysv_ipc(tmp_path: Path) -> None:
    """Processes of one bot have no shared memory to pass notes through: System V IPC is private to each."""
    sandbox = machine_sandbox()
    if sandbox.isolation is not Isolation.JAIL:
        assert os.environ.get("CI") != "true", f"CI needs the jail: {sandbox.reason}"
        pytest.skip(f"no jail here: {sandbox.reason}")

    def keys() -> set[int]:
        return {int(line.split()[0]) for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]}

    assert SHM_KEY not in keys()
    bot = BotSpec("ipc", ("{python}", "-c", SHM_PROGRAM), tmp_path)

    socket = tmp_path / "arena.sock"  # bound into the jail; nothing listens on it
    socket.touch()

    async def run() -> str:
        proc = BotProcess(bot, tmp_path / "ipc.log", sandbox=sandbox)
        proc.start(f"unix:{socket}", "token")
        for _ in range(500):
            if not proc.alive():
                break
            await asyncio.sleep(0.01)
        found = SHM_KEY in keys()  # a segment made in the bot's namespace is gone with it, and never seen here
        await proc.stop()
        return f"{found}"

    try:
        assert asyncio.run(run()) == "False"
    finally:  # should the segment have leaked, remove it (IPC_RMID)
        libc = ctypes.CDLL(None)
        shmid = libc.shmget(SHM_KEY, 0, 0)
        if shmid >= 0:
            libc.shmctl(shmid, 0, None)
    made = (tmp_path / "ipc.log").read_text().split()
    assert made and int(made[0]) >= 0, "the bot could not make its segment: the test would prove nothing"


@pytest.mark.process
def test_a_bot_cannot_read_the_log_folder(tmp_path: Path) -> None:
    """What one process of a bot printed (say, its hands) is out of reach of the next: logs are hidden."""
    sandbox = machine_sandbox()
    if sandbox.isolation is not Isolation.JAIL:
        assert os.environ.get("CI") != "true", f"CI needs the jail: {sandbox.reason}"
        pytest.skip(f"no jail here: {sandbox.reason}")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "earlier.log").write_text("hand R1 R2 R3\n")
    home = tmp_path / "bot"
    home.mkdir()
    # the path is in the program's text, not an argument: the jail shows a folder named by the command
    peek = f"import os; p = {str(logs)!r}; print('sees', sorted(os.listdir(p)) if os.path.isdir(p) else 'nothing')"
    bot = BotSpec("peek", ("{python}", "-c", peek), home)

    async def run() -> None:
        async with serving() as server:
            pool = ProcessPool(server, log_dir=logs, sandbox=sandbox, connect_timeout=10)
            try:
                with pytest.raises(LaunchError):  # it never connects
                    await pool.seat([bot], deal=DealKey("cabanga", 1))
            finally:
                await pool.close()

    asyncio.run(run())
    assert (logs / log_file_name("peek", 0)).read_text().splitlines()[0] == "sees nothing"


def test_sealed_window_option_is_checked() -> None:
    for command in ("match", "ladder"):
        result = CliRunner().invoke(main, [command, "--sealed-window-ms", "-1"])
        assert result.exit_code == 2 and "--sealed-window-ms" in result.output, result.output
        result = CliRunner().invoke(main, [command, "--help"])
        assert "--sealed-window-ms" in result.output and "--throw-window-ms" not in result.output


def test_the_old_name_of_the_sealed_window_option_works_for_one_release_and_says_so() -> None:
    for command in ("match", "ladder"):
        # the value reaches the option, checked as the new name's: -1 is refused under the new name
        result = CliRunner().invoke(main, [command, "--throw-window-ms", "-1"])
        assert result.exit_code == 2 and "Invalid value for '--sealed-window-ms'" in result.output, result.output
        result = CliRunner().invoke(main, [command, "--throw-window-ms", "2", "--bots", "/nonexistent/bots.toml"])
        assert "note: --throw-window-ms is now called --sealed-window-ms" in result.stderr, result.output
        assert result.exit_code == 2 and "does not exist" in result.stderr  # parsed on: the bot list is next


def test_the_old_name_gives_its_value_to_the_sealed_window(monkeypatch: pytest.MonkeyPatch) -> None:
    import arena.cli

    seen: list[float] = []
    monkeypatch.setattr(arena.cli, "_run_ladder", lambda *args, **kwargs: seen.append(args[16]))
    for name in ("--throw-window-ms", "--sealed-window-ms"):
        result = CliRunner().invoke(main, ["ladder", name, "2.5", "--matches", "1"])
        assert result.exit_code == 0, result.output
    assert seen == [0.0025, 0.0025]
