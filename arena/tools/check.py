"""``arena check``: a bot's compliance test before it meets the ladder.

The bot is started exactly as the ladder starts it (a :class:`arena.launch.pool.ProcessPool`: the same launcher,
sandbox, limits and protocol), then driven through every game asked for, at every seat count, with option
variants, and through hand-set edge states that a random deal rarely reaches. Every decision is timed per
kind against the deadline; every fault (timeout, crash, malformed or illegal answer) is kept with the
request that caused it. A bot passes when nothing went wrong.

:class:`BotDriver` is also what ``arena replay --bot`` uses to ask a bot the requests of a stored match again.
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.core import replay as replay_format
from arena.core.deals import DealKey
from arena.core.referee import (
    DEFAULT_CLOCK,
    Clock,
    FaultKind,
    MatchInfo,
    Request,
    Seat,
    SeatFault,
    ask_seat,
    random_seat,
    referee_match,
)
from arena.games import all_games, get_game
from arena.games.base import Game, IllegalDecisionError, MatchResult, decision_text
from arena.games.tools import EdgeState, game_tools
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.jail import shared_folders
from arena.launch.pool import ProcessPool
from arena.launch.process import LaunchError, log_file_name
from arena.launch.runner import serving
from arena.text import CONTINUATION, visible

TAIL_CHARS = 1500
"""How much of a crashed bot's output a report shows."""
SHOWN_PER_RUN = 3
"""Problems shown per run and kind (all are counted)."""


@dataclass
class Problem:
    """One thing that went wrong: where, what kind of fault, why, and the request that caused it."""

    where: str
    kind: str
    detail: str
    request: dict[str, Any] | None = None
    output: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "kind": self.kind, "detail": self.detail, "request": self.request,
                "output": self.output}


@dataclass
class Report:
    """What a check found: latencies per decision kind, problems, and what was played."""

    bot: str
    deadline: float
    latencies: dict[str, list[float]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    hidden: int = 0
    """Problems counted but not kept (beyond :data:`SHOWN_PER_RUN` per run and kind)."""
    runs: list[str] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)
    """Faults counted by ``"KIND on DECISION"`` (``"timeout on throw"``), and where they happened by seats."""
    seat_counts: dict[str, set[int]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """What may trouble the bot on the ladder without failing the check: a folder it shares with another bot of
    its list (its jail then shows it only its program and its ``files``)."""

    def count(self, fault: str, decision: str, seats: int) -> None:
        key = f"{fault} on {decision}"
        self.faults[key] = self.faults.get(key, 0) + 1
        self.seat_counts.setdefault(key, set()).add(seats)

    def fault_lines(self) -> list[str]:
        """Return one line per kind of fault and decision: how many, at which seat counts."""
        return [f"{key}: {n} (at {', '.join(map(str, sorted(self.seat_counts[key])))} seats)"
                for key, n in sorted(self.faults.items(), key=lambda kv: -kv[1])]

    @property
    def passed(self) -> bool:
        return not self.problems and self.hidden == 0

    def latency_rows(self) -> list[dict[str, Any]]:
        """Return per decision kind: count, median, p90, p99 and max in ms, and the share of the deadline."""
        rows = []
        for kind, seconds in sorted(self.latencies.items()):
            ordered = sorted(seconds)
            p90, p99 = (ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.9, 0.99))
            rows.append({"kind": kind, "decisions": len(ordered),
                         "median_ms": round(statistics.median(ordered) * 1000, 3),
                         "p90_ms": round(p90 * 1000, 3), "p99_ms": round(p99 * 1000, 3),
                         "max_ms": round(ordered[-1] * 1000, 3),
                         "max_of_deadline": round(ordered[-1] / self.deadline, 3)})
        return rows

    def verdict(self) -> str:
        decisions = sum(len(v) for v in self.latencies.values())
        if self.passed:
            return (f"PASS: {self.bot} answered all {decisions} decisions of {len(self.runs)} runs legally and "
                    f"within the {self.deadline:g} s deadline")
        count = len(self.problems) + self.hidden
        return f"FAIL: {self.bot}: {count} problem{'s' if count != 1 else ''} in {len(self.runs)} runs"

    def lines(self) -> list[str]:
        """Return the report as text lines, the bot's own output among them, made safe for a terminal or a page:
        latency per decision kind, each problem with its request and the end of the bot's output, the faults,
        the verdict."""
        lines = [f"latency per decision kind (deadline {self.deadline * 1000:g} ms):"]
        for row in self.latency_rows():
            lines.append(f"  {row['kind']:<6} {row['decisions']:>5} decisions: median {row['median_ms']:.2f} ms, "
                         f"p90 {row['p90_ms']:.2f}, p99 {row['p99_ms']:.2f}, max {row['max_ms']:.2f} "
                         f"({row['max_of_deadline']:.0%} of the deadline)")
        for problem in self.problems:
            lines.append(f"problem: {problem.where}: {problem.kind}: {visible(problem.detail, newline=CONTINUATION)}")
            if problem.request is not None:
                request = problem.request
                lines.append(visible(f"  request: {request['kind']} of {' '.join(request['choices'])}; view "
                                     + json.dumps(request["view"], separators=(",", ":"))))
            if problem.output:
                lines.append("  the bot's output ends with:")
                # a bot's \r or \x85 is shown, not obeyed
                lines += [f"    {visible(line)}" for line in problem.output.split("\n")[-15:]]
        if self.hidden:
            lines.append(f"... and {self.hidden} more problems of the same kinds")
        lines += [f"faults: {line}" for line in self.fault_lines()]
        lines.append(visible(self.verdict()))
        return lines

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "passed": self.passed, "verdict": self.verdict(), "deadline_s": self.deadline,
                "latency": self.latency_rows(), "problems": [p.to_json() for p in self.problems],
                "problems_not_shown": self.hidden, "faults": self.fault_lines(), "runs": self.runs,
                "warnings": self.warnings}


class BotDriver:
    """One bot, started and kept as a ladder table keeps it, asked one match or one request at a time.

    Use :meth:`open` (an async context manager). :meth:`seat` returns the bot's referee seat for the next
    match, starting it again if it died. ``log_dir`` keeps its output (a private folder by default).
    """

    def __init__(self, pool: ProcessPool, spec: BotSpec, log_dir: Path) -> None:
        self.pool = pool
        self.spec = spec
        self.log_dir = log_dir

    @classmethod
    @contextlib.asynccontextmanager
    async def open(cls, spec: BotSpec, log_dir: Path | None = None) -> AsyncIterator[BotDriver]:
        with tempdir.folder("check") as scratch:
            folder = log_dir or scratch
            async with serving() as server:
                pool = ProcessPool(server, log_dir=folder)
                try:
                    yield cls(pool, spec, folder)
                finally:
                    await pool.close()

    async def seat(self, match: str, deal: DealKey) -> Seat:
        """Return the bot's seat for match ``match`` of ``deal`` (started, or started again; a process of the bot
        that has not played ``deal``, as at a ladder table). Raises :class:`LaunchError`."""
        (seat,) = await self.pool.seat([self.spec], deal=deal, match=match)
        return seat

    def output_tail(self) -> str:
        """Return the end of the bot's output (its log), its line ends as the bot wrote them (a lone ``\r`` is
        shown escaped, not read as a line break)."""
        path = self.log_dir / log_file_name(self.spec.log_key, 0)
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return text[-TAIL_CHARS:].strip()


def edge_states(games: Sequence[Game] | None = None) -> list[EdgeState]:
    """Return the hand-set states a check puts to a bot: each game's own (its ``tools``), every game's by default."""
    return [edge for game in (games if games is not None else all_games())
            for edge in game_tools(game.name).edge_states()]


@dataclass(frozen=True, slots=True)
class Run:
    """One whole match of the check: a game, a seat count, options, and the bot's seat."""

    game: Game
    seats: int
    options: Mapping[str, Any]
    seat: int

    @property
    def label(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.game.name}, {self.seats} seats{', ' + opts if opts else ''}, seat {self.seat}"


def plan(games: Sequence[Game], rounds: int | None = 2) -> list[Run]:
    """Return the matches of a check: every seat count (the bot at a different seat each), then the option
    variants at the smallest usual table. ``rounds`` shortens the seat-count matches of a game with that option
    (``None``: whole ones)."""
    runs: list[Run] = []
    for game in games:
        short = {"rounds": rounds} if rounds is not None and "rounds" in game.options().to_json() else {}
        for seats in range(game.min_seats, game.max_seats + 1):
            runs.append(Run(game, seats, short, len(runs) % seats))
        seats = min(max(4, game.min_seats), game.max_seats)
        for i, options in enumerate(game_tools(game.name).variants):
            runs.append(Run(game, seats, dict(options), i % seats))
    return runs


def _request_json(prompt_kind: str, choices: Sequence[str], view: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": prompt_kind, "choices": list(choices), "view": dict(view)}


async def check_bot(spec: BotSpec, games: Sequence[Game], *, clock: Clock = DEFAULT_CLOCK, max_faults: int = 3,
                    seed: int = 1, rounds: int | None = 2, log_dir: Path | None = None,
                    on_run: Callable[[str], None] | None = None) -> Report:
    """Drive ``spec`` through whole matches and edge states of ``games`` and return what was found.

    Raises nothing for the bot's misbehaviour (that is the report); raises :class:`arena.protocol.server.ServerError`
    when the arena itself cannot start.
    """
    report = Report(spec.name, clock.deadline, warnings=shared_folders([spec]))
    rng = random.Random(seed)
    async with BotDriver.open(spec, log_dir) as driver:
        for index, run in enumerate(plan(games, rounds)):
            label = run.label
            report.runs.append(label)
            if on_run is not None:
                on_run(label)
            match_id = f"check-{index}"
            match_seed = rng.randrange(2**32)
            try:
                bot_seat = await driver.seat(match_id, DealKey(run.game.name, match_seed))
            except LaunchError as exc:
                report.problems.append(Problem(label, "crash", f"the bot did not start: {exc}"))
                return report  # nothing more can be learnt
            seats: list[Seat] = [random_seat(f"random{i}", rng.randrange(2**32)) for i in range(run.seats)]
            seats[run.seat] = bot_seat
            options = run.game.options(dict(run.options))
            record = await referee_match(run.game, seats, match_seed, options, clock=clock,
                                      max_faults=max_faults, match_id=match_id)
            data = replay_format.from_record(record)
            shown: dict[str, int] = {}
            crashed = False
            for decision in replay_format.seat_decisions(data, run.seat):
                kind = decision.prompt.kind
                if decision.latency_ms is not None:
                    report.latencies.setdefault(kind, []).append(decision.latency_ms / 1000)
                fault = decision.fault
                if fault is None:
                    continue
                report.count(fault.kind.value, kind, run.seats)
                shown[fault.kind.value] = shown.get(fault.kind.value, 0) + 1
                if shown[fault.kind.value] > SHOWN_PER_RUN:
                    report.hidden += 1
                    continue
                output = ""
                if fault.kind in (FaultKind.CRASH, FaultKind.DISCONNECT) and not crashed:
                    output = driver.output_tail()
                    crashed = "the bot process has ended" in fault.detail or crashed
                report.problems.append(Problem(
                    f"{label}, step {decision.step}", fault.kind.value, fault.detail,
                    _request_json(kind, [a.text for a in decision.prompt.choices], decision.view.to_json()),
                    output))
            if run.seat in record.benched:
                report.problems.append(Problem(label, "benched", f"played by the defaults after {max_faults} "
                                                                  "faults; later decisions were not asked"))
        for index, edge in enumerate(edge_states(games)):
            report.runs.append(edge.label)
            if on_run is not None:
                on_run(edge.label)
            await _check_edge(driver, edge, index, clock, max_faults, report)
    return report


async def _check_edge(driver: BotDriver, edge: EdgeState, index: int, clock: Clock, max_faults: int,
                      report: Report) -> None:
    state = edge.state
    match_id = f"check-edge-{index}"
    try:
        seat = await driver.seat(match_id, DealKey(f"{edge.game}/edge", index))  # a hand-set deal of its own
    except LaunchError as exc:
        report.problems.append(Problem(edge.label, "crash", f"the bot did not start: {exc}"))
        return
    names = tuple(driver.spec.name if s == edge.seat else f"other{s}" for s in range(state.seats))
    info = MatchInfo(match_id, edge.game, edge.seat, names, dict(edge.options), clock, max_faults)
    with contextlib.suppress(Exception):
        await seat.match_started(info)
    (prompt,) = [p for p in state.pending() if p.seat == edge.seat]
    view = state.view(edge.seat)
    request = Request(match_id, 0, prompt, view, (), clock.deadline + clock.bank)
    _, answer, elapsed = await ask_seat(seat, request)
    report.latencies.setdefault(prompt.kind, []).append(elapsed)
    problem: tuple[str, str] | None = None
    if isinstance(answer, SeatFault):
        problem = (answer.kind.value, answer.detail)
    else:
        try:
            prompt.check(answer)
        except IllegalDecisionError as exc:
            problem = ("illegal", str(exc))
    if problem is not None:
        report.count(problem[0], prompt.kind, state.seats)
        output = driver.output_tail() if problem[0] in ("crash", "disconnect") else ""
        report.problems.append(Problem(edge.label, problem[0], problem[1], _request_json(
            prompt.kind, [a.text for a in prompt.choices], view.to_json()), output))
    result = MatchResult(state.totals, tuple(1 for _ in state.totals))  # a position, not a finished match: no places
    with contextlib.suppress(Exception):
        await seat.match_over(match_id, edge.seat, (), result)


async def ask_again(spec: BotSpec, data: Mapping[str, Any], seat: int, *, clock: Clock = DEFAULT_CLOCK
                    ) -> list[tuple[int, str, str]]:
    """Ask the bot ``spec`` the requests ``seat`` was sent in the replay ``data``, in order, as one match.

    Returns (step, the decision in the replay, the bot's answer now) for every decision; a fault's answer is
    written ``fault: KIND (DETAIL)``. Raises :class:`LaunchError` when the bot does not start, and
    :class:`arena.core.replay.ReplayError` for a replay that does not re-run.
    """
    decisions = replay_format.seat_decisions(data, seat)
    game = get_game(str(data["game"]))
    names = tuple(str(n) for n in data["names"])
    match_id = "replay-again"
    out: list[tuple[int, str, str]] = []
    async with BotDriver.open(spec) as driver:
        bot_seat = await driver.seat(match_id, DealKey(game.name, int(data["seed"])))
        options = game.options(data.get("options") or {}).to_json()
        info = MatchInfo(match_id, game.name, seat, names, options, clock, 1_000_000)
        await bot_seat.match_started(info)
        for asked, decision in enumerate(decisions):  # a request's step counts the seat's own requests
            request = Request(match_id, asked, decision.prompt, decision.view, decision.events,
                              clock.deadline + clock.bank)
            _, answer, _ = await ask_seat(bot_seat, request)
            if isinstance(answer, SeatFault):
                now = f"fault: {answer.kind.value} ({answer.detail})"
            else:
                now = decision_text(answer)
                try:
                    decision.prompt.check(answer)
                except IllegalDecisionError as exc:
                    now = f"fault: illegal ({exc})"
            out.append((decision.step, decision.decision, now))
    return out
