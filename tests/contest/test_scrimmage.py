"""Scrimmages (arena/contest/scrimmage.py): a request checked and queued with its quota, played on deals of its
own (never a ladder deal) in rotated deal sets on an executor of its own, taken up again after a restart with
nothing played twice, and its result private to its requester. The executor here is a fake that plays in-process
random seats; tests/contest/test_contest_loop.py plays real ones in a real contest."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.contest.config import ContestConfig, ScrimmageRules, parse_config
from arena.contest.scrimmage import Bots, ScrimmageError, Scrimmaging, result
from arena.contest.store import ContestStore, ScrimmageMatch, ScrimmageState, State, Submission
from arena.core.referee import random_seat, referee_match
from arena.ladder.estimate import Verdict
from arena.ladder.executor import Job, Played
from arena.ladder.ladder import deal_seed
from arena.launch.botlist import BotSpec

SECRET = 2**100 + 12345


class FakeClock:
    def __init__(self, now: float = 1_900_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FakeExecutor:
    """Plays each job with in-process random seats; stops the run (as a kill would) after ``stop_after`` matches."""

    def __init__(self, tables: int = 2, stop_after: int | None = None) -> None:
        self.tables = self.slots = tables
        self.jobs: list[Job] = []
        self.stop_after = stop_after
        self.started = self.closed = False
        self.released = 0

    async def start(self) -> None:
        self.started = True

    def prepare(self, jobs: Sequence[Job]) -> None:
        pass

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        if self.stop_after is not None and len(self.jobs) >= self.stop_after:
            raise asyncio.CancelledError
        self.jobs.append(job)
        await asyncio.sleep(0)
        seats = [random_seat(bot.name, f"{job.seed}/{seat}") for seat, bot in enumerate(job.bots)]
        record = await referee_match(job.game, seats, job.seed, job.options, match_id=job.match)
        return Played.of(record, 0.0, 0.001)

    async def release(self) -> None:
        self.released += 1

    async def close(self) -> None:
        self.closed = True


def config(tmp_path: Path, **rules: object) -> ContestConfig:
    return parse_config({"game": "lama", "seats": 3, "data": "data", "options": {"rounds": 1},
                         "scrimmages": {"matches": 6, "max_matches": 30, "matches_per_hour": 40, **rules}}, tmp_path)


def playing(store: ContestStore, author: str, bot: str) -> Submission:
    submission = store.submissions.add(author, bot, f"sha256:{author}{bot}{len(store.submissions.all())}")
    store.submissions.set_state(submission.id, State.BUILDING)
    store.submissions.set_state(submission.id, State.CHECKING)
    store.submissions.enter_ladder(submission.id)
    found = store.submissions.get(submission.id)
    assert found is not None
    return found


def spec(submission: Submission) -> BotSpec:
    return BotSpec(submission.ladder_name, ("{python}", "bot.py"), Path("/nowhere"))


HOUSE = {name: BotSpec(name, ("{python}", "-m", name), Path("/nowhere"))
         for name in ("lama-greedy", "lama-random", "lama-steady")}


@pytest.fixture
def store(tmp_path: Path) -> ContestStore:
    opened = ContestStore(tmp_path / "contest.db", clock=FakeClock())
    for name in ("alice", "bob", "carol"):
        opened.authors.add(name)
    return opened


def scrimmaging(tmp_path: Path, store: ContestStore, executor: FakeExecutor | None = None,
                clock: FakeClock | None = None, **rules: object) -> Scrimmaging:
    return Scrimmaging(config(tmp_path, **rules), store, Bots(HOUSE, spec), SECRET, executor or FakeExecutor(),
                       clock=clock or FakeClock())


def test_a_request_names_a_validated_version_and_opponents_that_may_be_chosen(
        tmp_path: Path, store: ContestStore) -> None:
    mine = playing(store, "alice", "tracker")
    theirs = playing(store, "bob", "greedy")
    service = scrimmaging(tmp_path, store)
    refused = {
        ("nobot", ("house:lama-random",)): "you have no version 'nobot'",
        ("tracker", ()): "choose at least one opponent",
        ("tracker", ("house:lama-nobody",)): "there is no house bot 'lama-nobody'",
        ("tracker", ("carol:x",)): "carol has no bot 'x' in the contest",
        ("tracker", ("bob:greedy:v1",)): "plays scrimmages in its current version only",
        ("tracker", ("alice:tracker",)): "cannot be its own opponent",
        ("tracker", ("bob",)): "an opponent is house:NAME, AUTHOR:BOT or YOU:BOT:vN",
    }
    for (version, against), message in refused.items():
        with pytest.raises(ScrimmageError, match=message):
            service.request("alice", version, against)
    queued = store.submissions.add("alice", "fresh", "sha256:fresh")  # not checked yet
    with pytest.raises(ScrimmageError, match="has not passed its check"):
        service.request("alice", "fresh", ["house:lama-random"])
    with pytest.raises(ScrimmageError, match="1 to 30 matches, not 31"):
        service.request("alice", "tracker", ["house:lama-random"], 31)
    store.authors.set_scrimmage_opponent("bob", False)
    with pytest.raises(ScrimmageError, match="bob does not take part in others' scrimmages"):
        service.request("alice", "tracker", ["bob:greedy"])
    store.authors.set_scrimmage_opponent("bob", True)
    made = service.request("alice", "tracker:v1", ["bob:greedy", "house:lama-random"], 5)
    assert (made.bot, made.opponents, made.matches, made.state) == (
        mine.ladder_name, (theirs.ladder_name, "lama-random"), 6, ScrimmageState.QUEUED)  # rounded to deal sets
    assert store.scrimmages.get(made.id) == made and queued.state is State.QUEUED
    # one at a time
    with pytest.raises(ScrimmageError, match=f"your scrimmage {made.id} is queued: one scrimmage at a time"):
        service.request("alice", "tracker", ["house:lama-random"])
    # scrimmages off
    with pytest.raises(ScrimmageError, match="plays no scrimmages"):
        scrimmaging(tmp_path, store, enabled=False).request("bob", "greedy", ["house:lama-random"])


def test_the_hourly_quota_says_when_a_request_can_run(tmp_path: Path, store: ContestStore) -> None:
    playing(store, "alice", "tracker")
    clock = FakeClock()
    store = ContestStore(store.path, clock=clock)
    service = scrimmaging(tmp_path, store, clock=clock)
    first = service.request("alice", "tracker", ["house:lama-random"], 21)  # 21: seven deal sets
    store.scrimmages.finish(first.id, ScrimmageState.DONE)
    clock.now += 600
    second = service.request("alice", "tracker", ["house:lama-random"], 12)
    store.scrimmages.finish(second.id, ScrimmageState.DONE)
    clock.now += 600
    with pytest.raises(ScrimmageError, match=r"asked for 33 scrimmage matches in the last hour and this contest "
                                             r"takes 40 an hour: 9 more can run from .* \(in 40 min\)") as caught:
        service.request("alice", "tracker", ["house:lama-random"], 9)
    assert caught.value.retry_at == first.created + 3600
    clock.now = first.created + 3600  # the first left the hour
    assert service.request("alice", "tracker", ["house:lama-random"], 9).matches == 9


def test_a_scrimmage_plays_rotated_deal_sets_on_deals_of_its_own(tmp_path: Path, store: ContestStore) -> None:
    mine = playing(store, "alice", "tracker")
    theirs = playing(store, "bob", "greedy")
    executor = FakeExecutor(tables=2)
    service = scrimmaging(tmp_path, store, executor)
    made = service.request("alice", "tracker", ["bob:greedy", "house:lama-steady", "house:lama-random"], 12)

    async def play() -> None:
        waiting = store.scrimmages.waiting()
        assert [s.id for s in waiting] == [made.id]
        await service.play(waiting[0])

    asyncio.run(play())
    done = store.scrimmages.get(made.id)
    assert done is not None and done.state is ScrimmageState.DONE and done.played == 12
    matches = store.scrimmages.matches(made.id)
    assert [m.number for m in matches] == list(range(12))
    deals = sorted({m.deal for m in matches})
    assert deals == [0, 1, 2, 3]  # the first scrimmage deals of the contest, numbered apart from the ladder's
    # every deal set seats the requester and two chosen opponents in turn, each rotation of it once
    for deal in deals:
        sets = [m for m in matches if m.deal == deal]
        assert sorted(m.rotation for m in sets) == [0, 1, 2]
        assert len({m.bots for m in sets}) == 3 and all(mine.ladder_name in m.bots for m in sets)
    assert {name for m in matches for name in m.bots} == {mine.ladder_name, theirs.ladder_name, "lama-steady",
                                                          "lama-random"}
    # its seeds: keyed hashes under the contest's secret with a purpose of their own, never a ladder deal's
    seeds = {job.seed for job in executor.jobs}
    assert seeds == {deal_seed(SECRET, deal, "scrimmage") for deal in deals}
    assert not seeds & {deal_seed(SECRET, deal) for deal in range(10_000)}
    assert executor.released == executor.tables  # its processes stop once it is done
    # a second scrimmage takes the next deal numbers
    again = service.request("bob", "greedy", ["house:lama-random"], 3)
    asyncio.run(service.play(again))
    assert [m.deal for m in store.scrimmages.matches(again.id)] == [4, 4, 4]
    assert store.scrimmages.chosen([theirs.ladder_name, mine.ladder_name]) == {theirs.ladder_name: (1, 9)}


def test_a_scrimmage_caught_by_a_stop_plays_only_the_rest_after_a_restart(tmp_path: Path,
                                                                         store: ContestStore) -> None:
    playing(store, "alice", "tracker")
    first = FakeExecutor(tables=1, stop_after=4)
    made = scrimmaging(tmp_path, store, first).request("alice", "tracker", ["house:lama-random"], 9)

    async def run(service: Scrimmaging) -> None:
        task = asyncio.create_task(service.run())
        while store.scrimmages.get(made.id).state is not ScrimmageState.DONE and not task.done():  # type: ignore
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run(scrimmaging(tmp_path, store, first)))
    caught = store.scrimmages.get(made.id)
    assert caught is not None and caught.state is ScrimmageState.RUNNING and caught.played == 4 and first.closed
    second = FakeExecutor(tables=2)
    asyncio.run(run(scrimmaging(tmp_path, store, second)))
    finished = store.scrimmages.get(made.id)
    assert finished is not None and finished.state is ScrimmageState.DONE and finished.played == 9
    played = [(job.deal, job.rotation) for job in first.jobs + second.jobs]
    assert sorted(played) == sorted({(m.deal, m.rotation) for m in store.scrimmages.matches(made.id)})
    assert len(played) == 9 == len(set(played))  # nothing played twice, nothing lost


def test_a_bot_that_does_not_start_fails_the_scrimmage_with_the_reason(tmp_path: Path, store: ContestStore) -> None:
    mine = playing(store, "alice", "tracker")

    def lost(submission: Submission) -> BotSpec:
        raise OSError(f"no folder for {submission.id}")

    service = Scrimmaging(config(tmp_path), store, Bots(HOUSE, lost), SECRET, FakeExecutor(), clock=FakeClock())
    made = service.request("alice", "tracker", ["house:lama-random"])
    asyncio.run(service.play(made))
    failed = store.scrimmages.get(made.id)
    assert failed is not None and failed.state is ScrimmageState.FAILED
    assert failed.reason.startswith(f"{mine.ladder_name} cannot be started here: no folder")


def synthetic(mine: str, opponent: str, filler: str, deals: int, my_place: int) -> list[ScrimmageMatch]:
    """Deal sets in which ``mine`` always finishes ``my_place`` and the opponent and the filler share the rest."""
    out = []
    for deal in range(deals):
        for rotation in range(3):
            bots = [mine, opponent, filler][rotation:] + [mine, opponent, filler][:rotation]
            places = [my_place if b == mine else (2 if my_place == 1 else 1) for b in bots]
            faults = ({"seat": bots.index(opponent), "step": 3, "kind": "crash", "detail": "their words"},
                      {"seat": bots.index(mine), "step": 4, "kind": "timeout", "detail": "no answer"}) \
                if deal == 0 and rotation == 0 else ()
            out.append(ScrimmageMatch(deal * 3 + rotation, deal, rotation, tuple(bots), tuple(places), (0, 0, 0),
                                      faults, 0.0))
    return out


def test_the_result_is_the_sequential_test_on_the_requesters_score_and_hides_others_reasons(
        tmp_path: Path, store: ContestStore) -> None:
    mine = playing(store, "alice", "tracker")
    made = scrimmaging(tmp_path, store).request("alice", "tracker", ["house:lama-random"], 3)
    better = result(made, synthetic(mine.ladder_name, "lama-random", "lama-steady", 20, 1))
    assert better.verdict is Verdict.FIRST and better.text == "yours is better"
    assert better.mean == 1.0 and better.deal_sets == 20 and better.opponents[0].bot == "lama-random"
    assert better.opponents[0].mean == 1.0 and better.opponents[0].verdict is Verdict.FIRST
    worse = result(made, synthetic(mine.ladder_name, "lama-random", "lama-steady", 20, 3))
    assert worse.verdict is Verdict.SECOND and worse.text == "yours is worse" and worse.mean == 0.0
    few = result(made, synthetic(mine.ladder_name, "lama-random", "lama-steady", 3, 1))
    assert few.verdict is Verdict.OPEN and few.text == "not decided by these matches"
    # the filler seat (lama-steady) is not an opponent it is judged against
    assert [o.bot for o in better.opponents] == ["lama-random"]
    # its own fault with its reason; the opponent's by kind only
    assert better.faults == ({"match": 0, "bot": "lama-random", "step": 3, "kind": "crash"},
                             {"match": 0, "bot": mine.ladder_name, "step": 4, "kind": "timeout",
                              "detail": "no answer"})
    assert "their words" not in str(better.to_json())


def test_the_rules_of_the_scrimmages_are_checked_when_the_config_is_read(tmp_path: Path) -> None:
    assert config(tmp_path).scrimmages == ScrimmageRules(True, 6, 30, 40, 0.25)
    assert ScrimmageRules().tables(1) == 1 and ScrimmageRules().tables(8) == 2
    from arena.contest.config import ConfigError

    for bad, message in (({"matches": 50}, "more than max_matches"), ({"share": 2}, "at most 1"),
                         ({"max_matches": 50}, "more than an author may ask for in an hour"),
                         ({"colour": 1}, "unknown key 'colour'")):
        with pytest.raises(ConfigError, match=message):
            config(tmp_path, **bad)


def test_a_scrimmage_in_a_contest_changes_no_rating_board_schedule_or_stored_ladder_match(tmp_path: Path) -> None:
    """The contest's own scrimmages, on a fake executor of their own beside a fake ladder's: the ladder's store
    (its matches, deal sets, ratings) and its schedule are as they were after a whole scrimmage."""
    from arena.contest.service import Contest
    from arena.launch.sandbox import Isolation, Sandbox

    contest_config = config(tmp_path)
    contest_config.data.mkdir(parents=True)
    store = ContestStore(contest_config.contest_db, clock=FakeClock())
    store.authors.add("alice")
    ladder_executor, scrimmage_executor = FakeExecutor(tables=1), FakeExecutor(tables=1)
    contest = Contest(contest_config, store, sandbox=Sandbox(Isolation.JAIL), executor=ladder_executor,
                      scrimmage_executor=scrimmage_executor, clock=FakeClock())
    try:
        submission = playing(store, "alice", "tracker")
        contest.scrimmaging.bots = Bots(contest.scrimmaging.bots.house, spec)  # its folder is not built here
        ladder = contest.ladder_store
        before = (ladder.match_count(), ladder.ratings(), ladder.deals(), contest.ladder.ratings.copy(),
                  contest.ladder.played.copy(), contest.ladder.count)
        house = sorted(contest.scrimmaging.bots.house)
        made = contest.scrimmaging.request("alice", "tracker", [f"house:{house[0]}", f"house:{house[1]}"], 6)
        asyncio.run(contest.scrimmaging.play(made))
        assert store.scrimmages.get(made.id).played == 6  # type: ignore[union-attr]
        assert (ladder.match_count(), ladder.ratings(), ladder.deals(), contest.ladder.ratings,
                contest.ladder.played, contest.ladder.count) == before
        assert ladder_executor.jobs == [] and len(scrimmage_executor.jobs) == 6
        assert submission.ladder_name not in contest.ladder.played
    finally:
        contest.close()
        store.close()


def test_a_contests_scrimmages_have_tables_of_their_own_that_yield_to_the_ladder(tmp_path: Path) -> None:
    from arena.contest.service import SCRIMMAGE_CPU_SHARES, Contest
    from arena.ladder.executor import LocalExecutor
    from arena.launch.sandbox import CPU_SHARES, Isolation, Sandbox

    contest_config = parse_config({"game": "lama", "seats": 3, "data": "data", "tables": 8}, tmp_path)
    contest_config.data.mkdir(parents=True)
    store = ContestStore(contest_config.contest_db)
    contest = Contest(contest_config, store, sandbox=Sandbox(Isolation.JAIL), executor=FakeExecutor(tables=8))
    try:
        executor = contest.scrimmaging.executor
        assert isinstance(executor, LocalExecutor) and executor is not contest.ladder.executor
        assert executor.tables == 2 and executor.cpu_shares == SCRIMMAGE_CPU_SHARES < CPU_SHARES
        assert executor.log_dir == contest_config.logs / "scrimmages"
    finally:
        contest.close()
        store.close()


def test_the_arenas_own_trouble_ends_that_scrimmage_with_a_reason_and_the_next_plays(
        tmp_path: Path, store: ContestStore) -> None:
    playing(store, "alice", "tracker")
    playing(store, "bob", "greedy")

    class Broken(FakeExecutor):
        async def run(self, job: Job) -> Played:
            if not self.jobs:
                self.jobs.append(job)
                raise RuntimeError("the arena's server is gone")
            return await super().run(job)

    executor = Broken(tables=1)
    service = scrimmaging(tmp_path, store, executor)
    first = service.request("alice", "tracker", ["house:lama-random"], 3)
    second = service.request("bob", "greedy", ["house:lama-random"], 3)

    async def run() -> None:
        task = asyncio.create_task(service.run())
        while any(s.state is not ScrimmageState.DONE and s.state is not ScrimmageState.FAILED
                  for s in store.scrimmages.all()) and not task.done():
            await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    assert not executor.started
    asyncio.run(run())
    failed, done = store.scrimmages.get(first.id), store.scrimmages.get(second.id)
    assert failed is not None and failed.state is ScrimmageState.FAILED
    assert failed.reason.startswith("the arena failed on it, not your bot (RuntimeError")
    assert done is not None and done.state is ScrimmageState.DONE and done.played == 3
    assert executor.started and executor.closed
