"""A replay re-run into frames for the viewer: the table after every step, the event log, the rounds.

The replay is re-run by :func:`arena.core.replay.start`, the owner of the replay format. The
frames never carry the seed. Seen from a seat, a frame holds only what that seat saw: its own view, its own
decisions, the public events, and only the steps where something public happened or the seat was asked (a
step nobody saw, such as a throw no one made, would tell that another seat held a card).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from arena.core import replay
from arena.core.referee import Fault
from arena.games import get_game
from arena.games.base import NO_DECISION_TEXT, Event, GameError, Prompt
from arena.web.games import game_web

CHOICES_SHOWN = 12
"""The most choices (or candidates) a frame lists for a decision; the rest are counted."""


def decision_detail(prompt: Prompt, answer: str, fault: Fault | None, latency_ms: float | None, *,
                    step: int | None = None, request: int | None = None) -> dict[str, Any]:
    """Return what a frame shows of one seat's decision: its choices or candidates, its answer, or the fault
    and the default applied instead, and its latency; the referee's ``step`` and the seat's own ``request``
    count (what ``DecisionRequest.step`` and the bot's log say; ``None``: never sent, the seat was benched)."""
    return {"kind": prompt.kind, "pick": prompt.pick.value, "choices": [a.text for a in prompt.choices],
            "answer": answer, "fault": None if fault is None else {"kind": fault.kind.value, "detail": fault.detail},
            "latency_ms": latency_ms, "step": step, "request": request}


def describe_detail(detail: Mapping[str, Any]) -> str:
    """Return one line for a decision on its frame, e.g. ``answered R9:left in 1.3 ms (of R9:left, B3:right)``
    or ``timeout: no answer within 1.000 s; the default applied: nothing thrown``."""
    answer = str(detail["answer"])
    subset = detail["pick"] == "subset"
    what = ("nothing thrown" if subset else "no action") if answer in ("", NO_DECISION_TEXT) else answer
    choices = list(detail["choices"])
    listed = ", ".join(choices[:CHOICES_SHOWN]) + (f" and {len(choices) - CHOICES_SHOWN} more"
                                                   if len(choices) > CHOICES_SHOWN else "")
    offered = f"{'candidates' if subset else 'choices'}: {listed or 'none'}"
    where = ""
    if detail.get("step") is not None:
        request = detail.get("request")
        where = f"step {detail['step']}, {'request ' + str(request) if request is not None else 'not sent'}: "
    fault = detail["fault"]
    if fault is not None:
        reason = f": {fault['detail']}" if fault.get("detail") else ""
        return f"{where}{fault['kind']}{reason}; the default applied: {what} ({offered})"
    took = f" in {detail['latency_ms']:.1f} ms" if isinstance(detail["latency_ms"], int | float) else ""
    verb = "threw" if subset and answer not in ("", NO_DECISION_TEXT) else "answered"
    return f"{where}{verb} {what}{took} ({offered})"


PRIVATE_DETAIL = "(its reason is shown to the bot's author only)"


def viewer_data(data: Mapping[str, Any], seat: int | None, *, fault_details: bool = True,
                debug: bool = False) -> dict[str, Any]:
    """Return what the replay viewer shows of ``data`` from ``seat`` (``None``: from above); without
    ``fault_details`` a fault's reason, which may quote the bot's own words, is :data:`PRIVATE_DETAIL`. With
    ``debug`` each frame also holds the debug text of the decisions it shows (``debug``: seat to text): for the
    seat's owner (from its seat) or the operator (from above); never on a public page.

    Keys: ``game``, ``title``, ``names``, ``options``, ``seat``, ``events`` (one line each, with its round),
    ``frames`` (``table``, ``events``: how many events had happened, ``step``, ``decisions`` this seat may
    see), ``rounds`` (round number to its first frame), ``faults`` and ``result``. Raises :class:`GameError`
    for a replay that does not re-run, or a seat not at its table.
    """
    state, steps = replay.start(data)
    first = list(state.events)
    game = get_game(str(data["game"]))
    web = game_web(game.name)
    names = [str(n) for n in data["names"]]
    if seat is not None and not 0 <= seat < len(names):
        raise GameError(f"seat {seat} is not at this {len(names)}-seat table")
    lines: list[dict[str, Any]] = []
    current_round = 1

    def log(events: list[Event]) -> None:
        nonlocal current_round
        for event in events:
            raw = event.to_json()
            if raw.get("event") == "round_started":  # both games name a deal so
                current_round = int(raw["round"])
            lines.append({"text": event.describe(names), "kind": raw.get("event"), "round": current_round})

    faults = []
    by_step: dict[tuple[int, int], Fault] = {}
    for raw in data.get("faults") or []:
        fault = Fault.from_json(raw)
        if not fault_details:
            fault = dataclasses.replace(fault, detail=PRIVATE_DETAIL)
        by_step.setdefault((fault.step, fault.seat), fault)
        # a fault's detail can quote the seat's legal choices, so its hand: only its own seat (or above) sees it
        visible = seat is None or fault.seat == seat
        faults.append({"seat": fault.seat, "step": fault.step, "kind": fault.kind.value,
                       "detail": fault.detail if visible else None})
    raw_latencies = data.get("latency_ms")
    latencies: list[Any] = raw_latencies if isinstance(raw_latencies, list) else []

    sent = [0] * len(names)  # per seat: the requests it was sent so far (its own count, as its log names them)
    # a seat's log is what it was told: the public events, its own private ones (the cards it drew) and the
    # faults every seat is told of, as `arena replay --seat` shows them; from above, the public events
    told = replay.told_by_step(data, seat) if seat is not None else None
    texts: dict[tuple[int, int], str] = {}
    if debug:
        for entry in data.get("debug") or []:
            if isinstance(entry, dict) and (seat is None or entry.get("seat") == seat):
                key = (int(entry.get("step", -1)), int(entry.get("seat", -1)))
                texts[key] = f"{texts[key]}\n{entry.get('text')}" if key in texts else str(entry.get("text"))
    log(list(told[0]) if told is not None else first)
    frames: list[dict[str, Any]] = [{"table": web.table(state, seat), "events": len(lines), "step": None,
                                     "decisions": {}, "details": {}, "debug": {}}]
    for step in steps:
        heard = list(told[step.index + 1]) if told is not None else step.events
        log(heard)
        shown = step.decisions if seat is None else {s: t for s, t in step.decisions.items() if s == seat}
        if seat is not None and not shown and not heard:
            continue  # nothing this seat saw happened
        took = latencies[step.index] if step.index < len(latencies) and isinstance(latencies[step.index], dict) \
            else {}
        requests = {p.seat: sent[p.seat] if replay.was_sent(data, step.index, p.seat) else None for p in step.prompts}
        for s, number in requests.items():
            sent[s] += number is not None
        details = {s: decision_detail(prompt, shown[s], by_step.get((step.index, s)), took.get(str(s)),
                                      step=step.index, request=requests[s])
                   for prompt in step.prompts if (s := prompt.seat) in shown}
        frames.append({"table": web.table(state, seat), "events": len(lines), "step": step.kind,
                       "decisions": {str(s): describe_detail(d) for s, d in details.items()},
                       "details": {str(s): d for s, d in details.items()},
                       "debug": {str(s): texts[step.index, s] for s in details if (step.index, s) in texts}})
    rounds: dict[int, int] = {}
    for index, frame in enumerate(frames):
        rounds.setdefault(int(frame["table"]["round"]), index)
    result = state.result
    return {
        "game": game.name,
        "title": game.title,
        "names": names,
        "options": dict(data.get("options") or {}),
        "seat": seat,
        "events": lines,
        "frames": frames,
        "rounds": [[r, i] for r, i in sorted(rounds.items())],
        "faults": faults,
        "benched": list(data.get("benched") or []),
        "result": None if result is None else {"totals": list(result.totals), "places": list(result.places)},
    }
