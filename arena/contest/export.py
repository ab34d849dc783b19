"""A contest's matches as files, for its operator: every complete deal set's results and replays.

``arena contest export --to DIR`` writes (docs/contest-api.md, "The operator's export", has the format)::

    DIR/results.jsonl      one JSON object a line, a match each, in the order played (by match id):
                           {"match": 17, "deal": 5, "rotation": 2, "bots": [...], "totals": [...],
                            "places": [...], "benched": [...], "faults": [{"seat", "step", "kind", "detail"}]}
    DIR/replays/17.json    the whole replay of match 17, which `arena replay DIR/replays/17.json` re-runs and
                           verifies (its seed included: the deal sets written are complete, and with keyed deal
                           seeds one deal tells nothing of another)

A deal set whose rotations are not all played yet is left out (its hands would tell the deals still to come), as
the public pages do. The bots' debug text, each author's own, is never written. The export reads the ladder's
database only, so it runs beside a running contest; files are written whole, then renamed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from arena.core import replay as replay_format
from arena.ladder.readmodel import ReadModel
from arena.ladder.store import Store

PAGE = 500


@dataclass(frozen=True, slots=True)
class Exported:
    """What an export wrote: its matches and the deal sets left out because they are not complete."""

    matches: int
    deal_sets: int
    incomplete: int


def strip_debug(data: dict[str, object]) -> dict[str, object]:
    """Return a replay without the bots' debug text (each author's own)."""
    return {key: value for key, value in data.items() if key != "debug"}


def export_ladder(store: Store, dest: Path) -> Exported:
    """Write every match of a complete deal set of the ladder in ``store`` under ``dest`` (see the module's
    docstring); return what was written. Raises :class:`OSError` when ``dest`` cannot be written and
    :class:`arena.ladder.store.StoreError` for a database that cannot be read."""
    identity = store.identity()
    seats = identity.seats if identity is not None else 0
    read = ReadModel(store)
    rows = []
    before: int | None = None
    while page := read.matches(before, PAGE):
        rows.extend(page)
        before = page[-1].id
    rows.sort(key=lambda row: row.id)
    # complete by the rows read, not by another query: a rotation stored since would make a set look complete
    # whose last match this export has not read
    played: dict[int, int] = {}
    for row in rows:
        played[row.deal] = played.get(row.deal, 0) + 1
    complete = {deal for deal, count in played.items() if count >= seats}
    names = read.bot_names()
    seats_by_match: dict[int, list[tuple[int, str, int, int, bool]]] = {}
    shown = [row for row in rows if row.deal in complete]
    for start in range(0, len(shown), PAGE):
        for seat in read.seats_of(row.id for row in shown[start:start + PAGE]):
            seats_by_match.setdefault(seat.match_id, []).append(
                (seat.seat, names.get(seat.bot_id, "?"), seat.total, seat.place, seat.benched))
    (dest / "replays").mkdir(parents=True, exist_ok=True)
    lines = []
    for row in shown:
        data = strip_debug(store.replay(row.id))
        replay_format.write(dest / "replays" / f"{row.id}.json", data)
        by_seat = sorted(seats_by_match.get(row.id, []))
        lines.append(json.dumps({
            "match": row.id, "deal": row.deal, "rotation": row.rotation,
            "bots": [bot for _, bot, _, _, _ in by_seat], "totals": [total for _, _, total, _, _ in by_seat],
            "places": [place for _, _, _, place, _ in by_seat], "benched": [b for _, _, _, _, b in by_seat],
            "faults": data.get("faults") or []}, separators=(",", ":")))
    temporary = dest / "results.jsonl.tmp"
    temporary.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(temporary, dest / "results.jsonl")
    return Exported(len(shown), len(complete), len({row.deal for row in rows} - complete))
