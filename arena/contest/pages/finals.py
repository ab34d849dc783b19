"""The finals' pages and API (issue 34, docs/finals.md): public, but for an author's finalist mark.

- ``GET /finals``: the phase and how far it is, the rules, the commitment to the secret seed once the finals
  started, the finalists (and who was left out, and why), the cuts, the live order of the top places with the
  verdict on each top pair; at the end the seed, the final board with intervals, why they stopped, and the export
  with the command that verifies it. A logged-in author also sees their finalist and may mark another of their
  validated versions until the deadline (``POST /finals/mark``, with the session's CSRF token).
- ``GET /api/finals``: the same as JSON, never the seed before the end; ``GET /api/finals/export``: the export
  (gzip-compressed JSON) once the finals are over, 404 with the reason before.
- ``POST /api/contest/finalist`` ``{"submission": ID}``, with the author's token: mark their finalist
  (``arena submit --finalist ID``); refused after the deadline with the reason and the time.

:class:`Notice` puts the line about the contest's end (:meth:`arena.contest.finals.Finals.notice`) on every
contest page.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.contest.finals import Finals, Phase
from arena.contest.pages.api import api_error, with_token
from arena.contest.pages.common import (
    FINALS,
    FORM_BYTES,
    TooLarge,
    bounded_body,
    config,
    contest,
    escape,
    form_of,
    logged_in,
    page,
    same,
    store,
    when,
)
from arena.contest.service import SubmitError
from arena.contest.store import VALIDATED, Author
from arena.ladder.estimate import Evidence, SequentialTest, Verdict
from arena.ladder.finals import active_order, top_pairs
from arena.ladder.store import Store, StoreError

JSON_BYTES = 1024
"""The largest body of a finalist mark (one submission id)."""

VERDICTS = {Verdict.FIRST.value: "decided", Verdict.SECOND.value: "decided the other way",
            Verdict.EQUAL.value: "equal within the zone", Verdict.OPEN.value: "open"}


class Notice:
    """Makes every contest page of a request show the line about the contest's end (:data:`common.FINALS`), from
    the finals of the application's contest (``app.state.contest``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        finals: Finals | None = getattr(scope["app"].state.contest, "finals", None) if "app" in scope else None
        token = FINALS.set(finals)
        try:
            await self.app(scope, receive, send)
        finally:
            FINALS.reset(token)


def live_order(finals: Finals) -> dict[str, Any] | None:
    """Return the finals' current order of the finalists still in (by the batch fit over their matches so far) and
    the sequential test's verdict on each top pair; ``None`` before they start."""
    rules, path = finals.rules, finals.config.finals_db
    if rules is None or finals.phase is not Phase.FINALS or not path.is_file():
        return None
    try:
        with contextlib.closing(Store(path, readonly=True)) as held:
            record = held.finals("finals") or {}
            cut = {o["bot"] for c in held.cuts() for o in c["out"]}
            gone = set((held.finals("finals_not_started") or {}).keys())
            evidence = Evidence.of(held.results())
    except StoreError:
        return None
    active = [f["bot"] for f in record.get("finalists", []) if f["bot"] not in cut | gone]
    order = active_order(evidence, active)
    test: SequentialTest = rules.test
    pairs = [{"first": a, "second": b, "verdict": test.verdict(evidence.paired(a, b)).value}
             for a, b in top_pairs(order, rules.top)]
    return {"order": order, "top_pairs": pairs}


def status(finals: Finals) -> dict[str, Any]:
    """Return what the finals page and ``/api/finals`` show."""
    found = finals.status()
    if found.get("phase") is None:
        return found
    live = live_order(finals)
    if live is not None:
        found["live"] = live
    if "outcome" in found:
        found["export"] = "/api/finals/export"
    return found


def _table(head: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return '<p class="muted">None.</p>'
    cells = "".join("<tr>" + "".join(f'<td class="left">{cell}</td>' for cell in row) + "</tr>" for row in rows)
    return (f"<table><thead><tr>{''.join(f'<th class=left>{escape(h)}</th>' for h in head)}</tr></thead>"
            f"<tbody>{cells}</tbody></table>")


def _pairs(pairs: list[dict[str, str]]) -> str:
    rows = [[str(place), escape(p["first"]), escape(p["second"]), escape(VERDICTS.get(p["verdict"], p["verdict"]))]
            for place, p in enumerate(pairs, start=1)]
    return _table(["places", "above", "below", "the sequential test"], rows)


def finals_html(found: dict[str, Any]) -> str:
    """Return the body of the finals page for the status ``found`` (every value escaped)."""
    if found.get("phase") is None:
        return '<p class="muted">This contest has no finals.</p>'
    budget = " or ".join(f"{v:g} {k}" for k, v in found["budget"].items() if v is not None)
    cut = found.get("cut")
    top = "the first place" if found["top"] == 1 else f"the top {found['top']} places"
    rules = (f"<p>The finals decide {top}: they stop when the sequential test has decided "
             f"every neighbour pair of places 1 to {found['top'] + 1}, or when {escape(budget)} are spent (whole deal "
             "sets), and then say which pairs are undecided rather than claim an order."
             + (f" After every {cut['every']} deal sets the finalists whose whole rank range lies below place "
                f"{found['top'] + cut['margin']} leave." if cut else "") + "</p>")
    closed = found.get("closed_at")
    when_text = (f"Submissions closed at {escape(when(closed))}." if closed is not None else
                 f"Submissions close at {escape(when(found['deadline']))}." if found.get("deadline") is not None else
                 "Submissions close when the operator starts the finals.")
    body = (f'<p id="phase">Phase: <b>{escape(found["phase"])}</b>. {when_text} '
            f'<span id="progress">{escape(found["progress"])}</span></p>{rules}')
    if found.get("problem"):
        body += f'<p class="error" id="problem">{escape(found["problem"])}</p>'
    if found.get("commitment"):
        body += ("<h2>The commitment</h2><p>The SHA-256 of <code>arena-finals/SEED</code>, published before the first "
                 f'match: <code id="commitment">{escape(found["commitment"])}</code>. The seed, from which every deal '
                 "of the finals follows, is published at their end.</p>")
    outcome = found.get("outcome")
    if outcome is not None:
        board = outcome["board"]
        body += (f'<h2>The result</h2><p>The finals stopped <b id="stopped">{escape(outcome["stopped"])}</b> after '
                 f'{outcome["matches"]} matches in {outcome["deal_sets"]} deal sets. Their seed: '
                 f'<code id="seed">{escape(outcome["seed"])}</code>.</p>' + _pairs(board["top_pairs"]))
        if board["undecided"]:
            body += ("<p>Undecided: " + "; ".join(escape(f"{a} against {b}") for a, b in board["undecided"])
                     + ": their order is not claimed.</p>")
        rows = [[str(i), escape(b["bot"]), f"{b['estimate']:.2f}", f"{b['low']:.2f} .. {b['high']:.2f}",
                 escape("-".join(map(str, b["ranks"])) if b["ranks"][0] != b["ranks"][1] else str(b["ranks"][0])),
                 str(b["matches"])] for i, b in enumerate(board["bots"], start=1)]
        body += "<h3>The board</h3>" + _table(["", "bot", "estimate", "95% interval", "ranks", "matches"], rows)
        body += ('<h3>Verify it</h3><p>Download <a href="/api/finals/export" id="export">the export</a> (every match '
                 "of the finals, every seat's view) and run <code>arena finals verify finals-export.json.gz</code>: it "
                 "checks the seed against the commitment, re-runs every match and recomputes the board.</p>")
    elif found.get("live"):
        live = found["live"]
        body += (f'<h2>So far</h2><p>{found.get("matches", 0)} matches. The order of the finalists still in, by the '
                 f"fit over their matches so far: {escape(', '.join(live['order']))}.</p>" + _pairs(live["top_pairs"]))
    if found.get("finalists"):
        rows = [[escape(f["bot"]), escape(f["author"] or "house"), escape(f["chosen"])] for f in found["finalists"]]
        body += "<h2>Finalists</h2>" + _table(["bot", "author", "chosen"], rows)
    left = [[escape(x.get("author") or x.get("bot", "")), escape(x["reason"])]
            for x in [*found.get("left_out", []), *found.get("not_started", [])]]
    if left:
        body += "<h3>Left out</h3>" + _table(["who", "why"], left)
    cuts = [[str(c["after"]), escape(", ".join(f"{o['bot']} (ranks {o['ranks'][0]}-{o['ranks'][1]})"
                                              for o in c["out"]))]
            for c in found.get("cuts", []) if c["out"]]
    if cuts:
        body += "<h3>Cuts</h3>" + _table(["after deal sets", "left the finals"], cuts)
    return body


def _mark_form(request: Request, author: Author, csrf: str) -> str:
    """Return an author's finalist and the form to mark another (while the submissions are open)."""
    finals = contest(request).finals
    if finals.rules is None:
        return ""
    mine = [s for s in store(request).submissions.all(author.name) if s.state in VALIDATED]
    marked = store(request).finalists.marks().get(author.name)
    chosen = next((s for s in mine if s.id == marked), mine[0] if mine else None)
    said = ("none yet: submit a bot that passes its check" if chosen is None else
            f"{chosen.ladder_name} ({'marked by you' if chosen.id == marked else 'your latest validated version'})")
    body = f'<h2>Your finalist</h2><p id="finalist">{escape(said)}</p>'
    if finals.closed_at() is None and mine:
        options = "".join(f'<option value="{escape(s.id)}">{escape(s.ladder_name)}</option>' for s in mine)
        body += (f'<form method="post" action="/finals/mark"><input type="hidden" name="csrf" value="{escape(csrf)}">'
                 f'<select name="submission">{options}</select> <button>mark as my finalist</button></form>')
    return body


async def finals_page(request: Request) -> Response:
    found = logged_in(request)
    author, session = (found[2], found[1]) if found is not None else (None, None)
    body = finals_html(status(contest(request).finals))
    if author is not None and session is not None:
        body = _mark_form(request, author, session.csrf) + body
    return page("Finals", body, author=author, session=session)


async def mark_page(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    try:
        fields = form_of(await bounded_body(request, FORM_BYTES))
    except TooLarge as exc:
        return page("Not marked", f'<p class="error">{escape(exc)}</p>', author=author, session=session, status=413)
    if not same(fields.get("csrf"), session.csrf):
        return page("Not marked", '<p class="error">the form is stale or not from this site: <a href="/finals">try '
                    "again</a></p>", author=author, session=session, status=403)
    try:
        contest(request).mark_finalist(author, fields.get("submission", ""))
    except SubmitError as exc:
        return page("Not marked", f'<p class="error" id="refused">{escape(exc)}</p><p><a href="/finals">Back</a></p>',
                    author=author, session=session, status=400)
    return RedirectResponse("/finals", status_code=303)


async def api_finals(request: Request) -> Response:
    return JSONResponse(status(contest(request).finals), headers={"Cache-Control": "no-store"})


async def api_export(request: Request) -> Response:
    finals = contest(request).finals
    if finals.phase is not Phase.FINISHED or not config(request).finals_export.is_file():
        return api_error(404, "the finals are not over: their export (and their seed) is published at their end")
    return FileResponse(config(request).finals_export, media_type="application/gzip",
                        filename="finals-export.json.gz", headers={"Cache-Control": "no-store"})


async def api_mark(request: Request, author: Author) -> Response:
    try:
        body = json.loads(await bounded_body(request, JSON_BYTES))
    except (TooLarge, ValueError):
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("submission"), str):
        return api_error(400, 'send JSON {"submission": ID}, the id of one of your validated submissions')
    try:
        marked = contest(request).mark_finalist(author, body["submission"])
    except SubmitError as exc:
        return api_error(400, str(exc))
    return JSONResponse({"finalist": marked.ladder_name, "submission": marked.id})


routes: list[BaseRoute] = [
    Route("/finals", finals_page, methods=["GET"]),
    Route("/finals/mark", mark_page, methods=["POST"]),
    Route("/api/finals", api_finals, methods=["GET"]),
    Route("/api/finals/export", api_export, methods=["GET"]),
    Route("/api/contest/finalist", with_token(api_mark), methods=["POST"]),
]
