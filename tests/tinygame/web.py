"""Tiny Duel in the browser."""

from __future__ import annotations

from typing import Any

from arena.games.base import MatchState

SCRIPT = "web.js"


def table(state: MatchState, seat: int | None) -> dict[str, Any]:
    zones = state.zones()
    hands = [[c.text for c in zones[f"hand {s}"]] if seat in (None, s) else None for s in range(state.seats)]
    return {"round": 1, "hands": hands, "totals": list(state.totals)}
