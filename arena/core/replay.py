"""The replay format, in one place: assembled from a match's record, written, read, compressed, re-run,
verified, and seen from one seat.

A replay is a JSON object::

    {"format": "arena-replay/1", "game": "cabanga", "options": {...}, "seed": 7, "names": ["a", "b", "c"],
     "steps": [{"0": "R7:left"}, {"1": "-", "2": "R9"}, ...],   # per step: each prompted seat's decision
     "faults": [{"seat": 1, "step": 4, "kind": "timeout", "detail": "no answer within 1.000 s"}, ...],
     "benched": [], "result": {"totals": [...], "places": [...]},
     "latency_ms": [{"0": 0.81}, {"1": 0.62, "2": 0.7}, ...],  # per step: the seats asked and their time
     "events": [...]}                                           # the public game events, to verify a re-run

Only ``game``, ``options``, ``seed``, ``names`` and ``steps`` are needed to re-run it (docs/rules.md G1); the rest
is what was seen and measured. ``debug`` (present when a bot wrote any) holds the bots' debug text,
``[{"step": 12, "seat": 1, "text": "..."}, ...]``, as the referee kept it: each seat's is its owner's alone
(:func:`debug_of`, :func:`without_debug`). ``latency_ms`` is absent from replays written before it existed. The replay
holds the seed and every hand: it is for the operator and, through :func:`seat_decisions`, for one seat's
author; never for a bot during a ladder.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.core.referee import Fault, FaultKind, MatchLog, MatchRecord
from arena.games import get_game
from arena.games.base import Decision, Event, GameError, MatchState, Prompt, View, decision_text

FORMAT = "arena-replay/1"


class ReplayError(GameError):
    """A replay that cannot be read, or does not fit its game (a bad field, a decision that is not legal)."""


def from_record(record: MatchRecord) -> dict[str, Any]:
    """Return the replay of a played match (see the module docstring), events included."""
    return {
        "format": FORMAT,
        "game": record.game,
        "options": record.options,
        "seed": record.seed,
        "names": record.names,
        "steps": [{str(seat): text for seat, text in step.items()} for step in record.steps],
        "faults": [f.to_json() for f in record.faults],
        "benched": sorted(record.benched),
        "result": None if record.result is None else {
            "totals": list(record.result.totals), "places": list(record.result.places)},
        "latency_ms": [{str(seat): round(seconds * 1000, 3) for seat, seconds in step.items()}
                       for step in record.asked],
        "events": [e.to_json() for e in record.events],
        **({"match_id": record.match_id} if record.match_id else {}),
        **({"debug": [{"step": step, "seat": seat, "text": text} for step, seat, text in record.debug]}
           if record.debug else {}),
    }


def write(path: Path, data: Mapping[str, Any]) -> None:
    """Write a replay to ``path`` as JSON, whole, then renamed into place. Raises :class:`OSError`."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def read(path: Path) -> dict[str, Any]:
    """Return the replay in the file at ``path``. Raises :class:`ReplayError` with a one-line reason."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReplayError(f"replay file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayError(f"cannot read replay {str(path)!r}: {exc}") from None
    if not isinstance(data, dict) or "game" not in data:
        raise ReplayError(f"{str(path)!r} is not an arena replay")
    return data


def pack(record: MatchRecord) -> bytes:
    """Return a played match's replay as a database stores it: :func:`compress` of :func:`from_record`."""
    return compress(from_record(record))


def compress(data: Mapping[str, Any]) -> bytes:
    """Return a replay as compressed JSON, for a database (some 8 KB of JSON become 1.3 KB)."""
    return zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 6)


def decompress(blob: bytes | str) -> dict[str, Any]:
    """Return the replay that :func:`compress` made (or plain JSON text). Raises :class:`ReplayError`."""
    try:
        data = json.loads(zlib.decompress(blob) if isinstance(blob, bytes) else blob)
    except (zlib.error, ValueError) as exc:
        raise ReplayError(f"a damaged replay: {exc}") from None
    if not isinstance(data, dict):
        raise ReplayError("a damaged replay: not a JSON object")
    return data


def _start(data: Mapping[str, Any]) -> tuple[MatchState, list[Any]]:
    try:
        game = get_game(str(data["game"]))
        options = game.options(data.get("options") or {})
        names = list(data["names"])
        state = game.new_match(len(names), int(data["seed"]), options)
        steps = list(data["steps"])
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, GameError):
            raise ReplayError(str(exc)) from None
        raise ReplayError(f"not an arena replay: missing or bad field {exc}") from None
    return state, steps


def _decisions(state: MatchState, index: int, step: Mapping[str, str]
               ) -> tuple[tuple[Prompt, ...], dict[int, Decision]]:
    prompts = state.pending()
    if not prompts:
        raise ReplayError(f"replay step {index}: the match is already over")
    decisions: dict[int, Decision] = {}
    for prompt in prompts:
        text = step.get(str(prompt.seat))
        if text is None:
            raise ReplayError(f"replay step {index}: no decision for prompted seat {prompt.seat}")
        try:
            decisions[prompt.seat] = prompt.parse(text)
        except GameError as exc:
            raise ReplayError(f"replay step {index}: {exc}") from None
    return prompts, decisions


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a re-run: the decisions applied (by seat, text form), their kind, the public events."""

    index: int
    kind: str
    decisions: dict[int, str]
    events: list[Event]
    prompts: tuple[Prompt, ...] = ()
    """What each seat asked at this step was offered: its choices or candidates, and its default."""


def start(data: Mapping[str, Any]) -> tuple[MatchState, Iterator[Step]]:
    """Start re-running a replay: return the state at its start and an iterator that applies one step at a time.

    The state advances as the iterator does. Raises :class:`ReplayError` when the replay does not fit the game
    (here for its header; from the iterator for a step that is not legal, or a match that does not end where
    the replay does).
    """
    state, steps = _start(data)

    def run() -> Iterator[Step]:
        for index, step in enumerate(steps):
            prompts, decisions = _decisions(state, index, step)
            texts = {seat: str(step[str(seat)]) for seat in decisions}
            yield Step(index, prompts[0].kind, texts, state.apply(decisions), prompts)
        if not state.over:
            raise ReplayError(f"replay ends after {len(steps)} steps but the match is not over")

    return state, run()


def rerun(data: Mapping[str, Any]) -> tuple[MatchState, list[Event]]:
    """Re-run a replay and return the final state and the public game events.

    Raises :class:`ReplayError` when the replay does not fit the game (an unknown game, bad options, a
    decision that is not legal at its step, or a match that does not end where the replay does).
    """
    state, steps = start(data)
    events: list[Event] = list(state.events)
    for step in steps:
        events.extend(step.events)
    return state, events


def verify(data: Mapping[str, Any]) -> tuple[list[Event], str | None]:
    """Re-run a replay; return its events and why they differ from the stored ones (``None``: they agree, or
    none are stored). Raises :class:`ReplayError` when it does not re-run at all."""
    _, events = rerun(data)
    stored = data.get("events")
    if stored is None:
        return events, None
    fresh = [e.to_json() for e in events]
    if fresh == stored:
        return events, None
    first = next((i for i, (a, b) in enumerate(zip(fresh, stored, strict=False)) if a != b),
                 min(len(fresh), len(stored)))
    return events, f"differs from the stored events at event {first} ({len(fresh)} re-run, {len(stored)} stored)"


@dataclass(frozen=True, slots=True)
class SeatDecision:
    """One decision of one seat, as that seat met it: what it was told and saw, what it chose, how fast."""

    step: int
    prompt: Prompt
    view: View
    events: tuple[Event, ...]
    """What the seat was told since its previous decision: public events, its private ones, faults."""
    decision: str
    """The decision applied, in text form (the default, when the seat faulted or was benched)."""
    latency_ms: float | None
    """How long the seat took; ``None`` when it was not asked (benched) or the replay does not say."""
    fault: Fault | None
    request: int | None = None
    """The seat's own number of this request (0 for the first it was sent), which ``DecisionRequest.step`` and
    the SDK's log give it; ``None`` for a decision never sent (the seat was benched)."""
    debug: str | None = None
    """The debug text the seat's bot attached to this decision, as the referee kept it (``None``: none)."""

    def to_json(self, names: Sequence[str] | None = None) -> dict[str, Any]:
        """Return the decision as JSON; with the seats' ``names``, what it was told also as lines of text
        (``told``), which a reader without the game's events can print."""
        told = {"told": [e.describe(names) for e in self.events]} if names is not None else {}
        return {
            "step": self.step,
            "kind": self.prompt.kind,
            "pick": self.prompt.pick.value,
            "choices": [a.text for a in self.prompt.choices],
            "default": decision_text(self.prompt.default),
            "view": self.view.to_json(),
            "events": [e.to_json() for e in self.events],
            "decision": self.decision,
            "latency_ms": self.latency_ms,
            "fault": None if self.fault is None else {"kind": self.fault.kind.value, "detail": self.fault.detail},
            "request": self.request,
            **told,
            **({"debug": self.debug} if self.debug is not None else {}),
        }


def was_sent(data: Mapping[str, Any], index: int, seat: int) -> bool:
    """Return whether ``seat``'s decision at step ``index`` was sent to it: the replay records a latency for it,
    or the replay records no latencies at all (an older one: every decision counts as sent)."""
    latencies = data.get("latency_ms")
    if not isinstance(latencies, list):
        return True
    took = latencies[index] if index < len(latencies) else None
    return isinstance(took, dict) and str(seat) in took


@dataclass(frozen=True, slots=True)
class _SeatStep:
    """One step of a replay as one seat met it (:func:`_seat_walk`)."""

    index: int
    prompt: Prompt | None
    """The seat's prompt at this step; ``None`` when it was not asked to decide."""
    view: View | None
    """The seat's view when it decided (``None`` when it did not)."""
    decision: str
    faults: tuple[Fault, ...]
    told: tuple[Event, ...]
    """What the step brought the seat, as the referee tells it: public events, its private ones, faults."""


def _seat_walk(data: Mapping[str, Any], seat: int) -> tuple[tuple[Event, ...], list[_SeatStep]]:
    """Re-run a replay through the referee's :class:`MatchLog`, the one owner of what each seat is told; return
    what ``seat`` was told at the start and every step as it met it. Raises :class:`ReplayError`."""
    state, steps = _start(data)
    if not 0 <= seat < state.seats:
        raise ReplayError(f"seat {seat} is not at this {state.seats}-seat table (seats 0..{state.seats - 1})")
    faults = _faults_by_step(data)
    match_log = MatchLog(state)
    start = match_log.since_last(seat)
    walked: list[_SeatStep] = []
    for index, step in enumerate(steps):
        prompts, decisions = _decisions(state, index, step)
        mine = next((p for p in prompts if p.seat == seat), None)
        view = state.view(seat) if mine is not None else None
        here = tuple(faults.get(index, ()))
        for fault in here:
            if fault.kind is not FaultKind.BENCHED:
                match_log.fault(fault.seat, fault.kind)
        match_log.apply(decisions)
        walked.append(_SeatStep(index, mine, view, str(step.get(str(seat), "")), here, match_log.since_last(seat)))
    return start, walked


def seat_decisions(data: Mapping[str, Any], seat: int) -> list[SeatDecision]:
    """Re-run a replay and return every decision of ``seat``, each with only what that seat knew (G2).

    Raises :class:`ReplayError` when the replay does not re-run, or the seat is not at its table.
    """
    start, walked = _seat_walk(data, seat)
    latencies = data.get("latency_ms")
    texts = debug_of(data, seat)
    out: list[SeatDecision] = []
    heard = list(start)  # told since the seat's previous decision
    sent = 0
    for st in walked:
        if st.prompt is not None and st.view is not None:
            took = latencies[st.index].get(str(seat)) if isinstance(latencies, list) and st.index < len(latencies) \
                else None
            request = sent if was_sent(data, st.index, seat) else None
            sent += request is not None
            out.append(SeatDecision(st.index, st.prompt, st.view, tuple(heard), st.decision, took,
                                    next((f for f in st.faults if f.seat == seat), None), request,
                                    texts.get(st.index)))
            heard = []
        heard.extend(st.told)
    return out


def debug_of(data: Mapping[str, Any], seat: int | None) -> dict[int, str]:
    """Return the debug text of ``seat``'s decisions in the replay ``data``, by step (``None``: every seat's,
    joined, for the operator); empty for a replay without any."""
    found: dict[int, str] = {}
    for entry in data.get("debug") or []:
        if not isinstance(entry, dict) or (seat is not None and entry.get("seat") != seat):
            continue
        try:
            step, text = int(entry["step"]), str(entry["text"])
        except (KeyError, TypeError, ValueError):
            continue
        found[step] = f"{found[step]}\n{text}" if step in found else text
    return found


def without_debug(data: Mapping[str, Any], keep: int | None = None) -> dict[str, Any]:
    """Return the replay ``data`` without the bots' debug text, but for seat ``keep``'s (its owner's view)."""
    out = {key: value for key, value in data.items() if key != "debug"}
    if keep is not None and data.get("debug"):
        out["debug"] = [e for e in data["debug"] if isinstance(e, dict) and e.get("seat") == keep]
    return out


def told_by_step(data: Mapping[str, Any], seat: int) -> list[tuple[Event, ...]]:
    """Re-run a replay and return what ``seat`` was told: first the events of the match's start, then for each
    step the events that step brought it, as the referee tells them (:class:`MatchLog`): the public events, the
    seat's own private ones where they happened, and the faults every seat is told of (:class:`SeatFaulted`).

    Raises :class:`ReplayError` when the replay does not re-run, or the seat is not at its table.
    """
    start, walked = _seat_walk(data, seat)
    return [start, *(st.told for st in walked)]


def _faults_by_step(data: Mapping[str, Any]) -> dict[int, list[Fault]]:
    faults: dict[int, list[Fault]] = {}
    try:
        for raw in data.get("faults") or []:
            fault = Fault.from_json(raw)
            faults.setdefault(fault.step, []).append(fault)
    except (KeyError, TypeError, ValueError) as exc:
        raise ReplayError(f"not an arena replay: bad fault {exc}") from None
    return faults


SEAT_FORMAT = "arena-seat-replay/1"
"""The format of one seat's replay (:func:`seat_replay`)."""


def seat_replay(data: Mapping[str, Any], seat: int) -> dict[str, Any]:
    """Return the match of the replay ``data`` as ``seat`` met it, for that seat's author to keep::

        {"format": "arena-seat-replay/1", "game": ..., "options": ..., "names": [...], "seat": 1,
         "decisions": [SeatDecision.to_json(names), ...],   # what it was told, saw, chose; latency, fault
         "after": ["seat 2 plays R7:left", ...],             # what it was told after its last decision
         "result": {"totals": [...], "places": [...]}, "faults": [its own faults]}

    It holds no seed, no other seat's hand or decision, nothing the seat was not told (G2): it cannot be re-run,
    only read (``arena replay FILE``). Raises :class:`ReplayError` when ``data`` does not re-run or the seat is
    not at its table.
    """
    names = [str(n) for n in data["names"]]
    decisions = seat_decisions(data, seat)
    told = told_by_step(data, seat)
    last = decisions[-1].step if decisions else -1
    # told[0] is what the match's start told it, told[i + 1] what step i did
    after = [e.describe(names) for step in told[last + 1:] for e in step]
    return {
        "format": SEAT_FORMAT,
        "game": data["game"],
        "options": data.get("options") or {},
        "names": names,
        "seat": seat,
        **({"match_id": data["match_id"]} if data.get("match_id") else {}),
        "decisions": [d.to_json(names) for d in decisions],
        "after": after,
        "result": data.get("result"),
        "faults": [f for f in data.get("faults") or [] if isinstance(f, dict) and f.get("seat") == seat],
    }


def is_seat_replay(data: Mapping[str, Any]) -> bool:
    """Return whether ``data`` is one seat's replay (:func:`seat_replay`), not a whole one."""
    return data.get("format") == SEAT_FORMAT
