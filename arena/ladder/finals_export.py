"""The export of a contest's finals, and its verification from the export alone (``arena finals verify EXPORT``).

When the finals end, the contest publishes their secret seed and this export: one JSON object (gzip-compressed
in a file) holding the finals' public record and every match whole::

    {"format": "arena-finals/1",
     "record": {...},     # the rules (game, options, seats, top, test, cut, budget), the finalists, the commitment
     "outcome": {...},    # the seed, why they stopped, the bots that no longer started, the final board
     "cuts": [...],       # each cut: the deal sets it looked at, the first set without its bots, the bots out
     "deals": [{"deal": 0, "seed": ..., "bots": [...]}, ...],
     "matches": [{"id": 1, "deal": 0, "rotation": 0, "replay": {...}}, ...]}   # every seat's view now public

:func:`verify` checks, with nothing but arena's own code, in this order:

1. the seed hashes to the commitment published when the finals started (:func:`arena.ladder.finals.commitment`);
2. every deal set's seed is the keyed hash of its number under that seed (:func:`arena.ladder.ladder.deal_seed`);
3. every match, in the order of deal sets and rotations: its replay is of the finals' game, options and seed
   for its deal set, seats the deal set's bots in its rotation, re-runs (every decision legal) to the events
   and the result stored with it. The first match that does not is named;
4. every deal set has each of its rotations exactly once (a removed match is named by its deal set and rotation);
5. every cut is the one the rule gives on the deal sets it looked at, one cut per checkpoint, and no bot cut
   plays a deal set planned after its cut;
6. the board recomputed from the re-run results is the published one: the order, every bot's estimate,
   interval and rank range, the verdict on every top pair, and why the finals stopped.

The bots' debug text and a fault's detail (each author's own: they may quote the bot) are left out of the export:
re-running needs neither (a fault's kind, seat and step stay).
"""

from __future__ import annotations

import gzip
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.core import replay as replay_format
from arena.games.base import GameError
from arena.ladder.estimate import Evidence, SequentialTest
from arena.ladder.finals import Cut, CutRecord, commitment, cut_board, cut_out, final_board
from arena.ladder.ladder import deal_seed
from arena.ladder.ratings import Outcome
from arena.ladder.readmodel import ReadModel
from arena.ladder.store import Store

FORMAT = "arena-finals/1"
MAX_EXPORT_BYTES = 4 << 30
"""The most an export may hold once decompressed (a finals of 100,000 matches holds far less): a file that is a
gzip bomb is refused before it fills the memory of whoever verifies it."""

TOLERANCE = 0.01
"""How far a recomputed estimate or interval may lie from the published one (they are published rounded to 3
places; the bootstrap is seeded by the matches, so the same matches give the same figures on any machine up to
floating point)."""


class ExportError(ValueError):
    """An export that cannot be made (finals not over) or read (not a file of this format)."""


def build(store: Store) -> dict[str, Any]:
    """Return the export of the finished finals ladder in ``store``. Raises :class:`ExportError` while they run
    (their seed is secret until their last match is stored)."""
    record = store.finals("finals")
    outcome = store.finals("finals_outcome")
    if record is None:
        raise ExportError(f"{str(store.path)!r} holds no finals")
    if outcome is None:
        raise ExportError("the finals are not over: their seed stays secret, and there is no export, until their "
                          "last match is stored")
    reads = ReadModel(store)
    rows = sorted(reads.matches(None, store.match_count() + 1), key=lambda m: (m.deal, m.rotation))
    matches = [{"id": m.id, "deal": m.deal, "rotation": m.rotation, "replay": public_replay(store.replay(m.id))}
               for m in rows]
    deals = [{"deal": d.deal, "seed": d.seed, "bots": list(d.bots)} for d in store.deals()]
    return {"format": FORMAT, "record": record, "outcome": outcome, "cuts": store.cuts(), "deals": deals,
            "matches": matches}


def public_replay(data: Mapping[str, Any]) -> dict[str, Any]:
    """Return a replay as the export publishes it: whole, but without the bots' debug text and each fault's detail
    (each author's own: they may quote the bot)."""
    faults = [{**f, "detail": ""} if isinstance(f, dict) else f for f in data.get("faults") or []]
    return {**{key: value for key, value in data.items() if key != "debug"}, "faults": faults}


def write(path: Path, data: Mapping[str, Any]) -> None:
    """Write an export to ``path``: gzip-compressed JSON when the name ends in ``.gz``, else plain JSON; written
    whole, then renamed into place. Raises :class:`OSError`."""
    text = json.dumps(data, separators=(",", ":")).encode()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(text, 6, mtime=0) if path.name.endswith(".gz") else text)
    tmp.replace(path)


def read(path: Path) -> dict[str, Any]:
    """Return the export in the file at ``path`` (gzip-compressed or plain JSON). Raises :class:`ExportError`."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ExportError(f"the export {str(path)!r} does not exist") from None
    except OSError as exc:
        raise ExportError(f"cannot read the export {str(path)!r}: {exc.strerror or exc}") from None
    try:
        if raw[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unpacked:
                raw = unpacked.read(MAX_EXPORT_BYTES + 1)
        data = None if len(raw) > MAX_EXPORT_BYTES else json.loads(raw)
    except (OSError, EOFError, ValueError, RecursionError) as exc:
        raise ExportError(f"{str(path)!r} is not a finals export: {exc}") from None
    if data is None:
        raise ExportError(f"{str(path)!r} holds more than {MAX_EXPORT_BYTES >> 30} GiB: not a finals export")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{str(path)!r} is not a finals export (its format is not {FORMAT!r})")
    return data


@dataclass
class Verification:
    """What :func:`verify` found: a line per check passed, and the problems (none: the export holds up)."""

    passed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    first_match: str | None = None
    """The first match that does not re-run (or is not the finals' deal), as a person names it."""

    @property
    def ok(self) -> bool:
        return not self.problems


class _Bad(Exception):
    """One check that fails; its message says what and where."""


def verify(data: Mapping[str, Any]) -> Verification:
    """Check a finals export from nothing but itself (see the module's docstring); return what was found.

    An export altered anywhere is found out, never a crash: a field of the wrong shape the checks trip over ends
    them with the problem named (an export is what anyone may have edited)."""
    found = Verification()
    try:
        _verify(data, found)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError, RecursionError) as exc:
        found.problems.append(f"not a finals export: a field of the wrong shape ({type(exc).__name__}: {exc})")
    return found


def _verify(data: Mapping[str, Any], found: Verification) -> Verification:
    try:
        record, outcome = dict(data["record"]), dict(data["outcome"])
        seed = int(str(outcome["seed"]))
        seats = int(record["seats"])
        test = SequentialTest(**{k: record["test"][k] for k in ("zone", "alpha", "beta", "min_deals")})
        top = int(record["top"])
        cut = Cut.from_json(record["cut"]) if record.get("cut") else None
        finalists = [str(f["bot"]) for f in record["finalists"]]
        deals = {int(d["deal"]): d for d in data["deals"]}
        matches = list(data["matches"])
        cuts = [CutRecord.from_json(c) for c in data.get("cuts") or []]
        not_started = {str(b["bot"]) for b in outcome.get("not_started") or []}
    except (KeyError, TypeError, ValueError) as exc:
        found.problems.append(f"not a finals export: missing or bad field {exc}")
        return found

    # 1. the seed
    if commitment(seed) != record.get("commitment"):
        found.problems.append(f"the published seed does not hash to the commitment published at the start "
                              f"({commitment(seed)} is not {record.get('commitment')!r})")
        return found
    found.passed.append(f"the seed hashes to the commitment {record['commitment']}")

    # 2. the deal sets
    if sorted(deals) != list(range(len(deals))):
        missing = sorted(set(range(max(deals, default=-1) + 1)) - set(deals))
        found.problems.append(f"deal sets are missing from the export: {missing[:5]}")
    for number in sorted(deals):
        if int(deals[number]["seed"]) != deal_seed(seed, number):
            found.problems.append(f"deal set {number}: its seed {deals[number]['seed']} is not the one the finals' "
                                  f"seed gives ({deal_seed(seed, number)})")
    if found.problems:
        return found
    found.passed.append(f"the seeds of all {len(deals)} deal sets follow from the seed")

    # 3. every match re-runs to its stored result
    outcomes: list[Outcome] = []
    played: dict[int, list[int]] = {}
    for match in sorted(matches, key=lambda m: (int(m.get("deal", -1)), int(m.get("rotation", -1)))):
        try:
            outcomes.append(_rerun(match, record, deals, seats, set(finalists)))
        except _Bad as exc:
            found.first_match = (f"match {match.get('id')} (deal set {match.get('deal')}, rotation "
                                 f"{match.get('rotation')})")
            found.problems.append(f"{found.first_match} does not re-run: {exc}")
            return found
        played.setdefault(int(match["deal"]), []).append(int(match["rotation"]))
    found.passed.append(f"all {len(matches)} matches re-run to their stored events and results")

    # 4. no match left out, none twice
    for number in sorted(deals):
        rotations = sorted(played.get(number, []))
        if rotations != list(range(seats)):
            lacking = sorted(set(range(seats)) - set(rotations))
            twice = sorted({r for r in rotations if rotations.count(r) > 1})
            what = (f"lacks rotation {lacking[0]} (a match left out of the export)" if lacking
                    else f"has rotation {twice[0]} twice")
            found.problems.append(f"deal set {number} {what}")
            return found
    try:
        _seating_changes(deals, matches, seats, not_started)
    except _Bad as exc:
        found.problems.append(str(exc))
        return found
    found.passed.append(f"every deal set is played whole: {len(deals)} sets of {seats} rotations")

    # 5. the cuts
    out: set[str] = set()
    if cut is not None:
        try:
            out = _check_cuts(cuts, cut, outcomes, len(deals), deals, finalists, not_started, seats, top, test)
        except _Bad as exc:
            found.problems.append(str(exc))
            return found
        found.passed.append(f"the {len(cuts)} cuts follow the rule (every {cut.every} deal sets, margin "
                            f"{cut.margin}): {len(out)} bots left the finals by them")
    elif cuts:
        found.problems.append("the finals had no cut in their rules, but the export records cuts")
        return found

    # 6. the board
    active = [b for b in finalists if b not in out and b not in not_started]
    try:
        _check_board(outcome, Evidence.of(outcomes), active, test, top)
    except _Bad as exc:
        found.problems.append(str(exc))
        return found
    board = outcome["board"]
    verdict = "every top pair decided" if board["decided"] else f"{len(board['undecided'])} top pairs undecided"
    found.passed.append(f"the published board is the one the matches give: {', '.join(board['order'][:top + 1])} "
                        f"... ({verdict}; stopped by {outcome['stopped']})")
    return found


def _rerun(match: Mapping[str, Any], record: Mapping[str, Any], deals: Mapping[int, Mapping[str, Any]], seats: int,
           finalists: set[str]) -> Outcome:
    """Re-run one exported match; return its outcome as the board counts it. Raises :class:`_Bad`."""
    try:
        deal, rotation, data = int(match["deal"]), int(match["rotation"]), dict(match["replay"])
    except (KeyError, TypeError, ValueError) as exc:
        raise _Bad(f"missing or bad field {exc}") from None
    if deal not in deals:
        raise _Bad(f"deal set {deal} is not in the export")
    if not 0 <= rotation < seats:
        raise _Bad(f"rotation {rotation} of a {seats}-seat table")
    if data.get("game") != record["game"] or (data.get("options") or {}) != record["options"]:
        raise _Bad(f"it is {data.get('game')!r} with options {data.get('options')}, the finals "
                   f"{record['game']!r} with {record['options']}")
    if data.get("seed") != deals[deal]["seed"]:
        raise _Bad(f"its seed {data.get('seed')} is not its deal set's ({deals[deal]['seed']}): not the finals' deal")
    names = [str(n) for n in data.get("names") or []]
    if len(names) != seats or not set(names) <= finalists:
        raise _Bad(f"its seats {names} are not {seats} finalists")
    try:
        state, events = replay_format.rerun(data)
    except GameError as exc:
        raise _Bad(str(exc)) from None
    if data.get("events") is not None and [e.to_json() for e in events] != data["events"]:
        raise _Bad("its re-run events differ from the stored ones")
    result = state.result
    stored = data.get("result") or {}
    assert result is not None  # rerun() raises for a match that does not end
    if list(result.totals) != stored.get("totals") or list(result.places) != stored.get("places"):
        raise _Bad(f"its result differs: re-run totals {list(result.totals)} places {list(result.places)}, stored "
                   f"totals {stored.get('totals')} places {stored.get('places')}")
    benched = {int(s) for s in data.get("benched") or []}
    return Outcome(deal, rotation, tuple(names), _rated_places(result.places, benched))


def _rated_places(places: Sequence[int], benched: set[int]) -> tuple[int | None, ...]:
    """Return the places a board counts: as :meth:`arena.core.referee.MatchRecord.ranking_places` (benched seats
    last) with ``None`` for a benched seat."""
    ok = [s for s in range(len(places)) if s not in benched]
    return tuple(None if s in benched else 1 + sum(1 for o in ok if places[o] < places[s]) for s in range(len(places)))


def _seating_changes(deals: Mapping[int, Mapping[str, Any]], matches: Iterable[Mapping[str, Any]], seats: int,
                     not_started: set[str]) -> None:
    """Check that each match seats its deal set's bots in its rotation (rotation r moves every bot r seats on); a
    position of a set may hold another bot only where the finals report that bot as no longer starting (another
    took its place). Raises :class:`_Bad`."""
    for match in sorted(matches, key=lambda m: (int(m["deal"]), int(m["rotation"]))):
        names = [str(n) for n in match["replay"]["names"]]
        rotation, number = int(match["rotation"]), int(match["deal"])
        final = [str(b) for b in deals[number]["bots"]]
        for position in range(seats):
            seated = names[(position + rotation) % seats]
            if seated != final[position] and seated not in not_started:
                raise _Bad(f"match {match.get('id')} (deal set {number}, rotation {rotation}) seats {seated!r} where "
                           f"its deal set has {final[position]!r}, and {seated!r} is not reported as a finalist "
                           "that no longer started")


def _check_cuts(cuts: Sequence[CutRecord], cut: Cut, outcomes: Sequence[Outcome], total: int,
                deals: Mapping[int, Mapping[str, Any]], finalists: Sequence[str], not_started: set[str], seats: int,
                top: int, test: SequentialTest) -> set[str]:
    """Check every cut against the rule; return the bots cut. Raises :class:`_Bad`."""
    due = total // cut.every
    if len(cuts) != due:
        raise _Bad(f"{total} deal sets make {due} cuts (one every {cut.every}); the export records {len(cuts)}")
    out: set[str] = set()
    for number, record in enumerate(cuts, start=1):
        after = number * cut.every
        if record.after != after:
            raise _Bad(f"cut {number} looked at {record.after} deal sets, not {after}")
        active = [b for b in finalists if b not in out and b not in not_started]
        board, played = cut_board(outcomes, after, test)
        expected = [row.bot for row in cut_out(board, played, active, top, cut.margin, max(seats, top + 1),
                                               test.min_deals)]
        recorded = [o.bot for o in record.out]
        if sorted(expected) != sorted(recorded):
            raise _Bad(f"the cut after {after} deal sets took out {recorded or 'nobody'}; the rule gives "
                       f"{expected or 'nobody'}")
        rows = {row.bot: row for row in board.bots}
        for o in record.out:
            row = rows[o.bot]
            if (o.rank_low, o.rank_high) != (row.rank_low, row.rank_high) or not math.isclose(
                    o.strength, row.strength, abs_tol=TOLERANCE):
                raise _Bad(f"the cut after {after} deal sets records {o.bot!r} at ranks {o.rank_low}-{o.rank_high}, "
                           f"the matches give {row.rank_low}-{row.rank_high}")
        later = [d for d in deals if d >= record.start and set(record_bots(deals[d])) & set(recorded)]
        if later:
            raise _Bad(f"deal set {min(later)} seats a bot the cut after {after} deal sets took out")
        out |= set(recorded)
    return out


def record_bots(deal: Mapping[str, Any]) -> list[str]:
    return [str(b) for b in deal["bots"]]


def _check_board(outcome: Mapping[str, Any], evidence: Evidence, active: Sequence[str], test: SequentialTest,
                 top: int) -> None:
    """Check the published board against the one the re-run matches give. Raises :class:`_Bad`."""
    board = final_board(evidence, active, test, top)
    published = outcome["board"]
    mine = board.to_json()
    if published.get("order") != mine["order"]:
        raise _Bad(f"the published order {published.get('order')} is not the one the matches give {mine['order']}")
    if published.get("top_pairs") != mine["top_pairs"]:
        raise _Bad(f"the published verdicts on the top pairs {published.get('top_pairs')} are not the sequential "
                   f"test's on the matches {mine['top_pairs']}")
    rows = {row["bot"]: row for row in published.get("bots") or []}
    for row in mine["bots"]:
        theirs = rows.get(row["bot"])
        if theirs is None:
            raise _Bad(f"the published board lacks {row['bot']!r}")
        close = all(math.isclose(float(theirs[k]), float(row[k]), abs_tol=TOLERANCE)
                    for k in ("estimate", "low", "high"))
        if theirs["ranks"] != row["ranks"] or theirs["matches"] != row["matches"] or not close:
            raise _Bad(f"the published line of {row['bot']!r} ({theirs}) is not the one the matches give ({row})")
    if len(rows) != len(mine["bots"]):
        raise _Bad("the published board names bots that played no finals match")
    stopped = outcome.get("stopped")
    if stopped == "decided" and not board.decided:
        raise _Bad(f"the finals say they stopped with the top pairs decided, but {board.undecided} are not")
    if bool(published.get("decided")) != board.decided or published.get("undecided") != mine["undecided"]:
        raise _Bad(f"the published undecided pairs {published.get('undecided')} are not {mine['undecided']}")
