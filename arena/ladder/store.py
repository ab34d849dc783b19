"""The ladder's SQLite file: bots, deal sets, matches, seats, faults, ratings, replays; a store module (it holds
SQL, as :mod:`arena.ladder.database` says which modules may).

A bot is its name and its fingerprint (its command and files): when the program behind a name changes, the
old version is kept under a marked name ("greedy (old 1a2b)", retired) with all its matches, and the name
gets a new entry with a fresh rating. The file stands on the SQLite shell (:mod:`arena.ladder.database`): a
database of an older schema (1: one entry per name; 2: before the pages' indexes; any file from before the
shell) is upgraded in place when opened for writing, and nothing stored is lost.

A match is stored whole, with the ratings after it, in one transaction, or not at all, so a ladder killed at
any moment (kill -9 included) never stores half a match nor one twice. Matches that finish together may
share a transaction (:meth:`Store.record_matches`); the ladder commits them before their tables play on.
WAL mode lets ``arena leaderboard`` read while a ladder writes. A store opened for writing holds an
exclusive lock (``flock``) on the file until it is closed or its process dies, so two ladders never write
one database. What the pages read is :mod:`arena.ladder.readmodel`'s.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from arena.core import replay as replay_format
from arena.core.referee import MatchSummary
from arena.ladder.database import Database, Migration, Schema
from arena.ladder.ratings import Outcome, Rating

LATENCY_BUCKET_BASE = 1.05
"""Decision latencies are kept per bot as a histogram of buckets 5% wide (median and p99 within 5%)."""

APPLICATION_ID = 0x41524E4C
"""The mark of a ladder file in its SQLite header ("ARNL"): what tells it from any other SQLite file."""

# The migrations, in order (arena.ladder.database). 1 is the first ladder format and makes only what a file lacks
# (a file from before the shell may hold some of it); the meta row 'schema' is what the arenas before the shell
# read, and refuse a file when it is above theirs: it stays 2 until a migration changes what they would misread.
_TABLES = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,         -- as shown: the bot list's name, or "NAME (old FINGERPRINT)" when retired
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
    replay BLOB NOT NULL,              -- zlib-compressed JSON: game, options, seed, names, decisions, faults, events
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
INSERT OR REPLACE INTO meta VALUES ('schema', '1');
"""
_BOT_VERSIONS = """
ALTER TABLE bots ADD COLUMN base TEXT;  -- the name in the bot list
ALTER TABLE bots ADD COLUMN retired INTEGER NOT NULL DEFAULT 0;  -- 1 for a version that a changed program replaced
UPDATE bots SET base = name WHERE base IS NULL;
UPDATE meta SET value = '2' WHERE key = 'schema';
"""
# for `arena serve`: a bot's matches newest first, its wins and its faulted matches, a bot's rating history, the
# faults of a match (a file from before the shell may have some of them)
_PAGE_INDEXES = """
CREATE INDEX IF NOT EXISTS seats_by_bot_match ON seats (bot_id, match_id);
CREATE INDEX IF NOT EXISTS seats_board ON seats (bot_id, place, total, faults);  -- covers the leaderboard's sums
CREATE INDEX IF NOT EXISTS seats_won ON seats (bot_id, match_id) WHERE place = 1;
CREATE INDEX IF NOT EXISTS seats_faulted ON seats (bot_id, match_id) WHERE faults > 0;
CREATE INDEX IF NOT EXISTS ratings_by_bot ON ratings (bot_id, match_id);
CREATE INDEX IF NOT EXISTS faults_by_match ON faults (match_id, seat);
"""


FINALS_RECORDS = ("finals", "finals_outcome", "finals_not_started")
"""The meta rows a finals ladder keeps beside its matches and its cuts (``cuts``): public, never the seed before
the end."""


class StoreError(RuntimeError):
    """A database that cannot be used: unreadable, corrupt, of another ladder, or of a newer format."""


def _before_the_shell(db: sqlite3.Connection, tables: set[str]) -> int | None:
    """Return the schema version of a ladder file written before the SQLite shell (its header unmarked): 1 or 2,
    told by the columns of its bots (0 for a meta table alone); ``None`` for a file with no meta table, which is
    not a ladder's."""
    if "meta" not in tables:
        return None
    if "bots" not in tables:
        return 0
    columns = {str(row[1]) for row in db.execute("PRAGMA table_info(bots)")}
    return 2 if "base" in columns else 1


SCHEMA = Schema(
    noun="ladder", application_id=APPLICATION_ID, error=StoreError, fix="use --db for a new file",
    migrations=(Migration(1, _TABLES), Migration(2, _BOT_VERSIONS), Migration(3, _PAGE_INDEXES)),
    legacy=_before_the_shell, exclusive=True)
"""The ladder's file: schema 1 kept one entry per bot name; 2 keeps a changed program's old version apart
(``base``, ``retired``); 3 adds the indexes the pages read through."""
SCHEMA_VERSION = SCHEMA.version


@dataclass(frozen=True, slots=True)
class LadderIdentity:
    """What makes two runs the same ladder: the game, its options, the seat count and the ladder seed."""

    game: str
    seats: int
    seed: int
    options: dict[str, Any]
    drawn: bool = False
    """Whether the seed was drawn at random by the ladder (so it is a secret), not given by its operator."""

    def describe(self) -> str:
        """Return the identity for a person: a drawn seed is never shown (it would give away every deal)."""
        seed = "a secret seed" if self.drawn else f"ladder seed {self.seed}"
        return f"{self.game}, {self.seats} seats, {seed}, options {json.dumps(self.options)}"


@dataclass(slots=True)
class DealSet:
    """A planned deal set: deal ``deal``'s ``seed`` played once per rotation of ``bots`` (rotation 0 seating),
    the rotations already played in ``done``. The ladder keeps it up to date as it plays: a rotation played, a
    bot replaced (which it stores with :meth:`Store.replace_deal_bots`)."""

    deal: int
    seed: int
    bots: list[str]
    done: set[int]


@dataclass(frozen=True, slots=True)
class Finished:
    """A finished match to store: rotation ``rotation`` of deal set ``deal``, its summary, the bots by seat,
    the ratings after it (of the bots it changed), its seconds, and its replay as :func:`arena.core.replay.pack`
    made it (where the match was played: the head only stores the bytes)."""

    deal: int
    rotation: int
    match: MatchSummary
    bots: tuple[str, ...]
    ratings_after: dict[str, Rating]
    seconds: float
    replay: bytes


@dataclass(frozen=True, slots=True)
class BoardRow:
    """One line of the leaderboard."""

    rank: int
    bot: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    wins: int
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


_LOG_BASE = math.log(LATENCY_BUCKET_BASE)


def _bucket(seconds: float) -> int:
    # math.log(x, base) is log(x) / log(base): the same buckets, one logarithm fewer
    return max(0, int(math.log(max(seconds * 1e6, 1.0)) / _LOG_BASE))


def _bucket_seconds(bucket: int) -> float:
    # the middle of the bucket, in seconds
    return float(LATENCY_BUCKET_BASE ** (bucket + 0.5) / 1e6)


class Store:
    """An open ladder database."""

    def __init__(self, path: str | Path, *, readonly: bool = False) -> None:
        """Open (or create, unless ``readonly``) the database at ``path``; a writer upgrades an older one in place.
        Raises :class:`StoreError`.

        Opened for writing, the file is locked for this process until :meth:`close`; a second writer gets a
        :class:`StoreError`. Readers never wait for the lock.
        """
        self.path = Path(path)
        self.readonly = readonly
        self._ids: dict[str, int] = {}
        self.database = Database(self.path, SCHEMA, readonly=readonly)
        self.db = self.database.db
        where = self.database.where
        try:
            self.identity()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise StoreError(f"{where} is not a usable arena database: {exc}") from None
        except (ValueError, KeyError, TypeError) as exc:
            self.close()
            raise StoreError(f"{where} is not a usable arena database: bad ladder description ({exc})") from None

    def close(self) -> None:
        """Close the database and release the writer's lock."""
        self.database.close()

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Run the body in one write transaction: all of it is stored, or none of it.

        SQLite failures (a full disk, a broken file) become :class:`StoreError`.
        """
        return self.database.transaction()

    def identity(self) -> LadderIdentity | None:
        """Return the identity of the ladder stored here, or ``None`` for a new database."""
        raw = self._meta("ladder")
        if raw is None:
            return None
        data = json.loads(raw)
        return LadderIdentity(str(data["game"]), int(data["seats"]), int(data["seed"]), dict(data["options"]),
                              bool(data.get("drawn", False)))

    def claim(self, identity: LadderIdentity) -> None:
        """Make this database hold ``identity``'s ladder. Raises :class:`StoreError` if it holds another."""
        stored = self.identity()
        if stored is None:
            with self.transaction() as db:
                db.execute("INSERT INTO meta VALUES ('ladder', ?)", (_identity_json(identity),))
            return
        if _canonical(stored) != _canonical(identity):
            other = " (another seed)" if _canonical(replace(stored, seed=identity.seed)) == _canonical(identity) else ""
            raise StoreError(f"{str(self.path)!r} holds another ladder ({stored.describe()}), not "
                             f"{identity.describe()}{other}; use --db for a new file")

    def rekey(self, seed: int) -> None:
        """Give the ladder stored here the new, drawn secret ``seed``: the deal sets planned so far keep their seeds
        (they are stored), every later one follows from ``seed``. For a ladder whose seed bots may know (a contest
        made by an older arena, whose seed defaulted to 1). Raises :class:`StoreError` for a database without a
        ladder."""
        stored = self.identity()
        if stored is None:
            raise StoreError(f"{str(self.path)!r} holds no ladder to give a new seed")
        with self.transaction() as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'ladder'",
                       (_identity_json(replace(stored, seed=seed, drawn=True)),))

    def record_settings(self, settings: dict[str, Any]) -> None:
        """Keep the settings of the latest run (clock, fault limit, tables, budget): shown by ``arena serve``.

        Never the seed: ``settings`` are public.
        """
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('settings', ?)", (json.dumps(settings),))

    def settings(self) -> dict[str, Any] | None:
        """Return the settings of the latest run, ``None`` when no run stored them."""
        raw = self._meta("settings")
        return None if raw is None else dict(json.loads(raw))

    def note_sandbox(self, level: str) -> None:
        """Record that a run of this ladder played with its bots isolated at ``level`` (see README "Sandbox")."""
        levels = self.sandbox_levels()
        if level not in levels:
            with self.transaction() as db:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('sandbox', ?)", (json.dumps([*levels, level]),))

    def sandbox_levels(self) -> list[str]:
        """Return the isolation levels the runs of this ladder played under, in the order first seen."""
        raw = self._meta("sandbox")
        return [str(level) for level in json.loads(raw)] if raw is not None else []

    def record_cut(self, cut: dict[str, Any]) -> None:
        """Keep one more cut of a finals ladder (:class:`arena.ladder.finals.CutRecord` as JSON), after the others."""
        with self.transaction() as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'cuts'").fetchone()
            cuts = json.loads(row[0]) if row is not None else []
            db.execute("INSERT OR REPLACE INTO meta VALUES ('cuts', ?)", (json.dumps([*cuts, cut]),))

    def cuts(self) -> list[dict[str, Any]]:
        """Return the cuts of a finals ladder in the order made (none for any other ladder)."""
        raw = self._meta("cuts")
        return [dict(c) for c in json.loads(raw)] if raw is not None else []

    def record_finals(self, key: str, record: dict[str, Any]) -> None:
        """Keep a finals' public record ``key``: ``finals`` (their rules, finalists and commitment, written when
        they start), ``finals_not_started`` (the finalists that no longer start, with the reason) or
        ``finals_outcome`` (their end: the seed, the board). Never the seed before their end: these rows are what
        the pages show."""
        if key not in FINALS_RECORDS:
            raise ValueError(f"a finals record is one of {', '.join(FINALS_RECORDS)}, not {key!r}")
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(record)))

    def finals(self, key: str) -> dict[str, Any] | None:
        """Return the finals' record ``key`` (see :meth:`record_finals`), ``None`` when there is none."""
        if key not in FINALS_RECORDS:
            raise ValueError(f"a finals record is one of {', '.join(FINALS_RECORDS)}, not {key!r}")
        raw = self._meta(key)
        return None if raw is None else dict(json.loads(raw))

    def register_bot(self, name: str, fingerprint: str, command: Sequence[str],
                     initial: Rating | None = None) -> str | None:
        """Make ``name`` stand for the program with ``fingerprint``; return the retired name of its old version.

        When the program changed since its last ladder run, its old entry is kept, with its matches, under
        "NAME (old FINGERPRINT)", and ``name`` becomes a new entry rated ``initial`` (or takes back an entry of
        the same fingerprint retired before). Returns ``None`` when nothing changed or the bot is new.
        """
        initial = initial or Rating()
        row = self.db.execute("SELECT id, fingerprint FROM bots WHERE name = ?", (name,)).fetchone()
        retired: str | None = None
        with self.transaction() as db:
            if row is not None and row[1] == fingerprint:
                db.execute("UPDATE bots SET command = ? WHERE id = ?", (json.dumps(list(command)), row[0]))
                return None
            if row is not None:
                retired = self._retired_name(name, str(row[1]))
                db.execute("UPDATE bots SET name = ?, retired = 1 WHERE id = ?", (retired, row[0]))
            back = db.execute("SELECT id FROM bots WHERE base = ? AND fingerprint = ? AND retired = 1",
                              (name, fingerprint)).fetchone()
            if back is not None:
                db.execute("UPDATE bots SET name = ?, retired = 0, command = ? WHERE id = ?",
                           (name, json.dumps(list(command)), back[0]))
            else:
                db.execute("INSERT INTO bots (name, fingerprint, command, mu, sigma, added_at, base, retired) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, 0)",
                           (name, fingerprint, json.dumps(list(command)), initial.mu, initial.sigma, time.time(),
                            name))
        self._ids.clear()
        return retired

    def _retired_name(self, name: str, fingerprint: str) -> str:
        taken = {str(n) for (n,) in self.db.execute("SELECT name FROM bots")}
        for width in range(min(4, len(fingerprint)), len(fingerprint) + 1):
            label = f"{name} (old {fingerprint[:width]})"
            if label not in taken:
                return label
        count = 2
        while f"{name} (old {fingerprint} #{count})" in taken:
            count += 1
        return f"{name} (old {fingerprint} #{count})"

    def _bot_ids(self) -> dict[str, int]:
        if not self._ids:
            self._ids = {str(name): int(bot_id) for bot_id, name in self.db.execute("SELECT id, name FROM bots")}
        return self._ids

    def ratings(self) -> dict[str, Rating]:
        """Return every bot's current rating."""
        return {name: Rating(mu, sigma) for name, mu, sigma in self.db.execute("SELECT name, mu, sigma FROM bots")}

    def rating_system(self) -> str | None:
        """Return the settings of the rating system that rated the stored matches (``None``: unknown)."""
        return self._meta("rating")

    def set_ratings(self, ratings: dict[str, Rating], system: str) -> None:
        """Store every bot's current rating as rated by ``system`` (after rating the stored matches again)."""
        with self.transaction() as db:
            db.executemany("UPDATE bots SET mu = ?, sigma = ? WHERE name = ?",
                           [(r.mu, r.sigma, name) for name, r in ratings.items()])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('rating', ?)", (system,))

    def results(self) -> list[Outcome]:
        """Return every stored match by deal set and rotation: its bots by seat and their places (benched: None)."""
        rows = self.db.execute(
            "SELECT m.deal, m.rotation, b.name, s.place, s.benched FROM matches m "
            "JOIN seats s ON s.match_id = m.id JOIN bots b ON b.id = s.bot_id "
            "ORDER BY m.deal, m.rotation, s.seat")
        outcomes: list[Outcome] = []
        for (deal, rotation), group in itertools.groupby(rows, key=lambda row: (int(row[0]), int(row[1]))):
            seats = list(group)
            outcomes.append(Outcome(deal, rotation, tuple(str(row[2]) for row in seats),
                                    tuple(None if row[4] else int(row[3]) for row in seats)))
        return outcomes

    def played(self) -> dict[str, int]:
        """Return how many stored matches each bot has played."""
        rows = self.db.execute("SELECT b.name, count(s.match_id) FROM bots b LEFT JOIN seats s ON s.bot_id = b.id "
                               "GROUP BY b.id")
        return {name: int(n) for name, n in rows}

    def deals(self) -> list[DealSet]:
        """Return every planned deal set, in order, with the rotations already played."""
        done: dict[int, set[int]] = {}
        for deal, rotation in self.db.execute("SELECT deal, rotation FROM matches"):
            done.setdefault(deal, set()).add(rotation)
        return [DealSet(deal, seed, list(json.loads(bots)), done.get(deal, set()))
                for deal, seed, bots in self.db.execute("SELECT deal, seed, bots FROM deals ORDER BY deal")]

    def plan_deal(self, deal: int, seed: int, bots: Sequence[str]) -> DealSet:
        """Store a new deal set and return it."""
        with self.transaction() as db:
            db.execute("INSERT INTO deals VALUES (?, ?, ?)", (deal, seed, json.dumps(list(bots))))
        return DealSet(deal, seed, list(bots), set())

    def replace_deal_bots(self, deal: int, bots: Sequence[str]) -> None:
        """Change the bots of a planned deal set (rotation 0 seating) for the rotations still to play."""
        with self.transaction() as db:
            db.execute("UPDATE deals SET bots = ? WHERE deal = ?", (json.dumps(list(bots)), deal))

    def match_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM matches").fetchone()[0])

    def match_seeds(self) -> list[tuple[int, int, int]]:
        """Return (deal, rotation, seed) of every stored match, in order."""
        return [(int(d), int(r), int(s)) for d, r, s in self.db.execute(
            "SELECT deal, rotation, seed FROM matches ORDER BY deal, rotation")]

    def record_match(self, deal: int, rotation: int, match: MatchSummary, bots: Sequence[str],
                     ratings_after: dict[str, Rating], seconds: float, replay: bytes) -> int:
        """Store one finished match (:meth:`record_matches` of one); return its id."""
        return self.record_matches([Finished(deal, rotation, match, tuple(bots), ratings_after, seconds, replay)])[0]

    def record_matches(self, matches: Sequence[Finished]) -> list[int]:
        """Store finished matches, their seats, faults and the ratings after each, in one transaction.

        They are stored in the order given (the ratings after the last are the bots' current ones). Returns
        their ids. Raises :class:`StoreError` when the database cannot be written: then none of them is
        stored. One transaction for matches that finished together costs far less than one each: the
        pages of the indexes they share are written once (``benchmarks/cluster.py``).
        """
        ids = self._bot_ids()
        buckets: dict[tuple[int, int], int] = {}
        for finished in matches:
            for seat, name in enumerate(finished.bots):
                bot_id = ids[name]
                for seconds_taken in finished.match.latencies[seat]:
                    key = (bot_id, _bucket(seconds_taken))
                    buckets[key] = buckets.get(key, 0) + 1
        stored: list[int] = []
        with self.transaction() as db:
            for finished in matches:
                match, bots = finished.match, finished.bots
                cursor = db.execute(
                    "INSERT INTO matches (deal, rotation, seed, finished_at, seconds, steps, replay) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (finished.deal, finished.rotation, match.seed, time.time(), finished.seconds, match.steps,
                     finished.replay))
                match_id = int(cursor.lastrowid or 0)
                stored.append(match_id)
                faults = [0] * len(bots)
                for f in match.faults:
                    faults[f.seat] += 1
                db.executemany("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                    (match_id, seat, ids[name], match.totals[seat], match.places[seat], seat in match.benched,
                     faults[seat], len(match.latencies[seat])) for seat, name in enumerate(bots)])
                db.executemany("INSERT INTO faults VALUES (?, ?, ?, ?, ?)",
                               [(match_id, f.seat, f.step, f.kind.value, f.detail) for f in match.faults])
                db.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?)",
                               [(match_id, ids[name], r.mu, r.sigma) for name, r in finished.ratings_after.items()])
            db.executemany("INSERT INTO latency VALUES (?, ?, ?) ON CONFLICT (bot_id, bucket) "
                           "DO UPDATE SET count = count + excluded.count",
                           [(bot_id, b, n) for (bot_id, b), n in buckets.items()])
            current: dict[str, Rating] = {}
            for finished in matches:
                current.update(finished.ratings_after)
            db.executemany("UPDATE bots SET mu = ?, sigma = ? WHERE id = ?",
                           [(r.mu, r.sigma, ids[name]) for name, r in current.items()])
        return stored

    def replay(self, match_id: int) -> dict[str, Any]:
        """Return the stored replay of a match. Raises :class:`StoreError` for an unknown id."""
        row = self.db.execute("SELECT replay FROM matches WHERE id = ?", (match_id,)).fetchone()
        if row is None:
            count = self.match_count()
            raise StoreError(f"no match {match_id} in {str(self.path)!r} (it holds {count} matches)")
        try:
            return replay_format.decompress(row[0])
        except replay_format.ReplayError as exc:
            raise StoreError(f"match {match_id} in {str(self.path)!r}: {exc}") from None

    def leaderboard(self) -> list[BoardRow]:
        """Return the leaderboard: bots by conservative rating (mu - 3 sigma), best first.

        Wins count every first place, shared ones included (a seat benched for faults is never first).
        """
        stats = {
            bot_id: (int(n), int(wins or 0), float(points or 0.0), int(faults or 0))
            for bot_id, n, wins, points, faults in self.db.execute(
                "SELECT bot_id, count(*), sum(place = 1), avg(total), sum(faults) FROM seats GROUP BY bot_id")
        }
        latency: dict[int, list[tuple[int, int]]] = {}
        for bot_id, bucket, count in self.db.execute("SELECT bot_id, bucket, count FROM latency ORDER BY bucket"):
            latency.setdefault(bot_id, []).append((bucket, count))
        rows = []
        for bot_id, name, mu, sigma in self.db.execute("SELECT id, name, mu, sigma FROM bots"):
            n, wins, points, faults = stats.get(bot_id, (0, 0, 0.0, 0))
            hist = latency.get(bot_id, [])
            rows.append((mu - 3 * sigma, name, mu, sigma, n, wins, points, faults,
                         _quantile(hist, 0.5), _quantile(hist, 0.99)))
        rows.sort(key=lambda r: (-r[0], r[1]))
        return [BoardRow(i + 1, name, mu, sigma, cons, n, wins, points, faults, med * 1000, p99 * 1000)
                for i, (cons, name, mu, sigma, n, wins, points, faults, med, p99) in enumerate(rows)]


def _identity_json(identity: LadderIdentity) -> str:
    return json.dumps({"game": identity.game, "seats": identity.seats, "seed": identity.seed,
                       "options": identity.options, "drawn": identity.drawn})


def _canonical(identity: LadderIdentity) -> str:
    """Return ``identity`` as canonical JSON (tuples and lists alike), for comparing a stored one."""
    return json.dumps([identity.game, identity.seats, identity.seed, identity.options], sort_keys=True)


def _quantile(hist: Sequence[tuple[int, int]], q: float) -> float:
    """Return the ``q`` quantile (seconds) of a latency histogram, interpolated inside its bucket (log-linearly,
    as the buckets are): bots whose latencies share a bucket still get the quantiles that tell them apart,
    not all the bucket's middle."""
    total = sum(count for _, count in hist)
    if total == 0:
        return 0.0
    target = q * total
    seen = 0
    for bucket, count in hist:
        if seen + count >= target:
            inside = (target - seen) / count if count else 0.5
            return float(LATENCY_BUCKET_BASE ** (bucket + min(1.0, max(0.0, inside))) / 1e6)
        seen += count
    return _bucket_seconds(hist[-1][0])
