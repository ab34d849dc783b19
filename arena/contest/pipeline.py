"""The way into the ladder: each submission is unpacked, built in the jail, checked in the jail, then entered.

One submission at a time goes through, oldest first:

1. **building**: its archive (kept by content hash) is unpacked afresh into the work folder, with the archive
   limits; its manifest is read; its build step, if it has one, runs in the jail without network, with the
   contest's build limits (:func:`arena.contest.build.run_build`), and what it built becomes the bot's folder
   ``bots/ID``.
2. **checking**: ``arena check`` plays it, jailed as the ladder jails it, at every seat count of the game with
   its option variants and edge states. Its report, the bot's own output in it, is kept for its author only.
3. **playing**: the contest's store marks it playing and retires the author's earlier version of the same bot
   in one transaction, then the ladder takes it (:meth:`arena.ladder.ladder.Ladder.enter`) and retires the old
   one. A submission that fails a step is **rejected**, with the reason.

Every step starts from what is on disk and in the store, so a contest killed at any moment takes a submission
caught mid-way up again from its archive (:meth:`Pipeline.resume`); nothing a step writes is trusted before
the step's end is stored. A step that fails through the arena's own fault (a bug, a full disk, a check that
cannot start its server), not the bot's, is never the author's rejection: the submission goes back to the queue
and is tried again after :data:`RETRY_SECONDS`, then held queued until the next start.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arena.contest.archive import ArchiveError, unpack
from arena.contest.build import BuildError, run_build
from arena.contest.config import ContestConfig
from arena.contest.manifest import Manifest, ManifestError, read_manifest
from arena.contest.paths import UPLOAD, for_author
from arena.contest.store import UNFINISHED, ContestStore, State, Submission
from arena.core.referee import Clock
from arena.games.base import Game
from arena.launch.botlist import BotSpec
from arena.launch.sandbox import Bind, Sandbox
from arena.protocol.server import ServerError
from arena.tools.check import Report, check_bot

log = logging.getLogger("arena.contest.pipeline")

RETRY_SECONDS = (10.0, 60.0, 300.0)
"""How long a submission the arena failed on waits before each new try; after the last, it waits for a restart."""


class Field(Protocol):
    """What the pipeline asks of the ladder: take a bot, retire one (the ladder's own methods)."""

    def enter(self, bot: BotSpec) -> None: ...

    def retire(self, name: str) -> None: ...


class Check(Protocol):
    """What checks a bot: :func:`arena.tools.check.check_bot` (tests pass a fake)."""

    def __call__(self, spec: BotSpec, games: Sequence[Game], *, clock: Clock, max_faults: int, rounds: int | None,
                 log_dir: Path | None) -> Awaitable[Report]: ...


class Rejected(Exception):
    """A submission that cannot enter: the reason is for its author."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A submission that passed, as the ladder plays it."""

    submission: Submission
    spec: BotSpec


def archive_path(config: ContestConfig, content_hash: str) -> Path:
    """Return where the archive with ``content_hash`` is kept."""
    return config.archives / f"{content_hash}.tar.gz"


def bot_spec(config: ContestConfig, submission: Submission, manifest: Manifest) -> BotSpec:
    """Return how the ladder starts ``submission``: its runtime's program before its command, in its folder.

    Raises :class:`Rejected` when its runtime is not one the contest declares, or not on this machine.
    """
    runtime = config.runtimes.get(manifest.runtime)
    if runtime is None:
        raise Rejected(f"runtime {manifest.runtime!r} is not one of this contest's "
                       f"({', '.join(sorted(config.runtimes))})")
    if runtime.missing():
        raise Rejected(runtime.missing())
    command = list(manifest.command)
    if not runtime.program and "/" not in command[0]:
        command[0] = f"./{command[0]}"  # the bot's own program, never one found on the PATH
    # its logs are named by the submission's id: two authors' names may mangle alike, ids never meet
    return BotSpec(submission.ladder_name, (*runtime.program, *command), config.bots / submission.id, config.limits,
                   games=manifest.games, log_name=submission.id)


class Pipeline:
    """Takes each queued submission through build and check into the ladder (see the module's docstring)."""

    def __init__(self, config: ContestConfig, store: ContestStore, field: Field, sandbox: Sandbox, *,
                 check: Check = check_bot, retry_seconds: Sequence[float] = RETRY_SECONDS) -> None:
        self.config = config
        self.store = store
        self.field = field
        self.sandbox = sandbox
        self.check = check
        self.retry_seconds = tuple(retry_seconds)
        self._queue: asyncio.Queue[str] = asyncio.Queue()
        self._failures: dict[str, int] = {}
        self._retries: set[asyncio.Task[None]] = set()
        self._working: str | None = None
        self._idle = asyncio.Event()
        """Set while no submission is queued, on its way through or waiting to be tried again."""
        self._idle.set()

    def _settle(self) -> None:
        """Keep :attr:`_idle` true to the queue, the submission under way and the retries (after every change)."""
        if self._working is not None or not self._queue.empty() or self._retries:
            self._idle.clear()
        else:
            self._idle.set()

    def _put(self, submission_id: str) -> None:
        self._queue.put_nowait(submission_id)
        self._idle.clear()

    def resume(self) -> list[Submission]:
        """Queue again every submission a stopped contest left queued, building or checking; return them."""
        shutil.rmtree(self.config.work, ignore_errors=True)
        left = self.store.submissions.unfinished()
        for submission in left:
            if submission.state is not State.QUEUED:
                self.store.submissions.set_state(submission.id, State.QUEUED, "taken up again after a restart")
            self._put(submission.id)
        return left

    def submitted(self, submission_id: str) -> None:
        """Queue a submission the store has just taken (the upload's handler calls this)."""
        self._put(submission_id)

    async def run(self) -> None:
        """Take queued submissions through, one at a time, until cancelled."""
        try:
            while True:
                submission_id = await self._queue.get()
                self._working = submission_id
                try:
                    await self.process(submission_id)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # the arena's own failure must neither stop the contest nor reject the bot
                    log.exception("submission %s failed inside the pipeline", submission_id)
                    try:
                        self._failed(submission_id, exc)
                    except Exception:  # the store itself: the submission waits for a restart
                        log.exception("submission %s cannot be queued again", submission_id)
                finally:
                    self._working = None
                    self._settle()
        finally:
            for task in self._retries:
                task.cancel()

    async def idle(self) -> None:
        """Return once no submission is queued, on its way through, or waiting to be tried again (the finals wait
        for the submissions made before the deadline; one held until a restart is not waited for)."""
        await self._idle.wait()

    def _failed(self, submission_id: str, exc: Exception) -> None:
        """Put a submission the arena failed on back in the queue, to be tried again later (see the module)."""
        tries = self._failures[submission_id] = self._failures.get(submission_id, 0) + 1
        submission = self.store.submissions.get(submission_id)
        if submission is None or submission.state not in UNFINISHED:
            return  # rejected or entered already: a restart rebuilds the ladder from the store
        # its author reads the reason: what failed is named by its kind, never by the arena's paths or messages
        what = f"the arena failed on it, not the bot ({type(exc).__name__}; its operator has the details)"
        if tries > len(self.retry_seconds):
            self.store.submissions.set_state(submission_id, State.QUEUED,
                                             f"held: {what}; tried again when the contest restarts")
            return
        delay = self.retry_seconds[tries - 1]
        self.store.submissions.set_state(submission_id, State.QUEUED, f"{what}; tried again in {delay:g} s")
        task = asyncio.get_running_loop().create_task(self._again(submission_id, delay))
        self._retries.add(task)
        self._idle.clear()
        task.add_done_callback(self._retried)

    def _retried(self, task: asyncio.Task[None]) -> None:
        self._retries.discard(task)
        self._settle()

    async def _again(self, submission_id: str, delay: float) -> None:
        await asyncio.sleep(delay)
        self._put(submission_id)

    async def process(self, submission_id: str) -> Entry | None:
        """Build, check and enter one submission; return its entry, or ``None`` when it was rejected."""
        submission = self.store.submissions.get(submission_id)
        if submission is None or submission.state is not State.QUEUED:
            return None
        try:
            self.store.submissions.set_state(submission.id, State.BUILDING)
            manifest = await self._build(submission)
            spec = bot_spec(self.config, submission, manifest)
            self.store.submissions.set_state(submission.id, State.CHECKING)
            await self._check(submission, spec)
        except Rejected as exc:
            self.store.submissions.set_state(submission.id, State.REJECTED, self._for_author(submission, str(exc)))
            shutil.rmtree(self.config.bots / submission.id, ignore_errors=True)
            return None
        finally:
            shutil.rmtree(self.config.work / submission.id, ignore_errors=True)
        retired = self.store.submissions.enter_ladder(submission.id)
        self.field.enter(spec)
        for old in retired:
            self.field.retire(old.ladder_name)
        entered = self.store.submissions.get(submission.id)
        assert entered is not None
        return Entry(entered, spec)

    async def _build(self, submission: Submission) -> Manifest:
        """Unpack and build ``submission`` into its bot folder; return its manifest. Raises :class:`Rejected`."""
        work = self.config.work / submission.id
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        source = work / "source"
        try:
            data = archive_path(self.config, submission.content_hash).read_bytes()
            unpack(data, source, self.config.submissions.archive)
            manifest = read_manifest(source, shown=UPLOAD)
        except OSError as exc:
            raise Rejected(f"its archive cannot be read: {exc.strerror or exc}") from None
        except (ArchiveError, ManifestError) as exc:
            raise Rejected(str(exc)) from None
        self._check_manifest(submission, manifest)
        built = source
        if manifest.build is not None:
            built = work / "built"
            runtime = self.config.runtimes.get(manifest.runtime)
            binds: Sequence[Bind] = [Bind(str(p)) for p in runtime.show] if runtime is not None else []
            try:
                result = await run_build(source, built, manifest.build, sandbox=self.sandbox,
                                         limits=self.config.build_limits,
                                         timeout=self.config.submissions.build_seconds,
                                         binds=binds)
            except BuildError as exc:
                raise Rejected(f"it cannot be built here: {exc}") from None
            self.store.reports.set(submission.id, self._for_author(
                submission, f"build ({result.seconds:.1f} s):\n{result.output}"))
            if not result.ok:
                raise Rejected(f"build: {result.reason}")
        target = self.config.bots / submission.id
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        built.rename(target)
        return manifest

    def _for_author(self, submission: Submission, text: str) -> str:
        """Return ``text`` (a reason, a report) with the host's paths taken out (:func:`for_author`): paths in the
        author's files relative to them."""
        work = self.config.work / submission.id
        return for_author(text, [work / "source", work / "built", self.config.bots / submission.id],
                          self.config.data)

    def _check_manifest(self, submission: Submission, manifest: Manifest) -> None:
        game = self.config.game.name
        if manifest.name != submission.bot:
            raise Rejected(f"its bot.toml names the bot {manifest.name!r}, the submission {submission.bot!r}")
        if game not in manifest.games:
            raise Rejected(f"this contest plays {game!r}; its bot.toml says the bot plays "
                           f"{', '.join(manifest.games)} (add {game!r} to games)")

    async def _check(self, submission: Submission, spec: BotSpec) -> None:
        """Play ``spec`` through ``arena check``; keep the report; raise :class:`Rejected` when it fails."""
        config = self.config
        log_dir = config.logs / f"check-{submission.id}"
        shutil.rmtree(log_dir, ignore_errors=True)
        log_dir.mkdir(parents=True)
        limit = config.submissions.check_seconds
        try:
            report = await asyncio.wait_for(
                self.check(spec, [config.game], clock=config.clock, max_faults=config.max_faults,
                           rounds=config.submissions.check_rounds, log_dir=log_dir), limit)
        except TimeoutError:  # a bot slow at every decision must not hold the other authors' submissions up
            raise Rejected(f"arena check ran past its {limit:g} s (the contest's check_seconds): answer faster "
                           "than the deadline") from None
        except ServerError as exc:  # the arena's own trouble: not the author's; tried again at the next start
            raise RuntimeError(f"arena check cannot run: {exc}") from exc
        before = self.store.reports.get(submission.id)
        text = self._for_author(submission, "check:\n" + "\n".join(report.lines()))
        self.store.reports.set(submission.id, f"{before}\n\n{text}" if before else text)
        if not report.passed:
            first = report.problems[0] if report.problems else None
            detail = f": {first.where}: {first.kind}: {first.detail}" if first is not None else ""
            raise Rejected(f"arena check failed{detail}"[:500])
