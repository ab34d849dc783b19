"""The ladder: deal sets of seeded matches between bot processes, rated with TrueSkill, stored as they finish.

A deal set is one seed played once per rotation of its bots' seating, so that every bot of the set gets
every hand. Deal ``k``'s seed comes from the ladder seed alone, so the same ladder seed gives the same
seeds, whatever was interrupted. Which bots play a new deal set is decided from the ratings at that moment
(:func:`arena.ratings.choose_group`). Every finished match is stored with the ratings after it in one
transaction; a match cut short by a kill is simply played again from its seed on the next start.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.games.base import Game, Options
from arena.launcher import BotSpec, LaunchError, Table
from arena.ratings import Rating, choose_group, rate
from arena.referee import DEFAULT_CLOCK, Clock, play_match
from arena.runner import serving
from arena.store import Deal, LadderIdentity, Store

log = logging.getLogger("arena.ladder")


class LadderError(RuntimeError):
    """A ladder that cannot run: too few bots for the seats, or every bot failed to start."""


def deal_seed(ladder_seed: int, deal: int) -> int:
    """Return the match seed of deal set ``deal`` of the ladder seeded ``ladder_seed``."""
    return random.Random(f"arena-ladder/{ladder_seed}/deal/{deal}").randrange(2**53)


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
    notes: list[str] = field(default_factory=list)

    @property
    def rate_per_hour(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.this_run / elapsed * 3600 if elapsed > 0 else 0.0

    @property
    def eta_seconds(self) -> float | None:
        if self.planned is None or self.this_run == 0:
            return None
        return (self.planned - self.done) / self.rate_per_hour * 3600


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


@dataclass
class Timing:
    """Where the ladder's time went: inside matches, or outside (scheduling, rating, storing, starting).

    ``wall`` is the run's wall time; each of the ``tables`` tables could have spent all of it in matches.
    """

    tables: int = 1
    wall: float = 0.0
    in_matches: float = 0.0

    @property
    def outside_share(self) -> float:
        """Return the share of table time spent outside matches (0..1)."""
        capacity = self.wall * self.tables
        return max(0.0, 1.0 - self.in_matches / capacity) if capacity > 0 else 0.0


class Ladder:
    """Runs a ladder against a :class:`Store`."""

    def __init__(self, config: LadderConfig, store: Store,
                 on_progress: Callable[[Progress], None] | None = None,
                 on_note: Callable[[str], None] | None = None) -> None:
        if config.seats < config.game.min_seats or config.seats > config.game.max_seats:
            raise LadderError(f"{config.game.title} is played by {config.game.min_seats} to "
                              f"{config.game.max_seats} seats, not {config.seats}")
        if len(config.bots) < config.seats:
            raise LadderError(f"{len(config.bots)} bots cannot fill {config.seats} seats; the ladder needs at "
                              f"least {config.seats} different bots")
        self.config = config
        self.store = store
        self.on_progress = on_progress
        self.on_note = on_note or (lambda text: log.warning("%s", text))
        self.identity = LadderIdentity(config.game.name, config.seats, config.seed, config.options.to_json())
        store.claim(self.identity)
        self.specs = {b.name: b for b in config.bots}
        for bot in config.bots:
            if store.register_bot(bot.name, bot.fingerprint(), bot.command):
                self.on_note(f"bot {bot.name!r} changed since its last match (command or files); "
                             "its rating carries on")
        self.available = set(self.specs)
        self.timing = Timing(tables=config.tables)
        self._reserved = 0
        self._taken: set[int] = set()
        self._deadline: float | None = None
        self._started = time.monotonic()
        self._this_run = 0

    # ------------------------------------------------------------------------------------------ planning

    def _budget_left(self) -> int | None:
        if self.config.matches is None:
            return None
        return self.config.matches - self.store.match_count() - self._reserved

    def _next_job(self) -> tuple[Deal, list[int]] | None:
        """Return a deal set and the rotations to play now, or ``None`` when the budget is spent."""
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return None
        deals = self.store.deals()
        for deal in deals:  # unfinished deal sets first: a resumed ladder completes what it began
            if deal.deal in self._taken:
                continue
            todo = [r for r in range(self.config.seats) if r not in deal.done]
            if todo:
                return self._take(deal, todo)
        budget = self._budget_left()
        if budget is not None and budget <= 0:
            return None
        index = deals[-1].deal + 1 if deals else 0
        pool = sorted(self.available)
        if len(pool) < self.config.seats:
            raise LadderError(f"only {len(pool)} bots are left that start ({', '.join(pool)}); "
                              f"{self.config.seats} seats cannot be filled")
        rng = random.Random(f"arena-ladder/{self.config.seed}/group/{index}")
        group = choose_group(pool, self.store.ratings(), self.store.played(), self.config.seats, rng)
        deal = self.store.plan_deal(index, deal_seed(self.config.seed, index), group)
        return self._take(deal, list(range(self.config.seats)))

    def _take(self, deal: Deal, todo: list[int]) -> tuple[Deal, list[int]] | None:
        budget = self._budget_left()
        if budget is not None:
            todo = todo[: max(0, budget)]
        if not todo:
            return None
        self._taken.add(deal.deal)
        self._reserved += len(todo)
        return deal, todo

    def _replan(self, deal: Deal, failed: Sequence[str]) -> Deal:
        """Replace the bots that failed to start in a deal set with others, keeping its seed."""
        for name in failed:
            if name in self.available:
                self.available.discard(name)
                self.on_note(f"bot {name!r} does not start; the ladder goes on without it")
        pool = sorted(b for b in self.available if b not in deal.bots)
        bots = [b for b in deal.bots if b in self.available]
        rng = random.Random(f"arena-ladder/{self.config.seed}/replace/{deal.deal}")
        while len(bots) < self.config.seats:
            if not pool:
                raise LadderError(f"only {len(self.available)} bots start; {self.config.seats} seats cannot "
                                  "be filled")
            bots.append(pool.pop(rng.randrange(len(pool))))
        with self.store.transaction() as db:
            db.execute("UPDATE deals SET bots = ? WHERE deal = ?", (json.dumps(bots), deal.deal))
        return Deal(deal.deal, deal.seed, tuple(bots), deal.done)

    # ------------------------------------------------------------------------------------------- playing

    async def run(self) -> Timing:
        """Play until the budget (matches, hours) is spent, or forever; return where the time went.

        Cancelling the task (Ctrl-C) stops at once: matches in progress are not stored and will be played
        again from their seeds by the next run. Raises :class:`LadderError`.
        """
        if self.config.hours is not None:
            self._deadline = time.monotonic() + self.config.hours * 3600
        start = time.perf_counter()
        try:
            async with serving() as server:
                tables = [Table(server, log_dir=self.config.log_dir, keep=self.config.seats)
                          for _ in range(self.config.tables)]
                try:
                    await asyncio.gather(*(self._worker(t) for t in tables))
                finally:
                    await asyncio.gather(*(t.close() for t in tables), return_exceptions=True)
        finally:
            self.timing.wall = time.perf_counter() - start
        return self.timing

    async def _worker(self, table: Table) -> None:
        cfg = self.config
        while True:
            job = self._next_job()
            if job is None:
                return
            deal, todo = job
            try:
                for rotation in todo:
                    seating = rotation_seating(deal.bots, rotation)
                    while True:
                        try:
                            seats = await table.seat([self.specs[name] for name in seating])
                            break
                        except LaunchError as exc:
                            deal = self._replan(deal, exc.bots or [])
                            seating = rotation_seating(deal.bots, rotation)
                    began = time.perf_counter()
                    record = await play_match(cfg.game, seats, deal.seed, cfg.options, clock=cfg.clock,
                                              max_faults=cfg.max_faults, match_id=f"d{deal.deal}r{rotation}")
                    seconds = time.perf_counter() - began
                    self.timing.in_matches += seconds
                    ratings = self.store.ratings()
                    after = rate([ratings.get(name, Rating()) for name in seating], record.ranking_places())
                    replay = record.replay_json()
                    replay["events"] = [e.to_json() for e in record.events]
                    match_id = self.store.record_match(deal.deal, rotation, record, seating,
                                                       dict(zip(seating, after, strict=True)), seconds, replay)
                    self._reserved -= 1
                    self._this_run += 1
                    self._report(match_id)
            finally:
                self._taken.discard(deal.deal)

    def _report(self, match_id: int) -> None:
        if self.on_progress is None:
            return
        board = self.store.leaderboard()
        leader = board[0] if board else None
        self.on_progress(Progress(
            done=self.store.match_count(), planned=self.config.matches, started=self._started,
            this_run=self._this_run, leader=leader.bot if leader else "", last_match=match_id,
            leader_rating=leader.conservative if leader else 0.0))

