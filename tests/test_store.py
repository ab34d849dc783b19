"""The ladder database: one transaction per match, shared wins, faults, latencies, identity, locking, bad files."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from pathlib import Path

import pytest

from arena.core import replay as replay_format
from arena.core.referee import Fault, FaultKind, MatchRecord, random_seat, referee_match
from arena.games import get_game
from arena.games.base import MatchResult
from arena.ladder.ratings import Rating
from arena.ladder.store import Finished, LadderIdentity, Store, StoreError

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
        (0, 77, BOTS, frozenset({0, 2})), (1, 88, ("cat", "bob", "dan"), frozenset())]
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
             (tmp_path / "no" / "dir.db", False, "cannot open"), (tmp_path, False, "is a folder"),
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
    path = tmp_path / "old.db"
    store = new_store(path)
    store.record_match(0, 0, record((3, 1, 2)).summary(), BOTS, {"ann": Rating(30, 2)}, 0.1,
                       replay_format.compress({"seed": 1}))
    store.close()
    with contextlib.closing(sqlite3.connect(path)) as db:  # what an arena of schema 1 wrote
        db.execute("ALTER TABLE bots DROP COLUMN base")
        db.execute("ALTER TABLE bots DROP COLUMN retired")
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
        db.commit()
    reader = Store(path, readonly=True)  # a reader needs no upgrade
    assert [o.bots for o in reader.results()] == [BOTS]
    reader.close()
    store = Store(path)
    assert store._meta("schema") == "2"
    assert store.match_count() == 1 and store.replay(1) == {"seed": 1}
    assert store.rating_system() is None  # rated by an older arena: the ladder rates it again
    assert store.register_bot("ann", "new", ["{python}", "ann"]) == "ann (old fann)"
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
