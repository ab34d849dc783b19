"""The contest's SQLite file: authors and their tokens, their sessions, the rate limits, their submissions and
the submissions' check reports; a store module (it holds SQL, as :mod:`arena.ladder.database` says which modules
may).

It is the contest's own file, never the ladder's: it stands on the SQLite shell (:mod:`arena.ladder.database`)
with a mark of its own, so a ladder refuses to open it, and this store refuses any SQLite file it did not create
(a file of an older contest schema, or from before the shell, is upgraded in place).

:class:`ContestStore` opens the file and holds one small class per concern, all on its one connection:
:class:`Authors`, :class:`Sessions`, :class:`RateLimits`, :class:`Submissions` and :class:`Reports`
(``store.authors.add(...)``, ``store.submissions.get(id)``).

Two processes use it at once: the contest service and the ``arena author`` command. WAL mode lets either read
while the other writes, every public method is one transaction (writes take the write lock at their start,
``BEGIN IMMEDIATE``, so two writers queue rather than fail halfway), and a writer that finds the file busy
waits up to :data:`BUSY_TIMEOUT_SECONDS`. Within a process the store may be shared between threads.

Tokens are shown once (the return value of :meth:`Authors.add` and friends) and stored as their SHA-256 only.
Submission ids are 128 random bits: they are what the pages' addresses carry.

A submission's ladder name is ``AUTHOR/BOT`` for its version 1 and ``AUTHOR/BOT@vN`` for version N > 1: bot
names belong to their authors (two authors' "greedy" are "alice/greedy" and "bob/greedy"), and versions count
every submission of the bot, rejected ones included, so a ladder name is never given twice.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeGuard

from arena.ladder.database import Database, Migration, Schema

APPLICATION_ID = 0x41524E43
"""The mark of a contest file in its SQLite header ("ARNC")."""
APPLICATION = "arena contest"
"""What the ``contest_meta`` row ``application`` holds: how a file from before the SQLite shell was told apart."""
BUSY_TIMEOUT_SECONDS = 10.0
"""How long a transaction waits for the other process's write to end before it gives up."""
REPORT_LIMIT = 256 * 1024
"""The largest check report kept, in bytes of UTF-8 (a longer one keeps its head and a note)."""
TOKEN_PREFIX = "arena_"
TOKEN_MAX_LENGTH = 200
"""Longer strings are refused before hashing: ours are 49 characters."""

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
# what secrets.token_urlsafe makes (base64url without padding): anything else is refused before it is hashed
_TOKEN = re.compile(re.escape(TOKEN_PREFIX) + r"[A-Za-z0-9_-]{1,194}", re.ASCII)
_SUBMISSION_ID = re.compile(r"[0-9a-f]{32}")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{43}", re.ASCII)  # what secrets.token_urlsafe(32) makes

# The migrations, in order (arena.ladder.database); contest_meta's rows are what the arenas before the shell read
_FIRST = """
CREATE TABLE IF NOT EXISTS contest_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS authors (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    admin INTEGER NOT NULL,
    created REAL NOT NULL,
    revoked INTEGER NOT NULL DEFAULT 0,
    token_hash TEXT UNIQUE                 -- hex SHA-256 of the author's one valid token; NULL when revoked
);
CREATE TABLE IF NOT EXISTS submissions (
    seq INTEGER PRIMARY KEY,               -- the order submitted in (the clock may step back; this never does)
    id TEXT NOT NULL UNIQUE,               -- 32 random hex digits: what addresses carry
    author_id INTEGER NOT NULL REFERENCES authors(id),
    bot TEXT NOT NULL,
    version INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('queued', 'building', 'checking', 'rejected', 'playing', 'retired')),
    reason TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    ladder_name TEXT NOT NULL UNIQUE,
    UNIQUE (author_id, bot, version)
);
CREATE INDEX IF NOT EXISTS submissions_by_state ON submissions (state, seq);
CREATE INDEX IF NOT EXISTS submissions_by_author ON submissions (author_id, created);
-- apart from the submissions: lists of submissions never read the (up to 256 KiB) reports
CREATE TABLE IF NOT EXISTS reports (
    submission_seq INTEGER PRIMARY KEY REFERENCES submissions(seq),
    text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS attempts (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    at REAL NOT NULL,
    expires REAL NOT NULL                  -- at + the window it was counted in: pruned after that
);
CREATE INDEX IF NOT EXISTS attempts_by_key ON attempts (kind, key, at);
CREATE INDEX IF NOT EXISTS attempts_by_expiry ON attempts (expires);
INSERT OR REPLACE INTO contest_meta VALUES ('application', 'arena contest');
INSERT OR REPLACE INTO contest_meta VALUES ('schema', '1');
"""
_SESSIONS = """
CREATE TABLE IF NOT EXISTS sessions (
    id_hash TEXT PRIMARY KEY,              -- hex SHA-256 of the session id its cookie holds
    author_id INTEGER NOT NULL REFERENCES authors(id),
    csrf TEXT NOT NULL,
    expires REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_author ON sessions (author_id);
UPDATE contest_meta SET value = '2' WHERE key = 'schema';
"""


_SCRIMMAGES = """
ALTER TABLE authors ADD COLUMN scrimmage_opponent INTEGER NOT NULL DEFAULT 1;  -- others may pick their bots
CREATE TABLE IF NOT EXISTS scrimmages (
    seq INTEGER PRIMARY KEY,               -- the order asked in: the queue's
    id TEXT NOT NULL UNIQUE,               -- 32 random hex digits: what addresses carry
    author_id INTEGER NOT NULL REFERENCES authors(id),
    submission_seq INTEGER NOT NULL REFERENCES submissions(seq),  -- the version it plays
    opponents TEXT NOT NULL,               -- JSON list of ladder names (house bots by their names)
    matches INTEGER NOT NULL,              -- asked for
    state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    reason TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    started REAL,
    finished REAL
);
CREATE INDEX IF NOT EXISTS scrimmages_by_author ON scrimmages (author_id, created);
CREATE INDEX IF NOT EXISTS scrimmages_by_state ON scrimmages (state, seq);
-- the deal sets a scrimmage plays: numbered contest-wide (each one's seed is a keyed hash of its number under
-- the contest's secret, apart from the ladder's), planned when it starts, so a restart plays the same ones
CREATE TABLE IF NOT EXISTS scrimmage_deals (
    deal INTEGER PRIMARY KEY,
    scrimmage_seq INTEGER NOT NULL REFERENCES scrimmages(seq),
    bots TEXT NOT NULL                     -- JSON ladder names by seat, rotation 0
);
CREATE INDEX IF NOT EXISTS scrimmage_deals_by_scrimmage ON scrimmage_deals (scrimmage_seq, deal);
CREATE TABLE IF NOT EXISTS scrimmage_matches (
    deal INTEGER NOT NULL REFERENCES scrimmage_deals(deal),
    rotation INTEGER NOT NULL,
    number INTEGER NOT NULL,               -- its place in the scrimmage (deal sets in order, rotations in order)
    bots TEXT NOT NULL,                    -- JSON ladder names by seat
    places TEXT NOT NULL,                  -- JSON: the places the ladder would rate (benched seats last)
    totals TEXT NOT NULL,
    faults TEXT NOT NULL,                  -- JSON [{seat, step, kind, detail}]
    finished REAL NOT NULL,
    replay BLOB NOT NULL,                  -- the whole match, packed: shown only from the requester's seats
    PRIMARY KEY (deal, rotation)
);
"""
# the finals (issue 34): each author's marked finalist, and when the submissions closed
_FINALS = """
CREATE TABLE IF NOT EXISTS finalist_marks (
    author_id INTEGER PRIMARY KEY REFERENCES authors(id),
    submission_seq INTEGER NOT NULL REFERENCES submissions(seq),
    marked REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS finals_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class ContestStoreError(RuntimeError):
    """A contest database that cannot be used: not one, of a newer arena, unreadable or unwritable."""


def _before_the_shell(db: sqlite3.Connection, tables: set[str]) -> int | None:
    """Return the schema version of a contest file written before the SQLite shell (its header unmarked), as its
    ``contest_meta`` says; ``None`` for a file that is not a contest's. Raises :class:`ValueError` for a contest
    file whose version cannot be read."""
    if "contest_meta" not in tables:
        return None
    meta = {str(k): str(v) for k, v in db.execute("SELECT key, value FROM contest_meta")}
    if meta.get("application") != APPLICATION:
        return None
    return int(meta.get("schema", ""))


SCHEMA = Schema(
    noun="contest", application_id=APPLICATION_ID, error=ContestStoreError, fix="give the contest its own file",
    migrations=(Migration(1, _FIRST), Migration(2, _SESSIONS), Migration(3, _SCRIMMAGES), Migration(4, _FINALS)),
    legacy=_before_the_shell, foreign_keys=True, busy_timeout=BUSY_TIMEOUT_SECONDS)
"""The contest's file: schema 2 added the sessions (a restart no longer logs authors out), 3 the scrimmages, 4 the
finals (each author's marked finalist, when the submissions closed)."""
SCHEMA_VERSION = SCHEMA.version


class AuthorError(ValueError):
    """A request about authors that cannot be done: a bad or taken name, an unknown or revoked author."""


class State(enum.Enum):
    """Where a submission is: waiting, being built, being checked, refused, in the ladder, or replaced."""

    QUEUED = "queued"
    BUILDING = "building"
    CHECKING = "checking"
    REJECTED = "rejected"
    PLAYING = "playing"
    RETIRED = "retired"


UNFINISHED = (State.QUEUED, State.BUILDING, State.CHECKING)
"""The states a restarted contest takes up again (their work was under way when it stopped)."""

# PLAYING is entered only through enter_ladder (which retires the version it replaces); REJECTED is reachable
# from every state but itself (an admin disables a bot whatever it is doing); the unfinished states may go
# back to QUEUED (a contest that crashed mid-build starts the work over).
_NEXT: dict[State, frozenset[State]] = {
    State.QUEUED: frozenset({State.QUEUED, State.BUILDING, State.REJECTED}),
    State.BUILDING: frozenset({State.QUEUED, State.CHECKING, State.REJECTED}),
    State.CHECKING: frozenset({State.QUEUED, State.PLAYING, State.REJECTED}),
    # playing -> queued: its built folder was lost (a contest restarted on a restored database) and it is built again
    State.PLAYING: frozenset({State.QUEUED, State.RETIRED, State.REJECTED}),
    State.RETIRED: frozenset({State.REJECTED}),
    State.REJECTED: frozenset(),
}


@dataclass(frozen=True, slots=True)
class Author:
    """A person who submits bots. ``revoked``: their token no longer works (they stay on the board)."""

    id: int
    name: str
    admin: bool
    created: float
    revoked: bool


@dataclass(frozen=True, slots=True)
class Submission:
    """One uploaded version of an author's bot, and where it is on its way into the ladder."""

    id: str
    author: str
    bot: str
    version: int
    content_hash: str
    state: State
    reason: str
    created: float
    updated: float
    ladder_name: str


def ladder_name(author: str, bot: str, version: int) -> str:
    """Return the name the ladder knows a submission by: ``AUTHOR:BOT:vN`` (no ``/``: a name is a part of the web
    pages' paths; author and bot names hold no ``:``, so no two submissions' names look alike)."""
    return f"{author}:{bot}:v{version}"


def _token_hash(token: str) -> str:
    # A plain SHA-256, not a slow password hash: a token is 256 random bits, which no guessing gets through, so
    # the only thing a slow hash buys (making a guess expensive) is not needed, and every request can afford it.
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _new_token() -> tuple[str, str]:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, _token_hash(token)


def _session_id(sid: str | None) -> TypeGuard[str]:
    # anything a cookie may hold is checked before it is hashed (a lone surrogate would raise there)
    return isinstance(sid, str) and _SESSION_ID.fullmatch(sid) is not None


def _valid_name(name: str) -> bool:
    # checked before a name reaches SQLite too: a string it cannot encode (a lone surrogate) would raise there
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def _check_name(name: str, what: str) -> None:
    if not _valid_name(name):
        raise AuthorError(f"{what} {name!r} is not allowed: 1 to 32 characters, lower-case letters, digits, "
                          "'-' and '_', starting with a letter or a digit")


_SUBMISSION_COLUMNS = ("s.id, a.name, s.bot, s.version, s.content_hash, s.state, s.reason, s.created, s.updated, "
                       "s.ladder_name")
_SELECT_SUBMISSIONS = f"SELECT {_SUBMISSION_COLUMNS} FROM submissions s JOIN authors a ON a.id = s.author_id"


def _submission(row: Sequence[Any]) -> Submission:
    sid, author, bot, version, content_hash, state, reason, created, updated, name = row
    return Submission(str(sid), str(author), str(bot), int(version), str(content_hash), State(state), str(reason),
                      float(created), float(updated), str(name))


def _author(row: Sequence[Any]) -> Author:
    aid, name, admin, created, revoked = row
    return Author(int(aid), str(name), bool(admin), float(created), bool(revoked))


def _bounded_report(text: str) -> str:
    # "replace": a report quotes bot output, which may hold lone surrogates that UTF-8 cannot store
    data = text.encode("utf-8", "replace")
    if len(data) <= REPORT_LIMIT:
        return data.decode("utf-8")
    note = (f"\n[report truncated: it had {len(data)} bytes; only the first {REPORT_LIMIT // 1024} KiB are "
            "kept]").encode()
    # "ignore": the cut may fall inside a character; its first bytes are dropped rather than stored broken
    return data[:REPORT_LIMIT - len(note)].decode("utf-8", "ignore") + note.decode()


def _author_id(db: sqlite3.Connection, name: str) -> tuple[int, bool]:
    """Return the id of the author called ``name`` and whether they are revoked. Raises :class:`AuthorError`."""
    row = None
    if _valid_name(name):
        row = db.execute("SELECT id, revoked FROM authors WHERE name = ?", (name,)).fetchone()
    if row is None:
        raise AuthorError(f"there is no author {name!r}")
    return int(row[0]), bool(row[1])


def _get(db: sqlite3.Connection, sid: str) -> Submission:
    """Return submission ``sid``. Raises :class:`KeyError` for an unknown one (whatever ``sid`` is)."""
    row = None
    if isinstance(sid, str) and _SUBMISSION_ID.fullmatch(sid):
        row = db.execute(f"{_SELECT_SUBMISSIONS} WHERE s.id = ?", (sid,)).fetchone()
    if row is None:
        raise KeyError(f"there is no submission {sid!r}")
    return _submission(row)


class Authors:
    """The people who submit bots, and their tokens. Each method is one transaction."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def add(self, name: str, *, admin: bool = False) -> str:
        """Add an author and return their token: the only time it exists outside its holder's hands.

        Raises :class:`AuthorError` for a name that is not allowed (1 to 32 characters of ``a-z0-9_-``, not
        starting with ``-`` or ``_``) or taken.
        """
        _check_name(name, "author name")
        token, digest = _new_token()
        with self._database.transaction() as db:
            if db.execute("SELECT 1 FROM authors WHERE name = ?", (name,)).fetchone() is not None:
                raise AuthorError(f"the author name {name!r} is taken; choose another")
            db.execute("INSERT INTO authors (name, admin, created, revoked, token_hash) VALUES (?, ?, ?, 0, ?)",
                       (name, int(admin), self._clock(), digest))
        return token

    def register(self, name: str) -> str:
        """Add an author who is not an admin (open registration) and return their token.

        Whether registration is open is the service's decision, not the store's. Raises :class:`AuthorError`
        as :meth:`add`.
        """
        return self.add(name, admin=False)

    def rotate_token(self, name: str) -> str:
        """Give the author a new token and return it; their old token and their sessions stop working at once.

        Raises :class:`AuthorError` for an unknown author, or a revoked one (:meth:`restore` gives them a token).
        """
        token, digest = _new_token()
        with self._database.transaction() as db:
            author_id, revoked = _author_id(db, name)
            if revoked:
                raise AuthorError(f"the author {name!r} is revoked; restore them to give them a new token")
            db.execute("UPDATE authors SET token_hash = ? WHERE id = ?", (digest, author_id))
            db.execute("DELETE FROM sessions WHERE author_id = ?", (author_id,))
        return token

    def revoke(self, name: str) -> None:
        """Make the author's token and sessions stop working; the author and their submissions stay (for the board).

        Revoking a revoked author does nothing. Raises :class:`AuthorError` for an unknown author.
        """
        with self._database.transaction() as db:
            author_id, _ = _author_id(db, name)
            db.execute("UPDATE authors SET revoked = 1, token_hash = NULL WHERE id = ?", (author_id,))
            db.execute("DELETE FROM sessions WHERE author_id = ?", (author_id,))

    def restore(self, name: str) -> str:
        """Take back a revocation: return the author's new token (the one revoked never comes back).

        Raises :class:`AuthorError` for an unknown author, or one not revoked (:meth:`rotate_token` is for them).
        """
        token, digest = _new_token()
        with self._database.transaction() as db:
            author_id, revoked = _author_id(db, name)
            if not revoked:
                raise AuthorError(f"the author {name!r} is not revoked; rotate their token to give them a new one")
            db.execute("UPDATE authors SET revoked = 0, token_hash = ? WHERE id = ?", (digest, author_id))
        return token

    def all(self) -> list[Author]:
        """Return every author, revoked ones included, by name."""
        with self._database.transaction(write=False) as db:
            rows = db.execute("SELECT id, name, admin, created, revoked FROM authors ORDER BY name").fetchall()
        return [_author(row) for row in rows]

    def get(self, name: str) -> Author | None:
        """Return the author called ``name``, or ``None`` when there is none (whatever ``name`` is)."""
        if not _valid_name(name):
            return None
        with self._database.transaction(write=False) as db:
            row = db.execute("SELECT id, name, admin, created, revoked FROM authors WHERE name = ?",
                             (name,)).fetchone()
        return None if row is None else _author(row)

    def for_token(self, token: str) -> Author | None:
        """Return the author whose current token ``token`` is, or ``None``.

        ``None`` too for a revoked author's token, a rotated-away one, and anything that is not a token of
        ours (not a string, too long, wrong characters): it never raises on what a client sends.
        """
        if not isinstance(token, str) or len(token) > TOKEN_MAX_LENGTH or _TOKEN.fullmatch(token) is None:
            return None
        digest = _token_hash(token)
        with self._database.transaction(write=False) as db:
            row = db.execute("SELECT id, name, admin, created, revoked, token_hash FROM authors "
                             "WHERE token_hash = ? AND revoked = 0", (digest,)).fetchone()
        # the index found the row by equality; the constant-time comparison is the one that decides
        if row is None or not hmac.compare_digest(str(row[5]), digest):
            return None
        return _author(row[:5])


    def scrimmage_opponent(self, name: str) -> bool:
        """Return whether other authors may choose the author's bots as scrimmage opponents (yes unless they said
        no; an unknown author's: no)."""
        if not _valid_name(name):
            return False
        with self._database.transaction(write=False) as db:
            row = db.execute("SELECT scrimmage_opponent FROM authors WHERE name = ?", (name,)).fetchone()
        return row is not None and bool(row[0])

    def set_scrimmage_opponent(self, name: str, allowed: bool) -> None:
        """Say whether other authors may choose the author's bots as scrimmage opponents. Raises
        :class:`AuthorError` for an unknown author."""
        with self._database.transaction() as db:
            author_id, _ = _author_id(db, name)
            db.execute("UPDATE authors SET scrimmage_opponent = ? WHERE id = ?", (int(allowed), author_id))


class Sessions:
    """Logged-in authors: a session id (its hash kept) and its CSRF token, until it expires. Each method is one
    transaction."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def open(self, name: str, seconds: float) -> tuple[str, str, float]:
        """Log the author in: return a new session id (only its hash is kept), its CSRF token and when it expires.

        A new id at every login (no fixation). Raises :class:`AuthorError` for an unknown or revoked author.
        """
        sid, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = self._clock()
        with self._database.transaction() as db:
            author_id, revoked = _author_id(db, name)
            if revoked:
                raise AuthorError(f"the author {name!r} is revoked")
            db.execute("DELETE FROM sessions WHERE expires <= ?", (now,))
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)", (_token_hash(sid), author_id, csrf, now + seconds))
        return sid, csrf, now + seconds

    def get(self, sid: str | None) -> tuple[Author, str, float] | None:
        """Return the author, CSRF token and expiry of the live session ``sid``, or ``None`` (unknown, expired,
        closed, or its author revoked or given a new token since)."""
        if not _session_id(sid):
            return None
        with self._database.transaction(write=False) as db:
            row = db.execute("SELECT a.id, a.name, a.admin, a.created, a.revoked, s.csrf, s.expires FROM sessions s "
                             "JOIN authors a ON a.id = s.author_id WHERE s.id_hash = ? AND s.expires > ?",
                             (_token_hash(sid), self._clock())).fetchone()
        if row is None or row[4]:
            return None
        return _author(row[:5]), str(row[5]), float(row[6])

    def close(self, sid: str | None) -> None:
        """Log a session out (nothing for an unknown one)."""
        if _session_id(sid):
            with self._database.transaction() as db:
                db.execute("DELETE FROM sessions WHERE id_hash = ?", (_token_hash(sid),))


class RateLimits:
    """Attempts by kind and key in sliding windows: what keeps a guesser or a flood out."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def allow(self, kind: str, key: str, limit: int, per_seconds: float) -> bool:
        """Record an attempt of ``kind`` by ``key`` (a client address, an author) and return whether fewer than
        ``limit`` attempts of that kind by that key were made in the last ``per_seconds`` before it.

        Refused attempts are recorded too: a client that keeps trying stays refused until it pauses for a
        whole window (a password guesser gains nothing by hammering). Attempts older than their window are
        deleted as it goes. One transaction. Raises :class:`ValueError` for a window that is not positive.
        """
        if not per_seconds > 0:
            raise ValueError(f"the window of a rate limit must be positive, not {per_seconds!r}")
        now = self._clock()
        with self._database.transaction() as db:
            db.execute("DELETE FROM attempts WHERE expires <= ?", (now,))
            (count,) = db.execute("SELECT count(*) FROM attempts WHERE kind = ? AND key = ? AND at > ?",
                                  (kind, key, now - per_seconds)).fetchone()
            db.execute("INSERT INTO attempts VALUES (?, ?, ?, ?)", (kind, key, now, now + per_seconds))
        return int(count) < limit


class Submissions:
    """The uploaded versions of the authors' bots and where each is on its way into the ladder. Each method is one
    transaction."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def add(self, author: str, bot: str, content_hash: str) -> Submission:
        """Record a new submission, queued, and return it.

        Its version is one more than the author's highest version of ``bot`` (rejected ones count), its ladder
        name follows (:func:`ladder_name`) and its id is 32 random hex digits. Raises :class:`AuthorError` for
        an unknown or revoked author or a bot name that is not allowed (the rule of author names), and
        :class:`ValueError` for an empty ``content_hash``.
        """
        _check_name(bot, "bot name")
        if not content_hash:
            raise ValueError("a submission needs the hash of its content")
        sid = secrets.token_hex(16)
        now = self._clock()
        with self._database.transaction() as db:
            author_id, revoked = _author_id(db, author)
            if revoked:
                raise AuthorError(f"the author {author!r} is revoked and cannot submit")
            (highest,) = db.execute("SELECT coalesce(max(version), 0) FROM submissions WHERE author_id = ? "
                                    "AND bot = ?", (author_id, bot)).fetchone()
            version = int(highest) + 1
            name = ladder_name(author, bot, version)
            db.execute("INSERT INTO submissions (id, author_id, bot, version, content_hash, state, reason, created, "
                       "updated, ladder_name) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?)",
                       (sid, author_id, bot, version, content_hash, State.QUEUED.value, now, now, name))
        return Submission(sid, author, bot, version, content_hash, State.QUEUED, "", now, now, name)

    @staticmethod
    def _move(db: sqlite3.Connection, sid: str, state: State, reason: str, now: float) -> None:
        db.execute("UPDATE submissions SET state = ?, reason = ?, updated = ? WHERE id = ?",
                   (state.value, reason, now, sid))

    def set_state(self, id: str, state: State, reason: str = "") -> Submission:
        """Move submission ``id`` to ``state`` with ``reason`` (shown to its author) and return it as it is now.

        Allowed: queued → building → checking → rejected; building → rejected; queued, building or checking →
        queued (work taken up again after a restart); playing → retired; playing → queued (its folder was lost:
        built and checked again); anything but rejected → rejected (an
        admin disables a bot). Raises :class:`ValueError` naming both states for any other move, and for
        PLAYING (:meth:`enter_ladder` enters the ladder, retiring the version it replaces); :class:`KeyError`
        for an unknown id; :class:`TypeError` when ``state`` is not a :class:`State`.
        """
        if not isinstance(state, State):
            raise TypeError(f"the state must be a State, not {state!r}")
        if state is State.PLAYING:
            raise ValueError("a submission starts playing through enter_ladder, which retires the version it "
                             "replaces; set_state does not do that")
        now = self._clock()
        with self._database.transaction() as db:
            current = _get(db, id)
            if state not in _NEXT[current.state]:
                raise ValueError(f"submission {id} cannot go from {current.state.value} to {state.value}")
            self._move(db, id, state, reason, now)
            return _get(db, id)

    def enter_ladder(self, id: str) -> list[Submission]:
        """Make checked submission ``id`` play; return the submissions this retired, as they are now.

        Those are the author's playing versions of the same bot that are older than ``id`` (other bots and
        other authors' bots of the same name play on). When a newer version of the bot already plays (its
        check ended first), ``id`` itself is retired instead and is the one returned: an author has one
        version of a bot in the ladder, the newest. All in one transaction. Raises :class:`ValueError` when
        ``id`` is not checking, :class:`KeyError` for an unknown id.
        """
        now = self._clock()
        with self._database.transaction() as db:
            entering = _get(db, id)
            if entering.state is not State.CHECKING:
                raise ValueError(f"submission {id} cannot go from {entering.state.value} to playing "
                                 "(only a checked submission enters the ladder)")
            others = [_submission(row) for row in db.execute(
                f"{_SELECT_SUBMISSIONS} WHERE s.author_id = (SELECT author_id FROM submissions WHERE id = ?) "
                "AND s.bot = ? AND s.state = ? AND s.id != ? ORDER BY s.version",
                (id, entering.bot, State.PLAYING.value, id))]
            newer = [other for other in others if other.version > entering.version]
            if newer:
                self._move(db, id, State.RETIRED, f"version {newer[-1].version} already plays", now)
                retired = [id]
            else:
                self._move(db, id, State.PLAYING, "", now)
                for other in others:
                    self._move(db, other.id, State.RETIRED, f"replaced by version {entering.version}", now)
                retired = [other.id for other in others]
            return [_get(db, sid) for sid in retired]

    def get(self, id: str) -> Submission | None:
        """Return submission ``id``, or ``None`` when there is none (whatever ``id`` is)."""
        with self._database.transaction(write=False) as db:
            try:
                return _get(db, id)
            except KeyError:
                return None

    def _list(self, where: str, args: tuple[object, ...], order: str) -> list[Submission]:
        with self._database.transaction(write=False) as db:
            rows = db.execute(f"{_SELECT_SUBMISSIONS} WHERE {where} ORDER BY s.seq {order}", args).fetchall()
        return [_submission(row) for row in rows]

    def all(self, author: str | None = None) -> list[Submission]:
        """Return the author's submissions (every author's for ``None``), the newest first.

        Newest means submitted last (not the largest ``created``: a clock may step back). An unknown author
        has none.
        """
        if author is None:
            return self._list("1", (), "DESC")
        if not _valid_name(author):
            return []
        return self._list("a.name = ?", (author,), "DESC")

    def unfinished(self) -> list[Submission]:
        """Return the queued, building and checking submissions, oldest first: the work a restarted contest
        takes up again, in the order it was submitted."""
        marks = ", ".join("?" for _ in UNFINISHED)
        return self._list(f"s.state IN ({marks})", tuple(state.value for state in UNFINISHED), "ASC")

    def playing(self) -> list[Submission]:
        """Return every submission in the ladder (state playing), oldest first."""
        return self._list("s.state = ?", (State.PLAYING.value,), "ASC")

    def active(self, author: str) -> list[Submission]:
        """Return the author's submissions in the ladder (state playing), oldest first: what the limit on
        active bots counts."""
        if not _valid_name(author):
            return []
        return self._list("a.name = ? AND s.state = ?", (author, State.PLAYING.value), "ASC")

    def count_since(self, author: str, since: float) -> int:
        """Return how many submissions the author made at ``since`` or later (by the store's clock), whatever
        became of them: what the limit on submissions a day counts. An unknown author has made none."""
        if not _valid_name(author):
            return 0
        with self._database.transaction(write=False) as db:
            (count,) = db.execute("SELECT count(*) FROM submissions s JOIN authors a ON a.id = s.author_id "
                                  "WHERE a.name = ? AND s.created >= ?", (author, since)).fetchone()
        return int(count)


class Reports:
    """The check report of each submission (what its build and check said), kept apart from the submissions: lists
    of submissions never read the (up to :data:`REPORT_LIMIT`) reports."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def set(self, id: str, text: str) -> None:
        """Keep ``text`` as the check report of submission ``id``, replacing any earlier one.

        A report over :data:`REPORT_LIMIT` bytes keeps its head and ends with a note saying so. Raises
        :class:`KeyError` for an unknown id.
        """
        bounded = _bounded_report(text)
        with self._database.transaction() as db:
            _get(db, id)
            db.execute("INSERT INTO reports VALUES ((SELECT seq FROM submissions WHERE id = ?), ?) "
                       "ON CONFLICT (submission_seq) DO UPDATE SET text = excluded.text", (id, bounded))

    def get(self, id: str) -> str:
        """Return the check report of submission ``id`` ("" before there is one). Raises :class:`KeyError`
        for an unknown id."""
        with self._database.transaction(write=False) as db:
            _get(db, id)
            row = db.execute("SELECT r.text FROM reports r JOIN submissions s ON s.seq = r.submission_seq "
                             "WHERE s.id = ?", (id,)).fetchone()
        return "" if row is None else str(row[0])


class ScrimmageState(enum.Enum):
    """Where a scrimmage is: waiting its turn, playing, played (its result stands), or given up (the reason says)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Scrimmage:
    """An author's request for unrated matches of one of their versions against opponents they chose."""

    id: str
    author: str
    submission: str
    """The id of the submission (the version) it plays."""
    bot: str
    """That version's ladder name."""
    opponents: tuple[str, ...]
    """The ladder names of the chosen opponents (house bots by their names)."""
    matches: int
    state: ScrimmageState
    reason: str
    created: float
    started: float | None
    finished: float | None
    played: int
    """Matches stored so far."""


@dataclass(frozen=True, slots=True)
class ScrimmageMatch:
    """One played match of a scrimmage (its replay is read apart: :meth:`Scrimmages.replay`)."""

    number: int
    deal: int
    rotation: int
    bots: tuple[str, ...]
    places: tuple[int, ...]
    totals: tuple[int, ...]
    faults: tuple[dict[str, Any], ...]
    finished: float


_SCRIMMAGE_COLUMNS = ("c.id, a.name, s.id, s.ladder_name, c.opponents, c.matches, c.state, c.reason, c.created, "
                      "c.started, c.finished, (SELECT count(*) FROM scrimmage_matches m JOIN scrimmage_deals d "
                      "ON d.deal = m.deal WHERE d.scrimmage_seq = c.seq)")
_SELECT_SCRIMMAGES = (f"SELECT {_SCRIMMAGE_COLUMNS} FROM scrimmages c JOIN authors a ON a.id = c.author_id "
                      "JOIN submissions s ON s.seq = c.submission_seq")
_SCRIMMAGE_ID = _SUBMISSION_ID


def _scrimmage(row: Sequence[Any]) -> Scrimmage:
    cid, author, sid, name, opponents, matches, state, reason, created, started, finished, played = row
    return Scrimmage(str(cid), str(author), str(sid), str(name), tuple(json.loads(opponents)), int(matches),
                     ScrimmageState(state), str(reason), float(created), None if started is None else float(started),
                     None if finished is None else float(finished), int(played))


def _scrimmage_seq(db: sqlite3.Connection, cid: str) -> int:
    row = None
    if isinstance(cid, str) and _SCRIMMAGE_ID.fullmatch(cid):
        row = db.execute("SELECT seq FROM scrimmages WHERE id = ?", (cid,)).fetchone()
    if row is None:
        raise KeyError(f"there is no scrimmage {cid!r}")
    return int(row[0])


class Scrimmages:
    """The authors' scrimmages: the requests (a queue, oldest first), the deal sets each plays and the matches it
    played. Each method is one transaction."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def add(self, author: str, submission: str, opponents: Sequence[str], matches: int) -> Scrimmage:
        """Queue a scrimmage of ``author``'s ``submission`` against ``opponents`` (ladder names) for ``matches``
        matches; return it. Raises :class:`AuthorError` for an unknown or revoked author, :class:`KeyError` for a
        submission that is not theirs, :class:`ValueError` for no opponent or no match."""
        if not opponents or matches < 1:
            raise ValueError("a scrimmage needs an opponent and at least one match")
        cid = secrets.token_hex(16)
        now = self._clock()
        with self._database.transaction() as db:
            author_id, revoked = _author_id(db, author)
            if revoked:
                raise AuthorError(f"the author {author!r} is revoked")
            version = _get(db, submission)
            if version.author != author:
                raise KeyError(f"there is no submission {submission!r} of {author!r}")
            db.execute("INSERT INTO scrimmages (id, author_id, submission_seq, opponents, matches, state, created) "
                       "VALUES (?, ?, (SELECT seq FROM submissions WHERE id = ?), ?, ?, ?, ?)",
                       (cid, author_id, submission, json.dumps(list(opponents)), matches,
                        ScrimmageState.QUEUED.value, now))
            return _scrimmage(db.execute(f"{_SELECT_SCRIMMAGES} WHERE c.id = ?", (cid,)).fetchone())

    def get(self, id: str) -> Scrimmage | None:
        """Return scrimmage ``id``, or ``None`` when there is none (whatever ``id`` is)."""
        if not isinstance(id, str) or not _SCRIMMAGE_ID.fullmatch(id):
            return None
        with self._database.transaction(write=False) as db:
            row = db.execute(f"{_SELECT_SCRIMMAGES} WHERE c.id = ?", (id,)).fetchone()
        return None if row is None else _scrimmage(row)

    def all(self, author: str | None = None) -> list[Scrimmage]:
        """Return the author's scrimmages (everyone's for ``None``), the newest first."""
        if author is not None and not _valid_name(author):
            return []
        where, args = ("a.name = ?", (author,)) if author is not None else ("1", ())
        with self._database.transaction(write=False) as db:
            rows = db.execute(f"{_SELECT_SCRIMMAGES} WHERE {where} ORDER BY c.seq DESC", args).fetchall()
        return [_scrimmage(row) for row in rows]

    def waiting(self) -> list[Scrimmage]:
        """Return the scrimmages to play, in turn: those a stop caught running first, then the queued ones, oldest
        first."""
        with self._database.transaction(write=False) as db:
            rows = db.execute(f"{_SELECT_SCRIMMAGES} WHERE c.state IN (?, ?) ORDER BY c.state = ?, c.seq",
                              (ScrimmageState.RUNNING.value, ScrimmageState.QUEUED.value,
                               ScrimmageState.QUEUED.value)).fetchall()
        return [_scrimmage(row) for row in rows]

    def asked_since(self, author: str, since: float) -> list[tuple[float, int]]:
        """Return (when, matches) of every scrimmage the author asked for after ``since``, oldest first, whatever
        became of it: what the hourly quota counts."""
        if not _valid_name(author):
            return []
        with self._database.transaction(write=False) as db:
            rows = db.execute("SELECT c.created, c.matches FROM scrimmages c JOIN authors a ON a.id = c.author_id "
                              "WHERE a.name = ? AND c.created > ? ORDER BY c.created", (author, since)).fetchall()
        return [(float(when), int(matches)) for when, matches in rows]

    def start(self, id: str) -> None:
        """Mark scrimmage ``id`` running (again, after a restart). Raises :class:`KeyError` for an unknown one."""
        with self._database.transaction() as db:
            seq = _scrimmage_seq(db, id)
            db.execute("UPDATE scrimmages SET state = ?, started = coalesce(started, ?) WHERE seq = ?",
                       (ScrimmageState.RUNNING.value, self._clock(), seq))

    def finish(self, id: str, state: ScrimmageState, reason: str = "") -> None:
        """End scrimmage ``id``: done, or failed with ``reason`` (shown to its author). Raises :class:`KeyError`
        for an unknown one, :class:`ValueError` for a state that is no end."""
        if state not in (ScrimmageState.DONE, ScrimmageState.FAILED):
            raise ValueError(f"a scrimmage ends done or failed, not {state.value}")
        with self._database.transaction() as db:
            seq = _scrimmage_seq(db, id)
            db.execute("UPDATE scrimmages SET state = ?, reason = ?, finished = ? WHERE seq = ?",
                       (state.value, reason, self._clock(), seq))

    def plan(self, id: str, seatings: Sequence[Sequence[str]]) -> list[tuple[int, tuple[str, ...]]]:
        """Give scrimmage ``id`` one deal set per seating of ``seatings`` (ladder names by seat, rotation 0), each
        numbered after every deal set any scrimmage has had, unless it has its deal sets already; return its deal
        sets (number, seating), in order. Raises :class:`KeyError` for an unknown scrimmage."""
        with self._database.transaction() as db:
            seq = _scrimmage_seq(db, id)
            if db.execute("SELECT 1 FROM scrimmage_deals WHERE scrimmage_seq = ?", (seq,)).fetchone() is None:
                (highest,) = db.execute("SELECT coalesce(max(deal), -1) FROM scrimmage_deals").fetchone()
                for offset, seating in enumerate(seatings):
                    db.execute("INSERT INTO scrimmage_deals VALUES (?, ?, ?)",
                               (int(highest) + 1 + offset, seq, json.dumps(list(seating))))
            rows = db.execute("SELECT deal, bots FROM scrimmage_deals WHERE scrimmage_seq = ? ORDER BY deal",
                              (seq,)).fetchall()
        return [(int(deal), tuple(json.loads(bots))) for deal, bots in rows]

    def record(self, id: str, match: ScrimmageMatch, replay: bytes) -> None:
        """Store a played match of scrimmage ``id`` (whole, or not at all; once: a (deal, rotation) stored already
        is left as it was). Raises :class:`KeyError` for an unknown scrimmage or a deal set not its own."""
        with self._database.transaction() as db:
            seq = _scrimmage_seq(db, id)
            owner = db.execute("SELECT scrimmage_seq FROM scrimmage_deals WHERE deal = ?", (match.deal,)).fetchone()
            if owner is None or int(owner[0]) != seq:
                raise KeyError(f"deal set {match.deal} is not one of scrimmage {id}'s")
            db.execute("INSERT OR IGNORE INTO scrimmage_matches VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (match.deal, match.rotation, match.number, json.dumps(list(match.bots)),
                        json.dumps(list(match.places)), json.dumps(list(match.totals)),
                        json.dumps(list(match.faults)), match.finished, replay))

    def matches(self, id: str) -> list[ScrimmageMatch]:
        """Return the played matches of scrimmage ``id``, in order (none for an unknown one)."""
        with self._database.transaction(write=False) as db:
            try:
                seq = _scrimmage_seq(db, id)
            except KeyError:
                return []
            rows = db.execute("SELECT m.number, m.deal, m.rotation, m.bots, m.places, m.totals, m.faults, m.finished "
                              "FROM scrimmage_matches m JOIN scrimmage_deals d ON d.deal = m.deal "
                              "WHERE d.scrimmage_seq = ? ORDER BY m.number", (seq,)).fetchall()
        return [ScrimmageMatch(int(n), int(deal), int(rotation), tuple(json.loads(bots)), tuple(json.loads(places)),
                               tuple(json.loads(totals)), tuple(json.loads(faults)), float(finished))
                for n, deal, rotation, bots, places, totals, faults, finished in rows]

    def replay(self, id: str, number: int) -> bytes | None:
        """Return the packed replay of match ``number`` of scrimmage ``id`` (``None``: no such match)."""
        with self._database.transaction(write=False) as db:
            try:
                seq = _scrimmage_seq(db, id)
            except KeyError:
                return None
            row = db.execute("SELECT m.replay FROM scrimmage_matches m JOIN scrimmage_deals d ON d.deal = m.deal "
                             "WHERE d.scrimmage_seq = ? AND m.number = ?", (seq, number)).fetchone()
        return None if row is None else bytes(row[0])

    def chosen(self, names: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Return, for each ladder name of ``names`` chosen as an opponent, how many scrimmages chose it and how
        many of their matches it played: all its author is told of them."""
        wanted = set(names)
        found: dict[str, list[int]] = {}
        with self._database.transaction(write=False) as db:
            chosen = {int(seq): set(json.loads(opponents)) & wanted
                      for seq, opponents in db.execute("SELECT seq, opponents FROM scrimmages")}
            for names_chosen in chosen.values():
                for name in names_chosen:
                    found.setdefault(name, [0, 0])[0] += 1
            for seq, bots in db.execute("SELECT d.scrimmage_seq, m.bots FROM scrimmage_matches m "
                                        "JOIN scrimmage_deals d ON d.deal = m.deal"):
                for name in chosen.get(int(seq), set()) & set(json.loads(bots)):
                    found[name][1] += 1
        return {name: (times, played) for name, (times, played) in found.items()}


VALIDATED = (State.PLAYING, State.RETIRED)
"""The states of a submission that passed its build and check: what may be a finalist."""


class Finalists:
    """The finals' facts the contest keeps: each author's marked finalist (one version of theirs), and when the
    submissions closed. Each method is one transaction."""

    def __init__(self, database: Database, clock: Callable[[], float]) -> None:
        self._database = database
        self._clock = clock

    def mark(self, author: str, submission_id: str) -> Submission:
        """Make submission ``submission_id`` the author's finalist (replacing an earlier mark); return it.

        Raises :class:`AuthorError` for an unknown author, :class:`KeyError` for a submission that is not theirs
        (or none), :class:`ValueError` for one that did not pass its check (or was disabled), and once the
        submissions are closed (:meth:`close`).
        """
        with self._database.transaction() as db:
            author_id, _ = _author_id(db, author)
            closed = db.execute("SELECT value FROM finals_meta WHERE key = 'closed_at'").fetchone()
            if closed is not None:
                raise ValueError("the finalists were fixed when the submissions closed, at "
                                 f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(float(closed[0])))}")
            submission = _get(db, submission_id)
            if submission.author != author:
                raise KeyError(f"there is no submission {submission_id!r} of {author!r}")
            if submission.state not in VALIDATED:
                raise ValueError(f"{submission.ladder_name} is {submission.state.value}: a finalist is a version that "
                                 "passed its check (playing or replaced)")
            db.execute("INSERT INTO finalist_marks VALUES (?, (SELECT seq FROM submissions WHERE id = ?), ?) "
                       "ON CONFLICT (author_id) DO UPDATE SET submission_seq = excluded.submission_seq, "
                       "marked = excluded.marked", (author_id, submission_id, self._clock()))
            return submission

    def marks(self) -> dict[str, str]:
        """Return each author's marked finalist: author name -> submission id."""
        with self._database.transaction(write=False) as db:
            rows = db.execute("SELECT a.name, s.id FROM finalist_marks m JOIN authors a ON a.id = m.author_id "
                              "JOIN submissions s ON s.seq = m.submission_seq").fetchall()
        return {str(name): str(sid) for name, sid in rows}

    def close(self, at: float) -> float:
        """Record that the submissions closed at ``at`` (the first time only); return when they closed."""
        with self._database.transaction() as db:
            db.execute("INSERT OR IGNORE INTO finals_meta VALUES ('closed_at', ?)", (repr(float(at)),))
            (value,) = db.execute("SELECT value FROM finals_meta WHERE key = 'closed_at'").fetchone()
        return float(value)

    def closed_at(self) -> float | None:
        """Return when the submissions closed, ``None`` while they are open."""
        with self._database.transaction(write=False) as db:
            row = db.execute("SELECT value FROM finals_meta WHERE key = 'closed_at'").fetchone()
        return None if row is None else float(row[0])


class ContestStore:
    """An open contest database, and its concerns on its one connection: :attr:`authors`, :attr:`sessions`,
    :attr:`limits`, :attr:`submissions`, :attr:`reports`, :attr:`scrimmages` and :attr:`finalists`."""

    def __init__(self, path: Path | str, *, clock: Callable[[], float] = time.time) -> None:
        """Open the contest database at ``path``, creating it when the file is missing or empty, and upgrading it
        in place when it is of an older schema.

        ``clock`` gives every time stored or compared (tests pass a fake one). Raises
        :class:`ContestStoreError` for a folder, a file that is not a contest database (nothing in it is
        changed), a database of a newer arena, or a file this process cannot write.
        """
        self.path = Path(path)
        # one connection shared by the threads of a process (a web server's workers): one transaction at a time
        self.database = Database(self.path, SCHEMA, shared=True)
        self.authors = Authors(self.database, clock)
        self.sessions = Sessions(self.database, clock)
        self.limits = RateLimits(self.database, clock)
        self.submissions = Submissions(self.database, clock)
        self.reports = Reports(self.database)
        self.scrimmages = Scrimmages(self.database, clock)
        self.finalists = Finalists(self.database, clock)

    def close(self) -> None:
        """Close the database (further calls raise :class:`ContestStoreError`)."""
        self.database.close()

    def __enter__(self) -> ContestStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()
