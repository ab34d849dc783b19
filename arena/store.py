"""The ladder's SQLite file: bots, deal sets, matches, seats, faults, ratings, replays.

One transaction per finished match, so a ladder killed at any moment (kill -9 included) loses no finished
match and never stores one twice. WAL mode lets ``arena leaderboard`` read while a ladder writes.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.ratings import Rating
from arena.referee import MatchRecord

SCHEMA_VERSION = 1
LATENCY_BUCKET_BASE = 1.05
"""Decision latencies are kept per bot as a histogram of buckets 5% wide (median and p99 within 5%)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    fingerprint TEXT NOT NULL,
    command TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    added_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS deals (
    deal INTEGER PRIMARY KEY,
    seed INTEGER NOT NULL,
    bots TEXT NOT NULL                 -- JSON list of bot names, the seating of rotation 0
);
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    deal INTEGER NOT NULL REFERENCES deals(deal),
    rotation INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    finished_at REAL NOT NULL,
    seconds REAL NOT NULL,
    steps INTEGER NOT NULL,
    replay TEXT NOT NULL,              -- JSON: game, options, seed, names, every decision and fault
    UNIQUE (deal, rotation)
);
CREATE TABLE IF NOT EXISTS seats (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    seat INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    total INTEGER NOT NULL,
    place INTEGER NOT NULL,            -- the place used for ratings: benched seats last
    benched INTEGER NOT NULL,
    faults INTEGER NOT NULL,
    decisions INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE TABLE IF NOT EXISTS faults (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    seat INTEGER NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS ratings (
    match_id INTEGER NOT NULL REFERENCES matches(id),
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (match_id, bot_id)
);
CREATE TABLE IF NOT EXISTS latency (
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    bucket INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (bot_id, bucket)
);
CREATE INDEX IF NOT EXISTS seats_by_bot ON seats (bot_id);
"""


class StoreError(RuntimeError):
    """A database that cannot be used: unreadable, corrupt, of another ladder, or of a newer format."""


@dataclass(frozen=True, slots=True)
class LadderIdentity:
    """What makes two runs the same ladder: the game, its options, the seat count and the ladder seed."""

    game: str
    seats: int
    seed: int
    options: dict[str, Any]

    def describe(self) -> str:
        return f"{self.game}, {self.seats} seats, ladder seed {self.seed}, options {json.dumps(self.options)}"


@dataclass(frozen=True, slots=True)
class Deal:
    """A planned deal set: one seed played once per rotation of ``bots`` (rotation 0 seating)."""

    deal: int
    seed: int
    bots: tuple[str, ...]
    done: frozenset[int]


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One line of the leaderboard."""

    rank: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    wins: float
    mean_points: float
    faults: int
    median_ms: float
    p99_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank, "bot": self.bot, "mu": round(self.mu, 3), "sigma": round(self.sigma, 3),
            "conservative": round(self.conservative, 3), "matches": self.matches, "wins": self.wins,
            "mean_points": round(self.mean_points, 2), "faults": self.faults,
            "median_ms": round(self.median_ms, 3), "p99_ms": round(self.p99_ms, 3),
        }


def _bucket(seconds: float) -> int:
    return max(0, int(math.log(max(seconds * 1e6, 1.0), LATENCY_BUCKET_BASE)))


def _bucket_seconds(bucket: int) -> float:
    # the middle of the bucket, in seconds
    return float(LATENCY_BUCKET_BASE ** (bucket + 0.5) / 1e6)


class Store:
    """An open ladder database."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        """Open (or create, unless ``readonly``) the database at ``path``. Raises :class:`StoreError`."""
        self.path = Path(path)
        if readonly and not self.path.is_file():
            raise StoreError(f"database {str(self.path)!r} does not exist")
        try:
            uri = f"file:{self.path}?mode=ro" if readonly else f"file:{self.path}"
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
            self.db.execute("PRAGMA busy_timeout = 30000")
            if not readonly:
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")  # durable at each commit in WAL mode
                self.db.executescript(SCHEMA)
            self.db.execute("SELECT count(*) FROM meta").fetchone()
            version = self._meta("schema")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{str(self.path)!r} is not a usable arena database: {exc}") from None
        if version is not None and int(version) > SCHEMA_VERSION:
            raise StoreError(f"{str(self.path)!r} was written by a newer arena (schema {version})")

    def close(self) -> None:
        self.db.close()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the body in one write transaction: all of it is stored, or none of it."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def identity(self) -> LadderIdentity | None:
        """Return the identity of the ladder stored here, or ``None`` for a new database."""
        raw = self._meta("ladder")
        if raw is None:
            return None
        data = json.loads(raw)
        return LadderIdentity(data["game"], int(data["seats"]), int(data["seed"]), dict(data["options"]))

    def claim(self, identity: LadderIdentity) -> None:
        """Make this database hold ``identity``'s ladder. Raises :class:`StoreError` if it holds another."""
        stored = self.identity()
        if stored is None:
            with self.transaction() as db:
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
                db.execute("INSERT INTO meta VALUES ('ladder', ?)", (json.dumps({
                    "game": identity.game, "seats": identity.seats, "seed": identity.seed,
                    "options": identity.options}),))
            return
        if stored != identity:
            raise StoreError(f"{str(self.path)!r} holds another ladder ({stored.describe()}), not "
                             f"{identity.describe()}; use --db for a new file")

    def register_bot(self, name: str, fingerprint: str, command: Sequence[str]) -> bool:
        """Add a bot, or update its fingerprint; return whether its command or files changed since."""
        row = self.db.execute("SELECT fingerprint FROM bots WHERE name = ?", (name,)).fetchone()
        with self.transaction() as db:
            if row is None:
                db.execute("INSERT INTO bots (name, fingerprint, command, mu, sigma, added_at) "
                           "VALUES (?, ?, ?, ?, ?, ?)",
                           (name, fingerprint, json.dumps(list(command)), Rating().mu, Rating().sigma, time.time()))
                return False
            db.execute("UPDATE bots SET fingerprint = ?, command = ? WHERE name = ?",
                       (fingerprint, json.dumps(list(command)), name))
        return bool(row[0] != fingerprint)

    def ratings(self) -> dict[str, Rating]:
        """Return every bot's current rating."""
        return {name: Rating(mu, sigma) for name, mu, sigma in self.db.execute("SELECT name, mu, sigma FROM bots")}

    def played(self) -> dict[str, int]:
        """Return how many stored matches each bot has played."""
        rows = self.db.execute("SELECT b.name, count(s.match_id) FROM bots b LEFT JOIN seats s ON s.bot_id = b.id "
                               "GROUP BY b.id")
        return {name: int(n) for name, n in rows}

    def deals(self) -> list[Deal]:
        """Return every planned deal set, in order, with the rotations already played."""
        done: dict[int, set[int]] = {}
        for deal, rotation in self.db.execute("SELECT deal, rotation FROM matches"):
            done.setdefault(deal, set()).add(rotation)
        return [Deal(deal, seed, tuple(json.loads(bots)), frozenset(done.get(deal, ())))
                for deal, seed, bots in self.db.execute("SELECT deal, seed, bots FROM deals ORDER BY deal")]

    def plan_deal(self, deal: int, seed: int, bots: Sequence[str]) -> Deal:
        """Store a new deal set and return it."""
        with self.transaction() as db:
            db.execute("INSERT INTO deals VALUES (?, ?, ?)", (deal, seed, json.dumps(list(bots))))
        return Deal(deal, seed, tuple(bots), frozenset())

    def match_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def match_seeds(self) -> list[tuple[int, int, int]]:
        """Return (deal, rotation, seed) of every stored match, in order."""
        return [(int(d), int(r), int(s)) for d, r, s in self.db.execute(
            "SELECT deal, rotation, seed FROM matches ORDER BY deal, rotation")]

    def record_match(self, deal: int, rotation: int, record: MatchRecord, bots: Sequence[str],
                     ratings_after: dict[str, Rating], seconds: float, replay: dict[str, Any]) -> int:
        """Store a finished match, its seats, faults and the ratings after it, in one transaction.

        ``bots`` are the bot names by seat. Returns the match id.
        """
        assert record.result is not None
        places = record.ranking_places()
        with self.transaction() as db:
            ids = {name: bot_id for bot_id, name in db.execute("SELECT id, name FROM bots")}
            cursor = db.execute(
                "INSERT INTO matches (deal, rotation, seed, finished_at, seconds, steps, replay) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (deal, rotation, record.seed, time.time(), seconds, len(record.steps), json.dumps(replay)))
            match_id = int(cursor.lastrowid or 0)
            for seat, name in enumerate(bots):
                db.execute("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (
                    match_id, seat, ids[name], record.result.totals[seat], places[seat], seat in record.benched,
                    sum(1 for f in record.faults if f.seat == seat), len(record.latencies[seat])))
                buckets: dict[int, int] = {}
                for seconds_taken in record.latencies[seat]:
                    b = _bucket(seconds_taken)
                    buckets[b] = buckets.get(b, 0) + 1
                db.executemany("INSERT INTO latency VALUES (?, ?, ?) ON CONFLICT (bot_id, bucket) "
                               "DO UPDATE SET count = count + excluded.count",
                               [(ids[name], b, n) for b, n in buckets.items()])
            db.executemany("INSERT INTO faults VALUES (?, ?, ?, ?, ?)",
                           [(match_id, f.seat, f.step, f.kind.value, f.detail) for f in record.faults])
            for name, rating in ratings_after.items():
                db.execute("UPDATE bots SET mu = ?, sigma = ? WHERE id = ?", (rating.mu, rating.sigma, ids[name]))
                db.execute("INSERT INTO ratings VALUES (?, ?, ?, ?)", (match_id, ids[name], rating.mu, rating.sigma))
        return match_id

    def replay(self, match_id: int) -> dict[str, Any]:
        """Return the stored replay of a match. Raises :class:`StoreError` for an unknown id."""
        row = self.db.execute("SELECT replay FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            count = self.match_count()
            raise StoreError(f"no match {match_id} in {str(self.path)!r} (it holds {count} matches)")
        data: dict[str, Any] = json.loads(row[0])
        return data

    def leaderboard(self) -> list[BoardRow]:
        """Return the leaderboard: bots by conservative rating (mu - 3 sigma), best first."""
        stats = {
            bot_id: (int(n), float(wins or 0), float(points or 0.0), int(faults or 0))
            for bot_id, n, wins, points, faults in self.db.execute(
                "SELECT bot_id, count(*), sum(place = 1), avg(total), sum(faults) FROM seats GROUP BY bot_id")
        }
        latency: dict[int, list[tuple[int, int]]] = {}
        for bot_id, bucket, count in self.db.execute("SELECT bot_id, bucket, count FROM latency ORDER BY bucket"):
            latency.setdefault(bot_id, []).append((bucket, count))
        rows = []
        for bot_id, name, mu, sigma in self.db.execute("SELECT id, name, mu, sigma FROM bots"):
            n, wins, points, faults = stats.get(bot_id, (0, 0.0, 0.0, 0))
            hist = latency.get(bot_id, [])
            rows.append((mu - 3 * sigma, name, mu, sigma, n, wins, points, faults,
                         _quantile(hist, 0.5), _quantile(hist, 0.99)))
        rows.sort(key=lambda r: (-r[0], r[1]))
        return [BoardRow(i + 1, name, mu, sigma, cons, n, wins, points, faults, med * 1000, p99 * 1000)
                for i, (cons, name, mu, sigma, n, wins, points, faults, med, p99) in enumerate(rows)]


def _quantile(hist: Sequence[tuple[int, int]], q: float) -> float:
    total = sum(count for _, count in hist)
    if total == 0:
        return 0.0
    target = q * total
    seen = 0
    for bucket, count in hist:
        seen += count
        if seen >= target:
            return _bucket_seconds(bucket)
    return _bucket_seconds(hist[-1][0])
