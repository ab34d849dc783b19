"""End to end: real bot processes over gRPC on a private Unix socket, whole matches, every fault kind."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from toolchain import recorded_match

from arena.core import replay as replay_format
from arena.core.deals import DealKey
from arena.core.referee import Clock, FaultKind, LocalSeat, MatchRecord, referee_match
from arena.games import get_game
from arena.games.base import MatchOver
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError
from arena.launch.runner import run_match
from arena.protocol.codec import NOT_UTF8

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "bots"
MISBEHAVE = Path(__file__).resolve().parent / "bots" / "misbehave.py"


def bot(name: str, module: str) -> BotSpec:
    return BotSpec(name, ("{python}", "-m", f"arena.games.{module}.bot"), ROOT)


def misbehaving(name: str, *mode: str) -> BotSpec:
    return BotSpec(name, ("{python}", str(MISBEHAVE), *mode), MISBEHAVE.parent)


def play(game: str, bots: list[BotSpec], seed: int, clock: Clock | None = None, **options: object) -> MatchRecord:
    g = get_game(game)
    return asyncio.run(run_match(g, bots, seed, g.options(options), clock=clock or Clock(1.0)))


def assert_complete(record: MatchRecord) -> None:
    assert record.result is not None
    assert isinstance(record.events[-1], MatchOver)
    _, events = replay_format.rerun(replay_format.from_record(record))
    assert [e.to_json() for e in events] == [e.to_json() for e in record.events]


@pytest.mark.process
def test_cabanga_match_between_processes() -> None:
    bots = [bot("g", "cabanga.bots.greedy"), bot("r", "cabanga.bots.random")] * 2
    record = play("cabanga", bots, seed=11)
    assert_complete(record)
    assert record.faults == []
    assert record.names == ["g", "r", "g#2", "r#2"]
    assert all(len(lat) > 0 for lat in record.latencies)


@pytest.mark.process
def test_lama_match_between_processes() -> None:
    bots = [bot("g", "lama.bots.greedy"), bot("r", "lama.bots.random"), bot("g", "lama.bots.greedy")]
    record = play("lama", bots, seed=5)
    assert_complete(record)
    assert record.faults == []


@pytest.mark.process
def test_c11_throw_is_asked_of_all_seats_at_once() -> None:
    """Bots that each sleep near the deadline on a throw finish a throw step in about one deadline."""
    game, seed, sleep = get_game("cabanga"), 3, 0.35
    # a dry run in-process with the same (default) answers finds a throw step that asks three seats or more
    dry = asyncio.run(referee_match(game, [LocalSeat(f"d{i}", lambda p, v: p.default) for i in range(5)], seed,
                                 game.options({"rounds": 1})))
    step = next(i for i, asked in enumerate(dry.steps) if len(asked) >= 3)
    # a request's step is the seat's own count of requests: the seats asked at that step count differently
    own = [sum(1 for asked in dry.steps[:step] if s in asked) if s in dry.steps[step] else -1 for s in range(5)]
    bots = [misbehaving(f"s{i}", "sleep-at-step", str(sleep), str(own[i])) for i in range(5)]
    record = play("cabanga", bots, seed=seed, clock=Clock(0.6), rounds=1)
    assert record.steps == dry.steps and record.faults == []
    # asked one after the other, three sleepers would take at least 3 * 0.35 s
    took = record.step_seconds[step]
    assert sleep * 0.9 <= took < 2 * sleep, f"a throw step of {len(record.steps[step])} sleepers took {took:.3f} s"


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        (("silent",), FaultKind.TIMEOUT),
        (("sleep", "0.5"), FaultKind.TIMEOUT),
        (("exit-after", "2"), FaultKind.CRASH),
        (("hangup-after", "2"), FaultKind.DISCONNECT),
        (("garbage",), FaultKind.MALFORMED),
        (("wrong-id",), FaultKind.MALFORMED),
    ],
    ids=["never-answers", "answers-late", "exits", "hangs-up", "garbage-pick", "wrong-request-id"],
)
@pytest.mark.process
def test_fault_is_recorded_and_match_completes(mode: tuple[str, ...], kind: FaultKind) -> None:
    bots = [misbehaving("bad", *mode), bot("g", "cabanga.bots.greedy"), bot("r", "cabanga.bots.random")]
    record = play("cabanga", bots, seed=21, clock=Clock(0.25))
    assert_complete(record)
    kinds = {f.kind for f in record.faults if f.seat == 0}
    assert kind in kinds, record.faults
    assert all(f.seat == 0 for f in record.faults), "the well-behaved bots were charged a fault"
    assert 0 in record.benched  # three faults: played by the defaults for the rest of the match
    assert record.ranking_places()[0] == 3


@pytest.mark.process
def test_debug_bytes_that_are_not_utf8_cost_the_bot_nothing_and_read_replaced() -> None:
    game = get_game("lama")
    bots = [misbehaving("bad", "bad-debug"), bot("g", "lama.bots.greedy")]
    record, answered = recorded_match(game, bots, 3, game.options({"rounds": 1}), clock=Clock(1.0))
    assert_complete(record)
    assert record.faults == []
    assert answered[0] and [one.answer.debug for one in answered[0]] == [
        f"{NOT_UTF8}step {step}: \ufffd\ufffd not UTF-8 \ufffd" for step in range(len(answered[0]))]
    assert all(one.answer.debug == "" for one in answered[1])  # a bot that writes none sends none


@pytest.mark.process
def test_bot_that_does_not_start_is_reported() -> None:
    bots = [BotSpec("ghost", ("{python}", "-c", "import sys; sys.exit(4)"), BOTS),
            bot("g", "cabanga.bots.greedy"), bot("r", "cabanga.bots.random")]
    with pytest.raises(LaunchError, match=r"ghost.*exited with code 4"):
        play("cabanga", bots, seed=1)


@pytest.mark.process
def test_bot_command_that_does_not_exist_is_reported() -> None:
    bots = [BotSpec("nope", ("/nonexistent/bot",), BOTS), bot("g", "cabanga.bots.greedy"),
            bot("r", "cabanga.bots.random")]
    with pytest.raises(LaunchError, match=r"nope.*cannot start"):
        play("cabanga", bots, seed=1)


def test_python_of_the_bots_is_this_interpreter() -> None:
    assert bot("x", "y.py").argv()[0] == sys.executable


def test_fingerprint_follows_the_files_of_the_bot(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "b.py"
    module.write_text("x = 1\n")
    spec = BotSpec("b", ("{python}", "-m", "pkg.b"), tmp_path)
    before = spec.fingerprint()
    assert spec.fingerprint() == before
    module.write_text("x = 2\n")
    assert spec.fingerprint() != before


@pytest.mark.process
def test_crashed_bot_is_restarted_for_its_next_match_and_all_stop_at_the_end() -> None:
    """A process pool reuses its processes across matches, restarts a crashed one, and leaves none behind."""
    import os

    from arena.launch.pool import ProcessPool
    from arena.launch.runner import serving

    game = get_game("cabanga")
    crasher = misbehaving("crasher", "exit-after", "1")
    good = [bot("g", "cabanga.bots.greedy"), bot("r", "cabanga.bots.random")]

    async def scenario() -> tuple[list[MatchRecord], int, int, list[int]]:
        async with serving() as server:
            pool = ProcessPool(server)
            records = []
            pids = set()
            for seed in (1, 2):
                seats = await pool.seat([crasher, *good], deal=DealKey(game.name, seed))
                pids |= {s.process.pid for s in pool._running.values() if s.process is not None and s.process.pid}
                records.append(await referee_match(game, seats, seed, game.options({"rounds": 1}),
                                                clock=Clock(0.3)))
            starts, restarts = pool.starts, pool.restarts
            await pool.close()
            return records, starts, restarts, sorted(pids)

    records, starts, restarts, pids = asyncio.run(scenario())
    for record in records:
        assert any(f.seat == 0 and f.kind is FaultKind.CRASH for f in record.faults)
        assert record.result is not None
    assert restarts == 1 and starts == 4  # three at first, the crashed one again; the good ones reused
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.mark.process
def test_remote_bot_connects_over_tcp_with_the_token_the_operator_gave_it(tmp_path: Path) -> None:
    import os
    import subprocess

    from arena.launch.botlist import load_bot_list
    from arena.launch.pool import ProcessPool
    from arena.launch.runner import serving

    token = "remote-token-0123456789abcdef"
    (tmp_path / "bots.toml").write_text(
        f'[[bot]]\nname = "far"\ntoken = "{token}"\n\n'
        f'[[bot]]\nname = "g"\ncommand = ["{{python}}", "-m", "arena.games.cabanga.bots.greedy.bot"]\n'
        f'cwd = "{ROOT}"\n\n'
        f'[[bot]]\nname = "r"\ncommand = ["{{python}}", "-m", "arena.games.cabanga.bots.random.bot"]\n'
        f'cwd = "{ROOT}"\n')
    bots = load_bot_list(tmp_path / "bots.toml")
    assert bots[0].remote and bots[0].command == ()
    game = get_game("cabanga")

    async def scenario() -> MatchRecord:
        async with serving("127.0.0.1:0") as server:
            tcp = next(a for a in server.addresses if not a.startswith("unix:"))
            env = {"PATH": os.environ["PATH"], "ARENA_ADDRESS": tcp, "ARENA_TOKEN": token}
            far = subprocess.Popen([sys.executable, "-m", "arena.games.cabanga.bots.tidy.bot"], cwd=ROOT, env=env)
            pool = ProcessPool(server)
            try:
                seats = await pool.seat(bots, deal=DealKey(game.name, 4))
                return await referee_match(game, seats, 4, game.options({"rounds": 1}), clock=Clock(1.0))
            finally:
                await pool.close()
                far.wait(timeout=10)  # told goodbye, the remote bot leaves by itself

    record = asyncio.run(scenario())
    assert record.faults == [] and record.result is not None
    assert len(record.latencies[0]) > 3


def test_remote_bot_entries_are_checked(tmp_path: Path) -> None:
    from arena.launch.botlist import BotListError, load_bot_list

    path = tmp_path / "bots.toml"
    for body, needle in [('token = "short"', "at least 16"),
                         ('token = "0123456789abcdefgh"\ncommand = ["x"]', "no command"),
                         ('token = 7', "at least 16")]:
        path.write_text(f'[[bot]]\nname = "far"\n{body}\n')
        with pytest.raises(BotListError, match=needle):
            load_bot_list(path)


def test_remote_bots_need_an_address_and_are_not_for_the_ladder(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import main

    path = tmp_path / "bots.toml"
    path.write_text('[[bot]]\nname = "far"\ntoken = "0123456789abcdefgh"\n' + "".join(
        f'[[bot]]\nname = "b{i}"\ncommand = ["{{python}}", "-m", "arena.games.cabanga.bots.random.bot"]\n'
        f'cwd = "{ROOT}"\n'
        for i in range(3)))
    result = CliRunner().invoke(main, ["match", "--bots", str(path), "--game", "cabanga"])
    assert result.exit_code == 2 and "--listen" in result.stderr
    result = CliRunner().invoke(main, ["ladder", "--bots", str(path), "--game", "cabanga",
                                       "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 1 and "remote" in result.stderr and "arena match --listen" in result.stderr


@pytest.mark.process
def test_sdk_skips_requests_whose_time_ran_out_while_the_bot_was_busy(tmp_path: Path) -> None:
    """The slow bot sleeps 1 s on a 0.15 s clock: the arena moves on, and the SDK drops what went stale."""
    slow = BotSpec("slow", ("{python}", str(Path(__file__).resolve().parent / "bots" / "slow_first.py"), "1.0"),
                   ROOT)
    game = get_game("lama")
    record = asyncio.run(run_match(game, [slow, bot("g", "lama.bots.greedy")], 2, game.options({"rounds": 2}),
                                   clock=Clock(0.15), max_faults=100, log_dir=tmp_path))
    timeouts = [f for f in record.faults if f.seat == 0 and f.kind is FaultKind.TIMEOUT]
    assert len(timeouts) >= 3  # the first request and those sent while it slept
    sent = len(record.latencies[0])
    asked = int(next(line for line in (tmp_path / "slow-0.log").read_text().splitlines()
                     if line.startswith("asked ")).split()[1])
    assert asked <= sent - (len(timeouts) - 1), f"the SDK answered stale requests: {asked} of {sent} asked"
