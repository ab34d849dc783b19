"""Cabanga! in the browser: a match state as the table a person sees, and the script that draws it.

Pure like the rest of :mod:`arena.games`: no I/O. ``arena serve`` (:mod:`arena.web`) finds this module by the
game's name (the ``web`` module of its folder), calls :func:`table` for every frame of a replay, and serves
:data:`SCRIPT` (a file beside this one) to the page, which calls the renderer it registers.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import MatchState
from arena.games.cabanga import PILE_NAMES, ROWS

SCRIPT = "web.js"
"""The renderer's JavaScript, a file in this package; it registers itself under the game's name."""


def table(state: MatchState, seat: int | None) -> dict[str, Any]:
    """Return the table at this moment as JSON-ready data for :data:`SCRIPT`.

    With ``seat``, only what that seat sees (its view: its own hand, hand sizes, pile tops, totals); other
    hands are ``None``. With ``None``, from above: every hand, every pile's size and the set-aside cards.
    """
    public = state.view(0 if seat is None else seat).to_json()
    tops: list[str] = public["tops"]
    rows: list[dict[str, Any]] = [{"colour": colour.value, "left": tops[2 * i], "right": tops[2 * i + 1]}
                                  for i, colour in enumerate(ROWS)]
    hand_sizes: list[int] = public["hand_sizes"]
    data: dict[str, Any] = {
        "round": public["round"],
        "active": public["active"],
        "step": public["step"],
        "rows": rows,
        "throw_row": public["throw_row"],
        "previous_colour": public["previous_colour"],
        "hand_sizes": hand_sizes,
        "penalty_size": public["penalty_size"],
        "set_aside_size": public["set_aside_size"],
        "totals": public["totals"],
    }
    if seat is not None:
        data["hands"] = [public["hand"] if s == seat else None for s in range(len(hand_sizes))]
        data["set_aside"] = None
        return data
    zones = state.zones()
    data["hands"] = [[card.text for card in zones[f"hand {s}"]] for s in range(len(hand_sizes))]
    data["set_aside"] = [card.text for card in zones["set aside"]]
    for i, row in enumerate(rows):
        row["left_size"] = len(zones[PILE_NAMES[2 * i]])
        row["right_size"] = len(zones[PILE_NAMES[2 * i + 1]])
    return data
