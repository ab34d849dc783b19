"""A contest's two costs of taking submissions: how soon an upload plays, and what submissions take from the ladder.

Run: python benchmarks/contest.py [--uploads N] [--minutes M] [--every S] [--tables T] [--turns K] [--rounds R]
     [--scrimmage N] [--scrimmage-turns K] [--json]

Every figure comes from real `arena contest` processes (in the bot jail, as an operator runs them) of Cabanga! at
3 seats with the bundled house bots cabanga-greedy, cabanga-tidy and cabanga-random, each in a temporary folder
listening on 127.0.0.1 (a free port), with --rounds R rounds a match (default 1; 0: the game's default) on
--tables T tables (default 1). It prints:

  upload to first match   on an idle contest (house bots only, its first match stored), N times (--uploads,
              default 3) a new version of the same Python bot (its bot.py and bot.toml as `arena new` writes
              them) is sent with `arena submit`, and its times are taken from the moment the command starts:
                submitted    the command has packed and sent it and the contest has queued it;
                checking     the contest has unpacked (and built) it and `arena check` starts on it;
                playing      the check passed and the ladder took it (checking to playing: the check's own time);
                first match  its first match is stored, as GET /api/bot/AUTHOR:BOT:vN/matches lists it;
              their median and each; "without the check" is the first match less the check's own time
              (target: under 30 s). The times are the contest's own timestamps (a state's "updated", a match's
              "finished_at"), so the polling's period (0.6 s, under the API's 120 calls a minute) adds nothing.
  matches/h with submissions   the same contest with no submissions (A) and with a new submission every S
              seconds (B, --every, default 60; new versions of one bot each of three authors, in turn), each a
              fresh contest; the matches stored after its first one are counted over a window (its ladder
              database, read-only), and the matches per hour of B over those of A is the ratio (target: at
              least 0.90, within 10%). M minutes (--minutes, default 3) of each are measured in K turns A, B,
              A, B... (--turns, default 3) of M/K minutes each, so that a slow spell of a shared machine weighs
              on both alike; each turn's figures are printed too. A window shorter than S seconds gets one
              submission, at its start. Each window also says how long a match took on average and which
              share of the tables' time was spent inside matches (the rest: between them), to tell slower
              matches from longer gaps.

  scrimmage   a contest with one submitted bot (alice's), its ladder running: the ladder's matches/h over a window
              without a scrimmage, then alice asks (`arena submit --scrimmage`) for --scrimmage N matches (default
              200) against the house bots, and the time from the request to its verdict is taken, with the
              ladder's matches/h meanwhile; --scrimmage-turns K (default 2) times, in turns (each window without
              as long as the scrimmage before it took, the first one --minutes/--turns long).

--uploads 0, --minutes 0 or --scrimmage 0 leaves that figure out. With --json, one JSON object. Every process it
starts is in its own session and is stopped (a contest with SIGINT, as by Ctrl-C, then SIGKILL), with everything
below it, at the end (also on Ctrl-C or an error); a contest that stopped badly, or bot processes that outlived it,
are named on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import arena.v2
from arena.contest.config import ScrimmageRules
from arena.contest.store import ContestStore
from arena.ladder.readmodel import ReadModel
from arena.ladder.store import Store, StoreError
from arena.launch.botlist import bundled_folder
from arena.tools.new import write_bot as write_python_bot

T = TypeVar("T")
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]
HOUSE = ("greedy", "tidy", "random")
AUTHORS = ("alice", "bob", "carol")
API_PERIOD = 0.6
"""Seconds between an author's API calls: a contest takes 120 calls a minute from one address."""
PUBLIC_PERIOD = 0.25
"""Seconds between calls of the public API (not rate-limited)."""
STOP_GRACE = 15.0
"""Seconds a contest has to stop on SIGINT (as on Ctrl-C) before it and everything below it get SIGKILL."""
LINGER = 5.0
"""Seconds a contest's bot processes have to end after it stopped before they get SIGKILL (and a note)."""

class BenchError(RuntimeError):
    """The benchmark cannot go on: a contest did not start, an upload was refused or rejected, a wait timed out."""


# ------------------------------------------------------------------------------------------------ processes


def _start_time(pid: int) -> int | None:
    """Return the start time of ``pid`` (clock ticks since boot), or ``None`` when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return int(f.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def _descendants(root: int) -> list[tuple[int, int]]:
    """Return every process below ``root`` as (pid, start time), so that a pid reused later is not killed."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError), open(f"/proc/{entry}/stat", "rb") as f:
                parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
    found: list[tuple[int, int]] = []
    frontier = {root}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        for pid in frontier:
            started = _start_time(pid)
            if started is not None:
                found.append((pid, started))
    return found


class Processes:
    """Every process the benchmark starts, each in its own session; :meth:`close` kills what is left of them."""

    def __init__(self) -> None:
        self.running: list[subprocess.Popen[str]] = []
        self.notes: list[str] = []
        """What the benchmark saw go wrong in the contest (printed on stderr at the end)."""

    def start(self, command: list[str], **kwargs: Any) -> subprocess.Popen[str]:
        process = subprocess.Popen(command, start_new_session=True, text=True, **kwargs)
        self.running.append(process)
        return process

    def run(self, command: list[str], timeout: float, **kwargs: Any) -> tuple[int, str, str]:
        """Run ``command`` to its end; return its status, stdout and stderr. Raises :class:`BenchError` when it
        runs over ``timeout`` seconds (it is killed)."""
        process = self.start(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(process, grace=0)
            raise BenchError(f"{' '.join(command[3:5])} took more than {timeout:.0f} s") from None
        self.running.remove(process)
        return process.returncode, out, err

    def stop(self, process: subprocess.Popen[str], grace: float = STOP_GRACE, what: str = "") -> None:
        """Stop ``process``: SIGINT to its process group (an operator's Ctrl-C), SIGKILL after ``grace`` seconds
        (at once when 0), then SIGKILL to whatever was below it (the bots start sessions of their own) and is still
        there :data:`LINGER` seconds later; ``what`` names it in a note about what did not stop."""
        below = _descendants(process.pid) if process.poll() is None else []
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGINT if grace > 0 else signal.SIGKILL)
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                if what:
                    self.notes.append(f"{what} did not stop within {grace:.0f} s of SIGINT; killed")
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if what and process.returncode != 0:
                self.notes.append(f"{what} ended with status {process.returncode} on SIGINT")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # anything left in its group
        started_at = dict(below)
        left = [pid for pid, started in below if _start_time(pid) == started]
        if what and grace > 0:
            deadline = time.monotonic() + LINGER
            while left and time.monotonic() < deadline:
                time.sleep(0.1)
                left = [pid for pid in left if _start_time(pid) == started_at[pid]]
            if left:
                names = sorted({_command_name(pid) for pid in left})
                self.notes.append(f"{len(left)} processes outlived {what} by {LINGER:.0f} s "
                                  f"({', '.join(names)}); killed")
        for pid, started in below:
            if _start_time(pid) == started:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if process in self.running:
            self.running.remove(process)

    def close(self) -> None:
        for process in list(self.running):
            self.stop(process, grace=0)


def _command_name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return "?"


# -------------------------------------------------------------------------------------------------- contest


def _call(url: str, token: str | None = None) -> Any:
    """Return the JSON answer of GET ``url``. Raises :class:`BenchError` for an error answer or no answer."""
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise BenchError(f"GET {url}: {exc.code} {exc.read(2000).decode('utf-8', 'replace')}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise BenchError(f"GET {url}: {getattr(exc, 'reason', exc)}") from None


def _ladder(path: Path, question: Callable[[ReadModel], T]) -> T | None:
    """Return the answer of the ladder database at ``path``, opened read-only, to ``question`` (``None`` while it
    does not exist or holds no ladder yet)."""
    try:
        store = Store(path, readonly=True)
    except StoreError:
        return None
    try:
        return question(ReadModel(store))
    finally:
        store.close()


def write_bot(folder: Path, name: str, version: int) -> Path:
    """Write version ``version`` of the Python bot ``name`` as `arena new` writes it (its bot.py and bot.toml), in a
    folder of its own below ``folder``; return that folder. Each version differs by a comment, so its archive is
    new."""
    bot = folder / f"v{version}"
    write_python_bot(bot, name, "cabanga", "python", bundled=bundled_folder(),
                     proto=Path(arena.v2.__file__).resolve().parent / "arena.proto")
    with (bot / "bot.py").open("a", encoding="utf-8") as f:
        f.write(f"# version {version}\n")
    return bot


class Contest:
    """A running `arena contest` in ``folder`` (its configuration, its data), with authors and their tokens."""

    def __init__(self, processes: Processes, folder: Path, authors: tuple[str, ...], rounds: int,
                 tables: int) -> None:
        self.processes = processes
        self.folder = folder
        folder.mkdir(parents=True)
        (folder / "house.toml").write_text("".join(f'[[bot]]\nbundled = "cabanga-{name}"\n\n' for name in HOUSE))
        lines = ['game = "cabanga"', "seats = 3", *([f"options = {{ rounds = {rounds} }}"] if rounds else []),
                 f"tables = {tables}", 'listen = "127.0.0.1:0"', 'baseline = "house.toml"', 'data = "data"',
                 "[submissions]", "per_day = 1000", "uploads_per_hour = 1000", "build_seconds = 60"]
        self.config = folder / "contest.toml"
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / "data").mkdir()
        store = ContestStore(folder / "data" / "contest.db")
        try:
            self.tokens = {name: store.authors.add(name) for name in authors}
        finally:
            store.close()
        self.ladder_db = folder / "data" / "ladder.db"
        self.stderr: list[str] = []
        self.url = ""
        self.process = processes.start([*ARENA, "contest", str(self.config)], cwd=folder, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready,), daemon=True).start()
        if not ready.wait(120) or not self.url:
            self.stop()
            raise BenchError("arena contest did not start:\n" + "".join(self.stderr[-20:]))

    def _read(self, ready: threading.Event) -> None:
        """Keep the contest's stderr (so that its pipe never fills), and find its address in it."""
        stream = self.process.stderr
        assert stream is not None
        with contextlib.suppress(ValueError, OSError):
            for line in stream:
                self.stderr.append(line)
                found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
                if found and not self.url:
                    self.url = found.group(1)
                    ready.set()
        ready.set()  # it ended without an address

    def stop(self) -> None:
        """Stop the contest (see :meth:`Processes.stop`), and note what it said on stderr besides its usual lines."""
        what = f"the contest in {self.folder.name}"
        self.processes.stop(self.process, what=what)
        said: dict[str, int] = {}
        for line in self.stderr:
            text = re.sub(r"\b[0-9a-f]{32}\b", "ID", line.strip())
            usual = ("bot sandbox:", "contest of ", "contest: stopped;", "contest: SIGINT: stopping")
            if text and not text.startswith(usual):
                said[text] = said.get(text, 0) + 1
        for text, count in said.items():
            self.processes.notes.append(f"{what} said{f' ({count} times)' if count > 1 else ''}: {text[:300]}")

    def alive(self) -> None:
        """Raise :class:`BenchError` when the contest process has ended."""
        if self.process.poll() is not None:
            raise BenchError(f"arena contest ended with status {self.process.returncode}:\n"
                             + "".join(self.stderr[-20:]))

    def first_match(self, timeout: float = 120) -> float:
        """Wait for the ladder's first stored match; return when it was stored (time.time())."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.alive()
            first = _ladder(self.ladder_db, ReadModel.first_finished)
            if first is not None:
                return first
            time.sleep(PUBLIC_PERIOD)
        raise BenchError(f"the contest stored no match in {timeout:.0f} s")

    def matches_between(self, start: float, end: float) -> tuple[int, float]:
        """Return the matches stored after ``start`` until ``end``, and the seconds played in them."""
        played = _ladder(self.ladder_db, lambda read: read.finished_between(start, end))
        return played if played is not None else (0, 0.0)

    def submit_command(self, folder: Path, author: str) -> tuple[list[str], dict[str, str]]:
        return ([*ARENA, "submit", str(folder), "--to", self.url],
                {**os.environ, "ARENA_TOKEN": self.tokens[author]})


def _submission_id(out: str, err: str) -> str:
    found = re.search(r"\[id ([0-9a-f]+)\]", out)
    if found is None:
        raise BenchError(f"arena submit did not submit: {(err or out).strip()}")
    return found.group(1)


# ----------------------------------------------------------------------------------- upload to first match


def one_upload(processes: Processes, contest: Contest, bot: Path, author: str, timeout: float) -> dict[str, Any]:
    """Submit the bot in ``bot`` and follow it to its first stored match; return its times (seconds from the
    start of `arena submit`)."""
    command, env = contest.submit_command(bot, author)
    token = contest.tokens[author]
    start = time.time()
    status, out, err = processes.run(command, timeout=180, env=env)
    sent = time.time()
    if status != 0:
        raise BenchError(f"arena submit failed ({status}): {(err or out).strip()}")
    submission_id = _submission_id(out, err)
    times: dict[str, float | None] = {"command": sent - start, "checking": None, "playing": None}
    deadline = time.monotonic() + timeout
    answer: dict[str, Any] = {}
    while time.monotonic() < deadline:
        contest.alive()
        answer = _call(f"{contest.url}/api/contest/submissions/{submission_id}", token)
        times.setdefault("submitted", float(answer["created"]) - start)
        if answer["state"] == "checking" and times["checking"] is None:
            times["checking"] = float(answer["updated"]) - start
        if answer["state"] == "rejected":
            report = str(answer.get("report") or "").splitlines()[-15:]
            raise BenchError(f"the upload was rejected: {answer['reason']}\n" + "\n".join(report))
        if answer["state"] in ("playing", "retired"):
            times["playing"] = float(answer["updated"]) - start
            break
        time.sleep(API_PERIOD)
    else:
        raise BenchError(f"the upload was not playing after {timeout:.0f} s: {answer.get('state')}")
    name = str(answer["ladder_name"])
    url = f"{contest.url}/api/bot/{urllib.parse.quote(name)}/matches"
    while time.monotonic() < deadline:
        contest.alive()
        try:
            matches = _call(url)["matches"]
        except BenchError:
            matches = []  # not in the ladder's database before its first deal set is planned
        if matches:
            times["first_match"] = min(float(m["finished_at"]) for m in matches) - start
            break
        time.sleep(PUBLIC_PERIOD)
    else:
        raise BenchError(f"{name} had no match {timeout:.0f} s after it was submitted")
    checking, playing, first = times["checking"], times["playing"], times["first_match"]
    if checking is not None and playing is not None and first is not None:
        times["check"] = playing - checking
        times["without_check"] = first - (playing - checking)
    return {"bot": name, **{k: None if v is None else round(v, 3) for k, v in times.items()}}


def measure_uploads(processes: Processes, work: Path, uploads: int, rounds: int, tables: int,
                    timeout: float) -> dict[str, Any]:
    contest = Contest(processes, work / "uploads", AUTHORS[:1], rounds, tables)
    try:
        contest.first_match()
        rows = []
        for version in range(1, uploads + 1):
            bot = write_bot(work / "uploads-bot", "speedy", version)
            rows.append(one_upload(processes, contest, bot, AUTHORS[0], timeout))
    finally:
        contest.stop()

    def median(key: str) -> float | None:
        values = [float(r[key]) for r in rows if r.get(key) is not None]
        return round(statistics.median(values), 3) if values else None

    keys = ("command", "submitted", "checking", "playing", "first_match", "check", "without_check")
    return {"uploads": rows, "median": {k: median(k) for k in keys}, "target_without_check_s": 30}


# ----------------------------------------------------------------------------- matches/h with submissions


def one_window(processes: Processes, folder: Path, seconds: float, every: float | None, rounds: int,
               tables: int) -> dict[str, Any]:
    """Run a fresh contest for ``seconds`` after its first stored match, with a submission every ``every``
    seconds from then (``None``: none); return the matches stored in that window and the submissions' fates."""
    contest = Contest(processes, folder, AUTHORS, rounds, tables)
    sent: list[tuple[str, subprocess.Popen[str]]] = []
    try:
        start = contest.first_match()
        end = start + seconds
        due = start
        versions = dict.fromkeys(AUTHORS, 0)
        while time.time() < end:
            contest.alive()
            if every is not None and time.time() >= due:
                author = AUTHORS[len(sent) % len(AUTHORS)]
                versions[author] += 1
                bot = write_bot(folder.parent / f"{folder.name}-{author}", f"{author}-bot", versions[author])
                command, env = contest.submit_command(bot, author)
                sent.append((author, processes.start(command, env=env, stdout=subprocess.PIPE,
                                                     stderr=subprocess.PIPE)))
                due += every
            time.sleep(max(0.0, min(0.5, end - time.time(), due - time.time() if every else 0.5)))
        time.sleep(1.0)  # a match that finished by the end is in the database a moment later
        contest.alive()
        matches, played = contest.matches_between(start, end)
        refused = 0
        for _, process in sent:
            try:
                out, err = process.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                processes.stop(process, grace=0)
                refused += 1
                continue
            processes.running.remove(process)
            if process.returncode != 0:
                refused += 1
                processes.notes.append(f"arena submit failed ({process.returncode}): {(err or out).strip()}")
        states: dict[str, int] = {}
        for author in {a for a, _ in sent}:
            for row in _call(f"{contest.url}/api/contest/submissions", contest.tokens[author])["submissions"]:
                states[row["state"]] = states.get(row["state"], 0) + 1
    finally:
        contest.stop()
    return {"seconds": round(seconds, 1), "matches": matches,
            "matches_per_hour": round(matches / seconds * 3600) if seconds > 0 else 0,
            "ms_a_match": round(played / matches * 1000, 1) if matches else None,
            "in_matches": round(played / (seconds * tables), 3) if seconds > 0 else 0,
            "submissions": len(sent), "refused": refused, "states_at_end": states}


def measure_rate(processes: Processes, work: Path, minutes: float, every: float, turns: int, rounds: int,
                 tables: int) -> dict[str, Any]:
    window = minutes * 60 / turns
    rows: list[dict[str, Any]] = []
    for turn in range(turns):
        quiet = one_window(processes, work / f"quiet-{turn}", window, None, rounds, tables)
        busy = one_window(processes, work / f"busy-{turn}", window, every, rounds, tables)
        ratio = busy["matches"] / quiet["matches"] if quiet["matches"] else None
        rows.append({"turn": turn + 1, "without": quiet, "with": busy,
                     "ratio": None if ratio is None else round(ratio, 3)})
    quiet_matches = sum(r["without"]["matches"] for r in rows)
    busy_matches = sum(r["with"]["matches"] for r in rows)
    total = window * turns
    return {"turns": rows, "every_s": every, "window_s": round(window, 1),
            "without_per_hour": round(quiet_matches / total * 3600),
            "with_per_hour": round(busy_matches / total * 3600),
            "submissions": sum(r["with"]["submissions"] for r in rows),
            "ratio": round(busy_matches / quiet_matches, 3) if quiet_matches else None, "target_ratio_min": 0.9}


# ------------------------------------------------------------------------------------------------- scrimmage


def measure_scrimmage(processes: Processes, work: Path, matches: int, turns: int, first_window: float, rounds: int,
                      tables: int, timeout: float) -> dict[str, Any]:
    contest = Contest(processes, work / "scrimmage", AUTHORS[:1], rounds, tables)
    author = AUTHORS[0]
    token = contest.tokens[author]
    rows: list[dict[str, Any]] = []
    try:
        contest.first_match()
        entered = one_upload(processes, contest, write_bot(work / "scrimmage-bot", "sparring", 1), author, timeout)
        window = first_window
        for turn in range(turns):
            start = time.time()
            time.sleep(window)
            contest.alive()
            quiet, _ = contest.matches_between(start, time.time())
            command = [*ARENA, "submit", "--to", contest.url, "--scrimmage", "sparring", "--matches", str(matches),
                       *(arg for h in HOUSE for arg in ("--against", f"house:cabanga-{h}"))]
            asked = time.time()
            status, out, err = processes.run(command, timeout=120, env={**os.environ, "ARENA_TOKEN": token})
            if status != 0:
                raise BenchError(f"the scrimmage was refused ({status}): {(err or out).strip()}")
            found = re.search(r"scrimmage ([0-9a-f]{32})", out + err)
            if found is None:
                raise BenchError(f"arena submit --scrimmage said no id: {(out + err).strip()}")
            deadline = time.monotonic() + timeout * 4
            answer: dict[str, Any] = {}
            while time.monotonic() < deadline:
                contest.alive()
                answer = _call(f"{contest.url}/api/contest/scrimmages/{found.group(1)}", token)
                if answer["state"] in ("done", "failed"):
                    break
                time.sleep(API_PERIOD * 2)
            else:
                raise BenchError(f"the scrimmage was not done after {timeout * 4:.0f} s: {answer.get('played')} "
                                 "matches played")
            if answer["state"] == "failed":
                raise BenchError(f"the scrimmage failed: {answer['reason']}")
            done = float(answer["finished"])
            busy, _ = contest.matches_between(asked, done)
            took = done - asked
            rows.append({"turn": turn + 1, "matches": answer["played"], "to_verdict_s": round(took, 1),
                         "verdict": answer["result"]["verdict"], "without_s": round(window, 1),
                         "ladder_without_per_hour": round(quiet / window * 3600),
                         "ladder_with_per_hour": round(busy / took * 3600) if took > 0 else None})
            window = took
    finally:
        contest.stop()
    quiet_rate = statistics.median(r["ladder_without_per_hour"] for r in rows) if rows else None
    busy_rate = statistics.median(r["ladder_with_per_hour"] or 0 for r in rows) if rows else None
    return {"bot": entered["bot"], "turns": rows, "scrimmage_tables": ScrimmageRules().tables(tables),
            "median_to_verdict_s": statistics.median(r["to_verdict_s"] for r in rows) if rows else None,
            "ladder_without_per_hour": quiet_rate, "ladder_with_per_hour": busy_rate,
            "ratio": round(busy_rate / quiet_rate, 3) if quiet_rate and busy_rate is not None else None}


# ------------------------------------------------------------------------------------------------------ main


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} s"


def show_scrimmage(scrimmage: dict[str, Any]) -> None:
    ratio = "-" if scrimmage["ratio"] is None else f"{scrimmage['ratio']:.3f}"
    print(f"scrimmage of {scrimmage['bot']} against the house: median {_seconds(scrimmage['median_to_verdict_s'])} "
          f"from request to verdict; the ladder {scrimmage['ladder_without_per_hour']} matches/h without, "
          f"{scrimmage['ladder_with_per_hour']} during it (ratio {ratio}); the scrimmages' tables: "
          f"{scrimmage['scrimmage_tables']}")
    for row in scrimmage["turns"]:
        print(f"  turn {row['turn']}: {row['matches']} matches in {row['to_verdict_s']} s ({row['verdict']}); the "
              f"ladder {row['ladder_without_per_hour']}/h over {row['without_s']} s before, "
              f"{row['ladder_with_per_hour']}/h during")


def show(figures: dict[str, Any]) -> None:
    setup = figures["setup"]
    print(f"contest: cabanga, 3 seats, house bots {', '.join('cabanga-' + h for h in HOUSE)}, "
          f"{setup['rounds'] or 'default'} rounds a match, {setup['tables']} tables")
    uploads = figures.get("uploads")
    if uploads is not None:
        m = uploads["median"]
        print(f"upload to first match (median of {len(uploads['uploads'])}): {_seconds(m['first_match'])}; "
              f"without the check {_seconds(m['without_check'])} (target < {uploads['target_without_check_s']} s)")
        print(f"  median split from the start of arena submit: submitted {_seconds(m['submitted'])}, checking "
              f"{_seconds(m['checking'])}, playing {_seconds(m['playing'])} (the check {_seconds(m['check'])}), "
              f"first match {_seconds(m['first_match'])}")
        for row in uploads["uploads"]:
            print(f"  {row['bot']}: command {_seconds(row['command'])}, submitted {_seconds(row['submitted'])}, "
                  f"checking {_seconds(row['checking'])}, playing {_seconds(row['playing'])}, first match "
                  f"{_seconds(row['first_match'])} (check {_seconds(row['check'])}, without it "
                  f"{_seconds(row['without_check'])})")
    if figures.get("scrimmage") is not None:
        show_scrimmage(figures["scrimmage"])
    rate = figures.get("rate")
    if rate is not None:
        ratio = "-" if rate["ratio"] is None else f"{rate['ratio']:.3f}"
        print(f"matches/h: {rate['without_per_hour']} without submissions, {rate['with_per_hour']} with one every "
              f"{rate['every_s']:g} s ({rate['submissions']} submissions): ratio {ratio} (target >= "
              f"{rate['target_ratio_min']}); {len(rate['turns'])} turns of {rate['window_s']:g} s each side")
        for row in rate["turns"]:
            quiet, busy = row["without"], row["with"]
            states = ", ".join(f"{n} {s}" for s, n in sorted(busy["states_at_end"].items())) or "none"
            print(f"  turn {row['turn']}: without {quiet['matches']} matches ({quiet['matches_per_hour']}/h, "
                  f"{quiet['ms_a_match']} ms a match, tables in matches {quiet['in_matches']:.0%} of the time), with "
                  f"{busy['matches']} ({busy['matches_per_hour']}/h, {busy['ms_a_match']} ms a match, in matches "
                  f"{busy['in_matches']:.0%}; {busy['submissions']} submissions, at the end {states}): ratio "
                  f"{'-' if row['ratio'] is None else format(row['ratio'], '.3f')}")


def _interrupted(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uploads", type=int, default=3, help="uploads to time (default 3; 0: none)")
    parser.add_argument("--minutes", type=float, default=3.0,
                        help="minutes of each side of the matches/h figure (default 3; 0: none)")
    parser.add_argument("--every", type=float, default=60.0, help="seconds between submissions (default 60)")
    parser.add_argument("--tables", type=int, default=1, help="the contest's tables (default 1)")
    parser.add_argument("--turns", type=int, default=3, help="turns of the matches/h figure (default 3)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds a match (default 1; 0: the game's default)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds an upload may take to its first match (default 300)")
    parser.add_argument("--scrimmage", type=int, default=200,
                        help="matches of the scrimmage to time (default 200; 0: none)")
    parser.add_argument("--scrimmage-turns", type=int, default=2, help="scrimmages to time, in turns (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.uploads < 0:
        parser.error("--uploads: 0 or more")
    if args.minutes < 0 or args.every <= 0 or args.tables < 1 or args.turns < 1 or args.rounds < 0:
        parser.error("--minutes 0 or more, --every over 0, --tables and --turns 1 or more, --rounds 0 or more")
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGHUP, _interrupted)
    processes = Processes()
    work = Path(tempfile.mkdtemp(prefix="arena-bench-contest-"))
    setup: dict[str, Any] = {"game": "cabanga", "seats": 3, "house": [f"cabanga-{h}" for h in HOUSE],
                             "rounds": args.rounds, "tables": args.tables}
    figures: dict[str, Any] = {"setup": setup}
    status = 0
    try:
        if args.uploads:
            figures["uploads"] = measure_uploads(processes, work, args.uploads, args.rounds, args.tables,
                                                 args.timeout)
        if args.scrimmage:
            figures["scrimmage"] = measure_scrimmage(processes, work, args.scrimmage, args.scrimmage_turns,
                                                     max(30.0, args.minutes * 60 / args.turns), args.rounds,
                                                     args.tables, args.timeout)
        if args.minutes:
            figures["rate"] = measure_rate(processes, work, args.minutes, args.every, args.turns, args.rounds,
                                           args.tables)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        status = 130
    finally:
        processes.close()
        shutil.rmtree(work, ignore_errors=True)
    if status == 0:
        if args.json:
            print(json.dumps(figures))
        else:
            show(figures)
    for note in processes.notes:
        print(f"note: {note}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
