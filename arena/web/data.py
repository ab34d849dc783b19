"""What ``arena serve`` reads from a ladder database: read-only, paginated, and without its secrets.

The database is opened read-only (SQLite ``mode=ro``, through :class:`arena.ladder.store.Store`), one connection per
thread, so a ladder can go on writing it (WAL): every query sees the matches stored so far. Every query is the
ladder's read model's (:mod:`arena.ladder.readmodel`): this module runs no SQL, it chooses what to show and
shapes it into JSON. Never read out:
the ladder seed, any match seed, the replay of a deal set whose rotations are not all played yet (its hands
would tell the deals still to come), nor a fault's detail from such a deal set (an illegal-answer fault
quotes the seat's legal choices, so its hand).

Figures over the whole database (the leaderboard, head to head) cost a scan of every match, too slow for
a page of a million-match ladder: :class:`Live` keeps the last one and recomputes it in the background when
new matches land, at most every ten times its own cost. Lists are pages of :data:`PAGE` rows found through
indexes, newest first, with a ``before`` cursor.
"""

from __future__ import annotations

import itertools
import logging
import operator
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from arena.games import get_game
from arena.games.base import Scoring
from arena.ladder.board import build_board
from arena.ladder.estimate import SequentialTest
from arena.ladder.readmodel import FILTERS, MatchRow, ReadModel
from arena.ladder.store import LATENCY_BUCKET_BASE, Store, StoreError

log = logging.getLogger("arena.web")

PAGE = 50
"""Rows per page of every list."""

HISTORY_POINTS = 400
"""Points per bot in the ratings plot: a longer history is sampled at this many evenly spaced matches."""

PUBLIC_META_WORDS = ("isolation", "sandbox")
"""Meta keys naming one of these words are shown with the ladder's settings (e.g. the isolation level a
ladder ran under). Other keys are not: the ``ladder`` key holds the ladder seed."""

INLINE_SECONDS = 0.05
"""A whole-database figure that took less than this is recomputed while the page waits, so it is never stale."""

T = TypeVar("T")


class NotFound(LookupError):
    """No such page, bot or match: answered with a 404 page saying so."""


class Withheld(LookupError):
    """A replay kept back until its deal set is complete: answered with a 403 page saying so."""


# ------------------------------------------------------------------------------------------- leaderboard


def board(store: Store) -> list[dict[str, Any]]:
    """Return the leaderboard, best first: the figures and order of ``arena leaderboard --json``.

    This is the one place the web pages get the leaderboard from: the same library call as the command
    (:func:`arena.ladder.board.build_board`, with the sequential test's defaults), whose rows carry each bot's 95%
    interval (``low``, ``high``) for drawing.
    """
    return [line.to_json() for line in build_board(store, SequentialTest()).lines]


# ----------------------------------------------------------------------------------------------- caching


class Live(Generic[T]):
    """A figure over the whole database, kept until new matches land, then recomputed.

    The first :meth:`get` starts computing it in the background and waits for it at most ``wait`` seconds
    (then answers ``None``: not ready yet). A stale value whose last computation was quick (under
    :data:`INLINE_SECONDS`) is recomputed while the caller waits, so a small ladder's pages are never stale.
    A slow one is returned at once while a recomputation runs in the background, no sooner than ten times
    the last one's cost after it (so a million-match ladder does not keep a core busy), at the first ask after
    that: a page showing a value older than :meth:`Reader.version` asks again until it has caught up.
    ``compute`` gets a read-only store; SQLite leaves Python's lock while it works, so pages are served
    meanwhile. ``clock`` (seconds) times the computations and their spacing.
    """

    def __init__(self, reader: Reader, compute: Callable[[Store], T], *, min_interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._reader = reader
        self._compute = compute
        self._min_interval = min_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._value: tuple[T, int] | None = None
        self._running = False
        self._not_before = 0.0
        self._cost = 0.0

    def start(self) -> None:
        """Start the first computation in the background (if none ran yet)."""
        with self._lock:
            if self._value is None and not self._running:
                self._running = True
                self._reader.background.submit(self._background, self._reader.version())

    def get(self, wait: float = 0.15) -> tuple[T, int] | None:
        """Return the value and the newest match id it counts, or ``None`` while its first computation runs."""
        version = self._reader.version()
        with self._lock:
            value = self._value
            if value is not None and value[1] != version and not self._running:
                if self._cost < INLINE_SECONDS:
                    self._value = value = (self._timed(), version)
                elif self._clock() >= self._not_before:
                    self._running = True
                    self._reader.background.submit(self._background, version)
            if value is not None:
                return value
        self.start()
        self._ready.wait(wait)
        return self._value

    def _timed(self) -> T:
        began = self._clock()
        value = self._compute(self._reader.store())
        self._cost = self._clock() - began
        self._not_before = self._clock() + max(self._min_interval, 10 * self._cost)
        return value

    def _background(self, version: int) -> None:
        try:
            value = self._timed()
            with self._lock:
                self._value = (value, version)
            self._ready.set()
        except Exception:
            log.exception("computing a figure of %s", self._reader.path)
        finally:
            with self._lock:
                self._running = False


# ------------------------------------------------------------------------------------------ head to head


@dataclass
class _Pair:
    deals: int = 0
    a_better: int = 0
    even: int = 0
    b_better: int = 0
    matches: int = 0
    a_ahead: int = 0
    b_ahead: int = 0


@dataclass
class HeadToHead:
    """Per pair of bots, their results on the complete deal sets both played: which one's totals over the
    set's rotations were better (lower or higher, as the game's ``scoring`` says), and in how many of those
    matches each finished ahead.

    Kept up to date incrementally: :meth:`update` reads only the matches stored since its last call.
    """

    seats: int
    scoring: Scoring = Scoring.LOWER_WINS
    last_row: int = 0
    """The last seats row read (rows are stored in match order, so reading on from here is incremental)."""
    last_match: int = 0
    pairs: dict[tuple[int, int], _Pair] = field(default_factory=dict)
    _open: dict[int, dict[int, list[tuple[int, int, int]]]] = field(default_factory=dict)
    """Per unfinished deal set, per match id: (bot id, total, place) by seat."""

    def update(self, store: Store) -> dict[str, Any]:
        """Read the new matches and return the head-to-head: bot names and one row per pair that shared a deal set."""
        read = ReadModel(store)
        deal_of = read.match_deals(0 if self.last_row == 0 else self.last_match)
        rows = read.seats_since(self.last_row)
        opened = self._open
        # a match's seats are stored in one transaction with it, after every earlier match's
        for match_id, group in itertools.groupby(rows, key=operator.itemgetter(1)):
            deal = deal_of.get(match_id)
            if deal is None:
                break  # stored after the read of matches above: the next update reads it
            seats = list(group)
            by_match = opened.get(deal)
            if by_match is None:
                by_match = opened[deal] = {}
            by_match[match_id] = [(bot_id, total, place) for _, _, bot_id, total, place in seats]
            self.last_row = int(seats[-1][0])
            self.last_match = max(self.last_match, int(match_id))
            if len(by_match) >= self.seats:
                self._fold(opened.pop(deal))
        names = read.bot_names()
        out = []
        for (a, b), p in sorted(self.pairs.items(), key=lambda item: (names.get(item[0][0], ""),
                                                                       names.get(item[0][1], ""))):
            out.append({"a": names.get(a, "?"), "b": names.get(b, "?"), "deals": p.deals, "a_better": p.a_better,
                        "even": p.even, "b_better": p.b_better, "matches": p.matches, "a_ahead": p.a_ahead,
                        "b_ahead": p.b_ahead})
        return {"bots": sorted(names.values()), "pairs": out, "better": self.scoring.value}

    def _fold(self, matches: dict[int, list[tuple[int, int, int]]]) -> None:
        totals: dict[int, int] = {}
        played: dict[int, int] = {}
        for seats in matches.values():
            for bot, total, _ in seats:
                totals[bot] = totals.get(bot, 0) + total
                played[bot] = played.get(bot, 0) + 1
            for i, (a, _, pa) in enumerate(seats):
                for b, _, pb in seats[i + 1:]:
                    key, ahead_a = ((a, b), pa < pb) if a < b else ((b, a), pb < pa)
                    pair = self.pairs.setdefault(key, _Pair())
                    pair.matches += 1
                    pair.a_ahead += ahead_a
                    pair.b_ahead += (pa != pb) and not ahead_a
        # deal-level: only bots that played every rotation (a bot replaced mid-set did not)
        full = sorted(bot for bot, n in played.items() if n == len(matches))
        for i, a in enumerate(full):
            for b in full[i + 1:]:
                pair = self.pairs.setdefault((a, b), _Pair())
                pair.deals += 1
                if self.scoring.better(totals[a], totals[b]):
                    pair.a_better += 1
                elif self.scoring.better(totals[b], totals[a]):
                    pair.b_better += 1
                else:
                    pair.even += 1


# ---------------------------------------------------------------------------------------------- reading


class Reader:
    """A ladder database opened read-only, one connection per thread, with the figures the pages show."""

    def __init__(self, path: str | Path) -> None:
        """Open the database at ``path``. Raises :class:`StoreError` for a missing or unusable one."""
        self.path = Path(path)
        self._local = threading.local()
        self._stores: list[Store] = []
        self._lock = threading.Lock()
        self.background = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-serve-figures")
        identity = self.store().identity()
        if identity is None:
            raise StoreError(f"{str(self.path)!r} holds no ladder yet")
        self.game = get_game(identity.game)
        self.seats = identity.seats
        self.options = identity.options
        self.board: Live[list[dict[str, Any]]] = Live(self, board)
        self._h2h = HeadToHead(self.seats, self.game.scoring)
        self._h2h_lock = threading.Lock()
        self.head_to_head: Live[dict[str, Any]] = Live(self, self._update_h2h)
        self.ratings: Live[dict[str, Any]] = Live(self, self._ratings_history)

    def start(self) -> None:
        """Start computing the whole-database figures in the background, before the first page asks."""
        for figure in (self.board, self.head_to_head, self.ratings):
            figure.start()

    def _update_h2h(self, store: Store) -> dict[str, Any]:
        with self._h2h_lock:
            return self._h2h.update(store)

    def store(self) -> Store:
        """Return this thread's read-only store."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = Store(self.path, readonly=True)
            self._local.store = store
            self._local.read = ReadModel(store)
            with self._lock:
                self._stores.append(store)
        return store

    def read(self) -> ReadModel:
        """Return this thread's read model (over its read-only store)."""
        self.store()
        read: ReadModel = self._local.read
        return read

    def close(self) -> None:
        """Stop the background work and close every connection."""
        self.background.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            for store in self._stores:
                store.close()
            self._stores.clear()

    def version(self) -> int:
        """Return the newest match id (match ids count the stored matches): it changes when a match lands."""
        return self.read().newest_match()

    def summary(self) -> dict[str, Any]:
        """Return the ladder's public description: game, seats, options, run settings, isolation level."""
        store, read = self.store(), self.read()
        meta = read.meta()
        shown = {k: v for k, v in meta.items()
                 if any(word in k.lower() for word in PUBLIC_META_WORDS) and "seed" not in k.lower()}
        if "sandbox" in shown:  # the levels the ladder's runs played under, as `arena leaderboard` says them
            shown["sandbox"] = "+".join(store.sandbox_levels())
        return {"game": self.game.name, "title": self.game.title, "seats": self.seats, "options": self.options,
                "settings": store.settings(), "meta": shown, "matches": self.version(),
                "bots": read.bot_count()}

    # ------------------------------------------------------------------------------------ ratings history

    def _ratings_history(self, store: Store) -> dict[str, Any]:
        """Return every bot's rating after each of its matches (sampled at :data:`HISTORY_POINTS` matches).

        ``x`` are match numbers (ids); per bot ``mu`` and ``sigma`` at each x (``None`` before its first
        match), carried forward between its matches.
        """
        read = ReadModel(store)
        names = read.bot_names()
        last = read.newest_match()
        if last <= HISTORY_POINTS:
            xs = list(range(1, last + 1))
            per_bot: dict[int, dict[int, tuple[float, float]]] = {b: {} for b in names}
            for match_id, bot_id, mu, sigma in read.ratings():
                per_bot.setdefault(bot_id, {})[match_id] = (mu, sigma)
            series = {}
            for bot_id, points in per_bot.items():
                mus: list[float | None] = []
                sigmas: list[float | None] = []
                current: tuple[float, float] | None = None
                for x in xs:
                    current = points.get(x, current)
                    mus.append(None if current is None else round(current[0], 3))
                    sigmas.append(None if current is None else round(current[1], 3))
                series[bot_id] = (mus, sigmas)
        else:
            xs = sorted({max(1, round(last * (i + 1) / HISTORY_POINTS)) for i in range(HISTORY_POINTS)})
            series = {}
            for bot_id in names:
                mus, sigmas = [], []
                for x in xs:
                    row = read.rating_at(bot_id, x)
                    mus.append(None if row is None else round(row[0], 3))
                    sigmas.append(None if row is None else round(row[1], 3))
                series[bot_id] = (mus, sigmas)
        bots = [{"bot": names[b], "mu": mus, "sigma": sigmas}
                for b, (mus, sigmas) in sorted(series.items(), key=lambda item: names.get(item[0], ""))
                if b in names]
        return {"x": xs, "bots": bots, "matches": last}

    # -------------------------------------------------------------------------------------------- matches

    def _complete(self, deals: set[int]) -> set[int]:
        """Return those of ``deals`` whose every rotation is stored."""
        return {d for d, n in self.read().rotations_played(deals).items() if n >= self.seats}

    def _describe_matches(self, rows: list[MatchRow]) -> list[dict[str, Any]]:
        """Return matches with their seats and replay state."""
        if not rows:
            return []
        read = self.read()
        names = read.bot_names()
        seats: dict[int, list[dict[str, Any]]] = {}
        for s in read.seats_of(r.id for r in rows):
            seats.setdefault(s.match_id, []).append({"seat": s.seat, "bot": names.get(s.bot_id, "?"),
                                                     "total": s.total, "place": s.place, "benched": s.benched,
                                                     "faults": s.faults})
        complete = self._complete({r.deal for r in rows})
        return [{"id": int(i), "deal": int(d), "rotation": int(r), "finished_at": f, "seconds": round(s, 3),
                 "steps": int(n), "replay": int(d) in complete, "seats": seats.get(int(i), [])}
                for i, d, r, f, s, n in rows]

    def matches(self, before: int | None = None, bot: str | None = None, which: str = "all") -> dict[str, Any]:
        """Return a page of matches, newest first: all, or ``bot``'s (``which``: all, won, lost, faulted).

        ``next`` is the cursor of the following page (``None`` on the last). Raises :class:`NotFound` for an
        unknown bot or filter.
        """
        if bot is None:
            rows = self.read().matches(before, PAGE)
        else:
            bot_id = self.bot_id(bot)
            if which not in FILTERS:
                raise NotFound(f"no match filter {which!r}; the filters are all, won, lost and faulted")
            rows = self.read().bot_matches(bot_id, before, PAGE, which)
        described = self._describe_matches(rows)
        return {"matches": described, "next": described[-1]["id"] if len(described) == PAGE else None}

    def match(self, match_id: int) -> dict[str, Any]:
        """Return a match's record for its page, and its replay (without the seed) checked to be shown.

        Raises :class:`NotFound` for an unknown id, :class:`Withheld` while its deal set is incomplete.
        """
        row = self.read().match(match_id)
        if row is None:
            raise NotFound(f"no match {match_id} in this ladder (it holds {self.version()} matches)")
        described = self._describe_matches([row])[0]
        if not described["replay"]:
            raise Withheld(f"match {match_id} is of deal set {described['deal']}, whose {self.seats} rotations are "
                           "not all played yet: its replay is shown once they are (its hands would tell the "
                           "deals still to come)")
        return described

    def replay(self, match_id: int) -> dict[str, Any]:
        """Return a shown match's replay (see :meth:`match`). Raises :class:`NotFound`, :class:`Withheld`."""
        self.match(match_id)
        try:
            return self.store().replay(match_id)
        except StoreError as exc:
            raise NotFound(str(exc)) from None

    # ----------------------------------------------------------------------------------------------- bots

    def bot_id(self, name: str) -> int:
        """Return the id of bot ``name``. Raises :class:`NotFound`."""
        found = self.read().bot_id(name)
        if found is None:
            raise NotFound(f"no bot {name!r} in this ladder")
        return found

    def bot(self, name: str) -> dict[str, Any]:
        """Return a bot's page: its leaderboard row, faulted matches, latest faults, latency histogram.

        Raises :class:`NotFound` for an unknown bot.
        """
        bot_id = self.bot_id(name)
        read = self.read()
        board = self.board.get(wait=0)  # the page shows the rest while the board is being computed
        rows, version = board if board is not None else ([], 0)
        row = next((r for r in rows if r["bot"] == name), None)
        faulted = read.faulted_matches(bot_id)
        fault_rows = read.bot_faults(bot_id, PAGE)
        complete = self._complete({f.deal for f in fault_rows})
        faults = [{"match": f.match_id, "step": f.step, "kind": f.kind,
                   "detail": f.detail if f.deal in complete else None} for f in fault_rows]
        histogram = [{"low_ms": round(LATENCY_BUCKET_BASE ** b / 1000, 4),
                      "high_ms": round(LATENCY_BUCKET_BASE ** (b + 1) / 1000, 4), "count": n}
                     for b, n in read.latency(bot_id)]
        settings = self.store().settings() or {}
        return {"bot": name, "board": row, "board_at": version, "faulted": faulted, "faults": faults,
                "latency": histogram, "deadline_ms": None if "deadline" not in settings
                else float(settings["deadline"]) * 1000}

    def pair(self, a: str, b: str, before: int | None = None) -> dict[str, Any]:
        """Return a page of the matches ``a`` and ``b`` both played, newest first, grouped by deal set.

        Raises :class:`NotFound` for an unknown bot.
        """
        a_id, b_id = self.bot_id(a), self.bot_id(b)
        rows = self.read().pair_matches(a_id, b_id, before, PAGE)
        described = self._describe_matches(rows)
        return {"a": a, "b": b, "matches": described, "next": described[-1]["id"] if len(described) == PAGE else None}
