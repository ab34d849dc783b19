"""The way into the ladder with its collaborators faked: the check (arena check's report, or a check that never
ends) and the ladder (what it is told to enter and retire). The real ones are tried in test_contest.py."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.contest.archive import content_hash, pack
from arena.contest.config import parse_config
from arena.contest.pipeline import Pipeline, archive_path
from arena.contest.store import ContestStore, State, Submission
from arena.games.base import Game
from arena.launch.botlist import BotSpec
from arena.launch.sandbox import Isolation, Sandbox, detect_sandbox
from arena.tools.check import Problem, Report


class Ladder:
    """What the pipeline tells the ladder."""

    def __init__(self) -> None:
        self.entered: list[BotSpec] = []
        self.retired: list[str] = []

    def enter(self, bot: BotSpec) -> None:
        self.entered.append(bot)

    def retire(self, name: str) -> None:
        self.retired.append(name)


class Checks:
    """A fake arena check: passes, fails with a problem, or never ends; records what it was asked."""

    def __init__(self, outcome: str = "pass") -> None:
        self.outcome = outcome
        self.asked: list[tuple[BotSpec, list[str], int | None]] = []

    async def __call__(self, spec: BotSpec, games: Sequence[Game], *, clock: Any, max_faults: int,
                       rounds: int | None, log_dir: Path | None) -> Report:
        self.asked.append((spec, [g.name for g in games], rounds))
        report = Report(spec.name, clock.deadline)
        if self.outcome == "slow":
            await asyncio.sleep(3600)
        if self.outcome.startswith("arena-fails"):  # "arena-fails-N": the arena's own error the first N times
            left = int(self.outcome.rsplit("-", 1)[1])
            if len(self.asked) <= left:
                raise RuntimeError("/srv/contest/secret: disk full")
        if self.outcome == "fail":
            report.problems.append(Problem("cabanga, 3 seats", "crash", "the bot reported: oops"))
        return report


@pytest.fixture
def store(tmp_path: Path) -> ContestStore:
    store = ContestStore(tmp_path / "contest.db")
    store.authors.add("alice")
    return store


def pipeline(tmp_path: Path, store: ContestStore, checks: Checks, retry_seconds: Sequence[float] = (),
             more: dict[str, Any] | None = None, **submissions: Any) -> tuple[Pipeline, Ladder]:
    config = parse_config({"game": "cabanga", "seats": 3, "data": "data",
                           "submissions": {"check_rounds": 1, **submissions}, **(more or {})}, tmp_path)
    ladder = Ladder()
    return Pipeline(config, store, ladder, Sandbox(Isolation.JAIL), check=checks, retry_seconds=retry_seconds), ladder


def upload(tmp_path: Path, store: ContestStore, pipe: Pipeline, name: str, *, games: str = '["cabanga"]',
           version: int = 1, build: str = "") -> Submission:
    folder = tmp_path / f"{name}-{version}"
    folder.mkdir()
    (folder / "bot.py").write_text(f"# version {version}\n")
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["bot.py"]\ngames = {games}\nruntime = "python"\n'
                                     + (f"build = {build}\n" if build else ""))
    data = pack(folder)
    path = archive_path(pipe.config, content_hash(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return store.submissions.add("alice", name, content_hash(data))


def test_a_checked_submission_enters_the_ladder_and_its_new_version_retires_it(
        tmp_path: Path, store: ContestStore) -> None:
    checks = Checks()
    pipe, ladder = pipeline(tmp_path, store, checks)
    first = upload(tmp_path, store, pipe, "greedy")
    entry = asyncio.run(pipe.process(first.id))
    assert entry is not None and entry.submission.state is State.PLAYING
    spec = ladder.entered[0]
    # as the ladder starts it: the runtime's program before its command, in its own folder, with its limits
    assert (spec.name, spec.command, spec.cwd) == ("alice:greedy:v1", ("{python}", "bot.py"),
                                                   pipe.config.bots / first.id)
    assert (spec.cwd / "bot.py").read_text() == "# version 1\n"
    assert checks.asked == [(spec, ["cabanga"], 1)]
    second = upload(tmp_path, store, pipe, "greedy", version=2)
    asyncio.run(pipe.process(second.id))
    assert [b.name for b in ladder.entered] == ["alice:greedy:v1", "alice:greedy:v2"]
    assert ladder.retired == ["alice:greedy:v1"]
    assert [s.state for s in store.submissions.all("alice")] == [State.PLAYING, State.RETIRED]
    assert not (pipe.config.work / second.id).exists()  # the scratch is emptied


def test_a_check_that_runs_past_its_time_rejects_the_submission(tmp_path: Path, store: ContestStore) -> None:
    pipe, ladder = pipeline(tmp_path, store, Checks("slow"), check_seconds=0.2)
    slow = upload(tmp_path, store, pipe, "slow")
    assert asyncio.run(pipe.process(slow.id)) is None
    rejected = store.submissions.get(slow.id)
    assert rejected is not None and rejected.state is State.REJECTED
    assert "arena check ran past its 0.2 s" in rejected.reason
    assert ladder.entered == [] and not (pipe.config.bots / slow.id).exists()


def test_a_failed_check_rejects_with_its_first_problem_and_keeps_the_report(
        tmp_path: Path, store: ContestStore) -> None:
    pipe, ladder = pipeline(tmp_path, store, Checks("fail"))
    bad = upload(tmp_path, store, pipe, "bad")
    asyncio.run(pipe.process(bad.id))
    rejected = store.submissions.get(bad.id)
    assert rejected is not None and rejected.state is State.REJECTED
    assert rejected.reason == "arena check failed: cabanga, 3 seats: crash: the bot reported: oops"
    assert "FAIL: alice:bad:v1" in store.reports.get(bad.id) and ladder.entered == []


def test_a_bot_for_another_game_is_rejected_before_its_check(tmp_path: Path, store: ContestStore) -> None:
    checks = Checks()
    pipe, ladder = pipeline(tmp_path, store, checks)
    other = upload(tmp_path, store, pipe, "lamabot", games='["lama"]')
    asyncio.run(pipe.process(other.id))
    rejected = store.submissions.get(other.id)
    assert rejected is not None and rejected.state is State.REJECTED and "add 'cabanga' to games" in rejected.reason
    assert checks.asked == [] and ladder.entered == []


def test_a_restart_takes_up_what_a_stop_caught_mid_way_oldest_first(tmp_path: Path, store: ContestStore) -> None:
    pipe, _ = pipeline(tmp_path, store, Checks())
    building = upload(tmp_path, store, pipe, "one")
    store.submissions.set_state(building.id, State.BUILDING)
    queued = upload(tmp_path, store, pipe, "two")
    (pipe.config.work / "leftover").mkdir(parents=True)
    again, _ = pipeline(tmp_path, store, Checks())
    assert [s.id for s in again.resume()] == [building.id, queued.id]
    assert [s.state for s in store.submissions.unfinished()] == [State.QUEUED, State.QUEUED]
    assert not pipe.config.work.exists()  # what was half unpacked or built is gone


def test_the_arenas_own_failure_is_tried_again_and_never_rejects_the_bot(tmp_path: Path, store: ContestStore) -> None:
    async def until(pipe: Pipeline, submission: Submission, seen: list[tuple[State, str]]) -> None:
        runner = asyncio.create_task(pipe.run())
        pipe.submitted(submission.id)
        for _ in range(400):
            now = store.submissions.get(submission.id)
            assert now is not None
            if not seen or seen[-1] != (now.state, now.reason):
                seen.append((now.state, now.reason))
            if now.state is State.PLAYING or now.reason.startswith("held"):
                break
            await asyncio.sleep(0.01)
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner

    checks = Checks("arena-fails-2")
    pipe, ladder = pipeline(tmp_path, store, checks, retry_seconds=(0.05, 0.05))
    bot = upload(tmp_path, store, pipe, "unlucky")
    seen: list[tuple[State, str]] = []
    asyncio.run(until(pipe, bot, seen))
    assert seen[-1][0] is State.PLAYING and len(checks.asked) == 3 and [b.name for b in ladder.entered] == [
        "alice:unlucky:v1"]
    waits = [reason for state, reason in seen if state is State.QUEUED and "arena failed" in reason]
    assert waits and "tried again in 0.05 s" in waits[0] and "RuntimeError" in waits[0]
    assert not any("/srv" in reason or "disk full" in reason for _, reason in seen)  # the arena's words stay its own
    assert all(state is not State.REJECTED for state, _ in seen)

    # out of tries: held in the queue for the next start, never rejected
    checks = Checks("arena-fails-9")
    pipe, ladder = pipeline(tmp_path, store, checks, retry_seconds=(0.05,))
    held = upload(tmp_path, store, pipe, "held")
    seen = []
    asyncio.run(until(pipe, held, seen))
    assert seen[-1][0] is State.QUEUED and seen[-1][1].startswith("held: the arena failed on it")
    assert len(checks.asked) == 2 and ladder.entered == []
    again, _ = pipeline(tmp_path, store, Checks())
    assert held.id in [s.id for s in again.resume()]  # a restart takes it up


def test_idle_returns_once_every_submission_is_through_its_retries_included(
        tmp_path: Path, store: ContestStore) -> None:
    """What the finals wait on at the deadline: the submissions made before it, a retry after the arena's own
    failure too; one held until a restart is not waited for."""
    async def through(checks: Checks, retry_seconds: Sequence[float], names: Sequence[str]) -> list[State]:
        pipe, _ = pipeline(tmp_path, store, checks, retry_seconds)
        await asyncio.wait_for(pipe.idle(), 1)  # nothing queued
        submissions = [upload(tmp_path, store, pipe, name) for name in names]
        runner = asyncio.create_task(pipe.run())
        for submission in submissions:
            pipe.submitted(submission.id)
        try:
            await asyncio.wait_for(pipe.idle(), 30)
            states = []
            for submission in submissions:
                now = store.submissions.get(submission.id)
                assert now is not None
                states.append(now.state)
            return states
        finally:
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)

    assert asyncio.run(through(Checks(), (), ["one", "two"])) == [State.PLAYING, State.PLAYING]
    assert asyncio.run(through(Checks("arena-fails-1"), (0.2,), ["late"])) == [State.PLAYING]  # after its retry
    assert asyncio.run(through(Checks("arena-fails-9"), (0.05,), ["held"])) == [State.QUEUED]  # held: not waited


@pytest.mark.process
@pytest.mark.parametrize("build_mb", [600, None])
def test_a_build_runs_with_the_build_limits_not_the_bots(tmp_path: Path, store: ContestStore,
                                                         build_mb: int | None) -> None:
    if detect_sandbox().isolation is not Isolation.JAIL:
        assert os.environ.get("CI") != "true", "CI must have the bot jail"
        pytest.skip("a build runs in the bot jail, and there is none here")
    more: dict[str, Any] = {"limits": {"memory_mb": 200}}
    if build_mb is not None:
        more["build_limits"] = {"memory_mb": build_mb}
    pipe, _ = pipeline(tmp_path, store, Checks(), more=more)
    # dd holds one 300 MiB block: more than the bot may use, less than the build may
    built = upload(tmp_path, store, pipe, "big", build='["dd", "if=/dev/zero", "of=/dev/null", "bs=300M", "count=1"]')
    asyncio.run(pipe.process(built.id))
    after = store.submissions.get(built.id)
    assert after is not None
    if build_mb is not None:
        assert after.state is State.PLAYING, after.reason
    else:
        assert after.state is State.REJECTED and after.reason.startswith("build:"), after.reason
