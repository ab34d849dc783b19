"""The finals (issue 34) with their collaborators faked: bots of known strengths played in-process
(tests/finals_fakes.py) in place of bot processes, a clock the test moves, validated submissions written straight
into the store. What they check: submissions close at the deadline, one version per author plays, the finals stop
when the top places are decided (and say which pairs are not when the budget runs out), the cut takes out only bots
clearly below the top, the seed published hashes to the commitment, the export verifies and an altered one does
not, and a contest killed (kill -9) during its finals resumes them with no match lost or repeated.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from finals_fakes import SEATS, StrengthExecutor

from arena.cli import main
from arena.contest.config import parse_config
from arena.contest.finals import Phase, choose_finalists, close_now
from arena.contest.service import Contest, ContestError, SubmitError
from arena.contest.store import ContestStore, State, Submission
from arena.ladder import finals_export as export
from arena.ladder.estimate import BotEstimate, Estimate, Evidence, SequentialTest, Verdict
from arena.ladder.finals import commitment, cut_out, final_board
from arena.ladder.ladder import deal_seed
from arena.ladder.store import Store, StoreError
from arena.launch.sandbox import Isolation, Sandbox

DEADLINE = 2_000_000_000.0
"""The finals' deadline in the tests' contests (2033-05-18 03:33:20 UTC)."""
STRENGTHS = {"alice": 0.0, "bob": 0.5, "carol": 1.0, "dave": 1.0}
"""Each author's bot's probability of a random choice: alice's is the best, bob's next, carol's and dave's play
at random."""


class Clock:
    """The contest's wall clock, moved by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def config_raw(**finals: Any) -> dict[str, Any]:
    return {"game": "lama", "seats": SEATS, "options": {"rounds": 1}, "data": "data", "listen": "127.0.0.1:0",
            "finals": {"deadline": _utc(DEADLINE), "top": 2, "budget": {"matches": 600}, **finals}}


def _utc(seconds: float) -> Any:
    import datetime
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def validated(store: ContestStore, data: Path, author: str, bot: str) -> Submission:
    """Add ``author``'s ``bot`` as a submission that passed its check and plays (its folder with its manifest)."""
    if store.authors.get(author) is None:
        store.authors.add(author)
    submission = store.submissions.add(author, bot, f"sha256:{author}{bot}{time.monotonic_ns()}")
    folder = data / "bots" / submission.id
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{bot}"\ncommand = ["bot.py"]\ngames = ["lama"]\nruntime = "python"\n')
    store.submissions.set_state(submission.id, State.BUILDING)
    store.submissions.set_state(submission.id, State.CHECKING)
    store.submissions.enter_ladder(submission.id)
    found = store.submissions.get(submission.id)
    assert found is not None
    return found


class Running:
    """A contest made in-process with fake executors, its clock, and its finals' executor."""

    def __init__(self, tmp_path: Path, *, epsilon: dict[str, float] | None = None, clock: float = DEADLINE - 60,
                 seed: int = 1, **finals: Any) -> None:
        self.config = parse_config(config_raw(**finals), tmp_path)
        self.config.data.mkdir(parents=True, exist_ok=True)
        self.store = ContestStore(self.config.contest_db)
        self.clock = Clock(clock)
        self.finals_executor = StrengthExecutor(epsilon or STRENGTHS)
        self.notes: list[str] = []
        self.contest: Contest | None = None
        self.seed = seed

    def open(self) -> Contest:
        self.contest = Contest(self.config, self.store, sandbox=Sandbox(Isolation.JAIL),
                               executor=StrengthExecutor({}), scrimmage_executor=StrengthExecutor({}),
                               finals_executor=self.finals_executor, on_note=self.notes.append, clock=self.clock)
        self.contest.finals.poll_seconds = 0.01
        self.contest.finals.rng = random.Random(self.seed)  # the same secret seed at every run of the test
        return self.contest

    def until(self, done: Callable[[Contest], bool], *, then: Callable[[Contest], None] | None = None,
              timeout: float = 120) -> None:
        """Run the contest until ``done``; at once move the clock past the deadline."""
        contest = self.contest or self.open()

        async def go() -> None:
            task = asyncio.create_task(contest.run())
            began = time.monotonic()
            try:
                while not done(contest):
                    if task.done():
                        task.result()
                    if then is not None:
                        then(contest)
                    assert time.monotonic() - began < timeout, contest.finals.status()
                    await asyncio.sleep(0.01)
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

        asyncio.run(go())

    def finish(self) -> Store:
        """Run the contest through its deadline to the end of its finals; return the finals' store (read-only)."""
        if self.contest is None:
            self.open()  # before the deadline: a contest started after it, never closed, is refused
        self.clock.now = DEADLINE + 1
        self.until(lambda c: c.finals.phase is Phase.FINISHED)
        return Store(self.config.finals_db, readonly=True)

    def close(self) -> None:
        if self.contest is not None:
            self.contest.close()
        self.store.close()


@pytest.fixture
def field(tmp_path: Path) -> Iterator[Running]:
    """A contest of four authors whose bots have known strengths; alice has two versions and marked the first."""
    running = Running(tmp_path)
    data = running.config.data
    first = validated(running.store, data, "alice", "ace")
    validated(running.store, data, "alice", "ace")  # version 2 retires version 1
    running.store.finalists.mark("alice", first.id)
    validated(running.store, data, "bob", "bee")
    validated(running.store, data, "carol", "cat")
    validated(running.store, data, "dave", "dog")
    yield running
    running.close()


# ----------------------------------------------------------------------------------------------- the deadline


def test_uploads_versions_marks_and_scrimmages_are_refused_from_the_deadline_with_the_reason_and_the_time(
        field: Running) -> None:
    contest = field.open()
    alice = field.store.authors.get("alice")
    assert alice is not None
    mine = field.store.submissions.all("alice")
    with pytest.raises(SubmitError, match="archive"):  # open: refused for what it is, not for the time
        contest.submit(alice, b"not an archive")
    contest.check_open("scrimmages")
    contest.mark_finalist(alice, mine[0].id)
    field.clock.now = DEADLINE  # the deadline itself: closed
    for attempt, what in ((lambda: contest.submit(alice, b"not an archive"), "uploads"),
                          (lambda: contest.mark_finalist(alice, mine[1].id), "finalist marks"),
                          (lambda: contest.check_open("scrimmages"), "scrimmages")):
        with pytest.raises(SubmitError, match=f"^{what} closed at 2033-05-18 03:33:20 UTC: the contest is in its "
                                              "finals"):
            attempt()
    assert field.store.finalists.marks()["alice"] == mine[0].id  # the refused mark changed nothing


def test_a_deadline_in_the_past_or_a_top_larger_than_the_field_is_refused_with_the_reason_at_start(
        field: Running) -> None:
    field.clock.now = DEADLINE + 5
    with pytest.raises(ContestError, match=r"deadline \(2033-05-18 03:33:20 UTC\) has passed.*arena contest finals"):
        field.open()
    field.config = parse_config(config_raw(top=5), field.config.data.parent)
    with pytest.raises(Exception, match=r"top = 5 is more than the 4 finalists: set top to 4 or less"):
        close_now(field.config, field.store, [], DEADLINE + 5)
    assert field.store.finalists.closed_at() is None  # refused: nothing closed
    # closed by hand: the contest starts, in its closed phase, and refuses a top larger than its field
    field.config = parse_config(config_raw(top=4), field.config.data.parent)
    closed, finalists, already = close_now(field.config, field.store, [], DEADLINE + 5)
    assert (closed, already, len(finalists)) == (DEADLINE + 5, False, 4)
    field.config = parse_config(config_raw(top=5), field.config.data.parent)
    with pytest.raises(ContestError, match="the submissions are closed, but top = 5 is more than the 4 finalists"):
        field.open()


def test_the_config_refuses_a_finals_section_it_cannot_run() -> None:
    base = Path("/nonexistent")
    for finals, message in (({"deadline": "tomorrow"}, "deadline must be a date and time with its zone"),
                            ({"budget": {}}, "budget names the most the finals may play"),
                            ({"budget": {"rounds": 3}}, "budget names the most"),
                            ({"top": 0}, "top must be positive"),
                            ({"cut": {"every": 0}}, "every must be positive"),
                            ({"zone": 0.7}, "indifference zone"),
                            ({"sudden_death": True}, "unknown key 'sudden_death'")):
        raw = config_raw(**finals)
        with pytest.raises(ValueError, match=message):
            parse_config(raw, base)
    assert parse_config({"game": "lama"}, base).finals is None


# ------------------------------------------------------------------------------------- the finalists, the end


def test_one_version_per_author_plays_the_marked_one_or_else_the_latest_validated(field: Running) -> None:
    data = field.config.data
    validated(field.store, data, "bob", "bee2")  # bob's latest validated version is another bot
    field.store.authors.add("erin")
    rejected = field.store.submissions.add("erin", "eel", "sha256:erin")  # erin has no validated version
    field.store.submissions.set_state(rejected.id, State.REJECTED, "arena check failed")
    assert field.config.finals is not None
    finalists, left_out = choose_finalists(field.store, [], field.config.finals)
    assert {(f.author, f.bot, f.chosen) for f in finalists} == {
        ("alice", "alice:ace:v1", "marked"), ("bob", "bob:bee2:v1", "latest"), ("carol", "carol:cat:v1", "latest"),
        ("dave", "dave:dog:v1", "latest")}
    assert left_out == [{"author": "erin", "reason": "none of their submissions passed its check"}]
    # the season plays until the deadline; its board stays as it was then
    before: list[list[tuple[int, int, int]]] = []

    def deadline(contest: Contest) -> None:
        if contest.ladder.count >= 6:
            field.clock.now = DEADLINE + 1
        if contest.finals.phase is not Phase.SEASON and not before:
            with contextlib.closing(Store(field.config.ladder_db, readonly=True)) as season:
                before.append(season.match_seeds())

    field.until(lambda c: c.finals.phase is Phase.FINISHED, then=deadline)
    store = Store(field.config.finals_db, readonly=True)
    try:
        played = {name for deal in store.deals() for name in deal.bots}
        assert played == {"alice:ace:v1", "bob:bee2:v1", "carol:cat:v1", "dave:dog:v1"}  # no v2, no bee, no house
        record = store.finals("finals")
        assert record is not None and sorted(f["bot"] for f in record["finalists"]) == sorted(played)
        assert record["left_out"] == left_out
        identity = store.identity()
        assert identity is not None and identity.drawn and identity.seed >= 2**64  # a new secret seed
    finally:
        store.close()
    with contextlib.closing(Store(field.config.ladder_db, readonly=True)) as season:
        assert season.match_seeds() == before[0] and len(before[0]) >= 6
        assert season.identity().seed != identity.seed  # type: ignore[union-attr]


def test_the_finals_stop_when_the_top_places_are_decided_publish_the_seed_and_verify(
        field: Running, tmp_path: Path) -> None:
    seen: list[str] = []

    def watch(contest: Contest) -> None:
        if contest.finals.phase is Phase.FINALS and not seen:
            seen.append(json.dumps(contest.finals.status()))

    field.open()
    field.clock.now = DEADLINE + 1
    field.until(lambda c: c.finals.phase is Phase.FINISHED, then=watch)
    store = Store(field.config.finals_db, readonly=True)
    try:
        record, outcome = store.finals("finals"), store.finals("finals_outcome")
        assert record is not None and outcome is not None
        seed = int(outcome["seed"])
        # the commitment was public before the end, the seed was not; the seed published hashes to it
        assert seen and record["commitment"] in seen[0] and outcome["seed"] not in seen[0]
        assert commitment(seed) == record["commitment"] and seed == store.identity().seed  # type: ignore[union-attr]
        assert all(d.seed == deal_seed(seed, d.deal) for d in store.deals())
        # stopped on evidence: the top two places decided, in the known order, within the budget ...
        assert outcome["stopped"] == "decided" and outcome["board"]["decided"]
        assert outcome["board"]["order"][:3] == ["alice:ace:v1", "bob:bee:v1", outcome["board"]["order"][2]]
        assert [p["verdict"] for p in outcome["board"]["top_pairs"]] == [Verdict.FIRST.value] * 2
        assert store.match_count() < 600 and store.match_count() % SEATS == 0
        # ... and not later: without its last deal set, a top pair was still open
        results = store.results()
        last = max(o.deal for o in results)
        active = outcome["board"]["order"]
        before = final_board(Evidence.of(o for o in results if o.deal < last), active, SequentialTest(), 2)
        assert not before.decided
    finally:
        store.close()
    data = export.read(field.config.finals_export)
    found = export.verify(data)
    assert found.ok, found.problems
    assert len(found.passed) == 5 and found.first_match is None


def test_the_budget_spent_the_finals_say_which_top_pairs_are_undecided(tmp_path: Path) -> None:
    running = Running(tmp_path, budget={"matches": 10})
    try:
        for author in STRENGTHS:
            validated(running.store, running.config.data, author, "bot")
        store = running.finish()
        outcome = store.finals("finals_outcome")
        assert outcome is not None and outcome["stopped"] == "budget"
        assert store.match_count() == 12  # the budget rounded up to whole deal sets
        board = outcome["board"]
        assert not board["decided"] and board["undecided"] == [[p["first"], p["second"]] for p in board["top_pairs"]]
        assert len(board["undecided"]) == 2 and any("undecided" in note for note in running.notes)
        store.close()
        assert export.verify(export.read(running.config.finals_export)).ok
    finally:
        running.close()


# ------------------------------------------------------------------------------------------------ verification


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The export of finals that ran with a cut: four bots of known strengths, and two more playing at random."""
    tmp_path = tmp_path_factory.mktemp("finished")
    epsilon = {**STRENGTHS, "erin": 1.0, "fred": 1.0}
    running = Running(tmp_path, epsilon=epsilon, top=1, cut={"every": 4, "margin": 1})
    try:
        for author in epsilon:
            validated(running.store, running.config.data, author, "bot")
        running.finish().close()
        yield export.read(running.config.finals_export)
    finally:
        running.close()


def test_the_cut_takes_out_only_bots_clearly_below_the_top_and_they_play_no_later_deal_set(
        finished: dict[str, Any]) -> None:
    cuts = finished["cuts"]
    deal_sets = len(finished["deals"])
    assert [c["after"] for c in cuts] == [4 * k for k in range(1, deal_sets // 4 + 1)]  # one each 4 sets
    out = {o["bot"]: o for c in cuts for o in c["out"]}
    assert out, "the random players were never cut"
    assert not {"alice:bot:v1", "bob:bot:v1"} & set(out)  # the top two are never cut
    assert all(o["ranks"][0] > 1 + 1 for o in out.values())  # the whole rank range below place top + margin
    for cut in cuts:  # and only once it played the deal sets the sequential test wants (16)
        for o in cut["out"]:
            assert len([d for d in finished["deals"] if d["deal"] < cut["after"] and o["bot"] in d["bots"]]) >= 16
    for cut in cuts:
        gone = {o["bot"] for o in cut["out"]}
        assert not [d for d in finished["deals"] if d["deal"] >= cut["start"] and gone & set(d["bots"])]
    assert export.verify(finished).ok


def test_the_cut_keeps_a_table_and_the_places_it_decides() -> None:
    """Bots whose rank range lies below the top leave, the weakest first, never so many that fewer than ``keep`` stay,
    and never one with too few deal sets played."""
    rows = [BotEstimate(name, 30.0 - i, 29.0 - i, 31.0 - i, low, high, 40)
            for i, (name, low, high) in enumerate((("a", 1, 1), ("b", 2, 3), ("c", 2, 4), ("d", 4, 6), ("e", 5, 6),
                                                   ("f", 5, 6)))]
    board = Estimate(rows, [], 200)
    played = {name: 20 for name in "abcdef"} | {"f": 15}
    assert [r.bot for r in cut_out(board, played, set("abcdef"), 2, 1, 3, 16)] == ["e", "d"]  # f: 15 sets only
    assert [r.bot for r in cut_out(board, played, set("abcdef"), 2, 1, 5, 16)] == ["e"]  # five must stay
    assert cut_out(board, played, set("abcdef"), 2, 3, 3, 16) == []  # below place 5: nobody's whole range


def altered(data: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    copied = copy.deepcopy(data)
    change(copied)
    return copied


def test_verify_fails_on_a_changed_result_a_changed_deal_or_a_removed_match_naming_it(
        finished: dict[str, Any], tmp_path: Path) -> None:
    match = finished["matches"][7]
    name = f"match {match['id']} (deal set {match['deal']}, rotation {match['rotation']})"

    def result(data: dict[str, Any]) -> None:
        places = data["matches"][7]["replay"]["result"]["places"]
        places[0], places[1] = places[1], places[0] if places[0] != places[1] else places[1] + 1

    def deal(data: dict[str, Any]) -> None:
        data["matches"][7]["replay"]["seed"] += 1

    def removed(data: dict[str, Any]) -> None:
        del data["matches"][7]

    def seed(data: dict[str, Any]) -> None:
        data["outcome"]["seed"] = str(int(data["outcome"]["seed"]) + 1)

    def board(data: dict[str, Any]) -> None:
        data["outcome"]["board"]["order"].reverse()

    named = re.escape(name)
    for change, message in ((result, f"{named} does not re-run: its result differs"),
                            (deal, f"{named} does not re-run: its seed .* is not its deal set's"),
                            (removed, f"deal set {match['deal']} lacks rotation {match['rotation']}"),
                            (seed, "the published seed does not hash to the commitment"),
                            (board, "the published order")):
        found = export.verify(altered(finished, change))
        assert not found.ok and any(re.search(message, p) for p in found.problems), found.problems
    # a field of the wrong shape anywhere is a failed check, never a crash
    def shapes(data: dict[str, Any]) -> list[dict[str, Any]]:
        return [altered(data, lambda d: d["matches"].__setitem__(3, "not a match")),
                altered(data, lambda d: d["matches"][3].__setitem__("deal", "three")),
                altered(data, lambda d: d["deals"][0].__setitem__("seed", None)),
                altered(data, lambda d: d["matches"][3]["replay"].__setitem__("events", {"x": 1})),
                altered(data, lambda d: d["outcome"].__setitem__("board", [])),
                altered(data, lambda d: d.__setitem__("cuts", [{"after": "x"}]))]

    for wrong in shapes(finished):
        assert not export.verify(wrong).ok
    # the command: exit 0 on the export, 1 naming the match on an altered one
    good, bad = tmp_path / "finals.json.gz", tmp_path / "altered.json"
    export.write(good, finished)
    export.write(bad, altered(finished, result))
    ran = CliRunner().invoke(main, ["finals", "verify", str(good)])
    assert ran.exit_code == 0 and "verified" in ran.stdout, ran.output
    ran = CliRunner().invoke(main, ["finals", "verify", str(bad)])
    assert ran.exit_code == 1 and f"{name} does not re-run" in ran.output, ran.output
    ran = CliRunner().invoke(main, ["finals", "verify", str(tmp_path / "none.json")])
    assert ran.exit_code != 0 and "does not exist" in ran.output and "Traceback" not in ran.output


# ---------------------------------------------------------------------------------------------------- kill -9

DRIVER = textwrap.dedent('''
    import asyncio, sys
    sys.path.insert(0, {tests!r})
    from finals_fakes import StrengthExecutor
    from arena.contest.config import load_config
    from arena.contest.service import Contest
    from arena.contest.store import ContestStore
    from arena.launch.sandbox import Isolation, Sandbox

    config = load_config(__import__("pathlib").Path({config!r}))
    store = ContestStore(config.contest_db)
    contest = Contest(config, store, sandbox=Sandbox(Isolation.JAIL), executor=StrengthExecutor({{}}),
                      scrimmage_executor=StrengthExecutor({{}}),
                      finals_executor=StrengthExecutor({epsilon!r}, delay=0.02), on_note=print)
    contest.finals.poll_seconds = 0.05
    print("running", flush=True)
    asyncio.run(contest.run())
''')


@pytest.mark.process
def test_a_contest_killed_during_its_finals_resumes_them_with_no_match_lost_or_repeated(tmp_path: Path) -> None:
    running = Running(tmp_path, budget={"matches": 150})
    for author in STRENGTHS:
        validated(running.store, running.config.data, author, "bot")
    close_now(running.config, running.store, [], time.time())  # by hand: arena contest finals
    running.close()
    config = tmp_path / "contest.toml"
    config.write_text('game = "lama"\nseats = 3\noptions = { rounds = 1 }\ndata = "data"\nlisten = "127.0.0.1:0"\n'
                      '[finals]\ntop = 2\nbudget = { matches = 150 }\n')
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(tests=str(Path(__file__).resolve().parents[1]), config=str(config),
                                    epsilon={f"{a}": e for a, e in STRENGTHS.items()}))
    finals_db = running.config.finals_db

    def stored() -> int:
        try:
            with contextlib.closing(Store(finals_db, readonly=True)) as store:
                return store.match_count() if store.finals("finals") is not None else 0
        except StoreError:  # not made yet
            return 0

    for kill_at in (10, 40):  # twice: once mid-way, once again after resuming
        process = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while stored() < kill_at and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert process.poll() is None, process.communicate()[0]
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(30)
    process = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not running.config.finals_export.exists() and time.monotonic() < deadline:
            assert process.poll() is None, process.communicate()[0]
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(30)
    data = export.read(running.config.finals_export)
    found = export.verify(data)
    assert found.ok, found.problems  # every deal set whole: none lost, none twice, each re-runs
    with contextlib.closing(Store(finals_db, readonly=True)) as store:
        seeds = store.match_seeds()
        assert [(d, r) for d, r, _ in seeds] == [(i // SEATS, i % SEATS) for i in range(len(seeds))]
        assert len(seeds) >= 40


def test_the_export_leaves_out_the_bots_debug_text_and_the_faults_details() -> None:
    replay = {"game": "lama", "seed": 3, "debug": [{"step": 1, "seat": 0, "text": "my secret plan"}],
              "faults": [{"seat": 1, "step": 2, "kind": "crash", "detail": "Traceback: my secret plan"}]}
    public = export.public_replay(replay)
    assert "my secret plan" not in json.dumps(public)
    assert public["faults"] == [{"seat": 1, "step": 2, "kind": "crash", "detail": ""}] and public["seed"] == 3


# ------------------------------------------------------------------------------------------------------ the web


def fetch(url: str, token: str | None = None, body: dict[str, Any] | None = None) -> tuple[int, bytes]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        return int(exc.code), exc.read()


@pytest.mark.process
def test_the_pages_and_the_api_say_where_the_finals_are_keep_the_seed_until_the_end_then_publish_it(
        field: Running, tmp_path: Path) -> None:
    from arena.contest.web import serve_contest

    token = field.store.authors.rotate_token("bob")
    bob = field.store.submissions.all("bob")[0]
    seen: dict[str, Any] = {}

    async def go() -> None:
        contest = field.open()
        ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(serve_contest(contest, ready.set_result))
        try:
            url = await asyncio.wait_for(ready, 60)

            async def get(path: str, **kw: Any) -> tuple[int, bytes]:
                return await asyncio.to_thread(fetch, url.rstrip("/") + path, **kw)

            seen["season"] = json.loads((await get("/api/finals"))[1])
            seen["season_page"] = (await get("/finals"))[1].decode()
            seen["board_page"] = (await get("/"))[1].decode()
            seen["marked"] = await asyncio.to_thread(
                CliRunner().invoke, main, ["submit", "--finalist", bob.id, "--to", url], env={"ARENA_TOKEN": token})
            field.clock.now = DEADLINE + 1
            while contest.finals.phase is not Phase.FINALS:
                await asyncio.sleep(0.01)
            seen["late_mark"] = await get("/api/contest/finalist", token=token, body={"submission": bob.id})
            seen["during"] = [(await get(path))[1].decode() for path in ("/api/finals", "/finals", "/", "/api/board",
                                                                          "/api/summary")]
            seen["early_export"] = await get("/api/finals/export")
            while contest.finals.phase is not Phase.FINISHED:
                await asyncio.sleep(0.02)
            seen["after"] = json.loads((await get("/api/finals"))[1])
            seen["after_page"] = (await get("/finals"))[1].decode()
            seen["export"] = await get("/api/finals/export")
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    asyncio.run(go())
    assert seen["season"]["phase"] == "season" and seen["season"]["deadline"] == DEADLINE
    assert "Submissions close at 2033-05-18 03:33:20 UTC" in seen["season_page"]
    assert 'id="notice"' in seen["board_page"] and 'href="/finals"' in seen["board_page"]
    assert seen["marked"].exit_code == 0 and f"your finalist: {bob.ladder_name}" in seen["marked"].output
    assert field.store.finalists.marks()["bob"] == bob.id
    code, said = seen["late_mark"]
    assert code == 400 and "finalist marks closed at 2033-05-18 03:33:20 UTC" in json.loads(said)["error"]
    during = json.loads(seen["during"][0])
    assert during["phase"] == "finals" and len(during["commitment"]) == 64 and "outcome" not in during
    assert "The contest is in its finals" in seen["during"][1] and during["commitment"] in seen["during"][1]
    code, said = seen["early_export"]
    assert code == 404 and "not over" in json.loads(said)["error"]
    after = seen["after"]
    seed = after["outcome"]["seed"]
    assert commitment(int(seed)) == during["commitment"] == after["commitment"]
    assert not [text for text in seen["during"] if seed in text]  # the seed was nowhere before the end
    assert seed in seen["after_page"] and "arena finals verify" in seen["after_page"]
    code, data = seen["export"]
    assert code == 200
    path = tmp_path / "downloaded.json.gz"
    path.write_bytes(data)
    ran = CliRunner().invoke(main, ["finals", "verify", str(path)])
    assert ran.exit_code == 0, ran.output


def test_arena_contest_finals_closes_the_submissions_by_hand_or_says_why_not(tmp_path: Path) -> None:
    config = tmp_path / "contest.toml"
    config.write_text('game = "lama"\nseats = 3\ndata = "data"\n')
    ran = CliRunner().invoke(main, ["contest", "finals", str(config)])
    assert ran.exit_code == 1 and "has no [finals] section" in ran.output and "Traceback" not in ran.output
    config.write_text('game = "lama"\nseats = 3\ndata = "data"\n[finals]\ntop = 5\nbudget = { matches = 30 }\n')
    running = Running(tmp_path)
    for author in STRENGTHS:
        validated(running.store, running.config.data, author, "bot")
    ran = CliRunner().invoke(main, ["contest", "finals", str(config)])
    assert ran.exit_code == 1 and "top = 5 is more than the 4 finalists" in ran.output
    assert running.store.finalists.closed_at() is None
    config.write_text(config.read_text().replace("top = 5", "top = 2"))
    ran = CliRunner().invoke(main, ["contest", "finals", str(config)])
    assert ran.exit_code == 0 and "the submissions are closed at" in ran.output
    assert "alice:bot:v1 (latest)" in ran.output
    closed = running.store.finalists.closed_at()
    ran = CliRunner().invoke(main, ["contest", "finals", str(config)])
    assert ran.exit_code == 0 and "the submissions were closed at" in ran.output
    assert running.store.finalists.closed_at() == closed
    running.close()
