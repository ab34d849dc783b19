"""The ladder database: one transaction per match, shared wins, faults, latencies, identity, locking, bad files."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.core import replay as replay_format
from arena.core.referee import Fault, FaultKind, MatchRecord, MatchSummary, random_seat, referee_match
from arena.games import get_game
from arena.games.base import MatchResult
from arena.ladder.database import Database, Migration, Schema
from arena.ladder.ratings import Outcome, Rating
from arena.ladder.store import (
    SCHEMA_VERSION,
    BoardRow,
    DealSet,
    Finished,
    LadderIdentity,
    Store,
    StoreError,
    _bucket,
    _quantile,
)

IDENTITY = LadderIdentity("cabanga", 3, 0, get_game("cabanga").options().to_json())
BOTS = ("ann", "bob", "cat")


def record(totals: tuple[int, ...], *, benched: set[int] | None = None, faults: list[Fault] | None = None,
           latencies: list[list[float]] | None = None, seed: int = 1) -> MatchRecord:
    rec = MatchRecord("cabanga", IDENTITY.options, seed, list(BOTS),
                      latencies=latencies or [[0.001] * 3 for _ in BOTS], benched=benched or set(),
                      faults=faults or [])
    rec.steps = [{0: "R1:left"}] * 5
    rec.result = MatchResult.from_totals(totals)
    return rec


DATA = Path(__file__).resolve().parent / "data"
OLD_LADDER = DATA / "ladder-e732209.db"
"""A ladder database made by the arena of e732209, before the SQLite shell (tests/data/make_old_databases.py)."""


def old_ladder(tmp_path: Path) -> Path:
    """Return a copy of :data:`OLD_LADDER` (the committed file is never opened for writing)."""
    path = tmp_path / "old.db"
    shutil.copyfile(OLD_LADDER, path)
    return path


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Return every row of every table of the database at ``path``, by table, in the order stored."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() for table in tables}


def new_store(path: Path) -> Store:
    store = Store(path)
    store.claim(IDENTITY)
    for name in BOTS:
        store.register_bot(name, "f" + name, ["{python}", name])
    return store


def test_shared_first_places_count_as_wins_for_both(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    rec = record((3, 3, 10))
    assert rec.ranking_places() == (1, 1, 3)
    store.record_match(0, 0, rec.summary(), list(BOTS), {}, 0.5, replay_format.pack(rec))
    store.record_match(0, 1, record((2, 5, 9)).summary(), list(BOTS), {}, 0.5, b"")
    board = {row.bot: row for row in store.leaderboard()}
    assert board["ann"].wins == 2 and board["bob"].wins == 1 and board["cat"].wins == 0
    assert board["ann"].matches == board["cat"].matches == 2
    assert board["bob"].mean_points == pytest.approx(4.0)


def test_a_benched_seat_is_placed_last_and_its_faults_are_counted(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    faults = [Fault(0, step, FaultKind.TIMEOUT, "late") for step in range(3)]
    rec = record((1, 5, 9), benched={0}, faults=faults)
    assert rec.ranking_places() == (3, 1, 2)
    store.record_match(0, 0, rec.summary(), list(BOTS), {}, 0.5, b"")
    board = {row.bot: row for row in store.leaderboard()}
    assert board["ann"].wins == 0 and board["ann"].faults == 3 and board["bob"].wins == 1
    assert store.db.execute("SELECT count(*) FROM faults").fetchone()[0] == 3


def test_ratings_are_stored_after_every_match_and_order_the_board(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    after = {"ann": Rating(30, 2), "bob": Rating(20, 2), "cat": Rating(28, 5)}
    match_id = store.record_match(0, 0, record((1, 5, 9)).summary(), list(BOTS), after, 0.5, b"")
    assert store.ratings() == after
    stored = store.db.execute("SELECT count(*) FROM ratings WHERE match_id = ?", (match_id,)).fetchone()[0]
    assert stored == 3
    assert [row.bot for row in store.leaderboard()] == ["ann", "bob", "cat"]  # by mu - 3 sigma
    assert [row.rank for row in store.leaderboard()] == [1, 2, 3]


def test_latency_median_and_p99_come_from_the_histogram(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    ann = [0.002] * 98 + [0.050] * 2
    store.record_match(0, 0, record((1, 5, 9), latencies=[ann, [0.010], []]).summary(), list(BOTS), {}, 0.5, b"")
    board = {row.bot: row for row in store.leaderboard()}
    assert board["ann"].median_ms == pytest.approx(2.0, rel=0.05)
    assert board["ann"].p99_ms == pytest.approx(50.0, rel=0.05)
    assert board["bob"].median_ms == pytest.approx(10.0, rel=0.05)
    assert board["cat"].median_ms == 0.0


def test_quantiles_are_interpolated_inside_a_bucket_so_bots_in_one_bucket_differ() -> None:
    from arena.ladder.store import LATENCY_BUCKET_BASE, _bucket, _quantile

    bucket = _bucket(0.00987)
    low, high = LATENCY_BUCKET_BASE ** bucket / 1e6, LATENCY_BUCKET_BASE ** (bucket + 1) / 1e6
    p99s = [_quantile([(bucket - 20, 100 - n), (bucket, n)], 0.99) for n in (2, 4, 8, 16)]
    assert len(set(p99s)) == 4  # four bots whose slow decisions share one bucket: four p99s, not one
    assert all(low <= p <= high for p in p99s) and p99s == sorted(p99s)
    assert _quantile([(bucket, 1)], 0.5) == pytest.approx((low * high) ** 0.5)  # the middle of a lone bucket


def test_a_match_is_stored_whole_or_not_at_all(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    with pytest.raises(KeyError):  # a rating for an unknown bot fails half-way through the transaction
        store.record_match(0, 0, record((1, 5, 9)).summary(), list(BOTS), {"nobody": Rating()}, 0.5, b"")
    assert store.match_count() == 0
    assert store.db.execute("SELECT count(*) FROM seats").fetchone()[0] == 0
    assert store.db.execute("SELECT count(*) FROM latency").fetchone()[0] == 0
    store.record_match(0, 0, record((1, 5, 9)).summary(), list(BOTS), {}, 0.5, b"")
    with pytest.raises(StoreError):  # the same (deal, rotation) twice
        store.record_match(0, 0, record((1, 5, 9)).summary(), list(BOTS), {}, 0.5, b"")
    assert store.match_count() == 1


def test_deals_seeds_and_replays_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = new_store(path)
    game = get_game("cabanga")
    real = asyncio.run(referee_match(game, [random_seat(n, i) for i, n in enumerate(BOTS)], 77, game.options()))
    replay = replay_format.from_record(real)
    store.plan_deal(0, 77, BOTS)
    store.plan_deal(1, 88, ("cat", "bob", "ann"))
    store.record_match(0, 2, real.summary(), list(BOTS), {}, 0.5, replay_format.compress(replay))
    store.record_match(0, 0, real.summary(), list(BOTS), {}, 0.5, replay_format.compress(replay))
    store.replace_deal_bots(1, ("cat", "bob", "dan"))
    store.close()
    again = Store(path, readonly=True)
    assert again.identity() == IDENTITY
    assert again.match_seeds() == [(0, 0, 77), (0, 2, 77)]
    deals = again.deals()
    assert [(d.deal, d.seed, d.bots, d.done) for d in deals] == [
        (0, 77, list(BOTS), {0, 2}), (1, 88, ["cat", "bob", "dan"], set())]
    assert again.replay(1)["steps"] == replay["steps"]
    with pytest.raises(StoreError, match="no match 9"):
        again.replay(9)
    again.close()
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE matches SET replay = x'00ff' WHERE id = 2")
    with pytest.raises(StoreError, match=r"match 2 .* damaged replay"):
        Store(path, readonly=True).replay(2)


def test_a_database_holds_one_ladder(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    new_store(path).close()
    others = [
        LadderIdentity("lama", 3, 0, get_game("lama").options().to_json()),
        LadderIdentity("cabanga", 4, 0, IDENTITY.options),
        LadderIdentity("cabanga", 3, 1, IDENTITY.options),
        LadderIdentity("cabanga", 3, 0, get_game("cabanga").options({"rounds": 2}).to_json()),
    ]
    for other in others:
        store = Store(path)
        with pytest.raises(StoreError, match="holds another ladder"):
            store.claim(other)
        store.close()
    store = Store(path)
    store.claim(LadderIdentity("cabanga", 3, 0, dict(IDENTITY.options)))  # the same ladder: fine
    store.close()


def test_only_one_writer_at_a_time_but_readers_are_welcome(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    writer = new_store(path)
    with pytest.raises(StoreError, match="in use by another ladder"):
        Store(path)
    reader = Store(path, readonly=True)
    assert reader.identity() == IDENTITY
    assert [row.bot for row in reader.leaderboard()] == ["ann", "bob", "cat"]
    reader.close()
    writer.close()
    Store(path).close()  # the lock went with the writer


def test_bad_files_are_a_store_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(os.urandom(8192))
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    bad_meta = tmp_path / "meta.db"
    with sqlite3.connect(bad_meta) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('ladder', '{\"game\": 1}')")
    empty = tmp_path / "empty.db"
    empty.touch()
    cases = [(junk, False, "not a usable arena database"), (junk, True, "not a usable arena database"),
             (other, False, "something else"), (other, True, "something else"),
             (bad_meta, True, "bad ladder description"), (tmp_path / "nope.db", True, "does not exist"),
             (tmp_path / "no" / "dir.db", False, "folder does not exist"), (tmp_path, False, "is a folder"),
             (empty, True, "holds no ladder")]
    for path, readonly, message in cases:
        with pytest.raises(StoreError, match=message):
            Store(path, readonly=readonly)
    assert junk.stat().st_size == 8192  # never touched


def test_a_changed_program_is_a_new_entry_and_its_old_version_is_kept(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.record_match(0, 0, record((3, 1, 2)).summary(), BOTS, {"ann": Rating(30, 2)}, 0.1, b"")
    assert store.register_bot("ann", "fann", ["{python}", "ann"]) is None  # unchanged
    old = store.register_bot("ann", "f2", ["{python}", "ann2"])
    assert old == "ann (old fann)"
    ratings = store.ratings()
    assert ratings["ann"] == Rating() and ratings[old] == Rating(30, 2)  # fresh rating; the old one kept
    assert store.played() == {"ann": 0, old: 1, "bob": 1, "cat": 1}
    assert {o.bots for o in store.results()} == {(old, "bob", "cat")}  # its matches stay with the old version
    # changed back: the first version takes its entry back, the second is retired in turn
    assert store.register_bot("ann", "fann", ["{python}", "ann"]) == "ann (old f2)"
    assert store.ratings()["ann"] == Rating(30, 2) and "ann (old fann)" not in store.ratings()
    store.close()


def test_a_schema_1_database_is_upgraded_and_loses_nothing(tmp_path: Path) -> None:
    path = old_ladder(tmp_path)
    with contextlib.closing(sqlite3.connect(path)) as db:  # what an arena of schema 1 wrote
        db.execute("ALTER TABLE bots DROP COLUMN base")
        db.execute("ALTER TABLE bots DROP COLUMN retired")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        db.commit()
    before = dump(path)
    reader = Store(path, readonly=True)  # a reader needs no upgrade, and makes none
    assert reader.database.version == 1 and len(reader.results()) == 14
    reader.close()
    assert dump(path) == before
    store = Store(path)
    assert store.database.version == SCHEMA_VERSION and store._meta("schema") == "2"
    after = dump(path)
    assert after.pop("bots") == [(*row, row[1], 0) for row in before.pop("bots")]  # each its own base, not retired
    assert after.pop("meta") == [("schema", "2") if key == "schema" else (key, value)
                                 for key, value in before.pop("meta")]
    assert after == before
    assert store.match_count() == 14 and store.replay(1)["game"] == "lama"
    assert store.register_bot("alpha", "new", ["{python}", "alpha"]) == "alpha (old b78a)"
    store.close()


def test_the_same_stored_matches_in_two_orders_give_the_same_board(tmp_path: Path) -> None:
    from arena.ladder.board import build_board

    matches = [(deal, rotation, (deal % 3 + rotation, (deal + 1) % 3 * rotation, 2)) for deal in range(12)
               for rotation in range(3)]
    boards = []
    for name, order in (("a.db", matches), ("b.db", list(reversed(matches)))):
        store = new_store(tmp_path / name)
        for deal, rotation, totals in order:
            seated = BOTS[rotation:] + BOTS[:rotation]
            rec = record(totals)
            rec.names = list(seated)
            store.record_match(deal, rotation, rec.summary(), seated, {}, 0.1, b"")
        board = build_board(store, replicates=50)
        boards.append(([(line.raw.bot, line.fit) for line in board.lines], board.pairs))
        store.close()
    assert boards[0] == boards[1]
    assert all(fit is not None for _, fit in boards[0][0]) and len(boards[0][1]) == 2


def test_matches_stored_together_keep_their_order_and_fail_together(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.plan_deal(0, 11, BOTS)
    first, second = {"ann": Rating(26, 7)}, {"ann": Rating(27, 6), "bob": Rating(24, 6)}
    batch = [Finished(0, 0, record((1, 5, 9), latencies=[[0.002], [0.002], []]).summary(), BOTS, first, 0.1, b""),
             Finished(0, 1, record((1, 5, 9), latencies=[[0.002], [], []]).summary(), BOTS, second, 0.1, b"")]
    assert store.record_matches(batch) == [1, 2]
    assert store.match_seeds() == [(0, 0, 1), (0, 1, 1)]
    assert store.ratings()["ann"] == Rating(27, 6) and store.ratings()["bob"] == Rating(24, 6)  # the last ones
    history = store.db.execute("SELECT match_id, r.mu FROM ratings r JOIN bots b ON b.id = r.bot_id "
                               "WHERE b.name = 'ann' ORDER BY match_id").fetchall()
    assert history == [(1, 26.0), (2, 27.0)]
    assert store.db.execute("SELECT count FROM latency l JOIN bots b ON b.id = l.bot_id "
                            "WHERE b.name = 'ann'").fetchall() == [(2,)]  # one bucket, both matches
    again = [Finished(0, 2, batch[0].match, BOTS, {}, 0.1, b""), batch[1]]  # (0, 1) is stored already
    with pytest.raises(StoreError):
        store.record_matches(again)
    assert store.match_count() == 2  # (0, 2) went with it
    store.close()


def test_ratings_take_the_games_places_not_the_totals() -> None:
    # a game where the highest total wins says so in its MatchOver places; the ratings must not read the totals
    rec = record((5, 9, 1))
    rec.result = MatchResult((5, 9, 1), (2, 1, 3))
    assert rec.ranking_places() == (2, 1, 3)
    rec = record((5, 9, 1), benched={1})
    rec.result = MatchResult((5, 9, 1), (2, 1, 3))
    assert rec.ranking_places() == (1, 3, 2)


# Exact checks of what is stored and read back: every column of a match, the latency histogram, the board's
# figures, the bot entries, the settings, and the failure paths of a transaction.

def bot_ids(store: Store) -> dict[str, int]:
    return {str(name): int(i) for i, name in store.db.execute("SELECT id, name FROM bots")}


def expected_bucket(seconds: float) -> int:
    """The histogram bucket of a latency, found by walking up the powers of 1.05 (microseconds)."""
    micro, bucket = seconds * 1e6, 0
    while 1.05 ** (bucket + 1) <= micro:
        bucket += 1
    return bucket


def test_a_stored_match_keeps_every_column_and_reads_back_as_it_was(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    assert store.plan_deal(3, 11, BOTS) == DealSet(3, 11, list(BOTS), set())
    faults = (Fault(2, 1, FaultKind.TIMEOUT, "late"), Fault(2, 3, FaultKind.MALFORMED, "bad"),
              Fault(0, 2, FaultKind.CRASH, "died"))
    summary = MatchSummary(77, 9, (4, 2, 7), (2, 1, 3), frozenset({2}), faults, ((0.001, 0.002), (0.003,), ()))
    before = time.time()
    match_id = store.record_match(3, 1, summary, BOTS, {"bob": Rating(27.5, 6.25)}, 1.25, b"\x01\x02")
    after = time.time()
    ids = bot_ids(store)
    ((stored_id, deal, rotation, seed, finished_at, seconds, steps, replay),) = store.db.execute(
        "SELECT id, deal, rotation, seed, finished_at, seconds, steps, replay FROM matches").fetchall()
    assert (stored_id, deal, rotation, seed, seconds, steps, replay) == (match_id, 3, 1, 77, 1.25, 9, b"\x01\x02")
    assert before <= finished_at <= after
    assert store.db.execute("SELECT * FROM seats ORDER BY seat").fetchall() == [
        (match_id, 0, ids["ann"], 4, 2, 0, 1, 2), (match_id, 1, ids["bob"], 2, 1, 0, 0, 1),
        (match_id, 2, ids["cat"], 7, 3, 1, 2, 0)]  # match, seat, bot, total, place, benched, faults, decisions
    assert store.db.execute("SELECT * FROM faults ORDER BY rowid").fetchall() == [
        (match_id, 2, 1, "timeout", "late"), (match_id, 2, 3, "malformed", "bad"), (match_id, 0, 2, "crash", "died")]
    assert store.db.execute("SELECT * FROM ratings").fetchall() == [(match_id, ids["bob"], 27.5, 6.25)]
    assert store.ratings() == {"ann": Rating(), "bob": Rating(27.5, 6.25), "cat": Rating()}
    assert sorted(store.db.execute("SELECT * FROM latency").fetchall()) == sorted([
        (ids["ann"], expected_bucket(0.001), 1), (ids["ann"], expected_bucket(0.002), 1),
        (ids["bob"], expected_bucket(0.003), 1)])
    assert store.results() == [Outcome(3, 1, BOTS, (2, 1, None))]
    assert store.deals() == [DealSet(3, 11, list(BOTS), {1})]
    assert store.played() == {"ann": 1, "bob": 1, "cat": 1}


def test_results_come_by_deal_set_rotation_and_seat_whatever_order_they_were_stored_in(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    seatings = {(1, 0): ("cat", "ann", "bob"), (0, 2): ("bob", "cat", "ann"), (0, 0): ("ann", "bob", "cat")}
    for (deal, rotation), seated in seatings.items():
        summary = MatchSummary(deal, 1, (1, 2, 3), (1, 2, 3), frozenset({rotation}), (), ((), (), ()))
        store.record_match(deal, rotation, summary, seated, {}, 0.1, b"")
    assert store.results() == [Outcome(0, 0, ("ann", "bob", "cat"), (None, 2, 3)),
                               Outcome(0, 2, ("bob", "cat", "ann"), (1, 2, None)),
                               Outcome(1, 0, ("cat", "ann", "bob"), (None, 2, 3))]
    assert store.match_count() == 3


def test_latency_counts_add_up_across_transactions(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    for rotation in range(2):
        latencies = ((0.0039, 0.0039, 0.00395), (), (0.5,))
        summary = MatchSummary(1, 1, (1, 2, 3), (1, 2, 3), frozenset(), (), latencies)
        store.record_match(0, rotation, summary, BOTS, {}, 0.1, b"")
    ids = bot_ids(store)
    assert expected_bucket(0.0039) == expected_bucket(0.00395)
    assert sorted(store.db.execute("SELECT * FROM latency").fetchall()) == sorted([
        (ids["ann"], expected_bucket(0.0039), 6), (ids["cat"], expected_bucket(0.5), 2)])


def test_latency_buckets_are_five_percent_wide_from_one_microsecond() -> None:
    for seconds in (0.0, -1.0, 1e-7, 1e-6, 2e-6, 0.00123, 0.002, 0.0371, 1.0, 30.0):
        assert _bucket(seconds) == expected_bucket(seconds), seconds
    assert _bucket(0.002) == 155  # 1.05 ** 155 = 1918.6 <= 2000 microseconds < 1.05 ** 156 = 2014.5
    edge = 1.05 ** 100 / 1e6  # a bucket's edge, in seconds: a hair below is the bucket before
    assert (_bucket(edge * (1 - 1e-7)), _bucket(edge * (1 + 1e-7))) == (99, 100)


def test_latency_quantiles_interpolate_log_linearly_inside_their_bucket() -> None:
    hist = [(10, 1), (12, 3)]  # 4 decisions
    assert _quantile(hist, 0.0) == pytest.approx(1.05 ** 10 / 1e6, rel=1e-12)  # the bottom of the first bucket
    assert _quantile(hist, 0.25) == pytest.approx(1.05 ** 11 / 1e6, rel=1e-12)  # the top of it
    assert _quantile(hist, 0.5) == pytest.approx(1.05 ** (12 + 1 / 3) / 1e6, rel=1e-12)  # 1 of the 3 in 12
    assert _quantile(hist, 1.0) == pytest.approx(1.05 ** 13 / 1e6, rel=1e-12)
    # three buckets: 4.5 of 6 decisions is half-way into the third, past the 1 + 2 of the first two
    assert _quantile([(10, 1), (11, 2), (12, 3)], 0.75) == pytest.approx(1.05 ** 12.5 / 1e6, rel=1e-12)
    assert _quantile([], 0.5) == 0.0


def test_the_board_counts_and_sorts_exactly(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.register_bot("dan", "fdan", ["{python}", "dan"])
    rated = {"ann": Rating(30.0, 2.0), "bob": Rating(27.0, 1.0), "cat": Rating(33.0, 3.0)}  # ann, bob tie at 24
    one = MatchSummary(1, 3, (3, 8, 3), (1, 3, 1), frozenset(), (Fault(1, 0, FaultKind.TIMEOUT, "slow"),),
                       ((0.001,), (0.002, 0.002), ()))
    two = MatchSummary(2, 3, (6, 0, 9), (3, 1, 2), frozenset({0}),
                       (Fault(0, 0, FaultKind.CRASH, "x"), Fault(0, 1, FaultKind.BENCHED, "y")),
                       ((0.001,), (0.002,), (0.004,)))
    store.record_match(0, 0, one, BOTS, {}, 0.1, b"")
    store.record_match(0, 1, two, BOTS, rated, 0.1, b"")
    board = store.leaderboard()
    assert [(row.rank, row.bot) for row in board] == [(1, "ann"), (2, "bob"), (3, "cat"), (4, "dan")]
    ann, bob, cat, dan = board
    assert (ann.mu, ann.sigma, ann.conservative) == (30.0, 2.0, 24.0)
    assert (bob.mu, bob.sigma, bob.conservative, cat.mu, cat.sigma, cat.conservative) == (27, 1, 24, 33, 3, 24)
    assert (ann.matches, ann.wins, ann.mean_points, ann.faults) == (2, 1, 4.5, 2)
    assert (bob.matches, bob.wins, bob.mean_points, bob.faults) == (2, 1, 4.0, 1)
    assert (cat.matches, cat.wins, cat.mean_points, cat.faults) == (2, 1, 6.0, 0)
    assert (dan.matches, dan.wins, dan.mean_points, dan.faults) == (0, 0, 0.0, 0)
    assert (dan.mu, dan.sigma, dan.median_ms, dan.p99_ms) == (Rating().mu, Rating().sigma, 0.0, 0.0)
    b1, b2, b4 = expected_bucket(0.001), expected_bucket(0.002), expected_bucket(0.004)
    assert ann.median_ms == pytest.approx(1.05 ** (b1 + 0.5) / 1e3)  # two decisions in one bucket: the middle
    assert ann.p99_ms == pytest.approx(1.05 ** (b1 + 0.99) / 1e3)
    assert bob.median_ms == pytest.approx(1.05 ** (b2 + 0.5) / 1e3)
    assert (cat.median_ms, cat.p99_ms) == (pytest.approx(1.05 ** (b4 + 0.5) / 1e3),
                                           pytest.approx(1.05 ** (b4 + 0.99) / 1e3))
    assert board[0].to_json() == {"rank": 1, "bot": "ann", "mu": 30.0, "sigma": 2.0, "conservative": 24.0,
                                  "matches": 2, "wins": 1, "mean_points": 4.5, "faults": 2,
                                  "median_ms": round(ann.median_ms, 3), "p99_ms": round(ann.p99_ms, 3)}
    row = BoardRow(2, "x", 25.123456, 8.333333, 0.123456, 3, 1, 4.56789, 2, 1.234567, 9.876543)
    assert row.to_json() == {"rank": 2, "bot": "x", "mu": 25.123, "sigma": 8.333, "conservative": 0.123,
                             "matches": 3, "wins": 1, "mean_points": 4.57, "faults": 2, "median_ms": 1.235,
                             "p99_ms": 9.877}


def test_a_bot_that_scored_nothing_has_mean_points_zero(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.record_match(0, 0, MatchSummary(1, 1, (0, 5, 0), (1, 3, 1), frozenset(), (), ((), (), ())), BOTS, {},
                       0.1, b"")
    assert [row.mean_points for row in store.leaderboard()] == [0.0, 5.0, 0.0]
    store.close()


def test_a_failed_commit_is_rolled_back_and_the_store_goes_on(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    store.db.execute("PRAGMA foreign_keys = ON")
    failed = r"^cannot write to '.*a\.db': FOREIGN KEY constraint failed$"
    with pytest.raises(StoreError, match=failed), store.transaction() as db:
        # a seat of no match: refused only at COMMIT, the check deferred
        db.execute("PRAGMA defer_foreign_keys = ON")
        db.execute("INSERT INTO seats VALUES (99, 0, 1, 0, 1, 0, 0, 0)")
    assert store.db.execute("SELECT count(*) FROM seats").fetchone()[0] == 0
    assert not store.db.in_transaction
    with pytest.raises(StoreError, match=r"^cannot write to '.*a\.db': no such table: nowhere$"), \
            store.transaction() as db:
        db.execute("INSERT INTO deals VALUES (0, 1, '[]')")
        db.execute("INSERT INTO nowhere VALUES (1)")
    with pytest.raises(ZeroDivisionError), store.transaction() as db:  # any other error goes through, rolled back
        db.execute("INSERT INTO deals VALUES (0, 1, '[]')")
        raise ZeroDivisionError
    assert store.deals() == [] and not store.db.in_transaction
    store.plan_deal(0, 5, BOTS)  # the store still writes
    assert store.deals() == [DealSet(0, 5, list(BOTS), set())]
    reader = Store(tmp_path / "a.db", readonly=True)
    with pytest.raises(StoreError, match=r"^cannot write to '.*a\.db': attempt to write a readonly database$"):
        reader.plan_deal(1, 5, BOTS)
    reader.close()
    store.close()


def test_settings_sandbox_levels_and_rating_system_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = new_store(path)
    assert store.settings() is None and store.sandbox_levels() == [] and store.rating_system() is None
    store.record_settings({"tables": 2, "clock": 1.5})
    store.record_settings({"tables": 3})
    for level in ("limits", "strict", "limits"):
        store.note_sandbox(level)
    store.set_ratings({"ann": Rating(31.0, 4.0), "cat": Rating(20.0, 1.5)}, "trueskill tau 0")
    store.close()
    again = Store(path, readonly=True)
    assert again.settings() == {"tables": 3}
    assert again.sandbox_levels() == ["limits", "strict"]
    assert again.rating_system() == "trueskill tau 0"
    assert again.ratings() == {"ann": Rating(31.0, 4.0), "bob": Rating(), "cat": Rating(20.0, 1.5)}
    assert again._meta("schema") == "2"
    again.close()


def test_a_new_entry_is_rated_as_asked_and_an_unchanged_one_takes_its_new_command(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    assert store.register_bot("dan", "fdan", ["go", "run"], Rating(20.0, 5.0)) is None
    assert store.ratings()["dan"] == Rating(20.0, 5.0)
    assert store.register_bot("ann", "fann", ["{python}", "ann", "--fast"]) is None
    rows = store.db.execute("SELECT name, fingerprint, command, base, retired FROM bots ORDER BY id").fetchall()
    assert rows == [("ann", "fann", '["{python}", "ann", "--fast"]', "ann", 0),
                    ("bob", "fbob", '["{python}", "bob"]', "bob", 0), ("cat", "fcat", '["{python}", "cat"]', "cat", 0),
                    ("dan", "fdan", '["go", "run"]', "dan", 0)]
    assert store.ratings()["ann"] == Rating()


def test_a_changed_program_keeps_its_matches_apart_from_the_new_version(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    summary = MatchSummary(1, 1, (1, 2, 3), (1, 2, 3), frozenset(), (), ((0.001,), (), ()))
    store.record_match(0, 0, summary, BOTS, {}, 0.1, b"")  # the ids are read and kept
    assert store.register_bot("ann", "f2", ["{python}", "ann2"], Rating(21.0, 7.0)) == "ann (old fann)"
    store.record_match(0, 1, summary, BOTS, {"ann": Rating(22.0, 6.0)}, 0.1, b"")  # the new ann
    assert store.played() == {"ann (old fann)": 1, "ann": 1, "bob": 2, "cat": 2}
    assert store.ratings()["ann"] == Rating(22.0, 6.0) and store.ratings()["ann (old fann)"] == Rating()
    rows = store.db.execute("SELECT name, fingerprint, command, base, retired FROM bots WHERE base = 'ann' "
                            "ORDER BY id").fetchall()
    assert rows == [("ann (old fann)", "fann", '["{python}", "ann"]', "ann", 1),
                    ("ann", "f2", '["{python}", "ann2"]', "ann", 0)]
    # back to the first program, from another command: it takes its entry back, with the new command
    assert store.register_bot("ann", "fann", ["{python}", "ann3"]) == "ann (old f2)"
    rows = store.db.execute("SELECT name, fingerprint, command, retired FROM bots WHERE base = 'ann' "
                            "ORDER BY id").fetchall()
    assert rows == [("ann", "fann", '["{python}", "ann3"]', 0), ("ann (old f2)", "f2", '["{python}", "ann2"]', 1)]
    assert store.played()["ann"] == 1 and store.played()["ann (old f2)"] == 1


def test_a_retired_name_takes_more_of_the_fingerprint_then_a_number_when_taken(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    for taken in ("ann (old abcd)", "ann (old abcde)"):
        store.register_bot(taken, "x", ["x"])
    store.register_bot("ann", "abcdef", ["{python}", "ann"])  # retires "fann" as "ann (old fann)"
    assert store.register_bot("ann", "g1", ["{python}", "ann"]) == "ann (old abcdef)"
    store.register_bot("ann", "abcdef", ["{python}", "ann"])  # back: g1 retired as "ann (old g1)"
    store.register_bot("ann (old abcdef #2)", "x", ["x"])
    store.db.execute("UPDATE bots SET name = 'ann (old abcdef)', base = 'none' WHERE name = 'ann (old g1)'")
    assert store.register_bot("ann", "g3", ["{python}", "ann"]) == "ann (old abcdef #3)"
    assert store.register_bot("bob", "fb2", ["{python}", "bob"]) == "bob (old fbob)"
    assert store.register_bot("cat", "q", ["{python}", "cat"]) == "cat (old fcat)"
    assert store.register_bot("cat", "r", ["{python}", "cat"]) == "cat (old q)"  # shorter than 4: all of it
    assert store.register_bot("bob", "0123456789", ["{python}", "bob"]) == "bob (old fb2)"
    assert store.register_bot("bob", "fb3", ["{python}", "bob"]) == "bob (old 0123)"  # 4 characters will do
    store.register_bot("dan (old dddd)", "x", ["x"])
    store.register_bot("dan", "dddd", ["{python}", "dan"])
    assert store.register_bot("dan", "e", ["{python}", "dan"]) == "dan (old dddd #2)"  # the first number free
    store.close()


def test_the_same_ladder_is_recognised_whatever_the_options_order_or_sequence_type(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = Store(path)
    assert store.identity() is None
    mine = LadderIdentity("lama", 4, 12, {"target": 40, "order": [3, 1]})
    store.claim(mine)
    assert store.identity() == mine and store._meta("schema") == "2"
    store.claim(LadderIdentity("lama", 4, 12, {"order": (3, 1), "target": 40}))  # the same: fine
    other = LadderIdentity("lama", 4, 12, {"target": 40, "order": [1, 3]})
    message = ("'.*a.db' holds another ladder \\(lama, 4 seats, ladder seed 12, options "
               '{"target": 40, "order": \\[3, 1\\]}\\), not lama, 4 seats, ladder seed 12, options '
               '{"target": 40, "order": \\[1, 3\\]}; use --db for a new file$')
    with pytest.raises(StoreError, match=message):
        store.claim(other)
    store.close()
    assert Store(path, readonly=True).identity() == mine


def test_a_database_of_a_newer_arena_is_refused_and_left_unlocked(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    new_store(path).close()
    newer = SCHEMA_VERSION + 1
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(f"PRAGMA user_version = {newer}")
    for readonly in (False, True):
        with pytest.raises(StoreError, match=rf"^'.*a\.db' was written by a newer arena \(ladder schema {newer}, "
                                             rf"this arena knows up to {SCHEMA_VERSION}\); upgrade arena to use it$"):
            Store(path, readonly=readonly)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    store = Store(path)  # the refused open let go of its lock
    assert store.identity() == IDENTITY
    lock = store.database._lock_fd
    assert lock is not None  # the lock's descriptor is not handed down to the bots' processes
    assert fcntl.fcntl(lock, fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    with pytest.raises(StoreError, match=r"^database '.*a\.db' is in use by another ladder; wait for it to end, "
                                         r"or use --db for a new file$"):
        Store(path)
    store.close()
    assert store.database._lock_fd is None
    store.close()  # twice is harmless
    reader = Store(path, readonly=True)
    assert reader.database._lock_fd is None and reader.readonly and not store.readonly
    writer = Store(path)  # a reader holds no lock
    writer.close()
    reader.close()


def test_an_unknown_match_names_what_the_database_holds(tmp_path: Path) -> None:
    store = new_store(tmp_path / "a.db")
    summary = MatchSummary(1, 1, (1, 2, 3), (1, 2, 3), frozenset(), (), ((), (), ()))
    store.record_match(0, 0, summary, BOTS, {}, 0.1, replay_format.compress({"seed": 1}))
    store.record_match(0, 1, summary, BOTS, {}, 0.1, b"")
    with pytest.raises(StoreError, match=r"^no match 3 in '.*a\.db' \(it holds 2 matches\)$"):
        store.replay(3)
    with pytest.raises(StoreError, match=r"^match 2 in '.*a\.db': a damaged replay"):
        store.replay(2)
    assert store.replay(1) == {"seed": 1}
    store.close()


def test_opening_messages_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"^database '.*nope\.db' does not exist$"):
        Store(tmp_path / "nope.db", readonly=True)
    with pytest.raises(StoreError, match=r"^database '.*' is a folder; give the ladder database a file's path$"):
        Store(tmp_path)
    with pytest.raises(StoreError, match=r"^cannot create database '.*dir\.db': its folder does not exist; create it "
                                         r"first$"):
        Store(tmp_path / "no" / "dir.db")
    other = tmp_path / "other.db"
    with contextlib.closing(sqlite3.connect(other)) as db:
        db.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match=r"^'.*other\.db' is an SQLite database of something else \(tables t\), "
                                         r"not an arena ladder; use --db for a new file$"):
        Store(other)
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreError, match=r"^'.*empty\.db' holds no ladder yet$"):
        Store(empty, readonly=True)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"x" * 8192)
    with pytest.raises(StoreError, match=r"^'.*junk\.db' is not a usable arena database: file is not a database; "
                                         r"use --db for a new file$"):
        Store(junk)
    bad = tmp_path / "bad.db"
    with contextlib.closing(sqlite3.connect(bad)) as db, db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("INSERT INTO meta VALUES ('ladder', '{\"game\": 1}')")
    with pytest.raises(StoreError, match=r"^'.*bad\.db' is not a usable arena database: bad ladder description "
                                         r"\('seats'\)$"):
        Store(bad)
    with contextlib.closing(sqlite3.connect(bad)) as db, db:
        db.execute("DELETE FROM meta")
    Store(bad).close()  # the failed open let go of its lock


def test_a_store_closed_from_another_thread_still_lets_go_of_its_lock(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    store = new_store(path)
    closer = threading.Thread(target=store.close)  # SQLite refuses to close it there; the lock goes all the same
    closer.start()
    closer.join()
    assert store.database._lock_fd is None
    Store(path).close()


# ----------------------------------------------------------------------- databases of older versions, the shell


def test_a_database_of_e732209_opens_upgrades_in_place_and_loses_nothing(tmp_path: Path) -> None:
    """The committed file an arena of today (e732209) wrote: read as it is, then upgraded by a writer, in place,
    with every row, replay and figure as it was, and a ladder goes on with it."""
    path = old_ladder(tmp_path)
    before = dump(path)
    reader = Store(path, readonly=True)
    board = [row.to_json() for row in reader.leaderboard()]
    results, deals = reader.results(), reader.deals()
    reader.close()
    assert dump(path) == before  # a reader changes nothing: no upgrade, no mark
    assert len(results) == 14 and [(d.deal, sorted(d.done)) for d in deals] == [
        (0, [0, 1, 2, 3]), (1, [0, 1, 2, 3]), (2, [0, 1, 2, 3]), (3, [0, 1])]
    store = Store(path)
    assert store.database.version == SCHEMA_VERSION == 3
    with contextlib.closing(sqlite3.connect(path)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0x41524E4C
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"seats_by_bot", "seats_by_bot_match", "seats_board", "seats_won", "seats_faulted", "ratings_by_bot",
            "faults_by_match"} <= indexes
    assert dump(path) == before  # schema 3 adds indexes only: every row as it was
    assert [row.to_json() for row in store.leaderboard()] == board and store.results() == results
    assert store.deals() == deals
    assert store.identity() == LadderIdentity("lama", 4, 2026, {"target": 40, "rounds": 1})
    assert store.rating_system() is not None and store.settings() == {
        "deadline": 1.0, "time_bank": 0.0, "max_faults": 3, "tables": 2, "matches": 14, "hours": None}
    assert store.played()["bravo (old c51d)"] > 0 and store.ratings().keys() == {
        "alpha", "bravo", "bravo (old c51d)", "charlie", "delta", "crashy"}
    for match_id in range(1, 15):  # every replay still re-runs to the events it stored
        data = store.replay(match_id)
        assert data["game"] == "lama" and replay_format.verify(data)[1] is None
    assert store.register_bot("alpha", "changed", ["{python}", "-c", "# alpha v2"]) == "alpha (old b78a)"
    summary = MatchSummary(1, 1, (1, 2, 3, 4), (1, 2, 3, 4), frozenset(), (), ((0.001,), (), (), ()))
    store.record_match(3, 2, summary, ("bravo", "charlie", "delta", "alpha"), {}, 0.1, b"")  # the ladder goes on
    store.close()
    again = Store(path)  # upgraded once: the next open finds nothing to do
    assert again.database.version == SCHEMA_VERSION and again.match_count() == 15
    again.close()


def test_the_read_model_reads_a_database_of_e732209_as_it_is(tmp_path: Path) -> None:
    """`arena serve` may read a ladder an older arena writes: its reads need no upgrade, and a file without the
    pages' indexes (written before them) answers the same."""
    from arena.ladder.readmodel import ReadModel

    path = old_ladder(tmp_path)
    answers = []
    for step in ("as made", "without the index of faulted seats"):
        if step != "as made":
            with contextlib.closing(sqlite3.connect(path)) as db:
                db.execute("DROP INDEX seats_faulted")
        store = Store(path, readonly=True)
        read = ReadModel(store)
        crashy = read.bot_id("crashy")
        assert crashy is not None and read.bot_id("nobody") is None
        answers.append((read.newest_match(), read.bot_count(), read.faulted_matches(crashy),
                        [f.match_id for f in read.bot_faults(crashy, 5)], read.matches(None, 3),
                        read.rotations_played({2, 3}), len(list(read.seats_since(0)))))
        store.close()
    assert answers[0] == answers[1]
    newest, bots, faulted, _, page, played, seats = answers[0]
    assert (newest, bots, seats, played) == (14, 6, 56, {2: 4, 3: 2}) and faulted > 0
    assert [m.id for m in page] == [14, 13, 12]


class ShellError(RuntimeError):
    pass


def shell_schema(*steps: str | Callable[[sqlite3.Connection], None]) -> Schema:
    return Schema(noun="test", application_id=0x54455354, error=ShellError, fix="use another file",
                  migrations=tuple(Migration(i + 1, step) for i, step in enumerate(steps)))


def test_the_shell_runs_each_migration_once_in_order_and_an_upgrade_is_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shell.db"
    ran: list[int] = []
    first = shell_schema("CREATE TABLE t (x); INSERT INTO t VALUES (1);", lambda db: ran.append(2))
    database = Database(path, first)
    assert database.version == 2 and ran == [2]
    database.close()
    Database(path, first).close()
    assert ran == [2]  # nothing more to do

    def broken(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO t VALUES (3)")
        raise sqlite3.OperationalError("a planted failure")

    for third in ("INSERT INTO t VALUES (3); INSERT INTO nowhere VALUES (4);", broken):
        with pytest.raises(ShellError, match=r"^cannot write to '.*shell\.db': .*(nowhere|planted)"):
            Database(path, shell_schema("CREATE TABLE t (x);", lambda db: ran.append(2), third))
        reader = Database(path, first, readonly=True)
        assert reader.version == 2 and reader.db.execute("SELECT x FROM t").fetchall() == [(1,)]  # as it was
        reader.close()
    database = Database(path, shell_schema("CREATE TABLE t (x);", lambda db: ran.append(2),
                                           "INSERT INTO t VALUES (3);"))
    assert database.version == 3 and database.db.execute("SELECT x FROM t").fetchall() == [(1,), (3,)]
    database.close()
    assert ran == [2]
    with pytest.raises(ShellError, match=r"written by a newer arena \(test schema 3, this arena knows up to 2\)"):
        Database(path, first, readonly=True)
    with pytest.raises(ValueError, match=r"numbered 1, 2, \.\.\. in order, not \[1, 3\]"):
        Schema(noun="test", application_id=1, error=ShellError, fix="", migrations=(Migration(1, ""), Migration(3, "")))


def test_the_shell_leaves_a_file_of_another_store_as_it_was(tmp_path: Path) -> None:
    ladder = tmp_path / "ladder.db"
    new_store(ladder).close()
    before = ladder.read_bytes()
    for readonly in (True, False):
        with pytest.raises(ShellError, match=r"something else \(tables bots, deals, faults, latency, matches\), not "
                                             r"an arena test; use another file$"):
            Database(ladder, shell_schema("CREATE TABLE t (x);"), readonly=readonly)
    assert ladder.read_bytes() == before
    with contextlib.closing(sqlite3.connect(ladder)) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0x41524E4C
