"""An author's own data, as the contest's API and pages give it: their ladder matches, a match's replay from their
seats, their scrimmages with their results and replays. Every function is given the asking author and finds
nothing that is not theirs (an admin's: everyone's); what it cannot show is "not found", as one that does not
exist, so ids are not worth probing.

A ladder match is shown once its deal set is complete (its hands would tell the deals still to come), as the
public pages do; a replay is one seat's (:func:`arena.core.replay.seat_replay`): no seed, no other seat's hand,
decisions or debug text.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from arena.contest.scrimmage import VALIDATED, result, seats_of
from arena.contest.store import Author, ContestStore, Scrimmage, Submission
from arena.core import replay as replay_format
from arena.web.data import PAGE, NotFound, Reader, Withheld


class Missing(LookupError):
    """What the author asked for is not theirs, or does not exist (one answer for both)."""


def versions(store: ContestStore, author: Author, version: str | None = None) -> list[Submission]:
    """Return the author's versions that played in the ladder (playing or retired), newest first; with
    ``version`` (``BOT`` or ``BOT:vN`` or a submission id) only those it names. Raises :class:`Missing` when it
    names none."""
    played = [s for s in store.submissions.all(author.name) if s.state in VALIDATED]
    if version is None:
        return played
    bot, _, number = version.partition(":v")
    chosen = [s for s in played if s.id == version or (s.bot == bot and (not number or str(s.version) == number))]
    if not chosen:
        raise Missing(f"you have no version {version!r} that played")
    return chosen


def ladder_matches(reader: Reader, store: ContestStore, author: Author, version: str | None = None,
                   before: int | None = None) -> dict[str, Any]:
    """Return a page of the author's ladder matches, newest first, of complete deal sets only: each with its
    deal set, their seats, everyone's place and total, and their own faults with the reasons. ``next`` is the
    cursor of the following page. Raises :class:`Missing` for a version that is not theirs."""
    mine = versions(store, author, version)
    names = {s.ladder_name for s in mine}
    pages = []
    for submission in mine:
        try:
            pages.append(reader.matches(before, bot=submission.ladder_name)["matches"])
        except NotFound:  # a version that has played no match yet
            continue
    merged = list(heapq.merge(*pages, key=lambda m: -int(m["id"])))
    seen: set[int] = set()
    matches: list[dict[str, Any]] = []
    for match in merged:
        if int(match["id"]) in seen:
            continue
        seen.add(int(match["id"]))
        if len(matches) == PAGE:
            break
        if match["replay"]:
            matches.append(_ladder_match(reader, match, names))
    last = merged[-1]["id"] if len(merged) >= PAGE else None
    return {"matches": matches, "next": matches[-1]["id"] if matches and last is not None else None}


def _ladder_match(reader: Reader, match: dict[str, Any], names: set[str]) -> dict[str, Any]:
    seats = match["seats"]
    own = [s["seat"] for s in seats if s["bot"] in names]
    faults: list[dict[str, Any]] = []
    if any(s["faults"] for s in seats if s["seat"] in own):
        data = reader.replay(int(match["id"]))
        faults = [f for f in data.get("faults") or [] if f.get("seat") in own]
    return {"id": match["id"], "deal": match["deal"], "rotation": match["rotation"],
            "finished_at": match["finished_at"], "seats": own,
            "bots": [s["bot"] for s in seats], "places": [s["place"] for s in seats],
            "totals": [s["total"] for s in seats], "benched": [s["benched"] for s in seats], "faults": faults}


def ladder_replay(reader: Reader, store: ContestStore, author: Author, match_id: int) -> list[dict[str, Any]]:
    """Return the author's seats' replays of ladder match ``match_id`` (one seat's each). Raises :class:`Missing`
    for a match they did not play, or whose deal set is not complete yet."""
    names = {s.ladder_name for s in versions(store, author)}
    try:
        record = reader.match(match_id)
        data = reader.replay(match_id)
    except (NotFound, Withheld):
        raise Missing(f"no match {match_id} of yours (or its deal set is not complete yet)") from None
    seats = [s["seat"] for s in record["seats"] if s["bot"] in names]
    if not seats and not author.admin:
        raise Missing(f"no match {match_id} of yours (or its deal set is not complete yet)")
    return [replay_format.seat_replay(data, seat) for seat in (seats or range(len(data["names"])))]


DEBUG_SHOWN = 20
"""The debug texts a submission's page shows: the last ones of its newest match of a complete deal set."""


def last_debug(reader: Reader, submission: Submission) -> tuple[int | None, list[tuple[int, str]]]:
    """Return the newest ladder match of ``submission`` whose deal set is complete, and the last
    :data:`DEBUG_SHOWN` debug texts its bot wrote there, (step, text) each: its author's alone to see."""
    try:
        matches = reader.matches(bot=submission.ladder_name)["matches"]
    except NotFound:
        return None, []
    shown = next((m for m in matches if m["replay"]), None)
    if shown is None:
        return None, []
    data = reader.replay(int(shown["id"]))
    texts: list[tuple[int, str]] = []
    for seat in (s["seat"] for s in shown["seats"] if s["bot"] == submission.ladder_name):
        texts.extend(replay_format.debug_of(data, seat).items())
    return int(shown["id"]), sorted(texts)[-DEBUG_SHOWN:]


def own_scrimmage(store: ContestStore, author: Author, scrimmage_id: str) -> Scrimmage:
    """Return the author's scrimmage ``scrimmage_id`` (an admin: anyone's). Raises :class:`Missing`."""
    found = store.scrimmages.get(scrimmage_id) if len(scrimmage_id) <= 64 else None
    if found is None or (found.author != author.name and not author.admin):
        raise Missing("no such scrimmage of yours")
    return found


def scrimmage_json(scrimmage: Scrimmage, with_result: bool = False,
                   store: ContestStore | None = None) -> dict[str, Any]:
    """Return what the requester is told of a scrimmage; with its result and matches when ``with_result``."""
    out: dict[str, Any] = {
        "id": scrimmage.id, "version": scrimmage.bot, "opponents": list(scrimmage.opponents),
        "matches": scrimmage.matches, "played": scrimmage.played, "state": scrimmage.state.value,
        "reason": scrimmage.reason, "created": scrimmage.created, "started": scrimmage.started,
        "finished": scrimmage.finished}
    if with_result and store is not None:
        played = store.scrimmages.matches(scrimmage.id)
        out["result"] = result(scrimmage, played).to_json()
        out["games"] = [{"number": m.number, "deal_set": m.deal, "rotation": m.rotation, "bots": list(m.bots),
                         "seats": seats_of(m, scrimmage.bot), "places": list(m.places), "totals": list(m.totals)}
                        for m in played]
    return out


def scrimmage_replay(store: ContestStore, author: Author, scrimmage_id: str, number: int) -> list[dict[str, Any]]:
    """Return match ``number`` of the author's scrimmage from the requester's seats (one seat's replay each).
    Raises :class:`Missing`."""
    scrimmage = own_scrimmage(store, author, scrimmage_id)
    blob = store.scrimmages.replay(scrimmage.id, number)
    match = next((m for m in store.scrimmages.matches(scrimmage.id) if m.number == number), None)
    if blob is None or match is None:
        raise Missing(f"scrimmage {scrimmage.id} has no match {number}")
    data = replay_format.decompress(blob)
    return [replay_format.seat_replay(data, seat) for seat in seats_of(match, scrimmage.bot)]


def chosen(store: ContestStore, author: Author) -> list[dict[str, Any]]:
    """Return how often each of the author's bots was chosen as a scrimmage opponent: all they are told of
    others' scrimmages."""
    names = [s.ladder_name for s in store.submissions.all(author.name)]
    counted = store.scrimmages.chosen(names)
    return [{"bot": name, "scrimmages": times, "matches": played} for name, (times, played) in sorted(counted.items())]


def submission_names(submissions: Sequence[Submission]) -> list[str]:
    """Return the versions' names as an author writes them (``BOT:vN``)."""
    return [f"{s.bot}:v{s.version}" for s in submissions]
