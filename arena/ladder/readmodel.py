"""What is read of a ladder besides what the ladder itself reads: the pages of ``arena serve``
(:mod:`arena.web.data` shapes them into JSON) and the figures of the benchmarks. A store module (it holds SQL,
as :mod:`arena.ladder.database` says which modules may), the only one besides :mod:`arena.ladder.store` that
knows the ladder's tables.

Every question is one query through the indexes of the schema (:mod:`arena.ladder.store`), answered in plain
values: rows as named tuples, pages newest first below a ``before`` cursor. The scans that whole-database
figures fold (the seats of every match, the ratings after each) are handed over as iterators of plain tuples,
never built into lists of objects: a million-match ladder has four million seats. Reading, it writes nothing;
the web opens its stores read-only, beside a ladder that writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from arena.ladder.store import Store

FILTERS = ("all", "won", "lost", "faulted")
"""What a bot's list of matches may be narrowed to: every match, first places, the others, matches with a fault."""

_FILTER_SQL = {"all": "", "won": " AND place = 1", "lost": " AND place > 1", "faulted": " AND faults > 0"}
_NEWEST = 2**62  # a cursor above every match id
_MATCH = "SELECT m.id, m.deal, m.rotation, m.finished_at, m.seconds, m.steps FROM"


class MatchRow(NamedTuple):
    """A stored match as a list shows it (its replay is read apart)."""

    id: int
    deal: int
    rotation: int
    finished_at: float
    seconds: float
    steps: int


class SeatRow(NamedTuple):
    """One seat of a stored match: the bot's id, its total, its place (benched last) and its faults."""

    match_id: int
    seat: int
    bot_id: int
    total: int
    place: int
    benched: bool
    faults: int


class FaultRow(NamedTuple):
    """One fault of a bot: its match, that match's deal set, the step, the kind and the detail."""

    match_id: int
    deal: int
    step: int
    kind: str
    detail: str


class ReadModel:
    """The reads of one store's connection (a read-only store, as a rule: the pages never write)."""

    def __init__(self, store: Store) -> None:
        self._db = store.db

    # ------------------------------------------------------------------------------------------- the ladder

    def newest_match(self) -> int:
        """Return the newest match's id, 0 for none (ids count the stored matches: it changes when one lands)."""
        return int(self._db.execute("SELECT coalesce(max(id), 0) FROM matches").fetchone()[0])

    def meta(self) -> dict[str, str]:
        """Return every row of the ladder's meta table (the ``ladder`` row holds the seed: the caller picks)."""
        return {str(k): str(v) for k, v in self._db.execute("SELECT key, value FROM meta")}

    def bot_count(self) -> int:
        """Return how many bot entries the ladder has (retired versions included)."""
        return int(self._db.execute("SELECT count(*) FROM bots").fetchone()[0])

    def bot_names(self) -> dict[int, str]:
        """Return every bot's name by its id."""
        return {int(i): str(n) for i, n in self._db.execute("SELECT id, name FROM bots")}

    def bot_id(self, name: str) -> int | None:
        """Return the id of the bot called ``name``, ``None`` for no such bot."""
        row = self._db.execute("SELECT id FROM bots WHERE name = ?", (name,)).fetchone()
        return None if row is None else int(row[0])

    # ------------------------------------------------------------------------------------------ matches

    def match(self, match_id: int) -> MatchRow | None:
        """Return match ``match_id``, ``None`` for none."""
        row = self._db.execute(f"{_MATCH} matches m WHERE m.id = ?", (match_id,)).fetchone()
        return None if row is None else MatchRow._make(row)

    def matches(self, before: int | None, limit: int) -> list[MatchRow]:
        """Return up to ``limit`` matches below id ``before`` (``None``: the newest), newest first."""
        rows = self._db.execute(f"{_MATCH} matches m WHERE m.id < ? ORDER BY m.id DESC LIMIT ?",
                                (_NEWEST if before is None else before, limit))
        return [MatchRow._make(row) for row in rows]

    def bot_matches(self, bot_id: int, before: int | None, limit: int, which: str = "all") -> list[MatchRow]:
        """Return up to ``limit`` of the bot's matches below id ``before``, newest first: all of them, or those
        ``which`` of :data:`FILTERS` names. Raises :class:`ValueError` for another filter."""
        condition = _FILTER_SQL.get(which)
        if condition is None:
            raise ValueError(f"no match filter {which!r}; the filters are {', '.join(FILTERS)}")
        rows = self._db.execute(
            f"{_MATCH} seats s JOIN matches m ON m.id = s.match_id "
            f"WHERE s.bot_id = ? AND s.match_id < ?{condition} ORDER BY s.match_id DESC LIMIT ?",
            (bot_id, _NEWEST if before is None else before, limit))
        return [MatchRow._make(row) for row in rows]

    def pair_matches(self, a_id: int, b_id: int, before: int | None, limit: int) -> list[MatchRow]:
        """Return up to ``limit`` matches below id ``before`` that both bots played, newest first."""
        # EXISTS, not a join: joined, SQLite looked b's seats up by a range instead of the match id
        rows = self._db.execute(
            f"{_MATCH} seats sa JOIN matches m ON m.id = sa.match_id WHERE sa.bot_id = ? AND sa.match_id < ? AND "
            "EXISTS (SELECT 1 FROM seats sb WHERE sb.match_id = sa.match_id AND sb.bot_id = ?) "
            "ORDER BY sa.match_id DESC LIMIT ?", (a_id, _NEWEST if before is None else before, b_id, limit))
        return [MatchRow._make(row) for row in rows]

    def seats_of(self, match_ids: Iterable[int]) -> list[SeatRow]:
        """Return the seats of the given matches, by match and seat."""
        ids = list(match_ids)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._db.execute(f"SELECT match_id, seat, bot_id, total, place, benched, faults FROM seats "
                                f"WHERE match_id IN ({marks}) ORDER BY match_id, seat", ids)
        return [SeatRow(int(m), int(s), int(b), int(t), int(p), bool(benched), int(f))
                for m, s, b, t, p, benched, f in rows]

    def rotations_played(self, deals: Iterable[int]) -> dict[int, int]:
        """Return how many rotations of each of ``deals`` are stored (a deal set with none is left out)."""
        wanted = sorted(set(deals))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        return {int(d): int(n) for d, n in self._db.execute(
            f"SELECT deal, count(*) FROM matches WHERE deal IN ({marks}) GROUP BY deal", wanted)}

    def match_deals(self, after: int = 0) -> dict[int, int]:
        """Return the deal set of every match whose id is above ``after``, by match id."""
        # all of them: through the covering (deal, rotation) index, not the large table
        if after == 0:
            return dict(self._db.execute("SELECT id, deal FROM matches"))
        return dict(self._db.execute("SELECT id, deal FROM matches WHERE id > ?", (after,)))

    def seats_since(self, row: int) -> Iterator[tuple[int, int, int, int, int]]:
        """Yield (row, match id, bot id, total, place) of every seat stored after seat row ``row``, in the order
        stored: a match's seats are stored together, after every earlier match's, so reading on from the last
        row seen reads only what landed since."""
        cursor: Iterator[tuple[int, int, int, int, int]] = self._db.execute(
            "SELECT rowid, match_id, bot_id, total, place FROM seats WHERE rowid > ? ORDER BY rowid", (row,))
        return cursor

    # ---------------------------------------------------------------------------------------------- bots

    def faulted_matches(self, bot_id: int) -> int:
        """Return how many of the bot's matches had a fault of its own."""
        try:  # the partial index counts only faulted seats; unhinted, SQLite scanned every seat of the bot
            row = self._db.execute("SELECT count(*) FROM seats INDEXED BY seats_faulted WHERE bot_id = ? AND "
                                   "faults > 0", (bot_id,)).fetchone()
        except sqlite3.OperationalError:  # a database of schema 2 or before, read as it is
            row = self._db.execute("SELECT count(*) FROM seats WHERE bot_id = ? AND faults > 0",
                                   (bot_id,)).fetchone()
        return int(row[0])

    def bot_faults(self, bot_id: int, limit: int) -> list[FaultRow]:
        """Return the bot's latest faults, up to ``limit``: newest match first, by step within a match."""
        rows = self._db.execute(
            "SELECT f.match_id, m.deal, f.step, f.kind, f.detail FROM seats s "
            "JOIN faults f ON f.match_id = s.match_id AND f.seat = s.seat JOIN matches m ON m.id = s.match_id "
            "WHERE s.bot_id = ? AND s.faults > 0 ORDER BY s.match_id DESC, f.step LIMIT ?", (bot_id, limit))
        return [FaultRow(int(m), int(d), int(step), str(kind), str(detail)) for m, d, step, kind, detail in rows]

    def latency(self, bot_id: int) -> list[tuple[int, int]]:
        """Return the bot's decision-time histogram: (bucket, count), buckets as :mod:`arena.ladder.store` keeps
        them, in order."""
        return [(int(b), int(n)) for b, n in self._db.execute(
            "SELECT bucket, count FROM latency WHERE bot_id = ? ORDER BY bucket", (bot_id,))]

    # ------------------------------------------------------------------------------------------- ratings

    def ratings(self) -> Iterator[tuple[int, int, float, float]]:
        """Yield (match id, bot id, mu, sigma) of every rating after a match, in no particular order."""
        cursor: Iterator[tuple[int, int, float, float]] = self._db.execute(
            "SELECT match_id, bot_id, mu, sigma FROM ratings")
        return cursor

    def rating_at(self, bot_id: int, match_id: int) -> tuple[float, float] | None:
        """Return the bot's (mu, sigma) after its last match up to ``match_id``, ``None`` before its first."""
        row = self._db.execute("SELECT mu, sigma FROM ratings WHERE bot_id = ? AND match_id <= ? "
                               "ORDER BY match_id DESC LIMIT 1", (bot_id, match_id)).fetchone()
        return None if row is None else (float(row[0]), float(row[1]))

    # ------------------------------------------------------------------------ figures of the benchmarks

    def steps(self) -> int:
        """Return the decision steps of every stored match together."""
        return int(self._db.execute("SELECT coalesce(sum(steps), 0) FROM matches").fetchone()[0])

    def first_finished(self) -> float | None:
        """Return when the first stored match finished (``time.time()``), ``None`` before any."""
        row = self._db.execute("SELECT min(finished_at) FROM matches").fetchone()
        return None if row[0] is None else float(row[0])

    def finished_between(self, start: float, end: float) -> tuple[int, float]:
        """Return how many matches finished after ``start`` until ``end``, and the seconds played in them."""
        count, seconds = self._db.execute("SELECT count(*), coalesce(sum(seconds), 0) FROM matches "
                                          "WHERE finished_at > ? AND finished_at <= ?", (start, end)).fetchone()
        return int(count), float(seconds)

    def faults_by_bot(self) -> dict[str, int]:
        """Return how many faults each bot that had one was charged, by name."""
        return {str(name): int(n) for name, n in self._db.execute(
            "SELECT b.name, count(*) FROM faults f JOIN seats s ON s.match_id = f.match_id AND s.seat = f.seat "
            "JOIN bots b ON b.id = s.bot_id GROUP BY b.name")}
