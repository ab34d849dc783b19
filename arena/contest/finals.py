"""A contest's end (issue 34): submissions close at a deadline, and finals decide the top places on evidence.

The phases, in order (:class:`Phase`):

- **season**: the contest's ladder plays and takes submissions (:mod:`arena.contest.service`).
- **closed**: from the ``[finals]`` deadline (or ``arena contest finals CONFIG``) uploads, new versions, finalist
  marks and scrimmages are refused with the reason and the time (:meth:`Finals.closed_reason`); the season's ladder
  stops, and its board stays as it was. The submissions made before are still built and checked; then the
  finalists are fixed: each author's marked version (:class:`arena.contest.store.Finalists`), or else their latest
  validated one, and the house bots if ``house = true``. A field smaller than ``top`` (or than a table) is refused
  with the reason: the phase stays closed, the pages say why, and a restart refuses to start until it is fixed.
- **finals**: a new ladder in a file of its own beside the season's (``finals.db`` in the contest's data folder:
  the ladder's store holds one ladder a file, the season's file stays untouched, and every tool that reads a
  ladder reads the finals' too), with a new secret seed, no rating carried over, tau 0, the same deal sets and
  rotations. Before its first match it records its public record: the rules, the finalists and the commitment
  to its seed (:func:`arena.ladder.finals.commitment`). It plays until each top place is decided by the
  sequential test or the budget is spent, whole deal sets only, with the progressive cut if configured
  (:mod:`arena.ladder.finals`). A finalist that no longer starts is reported, never silently dropped.
- **finished**: the outcome is recorded (the seed, why they stopped, the final board with intervals and the
  verdict on each top pair, the finalists that did not start) and the export written
  (:mod:`arena.ladder.finals_export`), which ``arena finals verify`` checks from nothing but itself.

Everything is in the databases: a contest killed at any moment resumes its phase, the finals as the ladder does
(no match lost or repeated), with their budget of hours counted from their start.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from arena.contest.config import ContestConfig, FinalsRules
from arena.contest.store import VALIDATED, ContestStore, Submission
from arena.ladder import finals_export as export_format
from arena.ladder.executor import Executor
from arena.ladder.finals import commitment, describe_pairs, final_board
from arena.ladder.ladder import Ladder, LadderConfig, Progress
from arena.ladder.setup import open_ladder
from arena.ladder.store import Store, StoreError
from arena.launch.botlist import BotSpec
from arena.launch.sandbox import Sandbox

log = logging.getLogger("arena.contest.finals")

FINALS_LOGS = "finals"
"""The folder of the contest's logs where the finals' processes log."""
POLL_SECONDS = 2.0
"""How often a running contest looks whether its submissions were closed by hand (``arena contest finals``, from
another process, writes it in the database)."""


class FinalsError(RuntimeError):
    """Finals that cannot start: a deadline passed unnoticed, a field smaller than its top places or a table."""


class Phase(enum.Enum):
    """Where a contest is: taking submissions, closed, in its finals, or over."""

    SEASON = "season"
    CLOSED = "closed"
    FINALS = "finals"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class Finalist:
    """One finalist: its ladder name, its author ("" for a house bot), how it was chosen and its submission."""

    bot: str
    author: str
    chosen: str
    """``marked`` (its author's choice), ``latest`` (their latest validated version) or ``house``."""
    submission: str = ""

    def to_json(self) -> dict[str, str]:
        return {"bot": self.bot, "author": self.author, "chosen": self.chosen, "submission": self.submission}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Finalist:
        return cls(str(data["bot"]), str(data["author"]), str(data["chosen"]), str(data.get("submission", "")))


class Pipeline(Protocol):
    """What the finals ask of the submission pipeline: to wait until it has no submission left to work on."""

    async def idle(self) -> None: ...


def when(seconds: float) -> str:
    """Return a moment as the pages and messages show it: ``2026-12-31 18:00:00 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def choose_finalists(store: ContestStore, house: Sequence[BotSpec], rules: FinalsRules
                     ) -> tuple[list[Finalist], list[dict[str, str]]]:
    """Return the finalists, one bot per author, and the authors left out with the reason.

    An author's finalist is the version they marked, while it is still validated (playing or replaced, not
    disabled), or else their latest validated version; a revoked author has none. House bots are finalists when
    ``rules.house`` says so.
    """
    marks = store.finalists.marks()
    finalists: list[Finalist] = []
    left_out: list[dict[str, str]] = []
    for author in store.authors.all():
        submissions = store.submissions.all(author.name)  # newest first
        if not submissions:
            continue
        validated = [s for s in submissions if s.state in VALIDATED]
        if author.revoked:
            left_out.append({"author": author.name, "reason": "the author is revoked"})
            continue
        if not validated:
            left_out.append({"author": author.name, "reason": "none of their submissions passed its check"})
            continue
        marked = next((s for s in validated if s.id == marks.get(author.name)), None)
        chosen = marked or validated[0]
        finalists.append(Finalist(chosen.ladder_name, author.name, "marked" if marked else "latest", chosen.id))
    if rules.house:
        finalists += [Finalist(bot.name, "", "house") for bot in house]
    return finalists, left_out


def field_problem(count: int, rules: FinalsRules, seats: int) -> str | None:
    """Return why a field of ``count`` finalists cannot play the finals ``rules`` at ``seats`` seats, or ``None``."""
    if count < seats:
        return (f"the finals have {count} finalists, fewer than the {seats} seats of a table: they cannot start "
                "(house = true in [finals] adds the house bots)")
    if rules.top > count:
        return f"top = {rules.top} is more than the {count} finalists: set top to {count} or less in [finals]"
    return None


def close_now(config: ContestConfig, store: ContestStore, house: Sequence[BotSpec], now: float
              ) -> tuple[float, list[Finalist], bool]:
    """Close the submissions now (``arena contest finals CONFIG``): the running contest starts its finals within
    :data:`POLL_SECONDS`, a stopped one at its next start. Return when they closed, the finalists as they stand,
    and whether they were closed already.

    Raises :class:`FinalsError` for a contest without ``[finals]`` and a field that cannot play them.
    """
    rules = config.finals
    if rules is None:
        raise FinalsError("this contest has no [finals] section: add one with top and budget (docs/finals.md)")
    finalists, _ = choose_finalists(store, house, rules)
    closed = store.finalists.closed_at()
    if closed is not None:
        return closed, finalists, True
    problem = field_problem(len(finalists), rules, config.seats)
    if problem is not None:
        raise FinalsError(problem)
    return store.finalists.close(now), finalists, False


class Finals:
    """A contest's phases from its deadline on (see the module's docstring); the contest's :meth:`run` runs the
    season's ladder through it."""

    def __init__(self, config: ContestConfig, store: ContestStore, house: Sequence[BotSpec],
                 spec: Callable[[Submission], BotSpec], *, sandbox: Sandbox, executor: Executor | None = None,
                 cluster: str | None = None, on_note: Callable[[str], None] | None = None,
                 on_progress: Callable[[Progress], None] | None = None, clock: Callable[[], float] = time.time,
                 poll_seconds: float = POLL_SECONDS) -> None:
        """Find the contest's phase from its databases. Raises :class:`FinalsError` for a deadline that passed
        while the submissions were never closed (the contest was not running), and for a closed contest whose
        field cannot play its finals."""
        self.config = config
        self.rules = config.finals
        self.store = store
        self.house = list(house)
        self.spec = spec
        self.sandbox = sandbox
        self.executor = executor
        self.cluster = cluster
        self.on_note = on_note or (lambda text: log.warning("%s", text))
        self.on_progress = on_progress
        self.clock = clock
        self.poll_seconds = poll_seconds
        self.problem = ""
        """Why the closed contest's finals cannot start ("" when nothing stops them)."""
        self.ladder: Ladder | None = None
        self.ladder_store: Store | None = None
        self.rng: random.Random | None = None
        """What draws the finals' secret seed (``None``: the system's randomness; tests set a seeded one)."""
        self.phase = self._phase()
        rules = self.rules
        if rules is None:
            return
        if (self.phase is Phase.SEASON and rules.deadline is not None and self.clock() >= rules.deadline):
            raise FinalsError(f"the finals' deadline ({when(rules.deadline)}) has passed, and this contest's "
                              "submissions were never closed at it: set a deadline in the future in [finals], or "
                              "close them now with arena contest finals CONFIG")
        if self.phase is Phase.CLOSED and not store.submissions.unfinished():
            finalists, _ = choose_finalists(store, self.house, rules)
            problem = field_problem(len(finalists), rules, config.seats)
            if problem is not None:
                raise FinalsError(f"the submissions are closed, but {problem}")

    def _phase(self) -> Phase:
        if self.rules is None:
            return Phase.SEASON
        if self.config.finals_db.is_file():
            try:
                held = Store(self.config.finals_db, readonly=True)
            except StoreError:  # made by a start a kill cut short before its first write: not started
                pass
            else:
                with contextlib.closing(held):
                    if held.finals("finals_outcome") is not None:
                        return Phase.FINISHED
                    if held.finals("finals") is not None:
                        return Phase.FINALS
        return Phase.CLOSED if self.store.finalists.closed_at() is not None else Phase.SEASON

    # ------------------------------------------------------------------------------------------------ closing

    def closed_at(self) -> float | None:
        """Return when the submissions closed (or close now: the deadline has come), ``None`` while they are open."""
        if self.rules is None:
            return None
        closed = self.store.finalists.closed_at()
        if closed is not None:
            return closed
        deadline = self.rules.deadline
        return deadline if deadline is not None and self.clock() >= deadline else None

    def closed_reason(self, what: str) -> str | None:
        """Return why ``what`` (uploads, new versions, scrimmages, finalist marks) is refused now, ``None`` while the
        submissions are open: the contest is in its finals since a given time."""
        closed = self.closed_at()
        if closed is None:
            return None
        return f"{what} closed at {when(closed)}: the contest is in its finals ({self.progress_line()})"

    # ------------------------------------------------------------------------------------------------ running

    async def run(self, season: Ladder, pipeline: Pipeline) -> None:
        """Play the season's ladder until the submissions close, then the finals; return only when the season's
        ladder fails (no ``[finals]``: as it always did) or is cancelled. Raises the ladders' errors."""
        if self.rules is None:
            await season.run()
            return
        if self.phase is Phase.SEASON:
            await self._season(season)
        if self.phase is Phase.CLOSED:
            await pipeline.idle()  # the submissions made before the deadline are in time
            self._start()
        if self.phase is Phase.FINALS:
            await self._play()
        if self.phase is Phase.FINISHED:
            await self._exported()
        await asyncio.Event().wait()  # the pages stay up until the contest is stopped

    async def _season(self, season: Ladder) -> None:
        rules = self.rules
        assert rules is not None
        task = asyncio.create_task(season.run(), name="contest-ladder")
        try:
            while (closed := self.closed_at()) is None:
                wait = self.poll_seconds
                if rules.deadline is not None:
                    wait = min(wait, max(0.0, rules.deadline - self.clock()))
                done, _ = await asyncio.wait({task}, timeout=wait)
                if done:
                    task.result()  # the season's error; a season that ended by itself waits for the deadline
                    await asyncio.sleep(wait)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.store.finalists.close(closed)
        self.phase = Phase.CLOSED
        self.on_note(f"submissions closed at {when(closed)}: the season's board stays as it is, the finals start "
                     "once the submissions made before are checked")

    def _start(self) -> None:
        """Fix the finalists and open the finals' ladder, its commitment recorded before its first match; or say why
        they cannot start (the phase stays closed)."""
        rules = self.rules
        assert rules is not None
        finalists, left_out = choose_finalists(self.store, self.house, rules)
        playing: list[Finalist] = []
        specs: list[BotSpec] = []
        for finalist in finalists:
            try:
                specs.append(self._spec_of(finalist))
                playing.append(finalist)
            except (OSError, ValueError, KeyError) as exc:
                left_out.append({"author": finalist.author, "bot": finalist.bot,
                                 "reason": f"it cannot be started from its folder: {exc}"})
        problem = field_problem(len(playing), rules, self.config.seats)
        if problem is not None:
            self.problem = problem
            self.on_note(f"the finals cannot start: {problem}; the contest waits (restart it once fixed)")
            return
        store = Store(self.config.finals_db)
        try:
            ladder = self._open(store, specs, self.clock())
            if store.finals("finals") is None:  # else: a start a kill cut short after the record was written
                store.record_finals("finals", {
                    "game": self.config.game.name, "options": self.config.options.to_json(),
                    "seats": self.config.seats, "top": rules.top,
                    "test": {"zone": rules.test.zone, "alpha": rules.test.alpha, "beta": rules.test.beta,
                             "min_deals": rules.test.min_deals},
                    "cut": rules.cut.to_json() if rules.cut is not None else None,
                    "budget": {"matches": rules.matches, "hours": rules.hours},
                    "house": rules.house, "closed_at": self.store.finalists.closed_at(), "started_at": self.clock(),
                    "finalists": [f.to_json() for f in playing], "left_out": left_out,
                    "commitment": commitment(ladder.config.seed)})
        except Exception:
            store.close()
            raise
        self.ladder_store, self.ladder = store, ladder
        self.phase = Phase.FINALS
        self.on_note(f"the finals start: {len(playing)} finalists, top {rules.top}, budget {rules.budget()}; the "
                     f"commitment to their secret seed is {commitment(ladder.config.seed)}")

    def _spec_of(self, finalist: Finalist) -> BotSpec:
        if finalist.chosen == "house":
            found = [bot for bot in self.house if bot.name == finalist.bot]
            if not found:
                raise KeyError(f"house bot {finalist.bot!r} is no longer in the house bots' list")
            return found[0]
        submission = self.store.submissions.get(finalist.submission)
        if submission is None:
            raise KeyError(f"submission {finalist.submission!r} is gone")
        return self.spec(submission)

    def _open(self, store: Store, specs: Sequence[BotSpec], started_at: float) -> Ladder:
        """Return the finals' ladder on ``store``: a new secret seed (or the one it holds), the budget of hours
        counted from ``started_at``."""
        config, rules = self.config, self.rules
        assert rules is not None
        hours = None if rules.hours is None else max(0.0, rules.hours - (self.clock() - started_at) / 3600)
        logs = config.logs / FINALS_LOGS
        logs.mkdir(parents=True, exist_ok=True)
        ladder_config = LadderConfig(
            config.game, config.options, config.seats, 0, list(specs), matches=rules.matches, hours=hours,
            tables=config.tables, clock=config.clock, max_faults=config.max_faults, log_dir=logs,
            sandbox=self.sandbox, until_decided=rules.test, top=rules.top, cut=rules.cut, whole_deals=True)
        return open_ladder(ladder_config, store, seed=None, tables=config.tables, cluster=self.cluster,
                           shared=config.data if self.cluster is not None else None, sandbox_mode="strict",
                           untrusted=True, on_note=self.on_note, on_progress=self._progress,
                           executor=self.executor, rng=self.rng).ladder

    def _resume(self) -> None:
        """Open the finals a stop caught mid-way: the finalists of their record, less those that no longer start."""
        store = Store(self.config.finals_db)
        try:
            record = store.finals("finals")
            assert record is not None
            gone = self._not_started(store)
            specs = []
            for finalist in (Finalist.from_json(f) for f in record["finalists"]):
                if finalist.bot in gone:
                    continue
                try:
                    specs.append(self._spec_of(finalist))
                except (OSError, ValueError, KeyError) as exc:
                    gone[finalist.bot] = f"it cannot be started from its folder: {exc}"
                    store.record_finals("finals_not_started", gone)
            self.ladder = self._open(store, specs, float(record["started_at"]))
        except Exception:
            store.close()
            raise
        self.ladder_store = store

    @staticmethod
    def _not_started(store: Store) -> dict[str, str]:
        return {str(k): str(v) for k, v in (store.finals("finals_not_started") or {}).items()}

    def _progress(self, progress: Progress) -> None:
        """Keep the finalists that no longer start as soon as the ladder leaves them out; tell the contest."""
        if self.ladder is not None and self.ladder_store is not None and self.ladder.not_started:
            gone = self._not_started(self.ladder_store)
            if set(self.ladder.not_started) - set(gone):
                self.ladder_store.record_finals("finals_not_started", {**gone, **self.ladder.not_started})
        if self.on_progress is not None:
            self.on_progress(progress)

    async def _play(self) -> None:
        if self.ladder is None:
            self._resume()
        ladder, store, rules = self.ladder, self.ladder_store, self.rules
        assert ladder is not None and store is not None and rules is not None
        await ladder.run()
        if not ladder.done:  # not expected: the finals' ladder ends only when done
            raise FinalsError("the finals' ladder stopped before its end")
        gone = {**self._not_started(store), **ladder.not_started}
        board = final_board(ladder.evidence, ladder.available, rules.test, rules.top)
        store.record_finals("finals_outcome", {
            "finished_at": self.clock(), "stopped": "decided" if board.decided else "budget",
            "seed": str(ladder.config.seed), "matches": ladder.count, "deal_sets": len(store.deals()),
            "not_started": [{"bot": bot, "reason": reason} for bot, reason in sorted(gone.items())],
            "board": board.to_json()})
        await self._exported()
        self.phase = Phase.FINISHED  # once the export is there: the pages offer it from now on
        self.on_note("the finals are over: " + "; ".join(describe_pairs(board)))

    async def _exported(self) -> Path:
        """Write the export of the finished finals unless it is there (a stop may have come between); return it.
        Off the event loop, with a reader of its own: every match is read and compressed, while the pages answer."""
        path = self.config.finals_export

        def write() -> None:
            with contextlib.closing(Store(self.config.finals_db, readonly=True)) as store:
                export_format.write(path, export_format.build(store))

        if not path.exists():
            await asyncio.to_thread(write)
        return path

    def close(self) -> None:
        if self.ladder_store is not None:
            self.ladder_store.close()

    # ------------------------------------------------------------------------------------------------- status

    def progress_line(self) -> str:
        """Return how far the finals are, in a line: their phase, matches against budget, open top pairs."""
        rules = self.rules
        if rules is None:
            return "the contest has no finals"
        if self.phase is Phase.FINISHED:
            return "the finals are over"
        if self.problem:
            return f"the finals cannot start: {self.problem}"
        if self.phase is not Phase.FINALS or self.ladder is None:
            return "the finals start once the submissions made before the deadline are checked"
        ladder = self.ladder
        budget = f" of at most {rules.matches}" if rules.matches is not None else ""
        open_pairs = "" if ladder.open_pairs is None else f", {ladder.open_pairs} of {rules.top} top pairs open"
        return f"{ladder.count}{budget} matches played{open_pairs}"

    def notice(self) -> str:
        """Return the line every page of the contest shows about its end ("" for a contest without finals)."""
        rules = self.rules
        if rules is None:
            return ""
        if self.phase is Phase.SEASON:
            if rules.deadline is None:
                return ""
            places = "the first place" if rules.top == 1 else f"the top {rules.top} places"
            return f"Submissions close at {when(rules.deadline)}; then the finals decide {places} on evidence."
        if self.phase is Phase.FINISHED:
            return "The finals are over: their result, their seed and the export to verify them are on the finals page."
        return f"The contest is in its finals: {self.progress_line()}."

    def status(self) -> dict[str, Any]:
        """Return the finals as the pages and the API show them: never their seed before their end."""
        rules = self.rules
        if rules is None:
            return {"phase": None}
        found: dict[str, Any] = {"phase": self.phase.value, "deadline": rules.deadline,
                                 "closed_at": self.closed_at(), "top": rules.top,
                                 "budget": {"matches": rules.matches, "hours": rules.hours},
                                 "cut": rules.cut.to_json() if rules.cut is not None else None,
                                 "progress": self.progress_line(), "problem": self.problem}
        if self.phase in (Phase.FINALS, Phase.FINISHED) and self.config.finals_db.is_file():
            # a reader of its own: the pages may ask from another thread than the ladder's
            with contextlib.closing(Store(self.config.finals_db, readonly=True)) as store:
                record = store.finals("finals") or {}
                found |= {"commitment": record.get("commitment"), "finalists": record.get("finalists", []),
                          "left_out": record.get("left_out", []), "started_at": record.get("started_at"),
                          "cuts": store.cuts(), "matches": store.match_count(),
                          "not_started": [{"bot": b, "reason": r} for b, r in self._not_started(store).items()]}
                outcome = store.finals("finals_outcome")
                if outcome is not None and self.phase is Phase.FINISHED:  # with the export, not before
                    found["outcome"] = outcome
        if self.ladder is not None and self.phase is Phase.FINALS:
            found["open_pairs"] = self.ladder.open_pairs
        return found
