"""The contest's web pages and API, on the port of ``arena serve``'s pages (which it serves too).

Everyone sees the public pages as ``arena serve`` shows them (the leaderboard, the matches, replays of complete
deal sets from above), except that a fault's reason, which may quote the bot's own words, is its author's.

An author logs in with their token (``/login``) and gets a session: a random id in an HttpOnly, SameSite=Strict
cookie (Secure behind a TLS proxy), kept (its hash) in the contest's database for :data:`SESSION_SECONDS`, so a
restart logs nobody out; revoking an author or rotating their token ends their sessions. Every POST of a page
carries the session's CSRF token; the login form, before there is a session, a token of its own cookie.

``/me`` lists the author's submissions with their states and an upload form; ``/me/submission/ID`` shows one: its
state and reason, its build and check report, its bot's logs, faults and matches, each match with a link to the
replay from its own seat. The API under ``/api/contest/`` does the same for ``arena submit``, with the token in an
``Authorization: Bearer`` header. An admin (``arena author add --admin``) sees every submission on ``/admin``, and
may disable a bot or revoke an author.

Every page and call checks that its author may see what it asks for; a submission that is not theirs is "not
found", as one that does not exist (its id is 128 random bits). Logins and uploads are rate-limited by the client's
address (the socket's, or behind a configured proxy the one it reports), every request body bounded before it is
read (:mod:`arena.web.limits`), and every value shown is escaped.
"""

from __future__ import annotations

import contextlib
import hmac
import html
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.contest.config import ContestConfig
from arena.contest.service import Contest, SubmitError
from arena.contest.store import Author, AuthorError, State, Submission
from arena.web.app import Site, build_app, server_options
from arena.web.data import NotFound, Reader

log = logging.getLogger("arena.contest.web")

SESSION_COOKIE = "arena_session"
LOGIN_COOKIE = "arena_login"
SESSION_SECONDS = 12 * 3600
LOGINS_PER_MINUTE = 10
"""Login tries a client address may make a minute; a token has 256 bits, so this only
keeps a flood from filling the log and the store."""
REGISTRATIONS_PER_HOUR = 5
"""Registrations (tries included) a client address may make an hour, where the contest takes them."""
API_CALLS_PER_MINUTE = 120
"""API calls with a token a client address may make a minute."""
FORM_BYTES = 16 * 1024
"""The largest body of a form that carries no file (login, registration, admin actions)."""
UPLOAD_OVERHEAD = 64 * 1024
"""What a form upload may add to the archive (the multipart envelope, the CSRF field)."""

PRIVATE_HEADERS = {"Cache-Control": "no-store", "Content-Security-Policy":
                   "default-src 'self'; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}


@dataclass(frozen=True, slots=True)
class Session:
    author: str
    csrf: str
    expires: float


class SecurityHeaders:
    """Adds the headers every response of a contest carries (no sniffing, no framing, no referrer abroad)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def headed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {k.lower() for k, _ in headers}
                for key, value in ((b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"DENY"),
                                   (b"referrer-policy", b"same-origin")):
                    if key not in names:
                        headers.append((key, value))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, headed)


class TooLarge(Exception):
    """A request body over its bound."""


async def bounded_body(request: Request, limit: int) -> bytes:
    """Return the request's body, reading no more than ``limit`` bytes. Raises :class:`TooLarge`."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise TooLarge(f"the request is over {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"the request is over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def replayed(request: Request, body: bytes) -> Request:
    """Return ``request`` with its (already read, bounded) ``body`` to read again: Starlette's form parser reads
    a file part without bound, so it is given only a body already bounded."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _when(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


def submission_json(submission: Submission) -> dict[str, Any]:
    """Return what an author (and the API) is told of their ``submission``."""
    return {"id": submission.id, "bot": submission.bot, "version": submission.version,
            "state": submission.state.value, "reason": submission.reason, "ladder_name": submission.ladder_name,
            "created": submission.created, "updated": submission.updated}


def contest_app(contest: Contest, reader: Reader) -> Starlette:
    """Return the contest's web application: its own pages and API before ``arena serve``'s pages of ``reader``."""
    config = contest.config
    store = contest.store
    site = Site(reader, links=[("/me", "My bots")], private_faults=True, uploads=False)
    upload_limit = config.submissions.archive.archive_bytes + UPLOAD_OVERHEAD

    def client(request: Request) -> str:
        # the socket's address; behind a proxy of config.proxies, the one it reports (uvicorn's proxy_headers,
        # set by serve_contest): never a header a client may write itself
        return request.client.host[:64] if request.client is not None else "?"

    def cookie(response: Response, name: str, value: str, *, path: str = "/", max_age: int | None = None) -> None:
        response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="strict",
                            secure=config.behind_proxy)

    def page(title: str, body: str, *, author: Author | None = None, session: Session | None = None,
             status: int = 200) -> HTMLResponse:
        links = [("/", "Leaderboard"), ("/matches", "Matches"), ("/me", "My bots")]
        if author is not None and author.admin:
            links.append(("/admin", "Admin"))
        nav = "".join(f'<a href="{href}">{_e(text)}</a>' for href, text in links)
        who = ""
        if author is not None and session is not None:
            who = (f'<form method="post" action="/logout" class="live">{_e(author.name)} '
                   f'<input type="hidden" name="csrf" value="{_e(session.csrf)}"><button>log out</button></form>')
        text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)} - arena contest</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css"></head><body data-page="contest">
<header><span class="brand">arena</span><nav>{nav}</nav>{who}</header>
<main id="main"><h1>{_e(title)}</h1>{body}</main></body></html>"""
        return HTMLResponse(text, status_code=status, headers=PRIVATE_HEADERS)

    def logged_in(request: Request) -> tuple[str, Session, Author] | None:
        sid = request.cookies.get(SESSION_COOKIE)
        found = store.session(sid)
        if found is None or sid is None:
            return None
        author, csrf, expires = found
        return sid, Session(author.name, csrf, expires), author

    def form_of(body: bytes) -> dict[str, str]:
        try:
            fields = parse_qs(body.decode("ascii"), max_num_fields=8, strict_parsing=False)
        except (UnicodeDecodeError, ValueError):
            return {}
        return {k: v[0] for k, v in fields.items()}

    def same(a: str | None, b: str | None) -> bool:
        return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))

    def not_found_page(what: str, author: Author | None = None, session: Session | None = None) -> HTMLResponse:
        return page("Not found", f'<p class="error">{_e(what)}</p>', author=author, session=session, status=404)

    # ------------------------------------------------------------------------------------------ logging in

    def login_form(csrf: str, message: str = "") -> str:
        register = ('<p>No token yet? <a href="/register">Register as an author</a>.</p>'
                    if config.open_registration else '<p class="muted">The operator gives each author a token '
                    "(<code>arena author add NAME</code>).</p>")
        error = f'<p class="error">{_e(message)}</p>' if message else ""
        return (f'{error}<form method="post" action="/login"><input type="hidden" name="csrf" value="{_e(csrf)}">'
                '<label>Your token <input type="password" name="token" autocomplete="current-password" size="60">'
                f"</label> <button>log in</button></form>{register}")

    def sessionless_form(title: str, form: Callable[[str], str]) -> Response:
        """Return the page of a form for someone without a session (log in, register): its CSRF token is in a
        cookie of its own, which the post must match."""
        csrf = secrets.token_urlsafe(24)
        response = page(title, form(csrf))
        cookie(response, LOGIN_COOKIE, csrf, max_age=3600)
        return response

    async def sessionless_post(request: Request, title: str) -> tuple[dict[str, str], str] | Response:
        """Return the fields of a form posted without a session and its CSRF token, or the page refusing it: a body
        over :data:`FORM_BYTES`, or a CSRF field that is not its cookie's (a cross-site post, a stale form)."""
        try:
            fields = form_of(await bounded_body(request, FORM_BYTES))
        except TooLarge as exc:
            return page(title, f'<p class="error">{_e(exc)}</p>', status=413)
        csrf = request.cookies.get(LOGIN_COOKIE)
        if csrf is None or not same(fields.get("csrf"), csrf):
            return page(title, '<p class="error">the form is stale or not from this site: '
                        f'<a href="{_e(request.url.path)}">try again</a></p>', status=403)
        return fields, csrf

    async def login_page(request: Request) -> Response:
        return sessionless_form("Log in", login_form)

    async def login(request: Request) -> Response:
        posted = await sessionless_post(request, "Log in")
        if isinstance(posted, Response):
            return posted
        fields, csrf = posted
        if not store.allow("login", client(request), LOGINS_PER_MINUTE, 60):
            return page("Log in", login_form(csrf, "too many tries from your address; wait a minute"), status=429)
        author = store.author_for_token(fields.get("token", "").strip())
        if author is None:
            return page("Log in", login_form(csrf, "that token is not one of this contest's (or it was revoked)"),
                        status=401)
        sid, _, _ = store.open_session(author.name, SESSION_SECONDS)
        response = RedirectResponse("/me", status_code=303)
        cookie(response, SESSION_COOKIE, sid)
        response.delete_cookie(LOGIN_COOKIE)
        return response

    async def logout(request: Request) -> Response:
        found = logged_in(request)
        try:
            fields = form_of(await bounded_body(request, FORM_BYTES))
        except TooLarge:
            fields = {}
        if found is not None and same(fields.get("csrf"), found[1].csrf):
            store.close_session(found[0])
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    async def register_page(request: Request) -> Response:
        if not config.open_registration:
            return not_found_page("this contest takes no registrations: its operator gives authors their tokens")
        return sessionless_form("Register", _register_form)

    def _register_form(csrf: str, message: str = "") -> str:
        error = f'<p class="error">{_e(message)}</p>' if message else ""
        return (f'{error}<form method="post" action="/register"><input type="hidden" name="csrf" value="{_e(csrf)}">'
                '<label>Author name (a-z, 0-9, - and _) <input name="name" maxlength="32"></label> '
                "<button>register</button></form>")

    async def register(request: Request) -> Response:
        if not config.open_registration:
            return not_found_page("this contest takes no registrations")
        posted = await sessionless_post(request, "Register")
        if isinstance(posted, Response):
            return posted
        fields, csrf = posted
        if not store.allow("register", client(request), REGISTRATIONS_PER_HOUR, 3600):
            return page("Register", _register_form(csrf, "too many registrations from your address; try in an hour"),
                        status=429)
        try:
            token = store.register(fields.get("name", "").strip())
        except AuthorError as exc:
            return page("Register", _register_form(csrf, str(exc)), status=400)
        author = store.author_for_token(token)
        assert author is not None
        sid, csrf, expires = store.open_session(author.name, SESSION_SECONDS)
        session = Session(author.name, csrf, expires)
        response = page("Your token", f"<p>Keep this token: it is shown once, and it is how you log in and how "
                        f"<code>arena submit</code> knows you.</p><pre>{_e(token)}</pre>"
                        '<p><a href="/me">Go to your bots</a></p>', author=author, session=session)
        cookie(response, SESSION_COOKIE, sid)
        return response

    # ------------------------------------------------------------------------------------------ author pages

    def submissions_table(rows: Sequence[Submission], with_author: bool = False) -> str:
        if not rows:
            return '<p class="muted">No submissions yet.</p>'
        head = "".join(f"<th class=\"left\">{h}</th>" for h in
                       (["author"] if with_author else []) + ["bot", "version", "state", "reason", "submitted"])
        body = ""
        for s in rows:
            cells = ([f"<td class=\"left\">{_e(s.author)}</td>"] if with_author else []) + [
                f'<td class="left"><a href="/me/submission/{_e(s.id)}">{_e(s.bot)}</a></td>',
                f"<td>{s.version}</td>", f'<td class="left state-{_e(s.state.value)}">{_e(s.state.value)}</td>',
                f'<td class="left">{_e(s.reason)}</td>', f"<td>{_e(_when(s.created))}</td>"]
            body += f"<tr>{''.join(cells)}</tr>"
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

    async def me(request: Request) -> Response:
        found = logged_in(request)
        if found is None:
            return RedirectResponse("/login", status_code=303)
        _, session, author = found
        rows = store.submissions(author.name)
        url = str(request.base_url).rstrip("/")
        body = (f"<h2>Submit a bot</h2><p>A <code>.tar.gz</code> of your bot's folder, with its <code>bot.toml</code>"
                f" at the top (<code>arena submit FOLDER --to {_e(url)}</code> makes and sends it). At most "
                f"{config.submissions.archive.archive_bytes // 1024 // 1024} MiB, {config.submissions.per_day} "
                f"submissions a day, {config.submissions.active} bots in the contest at once.</p>"
                '<form method="post" action="/me/submit" enctype="multipart/form-data">'
                f'<input type="hidden" name="csrf" value="{_e(session.csrf)}">'
                '<input type="file" name="archive" accept=".tar.gz,.tgz,application/gzip"> <button>submit</button>'
                f"</form><h2>Your submissions</h2>{submissions_table(rows)}")
        return page(f"Bots of {author.name}", body, author=author, session=session)

    async def me_submit(request: Request) -> Response:
        found = logged_in(request)
        if found is None:
            return RedirectResponse("/login", status_code=303)
        _, session, author = found
        try:
            body = await bounded_body(request, upload_limit)
        except TooLarge as exc:
            return page("Not submitted", f'<p class="error">{_e(exc)}</p>', author=author, session=session,
                        status=413)
        try:
            form = await replayed(request, body).form(max_files=1, max_fields=2, max_part_size=FORM_BYTES)
        except HTTPException as exc:
            return page("Not submitted", f'<p class="error">not a form upload: {_e(exc.detail)}</p>', author=author,
                        session=session, status=400)
        if not same(str(form.get("csrf") or ""), session.csrf):
            return page("Not submitted", '<p class="error">the form is stale or not from this site: '
                        '<a href="/me">try again</a></p>', author=author, session=session, status=403)
        upload = form.get("archive")
        if not isinstance(upload, UploadFile):
            return page("Not submitted", '<p class="error">choose your bot\'s .tar.gz first</p>', author=author,
                        session=session, status=400)
        data = await upload.read()
        await form.close()
        try:
            submission = contest.submit(author, data)
        except SubmitError as exc:
            return page("Not submitted", f'<p class="error">{_e(exc)}</p><p><a href="/me">Back</a></p>',
                        author=author, session=session, status=400)
        return RedirectResponse(f"/me/submission/{submission.id}", status_code=303)

    def own_submission(author: Author, submission_id: str) -> Submission | None:
        submission = store.submission(submission_id) if len(submission_id) <= 64 else None
        if submission is None or not contest.may_see(author, submission):
            return None  # one answer for "not yours" and "none": ids are not to be probed
        return submission

    def matches_html(submission: Submission) -> str:
        try:
            matches = reader.matches(bot=submission.ladder_name)["matches"]
            faults = reader.bot(submission.ladder_name)["faults"]
        except NotFound:
            return '<p class="muted">No matches yet.</p>'
        rows = ""
        for m in matches:
            seat = next((s["seat"] for s in m["seats"] if s["bot"] == submission.ladder_name), None)
            own = next((s for s in m["seats"] if s["seat"] == seat), None)
            link = (f'<a href="/match/{m["id"]}?seat={seat}">from its seat</a>' if m["replay"] and seat is not None
                    else '<span class="muted">shown once its deal set is complete</span>')
            result = f"place {own['place']}, total {own['total']}" if own is not None else ""
            rows += (f"<tr><td>{m['id']}</td><td>{m['deal']}</td><td class=\"left\">{_e(result)}</td>"
                     f"<td>{own['faults'] if own else 0}</td><td class=\"left\">{link}</td></tr>")
        table = ("<table><thead><tr><th>match</th><th>deal</th><th class=\"left\">result</th><th>faults</th>"
                 f"<th class=\"left\">replay</th></tr></thead><tbody>{rows}</tbody></table>") if rows else \
            '<p class="muted">No matches yet.</p>'
        later = " (its reason once the deal set is complete)"
        fault_rows = "".join(f"<li>match {f['match']}, step {f['step']}: {_e(f['kind'])}"
                             f"{': ' + _e(f['detail']) if f['detail'] else later}</li>" for f in faults)
        return table + (f"<h3>Faults</h3><ul>{fault_rows}</ul>" if fault_rows else "")

    async def submission_page(request: Request) -> Response:
        found = logged_in(request)
        if found is None:
            return RedirectResponse("/login", status_code=303)
        _, session, author = found
        submission = own_submission(author, str(request.path_params["id"]))
        if submission is None:
            return not_found_page("no such submission of yours", author, session)
        report = store.report(submission.id)
        logs = "".join(f"<h3>{_e(log.name)}</h3>"
                       + (f'<p class="muted">(its first {log.cut} bytes are left out)</p>' if log.cut else "")
                       + f'<pre class="log">{_e(log.text)}</pre>' for log in contest.logs(submission))
        facts = (f"<p>Bot <b>{_e(submission.bot)}</b> version {submission.version}, by {_e(submission.author)}: "
                 f'<b class="state-{_e(submission.state.value)}" id="state">{_e(submission.state.value)}</b>'
                 + (f' <span id="reason">({_e(submission.reason)})</span>' if submission.reason else "")
                 + f"; on the leaderboard as <code>{_e(submission.ladder_name)}</code>. Submitted "
                 f"{_e(_when(submission.created))}, archive <code>{_e(submission.content_hash[:16])}</code>.</p>")
        if submission.state in (State.QUEUED, State.BUILDING, State.CHECKING):
            facts += '<p class="muted">Reload the page to follow it.</p>'
        body = (facts + "<h2>Matches</h2>" + matches_html(submission)
                + f'<h2>Build and check report</h2><pre class="log" id="report">{_e(report) or "(none yet)"}</pre>'
                + f"<h2>Logs</h2>{logs or '<p class=muted>No logs yet.</p>'}")
        return page(f"Submission {submission.bot} v{submission.version}", body, author=author, session=session)

    # ------------------------------------------------------------------------------------------------- admin

    async def admin(request: Request) -> Response:
        found = logged_in(request)
        if found is None or not found[2].admin:
            return not_found_page(f"no page {request.url.path!r} here")
        _, session, author = found
        csrf = f'<input type="hidden" name="csrf" value="{_e(session.csrf)}">'
        authors = "".join(
            f"<tr><td class=\"left\">{_e(a.name)}</td><td>{'admin' if a.admin else ''}</td>"
            f"<td>{'revoked' if a.revoked else ''}</td><td>"
            + ("" if a.revoked or a.name == author.name else
               f'<form method="post" action="/admin/revoke/{_e(a.name)}">{csrf}<button>revoke</button></form>')
            + "</td></tr>" for a in store.authors())
        live = [s for s in store.submissions() if s.state is State.PLAYING]
        disable = "".join(f'<li>{_e(s.ladder_name)} <form method="post" action="/admin/disable/{_e(s.id)}" '
                          f'class="inline">{csrf}<button>disable</button></form></li>' for s in live)
        body = (f"<h2>Authors</h2><table><tbody>{authors}</tbody></table><h2>Playing</h2><ul>{disable}</ul>"
                f"<h2>Every submission</h2>{submissions_table(store.submissions(), with_author=True)}")
        return page("Admin", body, author=author, session=session)

    async def admin_action(request: Request) -> Response:
        found = logged_in(request)
        if found is None or not found[2].admin:
            return not_found_page(f"no page {request.url.path!r} here")
        _, session, author = found
        try:
            fields = form_of(await bounded_body(request, FORM_BYTES))
        except TooLarge as exc:
            return page("Admin", f'<p class="error">{_e(exc)}</p>', status=413)
        if not same(fields.get("csrf"), session.csrf):
            return page("Admin", '<p class="error">the form is stale: <a href="/admin">back</a></p>',
                        author=author, session=session, status=403)
        action, target = str(request.path_params["action"]), str(request.path_params["target"])
        if action == "revoke":
            if store.author(target) is None:
                return not_found_page(f"no author {target!r}", author, session)
            store.revoke(target)  # ends their sessions too
        elif action == "disable":
            submission = store.submission(target)
            if submission is None:
                return not_found_page("no such submission", author, session)
            contest.disable(submission)
        else:
            return not_found_page(f"no page {request.url.path!r} here", author, session)
        return RedirectResponse("/admin", status_code=303)

    # ---------------------------------------------------------------------------------------------------- api

    def api_error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})

    def api(fn: Callable[[Request, Author], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            if not store.allow("api", client(request), API_CALLS_PER_MINUTE, 60):
                return api_error(429, "too many calls from your address; wait a minute")
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                return api_error(401, "no token: send it as 'Authorization: Bearer TOKEN' (arena submit reads it "
                                      "from ARENA_TOKEN or --token-file)")
            author = store.author_for_token(token.strip())
            if author is None:
                return api_error(401, "that token is not one of this contest's (or it was revoked)")
            return await fn(request, author)
        return endpoint

    async def api_submit(request: Request, author: Author) -> Response:
        try:
            data = await bounded_body(request, config.submissions.archive.archive_bytes)
        except TooLarge:
            return api_error(413, f"the archive is over {config.submissions.archive.archive_bytes} bytes, the most "
                                  "this contest takes")
        try:
            submission = contest.submit(author, data)
        except SubmitError as exc:
            return api_error(400, str(exc))
        return JSONResponse({**submission_json(submission), "url": f"/me/submission/{submission.id}"},
                            status_code=201)

    async def api_list(request: Request, author: Author) -> Response:
        return JSONResponse({"author": author.name,
                             "submissions": [submission_json(s) for s in store.submissions(author.name)]})

    async def api_one(request: Request, author: Author) -> Response:
        submission = own_submission(author, str(request.path_params["id"]))
        if submission is None:
            return api_error(404, "no such submission of yours")
        return JSONResponse({**submission_json(submission), "report": store.report(submission.id)})

    async def api_logs(request: Request, author: Author) -> Response:
        submission = own_submission(author, str(request.path_params["id"]))
        if submission is None:
            return api_error(404, "no such submission of yours")
        return JSONResponse({"logs": [{"name": log.name, "text": log.text, "cut": log.cut}
                                      for log in contest.logs(submission)]})

    routes: list[BaseRoute] = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/register", register_page, methods=["GET"]),
        Route("/register", register, methods=["POST"]),
        Route("/me", me, methods=["GET"]),
        Route("/me/submit", me_submit, methods=["POST"]),
        Route("/me/submission/{id}", submission_page, methods=["GET"]),
        Route("/admin", admin, methods=["GET"]),
        Route("/admin/{action}/{target}", admin_action, methods=["POST"]),
        Route("/api/contest/submissions", api(api_submit), methods=["POST"]),
        Route("/api/contest/submissions", api(api_list), methods=["GET"]),
        Route("/api/contest/submissions/{id}", api(api_one), methods=["GET"]),
        Route("/api/contest/submissions/{id}/logs", api(api_logs), methods=["GET"]),
    ]
    bodies = {("POST", "/me/submit"): upload_limit,
              ("POST", "/api/contest/submissions"): config.submissions.archive.archive_bytes}

    def bound(method: str, path: str) -> int:
        return bodies.get((method, path), FORM_BYTES)

    app = build_app(site, routes, bound)
    app.add_middleware(SecurityHeaders)
    return app


def contest_server_options(config: ContestConfig) -> dict[str, Any]:
    """Return the HTTP server's settings of a contest: :func:`arena.web.app.server_options`, and behind a proxy
    (``behind_proxy``) the client's address taken from the ``X-Forwarded-For`` of the proxies of ``proxies`` only;
    not behind one, from the socket, whatever a client writes in its headers."""
    options = server_options()
    if config.behind_proxy:
        options |= {"proxy_headers": True, "forwarded_allow_ips": list(config.proxies)}
    return options


STOP_SECONDS = 30.0
"""How long a stopping contest waits for its matches, checks and bots to stop before it leaves them."""


async def serve_contest(contest: Contest, on_ready: Callable[[str], None],
                        on_stop: Callable[[str], None] | None = None) -> None:
    """Run ``contest`` (its ladder and pipeline) and serve its pages on its configured address, until SIGINT or
    SIGTERM (then ``on_stop(signal name)`` and an orderly stop: the web server, the ladder's tables and bots, the
    pipeline), until cancelled, or until the ladder fails (its error is raised). A second signal while stopping
    is not caught.

    Raises :class:`OSError` when the address cannot be bound.
    """
    import asyncio
    import signal
    import socket

    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # the contest stops on its own signals, in order; uvicorn's would raise them again mid-way
            yield

    config = contest.config
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    reader: Reader | None = None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    caught = (signal.SIGINT, signal.SIGTERM)

    def stopping(sig: signal.Signals) -> None:
        for each in caught:
            loop.remove_signal_handler(each)
        if on_stop is not None:
            on_stop(sig.name)
        stop.set()

    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((config.host, config.port))
        sock.listen(128)
        sock.set_inheritable(False)
        reader = Reader(config.ladder_db)
        reader.start()
        server = Server(uvicorn.Config(contest_app(contest, reader), **contest_server_options(config)))
        shown = f"[{config.host}]" if family == socket.AF_INET6 else config.host
        for sig in caught:
            loop.add_signal_handler(sig, stopping, sig)
        tasks = [asyncio.create_task(server.serve(sockets=[sock]), name="contest-web"),
                 asyncio.create_task(contest.run(), name="contest"),
                 asyncio.create_task(stop.wait(), name="contest-stop")]
        on_ready(f"http://{shown}:{sock.getsockname()[1]}/")
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            server.should_exit = True
            for task in tasks[1:]:
                task.cancel()
            finished, left = await asyncio.wait(tasks, timeout=STOP_SECONDS)
            for task in finished:  # seen: an error while stopping is not the one being raised, if any
                if not task.cancelled():
                    task.exception()
            if left:
                log.warning("the contest did not stop within %.0f s: %s", STOP_SECONDS,
                            ", ".join(t.get_name() for t in left))
    finally:
        with contextlib.suppress(ValueError, RuntimeError):
            for sig in caught:
                loop.remove_signal_handler(sig)
        sock.close()
        if reader is not None:
            reader.close()
