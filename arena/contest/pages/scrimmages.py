"""An author's loop: scrimmages and their own data, by API (``arena submit``) and on their pages.

API, with the author's token (every answer JSON, never cached; ``docs/contest-api.md`` lists them with examples):

- ``POST /api/contest/scrimmages`` ``{"version", "against": [...], "matches"}``: ask for a scrimmage (201); a
  refusal is 400 with the reason, over the quota 429 with ``retry_at`` and ``Retry-After``.
- ``GET /api/contest/scrimmages``, ``GET /api/contest/scrimmages/ID``: theirs, one with its result and matches;
  ``GET /api/contest/scrimmages/ID/replay/N``: match N from their seats.
- ``GET /api/contest/matches?version=V&before=ID``: their ladder matches of complete deal sets, newest first, a page
  at a time; ``GET /api/contest/matches/ID/replay``: one from their seats.
- ``GET``/``POST /api/contest/settings``: whether others may choose their bots as scrimmage opponents, and how often
  their bots were chosen.

Pages, with their session: the scrimmage form and their scrimmages on ``/me`` (:func:`section`),
``/me/scrimmage/ID`` (the verdict, the score against each opponent, the faults, every match), and each match in
the replay viewer from their own seats only (``/me/scrimmage/ID/match/N``).
"""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena.contest import mine
from arena.contest.pages.api import api_error, with_token
from arena.contest.pages.common import (
    FORM_BYTES,
    Session,
    TooLarge,
    bounded_body,
    config,
    contest,
    escape,
    logged_in,
    not_found_page,
    page,
    reader,
    same,
    store,
    when,
)
from arena.contest.scrimmage import ScrimmageError
from arena.contest.service import SubmitError
from arena.contest.store import Author, Scrimmage, ScrimmageState
from arena.core import replay as replay_format
from arena.games.base import GameError
from arena.web.app import Site, page_html
from arena.web.replays import viewer_data

JSON_BYTES = 4096
"""The largest body of a scrimmage request or a setting (a few names and numbers)."""
VIEWER_HEADERS = {"Cache-Control": "no-store", "Content-Security-Policy":
                  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}
"""A private replay's page runs the viewer's script (the site's own); nothing else."""


def _json_body(raw: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------------------------------- api


async def api_ask(request: Request, author: Author) -> Response:
    try:
        body = _json_body(await bounded_body(request, JSON_BYTES))
    except TooLarge:
        return api_error(413, f"a scrimmage request is a few names; at most {JSON_BYTES} bytes")
    if body is None or not isinstance(body.get("version"), str) or not isinstance(body.get("against"), list) \
            or not all(isinstance(a, str) for a in body["against"]) \
            or not isinstance(body.get("matches", 0), int) or isinstance(body.get("matches"), bool):
        return api_error(400, 'send JSON {"version": "BOT:vN", "against": ["house:NAME", "AUTHOR:BOT"], '
                              '"matches": N}')
    service = contest(request).scrimmaging
    try:
        contest(request).check_open("scrimmages")  # none from the finals' deadline on
    except SubmitError as exc:
        return api_error(400, str(exc))
    try:
        made = service.request(author.name, body["version"], body["against"], body.get("matches") or None)
    except ScrimmageError as exc:
        if exc.retry_at is None:
            return api_error(400, str(exc))
        seconds = max(1, math.ceil(exc.retry_at - service.clock()))
        return JSONResponse({"error": str(exc), "retry_at": exc.retry_at}, status_code=429,
                            headers={"Cache-Control": "no-store", "Retry-After": str(seconds)})
    return JSONResponse({**mine.scrimmage_json(made), "url": f"/me/scrimmage/{made.id}"}, status_code=201)


async def api_scrimmages(request: Request, author: Author) -> Response:
    return JSONResponse({"scrimmages": [mine.scrimmage_json(s) for s in store(request).scrimmages.all(author.name)]},
                        headers={"Cache-Control": "no-store"})


async def api_scrimmage(request: Request, author: Author) -> Response:
    try:
        found = mine.own_scrimmage(store(request), author, str(request.path_params["id"]))
    except mine.Missing as exc:
        return api_error(404, str(exc))
    return JSONResponse(mine.scrimmage_json(found, with_result=True, store=store(request)),
                        headers={"Cache-Control": "no-store"})


async def api_scrimmage_replay(request: Request, author: Author) -> Response:
    try:
        replays = mine.scrimmage_replay(store(request), author, str(request.path_params["id"]),
                                        int(request.path_params["n"]))
    except mine.Missing as exc:
        return api_error(404, str(exc))
    return JSONResponse({"replays": replays}, headers={"Cache-Control": "no-store"})


async def api_matches(request: Request, author: Author) -> Response:
    version = request.query_params.get("version") or None
    before_text = request.query_params.get("before")
    if before_text is not None and not before_text.isdigit():
        return api_error(400, f"before is a match id, not {before_text!r}")
    try:
        page_json = mine.ladder_matches(reader(request), store(request), author, version,
                                        int(before_text) if before_text else None)
    except mine.Missing as exc:
        return api_error(404, str(exc))
    return JSONResponse(page_json, headers={"Cache-Control": "no-store"})


async def api_match_replay(request: Request, author: Author) -> Response:
    try:
        replays = mine.ladder_replay(reader(request), store(request), author, int(request.path_params["id"]))
    except mine.Missing as exc:
        return api_error(404, str(exc))
    return JSONResponse({"replays": replays}, headers={"Cache-Control": "no-store"})


def _settings(request: Request, author: Author) -> dict[str, Any]:
    contest_store = store(request)
    return {"author": author.name, "scrimmage_opponent": contest_store.authors.scrimmage_opponent(author.name),
            "chosen": mine.chosen(contest_store, author)}


async def api_settings(request: Request, author: Author) -> Response:
    return JSONResponse(_settings(request, author), headers={"Cache-Control": "no-store"})


async def api_set(request: Request, author: Author) -> Response:
    try:
        body = _json_body(await bounded_body(request, JSON_BYTES))
    except TooLarge:
        return api_error(413, f"a setting is at most {JSON_BYTES} bytes")
    if body is None or not isinstance(body.get("scrimmage_opponent"), bool):
        return api_error(400, 'send JSON {"scrimmage_opponent": true} or false')
    store(request).authors.set_scrimmage_opponent(author.name, body["scrimmage_opponent"])
    return JSONResponse(_settings(request, author), headers={"Cache-Control": "no-store"})


# ----------------------------------------------------------------------------------------------------- pages


def section(request: Request, author: Author, session: Session) -> str:
    """Return ``/me``'s part of scrimmages: the request form, the author's scrimmages, the opponent setting and
    how often their bots were chosen."""
    contest_store = store(request)
    rules = config(request).scrimmages
    if not rules.enabled:
        return ""
    versions = mine.versions(contest_store, author)
    csrf = f'<input type="hidden" name="csrf" value="{escape(session.csrf)}">'
    house = sorted(contest(request).scrimmaging.bots.house)
    others = sorted({s.ladder_name.rsplit(":", 1)[0] for s in contest_store.submissions.playing()
                     if s.author != author.name and contest_store.authors.scrimmage_opponent(s.author)})
    own = [f"{s.ladder_name}" for s in versions]
    boxes = "".join(f'<label class="inline"><input type="checkbox" name="against" value="{escape(value)}"> '
                    f"{escape(label)}</label> " for value, label in
                    [*((f"house:{h}", f"house: {h}") for h in house), *((o, o) for o in others),
                     *((o, f"yours: {o}") for o in own)])
    options = "".join(f'<option value="{escape(s.id)}">{escape(s.bot)} v{s.version}</option>' for s in versions)
    form = ('<p class="muted">No version of yours has passed its check yet.</p>' if not versions else
            f'<form method="post" action="/me/scrimmage" id="scrimmage-form">{csrf}'
            f'<label>Your version <select name="version">{options}</select></label> '
            f'<label>Matches <input name="count" type="number" min="1" max="{rules.max_matches}" '
            f'value="{rules.matches}"></label><div>Against: {boxes}</div><button>ask for a scrimmage</button></form>')
    rows = "".join(
        f'<tr><td class="left"><a href="/me/scrimmage/{escape(s.id)}">{escape(s.bot)}</a></td>'
        f'<td class="left">{escape(", ".join(s.opponents))}</td><td>{s.played} of {s.matches}</td>'
        f'<td class="left">{escape(s.state.value)}</td><td>{escape(when(s.created))}</td></tr>'
        for s in contest_store.scrimmages.all(author.name))
    table = (f'<table><thead><tr><th class="left">version</th><th class="left">against</th><th>matches</th>'
             f'<th class="left">state</th><th>asked</th></tr></thead><tbody>{rows}</tbody></table>' if rows else
             '<p class="muted">No scrimmages yet.</p>')
    allowed = contest_store.authors.scrimmage_opponent(author.name)
    chosen = mine.chosen(contest_store, author)
    chosen_text = "; ".join(f"{c['bot']}: {c['scrimmages']} scrimmages, {c['matches']} matches" for c in chosen) \
        or "never so far"
    setting = (f'<form method="post" action="/me/settings" class="inline">{csrf}'
               f'<input type="hidden" name="scrimmage_opponent" value="{"no" if allowed else "yes"}">'
               f'Other authors {"may" if allowed else "may not"} choose your bots as scrimmage opponents '
               f'<button>{"stop that" if allowed else "allow it"}</button></form>'
               f'<p class="muted">Your bots were chosen by others: {escape(chosen_text)}.</p>')
    return (f"<h2>Scrimmages</h2><p>Unrated matches of one of your checked versions against opponents you choose, on "
            f"deals of their own: the verdict, the replays from your seat and your bot's debug text are yours "
            f"alone. At most {rules.max_matches} matches a request, {rules.matches_per_hour} an hour, one at a "
            f"time.</p>{form}{table}{setting}")


def _form(raw: bytes) -> dict[str, list[str]]:
    try:
        return parse_qs(raw.decode("ascii"), max_num_fields=64, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return {}


async def ask(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    try:
        fields = _form(await bounded_body(request, FORM_BYTES))
    except TooLarge as exc:
        return page("No scrimmage", f'<p class="error">{escape(exc)}</p>', author=author, session=session, status=413)
    if not same((fields.get("csrf") or [""])[0], session.csrf):
        return page("No scrimmage", '<p class="error">the form is stale or not from this site: '
                    '<a href="/me">try again</a></p>', author=author, session=session, status=403)
    # "count", not "matches": a form field named "matches" would hide the form element's matches() method
    matches_text = (fields.get("count") or [""])[0]
    try:
        contest(request).check_open("scrimmages")  # none from the finals' deadline on
    except SubmitError as exc:
        return page("No scrimmage", f'<p class="error" id="refused">{escape(exc)}</p><p><a href="/me">Back</a></p>',
                    author=author, session=session, status=400)
    try:
        made = contest(request).scrimmaging.request(
            author.name, (fields.get("version") or [""])[0], fields.get("against") or [],
            int(matches_text) if matches_text.isdigit() else None)
    except ScrimmageError as exc:
        return page("No scrimmage", f'<p class="error" id="refused">{escape(exc)}</p><p><a href="/me">Back</a></p>',
                    author=author, session=session, status=429 if exc.retry_at is not None else 400)
    return RedirectResponse(f"/me/scrimmage/{made.id}", status_code=303)


async def set_opponent(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    try:
        fields = _form(await bounded_body(request, FORM_BYTES))
    except TooLarge:
        fields = {}
    if not same((fields.get("csrf") or [""])[0], session.csrf):
        return page("Not changed", '<p class="error">the form is stale: <a href="/me">back</a></p>', author=author,
                    session=session, status=403)
    store(request).authors.set_scrimmage_opponent(author.name, (fields.get("scrimmage_opponent") or [""])[0] == "yes")
    return RedirectResponse("/me", status_code=303)


def _own_scrimmage(request: Request) -> tuple[Author, Any, Scrimmage] | Response:
    """Return the logged-in author, their session and their scrimmage of the path's ``id``; or the answer for a
    visitor who is not logged in (to the login page) or a scrimmage not theirs (not found)."""
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    try:
        return author, session, mine.own_scrimmage(store(request), author, str(request.path_params["id"]))
    except mine.Missing as exc:
        return not_found_page(str(exc), author, session)


async def scrimmage_page(request: Request) -> Response:
    found = _own_scrimmage(request)
    if isinstance(found, Response):
        return found
    author, session, scrimmage = found
    data = mine.scrimmage_json(scrimmage, with_result=True, store=store(request))
    result = data["result"]
    live = scrimmage.state in (ScrimmageState.QUEUED, ScrimmageState.RUNNING)
    interval = (f", 95% interval {result['interval'][0]:.3f}-{result['interval'][1]:.3f}"
                if result["interval"] else "")
    mean = "" if result["mean"] is None else f"mean score {result['mean']:.3f}{interval}, "
    verdict = (f'<p><b id="verdict">{escape(result["verdict"])}</b> ({escape(mean)}{result["deal_sets"]} deal sets, '
               f'{result["matches"]} matches)</p>' if not live else
               f'<p class="muted" id="progress">{escape(scrimmage.state.value)}: {scrimmage.played} of '
               f'{scrimmage.matches} matches played. Reload the page to follow it.</p>')
    opponents = "".join(
        f'<tr><td class="left">{escape(o["bot"])}</td><td>{o["deal_sets"]}</td>'
        f'<td>{"" if o["mean"] is None else format(o["mean"], ".3f")}</td>'
        f'<td class="left">{escape(o["verdict"])}</td></tr>' for o in result["opponents"])
    faults = "".join(f"<li>match {f['match']}, step {f['step']}, {escape(f['bot'])}: {escape(f['kind'])}"
                     + (f": {escape(f['detail'])}" if "detail" in f else "") + "</li>" for f in result["faults"])
    games = "".join(
        f'<tr><td>{g["number"]}</td><td>{g["deal_set"]}</td><td>{g["rotation"]}</td>'
        f'<td class="left">{escape(", ".join(f"{b} ({p})" for b, p in zip(g["bots"], g["places"], strict=False)))}'
        "</td><td>" + " ".join(f'<a href="/me/scrimmage/{escape(scrimmage.id)}/match/{g["number"]}?seat={seat}">'
                               f"from seat {seat}</a>" for seat in g["seats"]) + "</td></tr>" for g in data["games"])
    reason = f'<p class="error" id="reason">{escape(scrimmage.reason)}</p>' if scrimmage.reason else ""
    body = (f"<p>{escape(scrimmage.bot)} against {escape(', '.join(scrimmage.opponents))}, asked "
            f"{escape(when(scrimmage.created))}: <b id=\"state\">{escape(scrimmage.state.value)}</b></p>{reason}"
            f"{verdict}<h2>Against each opponent</h2><table><thead><tr><th class=\"left\">opponent</th>"
            f"<th>deal sets</th><th>mean score</th><th class=\"left\">verdict</th></tr></thead><tbody>{opponents}"
            "</tbody></table>" + (f"<h2>Faults</h2><ul>{faults}</ul>" if faults else "")
            + f"<h2>Matches</h2><table id=\"games\"><thead><tr><th>match</th><th>deal set</th><th>rotation</th>"
            f"<th class=\"left\">seats (places)</th><th class=\"left\">replay</th></tr></thead><tbody>{games}"
            "</tbody></table>")
    return page(f"Scrimmage of {scrimmage.bot}", body, author=author, session=session)


def _private_match(request: Request) -> tuple[Author, Scrimmage, list[int], dict[str, Any]] | Response:
    found = _own_scrimmage(request)
    if isinstance(found, Response):
        return found
    author, session, scrimmage = found
    number = int(request.path_params["n"])
    match = next((m for m in store(request).scrimmages.matches(scrimmage.id) if m.number == number), None)
    blob = store(request).scrimmages.replay(scrimmage.id, number)
    if match is None or blob is None:
        return not_found_page(f"scrimmage {scrimmage.id} has no match {number}", author, session)
    seats = [seat for seat, bot in enumerate(match.bots) if bot == scrimmage.bot]
    return author, scrimmage, seats, replay_format.decompress(blob)


async def match_page(request: Request) -> Response:
    found = _private_match(request)
    if isinstance(found, Response):
        return found
    _, scrimmage, _, _ = found
    number = int(request.path_params["n"])
    site = Site(None, links=[("/", "Leaderboard"), ("/me", "My bots"), (f"/me/scrimmage/{scrimmage.id}", "Scrimmage")],
                uploads=False)
    html = page_html(f"Scrimmage match {number}", "match", site, source="private",
                     api=f"/me/scrimmage/{scrimmage.id}/match/{number}/data", heading=f"Scrimmage match {number}")
    return HTMLResponse(html, headers=VIEWER_HEADERS)


async def match_data(request: Request) -> Response:
    found = _private_match(request)
    if isinstance(found, Response):
        return JSONResponse({"error": "no such match of yours"}, status_code=404)
    _, _, seats, data = found
    asked = request.query_params.get("seat")
    seat = int(asked) if asked is not None and asked.isdigit() else seats[0]
    if seat not in seats:
        return JSONResponse({"error": f"seat {seat} is not yours in this match: only your seats are shown"},
                            status_code=403, headers={"Cache-Control": "no-store"})
    try:
        shown = viewer_data(data, seat, debug=True)  # their own seat's debug text
    except GameError as exc:
        return JSONResponse({"error": f"the replay does not re-run: {exc}"}, status_code=500)
    return JSONResponse({**shown, "match": None, "seats_allowed": seats}, headers={"Cache-Control": "no-store"})


routes: list[BaseRoute] = [
    Route("/api/contest/scrimmages", with_token(api_ask), methods=["POST"]),
    Route("/api/contest/scrimmages", with_token(api_scrimmages), methods=["GET"]),
    Route("/api/contest/scrimmages/{id}", with_token(api_scrimmage), methods=["GET"]),
    Route("/api/contest/scrimmages/{id}/replay/{n:int}", with_token(api_scrimmage_replay), methods=["GET"]),
    Route("/api/contest/matches", with_token(api_matches), methods=["GET"]),
    Route("/api/contest/matches/{id:int}/replay", with_token(api_match_replay), methods=["GET"]),
    Route("/api/contest/settings", with_token(api_settings), methods=["GET"]),
    Route("/api/contest/settings", with_token(api_set), methods=["POST"]),
    Route("/me/scrimmage", ask, methods=["POST"]),
    Route("/me/settings", set_opponent, methods=["POST"]),
    Route("/me/scrimmage/{id}", scrimmage_page, methods=["GET"]),
    Route("/me/scrimmage/{id}/match/{n:int}", match_page, methods=["GET"]),
    Route("/me/scrimmage/{id}/match/{n:int}/data", match_data, methods=["GET"]),
]
