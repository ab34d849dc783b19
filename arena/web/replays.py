"""A replay re-run into frames for the viewer: the table after every step, the event log, the rounds.

The replay is re-run by :func:`arena.replay.start`, the owner of the replay format. The
frames never carry the seed. Seen from a seat, a frame holds only what that seat saw: its own view, its own
decisions, the public events, and only the steps where something public happened or the seat was asked (a
step nobody saw, such as a throw no one made, would tell that another seat held a card).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arena import replay
from arena.games import get_game
from arena.games.base import Event, GameError
from arena.referee import Fault
from arena.web.games import game_web


def viewer_data(data: Mapping[str, Any], seat: int | None) -> dict[str, Any]:
    """Return what the replay viewer shows of ``data`` from ``seat`` (``None``: from above).

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

    log(first)
    frames: list[dict[str, Any]] = [{"table": web.table(state, seat), "events": len(lines), "step": None,
                                     "decisions": {}}]
    for step in steps:
        log(step.events)
        shown = step.decisions if seat is None else {s: t for s, t in step.decisions.items() if s == seat}
        if seat is not None and not shown and not step.events:
            continue  # nothing this seat saw happened
        frames.append({"table": web.table(state, seat), "events": len(lines), "step": step.kind,
                       "decisions": {str(s): t for s, t in shown.items()}})
    rounds: dict[int, int] = {}
    for index, frame in enumerate(frames):
        rounds.setdefault(int(frame["table"]["round"]), index)
    faults = []
    for raw in data.get("faults") or []:
        fault = Fault.from_json(raw)
        # a fault's detail can quote the seat's legal choices, so its hand: only its own seat (or above) sees it
        visible = seat is None or fault.seat == seat
        faults.append({"seat": fault.seat, "step": fault.step, "kind": fault.kind.value,
                       "detail": fault.detail if visible else None})
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
