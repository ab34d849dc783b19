"""The contest's database: tokens stored as hashes only, versions and ladder names, the submission states,
entering the ladder, rate limits by a fake clock, two processes on one file, and files that are not ours."""

from __future__ import annotations

import hashlib
import re
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
    sub = store.add_submission(author, bot, hashlib.sha256(content.encode()).hexdigest())
    store.set_state(sub.id, State.BUILDING)
    return store.set_state(sub.id, State.CHECKING)


def file_bytes(path: Path) -> bytes:
    """Return the bytes of the database and of its WAL and shared-memory companions."""
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists())


# authors and tokens


def test_the_token_given_once_is_accepted_and_names_its_author(store: ContestStore, clock: FakeClock) -> None:
    token = store.add_author("alice")
    admin_token = store.add_author("root", admin=True)
    assert re.fullmatch(r"arena_[A-Za-z0-9_-]{43}", token)
    alice = store.author_for_token(token)
    assert alice is not None and alice.name == "alice" and not alice.admin and not alice.revoked
    assert alice.created == clock.now
    root = store.author_for_token(admin_token)
    assert root is not None and root.name == "root" and root.admin
    assert [a.name for a in store.authors()] == ["alice", "root"]
    assert store.author("alice") == alice and store.author("nobody") is None


def test_only_the_tokens_hash_is_stored(tmp_path: Path) -> None:
    path = tmp_path / "contest.db"
    store = ContestStore(path)
    tokens = [store.add_author("alice"), store.add_author("bob", admin=True)]
    tokens.append(store.rotate_token("alice"))
    store.revoke("bob")
    tokens.append(store.restore("bob"))
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
    store.add_author("alice")
    assert store.author_for_token(hostile) is None


def test_tokens_that_are_not_strings_are_refused_without_raising(store: ContestStore) -> None:
    token = store.add_author("alice")
    for hostile in (None, 42, token.encode(), [token]):
        assert store.author_for_token(cast(Any, hostile)) is None


def test_a_wrong_token_of_the_right_shape_is_refused(store: ContestStore) -> None:
    token = store.add_author("alice")
    assert store.author_for_token(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.author_for_token("arena_" + "A" * 43) is None


def test_rotation_stops_the_old_token_at_once(store: ContestStore) -> None:
    old = store.add_author("alice")
    new = store.rotate_token("alice")
    assert new != old
    assert store.author_for_token(old) is None
    found = store.author_for_token(new)
    assert found is not None and found.name == "alice"
    with pytest.raises(AuthorError, match="no author 'bob'"):
        store.rotate_token("bob")


def test_revoke_keeps_the_author_and_restore_gives_a_new_token(store: ContestStore) -> None:
    old = store.add_author("alice")
    sub = store.add_submission("alice", "greedy", "h1")
    store.revoke("alice")
    assert store.author_for_token(old) is None
    alice = store.author("alice")
    assert alice is not None and alice.revoked
    assert [s.id for s in store.submissions("alice")] == [sub.id]  # still on the board
    with pytest.raises(AuthorError, match="revoked"):
        store.rotate_token("alice")  # a token that would not work
    with pytest.raises(AuthorError, match="revoked"):
        store.add_submission("alice", "greedy", "h2")
    new = store.restore("alice")
    assert store.author_for_token(old) is None  # the revoked token never comes back
    found = store.author_for_token(new)
    assert found is not None and not found.revoked
    with pytest.raises(AuthorError, match="not revoked"):
        store.restore("alice")


@pytest.mark.parametrize("name", ["", "A", "-a", "_a", "a b", "a/b", "a@b", "a:b", "é", "a" * 33, "a\n", "\ud800"])
def test_names_outside_the_rule_are_refused(store: ContestStore, name: str) -> None:
    with pytest.raises(AuthorError, match="not allowed"):
        store.add_author(name)
    assert store.authors() == []


def test_a_taken_name_is_refused_and_names_of_the_rule_are_taken(store: ContestStore) -> None:
    for name in ("a", "0", "a" * 32, "x-y_z9"):
        store.register(name)
    with pytest.raises(AuthorError, match="'a' is taken"):
        store.add_author("a", admin=True)
    a = store.author("a")
    assert a is not None and not a.admin  # register never makes an admin


# submissions


def test_versions_count_per_author_and_bot_and_name_the_ladder_entries(store: ContestStore) -> None:
    store.add_author("alice")
    store.add_author("bob")
    first = store.add_submission("alice", "greedy", "h1")
    assert (first.version, first.ladder_name, first.state, first.author) == \
        (1, "alice:greedy:v1", State.QUEUED, "alice")
    store.set_state(first.id, State.REJECTED, "does not start")
    second = store.add_submission("alice", "greedy", "h2")
    assert (second.version, second.ladder_name) == (2, "alice:greedy:v2")  # a rejected version counts
    assert store.add_submission("alice", "greedy", "h3").ladder_name == "alice:greedy:v3"
    assert store.add_submission("bob", "greedy", "h1").ladder_name == "bob:greedy:v1"
    assert store.add_submission("alice", "other", "h1").ladder_name == "alice:other:v1"
    assert store.submission(second.id) == second
    with pytest.raises(AuthorError, match="no author"):
        store.add_submission("carol", "greedy", "h1")
    with pytest.raises(AuthorError, match="not allowed"):
        store.add_submission("alice", "a/b", "h1")


def test_ids_are_32_random_hex_digits(store: ContestStore) -> None:
    store.add_author("alice")
    ids = [store.add_submission("alice", "greedy", f"h{i}").id for i in range(50)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", sid) for sid in ids)
    assert len(set(ids)) == 50
    assert store.submission("0" * 32) is None and store.submission("../etc") is None
    assert store.submission(cast(Any, None)) is None


def test_the_way_through_sets_states_reasons_and_times(store: ContestStore, clock: FakeClock) -> None:
    store.add_author("alice")
    sub = store.add_submission("alice", "greedy", "h1")
    clock.advance(5)
    building = store.set_state(sub.id, State.BUILDING, "building on worker 1")
    assert (building.state, building.reason, building.created, building.updated) == (
        State.BUILDING, "building on worker 1", sub.created, sub.created + 5)
    store.set_state(sub.id, State.CHECKING)
    assert store.enter_ladder(sub.id) == []
    clock.advance(5)
    retired = store.set_state(sub.id, State.RETIRED, "withdrawn")
    assert (retired.state, retired.reason, retired.updated) == (State.RETIRED, "withdrawn", sub.created + 10)
    assert store.submission(sub.id) == retired


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
    store.add_author("alice")
    sid = store.add_submission("alice", "greedy", "h1").id
    for state in path:
        if state is State.PLAYING:
            store.enter_ladder(sid)
        else:
            store.set_state(sid, state)
    before = store.submission(sid)
    assert before is not None
    with pytest.raises(ValueError, match=f"from {before.state.value} to {target.value}"):
        store.set_state(sid, target)
    assert store.submission(sid) == before


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
    store.add_author("alice")
    sid = store.add_submission("alice", "greedy", "h1").id
    for state in path:
        if state is State.PLAYING:
            store.enter_ladder(sid)
        else:
            store.set_state(sid, state)
    assert store.set_state(sid, target, "why").state is target


def test_playing_is_entered_only_through_enter_ladder(store: ContestStore) -> None:
    store.add_author("alice")
    sub = checked(store, "alice", "greedy")
    with pytest.raises(ValueError, match="enter_ladder"):
        store.set_state(sub.id, State.PLAYING)
    with pytest.raises(TypeError):
        store.set_state(sub.id, cast(Any, "rejected"))
    queued = store.add_submission("alice", "other", "h")
    with pytest.raises(ValueError, match="from queued to playing"):
        store.enter_ladder(queued.id)
    with pytest.raises(KeyError):
        store.enter_ladder("f" * 32)
    with pytest.raises(KeyError):
        store.set_state("f" * 32, State.QUEUED)


def test_entering_the_ladder_retires_the_previous_version_of_that_bot_only(store: ContestStore) -> None:
    store.add_author("alice")
    store.add_author("bob")
    v1 = checked(store, "alice", "greedy")
    other = checked(store, "alice", "careful")
    bobs = checked(store, "bob", "greedy")
    for sub in (v1, other, bobs):
        assert store.enter_ladder(sub.id) == []
    v2 = checked(store, "alice", "greedy", "new")
    retired = store.enter_ladder(v2.id)
    assert [(s.id, s.state, s.reason) for s in retired] == [(v1.id, State.RETIRED, "replaced by version 2")]
    assert {s.ladder_name for s in store.playing()} == {"alice:greedy:v2", "alice:careful:v1", "bob:greedy:v1"}
    assert [s.id for s in store.active("alice")] == [other.id, v2.id]
    assert [s.id for s in store.active("bob")] == [bobs.id]


def test_an_older_version_that_finishes_its_check_late_does_not_replace_a_newer_one(store: ContestStore) -> None:
    store.add_author("alice")
    v1 = checked(store, "alice", "greedy", "a")
    v2 = checked(store, "alice", "greedy", "b")
    assert store.enter_ladder(v2.id) == []
    late = store.enter_ladder(v1.id)
    assert [(s.id, s.state) for s in late] == [(v1.id, State.RETIRED)]
    assert [s.id for s in store.playing()] == [v2.id]


def test_unfinished_work_is_taken_up_oldest_first(store: ContestStore, clock: FakeClock) -> None:
    store.add_author("alice")
    subs = [store.add_submission("alice", f"bot{i}", "h") for i in range(6)]
    clock.advance(-100)  # a clock stepping back changes no order: submissions keep theirs
    late = store.add_submission("alice", "late", "h")
    store.set_state(subs[1].id, State.BUILDING)
    store.set_state(subs[2].id, State.BUILDING)
    store.set_state(subs[2].id, State.CHECKING)
    store.set_state(subs[3].id, State.REJECTED)
    store.set_state(subs[4].id, State.BUILDING)
    store.set_state(subs[4].id, State.CHECKING)
    store.enter_ladder(subs[4].id)
    store.set_state(subs[1].id, State.QUEUED, "resumed")
    assert [s.id for s in store.unfinished()] == [subs[0].id, subs[1].id, subs[2].id, subs[5].id, late.id]
    assert [s.id for s in store.submissions("alice")] == [late.id, *[s.id for s in reversed(subs)]]


def test_submissions_lists_newest_first_by_author_or_all(store: ContestStore) -> None:
    store.add_author("alice")
    store.add_author("bob")
    a1 = store.add_submission("alice", "greedy", "h")
    b1 = store.add_submission("bob", "greedy", "h")
    a2 = store.add_submission("alice", "greedy", "h")
    assert [s.id for s in store.submissions()] == [a2.id, b1.id, a1.id]
    assert [s.id for s in store.submissions("alice")] == [a2.id, a1.id]
    assert store.submissions("carol") == [] and store.submissions("\ud800") == []


def test_submissions_a_day_are_counted_by_the_clock(store: ContestStore, clock: FakeClock) -> None:
    store.add_author("alice")
    store.add_author("bob")
    store.add_submission("alice", "greedy", "h")
    clock.advance(3600)
    rejected = store.add_submission("alice", "greedy", "h")
    store.set_state(rejected.id, State.REJECTED)
    store.add_submission("bob", "greedy", "h")
    assert store.submissions_since("alice", clock() - DAY) == 2  # rejected ones count
    clock.advance(DAY - 1800)
    assert store.submissions_since("alice", clock() - DAY) == 1
    clock.advance(3600)
    assert store.submissions_since("alice", clock() - DAY) == 0
    assert store.submissions_since("bob", clock() - 2 * DAY) == 1
    assert store.submissions_since("carol", 0.0) == 0


def test_a_report_is_kept_bounded(store: ContestStore) -> None:
    store.add_author("alice")
    sub = store.add_submission("alice", "greedy", "h")
    assert store.report(sub.id) == ""
    store.set_report(sub.id, "ok: 10 matches played\n")
    assert store.report(sub.id) == "ok: 10 matches played\n"
    huge = "é" * REPORT_LIMIT + "the end"
    store.set_report(sub.id, huge)
    kept = store.report(sub.id)
    assert len(kept.encode()) <= REPORT_LIMIT
    assert kept.startswith("é" * 1000) and "the end" not in kept
    assert kept.endswith("KiB are kept]") and f"{len(huge.encode())} bytes" in kept
    store.set_report(sub.id, "bot said \ud800")
    assert store.report(sub.id) == "bot said ?"
    with pytest.raises(KeyError):
        store.set_report("a" * 32, "x")
    with pytest.raises(KeyError):
        store.report("a" * 32)


# sessions


def test_a_session_lives_in_the_database_until_it_expires_or_is_closed(store: ContestStore, tmp_path: Path,
                                                                       clock: FakeClock) -> None:
    store.add_author("alice")
    sid, csrf, expires = store.open_session("alice", 3600)
    assert expires == clock() + 3600
    again = ContestStore(tmp_path / "contest.db", clock=clock)  # a restarted contest still knows it
    found = again.session(sid)
    assert found is not None and found[0].name == "alice" and found[1:] == (csrf, expires)
    other, _, _ = store.open_session("alice", 3600)
    assert other != sid and store.session(other) is not None  # a new id at every login
    store.close_session(sid)
    assert again.session(sid) is None and store.session(other) is not None
    clock.advance(3600)
    assert store.session(other) is None  # expired
    assert store.session("x" * 43) is None and store.session(None) is None and store.session("\ud800" * 43) is None
    with pytest.raises(AuthorError):
        store.open_session("nobody", 60)


def test_revoking_or_rotating_ends_the_authors_sessions_and_only_theirs(store: ContestStore) -> None:
    store.add_author("alice")
    store.add_author("bob")
    alice, _, _ = store.open_session("alice", 3600)
    bob, _, _ = store.open_session("bob", 3600)
    store.rotate_token("alice")
    assert store.session(alice) is None and store.session(bob) is not None
    alice, _, _ = store.open_session("alice", 3600)
    store.revoke("alice")
    assert store.session(alice) is None and store.session(bob) is not None
    with pytest.raises(AuthorError, match="revoked"):
        store.open_session("alice", 3600)


def test_a_schema_1_database_gains_the_sessions_and_keeps_its_authors(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "old.db"
    ContestStore(path, clock=clock).add_author("alice")
    with sqlite3.connect(path) as db:  # what the first contest release wrote
        db.execute("DROP TABLE sessions")
        db.execute("UPDATE contest_meta SET value = '1' WHERE key = 'schema'")
    store = ContestStore(path, clock=clock)
    sid, _, _ = store.open_session("alice", 60)
    assert store.session(sid) is not None
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM contest_meta WHERE key = 'schema'").fetchone() == ("2",)


# rate limits


def test_allow_counts_attempts_in_a_sliding_window(store: ContestStore, clock: FakeClock) -> None:
    assert [store.allow("login", "10.0.0.1", 3, 60) for _ in range(3)] == [True, True, True]
    assert store.allow("login", "10.0.0.1", 3, 60) is False
    assert store.allow("login", "10.0.0.2", 3, 60) is True  # another key
    assert store.allow("upload", "10.0.0.1", 3, 60) is True  # another kind
    clock.advance(59)
    assert [store.allow("login", "10.0.0.1", 3, 60) for _ in range(3)] == [False, False, False]
    clock.advance(1)  # the first four are 60 seconds old, out of the window; the three refused ones count
    assert store.allow("login", "10.0.0.1", 3, 60) is False  # so hammering keeps the door shut
    clock.advance(59.5)  # the three at second 59 are out; the one at second 60 is in
    assert store.allow("login", "10.0.0.1", 3, 60) is True
    assert store.allow("login", "10.0.0.1", 3, 60) is True
    assert store.allow("login", "10.0.0.1", 3, 60) is False
    with pytest.raises(ValueError, match="positive"):
        store.allow("login", "x", 3, 0)


def test_allow_prunes_attempts_past_their_window(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    store = ContestStore(path, clock=clock)
    for i in range(100):
        store.allow("login", f"10.0.0.{i}", 5, 60)
    clock.advance(61)
    store.allow("login", "10.0.1.1", 5, 60)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM attempts").fetchone()[0] == 1


# files and processes


def test_two_stores_on_one_file_see_each_others_writes(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    service, cli = ContestStore(path, clock=clock), ContestStore(path, clock=clock)
    token = cli.add_author("alice")
    assert service.author_for_token(token) is not None
    sub = service.add_submission("alice", "greedy", "h")
    assert [s.id for s in cli.submissions("alice")] == [sub.id]
    new = cli.rotate_token("alice")
    assert service.author_for_token(token) is None and service.author_for_token(new) is not None
    cli.revoke("alice")
    assert service.author_for_token(new) is None
    assert service.allow("login", "a", 1, 60) and not cli.allow("login", "a", 1, 60)


def test_two_processes_writing_at_once_never_share_a_version(tmp_path: Path) -> None:
    path = tmp_path / "contest.db"
    ContestStore(path).add_author("alice")
    script = textwrap.dedent(f"""
        from arena.contest.store import ContestStore
        store = ContestStore({str(path)!r})
        for _ in range(40):
            store.add_submission("alice", "greedy", "h")
            store.allow("upload", "alice", 1000, 60)
    """)
    root = Path(__file__).resolve().parents[2]
    writers = [subprocess.Popen([sys.executable, "-c", script], cwd=root, stderr=subprocess.PIPE, text=True)
               for _ in range(3)]
    errors = [writer.communicate(timeout=120)[1] for writer in writers]
    assert [writer.returncode for writer in writers] == [0, 0, 0], errors
    subs = ContestStore(path).submissions("alice")
    assert sorted(s.version for s in subs) == list(range(1, 121))


def test_threads_sharing_one_store_take_turns(store: ContestStore) -> None:
    store.add_author("alice")
    failures: list[BaseException] = []

    def submit() -> None:
        try:
            for _ in range(25):
                store.add_submission("alice", "greedy", "h")
                store.submissions("alice")
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(s.version for s in store.submissions("alice")) == list(range(1, 101))


def test_reopening_keeps_everything(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "contest.db"
    with ContestStore(path, clock=clock) as store:
        token = store.add_author("alice", admin=True)
        store.add_author("bob")
        store.revoke("bob")
        sub = checked(store, "alice", "greedy")
        store.enter_ladder(sub.id)
        store.set_report(sub.id, "fine")
        store.allow("login", "a", 1, 60)
        before = (store.authors(), store.submissions())
    with ContestStore(path, clock=clock) as store:
        assert (store.authors(), store.submissions()) == before
        found = store.author_for_token(token)
        assert found is not None and found.admin
        assert store.report(sub.id) == "fine"
        assert [s.id for s in store.playing()] == [sub.id]
        assert store.allow("login", "a", 1, 60) is False
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    with pytest.raises(ContestStoreError, match=r"notes\.db.*not an arena contest database.*another file"):
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
        db.execute("UPDATE contest_meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(ContestStoreError, match=f"newer arena.*schema {SCHEMA_VERSION + 1}.*upgrade arena"):
        ContestStore(path)


def test_a_folder_or_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ContestStoreError, match="is a folder"):
        ContestStore(tmp_path)
    with pytest.raises(ContestStoreError, match="folder does not exist"):
        ContestStore(tmp_path / "missing" / "contest.db")


def test_a_closed_store_raises_its_own_error(tmp_path: Path) -> None:
    store = ContestStore(tmp_path / "contest.db")
    store.close()
    with pytest.raises(ContestStoreError, match=r"contest\.db.*closed"):
        store.add_author("alice")
