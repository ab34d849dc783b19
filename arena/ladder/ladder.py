"""The ladder: deal sets of seeded matches between bot processes, rated with TrueSkill, stored as they finish.

A deal set is one seed played once per rotation of its bots' seating, so that every bot of the set gets
every hand. Deal ``k``'s seed is a keyed hash of ``k`` under the ladder seed (:func:`deal_seed`), so the same
ladder seed gives the same seeds, whatever was interrupted, and without the ladder seed neither the code nor every
earlier deal tells anything of the next. Which bots play a new deal set is decided by the
scheduler (:mod:`arena.ladder.scheduler`) from the ratings and match counts at that moment. Every finished match is
rated by the rating system (:mod:`arena.ladder.ratings`, TrueSkill with tau 0 unless told otherwise) and stored with
the ratings after it, whole, before its table plays on (matches that finish together share one transaction:
group commit); a match cut short by a kill, or finished but not yet committed, is simply played again from
its seed on the next start. A database rated by other settings (an older arena, another tau) is rated again
from its stored matches when the ladder opens it.

With ``until_decided``, the ladder stops planning when the sequential test (:mod:`arena.ladder.estimate`) has
decided every pair of neighbours of the current order (or the pairs it was given, or with ``top`` the pairs of the
top places only), or at the budget. A finals ladder (:mod:`arena.ladder.finals`) also plays whole deal sets only
(``whole_deals``: a spent budget plans no new set but finishes those planned) and may cut the field as it goes
(``cut``: the bots whose whole rank range lies below the top places leave, the cut recorded with its evidence).

Work is handed out one match at a time, always the first (deal, rotation) not yet stored or being played,
so the tables share a deal set and the matches stored are always the first ones in that order: a run with a
budget of N matches stores the same (deal, rotation, seed) triples whether or not it was interrupted. With
one table the bots of every deal set are the same too; with several, a new deal set's group depends on the
ratings at the moment it is planned, so on which matches happened to finish first.

The ladder does not play: an executor (:mod:`arena.ladder.executor`) plays each (deal, rotation, seating, seed) it is
given, on this machine's tables or on a Ray cluster's (:mod:`arena.ladder.cluster`), and returns the record; the
ladder stays the only scheduler, rater and writer, wherever the matches are played.

The ladder keeps what it needs to schedule (deal sets, ratings, match counts) in memory, loaded once at the
start; the database is written once per planned deal set and once per group of matches that finished
together, and read only then.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import logging
import random
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.core.referee import DEFAULT_CLOCK, Clock
from arena.games.base import Game, Options
from arena.ladder.estimate import Evidence, SequentialTest, Verdict
from arena.ladder.executor import Executor, Job, LocalExecutor
from arena.ladder.finals import Cut, CutOut, CutRecord, active_order, cut_board, cut_out, top_pairs
from arena.ladder.ratings import Outcome, Rating, RatingError, RatingSystem, TrueSkillSystem
from arena.ladder.scheduler import FairScheduler, FieldState, Scheduler
from arena.ladder.store import DealSet, Finished, LadderIdentity, Store
from arena.ladder.workers import WorkerExecutor, default_workers
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError
from arena.launch.sandbox import Sandbox

log = logging.getLogger("arena.ladder.ladder")

START_ATTEMPTS = 3
"""Failed starts in a row after which a bot is left out of the rest of the ladder run."""


class LadderError(RuntimeError):
    """A ladder that cannot run: too few bots for the seats, or too few bots left that start."""


DEAL_SEED_BITS = 53
"""A deal's seed is a whole number below 2**53: exact in JSON and in every language a replay is read in."""


def deal_seed(ladder_seed: int, deal: int, purpose: str = "deal") -> int:
    """Return the match seed of deal set ``deal`` of the ladder seeded ``ladder_seed``.

    It is HMAC-SHA256 of ``purpose/deal`` keyed by the ladder seed, cut to :data:`DEAL_SEED_BITS` bits: whoever
    does not know the ladder seed learns nothing of one deal from the code and every other deal (a bot that sees
    the hands of every finished deal set still cannot compute the next). ``purpose`` keeps apart the deals of
    matches that must never share one (a contest's scrimmages are ``"scrimmage"``).
    """
    key = f"arena-ladder/{ladder_seed}".encode()
    digest = hmac.new(key, f"{purpose}/{deal}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - DEAL_SEED_BITS)


def rotation_seating(bots: Sequence[str], rotation: int) -> list[str]:
    """Return the bots by seat for ``rotation``: rotation r moves every bot r seats clockwise."""
    n = len(bots)
    return [bots[(seat - rotation) % n] for seat in range(n)]


@dataclass
class Progress:
    """What the ladder has done so far (passed to the progress callback after every stored match)."""

    done: int
    planned: int | None
    started: float
    this_run: int
    leader: str
    leader_rating: float
    last_match: int = 0
    open_pairs: int | None = None
    """Pairs the sequential test has not decided yet (a ladder run until decided), as of the last planned set."""
    deadline: float | None = None
    """When the ladder stops planning (``time.monotonic()`` clock), for a ladder run with ``--hours``."""

    @property
    def rate_per_hour(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.this_run / elapsed * 3600 if elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        """Return the seconds left until the budget is spent (matches or hours), ``None`` if unknown."""
        left: list[float] = []
        if self.planned is not None and self.this_run > 0 and self.rate_per_hour > 0:
            left.append(max(0, self.planned - self.done) / self.rate_per_hour * 3600)
        if self.deadline is not None:
            left.append(max(0.0, self.deadline - time.monotonic()))
        return min(left) if left else None


@dataclass
class LadderConfig:
    """Everything a ladder run needs."""

    game: Game
    options: Options
    seats: int
    seed: int
    bots: list[BotSpec]
    matches: int | None = None
    hours: float | None = None
    tables: int = 1
    clock: Clock = DEFAULT_CLOCK
    max_faults: int = 3
    log_dir: Path | None = None
    sandbox: Sandbox | None = None
    """The isolation of the bots (default: the strongest this machine gives)."""
    sealed_window: float = 0.0
    """Seconds every sealed window lasts, whether or not a seat is asked in it (:func:`referee_match`)."""
    until_decided: SequentialTest | None = None
    """Stop when the sequential test has decided every pair of neighbours (or every pair of ``pairs``)."""
    pairs: tuple[tuple[str, str], ...] | None = None
    """The pairs that must be decided; ``None``: the neighbours of the current order."""
    retired: frozenset[str] = frozenset()
    """Bots of ``bots`` that finish the deal sets they are in but are in no new one (a contest's replaced
    versions): the deals stay fair, and the board keeps them with their matches."""
    seed_drawn: bool = False
    """Whether ``seed`` was drawn at random (a secret, never shown) rather than given by the operator."""
    memory_budget: int | None = None
    """Bytes the warm bot processes of this machine may hold (default: half of what it may use,
    :func:`arena.launch.pool.default_memory_budget`); the least recently used idle ones are stopped beyond it."""
    top: int | None = None
    """With ``until_decided``: only the pairs of the top ``top`` places must be decided (:func:`top_pairs`), and the
    scheduler looks for open pairs there first."""
    cut: Cut | None = None
    """With ``top``: the progressive cut (:mod:`arena.ladder.finals`), recorded in the store."""
    workers: int | None = None
    """The processes that play this machine's tables, each with an event loop of its own
    (:mod:`arena.ladder.workers`): default one per core, at most one per table; 1 plays every table in the
    ladder's own process, as does a ladder with a remote bot (which connects to that process's server)."""
    whole_deals: bool = False
    """A spent budget (matches, hours, every pair decided) plans no new deal set, but the sets planned are played
    whole: every bot of a set gets every hand (a finals' budget is rounded up to whole deal sets)."""

    def settings(self) -> dict[str, object]:
        """Return the public settings of this run (no seed): what ``arena serve`` shows beside the board."""
        return {"deadline": self.clock.deadline, "time_bank": self.clock.bank, "max_faults": self.max_faults,
                "tables": self.tables, "matches": self.matches, "hours": self.hours}

    def check(self) -> None:
        """Raise :class:`LadderError` when this ladder cannot run: a bad seat count, too few bots."""
        remote = [b.name for b in self.bots if b.remote]
        if remote:
            raise LadderError(f"bot {remote[0]!r} is remote (it has a token); the ladder starts its bots itself, "
                              "remote bots play with arena match --listen")
        game = self.game
        if not game.min_seats <= self.seats <= game.max_seats:
            raise LadderError(f"{game.title} is played by {game.min_seats} to {game.max_seats} seats, "
                              f"not {self.seats}")
        if len(self.bots) < self.seats:
            raise LadderError(f"{len(self.bots)} bots cannot fill {self.seats} seats; the ladder needs at "
                              f"least {self.seats} different bots")
        if len({b.name for b in self.bots}) != len(self.bots):
            raise LadderError("two bots of the list have the same name")
        if self.tables < 1:
            raise LadderError(f"a ladder needs at least one table, not {self.tables}")
        names = {b.name for b in self.bots}
        if not self.retired <= names:
            raise LadderError(f"retired bot {min(self.retired - names)!r} is not in the bot list")
        for pair in self.pairs or ():
            for name in pair:
                if name not in names:
                    raise LadderError(f"bot {name!r} is not in the bot list")
        if self.top is not None and (self.top < 1 or self.until_decided is None or self.pairs is not None):
            raise LadderError(f"top {self.top} must be 1 or more, with until_decided and without pairs")
        if self.cut is not None and self.top is None:
            raise LadderError("a cut keeps the top places: give top too")


@dataclass
class Timing:
    """Where the ladder's time went: inside matches, or outside them.

    ``wall`` is the run's wall time; each of the ``tables`` tables could have spent all of it in matches.
    Outside matches, ``seating`` is the time tables stood free waiting for their matches' bots (starting
    processes, their hello: a match seated while its table's previous one played waits next to nothing); the
    ladder's own work is ``scheduling`` (choosing the next match), ``rating`` (the TrueSkill updates) and
    ``storing`` (the database writes), which tables in worker processes play on through; the rest is starting
    and stopping the server and bots, and tables idle at the end.
    """

    tables: int = 1
    wall: float = 0.0
    in_matches: float = 0.0
    matches: int = 0
    seating: float = 0.0
    scheduling: float = 0.0
    rating: float = 0.0
    storing: float = 0.0
    starts: int = 0
    """Bot processes started (the first ones of each table, and restarts)."""
    commits: int = 0
    """Transactions that stored matches (matches that finish together share one)."""
    ramp: float = 0.0
    """ProcessPool time before each table's first match began and after its last match ended (start-up, shutdown)."""

    @property
    def outside_share(self) -> float:
        """Return the share of table time spent outside matches (0..1)."""
        capacity = self.wall * self.tables
        return max(0.0, 1.0 - self.in_matches / capacity) if capacity > 0 else 0.0

    @property
    def steady_outside_share(self) -> float:
        """Return the share of table time outside matches once every table is playing, before one stops.

        This leaves out the one-time costs (the first bot processes, the server, stopping everything), so it
        is what an overnight ladder approaches.
        """
        capacity = self.wall * self.tables - self.ramp
        return max(0.0, 1.0 - self.in_matches / capacity) if capacity > 0 else 0.0


def ramp(spans: Sequence[tuple[float | None, float | None]], tables: int, start: float, end: float) -> float:
    """Return the table time before each table's first match and after its last, from the (first match's
    beginning, last match's end) of each of the ladder's table tasks between ``start`` and ``end``: the
    ``tables`` earliest beginnings and latest ends (an executor that queues a table's next match has more tasks
    than tables); a table with no match counts whole."""
    firsts = sorted(first for first, _ in spans if first is not None)[:tables]
    lasts = sorted((last for _, last in spans if last is not None), reverse=True)[:tables]
    idle = tables - min(len(firsts), len(lasts))
    return idle * (end - start) + sum(f - start for f in firsts[:tables - idle]) + sum(
        end - last for last in lasts[:tables - idle])


def local_executor(config: LadderConfig) -> Executor:
    """Return the executor of ``config``'s tables on this machine: its worker processes
    (:class:`arena.ladder.workers.WorkerExecutor`), or with one worker this process
    (:class:`arena.ladder.executor.LocalExecutor`)."""
    workers = config.workers or default_workers(config.tables)
    if workers > 1 and not any(bot.remote for bot in config.bots):
        return WorkerExecutor(config.tables, workers=workers, seats=config.seats, log_dir=config.log_dir,
                              sandbox=config.sandbox, memory_budget=config.memory_budget)
    return LocalExecutor(config.tables, seats=config.seats, log_dir=config.log_dir, sandbox=config.sandbox,
                         memory_budget=config.memory_budget)


class Ladder:
    """Runs a ladder against a :class:`Store` (opened for writing)."""

    def __init__(self, config: LadderConfig, store: Store,
                 on_progress: Callable[[Progress], None] | None = None,
                 on_note: Callable[[str], None] | None = None, *,
                 executor: Executor | None = None, rating_system: RatingSystem | None = None,
                 scheduler: Scheduler | None = None) -> None:
        """Check ``config``, claim ``store`` for it and load where the ladder stood.

        ``executor`` plays the matches (default: :func:`local_executor`, ``config.tables`` tables on this
        machine); the ladder asks it for as many matches at once as it takes (:attr:`Executor.slots`).
        ``rating_system`` defaults to TrueSkill with the game's measured draw probability and tau 0,
        ``scheduler`` to :class:`arena.ladder.scheduler.FairScheduler`.

        Raises :class:`LadderError` for a ladder that cannot run, :class:`arena.ladder.store.StoreError` for a
        database that cannot hold it (another ladder's, unwritable).
        """
        config.check()
        self.config = config
        self.store = store
        self.on_progress = on_progress
        self.on_note = on_note or (lambda text: log.warning("%s", text))
        self.executor: Executor = executor or local_executor(config)
        self.identity = LadderIdentity(config.game.name, config.seats, config.seed, config.options.to_json(),
                                       config.seed_drawn)
        store.claim(self.identity)
        store.record_settings(config.settings())
        self.rating_system: RatingSystem = rating_system or TrueSkillSystem.for_game(config.game.name, config.seats)
        self.scheduler: Scheduler = scheduler or FairScheduler()
        self.specs: dict[str, BotSpec] = {}
        for bot in config.bots:
            self._register(bot)
        self.retired = set(config.retired)
        """Bots that finish their deal sets but are in no new one (:meth:`retire`)."""
        self.cuts: list[CutRecord] = [CutRecord.from_json(c) for c in store.cuts()]
        """The cuts made so far (``cut``), in order; their bots are in no new deal set."""
        for record in self.cuts:
            self.retired.update(out.bot for out in record.out if out.bot in self.specs)
        self.available = set(self.specs) - self.retired
        """The bots a new deal set is drawn from."""
        self.not_started: dict[str, str] = {}
        """The bots left out because they kept failing to start, and the last reason (for the board)."""
        self.timing = Timing(tables=self.executor.tables)
        outcomes = store.results()
        self.evidence = Evidence.of(outcomes)
        if store.rating_system() != self.rating_system.describe():
            self._rate_again(outcomes)
        self.ratings: dict[str, Rating] = store.ratings()
        self.open_pairs: int | None = None
        self._decided = False
        self.played: dict[str, int] = store.played()
        self.count = store.match_count()
        self._deals: dict[int, DealSet] = {d.deal: d for d in store.deals()}
        self._open = sorted(d.deal for d in self._deals.values() if len(d.done) < config.seats)
        self._next_deal = max(self._deals, default=-1) + 1
        self._complete = 0
        """Deal sets 0 .. this - 1 are played whole (what a cut may look at)."""
        self._advance_complete()
        self._cutting = asyncio.Lock()
        self._busy: set[tuple[int, int]] = set()
        self._spans: list[tuple[float | None, float | None]] = []
        self._failures: dict[str, int] = {}
        self._levels: set[str] = set()
        self._deadline: float | None = None
        self._started = time.monotonic()
        self._this_run = 0
        self._batch: list[Finished] = []
        """Finished matches waiting for the next commit (:meth:`_store`)."""
        self._committed: asyncio.Future[list[int]] | None = None
        gone = sorted({b for i in self._open for b in self._deals[i].bots} - set(self.specs))
        if gone:
            self.on_note(f"unfinished deal sets name bots no longer in the list ({', '.join(gone)}); "
                         "others take their seats")
            for name in gone:
                self._replace(name)

    def _register(self, bot: BotSpec) -> None:
        old = self.store.register_bot(bot.name, bot.fingerprint(), bot.command, self.rating_system.initial())
        if old is not None:
            self.on_note(f"bot {bot.name!r} changed since its last match (command or files): a new entry with "
                         f"a fresh rating; the old version stays on the board as {old!r}")
        self.specs[bot.name] = bot

    def enter(self, bot: BotSpec) -> None:
        """Add ``bot`` to the running ladder: the next deal set planned takes it (a new bot plays first).

        A contest calls this between deal sets, from the ladder's own event loop, so the ladder stays the only
        scheduler, rater and writer. Raises :class:`LadderError` for a remote bot or a name the ladder already
        has.
        """
        if bot.remote:
            raise LadderError(f"bot {bot.name!r} is remote (it has a token); the ladder starts its bots itself")
        if bot.name in self.specs:
            raise LadderError(f"bot {bot.name!r} is already in the ladder")
        self._register(bot)
        self.ratings.setdefault(bot.name, self.rating_system.initial())
        self.available.add(bot.name)

    def retire(self, name: str) -> None:
        """Plan ``name`` into no new deal set; it finishes those it is in, so that their deals stay fair.

        Raises :class:`LadderError` for a bot the ladder does not have.
        """
        if name not in self.specs:
            raise LadderError(f"bot {name!r} is not in the ladder")
        self.retired.add(name)
        self.available.discard(name)

    def _rate_again(self, outcomes: Sequence[Outcome]) -> None:
        """Rate every stored match again, in order, with this ladder's rating system (an older database)."""
        system = self.rating_system
        ratings = {name: system.initial() for name in self.store.ratings()}
        for outcome in outcomes:
            before = [ratings.get(name, system.initial()) for name in outcome.bots]
            try:
                after = system.rate(before, outcome.places)
            except RatingError:
                continue
            ratings.update(zip(outcome.bots, after, strict=True))
        self.store.set_ratings(ratings, system.describe())
        if outcomes:
            self.on_note(f"the {len(outcomes)} stored matches were rated again ({system.describe()})")

    @property
    def done(self) -> bool:
        """Return whether the match budget is spent or every pair is decided (no budget: never done); with
        ``whole_deals``, only once every planned deal set is played whole too."""
        spent = self._decided or (self.config.matches is not None and self.count >= self.config.matches)
        if not spent:
            verdicts = self.verdicts()
            spent = bool(verdicts) and all(verdict.decided for _, verdict in verdicts)
        return spent and not (self.config.whole_deals and self._open)

    def verdicts(self) -> list[tuple[tuple[str, str], Verdict]]:
        """Return the sequential test's verdict on every pair that must be decided (``until_decided`` only).

        The pairs are ``config.pairs``, or the neighbours in the order of the bots of the list by the batch
        fit over the stored matches (bots without matches last: their pairs are open), with ``top`` those of the
        top places only.
        """
        test = self.config.until_decided
        if test is None:
            return []
        if self.config.pairs is not None:
            pairs = list(self.config.pairs)
        else:
            order = active_order(self.evidence, self.available)
            pairs = list(itertools.pairwise(order))
            if self.config.top is not None:
                pairs = top_pairs(order, self.config.top)
        return [((a, b), test.verdict(self.evidence.paired(a, b))) for a, b in pairs]

    def _below_top(self) -> set[frozenset[str]]:
        """Return the pairs of bots both below the top places (``top``): no open pair the finals wait for is there,
        so the scheduler takes them after every open pair of the top."""
        if self.config.top is None:
            return set()
        below = active_order(self.evidence, self.available)[self.config.top + 1:]
        return {frozenset(pair) for pair in itertools.combinations(below, 2)}

    # ------------------------------------------------------------------------------------------ planning

    def _next_job(self) -> tuple[DealSet, int] | None:
        """Return the next (deal set, rotation) to play, or ``None`` when the budget (matches, hours) is spent.

        The job is always the first (deal, rotation) neither stored nor being played; a new deal set is
        planned when every planned one is stored or taken.
        """
        began = time.perf_counter()
        try:
            spent = (self._deadline is not None and time.monotonic() >= self._deadline) or (
                self.config.matches is not None and self.count + len(self._busy) >= self.config.matches)
            if spent and not self.config.whole_deals:
                return None
            for index in self._open:
                deal = self._deals[index]
                for rotation in range(self.config.seats):
                    if rotation not in deal.done and (index, rotation) not in self._busy:
                        self._busy.add((index, rotation))
                        return deal, rotation
            if spent:
                return None
            planned = self._plan()
            if planned is None:
                return None
            deal = planned
            self._busy.add((deal.deal, 0))
            # its rotations are played next, here or at other tables: the processes they lack start now, while the
            # matches under way play, rather than each at its seating
            self.executor.prepare([self._job(deal, rotation, "") for rotation in range(self.config.seats)])
            return deal, 0
        finally:
            self.timing.scheduling += time.perf_counter() - began

    def _plan(self) -> DealSet | None:
        """Plan the next deal set, or return ``None`` when every pair that must be decided is decided."""
        index = self._next_deal
        candidates = sorted(self.available)
        if len(candidates) < self.config.seats:
            raise LadderError(f"only {len(candidates)} bots are left that start ({', '.join(candidates)}); "
                              f"{self.config.seats} seats cannot be filled")
        decided: set[frozenset[str]] = set()
        if self.config.until_decided is not None:
            verdicts = self.verdicts()
            decided = {frozenset(pair) for pair, verdict in verdicts if verdict.decided}
            self.open_pairs = len(verdicts) - len(decided)
            if self.open_pairs == 0:
                self._decided = True
                return None
            decided |= self._below_top()
        rng = random.Random(f"arena-ladder/{self.config.seed}/group/{index}")
        group = self.scheduler.next_group(FieldState(candidates, self.ratings, self.played, decided,
                                                     warm=self.executor.warm()), self.config.seats, rng)
        deal = self.store.plan_deal(index, deal_seed(self.config.seed, index), group)
        self._deals[index] = deal
        self._open.append(index)
        self._next_deal = index + 1
        return deal

    def _replace(self, name: str) -> None:
        """Give ``name``'s seat in every unfinished deal set to another bot (same position, same seed)."""
        for index in self._open:
            deal = self._deals[index]
            if name not in deal.bots:
                continue
            candidates = sorted(self.available - set(deal.bots))
            if not candidates:
                raise LadderError(f"only {len(self.available)} bots are left that start "
                                  f"({', '.join(sorted(self.available))}); {self.config.seats} seats "
                                  "cannot be filled")
            rng = random.Random(f"arena-ladder/{self.config.seed}/replace/{index}/{name}")
            deal.bots[deal.bots.index(name)] = candidates[rng.randrange(len(candidates))]
            self.store.replace_deal_bots(index, deal.bots)

    def _start_failed(self, error: LaunchError) -> None:
        """Count a failed start against the bots named by ``error``; leave out those that keep failing.

        A bot already left out (by another table) has already been replaced: the caller just tries again.
        """
        if not error.bots:  # nobody to blame: a retry, but not forever
            self._failures[""] = self._failures.get("", 0) + 1
            if self._failures[""] >= START_ATTEMPTS:
                raise LadderError(f"bots keep failing to start: {error}")
            return
        for name in error.bots:
            if name in self.not_started:
                continue
            self._failures[name] = self._failures.get(name, 0) + 1
            if self._failures[name] < START_ATTEMPTS:
                continue
            self.available.discard(name)
            self.not_started[name] = str(error)
            self.on_note(f"bot {name!r} does not start; the ladder goes on without it ({START_ATTEMPTS} tries, "
                         f"the last: {error})")
            self._replace(name)

    # ------------------------------------------------------------------------------------------- playing

    async def run(self) -> Timing:
        """Play until the budget (matches, hours) is spent, or forever; return where the time went.

        Cancelling the task (Ctrl-C) stops at once: matches in progress are not stored and will be played
        again from their seeds by the next run. Raises :class:`LadderError`, and
        :class:`arena.ladder.store.StoreError` when the database cannot be written.
        """
        if self.config.hours is not None:
            self._deadline = time.monotonic() + self.config.hours * 3600
        start = time.perf_counter()
        self._spans = []
        try:
            await self._cut()  # a cut a kill caught before it was stored is made now, before any new deal set
            if self.done:
                return self.timing
            if self.config.sandbox is not None:
                self.store.note_sandbox(self.config.sandbox.level)
            self._levels = set(self.store.sandbox_levels())
            try:
                await self.executor.start()
                if self.executor.tables != self.timing.tables:  # a cluster's tables are known once it is reached
                    self.timing.tables = self.config.tables = self.executor.tables
                    self.store.record_settings(self.config.settings())
                workers = [asyncio.create_task(self._worker(), name=f"ladder-table-{i}")
                           for i in range(self.executor.slots)]
                try:
                    # the first table to fail stops the others (a bare gather would leave them running)
                    finished, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
                    for task in finished:
                        task.result()
                finally:
                    for task in workers:
                        task.cancel()
                    await asyncio.gather(*workers, return_exceptions=True)
            finally:
                await self.executor.close()
        finally:
            end = time.perf_counter()
            self.timing.wall = end - start
            self.timing.ramp = ramp(self._spans, self.timing.tables, start, end)
        return self.timing

    async def _worker(self) -> None:
        first: float | None = None
        last: float | None = None
        try:
            while (job := self._next_job()) is not None:
                deal, rotation = job
                try:
                    began, ended = await self._play(deal, rotation)
                finally:
                    self._busy.discard((deal.deal, rotation))
                first = began if first is None else first
                last = ended
            # no more work for this table: stop its bots now, while the other tables finish their last matches
            await self.executor.release()
        finally:
            self._spans.append((first, last))

    def _job(self, deal: DealSet, rotation: int, token: str) -> Job:
        cfg = self.config
        return Job(deal.deal, rotation, tuple(self.specs[name] for name in rotation_seating(deal.bots, rotation)),
                   deal.seed, cfg.game, cfg.options, token, cfg.clock, cfg.max_faults, cfg.sealed_window)

    async def _play(self, deal: DealSet, rotation: int) -> tuple[float, float]:
        """Have the executor play one match, then rate and store it; return when the match began and ended."""
        cfg = self.config
        # opaque: a deal's number plus a guessable ladder seed would give away the deal
        token = secrets.token_hex(8)
        while True:
            seating = rotation_seating(deal.bots, rotation)  # another table may have replaced a bot meanwhile
            try:
                played = await self.executor.run(self._job(deal, rotation, token))
                break
            except LaunchError as exc:
                self._start_failed(exc)
        for name in ("", *seating):
            self._failures.pop(name, None)
        self.timing.seating += played.seating
        self.timing.starts += played.starts
        if played.sandbox and played.sandbox not in self._levels:
            self._levels.add(played.sandbox)
            self.store.note_sandbox(played.sandbox)

        summary = played.summary
        match_ended = time.perf_counter()
        match_began = match_ended - played.seconds
        seconds = played.seconds
        self.timing.in_matches += seconds

        began = time.perf_counter()
        before = [self.ratings.get(name, self.rating_system.initial()) for name in seating]
        places = summary.rated_places
        try:
            after = self.rating_system.rate(before, places)
        except RatingError as exc:
            self.on_note(f"match d{deal.deal}r{rotation} is stored unrated: {exc}")
            after = before
        new = dict(zip(seating, after, strict=True))
        self.ratings.update(new)  # the next match is rated from these, stored or not yet
        self.timing.rating += time.perf_counter() - began

        match_id = await self._store(Finished(deal.deal, rotation, summary, tuple(seating), new, seconds,
                                              played.replay))
        self.evidence.add(Outcome(deal.deal, rotation, tuple(seating), places))
        for name in seating:
            self.played[name] = self.played.get(name, 0) + 1
        deal.done.add(rotation)
        if len(deal.done) >= cfg.seats:
            self._open.remove(deal.deal)
            self._advance_complete()
        self.count += 1
        self._this_run += 1
        self.timing.matches += 1
        self._report(match_id)
        await self._cut()
        return match_began, match_ended

    def _advance_complete(self) -> None:
        while self._complete in self._deals and len(self._deals[self._complete].done) >= self.config.seats:
            self._complete += 1

    async def _cut(self) -> None:
        """Make every cut that is due (``cut``): one after each ``every`` deal sets played whole, looking at those
        sets only (:func:`arena.ladder.finals.cut_board`), stored before the next deal set is planned."""
        cut, test, top = self.config.cut, self.config.until_decided, self.config.top
        if cut is None or test is None or top is None:
            return
        async with self._cutting:
            while (len(self.cuts) + 1) * cut.every <= self._complete:
                after = (len(self.cuts) + 1) * cut.every
                outcomes = self.store.results()
                # the bootstrap takes a while: off the event loop, where the matches under way keep their clocks
                board, played = await asyncio.to_thread(cut_board, outcomes, after, test)
                keep = max(self.config.seats, top + 1)
                out = cut_out(board, played, self.available, top, cut.margin, keep, test.min_deals)
                record = CutRecord(after, self._next_deal, tuple(CutOut.of(row) for row in out))
                self.store.record_cut(record.to_json())
                self.cuts.append(record)
                for row in out:
                    self.retire(row.bot)
                if out:
                    self.on_note(f"the cut after {after} deal sets takes out {', '.join(o.bot for o in record.out)} "
                                 f"(the best place of each in 95% of resamples is below {top + cut.margin})")

    async def _store(self, finished: Finished) -> int:
        """Store ``finished``, with every match that finished in the same turn of the event loop, in one
        transaction; return its id once it is committed.

        This is group commit: at a few matches a second each match has a transaction of its own; when
        hundreds finish a second (a cluster), those that arrive together share one, which costs hardly more
        than one alone. A table plays on only once its match is committed, so a kill loses no more than the
        matches that finished in the last turn, and those are played again from their seeds.
        """
        loop = asyncio.get_running_loop()
        if self._committed is None:
            self._committed = loop.create_future()
            loop.call_soon(self._commit)
        position = len(self._batch)
        self._batch.append(finished)
        # shielded: a table cancelled meanwhile must not cancel the commit the others wait for
        ids = await asyncio.shield(self._committed)
        return ids[position]

    def _commit(self) -> None:
        batch, self._batch = self._batch, []
        committed, self._committed = self._committed, None
        assert committed is not None
        began = time.perf_counter()
        try:
            committed.set_result(self.store.record_matches(batch))
            self.timing.commits += 1
        except Exception as exc:  # StoreError, or a bug: every table waiting for it raises it
            committed.set_exception(exc)
            committed.add_done_callback(lambda f: f.exception())  # seen, even if every waiter is gone
        finally:
            self.timing.storing += time.perf_counter() - began

    def leader(self) -> tuple[str, float]:
        """Return the leaderboard's first bot (best mu - 3 sigma, then name) and its conservative rating."""
        if not self.ratings:
            return "", 0.0
        name, rating = min(self.ratings.items(), key=lambda item: (-item[1].conservative, item[0]))
        return name, rating.conservative

    def _report(self, match_id: int) -> None:
        if self.on_progress is None:
            return
        leader, rating = self.leader()
        self.on_progress(Progress(
            done=self.count, planned=self.config.matches, started=self._started, this_run=self._this_run,
            leader=leader, leader_rating=rating, last_match=match_id, open_pairs=self.open_pairs,
            deadline=self._deadline))

