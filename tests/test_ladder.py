"""`arena ladder`: scheduling, budgets, resume after kill -9, failing bots, bad input, leaderboard, replay.

The scheduling tests run the ladder with in-process random players in place of bot processes (fast); the
rest start the bundled example bots as real processes, through the real `arena` entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner
from costs import starts_processes
from ladder_db import seeds, stored_count
from processes import gone

import arena.ladder.ladder as ladder_module
from arena.cli import main
from arena.core.referee import random_seat, referee_match
from arena.games import get_game
from arena.ladder.estimate import SequentialTest, Verdict
from arena.ladder.executor import Job, Played
from arena.ladder.ladder import Ladder, LadderConfig, LadderError, Progress, deal_seed, ramp, rotation_seating
from arena.ladder.ratings import Rating, TrueSkillSystem
from arena.ladder.scheduler import FairScheduler, FieldState
from arena.ladder.store import Finished, Store, StoreError
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError
from arena.launch.procs import descendants

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]
BOARD_COLUMNS = ["rank", "bot", "ranks", "estimate", "low", "high", "matches", "decided", "mu", "sigma",
                 "conservative", "raw_wins", "raw_points", "faults", "median_ms", "p99_ms"]


# ------------------------------------------------------------------------------------------- helpers


def write_bot_list(path: Path, names: Sequence[str], broken: Sequence[str] = ()) -> Path:
    """Write a bot list of bundled example bots (by name) plus bots whose command exits at once."""
    text = ""
    for name in names:
        module = f"arena.games.{name.replace('-', '.bots.', 1)}.bot"
        text += (f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-m", "{module}"]\n'
                 f"cwd = {json.dumps(str(ROOT))}\ngames = [\"{name.split('-')[0]}\"]\n\n")
    for name in broken:
        text += f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", "-c", "raise SystemExit(3)"]\n\n'
    path.write_text(text, encoding="utf-8")
    return path


def arena(*args: str | Path, env: dict[str, str] | None = None,
          timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real `arena` entry point in a new process."""
    return subprocess.run([*ARENA, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=env)


def cli(*args: str | Path) -> tuple[int, str, str, BaseException | None]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr, result.exception


def assert_one_line_error(code: int, err: str, exception: BaseException | None, *needles: str) -> None:
    assert code != 0
    assert isinstance(exception, SystemExit), exception  # handled by click, not a crash
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, err
    for needle in needles:
        assert needle in errors[0], err


def board(db: Path) -> list[dict[str, Any]]:
    result = arena("leaderboard", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    return [row for row in map(json.loads, result.stdout.splitlines()) if "pair" not in row]


def recomputed_ratings(db: Path) -> dict[str, Rating]:
    """Rate every stored match again, in the order stored, from fresh ratings."""
    ratings: dict[str, Rating] = {}
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        ladder = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'ladder'").fetchone()[0])
        system = TrueSkillSystem.for_game(ladder["game"], ladder["seats"])
        names = dict(conn.execute("SELECT id, name FROM bots"))
        for (match_id,) in conn.execute("SELECT id FROM matches ORDER BY id").fetchall():
            seated = conn.execute("SELECT bot_id, place, benched FROM seats WHERE match_id = ? ORDER BY seat",
                                  (match_id,)).fetchall()
            bots = [names[bot_id] for bot_id, _, _ in seated]
            after = system.rate([ratings.get(b, Rating()) for b in bots],
                                [None if benched else place for _, place, benched in seated])
            ratings.update(zip(bots, after, strict=True))
    return ratings


# ------------------------------------------------------------------------ scheduling (in-process players)


class FakeExecutor:
    """Stands in for :class:`arena.ladder.executor.LocalExecutor`: random in-process players, some bots never start.

    ``broken`` and ``seatings`` are shared by every executor a test makes (through :class:`Fakes`).
    """

    max_wait = 0.001
    """The most seconds a match waits before it is played (at random: the tables interleave)."""

    def __init__(self, tables: int, broken: set[str], seatings: list[list[str]]) -> None:
        self.tables = self.slots = tables
        self.broken = broken
        self.seatings = seatings
        self.rng = random.Random(len(seatings))  # for the interleaving only
        self.started = self.closed = False

    async def start(self) -> None:
        self.started = True

    def prepare(self, jobs: Sequence[Job]) -> None:
        pass

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        assert self.started and not self.closed
        await asyncio.sleep(self.rng.random() * self.max_wait)  # let the tables interleave
        bad = [name for name in job.seating if name in self.broken]
        if bad:
            raise LaunchError(f"bot {bad[0]!r} exited with code 3 before connecting", bots=bad)
        self.seatings.append(job.seating)
        seats = [random_seat(name, name) for name in job.seating]  # the same bots and seed: the same match
        record = await referee_match(job.game, seats, job.seed, job.options, clock=job.clock, max_faults=job.max_faults,
                                  match_id=job.match, sealed_window=job.sealed_window)
        return Played.of(record, 0.0, 0.001)

    async def release(self) -> None:
        return None

    async def close(self) -> None:
        self.closed = True


@dataclass
class Fakes:
    broken: set[str] = field(default_factory=set)
    seatings: list[list[str]] = field(default_factory=list)
    made: list[FakeExecutor] = field(default_factory=list)

    def executor(self, config: LadderConfig) -> FakeExecutor:
        self.made.append(FakeExecutor(config.tables, self.broken, self.seatings))
        return self.made[-1]

    def ladder(self, config: LadderConfig, store: Store, **kwargs: Any) -> Ladder:
        return Ladder(config, store, executor=self.executor(config), **kwargs)


@pytest.fixture
def fake_tables() -> Fakes:
    return Fakes()


@pytest.fixture
def in_process_players(fake_tables: Fakes, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    """Make every ladder the command line runs play with :class:`FakeExecutor` (in-process random players) in
    place of bot processes."""
    def executor(config: LadderConfig) -> FakeExecutor:
        fake_tables.made.append(FakeExecutor(config.tables, fake_tables.broken, fake_tables.seatings))
        return fake_tables.made[-1]

    monkeypatch.setattr(ladder_module, "local_executor", executor)
    return fake_tables


def fake_config(names: Sequence[str], seats: int, **kwargs: Any) -> LadderConfig:
    game = get_game(kwargs.pop("game", "lama"))
    bots = [BotSpec(name, ("fake", name), ROOT) for name in names]
    return LadderConfig(game, game.options({"rounds": 1}), seats, kwargs.pop("seed", 5), bots, **kwargs)


def run_fake(fakes: Fakes, path: Path, config: LadderConfig, notes: list[str] | None = None,
             progress: list[Progress] | None = None) -> Store:
    store = Store(path)
    ladder = fakes.ladder(config, store, on_progress=None if progress is None else progress.append,
                          on_note=None if notes is None else notes.append)
    asyncio.run(ladder.run())
    return store


def first_pairs(seats: int, count: int, seed: int = 5) -> list[tuple[int, int, int]]:
    return [(i // seats, i % seats, deal_seed(seed, i // seats)) for i in range(count)]


def test_a_budget_is_met_exactly_with_the_first_matches_whatever_the_tables(
        tmp_path: Path, fake_tables: Fakes) -> None:
    for tables in (1, 2, 3, 5):
        config = fake_config(["a", "b", "c", "d"], 4, matches=10, tables=tables)
        store = run_fake(fake_tables, tmp_path / f"t{tables}.db", config)
        assert store.match_seeds() == first_pairs(4, 10), tables
        store.close()


def test_a_deal_set_seats_every_bot_at_every_seat_with_one_seed(tmp_path: Path, fake_tables: Fakes) -> None:
    store = run_fake(fake_tables, tmp_path / "a.db", fake_config(["a", "b", "c", "d", "e"], 3, matches=15, tables=2))
    seatings: dict[int, list[tuple[str, ...]]] = {}
    for match_id, deal, rotation in store.db.execute("SELECT id, deal, rotation FROM matches").fetchall():
        assert rotation in range(3)
        seatings.setdefault(deal, []).append(tuple(store.replay(match_id)["names"]))
    assert len(seatings) == 5
    for group in seatings.values():
        assert len(group) == 3
        for seat in range(3):
            assert len({names[seat] for names in group}) == 3  # each bot of the set sat in each seat once
    played = {row.bot: row.matches for row in store.leaderboard()}
    assert sum(played.values()) == 45 and min(played.values()) >= 6  # every bot plays often


def test_a_stopped_ladder_resumes_to_the_same_matches_and_ratings_carry_on(
        tmp_path: Path, fake_tables: Fakes) -> None:
    config = fake_config(["a", "b", "c", "d", "e"], 4, matches=13, tables=1)
    whole = run_fake(fake_tables, tmp_path / "whole.db", config)

    path = tmp_path / "parts.db"
    store = Store(path)
    ladder = fake_tables.ladder(config, store)

    async def stop_after(n: int) -> None:
        task = asyncio.create_task(ladder.run())
        while ladder.count < n:
            await asyncio.sleep(0)
        task.cancel()  # mid-way through the next match
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(stop_after(6))
    assert store.match_count() == 6
    store.close()
    parts = run_fake(fake_tables, path, config)
    assert parts.match_seeds() == whole.match_seeds() == first_pairs(4, 13)
    assert [d.bots for d in parts.deals()] == [d.bots for d in whole.deals()]  # one table: the same groups too
    for name, rating in recomputed_ratings(path).items():
        assert parts.ratings()[name].mu == pytest.approx(rating.mu)
        assert parts.ratings()[name].sigma == pytest.approx(rating.sigma)
    parts.close()
    more = run_fake(fake_tables, path, fake_config(["a", "b", "c", "d", "e"], 4, matches=20, tables=3))
    assert more.match_seeds() == first_pairs(4, 20)


def test_a_bot_entered_while_the_ladder_runs_plays_the_next_deal_set_and_a_retired_one_finishes_its_own(
        tmp_path: Path, fake_tables: Fakes) -> None:
    config = fake_config(["a", "b", "c"], 3, matches=30, tables=1)
    store = Store(tmp_path / "live.db")
    ladder = fake_tables.ladder(config, store)
    entered_at: list[int] = []

    async def enter_then_retire() -> None:
        task = asyncio.create_task(ladder.run())
        while ladder.count < 4:  # mid-way through deal set 1 (3 matches a set)
            await asyncio.sleep(0)
        ladder.enter(BotSpec("new", ("fake", "new"), ROOT))
        ladder.retire("a")
        entered_at.append(ladder.count)
        await task

    asyncio.run(enter_then_retire())
    deals = store.deals()
    with_a = [d.deal for d in deals if "a" in d.bots]
    with_new = [d.deal for d in deals if "new" in d.bots]
    assert with_a == [0, 1]  # it finished the set it was in: every rotation, so that set's deals stay fair
    assert len(next(d for d in deals if d.deal == 1).done) == 3
    assert with_new and with_new[0] == 2  # the next set planned takes the new bot
    assert {row.bot for row in store.leaderboard()} == {"a", "b", "c", "new"}  # a stays on the board
    with pytest.raises(LadderError, match="already in the ladder"):
        ladder.enter(BotSpec("b", ("fake", "b"), ROOT))
    with pytest.raises(LadderError, match="not in the ladder"):
        ladder.retire("nobody")
    store.close()

    # resumed with the retired bot still listed: it stays out of new deal sets
    again = Store(tmp_path / "live.db")
    resumed = fake_tables.ladder(fake_config(["a", "b", "c", "new"], 3, matches=36, tables=1,
                                             retired=frozenset({"a"})), again)
    asyncio.run(resumed.run())
    assert all("a" not in d.bots for d in again.deals() if d.deal >= 2)
    again.close()


class Together(FakeExecutor):
    """Every table's match finishes in the same turn of the event loop (as on a busy cluster)."""

    max_wait = 0.0


class CountingStore(Store):
    """Counts the transactions that store matches; the ``fail_at``-th one fails as a full disk would."""

    def __init__(self, path: Path, fail_at: int | None = None) -> None:
        super().__init__(path)
        self.batches: list[int] = []
        self.fail_at = fail_at

    def record_matches(self, matches: Sequence[Finished]) -> list[int]:
        self.batches.append(len(matches))
        if len(self.batches) == self.fail_at:
            raise StoreError("cannot write to 'ladder.db': database or disk is full")
        return super().record_matches(matches)


def test_matches_that_finish_together_share_a_transaction_and_are_rated_in_order(tmp_path: Path) -> None:
    config = fake_config(["a", "b", "c", "d", "e"], 4, matches=24, tables=4)
    store = CountingStore(tmp_path / "a.db")
    ladder = Ladder(config, store, executor=Together(4, set(), []))
    timing = asyncio.run(ladder.run())
    assert sum(store.batches) == 24 and timing.commits == len(store.batches)
    assert max(store.batches) > 1 and len(store.batches) < 24  # group commit happened
    assert store.match_seeds() == first_pairs(4, 24)
    for name, rating in recomputed_ratings(tmp_path / "a.db").items():  # in the order stored: the order rated
        assert store.ratings()[name].mu == pytest.approx(rating.mu)
        assert store.ratings()[name].sigma == pytest.approx(rating.sigma)
    store.close()


def test_a_failed_commit_stops_the_ladder_and_stores_none_of_its_matches(tmp_path: Path) -> None:
    config = fake_config(["a", "b", "c", "d", "e"], 4, matches=24, tables=4)
    store = CountingStore(tmp_path / "a.db", fail_at=2)
    ladder = Ladder(config, store, executor=Together(4, set(), []))
    with pytest.raises(StoreError, match="disk is full"):
        asyncio.run(ladder.run())
    assert store.match_count() == store.batches[0]  # the first commit only
    store.close()
    # the next run plays the lost matches again from their seeds
    again = run_fake(Fakes(), tmp_path / "a.db", config)
    assert again.match_seeds() == first_pairs(4, 24)
    again.close()


def test_a_bot_that_does_not_start_is_left_out_and_replaced_in_place(
        tmp_path: Path, fake_tables: Fakes) -> None:
    fake_tables.broken = {"a"}  # the first one chosen
    notes: list[str] = []
    config = fake_config(["a", "b", "c", "d", "e"], 3, matches=12, tables=2)
    store = run_fake(fake_tables, tmp_path / "a.db", config, notes)
    assert store.match_count() == 12
    assert [n for n in notes if "'a'" in n and "goes on without it" in n] == [notes[0]] and len(notes) == 1
    assert all("a" not in seating for seating in fake_tables.seatings)
    for deal in store.deals():  # the seating of every stored match is a rotation of its deal set's bots
        assert "a" not in deal.bots
        for (match_id,) in store.db.execute("SELECT id FROM matches WHERE deal = ?", (deal.deal,)).fetchall():
            assert store.replay(match_id)["names"] in [rotation_seating(deal.bots, r) for r in range(3)]
    assert {row.bot: row.matches for row in store.leaderboard()}["a"] == 0


def test_too_few_bots_that_start_stop_the_ladder(tmp_path: Path, fake_tables: Fakes) -> None:
    fake_tables.broken = {"b", "c"}
    store = Store(tmp_path / "a.db")
    ladder = fake_tables.ladder(fake_config(["a", "b", "c", "d"], 3, matches=6, tables=2), store,
                                on_note=lambda _: None)
    with pytest.raises(LadderError, match="only 2 bots are left that start"):
        asyncio.run(ladder.run())
    assert fake_tables.made[-1].started and fake_tables.made[-1].closed  # the executor is stopped all the same
    with pytest.raises(LadderError, match="cannot fill 3 seats"):
        Ladder(fake_config(["a", "b"], 3, matches=6), store)
    with pytest.raises(LadderError, match="2 to 6 seats"):
        Ladder(fake_config(["a", "b", "c", "d", "e", "f", "g"], 7, matches=6), store)


def test_a_bot_gone_from_the_list_gives_its_unfinished_seats_away(
        tmp_path: Path, fake_tables: Fakes) -> None:
    path = tmp_path / "a.db"
    store = Store(path)
    ladder = fake_tables.ladder(fake_config(["a", "b", "c", "d"], 3, matches=2), store)
    asyncio.run(ladder.run())
    assert store.match_count() == 2 and "a" in store.deals()[0].bots
    store.close()
    notes: list[str] = []
    store = run_fake(fake_tables, path, fake_config(["b", "c", "d", "e"], 3, matches=6), notes)
    assert store.match_seeds() == first_pairs(3, 6)
    assert any("no longer in the list (a)" in n for n in notes)
    assert all("a" not in d.bots for d in store.deals())


def test_a_bot_whose_files_change_gets_a_new_entry_and_the_old_one_stays(
        tmp_path: Path, fake_tables: Fakes) -> None:
    names = ["a", "b", "c", "d"]
    store = run_fake(fake_tables, tmp_path / "v.db", fake_config(names, 4, matches=8))
    before = store.ratings()["a"]
    store.close()
    config = fake_config(names, 4, matches=16)
    config.bots[0] = BotSpec("a", ("fake", "a", "version 2"), ROOT)  # another command: another fingerprint
    notes: list[str] = []
    store = run_fake(fake_tables, tmp_path / "v.db", config, notes)
    old = f"a (old {fake_config(names, 4).bots[0].fingerprint()[:4]})"
    assert any(old in note and "fresh rating" in note for note in notes)
    ratings, played = store.ratings(), store.played()
    assert ratings[old] == before and played[old] == 8  # the old version keeps its rating and matches
    assert played["a"] == 8 and ratings["a"] != before  # the new one started afresh
    assert old in store.results()[0].bots
    store.close()


def test_a_database_rated_by_other_settings_is_rated_again(tmp_path: Path, fake_tables: Fakes) -> None:
    path = tmp_path / "old.db"
    store = run_fake(fake_tables, path, fake_config(["a", "b", "c", "d"], 4, matches=12))
    fresh = store.ratings()
    store.set_ratings(dict.fromkeys(fresh, Rating(1.0, 1.0)), "trueskill of an older arena, tau 0.0833")
    store.close()
    notes: list[str] = []
    store = Store(path)
    fake_tables.ladder(fake_config(["a", "b", "c", "d"], 4, matches=12), store, on_note=notes.append)
    assert any("12 stored matches were rated again" in note for note in notes)
    for name, rating in recomputed_ratings(path).items():
        assert store.ratings()[name].mu == pytest.approx(rating.mu)
        assert fresh[name].mu == pytest.approx(rating.mu)
    store.close()


def test_a_ladder_until_decided_stops_when_every_neighbour_pair_is_decided(
        tmp_path: Path, fake_tables: Fakes) -> None:
    test = SequentialTest(zone=0.45, alpha=0.05, beta=0.05)  # random players are equal: a wide zone ends soon
    progress: list[Progress] = []
    config = fake_config(["a", "b", "c", "d", "e"], 4, matches=2000, until_decided=test)
    store = run_fake(fake_tables, tmp_path / "d.db", config, progress=progress)
    count = store.match_count()
    assert 0 < count < 2000 and count % 4 == 0  # stopped by the test, with whole deal sets
    assert progress[-1].open_pairs == 1  # as of the last deal set planned; then none were open
    ladder = fake_tables.ladder(fake_config(["a", "b", "c", "d", "e"], 4, matches=2000, until_decided=test),
                                store)
    assert all(verdict is Verdict.EQUAL for _, verdict in ladder.verdicts()) and len(ladder.verdicts()) == 4
    assert ladder.done
    store.close()


def test_progress_reports_every_match_with_the_leader(tmp_path: Path, fake_tables: Fakes) -> None:
    progress: list[Progress] = []
    config = fake_config(["a", "b", "c"], 3, matches=6, tables=2)
    store = run_fake(fake_tables, tmp_path / "a.db", config, progress=progress)
    assert [p.done for p in progress] == [1, 2, 3, 4, 5, 6]
    assert all(p.planned == 6 and p.rate_per_hour > 0 for p in progress)
    assert progress[-1].leader == store.leaderboard()[0].bot
    assert progress[-1].eta_seconds == 0


def test_an_hours_budget_stops_planning(tmp_path: Path, fake_tables: Fakes) -> None:
    store = run_fake(fake_tables, tmp_path / "a.db", fake_config(["a", "b", "c"], 3, hours=1e-9, tables=2))
    assert store.match_count() == 0


# ------------------------------------------------------------------------------- real bot processes


@pytest.fixture(scope="module")
@starts_processes
def cabanga_ladder(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path]:
    """A finished ladder of a strong, a medium and a random Cabanga! bot; returns its command and database."""
    folder = tmp_path_factory.mktemp("cabanga")
    bots = write_bot_list(folder / "bots.toml", ["cabanga-greedy", "cabanga-thrower", "cabanga-random"])
    db = folder / "ladder.db"
    args = ["ladder", "--bots", str(bots), "--game", "cabanga", "--seats", "3", "--matches", "30",
            "--tables", "2", "--seed", "3", "--db", str(db)]
    result = arena(*args)
    assert result.returncode == 0, result.stderr
    return args, db


@pytest.mark.process
def test_a_ladder_ranks_strong_medium_random_in_order(cabanga_ladder: tuple[list[str], Path]) -> None:
    _, db = cabanga_ladder
    rows = board(db)
    assert [r["bot"] for r in rows] == ["cabanga-greedy", "cabanga-thrower", "cabanga-random"]
    assert [r["matches"] for r in rows] == [30, 30, 30]
    assert rows[0]["mu"] > rows[1]["mu"] > rows[2]["mu"]
    assert rows[0]["faults"] == 0


@pytest.mark.process
def test_a_lama_ladder_ranks_strong_medium_random_in_order(tmp_path: Path) -> None:
    bots = write_bot_list(tmp_path / "bots.toml", ["lama-steady", "lama-quitter", "lama-random"])
    result = arena("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--matches", "45", "--tables", "2",
                   "--db", tmp_path / "lama.db")
    assert result.returncode == 0, result.stderr
    assert [r["bot"] for r in board(tmp_path / "lama.db")] == ["lama-steady", "lama-quitter", "lama-random"]
    assert "45 matches played" in result.stderr
    assert result.stdout.splitlines()[0].split()[:3] == ["rank", "ranks", "bot"]  # the final table


def test_the_same_ladder_gives_the_same_matches(cabanga_ladder: tuple[list[str], Path], tmp_path: Path,
                                                in_process_players: Fakes) -> None:
    """The matches are the ladder's plan, not its players': the same command, played again by in-process
    players, stores the same (deal, rotation, seed) of every match as the real bots' ladder (real bots rerun
    to the same matches in test_a_ladder_killed_and_stopped_resumes_to_the_same_matches)."""
    args, db = cabanga_ladder
    again = tmp_path / "again.db"
    code, _, err, _ = cli(*[str(again) if a == str(db) else a for a in args])
    assert code == 0, err
    assert len(in_process_players.seatings) == 30  # every match played again, by the in-process players
    assert seeds(again) == seeds(db)
    assert len(seeds(db)) == 30 and len({s for _, _, s in seeds(db)}) == 10


@pytest.mark.process
def test_a_ladder_killed_and_stopped_resumes_to_the_same_matches(
        cabanga_ladder: tuple[list[str], Path], tmp_path: Path) -> None:
    args, reference = cabanga_ladder
    db = tmp_path / "resumed.db"
    args = [str(db) if a == str(reference) else a for a in args]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the killed arena's socket folder goes with tmp_path
    bots: list[int] = []
    try:
        # 1. kill -9 once a match is stored
        proc = subprocess.Popen([*ARENA, *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        end = time.monotonic() + 60
        while stored_count(db) < 1 and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        bots = descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at = stored_count(db)
        assert 1 <= killed_at < 30
        assert len(bots) >= 3
        # the orphaned bots notice that the arena is gone and leave by themselves
        end = time.monotonic() + 15
        while not all(gone(pid) for pid in bots) and time.monotonic() < end:
            time.sleep(0.05)
        assert all(gone(pid) for pid in bots), [pid for pid in bots if not gone(pid)]

        # 2. the same command resumes; SIGTERM stops it cleanly
        proc = subprocess.Popen([*ARENA, *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        end = time.monotonic() + 60
        while stored_count(db) < killed_at + 2 and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.01)
        bots = descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "interrupted" in err and "the same command resumes" in err and "Traceback" not in err
        assert all(gone(pid) for pid in bots)  # stopped with the ladder
        assert killed_at + 2 <= stored_count(db)

        # 3. and again, to the end
        result = arena(*args, env=env)
        assert result.returncode == 0, result.stderr
    finally:
        for pid in bots:  # should none have left, leave nothing behind
            if not gone(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    stored = seeds(db)
    assert stored == seeds(reference)
    assert len(stored) == len(set(stored)) == 30
    rows = board(db)
    for name, rating in recomputed_ratings(db).items():  # every match rated once, in order, across the runs
        row = next(r for r in rows if r["bot"] == name)
        assert row["mu"] == pytest.approx(rating.mu, abs=1e-3)
        assert row["sigma"] == pytest.approx(rating.sigma, abs=1e-3)


def test_leaderboard_as_json_csv_and_text(cabanga_ladder: tuple[list[str], Path]) -> None:
    _, db = cabanga_ladder
    code, out, _, _ = cli("leaderboard", "--db", db, "--json")
    assert code == 0
    rows = [row for row in map(json.loads, out.splitlines()) if "pair" not in row]
    assert [list(r) for r in rows] == [[*BOARD_COLUMNS, "sandbox"]] * 3
    # the isolation the ladder's bots ran under, as this machine gives it
    assert rows[0]["sandbox"] in ("strict", "jail", "limits+cgroups", "limits")
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert sum(r["raw_wins"] for r in rows) >= 30
    assert all(r["low"] <= r["estimate"] <= r["high"] for r in rows)
    assert [r["estimate"] for r in rows] == sorted((r["estimate"] for r in rows), reverse=True)
    assert all(r["median_ms"] > 0 and r["p99_ms"] >= r["median_ms"] for r in rows)
    assert all(r["conservative"] == pytest.approx(r["mu"] - 3 * r["sigma"], abs=0.01) for r in rows)

    code, out, _, _ = cli("leaderboard", "--db", db, "--csv")
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out)))
    assert list(table[0]) == [*BOARD_COLUMNS, "sandbox"] and table[0]["sandbox"] == rows[0]["sandbox"]
    assert [r["bot"] for r in table] == [r["bot"] for r in rows]
    assert [float(r["mu"]) for r in table] == [r["mu"] for r in rows]

    code, out, _, _ = cli("leaderboard", "--db", db)
    assert code == 0
    assert out.startswith("cabanga, 3 seats, ladder seed 3") and "30 matches" in out.splitlines()[0]
    assert out.splitlines()[0].endswith(f"bots sandboxed: {rows[0]['sandbox']}")
    assert out.splitlines()[1].split()[:3] == ["rank", "ranks", "bot"]
    assert "neighbours (" in out


def test_replay_shows_and_verifies_a_stored_match(cabanga_ladder: tuple[list[str], Path]) -> None:
    _, db = cabanga_ladder
    code, out, err, _ = cli("replay", "17", "--db", db)
    assert code == 0, err
    assert out.startswith("Cabanga!, 3 seats, seed ")
    assert "match over: 1. " in out
    assert out.splitlines()[-1].startswith("replay verified")
    code, out, _, _ = cli("replay", "17", "--db", db, "--json")
    assert code == 0 and json.loads(out.splitlines()[0])["event"] == "match"
    code, _, err, exc = cli("replay", "99", "--db", db)
    assert_one_line_error(code, err, exc, "no match 99")


@pytest.mark.process
def test_a_bot_that_does_not_start_is_reported_and_the_ladder_goes_on(tmp_path: Path) -> None:
    bots = write_bot_list(tmp_path / "bots.toml",
                          ["cabanga-greedy", "cabanga-thrower", "cabanga-random"], broken=["aaa"])
    db = tmp_path / "a.db"
    result = arena("ladder", "--bots", bots, "--seats", "3", "--matches", "6", "--tables", "1", "--db", db)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    notes = [line for line in result.stderr.splitlines() if "'aaa'" in line]
    assert len(notes) == 1 and "does not start" in notes[0] and "goes on without it" in notes[0]
    rows = {r["bot"]: r for r in board(db)}
    assert rows["aaa"]["matches"] == 0 and sum(r["matches"] for r in rows.values()) == 18
    assert stored_count(db) == 6


# ----------------------------------------------------------------------------------------- bad input


def test_bad_input_is_a_one_line_error(tmp_path: Path) -> None:
    good = write_bot_list(tmp_path / "good.toml", ["cabanga-greedy", "cabanga-tidy", "cabanga-random"])
    malformed = tmp_path / "malformed.toml"
    malformed.write_text("[[bot]]\nname = 'x'\ncommand = 7\n", encoding="utf-8")
    not_toml = tmp_path / "not.toml"
    not_toml.write_text("[[bot\n", encoding="utf-8")
    db = tmp_path / "a.db"
    cases: list[tuple[list[str | Path], tuple[str, ...]]] = [
        (["--bots", tmp_path / "missing.toml"], ("does not exist",)),
        (["--bots", malformed], ("command must be",)),
        (["--bots", not_toml], ("not valid TOML",)),
        (["--bots", good, "--seats", "4"], ("3 bots cannot fill 4 seats",)),
        (["--bots", good, "--seats", "2"], ("3 to 6 seats",)),
        (["--bots", good, "--game", "chess"], ("chess",)),
        (["--bots", good, "-o", "rounds=none"], ("rounds",)),
        (["--bots", good, "--matches", "0"], ("--matches",)),
    ]
    for args, needles in cases:
        code, _, err, exc = cli("ladder", "--db", db, *args)
        assert_one_line_error(code, err, exc, *needles)
    assert not db.exists()  # nothing was created for a ladder that cannot run


@pytest.mark.process
def test_a_database_of_another_ladder_or_no_database_is_a_one_line_error(tmp_path: Path) -> None:
    bots = write_bot_list(tmp_path / "bots.toml", ["lama-greedy", "lama-steady", "lama-random"])
    db = tmp_path / "a.db"
    store = Store(db)
    store.claim(ladder_module.LadderIdentity("lama", 3, 0, get_game("lama").options().to_json()))
    store.close()
    for args in (["--game", "cabanga"], ["--seats", "2"], ["--seed", "1"], ["-o", "rounds=2"]):
        code, _, err, exc = cli("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--db", db, *args)
        assert_one_line_error(code, err, exc, "holds another ladder", "use --db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(random.Random(1).randbytes(10000))
    code, _, err, exc = cli("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--db", junk)
    assert_one_line_error(code, err, exc, "not a usable arena database")
    for command in (["leaderboard", "--db", junk], ["leaderboard", "--db", tmp_path / "none.db"],
                    ["replay", "1", "--db", junk]):
        code, _, err, exc = cli(*command)
        assert_one_line_error(code, err, exc)
    # and through the real entry point: no traceback, exit status 1
    result = arena("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--db", junk)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1 and "not a usable arena database" in result.stderr


def test_default_ladder_seed_is_secret_random_and_kept_by_the_database(
        tmp_path: Path, in_process_players: Fakes) -> None:
    """A bot that knew the ladder seed could work out every deal: the default is random, and a rerun keeps it.

    The seed is the command's and the database's business, not the bots': the real `arena ladder` runs (in this
    process), with in-process random players in place of bot processes."""
    fake_tables = in_process_players
    bots = write_bot_list(tmp_path / "bots.toml", ["lama-greedy", "lama-steady", "lama-random"])
    seeds_seen = []
    for name in ("a.db", "b.db"):
        db = tmp_path / name
        code, _, err, _ = cli("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--matches", "3",
                              "--tables", "1", "--db", db, "-o", "rounds=1")
        assert code == 0, err
        store = Store(db, readonly=True)
        identity = store.identity()
        store.close()
        assert identity is not None
        seeds_seen.append(identity.seed)
        code, _, err, _ = cli("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--matches", "6",
                              "--tables", "1", "--db", db, "-o", "rounds=1")
        assert code == 0, err  # resumed: the same (stored) seed, not another ladder
        assert len(seeds(db)) == 6
    assert seeds_seen[0] != seeds_seen[1] and min(seeds_seen) > 1000
    assert len(fake_tables.made) == 4 and len(fake_tables.seatings) == 12  # every run played, in this process


def test_a_fixed_ladder_seed_is_said_to_be_known(tmp_path: Path, in_process_players: Fakes) -> None:
    bots = write_bot_list(tmp_path / "bots.toml", ["lama-greedy", "lama-steady", "lama-random"])
    code, _, err, _ = cli("ladder", "--bots", bots, "--game", "lama", "--seats", "3", "--matches", "3", "--seed", "7",
                          "--tables", "1", "--db", tmp_path / "a.db", "-o", "rounds=1")
    assert code == 0, err
    assert "note: --seed 7 is a fixed ladder seed: a bot that knows it (or guesses it) works out every deal" in err
    store = Store(tmp_path / "a.db", readonly=True)
    try:
        identity = store.identity()
    finally:
        store.close()
    assert identity is not None and identity.seed == 7 and not identity.drawn
    assert "ladder seed 7" in identity.describe()


def test_a_given_seed_of_strangers_bots_is_replaced_by_a_secret_and_planned_deals_keep_theirs(
        tmp_path: Path) -> None:
    """An older contest's ladder was seeded 1 by default: opened for untrusted bots, it gets a drawn secret for
    every deal set from now on; the ones already planned (and maybe played) keep their seeds."""
    from arena.ladder.setup import SECRET_BITS, ladder_seed
    from arena.ladder.store import LadderIdentity

    game = get_game("lama")
    config = LadderConfig(game, game.options({"rounds": 1}), 3, 0, [])
    store = Store(tmp_path / "old.db")
    try:
        store.claim(LadderIdentity("lama", 3, 1, config.options.to_json()))
        store.plan_deal(0, deal_seed(1, 0), ["a", "b", "c"])
        assert ladder_seed(store, None, config=config) == (1, False)  # trusted bots: as it was
        secret, drawn = ladder_seed(store, None, untrusted=True, config=config)
        assert drawn and secret != 1 and secret.bit_length() > SECRET_BITS - 16
        held = store.identity()
        assert held is not None and (held.seed, held.drawn) == (secret, True)
        assert "a secret seed" in held.describe() and str(secret) not in held.describe()
        assert [d.seed for d in store.deals()] == [deal_seed(1, 0)]
        assert ladder_seed(store, None, untrusted=True, config=config) == (secret, True)  # kept, not drawn again
        other = LadderConfig(get_game("cabanga"), get_game("cabanga").options({}), 3, 0, [])
        fresh = Store(tmp_path / "other.db")
        try:
            fresh.claim(LadderIdentity("lama", 3, 1, config.options.to_json()))
            # another ladder's database is not re-keyed: claiming it fails later, with the reason
            assert ladder_seed(fresh, None, untrusted=True, config=other) == (1, False)
        finally:
            fresh.close()
    finally:
        store.close()


def test_compare_takes_a_bundled_bots_old_name_for_one_release() -> None:
    result = CliRunner().invoke(main, ["compare", "lama-search", "nobody", "--game", "lama"])
    assert result.exit_code == 2 and "note: lama-search is now called lama-medium" in result.output
    assert "bot 'nobody' is not in the bot list" in result.output


@pytest.mark.process
def test_compare_decides_which_of_two_bots_is_better(tmp_path: Path) -> None:
    bots = write_bot_list(tmp_path / "bots.toml", ["lama-steady", "lama-random", "lama-quitter"])
    result = arena("compare", "lama-random", "lama-steady", "--bots", bots, "--game", "lama", "--seats", "3",
                   "--zone", "0.2", "-o", "rounds=1", "--tables", "2", "--db", tmp_path / "c.db")
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert last.startswith("lama-steady is better (")
    said_interval = r"against lama-steady ([0-9.]+), 95% interval ([0-9.]+)-([0-9.]+)\)$"
    mean, low, high = (float(x) for x in re.findall(said_interval, last)[0])
    assert low < mean < high and high - low < 1
    said = result.stderr.splitlines()
    assert said[0].startswith("compare: lama-random against lama-steady at L.A.M.A., 3 seats, with lama-quitter")
    assert not any(line.startswith("ladder:") or "outside matches" in line for line in said), said
    store = Store(tmp_path / "c.db", readonly=True)
    try:
        outcomes = store.results()
    finally:
        store.close()
    assert all({"lama-steady", "lama-random", "lama-quitter"} == set(o.bots) for o in outcomes)  # a filler seat
    assert len(outcomes) % 3 == 0 and len(outcomes) < 4000
    code, _, err, exception = cli("compare", "lama-steady", "nobody", "--bots", bots, "--game", "lama")
    assert_one_line_error(code, err, exception, "nobody")


class WarmExecutor(FakeExecutor):
    """Says which bots' processes it holds warm, as the machine's pool would."""

    held: ClassVar[dict[str, int]] = {"a": 3, "c": 1}

    def warm(self) -> dict[str, int]:
        return dict(self.held)


def test_the_ladder_plans_each_deal_set_with_the_pools_warm_processes_in_view(tmp_path: Path) -> None:
    """Issue 23: the scheduler sees what the executor holds warm at every plan, and the ladder plays its group."""
    seen: list[dict[str, int]] = []

    class Spy(FairScheduler):
        def next_group(self, state: FieldState, seats: int, rng: random.Random) -> list[str]:
            seen.append(dict(state.warm))
            return super().next_group(state, seats, rng)

    store = Store(tmp_path / "warm.db")
    executor = WarmExecutor(1, set(), [])
    ladder = Ladder(fake_config(["a", "b", "c", "d"], 3, matches=9, tables=1), store, executor=executor,
                    scheduler=Spy())
    asyncio.run(ladder.run())
    assert len(seen) == 3 and all(warm == WarmExecutor.held for warm in seen)
    store.close()


def test_the_ramp_is_each_tables_time_before_its_first_match_and_after_its_last() -> None:
    # two tables, four table tasks (an executor that queues a match behind each table's): the two earliest
    # beginnings and the two latest ends are the tables' own; a task that got no match counts for nothing
    spans = [(1.0, 9.0), (2.0, 8.0), (1.5, 9.5), (3.0, 7.0), (None, None)]
    assert ramp(spans, 2, 0.0, 10.0) == pytest.approx((1.0 + 1.5) + (0.5 + 1.0))
    # a table that never played is idle the whole run
    assert ramp([(1.0, 9.0)], 2, 0.0, 10.0) == pytest.approx(1.0 + 1.0 + 10.0)
    assert ramp([], 1, 0.0, 10.0) == pytest.approx(10.0)
