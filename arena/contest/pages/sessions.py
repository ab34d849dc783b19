"""Logging in with a token, logging out, and registering as an author where the contest takes registrations.

A form shown before there is a session (log in, register) carries a CSRF token of a cookie of its own
(:data:`~.common.LOGIN_COOKIE`), which its post must match.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena.contest.pages.common import (
    FORM_BYTES,
    LOGIN_COOKIE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    Session,
    TooLarge,
    bounded_body,
    client,
    config,
    cookie,
    escape,
    form_of,
    logged_in,
    not_found_page,
    page,
    same,
    store,
)
from arena.contest.store import AuthorError

LOGINS_PER_MINUTE = 10
"""Login tries a client address may make a minute; a token has 256 bits, so this only
keeps a flood from filling the log and the store."""
REGISTRATIONS_PER_HOUR = 5
"""Registrations (tries included) a client address may make an hour, where the contest takes them."""


def _login_form(request: Request, csrf: str, message: str = "") -> str:
    register = ('<p>No token yet? <a href="/register">Register as an author</a>.</p>'
                if config(request).open_registration else '<p class="muted">The operator gives each author a token '
                "(<code>arena author add NAME</code>).</p>")
    error = f'<p class="error">{escape(message)}</p>' if message else ""
    return (f'{error}<form method="post" action="/login"><input type="hidden" name="csrf" value="{escape(csrf)}">'
            '<label>Your token <input type="password" name="token" autocomplete="current-password" size="60">'
            f"</label> <button>log in</button></form>{register}")


def _register_form(request: Request, csrf: str, message: str = "") -> str:
    error = f'<p class="error">{escape(message)}</p>' if message else ""
    return (f'{error}<form method="post" action="/register"><input type="hidden" name="csrf" value="{escape(csrf)}">'
            '<label>Author name (a-z, 0-9, - and _) <input name="name" maxlength="32"></label> '
            "<button>register</button></form>")


def _sessionless_form(request: Request, title: str, form: Callable[[Request, str], str]) -> Response:
    """Return the page of a form for someone without a session (log in, register): its CSRF token is in a
    cookie of its own, which the post must match."""
    csrf = secrets.token_urlsafe(24)
    response = page(title, form(request, csrf))
    cookie(request, response, LOGIN_COOKIE, csrf, max_age=3600)
    return response


async def _sessionless_post(request: Request, title: str) -> tuple[dict[str, str], str] | Response:
    """Return the fields of a form posted without a session and its CSRF token, or the page refusing it: a body
    over :data:`~.common.FORM_BYTES`, or a CSRF field that is not its cookie's (a cross-site post, a stale form)."""
    try:
        fields = form_of(await bounded_body(request, FORM_BYTES))
    except TooLarge as exc:
        return page(title, f'<p class="error">{escape(exc)}</p>', status=413)
    csrf = request.cookies.get(LOGIN_COOKIE)
    if csrf is None or not same(fields.get("csrf"), csrf):
        return page(title, '<p class="error">the form is stale or not from this site: '
                    f'<a href="{escape(request.url.path)}">try again</a></p>', status=403)
    return fields, csrf


async def login_page(request: Request) -> Response:
    return _sessionless_form(request, "Log in", _login_form)


async def login(request: Request) -> Response:
    posted = await _sessionless_post(request, "Log in")
    if isinstance(posted, Response):
        return posted
    fields, csrf = posted
    contest_store = store(request)
    if not contest_store.limits.allow("login", client(request), LOGINS_PER_MINUTE, 60):
        return page("Log in", _login_form(request, csrf, "too many tries from your address; wait a minute"),
                    status=429)
    author = contest_store.authors.for_token(fields.get("token", "").strip())
    if author is None:
        return page("Log in", _login_form(request, csrf, "that token is not one of this contest's (or it was "
                                                         "revoked)"), status=401)
    sid, _, _ = contest_store.sessions.open(author.name, SESSION_SECONDS)
    response = RedirectResponse("/me", status_code=303)
    cookie(request, response, SESSION_COOKIE, sid)
    response.delete_cookie(LOGIN_COOKIE)
    return response


async def logout(request: Request) -> Response:
    found = logged_in(request)
    try:
        fields = form_of(await bounded_body(request, FORM_BYTES))
    except TooLarge:
        fields = {}
    if found is not None and same(fields.get("csrf"), found[1].csrf):
        store(request).sessions.close(found[0])
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


async def register_page(request: Request) -> Response:
    if not config(request).open_registration:
        return not_found_page("this contest takes no registrations: its operator gives authors their tokens")
    return _sessionless_form(request, "Register", _register_form)


async def register(request: Request) -> Response:
    if not config(request).open_registration:
        return not_found_page("this contest takes no registrations")
    posted = await _sessionless_post(request, "Register")
    if isinstance(posted, Response):
        return posted
    fields, csrf = posted
    contest_store = store(request)
    if not contest_store.limits.allow("register", client(request), REGISTRATIONS_PER_HOUR, 3600):
        return page("Register", _register_form(request, csrf, "too many registrations from your address; try in "
                                                              "an hour"), status=429)
    try:
        token = contest_store.authors.register(fields.get("name", "").strip())
    except AuthorError as exc:
        return page("Register", _register_form(request, csrf, str(exc)), status=400)
    author = contest_store.authors.for_token(token)
    assert author is not None
    sid, csrf, expires = contest_store.sessions.open(author.name, SESSION_SECONDS)
    session = Session(author.name, csrf, expires)
    response = page("Your token", f"<p>Keep this token: it is shown once, and it is how you log in and how "
                    f"<code>arena submit</code> knows you.</p><pre>{escape(token)}</pre>"
                    '<p><a href="/me">Go to your bots</a></p>', author=author, session=session)
    cookie(request, response, SESSION_COOKIE, sid)
    return response


routes: list[BaseRoute] = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/register", register_page, methods=["GET"]),
    Route("/register", register, methods=["POST"]),
]
