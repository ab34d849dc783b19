"""Goofspiel in the browser: a match state as the table a person sees, and the script that draws it.

Pure like the rest of :mod:`arena.games`: no I/O. ``arena serve`` (:mod:`arena.web`) finds this module by the
game's name, calls :func:`table` for every frame of a replay, and serves :data:`SCRIPT` (a file beside this one)
to the page, which calls the renderer it registers.
"""

from __future__ import annotations

from typing import Any

from arena.games.base import MatchState
from arena.games.goofspiel.rules import BidsRevealed, RoundStarted

SCRIPT = "web.js"
"""The renderer's JavaScript, a file in this package; it registers itself under the game's name."""


def last_trick(state: MatchState) -> dict[str, Any] | None:
    """Return the last trick revealed in the current round (its number, bids by seat, winner and the value it
    won), from the public events; ``None`` before the round's first reveal."""
    for event in reversed(state.events):
        if isinstance(event, BidsRevealed):
            return {"trick": event.trick, "bids": [c.text for c in event.bids], "winner": event.winner,
                    "won": event.won}
        if isinstance(event, RoundStarted):
            return None
    return None


def table(state: MatchState, seat: int | None) -> dict[str, Any]:
    """Return the table at this moment as JSON-ready data for :data:`SCRIPT`.

    With ``seat``, only what that seat sees (its view: its own hand, the prize and the pot, the prizes to come
    as a set, every bid revealed, totals); the other hands are ``None``. With ``None``, from above: every hand,
    and the prize deck in its order.
    """
    public = state.view(0 if seat is None else seat).to_json()
    totals: list[int] = public["totals"]
    seats = len(totals)
    data: dict[str, Any] = {
        "round": public["round"],
        "trick": public["trick"],
        "prize": public["prize"],
        "pot": public["pot"],
        "to_come": public["to_come"],
        "hand_sizes": [len(public["hand"])] * seats,  # every seat bids one card a trick: the hands are one size
        "last": last_trick(state),
        "totals": totals,
        "prize_deck": None,
    }
    if seat is not None:
        data["hands"] = [public["hand"] if s == seat else None for s in range(seats)]
        return data
    zones = state.zones()
    data["hands"] = [[card.text for card in zones[f"hand {s}"]] for s in range(seats)]
    data["prize_deck"] = [card.text for card in zones["prize deck"]]
    return data
