"""Scrimmages: an author's unrated matches of one of their versions against opponents they choose.

An author asks for N matches of one of their validated versions (checked: playing or retired) against house bots,
their own other versions, and the current versions of other authors who allow it (an author setting, on unless
they say otherwise). :meth:`Scrimmaging.request` checks the request and the author's quota (one scrimmage at a
time; :attr:`~arena.contest.config.ScrimmageRules.matches_per_hour` matches asked for in an hour) and queues it in
the contest's store, so queued requests survive a restart; a refusal says why and, over the quota, when it can
run (:class:`ScrimmageError`).

:meth:`Scrimmaging.run` plays the queue, one scrimmage at a time, oldest first (one a stop caught playing first),
on an executor of its own: a process pool that never seats a ladder match, on the scrimmages' share of the tables
(:meth:`~arena.contest.config.ScrimmageRules.tables`). So the fair-deals rule (no process plays a deal twice)
holds across both, and nothing of a scrimmage touches the ladder: not its ratings, board, schedule or stored
matches. Its matches are played in deal sets, the seats rotated as the ladder does, each deal's seed a keyed hash
of its number under the contest's secret with a purpose of its own (``"scrimmage"``,
:func:`arena.ladder.ladder.deal_seed`), so no scrimmage deal is a ladder deal and none can be computed. Each played
match is stored at once in the contest's store; a restart plays only the rest.

The result (:func:`result`) is private to the requester: the sequential test of ``arena compare`` on the
requester's mean score against the chosen opponents per deal set, with its interval, the score against each
opponent, and the faults (the requester's with their reasons; an opponent's by kind only). An opponent's author
is told only how often their bot was chosen (:meth:`~arena.contest.store.Scrimmages.chosen`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.contest.config import ContestConfig
from arena.contest.store import (
    AuthorError,
    ContestStore,
    Scrimmage,
    ScrimmageMatch,
    ScrimmageState,
    State,
    Submission,
)
from arena.ladder.estimate import Evidence, SequentialTest, Verdict, mean_score_interval
from arena.ladder.executor import Executor, Job
from arena.ladder.ladder import deal_seed, rotation_seating
from arena.ladder.ratings import Outcome
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError

log = logging.getLogger("arena.contest.scrimmage")

PURPOSE = "scrimmage"
"""The purpose of a scrimmage deal's seed (:func:`arena.ladder.ladder.deal_seed`): never a ladder deal's."""
HOUSE = "house:"
"""How a request names a house bot: ``house:NAME``."""
VALIDATED = (State.PLAYING, State.RETIRED)
"""The states of a version that passed its check: what a scrimmage may play."""
TEST = SequentialTest()
"""The verdict's test: ``arena compare``'s defaults."""


class ScrimmageError(ValueError):
    """A scrimmage request the contest refuses: the reason is for its author; ``retry_at`` says when a request
    over the quota may run (``None``: asking again will not help as it is)."""

    def __init__(self, message: str, retry_at: float | None = None) -> None:
        super().__init__(message)
        self.retry_at = retry_at


@dataclass(frozen=True, slots=True)
class Bots:
    """The bots a scrimmage may seat: the house's by name, and how to start a submission."""

    house: Mapping[str, BotSpec]
    spec: Callable[[Submission], BotSpec]
    """Return how a checked submission starts (raises :class:`ValueError`, :class:`OSError` when it cannot)."""


class Scrimmaging:
    """Takes authors' scrimmage requests and plays them (see the module's docstring)."""

    def __init__(self, config: ContestConfig, store: ContestStore, bots: Bots, secret: int, executor: Executor,
                 *, clock: Callable[[], float] = time.time, test: SequentialTest = TEST) -> None:
        self.config = config
        self.store = store
        self.bots = bots
        self.secret = secret
        self.executor = executor
        self.clock = clock
        self.test = test
        self._wake = asyncio.Event()
        self.playing: str | None = None
        """The id of the scrimmage being played, if any."""

    # ------------------------------------------------------------------------------------------ requests

    def request(self, author: str, version: str, against: Sequence[str], matches: int | None = None) -> Scrimmage:
        """Queue a scrimmage of ``author``'s ``version`` (``BOT``: its newest validated version; ``BOT:vN``; or a
        submission id) against the opponents ``against`` (``house:NAME``, ``AUTHOR:BOT`` for another author's
        current version, ``AUTHOR:BOT:vN`` for one's own) for ``matches`` matches (default: the contest's; rounded
        up to whole deal sets); return it.

        Raises :class:`ScrimmageError` with the reason for its author: scrimmages off, an unknown or unvalidated
        version, an unknown opponent or one whose author opted out, too many matches, a scrimmage of theirs still
        queued or playing, or over the hourly quota (then with when it can run).
        """
        rules = self.config.scrimmages
        if not rules.enabled:
            raise ScrimmageError("this contest plays no scrimmages")
        asked = rules.matches if matches is None else matches
        if not 1 <= asked <= rules.max_matches:
            raise ScrimmageError(f"a scrimmage plays 1 to {rules.max_matches} matches, not {asked}")
        seats = self.config.seats
        count = math.ceil(asked / seats) * seats
        mine = self._version(author, version)
        if not against:
            raise ScrimmageError("choose at least one opponent: house:NAME, AUTHOR:BOT, or one of your versions "
                                 "(YOU:BOT:vN)")
        opponents = list(dict.fromkeys(self._opponent(author, text) for text in against))
        if mine.ladder_name in opponents:
            raise ScrimmageError(f"{mine.ladder_name} cannot be its own opponent")
        self._seatings(mine.ladder_name, opponents, 1)  # refuses a field that cannot fill the seats
        busy = [s for s in self.store.scrimmages.all(author)
                if s.state in (ScrimmageState.QUEUED, ScrimmageState.RUNNING)]
        if busy:
            where = ("queued" if busy[0].state is ScrimmageState.QUEUED
                     else f"at {busy[0].played} of {busy[0].matches} matches")
            raise ScrimmageError(f"your scrimmage {busy[0].id} is {where}: one scrimmage at a time, ask again once "
                                 "it is done")
        now = self.clock()
        window = self.store.scrimmages.asked_since(author, now - 3600)
        used = sum(n for _, n in window)
        quota = rules.matches_per_hour
        if used + count > quota:
            freed, retry_at = used, now
            for when, n in window:  # the oldest leave the hour first
                freed -= n
                retry_at = when + 3600
                if freed + count <= quota:
                    break
            minutes = max(1, math.ceil((retry_at - now) / 60))
            raise ScrimmageError(
                f"you have asked for {used} scrimmage matches in the last hour and this contest takes {quota} an hour: "
                f"{count} more can run from {_when(retry_at)} (in {minutes} min)", retry_at)
        try:
            scrimmage = self.store.scrimmages.add(author, mine.id, opponents, count)
        except (AuthorError, KeyError) as exc:
            raise ScrimmageError(str(exc)) from None
        self._wake.set()
        return scrimmage

    def _version(self, author: str, text: str) -> Submission:
        """Return the author's validated version named by ``text``. Raises :class:`ScrimmageError`."""
        own = self.store.submissions.all(author)
        if any(s.id == text for s in own):
            chosen = [s for s in own if s.id == text]
        else:
            bot, _, version = text.partition(":v")
            chosen = [s for s in own if s.bot == bot and (not version or str(s.version) == version)]
            if not chosen:
                raise ScrimmageError(f"you have no version {text!r}: name one as BOT (its newest), BOT:vN or by its "
                                     f"submission id (yours: {_names(own)})")
        validated = [s for s in chosen if s.state in VALIDATED]
        if not validated:
            raise ScrimmageError(f"{chosen[0].ladder_name} has not passed its check ({chosen[0].state.value}): only a "
                                 "validated version plays scrimmages")
        return max(validated, key=lambda s: s.version)

    def _opponent(self, author: str, text: str) -> str:
        """Return the ladder name of the opponent named by ``text``. Raises :class:`ScrimmageError`."""
        name = text.strip()
        if name.startswith(HOUSE) or name in self.bots.house:
            house = name.removeprefix(HOUSE)
            if house not in self.bots.house:
                raise ScrimmageError(f"there is no house bot {house!r} (the house: "
                                     f"{', '.join(sorted(self.bots.house))})")
            return house
        parts = name.split(":")
        if len(parts) not in (2, 3) or not all(parts):
            raise ScrimmageError(f"an opponent is house:NAME, AUTHOR:BOT or YOU:BOT:vN, not {text!r}")
        owner, bot = parts[0], parts[1]
        if len(parts) == 3:
            if owner != author:
                raise ScrimmageError(f"{text!r}: another author's bot plays scrimmages in its current version only "
                                     f"(name it {owner}:{bot})")
            return self._version(author, f"{bot}:{parts[2]}").ladder_name
        if owner != author and not self.store.authors.scrimmage_opponent(owner):
            raise ScrimmageError(f"{owner} does not take part in others' scrimmages")
        current = [s for s in self.store.submissions.all(owner) if s.bot == bot and s.state is State.PLAYING]
        if not current:
            raise ScrimmageError(f"{owner} has no bot {bot!r} in the contest")
        return current[0].ladder_name

    def _seatings(self, mine: str, opponents: Sequence[str], count: int) -> list[list[str]]:
        """Return ``count`` seatings (rotation 0) of ``mine`` against ``opponents``: each deal set seats the next
        seats - 1 opponents in turn; with fewer chosen than that, house bots fill the seats left. Raises
        :class:`ScrimmageError` when the chosen and the house cannot fill the table."""
        others = self.config.seats - 1
        if len(opponents) >= others:
            cycle = itertools.cycle(opponents)
            return [[mine, *(next(cycle) for _ in range(others))] for _ in range(count)]
        fillers = [name for name in sorted(self.bots.house) if name not in opponents]
        if len(opponents) + len(fillers) < others:
            raise ScrimmageError(f"a table of {self.config.seats} seats needs {others} opponents; choose more")
        seatings = []
        for index in range(count):
            start = index * (others - len(opponents))
            fill = [fillers[(start + k) % len(fillers)] for k in range(others - len(opponents))]
            seatings.append([mine, *opponents, *fill])
        return seatings

    # --------------------------------------------------------------------------------------------- playing

    async def run(self) -> None:
        """Play the waiting scrimmages, one at a time, until cancelled. The executor starts with the first one (a
        contest whose authors ask for none runs no second server)."""
        started = False
        try:
            while True:
                waiting = self.store.scrimmages.waiting()
                if not waiting:
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                if not started:
                    await self.executor.start()
                    started = True
                await self.play(waiting[0])
        finally:
            if started:
                await self.executor.close()

    async def play(self, scrimmage: Scrimmage) -> None:
        """Play ``scrimmage``'s matches that are not stored yet, on the executor's tables; then end it: done, or
        failed with the reason (a bot that does not start, a version whose folder is gone)."""
        store = self.store.scrimmages
        self.playing = scrimmage.id
        try:
            store.start(scrimmage.id)
            specs = self._specs(scrimmage)
            seats = self.config.seats
            plan = store.plan(scrimmage.id, self._seatings(scrimmage.bot, scrimmage.opponents,
                                                         math.ceil(scrimmage.matches / seats)))
            done = {(m.deal, m.rotation) for m in store.matches(scrimmage.id)}
            todo = [(number, deal, rotation, seating) for number, (deal, rotation, seating) in enumerate(
                (deal, rotation, seating) for deal, seating in plan for rotation in range(seats))
                if (deal, rotation) not in done]
            queue: asyncio.Queue[tuple[int, int, int, tuple[str, ...]]] = asyncio.Queue()
            for item in todo:
                queue.put_nowait(item)
            tables = [asyncio.create_task(self._table(scrimmage, specs, queue))
                      for _ in range(self.executor.tables)]
            try:
                await asyncio.gather(*tables)
            finally:
                for task in tables:
                    task.cancel()
                await asyncio.gather(*tables, return_exceptions=True)
            store.finish(scrimmage.id, ScrimmageState.DONE)
        except ScrimmageError as exc:
            store.finish(scrimmage.id, ScrimmageState.FAILED, str(exc))
        except Exception as exc:  # the arena's own trouble (its server, its store, a bug): this one ends, the rest play
            log.exception("scrimmage %s failed inside the arena", scrimmage.id)
            with contextlib.suppress(Exception):
                store.finish(scrimmage.id, ScrimmageState.FAILED, f"the arena failed on it, not your bot "
                             f"({type(exc).__name__}; its operator has the details): ask again")
        finally:
            self.playing = None
            for _ in range(self.executor.tables):  # its processes stop: the next scrimmage seats others
                with contextlib.suppress(Exception):
                    await self.executor.release()

    async def _table(self, scrimmage: Scrimmage, specs: Mapping[str, BotSpec],
                     queue: asyncio.Queue[tuple[int, int, int, tuple[str, ...]]]) -> None:
        config = self.config
        while not queue.empty():
            number, deal, rotation, seating = queue.get_nowait()
            bots = rotation_seating(seating, rotation)
            job = Job(deal, rotation, tuple(specs[name] for name in bots), deal_seed(self.secret, deal, PURPOSE),
                      config.game, config.options, secrets.token_hex(8), config.clock, config.max_faults)
            try:
                played = await self.executor.run(job)
            except LaunchError as exc:
                who = "your bot" if scrimmage.bot in exc.bots else ", ".join(exc.bots) or "a bot"
                raise ScrimmageError(f"{who} did not start: {exc}") from None
            summary = played.summary
            faults = tuple(f.to_json() for f in summary.faults)
            self.store.scrimmages.record(scrimmage.id, ScrimmageMatch(
                number, deal, rotation, tuple(bots), tuple(summary.places), tuple(summary.totals), faults,
                self.clock()), played.replay)

    def _specs(self, scrimmage: Scrimmage) -> dict[str, BotSpec]:
        """Return how to start each bot the scrimmage may seat. Raises :class:`ScrimmageError` for one that
        cannot start any more (a version disabled or lost since, a house bot gone from the list)."""
        by_name = {s.ladder_name: s for s in self.store.submissions.all()}
        specs: dict[str, BotSpec] = {}
        for name in {scrimmage.bot, *scrimmage.opponents, *self.bots.house}:
            if name in self.bots.house:
                specs[name] = self.bots.house[name]
                continue
            submission = by_name.get(name)
            if submission is None or submission.state not in VALIDATED:
                raise ScrimmageError(f"{name} no longer plays (disabled or gone): ask for another scrimmage")
            try:
                specs[name] = self.bots.spec(submission)
            except (ValueError, OSError) as exc:
                raise ScrimmageError(f"{name} cannot be started here: {exc}") from None
        return specs


# ------------------------------------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class OpponentScore:
    """The requester's mean score against one chosen opponent, over the deal sets they met in."""

    bot: str
    deal_sets: int
    mean: float | None
    interval: tuple[float, float] | None
    verdict: Verdict


@dataclass(frozen=True, slots=True)
class Result:
    """What a scrimmage says to its requester (see :func:`result`)."""

    matches: int
    deal_sets: int
    mean: float | None
    interval: tuple[float, float] | None
    verdict: Verdict
    opponents: tuple[OpponentScore, ...]
    faults: tuple[dict[str, Any], ...]

    @property
    def text(self) -> str:
        """Return the verdict for a person: yours is better, worse, no different, or not decided yet."""
        return {Verdict.FIRST: "yours is better", Verdict.SECOND: "yours is worse",
                Verdict.EQUAL: "no difference within the zone"}.get(self.verdict, "not decided by these matches")

    def to_json(self) -> dict[str, Any]:
        return {"matches": self.matches, "deal_sets": self.deal_sets, "mean": self.mean,
                "interval": list(self.interval) if self.interval else None, "verdict": self.text,
                "decided": self.verdict.decided,
                "opponents": [{"bot": o.bot, "deal_sets": o.deal_sets, "mean": o.mean,
                               "interval": list(o.interval) if o.interval else None,
                               "verdict": {Verdict.FIRST: "yours is better", Verdict.SECOND: "yours is worse",
                                           Verdict.EQUAL: "no difference"}.get(o.verdict, "not decided")}
                              for o in self.opponents],
                "faults": list(self.faults)}


def result(scrimmage: Scrimmage, matches: Sequence[ScrimmageMatch], test: SequentialTest = TEST) -> Result:
    """Return the result of ``scrimmage`` so far from its played ``matches``: per deal set, the requester's mean
    pairwise score against the chosen opponents seated (a benched seat behind every seat that finished), its
    mean over the deal sets with a 95% interval and the sequential test's verdict, the same against each chosen
    opponent, and the faults: the requester's with their reasons, an opponent's by kind only."""
    evidence = Evidence.of(Outcome(m.deal, m.rotation, m.bots, _rated(m)) for m in matches)
    mine = scrimmage.bot
    per_opponent = []
    by_deal: dict[int, list[float]] = {}
    for opponent in scrimmage.opponents:
        key = (mine, opponent) if mine < opponent else (opponent, mine)
        cells = evidence.by_pair.get(key, {})
        scores = evidence.paired(mine, opponent)
        for deal, score in zip(sorted(cells), scores, strict=True):
            by_deal.setdefault(deal, []).append(score)
        per_opponent.append(OpponentScore(opponent, len(scores), math.fsum(scores) / len(scores) if scores else None,
                                          mean_score_interval(scores), test.verdict(scores)))
    overall = [math.fsum(v) / len(v) for _, v in sorted(by_deal.items())]
    faults = []
    for m in matches:
        for fault in m.faults:
            own = m.bots[int(fault["seat"])] == mine
            faults.append({"match": m.number, "bot": m.bots[int(fault["seat"])], "step": fault["step"],
                           "kind": fault["kind"], **({"detail": fault["detail"]} if own else {})})
    return Result(len(matches), len(overall), math.fsum(overall) / len(overall) if overall else None,
                  mean_score_interval(overall), test.verdict(overall), tuple(per_opponent), tuple(faults))


def _rated(match: ScrimmageMatch) -> tuple[int | None, ...]:
    benched = {int(f["seat"]) for f in match.faults if f.get("kind") == "benched"}
    return tuple(None if seat in benched else place for seat, place in enumerate(match.places))


def seats_of(match: ScrimmageMatch, bot: str) -> list[int]:
    """Return the seats ``bot`` held in ``match`` (the requester's: the seats whose replay it may see)."""
    return [seat for seat, name in enumerate(match.bots) if name == bot]


def _names(submissions: Sequence[Submission]) -> str:
    return ", ".join(sorted({f"{s.bot}:v{s.version}" for s in submissions})) or "none yet"


def _when(seconds: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(seconds))
