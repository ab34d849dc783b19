"""L.A.M.A. in the browser: a match state as the table a person sees, and the script that draws it.

Pure like the rest of :mod:`arena.games`: no I/O. ``arena serve`` (:mod:`arena.web`) finds this module by the
game's name (the ``web`` module of its folder), calls :func:`table` for every frame of a replay, and serves
:data:`SCRIPT` (a file beside this one) to the page, which calls the renderer it registers.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import MatchState

SCRIPT = "web.js"
"""The renderer's JavaScript, a file in this package; it registers itself under the game's name."""

CHIP_VALUES = (10, 1)
"""Chips, largest first: a total is shown as black (10) and white (1) chips (L9, L10)."""


def chips(total: int) -> list[int]:
    """Return ``total`` as the fewest chips: how many of each of :data:`CHIP_VALUES`."""
    out = []
    for value in CHIP_VALUES:
        out.append(total // value)
        total %= value
    return out


def table(state: MatchState, seat: int | None) -> dict[str, Any]:
    """Return the table at this moment as JSON-ready data for :data:`SCRIPT`.

    With ``seat``, only what that seat sees (its view: its own hand, hand sizes, the discard's top, totals);
    other hands are ``None``. With ``None``, from above: every hand.
    """
    public = state.view(0 if seat is None else seat).to_json()
    hand_sizes: list[int] = public["hand_sizes"]
    totals: list[int] = public["totals"]
    data: dict[str, Any] = {
        "round": public["round"],
        "active": public["active"],
        "discard": public["discard"],
        "discard_size": public["discard_size"],
        "draw_size": public["draw_size"],
        "hand_sizes": hand_sizes,
        "in_round": public["in_round"],
        "totals": totals,
        "chips": [chips(t) for t in totals],
    }
    if seat is not None:
        data["hands"] = [public["hand"] if s == seat else None for s in range(len(hand_sizes))]
        return data
    zones = state.zones()
    data["hands"] = [[card.text for card in zones[f"hand {s}"]] for s in range(len(hand_sizes))]
    return data
