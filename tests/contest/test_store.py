"""The contest's database: tokens stored as hashes only, versions and ladder names, the submission states,
entering the ladder, rate limits by a fake clock, two processes on one file, and files that are not ours."""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any, cast

import pytest

from arena.contest.store import (
    REPORT_LIMIT,
    SCHEMA_VERSION,
    AuthorError,
    ContestStore,
    ContestStoreError,
    State,
    Submission,
)
from arena.ladder.store import Store, StoreError

DAY = 86400.0


class FakeClock:
    """A clock that stands still until a test moves it."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> ContestStore:
    return ContestStore(tmp_path / "contest.db", clock=clock)


def checked(store: ContestStore, author: str, bot: str, content: str = "x") -> Submission:
    """Return a new submission of ``bot`` moved through building to checking."""
    sub = store.submissions.add(author, bot, hashlib.sha256(content.encode()).hexdigest())
    store.submissions.set_state(sub.id, State.BUILDING)
    return store.submissions.set_state(sub.id, State.CHECKING)


OLD_CONTEST = Path(__file__).resolve().parents[1] / "data" / "contest-e732209.db"
"""A contest database made by the arena of e732209, before the SQLite shell (tests/data/make_old_databases.py)."""


def old_contest(tmp_path: Path) -> Path:
    """Return a copy of :data:`OLD_CONTEST` (the committed file is never opened for writing)."""
    path = tmp_path / "old.db"
    shutil.copyfile(OLD_CONTEST, path)
    return path


def dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Return every row of every table of the database at ``path``, by table, in the order stored."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        tables = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {table: db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall() for table in tables}


def file_bytes(path: Path) -> bytes:
    """Return the bytes of the database and of its WAL and shared-memory companions."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


# authors and tokens


def test_the_token_given_once_is_accepted_and_names_its_author(store: ContestStore, clock: FakeClock) -> None:
    token = store.authors.add("alice")
    admin_token = store.authors.add("root", admin=True)
    assert re.fullmatch(r"arena_[A-Za-z0-9_-]{43}", token)
    alice = store.authors.for_token(token)
    assert alice is not None and alice.name == "alice" and not alice.admin and not alice.revoked
    assert alice.created == clock.now
    root = store.authors.for_token(admin_token)
    assert root is not None and root.name == "root" and root.admin
    assert [a.name for a in store.authors.all()] == ["alice", "root"]
    assert store.authors.get("alice") == alice and store.authors.get("nobody") is None


def test_only_the_tokens_hash_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "contest.db"
    store = ContestStore(path)
    tokens = [store.authors.add("alice"), store.authors.add("bob", admin=True)]
    tokens.append(store.authors.rotate_token("alice"))
    store.authors.revoke("bob")
    tokens.append(store.authors.restore("bob"))
    for stage in ("open", "closed"):
        data = file_bytes(path)
        for token in tokens:
            assert token.encode() not in data, stage
            assert token.removeprefix("arena_").encode() not in data, stage
        # the check reads where the rows are: the current tokens' hashes are there
        assert hashlib.sha256(tokens[-1].encode()).hexdigest().encode() in data, stage
        store.close()


@pytest.mark.parametrize("hostile", [
    "", "arena_", "arena", "arena_" + "A" * 43 + "\n", " arena_" + "A" * 43, "arena_" + "A" * 42 + "\x00",
    "arena_\ud800", "arena_" + "é" * 43, "arena_" + "A" * 10_000, "x" * 1_000_000, "' OR 1=1 --",
])
def test_malformed_and_huge_tokens_are_refused_without_raising(store: ContestStore, hostile: str) -> None:
    store.authors.add("alice")
    assert store.authors.for_token(hostile) is None


def test_tokens_that_are_not_strings_are_refused_without_raising(store: ContestStore) -> None:
    token = store.authors.add("alice")
    for hostile in (None, 42, token.encode(), [token]):
        assert store.authors.for_token(cast(Any, hostile)) is None


def test_a_wrong_token_of_the_right_shape_is_refused(store: ContestStore) -> None:
    token = store.authors.add("alice")
    assert store.authors.for_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.authors.for_token("arena_" + "A" * 43) is None


def test_rotation_stops_the_old_token_at_once(store: ContestStore) -> None:
    old = store.authors.add("alice")
    new = store.authors.rotate_token("alice")
    assert new != old
    assert store.authors.for_token(old) is None
    found = store.authors.for_token(new)
    assert found is not None and found.name == "alice"
    with pytest.raises(AuthorError, match="no author 'bob'"):
        store.authors.rotate_token("bob")


def test_revoke_keeps_the_author_and_restore_gives_a_new_token(store: ContestStore) -> None:
    old = store.authors.add("alice")
    sub = store.submissions.add("alice", "greedy", "h1")
    store.authors.revoke("alice")
    assert store.authors.for_token(old) is None
    alice = store.authors.get("alice")
    assert alice is not None and alice.revoked
    assert [s.id for s in store.submissions.all("alice")] == [sub.id]  # still on the board
    with pytest.raises(AuthorError, match="revoked"):
        store.authors.rotate_token("alice")  # a token that would not work
    with pytest.raises(AuthorError, match="revoked"):
        store.submissions.add("alice", "greedy", "h2")
    new = store.authors.restore("alice")
    assert store.authors.for_token(old) is None  # the revoked token never comes back
    found = store.authors.for_token(new)
    assert found is not None and not found.revoked
    with pytest.raises(AuthorError, match="not revoked"):
        store.authors.restore("alice")


@pytest.mark.parametrize("name", ["", "A", "-a", "_a", "a b", "a/b", "a@b", "a:b", "é", "a" * 33, "a\n", "\ud800"])
def test_names_outside_the_rule_are_refused(store: ContestStore, name: str) -> None:
    with pytest.raises(AuthorError, match="not allowed"):
        store.authors.add(name)
    assert store.authors.all() == []


def test_a_taken_name_is_refused_and_names_of_the_rule_are_taken(store: ContestStore) -> None:
    for name in ("a", "0", "a" * 32, "x-y_z9"):
        store.authors.register(name)
    with pytest.raises(AuthorError, match="'a' is taken"):
        store.authors.add("a", admin=True)
    a = store.authors.get("a")
    assert a is not None and not a.admin  # register never makes an admin


# submissions


def test_versions_count_per_author_and_bot_and_name_the_ladder_entries(store: ContestStore) -> None:
    store.authors.add("alice")
    store.authors.add("bob")
    first = store.submissions.add("alice", "greedy", "h1")
    assert (first.version, first.ladder_name, first.state, first.author) == \
        (1, "alice:greedy:v1", State.QUEUED, "alice")
    store.submissions.set_state(first.id, State.REJECTED, "does not start")
    second = store.submissions.add("alice", "greedy", "h2")
    assert (second.version, second.ladder_name) == (2, "alice:greedy:v2")  # a rejected version counts
    assert store.submissions.add("alice", "greedy", "h3").ladder_name == "alice:greedy:v3"
    assert store.submissions.add("bob", "greedy", "h1").ladder_name == "bob:greedy:v1"
    assert store.submissions.add("alice", "other", "h1").ladder_name == "alice:other:v1"
    assert store.submissions.get(second.id) == second
    with pytest.raises(AuthorError, match="no author"):
        store.submissions.add("carol", "greedy", "h1")
    with pytest.raises(AuthorError, match="not allowed"):
        store.submissions.add("alice", "a/b", "h1")


def test_ids_are_32_random_hex_digits(store: ContestStore) -> None:
    store.authors.add("alice")
    ids = [store.submissions.add("alice", "greedy", f"h{i}").id for i in range(50)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", sid) for sid in ids)
    assert len(set(ids)) == 50
    assert store.submissions.get("0" * 32) is None and store.submissions.get("../etc") is None
    assert store.submissions.get(cast(Any, None)) is None


def test_the_way_through_sets_states_reasons_and_times(store: ContestStore, clock: FakeClock) -> None:
    store.authors.add("alice")
    sub = store.submissions.add("alice", "greedy", "h1")
    clock.advance(5)
    building = store.submissions.set_state(sub.id, State.BUILDING, "building on worker 1")
    assert (building.state, building.reason, building.created, building.updated) == (
        State.BUILDING, "building on worker 1", sub.created, sub.created + 5)
    store.submissions.set_state(sub.id, State.CHECKING)
    assert store.submissions.enter_ladder(sub.id) == []
    clock.advance(5)
    retired = store.submissions.set_state(sub.id, State.RETIRED, "withdrawn")
    assert (retired.state, retired.reason, retired.updated) == (State.RETIRED, "withdrawn", sub.created + 10)
    assert store.submissions.get(sub.id) == retired


@pytest.mark.parametrize(("path", "target"), [
    ((), State.CHECKING),
    ((), State.RETIRED),
    ((State.BUILDING,), State.RETIRED),
    ((State.BUILDING, State.CHECKING), State.BUILDING),
    ((State.REJECTED,), State.QUEUED),
    ((State.REJECTED,), State.REJECTED),
    ((State.BUILDING, State.CHECKING, State.PLAYING, State.RETIRED), State.QUEUED),
])
def test_moves_outside_the_rules_are_refused_naming_both_states(
        store: ContestStore, path: tuple[State, ...], target: State) -> None:
    store.authors.add("alice")
    sid = store.submissions.add("alice", "greedy", "h1").id
    for state in path:
        if state is State.PLAYING:
            store.submissions.enter_ladder(sid)
        else:
            store.submissions.set_state(sid, state)
    before = store.submissions.get(sid)
    assert before is not None
    with pytest.raises(ValueError, match=f"from {before.state.value} to {target.value}"):
        store.submissions.set_state(sid, target)
    assert store.submissions.get(sid) == before


@pytest.mark.parametrize(("path", "target"), [
    ((), State.QUEUED),
    ((), State.REJECTED),
    ((State.BUILDING,), State.QUEUED),
    ((State.BUILDING,), State.REJECTED),
    ((State.BUILDING, State.CHECKING), State.QUEUED),
    ((State.BUILDING, State.CHECKING), State.REJECTED),
    ((State.BUILDING, State.CHECKING, State.PLAYING), State.REJECTED),
    ((State.BUILDING, State.CHECKING, State.PLAYING, State.RETIRED), State.REJECTED),
    ((State.BUILDING, State.CHECKING, State.PLAYING), State.QUEUED),  # its folder was lost: built again
])
def test_resumes_and_disabling_are_allowed(store: ContestStore, path: tuple[State, ...], target: State) -> None:
    store.authors.add("alice")
    sid = store.submissions.add("alice", "greedy", "h1").id
    for state in path:
        if state is State.PLAYING:
            store.submissions.enter_ladder(sid)
        else:
            store.submissions.set_state(sid, state)
    assert store.submissions.set_state(sid, target, "why").state is target


def test_playing_is_entered_only_through_enter_ladder(store: ContestStore) -> None:
    store.authors.add("alice")
    sub = checked(store, "alice", "greedy")
    with pytest.raises(ValueError, match="enter_ladder"):
        store.submissions.set_state(sub.id, State.PLAYING)
    with pytest.raises(TypeError):
        store.submissions.set_state(sub.id, cast(Any, "rejected"))
    queued = store.submissions.add("alice", "other", "h")
    with pytest.raises(ValueError, match="from queued to playing"):
        store.submissions.enter_ladder(queued.id)
    with pytest.raises(KeyError):
        store.submissions.enter_ladder("f" * 32)
    with pytest.raises(KeyError):
        store.submissions.set_state("f" * 32, State.QUEUED)


def test_entering_the_ladder_retires_the_previous_version_of_that_bot_only(store: ContestStore) -> None:
    store.authors.add("alice")
    store.authors.add("bob")
    v1 = checked(store, "alice", "greedy")
    other = checked(store, "alice", "careful")
    bobs = checked(store, "bob", "greedy")
    for sub in (v1, other, bobs):
        assert store.submissions.enter_ladder(sub.id) == []
    v2 = checked(store, "alice", "greedy", "new")
    retired = store.submissions.enter_ladder(v2.id)
    assert [(s.id, s.state, s.reason) for s in retired] == [(v1.id, State.RETIRED, "replaced by version 2")]
    assert {s.ladder_name for s in store.submissions.playing()} == {"alice:greedy:v2", "alice:careful:v1",
                                                                      "bob:greedy:v1"}
    assert [s.id for s in store.submissions.active("alice")] == [other.id, v2.id]
    assert [s.id for s in store.submissions.active("bob")] == [bobs.id]


def test_an_older_version_that_finishes_its_check_late_does_not_replace_a_newer_one(store: ContestStore) -> None:
    store.authors.add("alice")
    v1 = checked(store, "alice", "greedy", "a")
    v2 = checked(store, "alice", "greedy", "b")
    assert store.submissions.enter_ladder(v2.id) == []
    late = store.submissions.enter_ladder(v1.id)
    assert [(s.id, s.state) for s in late] == [(v1.id, State.RETIRED)]
    assert [s.id for s in store.submissions.playing()] == [v2.id]


def test_unfinished_work_is_taken_up_oldest_first(store: ContestStore, clock: FakeClock) -> None:
    store.authors.add("alice")
    subs = [store.submissions.add("alice", f"bot{i}", "h") for i in range(6)]
    clock.advance(-100)  # a clock stepping back changes no order: submissions keep theirs
    late = store.submissions.add("alice", "late", "h")
    store.submissions.set_state(subs[1].id, State.BUILDING)
    store.submissions.set_state(subs[2].id, State.BUILDING)
    store.submissions.set_state(subs[2].id, State.CHECKING)
    store.submissions.set_state(subs[3].id, State.REJECTED)
    store.submissions.set_state(subs[4].id, State.BUILDING)
    store.submissions.set_state(subs[4].id, State.CHECKING)
    store.submissions.enter_ladder(subs[4].id)
    store.submissions.set_state(subs[1].id, State.QUEUED, "resumed")
    assert [s.id for s in store.submissions.unfinished()] == [subs[0].id, subs[1].id, subs[2].id, subs[5].id, late.id]
    assert [s.id for s in store.submissions.all("alice")] == [late.id, *[s.id for s in reversed(subs)]]


def test_submissions_lists_newest_first_by_author_or_all(store: ContestStore) -> None:
    store.authors.add("alice")
    store.authors.add("bob")
    a1 = store.submissions.add("alice", "greedy", "h")
    b1 = store.submissions.add("bob", "greedy", "h")
    a2 = store.submissions.add("alice", "greedy", "h")
    assert [s.id for s in store.submissions.all()] == [a2.id, b1.id, a1.id]
    assert [s.id for s in store.submissions.all("alice")] == [a2.id, a1.id]
    assert store.submissions.all("carol") == [] and store.submissions.all("\ud800") == []


def test_submissions_a_day_are_counted_by_the_clock(store: ContestStore, clock: FakeClock) -> None:
    store.authors.add("alice")
    store.authors.add("bob")
    store.submissions.add("alice", "greedy", "h")
    clock.advance(3600)
    rejected = store.submissions.add("alice", "greedy", "h")
    store.submissions.set_state(rejected.id, State.REJECTED)
    store.submissions.add("bob", "greedy", "h")
    assert store.submissions.count_since("alice", clock() - DAY) == 2  # rejected ones count
    clock.advance(DAY - 1800)
    assert store.submissions.count_since("alice", clock() - DAY) == 1
    clock.advance(3600)
    assert store.submissions.count_since("alice", clock() - DAY) == 0
    assert store.submissions.count_since("bob", clock() - 2 * DAY) == 1
    assert store.submissions.count_since("carol", 0.0) == 0


def test_a_report_is_kept_bounded(store: ContestStore) -> None:
    store.authors.add("alice")
    sub = store.submissions.add("alice", "greedy", "h")
    assert store.reports.get(sub.id) == ""
    store.reports.set(sub.id, "ok: 10 matches played\n")
    assert store.reports.get(sub.id) == "ok: 10 matches played\n"
    huge = "é" * REPORT_LIMIT + "the end"
    store.reports.set(sub.id, huge)
    kept = store.reports.get(sub.id)
    assert len(kept.encode()) <= REPORT_LIMIT
    assert kept.startswith("é" * 1000) and "the end" not in kept
    assert kept.endswith("KiB are kept]") and f"{len(huge.encode())} bytes" in kept
    store.reports.set(sub.id, "bot said \ud800")
    assert store.reports.get(sub.id) == "bot said ?"
    with pytest.raises(KeyError):
        store.reports.set("a" * 32, "x")
    with pytest.raises(KeyError):
        store.reports.get("a" * 32)


# sessions


def test_a_session_lives_in_the_database_until_it_expires_or_is_closed(store: ContestStore, tmp_path: Path,
                                                                       clock: FakeClock) -> None:
    store.authors.add("alice")
    sid, csrf, expires = store.sessions.open("alice", 3600)
    assert expires == clock() + 3600
    again = ContestStore(tmp_path / "contest.db", clock=clock)  # a restarted contest still knows it
    found = again.sessions.get(sid)
    assert found is not None and found[0].name == "alice" and found[1:] == (csrf, expires)
    other, _, _ = store.sessions.open("alice", 3600)
    assert other != sid and store.sessions.get(other) is not None  # a new id at every login
    store.sessions.close(sid)
    assert again.sessions.get(sid) is None and store.sessions.get(other) is not None
    clock.advance(3600)
    assert store.sessions.get(other) is None  # expired
    assert store.sessions.get("x" * 43) is None and store.sessions.get(None) is None
    assert store.sessions.get("\ud800" * 43) is None
    with pytest.raises(AuthorError):
        store.sessions.open("nobody", 60)


def test_revoking_or_rotating_ends_the_authors_sessions_and_only_theirs(store: ContestStore) -> None:
    store.authors.add("alice")
    store.authors.add("bob")
    alice, _, _ = store.sessions.open("alice", 3600)
    bob, _, _ = store.sessions.open("bob", 3600)
    store.authors.rotate_token("alice")
    assert store.sessions.get(alice) is None and store.sessions.get(bob) is not None
    alice, _, _ = store.sessions.open("alice", 3600)
    store.authors.revoke("alice")
    assert store.sessions.get(alice) is None and store.sessions.get(bob) is not None
    with pytest.raises(AuthorError, match="revoked"):
        store.sessions.open("alice", 3600)


def test_a_database_of_e732209_opens_upgrades_in_place_and_loses_nothing(tmp_path: Path) -> None:
    """The committed file an arena of today (e732209) wrote: marked as the contest's in place, every row as it
    was, and the service goes on with it."""
    path = old_contest(tmp_path)
    before = dump(path)
    store = ContestStore(path, clock=FakeClock(1_900_000_000.0))
    assert store.database.version == SCHEMA_VERSION == 4
    after = dump(path)
    # schema 2 already: the header's mark is new, and schema 3's scrimmages (empty tables, and every author may be
    # chosen as an opponent until they say otherwise) and schema 4's finals (empty tables)
    assert after.pop("authors") == [(*row, 1) for row in before.pop("authors")]
    assert {k: after.pop(k) for k in ("scrimmages", "scrimmage_deals", "scrimmage_matches")} == {
        "scrimmages": [], "scrimmage_deals": [], "scrimmage_matches": []}
    assert after.pop("finalist_marks") == after.pop("finals_meta") == []
    assert after == before
    assert store.authors.scrimmage_opponent("ann") and not store.authors.scrimmage_opponent("nobody")
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == 0x41524E43
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert [(a.name, a.admin, a.revoked) for a in store.authors.all()] == [
        ("ann", False, False), ("bob", False, True), ("root", True, False)]
    subs = store.submissions.all("ann")
    assert [(s.bot, s.version, s.state) for s in subs] == [
        ("broken", 1, State.REJECTED), ("steady", 2, State.PLAYING), ("steady", 1, State.RETIRED),
        ("greedy", 1, State.QUEUED)]
    assert subs[0].reason == "build failed: exit 2" and "Error 2" in store.reports.get(subs[0].id)
    assert "12 matches" in store.reports.get(subs[2].id) and store.reports.get(subs[1].id) == ""
    assert [s.id for s in store.submissions.unfinished()] == [subs[3].id]
    assert [s.id for s in store.submissions.playing()] == [subs[1].id]
    # the attempt stored at its login (10^8 s ago, in a window of 10^9) still counts
    assert store.limits.allow("login", "127.0.0.1", 2, 1e9) and not store.limits.allow("login", "127.0.0.1", 2, 1e9)
    token = store.authors.rotate_token("ann")  # the old token's hash gives way; ann's session ends with it
    found = store.authors.for_token(token)
    assert found is not None and found.name == "ann"
    assert store.submissions.add("ann", "steady", "sha256:5").version == 3
    store.close()


def test_a_schema_1_database_gains_the_sessions_and_keeps_its_authors(tmp_path: Path, clock: FakeClock) -> None:
    path = old_contest(tmp_path)
    with sqlite3.connect(path) as db:  # what the first contest release wrote
        db.execute("DROP TABLE sessions")
        db.execute("UPDATE contest_meta SET value = '1' WHERE key = 'schema'")
    before = dump(path)
    store = ContestStore(path, clock=clock)
    assert store.database.version == SCHEMA_VERSION
    sid, _, _ = store.sessions.open("ann", 60)
    assert store.sessions.get(sid) is not None
    after = dump(path)
    assert after.pop("contest_meta") == [("application", "arena contest"), ("schema", "2")]
    assert after.pop("authors") == [(*row, 1) for row in before.pop("authors")]
    for table in ("scrimmages", "scrimmage_deals", "scrimmage_matches", "finalist_marks", "finals_meta"):
        assert after.pop(table) == []
    assert after.pop("sessions") != [] and {k: v for k, v in before.items() if k != "contest_meta"} == after


# rate limits


def test_allow_counts_attempts_in_a_sliding_window(store: ContestStore, clock: FakeClock) -> None:
    assert [store.limits.allow("login", "10.0.0.1", 3, 60) for _ in range(3)] == [True, True, True]
    assert store.limits.allow("login", "10.0.0.1", 3, 60) is False
    assert store.limits.allow("login", "10.0.0.2", 3, 60) is True  # another key
    assert store.limits.allow("upload", "10.0.0.1", 3, 60) is True  # another kind
    clock.advance(59)
    assert [store.limits.allow("login", "10.0.0.1", 3, 60) for _ in range(3)] == [False, False, False]
    clock.advance(1)  # the first four are 60 seconds old, out of the window; the three refused ones count
    assert store.limits.allow("login", "10.0.0.1", 3, 60) is False  # so hammering keeps the door shut
    clock.advance(59.5)  # the three at second 59 are out; the one at second 60 is in
    assert store.limits.allow("login", "10.0.0.1", 3, 60) is True
    assert store.limits.allow("login", "10.0.0.1", 3, 60) is True
    assert store.limits.allow("login", "10.0.0.1", 3, 60) is False
    with pytest.raises(ValueError, match="positive"):
        store.limits.allow("login", "x", 3, 0)


def test_allow_prunes_attempts_past_their_window(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    store = ContestStore(path, clock=clock)
    for i in range(100):
        store.limits.allow("login", f"10.0.0.{i}", 5, 60)
    clock.advance(61)
    store.limits.allow("login", "10.0.1.1", 5, 60)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1


# files and processes


def test_two_stores_on_one_file_see_each_others_writes(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    service, cli = ContestStore(path, clock=clock), ContestStore(path, clock=clock)
    token = cli.authors.add("alice")
    assert service.authors.for_token(token) is not None
    sub = service.submissions.add("alice", "greedy", "h")
    assert [s.id for s in cli.submissions.all("alice")] == [sub.id]
    new = cli.authors.rotate_token("alice")
    assert service.authors.for_token(token) is None and service.authors.for_token(new) is not None
    cli.authors.revoke("alice")
    assert service.authors.for_token(new) is None
    assert service.limits.allow("login", "a", 1, 60) and not cli.limits.allow("login", "a", 1, 60)


@pytest.mark.process
def test_two_processes_writing_at_once_never_share_a_version(tmp_path: Path) -> None:
    path = tmp_path / "contest.db"
    ContestStore(path).authors.add("alice")
    script = textwrap.dedent(f"""
        from arena.contest.store import ContestStore
        store = ContestStore({str(path)!r})
        for _ in range(40):
            store.submissions.add("alice", "greedy", "h")
            store.limits.allow("upload", "alice", 1000, 60)
    """)
    root = Path(__file__).resolve().parents[2]
    writers = [subprocess.Popen([sys.executable, "-c", script], cwd=root, stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    errors = [writer.communicate(timeout=120)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0], errors
    subs = ContestStore(path).submissions.all("alice")
    assert sorted(s.version for s in subs) == list(range(1, 121))


def test_threads_sharing_one_store_take_turns(store: ContestStore) -> None:
    store.authors.add("alice")
    failures: list[BaseException] = []

    def submit() -> None:
        try:
            for _ in range(25):
                store.submissions.add("alice", "greedy", "h")
                store.submissions.all("alice")
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(s.version for s in store.submissions.all("alice")) == list(range(1, 101))


def test_reopening_keeps_everything(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    with ContestStore(path, clock=clock) as store:
        token = store.authors.add("alice", admin=True)
        store.authors.add("bob")
        store.authors.revoke("bob")
        sub = checked(store, "alice", "greedy")
        store.submissions.enter_ladder(sub.id)
        store.reports.set(sub.id, "fine")
        store.limits.allow("login", "a", 1, 60)
        before = (store.authors.all(), store.submissions.all())
    with ContestStore(path, clock=clock) as store:
        assert (store.authors.all(), store.submissions.all()) == before
        found = store.authors.for_token(token)
        assert found is not None and found.admin
        assert store.reports.get(sub.id) == "fine"
        assert [s.id for s in store.submissions.playing()] == [sub.id]
        assert store.limits.allow("login", "a", 1, 60) is False
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(ContestStoreError, match=r"notes\.db.*not a usable arena database.*its own file"):
        ContestStore(path)
    assert path.read_bytes() == b"these are my notes, not a database\n" * 200


def test_another_sqlite_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT, value TEXT)")
    before = path.read_bytes()
    with pytest.raises(ContestStoreError, match=r"other\.db.*something else.*its own file"):
        ContestStore(path)
    assert path.read_bytes() == before
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_the_ladder_and_the_contest_refuse_each_others_files(tmp_path: Path) -> None:
    ladder = Store(tmp_path / "ladder.db")
    ladder.close()
    with pytest.raises(ContestStoreError, match="something else"):
        ContestStore(tmp_path / "ladder.db")
    ContestStore(tmp_path / "contest.db").close()
    with pytest.raises(StoreError, match="something else"):
        Store(tmp_path / "contest.db")


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "contest.db"
    ContestStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(ContestStoreError, match=f"newer arena.*schema {SCHEMA_VERSION + 1}.*upgrade arena"):
        ContestStore(path)
    old = old_contest(tmp_path)  # a file from before the shell says its version in contest_meta
    with sqlite3.connect(old) as db:
        db.execute("UPDATE contest_meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(ContestStoreError, match=f"newer arena.*schema {SCHEMA_VERSION + 1}.*upgrade arena"):
        ContestStore(old)
    with sqlite3.connect(old) as db:
        db.execute("UPDATE contest_meta SET value = 'two' WHERE key = 'schema'")
    with pytest.raises(ContestStoreError, match="no readable contest schema version; it is damaged"):
        ContestStore(old)


def test_a_folder_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ContestStoreError, match="is a folder"):
        ContestStore(tmp_path)
    with pytest.raises(ContestStoreError, match="folder does not exist"):
        ContestStore(tmp_path / "missing" / "contest.db")


def test_a_closed_store_raises_its_own_error(tmp_path: Path) -> None:
    store = ContestStore(tmp_path / "contest.db")
    store.close()
    with pytest.raises(ContestStoreError, match=r"contest\.db.*closed"):
        store.authors.add("alice")
