"""The contest service: the ladder, the submission pipeline and the web server, in one process and one event loop.

:class:`Contest` owns the contest's store and the ladder. An upload (from the web form or ``arena submit``) is
checked at once (the archive's limits, its manifest, the author's limits), its archive kept by content hash
(written whole and synced before the submission is stored), and then queued for the pipeline
(:mod:`arena.contest.pipeline`), which builds and checks it and enters it into the running ladder. The ladder
stays the only scheduler, rater and writer of its database; the contest only adds bots to it between deal sets
and retires replaced versions.

When the contest starts it rebuilds the ladder's bot list from the house bots and every submission that plays
or played (a retired version finishes the deal sets it is in), and queues again the submissions a stop caught
mid-way, so a ``kill -9`` at any moment loses no accepted submission and no stored match.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.contest.archive import ArchiveError, content_hash, unpack
from arena.contest.config import ContestConfig
from arena.contest.finals import FINALS_LOGS, Finals, FinalsError
from arena.contest.manifest import ManifestError, read_manifest
from arena.contest.paths import UPLOAD, for_author
from arena.contest.pipeline import Pipeline, Rejected, archive_path, bot_spec
from arena.contest.scrimmage import Bots, Scrimmaging
from arena.contest.store import Author, ContestStore, State, Submission
from arena.games import bot_list
from arena.ladder.executor import Executor, LocalExecutor
from arena.ladder.ladder import LadderConfig, Progress
from arena.ladder.setup import open_ladder
from arena.ladder.store import Store
from arena.launch.botlist import BotListError, BotSpec, load_bot_list
from arena.launch.pool import default_memory_budget
from arena.launch.process import log_file_name
from arena.launch.sandbox import CPU_SHARES, Isolation, Sandbox

LOG_BYTES = 256 * 1024
"""The end of a bot's log an author is shown, per log file."""
LOG_FILES = 12
"""The ladder's log files of a bot an author is shown: the newest (a process a table keeps, one per rotation)."""
SCRIMMAGE_CPU_SHARES = CPU_SHARES // 8
"""A scrimmage bot's CPU share: an eighth of a ladder bot's, so where the machine is busy the ladder's matches go
first (where there are cgroups: the contest runs as root)."""
SCRIMMAGE_LOGS = "scrimmages"
"""The folder of the contest's logs where the scrimmages' processes log (they are never the ladder's)."""


class SubmitError(ValueError):
    """An upload the contest refuses at once: the reason is for its author."""


class ContestError(RuntimeError):
    """A contest that cannot start: its house bots, its folder, the jail."""


@dataclass(frozen=True, slots=True)
class BotLog:
    """One log file of an author's bot: its name and its end (at most :data:`LOG_BYTES`)."""

    name: str
    text: str
    cut: int
    """Bytes left out at its start."""


class Contest:
    """A running contest: its store, its ladder and its pipeline (see the module's docstring)."""

    def __init__(self, config: ContestConfig, store: ContestStore, *, sandbox: Sandbox,
                 executor: Executor | None = None, cluster: str | None = None,
                 scrimmage_executor: Executor | None = None, finals_executor: Executor | None = None,
                 on_note: Callable[[str], None] | None = None,
                 on_progress: Callable[[Progress], None] | None = None, clock: Callable[[], float] = time.time,
                 ) -> None:
        """Open the contest of ``config`` on ``store``: its ladder with the house bots and every submission that
        plays or played, its pipeline with the submissions a stop caught mid-way queued again, and its scrimmages.

        The matches are played here, on ``executor``, or on the Ray cluster at ``cluster``: there every node must
        see the contest's data folder at the same path (a shared folder: a submission is built and checked here,
        then played from there), and its tables run the ``strict`` jail (a node that cannot is refused). The
        scrimmages are played here, on ``scrimmage_executor`` (default: a process pool of their own on their share
        of the tables, :mod:`arena.contest.scrimmage`), never by a process of the ladder's. The finals (``[finals]``,
        :mod:`arena.contest.finals`) are played as the ladder is, or on ``finals_executor``.

        Raises :class:`ContestError` for house bots that cannot be read, a machine without the bot jail, and finals
        that cannot start (a deadline passed while the contest was not running, a field too small), and
        the ladder's errors (:class:`arena.ladder.ladder.LadderError`, :class:`arena.ladder.store.StoreError`).
        """
        if sandbox.isolation is not Isolation.JAIL:
            raise ContestError(f"a contest runs strangers' bots, and needs the bot jail (bubblewrap): "
                               f"{sandbox.describe()}")
        self.config = config
        self.store = store
        self.clock = clock
        for folder in (config.archives, config.bots, config.logs):
            folder.mkdir(parents=True, exist_ok=True)
        house = self._house_bots()
        entered, retired = self._entered_bots()
        bots = house + entered
        ladder_config = LadderConfig(config.game, config.options, config.seats, config.seed or 0, bots,
                                     tables=config.tables, clock=config.clock, max_faults=config.max_faults,
                                     log_dir=config.logs, sandbox=sandbox, retired=frozenset(retired))
        self.ladder_store = Store(config.ladder_db)
        try:
            self.ladder = open_ladder(ladder_config, self.ladder_store, seed=config.seed, tables=config.tables,
                                      cluster=cluster, shared=config.data if cluster is not None else None,
                                      sandbox_mode="strict", untrusted=True, on_note=on_note,
                                      on_progress=on_progress,
                                      executor=executor).ladder
        except Exception:
            self.ladder_store.close()
            raise
        self.pipeline = Pipeline(config, store, self.ladder, sandbox)
        self.resumed = self.pipeline.resume()
        rules = config.scrimmages
        tables = rules.tables(config.tables)
        self.scrimmaging = Scrimmaging(
            config, store, Bots({bot.name: bot for bot in house}, self._spec), self.ladder.config.seed,
            scrimmage_executor or LocalExecutor(
                tables, seats=config.seats, log_dir=config.logs / SCRIMMAGE_LOGS, sandbox=sandbox,
                memory_budget=default_memory_budget(0.5 * min(1.0, tables / max(1, config.tables))),
                cpu_shares=SCRIMMAGE_CPU_SHARES), clock=clock)
        try:
            self.finals = Finals(config, store, house, self._spec, sandbox=sandbox, executor=finals_executor,
                                 cluster=cluster, on_note=on_note, on_progress=on_progress, clock=clock)
        except FinalsError as exc:
            self.ladder_store.close()
            raise ContestError(str(exc)) from None

    def _spec(self, submission: Submission) -> BotSpec:
        """Return how a checked submission starts, from its built folder. Raises :class:`ValueError` or
        :class:`OSError` when it cannot (its folder lost, its runtime gone)."""
        try:
            return bot_spec(self.config, submission, read_manifest(self.config.bots / submission.id))
        except Rejected as exc:
            raise ValueError(str(exc)) from None

    def _house_bots(self) -> list[BotSpec]:
        return house_bots(self.config)

    def _entered_bots(self) -> tuple[list[BotSpec], list[str]]:
        """Return the submitted bots of the ladder (playing or retired) and the names of the retired ones."""
        bots: list[BotSpec] = []
        retired: list[str] = []
        for submission in reversed(self.store.submissions.all()):  # oldest first
            if submission.state not in (State.PLAYING, State.RETIRED):
                continue
            folder = self.config.bots / submission.id
            try:
                spec = bot_spec(self.config, submission, read_manifest(folder))
            except (ManifestError, Rejected, OSError):
                if submission.state is State.PLAYING:  # its folder is gone: built again, checked again
                    self.store.submissions.set_state(submission.id, State.QUEUED, "its folder was lost; built again")
                continue
            bots.append(spec)
            if submission.state is State.RETIRED:
                retired.append(spec.name)
        return bots, retired

    def close(self) -> None:
        self.finals.close()
        self.ladder_store.close()

    # ------------------------------------------------------------------------------------------- the finals

    def check_open(self, what: str) -> None:
        """Raise :class:`SubmitError` once the submissions are closed (the finals' deadline has come, or the operator
        closed them): ``what`` (uploads, new versions, scrimmages, finalist marks) is refused with the reason and
        the time. Scrimmage requests call this too."""
        reason = self.finals.closed_reason(what)
        if reason is not None:
            raise SubmitError(reason)

    def mark_finalist(self, author: Author, submission_id: str) -> Submission:
        """Make ``author``'s submission ``submission_id`` their finalist; return it. Raises :class:`SubmitError`
        after the deadline, for a submission not theirs or not validated, and in a contest without finals."""
        if self.config.finals is None:
            raise SubmitError("this contest has no finals")
        self.check_open("finalist marks")
        try:
            return self.store.finalists.mark(author.name, submission_id)
        except KeyError:
            raise SubmitError("no such submission of yours") from None
        except ValueError as exc:  # an AuthorError too
            raise SubmitError(str(exc)) from None

    # ---------------------------------------------------------------------------------------- submitting

    def submit(self, author: Author, data: bytes) -> Submission:
        """Take an upload of ``author``: check it, keep its archive, queue it; return the queued submission.

        Raises :class:`SubmitError` with the reason for the author: after the finals' deadline, over a limit (size,
        uploads, a day's submissions, active bots), an archive or manifest that is not right, a runtime or game the
        contest does not have, a version that already plays.
        """
        config = self.config
        rules = config.submissions
        self.check_open("uploads")
        if not self.store.limits.allow("upload", author.name, rules.uploads_per_hour, 3600):
            raise SubmitError(f"at most {rules.uploads_per_hour} uploads an hour; try again later")
        if len(data) > rules.archive.archive_bytes:
            raise SubmitError(f"the archive is {len(data)} bytes; this contest takes at most "
                              f"{rules.archive.archive_bytes} bytes compressed")
        day = self.store.submissions.count_since(author.name, self.clock() - 86400)
        if day >= rules.per_day:
            raise SubmitError(f"you have made {day} submissions in the last 24 hours, the most this contest takes")
        config.work.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=config.work, prefix="upload-") as scratch:
            folder = Path(scratch) / "bot"
            try:
                unpack(data, folder, rules.archive)
                manifest = read_manifest(folder, shown=UPLOAD)
            except (ArchiveError, ManifestError) as exc:
                raise SubmitError(for_author(str(exc), [folder], config.data)) from None
        if config.game.name not in manifest.games:
            raise SubmitError(f"this contest plays {config.game.name!r}; bot.toml says the bot plays "
                              f"{', '.join(manifest.games)}")
        if manifest.runtime not in config.runtimes:
            raise SubmitError(f"runtime {manifest.runtime!r} is not one of this contest's "
                              f"({', '.join(sorted(config.runtimes))})")
        digest = content_hash(data)
        mine = self.store.submissions.all(author.name)
        if any(s.bot == manifest.name and s.content_hash == digest and s.state in _LIVE for s in mine):
            raise SubmitError(f"this very archive of {manifest.name!r} is already in the contest")
        active = {s.bot for s in mine if s.state in _LIVE}
        if manifest.name not in active and len(active) >= rules.active:
            raise SubmitError(f"you have {len(active)} bots in the contest ({', '.join(sorted(active))}), the most "
                              f"it takes; a new version of one of them replaces it")
        _keep(archive_path(config, digest), data)
        submission = self.store.submissions.add(author.name, manifest.name, digest)
        self.pipeline.submitted(submission.id)
        return submission

    # ------------------------------------------------------------------------------------- what one sees

    def may_see(self, author: Author, submission: Submission) -> bool:
        """Return whether ``author`` may see ``submission``'s report, code and logs: theirs, or an admin."""
        return author.admin or submission.author == author.name

    def logs(self, submission: Submission) -> list[BotLog]:
        """Return the ends of the bot's log files: its check's, then its ladder processes' (the last
        :data:`LOG_FILES` of them); the caller has made sure the asker may see them."""
        found: list[tuple[str, Path]] = []
        check = self.config.logs / f"check-{submission.id}"
        if check.is_dir():
            found += [(f"check: {p.name}", p) for p in sorted(check.glob("*.log"))]
        own = re.compile(re.escape(log_file_name(submission.id, 0)[:-len("-0.log")]) + r"-(\d+)\.log")
        played: list[tuple[float, str, Path]] = []
        # this machine's pool logs in the folder itself; a cluster's nodes each in node-N/; the scrimmages' in theirs
        for folder in [self.config.logs, *sorted(self.config.logs.glob("node-*")),
                       self.config.logs / SCRIMMAGE_LOGS, self.config.logs / FINALS_LOGS]:
            with contextlib.suppress(OSError):
                for path in folder.iterdir():
                    if own.fullmatch(path.name):
                        label = path.name if folder == self.config.logs else f"{folder.name}/{path.name}"
                        played.append((path.stat().st_mtime, label, path))
        found += [(label, path) for _, label, path in sorted(played)[-LOG_FILES:]]
        logs = []
        for label, path in found:
            try:
                with path.open("rb") as f:
                    size = f.seek(0, os.SEEK_END)
                    f.seek(max(0, size - LOG_BYTES))
                    text = f.read().decode("utf-8", "replace")
            except OSError:
                continue
            logs.append(BotLog(label, text, max(0, size - LOG_BYTES)))
        return logs

    def disable(self, submission: Submission) -> None:
        """Take ``submission`` out of the contest (the operator's call): rejected, and planned into no new deal set;
        its matches stay on the board."""
        if submission.state in (State.REJECTED, State.RETIRED):
            return
        was_playing = submission.state is State.PLAYING
        self.store.submissions.set_state(submission.id, State.REJECTED, "disabled by the operator")
        if was_playing and submission.ladder_name in self.ladder.specs:
            self.ladder.retire(submission.ladder_name)

    async def run(self) -> None:
        """Play the ladder and take submissions through the pipeline until cancelled (or the ladder fails); from the
        finals' deadline, the finals instead of the ladder (:meth:`arena.contest.finals.Finals.run`)."""
        tasks = [asyncio.create_task(self.finals.run(self.ladder, self.pipeline), name="contest-ladder"),
                 asyncio.create_task(self.pipeline.run(), name="contest-pipeline"),
                 asyncio.create_task(self.scrimmaging.run(), name="contest-scrimmages")]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


_LIVE = (State.QUEUED, State.BUILDING, State.CHECKING, State.PLAYING)


def house_bots(config: ContestConfig) -> list[BotSpec]:
    """Return the contest's house bots: its ``baseline`` bot list, or its game's bundled bots. Raises
    :class:`ContestError` when there are none or they cannot be read."""
    path = config.baseline or bot_list(config.game.name)
    if path is None:
        raise ContestError(f"the house bots: {config.game.title} ships no bundled bots; name a bot list with baseline")
    try:
        bots = load_bot_list(path)
    except BotListError as exc:
        raise ContestError(f"the house bots: {exc}") from None
    clashing = [b.name for b in bots if ":" in b.name]
    if clashing:
        raise ContestError(f"house bot {clashing[0]!r}: a name with ':' is kept for submissions (AUTHOR:BOT:vN)")
    return bots


def _keep(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all, synced before it is named: an accepted archive is never
    half on disk after a crash."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".upload-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)
