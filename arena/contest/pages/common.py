"""What the contest's pages share: the application's state, the page chrome, the session and its CSRF token, bounded
bodies and the security headers.

An author logs in with their token (``/login``) and gets a session: a random id in an HttpOnly, SameSite=Strict
cookie (Secure behind a TLS proxy), kept (its hash) in the contest's database for :data:`SESSION_SECONDS`, so a
restart logs nobody out; revoking an author or rotating their token ends their sessions. Every POST of a page
carries the session's CSRF token; the login form, before there is a session, a token of its own cookie.
"""

from __future__ import annotations

import contextlib
import hmac
import html
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import cast
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.contest.config import ContestConfig
from arena.contest.finals import Finals
from arena.contest.service import Contest
from arena.contest.store import Author, ContestStore, Submission
from arena.web.data import Reader

SESSION_COOKIE = "arena_session"
LOGIN_COOKIE = "arena_login"
SESSION_SECONDS = 12 * 3600
FORM_BYTES = 16 * 1024
"""The largest body of a form that carries no file (login, registration, admin actions)."""

FINALS: ContextVar[Finals | None] = ContextVar("contest_finals", default=None)
"""The finals of the contest a request is to, whose line about the contest's end its pages show; set for each
request by :class:`arena.contest.pages.finals.Notice` (read only by a page that is rendered)."""

PRIVATE_HEADERS = {"Cache-Control": "no-store", "Content-Security-Policy":
                   "default-src 'self'; script-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"}


# ---------------------------------------------------------------------------------------- the application's state

def contest(request: Request) -> Contest:
    """Return the contest the application serves (``app.state.contest``)."""
    return cast(Contest, request.app.state.contest)


def store(request: Request) -> ContestStore:
    """Return the contest's store (``app.state.store``): its authors, sessions, submissions, reports and limits."""
    return cast(ContestStore, request.app.state.store)


def config(request: Request) -> ContestConfig:
    """Return the contest's configuration (``app.state.config``)."""
    return cast(ContestConfig, request.app.state.config)


def reader(request: Request) -> Reader:
    """Return the reader of the contest's ladder database (``app.state.reader``), which the public pages show."""
    return cast(Reader, request.app.state.reader)


def client(request: Request) -> str:
    """Return the client's address, the key of its rate limits."""
    # the socket's address; behind a proxy of config.proxies, the one it reports (uvicorn's proxy_headers, set by
    # serve_contest): never a header a client may write itself
    return request.client.host[:64] if request.client is not None else "?"


# ------------------------------------------------------------------------------------------------- the chrome

def escape(value: object) -> str:
    """Return ``value`` as text safe in HTML, attributes included."""
    return html.escape(str(value), quote=True)


def when(seconds: float) -> str:
    """Return a time as the pages show it (UTC)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))


@dataclass(frozen=True, slots=True)
class Session:
    author: str
    csrf: str
    expires: float


def page(title: str, body: str, *, author: Author | None = None, session: Session | None = None,
         status: int = 200) -> HTMLResponse:
    """Return a contest page: the navigation (with the admin's page for an admin), the author's log-out button when
    logged in, ``title`` and ``body`` (HTML, its values escaped by the caller), never cached."""
    links = [("/", "Leaderboard"), ("/matches", "Matches"), ("/me", "My bots")]
    finals = FINALS.get()
    said = ""
    if finals is not None and finals.rules is not None:
        links.append(("/finals", "Finals"))
        with contextlib.suppress(Exception):  # a database that cannot be read never takes a page down
            said = finals.notice()
    if author is not None and author.admin:
        links.append(("/admin", "Admin"))
    nav = "".join(f'<a href="{href}">{escape(text)}</a>' for href, text in links)
    notice = f'<p class="notice" id="notice">{escape(said)}</p>' if said else ""
    who = ""
    if author is not None and session is not None:
        who = (f'<form method="post" action="/logout" class="live">{escape(author.name)} '
               f'<input type="hidden" name="csrf" value="{escape(session.csrf)}"><button>log out</button></form>')
    text = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} - arena contest</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css"></head><body data-page="contest">
<header><span class="brand">arena</span><nav>{nav}</nav>{who}</header>{notice}
<main id="main"><h1>{escape(title)}</h1>{body}</main></body></html>"""
    return HTMLResponse(text, status_code=status, headers=PRIVATE_HEADERS)


def not_found_page(what: str, author: Author | None = None, session: Session | None = None) -> HTMLResponse:
    """Return the 404 page saying ``what`` was not found."""
    return page("Not found", f'<p class="error">{escape(what)}</p>', author=author, session=session, status=404)


def submissions_table(rows: Sequence[Submission], with_author: bool = False) -> str:
    """Return the HTML table of ``rows``, each linking to its submission's page."""
    if not rows:
        return '<p class="muted">No submissions yet.</p>'
    head = "".join(f"<th class=\"left\">{h}</th>" for h in
                   (["author"] if with_author else []) + ["bot", "version", "state", "reason", "submitted"])
    body = ""
    for s in rows:
        cells = ([f"<td class=\"left\">{escape(s.author)}</td>"] if with_author else []) + [
            f'<td class="left"><a href="/me/submission/{escape(s.id)}">{escape(s.bot)}</a></td>',
            f"<td>{s.version}</td>", f'<td class="left state-{escape(s.state.value)}">{escape(s.state.value)}</td>',
            f'<td class="left">{escape(s.reason)}</td>', f"<td>{escape(when(s.created))}</td>"]
        body += f"<tr>{''.join(cells)}</tr>"
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# --------------------------------------------------------------------------------------- sessions and forms

def cookie(request: Request, response: Response, name: str, value: str, *, path: str = "/",
           max_age: int | None = None) -> None:
    """Set the cookie ``name`` on ``response``: HttpOnly, SameSite=Strict, and Secure behind a TLS proxy."""
    response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="strict",
                        secure=config(request).behind_proxy)


def logged_in(request: Request) -> tuple[str, Session, Author] | None:
    """Return the request's session (its id, the session, its author), or ``None`` without a live one."""
    sid = request.cookies.get(SESSION_COOKIE)
    found = store(request).sessions.get(sid)
    if found is None or sid is None:
        return None
    author, csrf, expires = found
    return sid, Session(author.name, csrf, expires), author


def form_of(body: bytes) -> dict[str, str]:
    """Return the fields of a url-encoded form's ``body`` (the first value of each; none for a body that is not
    one)."""
    try:
        fields = parse_qs(body.decode("ascii"), max_num_fields=8, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in fields.items()}


def same(a: str | None, b: str | None) -> bool:
    """Return whether two tokens are both given and equal (compared in constant time)."""
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))


def own_submission(request: Request, author: Author, submission_id: str) -> Submission | None:
    """Return the submission ``submission_id`` where ``author`` may see it, else ``None``."""
    submission = store(request).submissions.get(submission_id) if len(submission_id) <= 64 else None
    if submission is None or not contest(request).may_see(author, submission):
        return None  # one answer for "not yours" and "none": ids are not to be probed
    return submission


# ------------------------------------------------------------------------------------------------ bodies

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
