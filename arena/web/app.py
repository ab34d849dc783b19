"""The web server of ``arena serve``: HTML pages that draw JSON from ``/api/...``, served by Starlette.

Every page is a small HTML shell; its script (``static/app.js``) fetches the page's JSON and draws it, and
asks ``/api/version`` every few seconds whether new matches landed, to fetch again without a reload. The
server never writes: the database is opened read-only (:class:`arena.web.data.Reader`), an uploaded replay
is re-run in memory and forgotten. Unknown pages, bots and matches get a 404 page saying what was not found;
an error inside gets a 500 page, never a traceback.
"""

from __future__ import annotations

import html
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from arena.games.base import GameError
from arena.web.data import NotFound, Reader, Withheld
from arena.web.games import game_web
from arena.web.limits import HEADER_BYTES, SMALL_BODY, BodyBound, BodyLimit
from arena.web.replays import viewer_data

log = logging.getLogger("arena.web")

STATIC = resources.files("arena.web") / "static"
MAX_UPLOAD = 16 * 1024 * 1024
"""The largest replay file the upload takes (a long match's replay is some 100 KB)."""


class Site:
    """What the server shows: a ladder database (``reader``), a replay file (``replay``), or both."""

    def __init__(self, reader: Reader | None, replay: dict[str, Any] | None = None,
                 replay_name: str = "", *, links: Sequence[tuple[str, str]] = (), private_faults: bool = False,
                 uploads: bool = True, debug: bool = False, notice: Callable[[], str] | None = None) -> None:
        self.reader = reader
        self.replay = replay
        self.replay_name = replay_name
        self.links = list(links)
        """More navigation links (path, text), after the ladder's: a contest's author pages."""
        self.private_faults = private_faults
        """Whether a fault's reason (which may quote the bot's own words) is left out of the public pages: a
        contest shows it to the bot's author only."""
        self.uploads = uploads
        self.debug = debug
        """Whether the replay viewer shows the bots' debug text: for the operator of a local ladder (``arena
        serve``); never on a contest's public pages (each bot's text is its author's)."""
        """Whether anyone may upload a replay file to be re-run (``arena serve``'s "Open a replay"); a contest,
        open to everyone, does not take one."""
        self.notice = notice
        """A line every page shows under its navigation, asked at each page ("" for none): a contest's phase."""

    def need_reader(self) -> Reader:
        if self.reader is None:
            raise NotFound("this server shows a replay file, not a ladder database (start it with --db)")
        return self.reader


def _shell(title: str, page: str, site: Site, **data: str) -> str:
    """Return a page's HTML: the navigation, an empty main for ``app.js`` to fill, and its data attributes."""
    attrs = "".join(f' data-{k}="{html.escape(v)}"' for k, v in data.items())
    links = []
    if site.reader is not None:
        links += [("/", "Leaderboard"), ("/ratings", "Ratings"), ("/h2h", "Head to head"), ("/matches", "Matches")]
    if site.replay is not None:
        links.append(("/replay/file", "Replay file"))
    if site.uploads:
        links.append(("/replay", "Open a replay"))
    links += site.links
    nav = "".join(f'<a href="{href}">{html.escape(text)}</a>' for href, text in links)
    said = site.notice() if site.notice is not None else ""
    notice = f'<p class="notice" id="notice">{html.escape(said)}</p>' if said else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} - arena</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/style.css"><link rel="stylesheet" href="/static/vendor/uPlot.min.css">
</head><body data-page="{page}"{attrs}>
<header><span class="brand">arena</span><nav>{nav}</nav><span id="live" class="live"></span></header>{notice}
<main id="main"><h1>{html.escape(title)}</h1><p class="loading">loading...</p></main>
<script src="/static/vendor/uPlot.iife.min.js"></script><script src="/static/app.js"></script>
</body></html>"""


def page_html(title: str, page: str, site: Site, **data: str) -> str:
    """Return the HTML of one of ``app.js``'s pages (``page``: its name, e.g. ``match``) with ``data`` in its
    attributes, for a page served elsewhere (a contest author's private replay)."""
    return _shell(title, page, site, **data)


def _error_page(status: int, message: str) -> HTMLResponse:
    title = {404: "Not found", 403: "Not shown yet", 400: "Bad request"}.get(status, "Error")
    body = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} - arena</title>
<link rel="stylesheet" href="/static/style.css"></head><body data-page="error">
<header><span class="brand">arena</span><nav><a href="/">Home</a></nav></header>
<main><h1>{title}</h1><p class="error" id="error">{html.escape(message)}</p></main></body></html>"""
    return HTMLResponse(body, status_code=status)


def _int_param(request: Request, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw in (None, "", "all"):
        return None
    try:
        return int(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be a whole number, not {raw!r}") from None


def body_bound(method: str, path: str) -> int:
    """Return the bound of a request body of ``arena serve``: a replay file on its upload, else a small form."""
    return MAX_UPLOAD if (method, path) == ("POST", "/api/replay") else SMALL_BODY


def build_app(site: Site, routes: Sequence[BaseRoute] = (), bound: BodyBound = body_bound) -> Starlette:
    """Return the web application showing ``site``; ``routes`` come before its own (a contest's pages).

    Every request body is bounded by ``bound(method, path)`` before it is read (:class:`arena.web.limits.BodyLimit`).
    """

    def api(fn: Callable[[Request], Any]) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            return JSONResponse(await run_in_threadpool(fn, request))
        return endpoint

    def page(title: str | Callable[[Request], str], name: str,
             check: Callable[[Request], dict[str, str]] | None = None) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            data = await run_in_threadpool(check, request) if check is not None else {}
            text = title(request) if callable(title) else title
            return HTMLResponse(_shell(text, name, site, **data))
        return endpoint

    # ------------------------------------------------------------------------------------- page checks

    def check_ladder(_: Request) -> dict[str, str]:
        site.need_reader()
        return {}

    def check_bot(request: Request) -> dict[str, str]:
        name = str(request.path_params["name"])
        site.need_reader().bot_id(name)
        return {"bot": name}

    def check_match(request: Request) -> dict[str, str]:
        match_id = int(request.path_params["match_id"])
        site.need_reader().match(match_id)
        return {"match": str(match_id)}

    def check_file(_: Request) -> dict[str, str]:
        if site.replay is None:
            raise NotFound("this server was started without --replay FILE; open a replay file on /replay")
        return {"source": "file", "name": site.replay_name}

    async def home(request: Request) -> Response:
        if site.reader is None:
            return RedirectResponse("/replay/file" if site.replay is not None else "/replay")
        return await page("Leaderboard", "board", check_ladder)(request)

    # ---------------------------------------------------------------------------------------------- api

    def seat_param(request: Request) -> int | None:
        return _int_param(request, "seat")

    def api_version(_: Request) -> dict[str, Any]:
        return {"version": site.need_reader().version()}

    def api_summary(_: Request) -> dict[str, Any]:
        return site.need_reader().summary()

    def figure(reader: Reader, value: tuple[dict[str, Any], int] | None) -> dict[str, Any]:
        """Return a whole-database figure's answer: ``{"pending": true}`` while its first computation runs
        (the page asks again); then its fields, ``at`` (the newest match it counts) and ``version`` (the
        newest stored). While ``at`` is behind, a recomputation is under way and the page asks again even if
        no further match lands."""
        if value is None:
            return {"pending": True}
        return {**value[0], "at": value[1], "version": reader.version()}

    def api_board(_: Request) -> dict[str, Any]:
        reader = site.need_reader()
        board = reader.board.get()
        return {**figure(reader, None if board is None else ({"rows": board[0]}, board[1])),
                "summary": reader.summary()}

    def api_ratings(_: Request) -> dict[str, Any]:
        reader = site.need_reader()
        return figure(reader, reader.ratings.get())

    def api_h2h(_: Request) -> dict[str, Any]:
        reader = site.need_reader()
        return figure(reader, reader.head_to_head.get())

    def api_pair(request: Request) -> dict[str, Any]:
        return site.need_reader().pair(str(request.path_params["a"]), str(request.path_params["b"]),
                                       _int_param(request, "before"))

    def api_matches(request: Request) -> dict[str, Any]:
        return site.need_reader().matches(_int_param(request, "before"))

    def api_bot(request: Request) -> dict[str, Any]:
        data = site.need_reader().bot(str(request.path_params["name"]))
        if site.private_faults:
            data["faults"] = [{**fault, "detail": None} for fault in data["faults"]]
        return data

    def api_bot_matches(request: Request) -> dict[str, Any]:
        return site.need_reader().matches(_int_param(request, "before"), str(request.path_params["name"]),
                                          request.query_params.get("filter", "all"))

    def api_match(request: Request) -> dict[str, Any]:
        reader = site.need_reader()
        match_id = int(request.path_params["match_id"])
        record = reader.match(match_id)
        data = viewer_data(reader.replay(match_id), seat_param(request), fault_details=not site.private_faults,
                           debug=site.debug)
        return {**data, "match": record}

    def api_file(request: Request) -> dict[str, Any]:
        if site.replay is None:
            raise NotFound("this server was started without --replay FILE")
        return {**viewer_data(site.replay, seat_param(request), debug=site.debug), "match": None,
                "name": site.replay_name}

    async def api_upload(request: Request) -> Response:
        body = await request.body()  # bounded by MAX_UPLOAD before it is read (body_bound)
        try:
            data = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HTTPException(400, f"not a replay file: {exc}") from None
        if not isinstance(data, dict) or "game" not in data:
            raise HTTPException(400, "not an arena replay (no game)")
        seat = seat_param(request)
        result = await run_in_threadpool(viewer_data, data, seat)
        return JSONResponse({**result, "match": None})

    async def game_script(request: Request) -> Response:
        name = str(request.path_params["game"])
        try:
            script = game_web(name).script()
        except GameError as exc:
            raise NotFound(str(exc)) from None
        return Response(script, media_type="text/javascript")

    # ---------------------------------------------------------------------------------------- errors

    def wants_json(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def error(request: Request, status: int, message: str) -> Response:
        if wants_json(request):
            return JSONResponse({"error": message}, status_code=status)
        return _error_page(status, message)

    async def not_found(request: Request, exc: Exception) -> Response:
        return error(request, 404, str(exc))

    async def withheld(request: Request, exc: Exception) -> Response:
        return error(request, 403, str(exc))

    async def bad_replay(request: Request, exc: Exception) -> Response:
        return error(request, 400, f"the replay does not re-run: {exc}")

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            message = f"no page {request.url.path!r} here"
        elif exc.status_code == 405:
            message = f"{request.method} is not allowed on {request.url.path!r}; this server only reads"
        else:
            message = str(exc.detail)
        return error(request, exc.status_code, message)

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("error serving %s", request.url.path)
        return error(request, 500, f"internal error while serving {request.url.path!r}; the server log says more")

    own: list[BaseRoute] = [
        Route("/", home),
        Route("/ratings", page("Ratings over time", "ratings", check_ladder)),
        Route("/h2h", page("Head to head", "h2h", check_ladder)),
        Route("/h2h/{a}/{b}", page(lambda r: f"{r.path_params['a']} and {r.path_params['b']}", "pair",
                                   lambda r: {**check_bot_pair(r)})),
        Route("/matches", page("Matches", "matches", check_ladder)),
        Route("/bot/{name}", page(lambda r: f"Bot {r.path_params['name']}", "bot", check_bot)),
        Route("/match/{match_id:int}", page(lambda r: f"Match {r.path_params['match_id']}", "match", check_match)),
        *([Route("/replay", page("Open a replay", "upload"))] if site.uploads else []),
        Route("/replay/file", page("Replay file", "match", check_file)),
        Route("/api/version", api(api_version)),
        Route("/api/summary", api(api_summary)),
        Route("/api/board", api(api_board)),
        Route("/api/ratings", api(api_ratings)),
        Route("/api/h2h", api(api_h2h)),
        Route("/api/h2h/{a}/{b}", api(api_pair)),
        Route("/api/matches", api(api_matches)),
        Route("/api/bot/{name}", api(api_bot)),
        Route("/api/bot/{name}/matches", api(api_bot_matches)),
        Route("/api/match/{match_id:int}", api(api_match)),
        Route("/api/replay/file", api(api_file)),
        *([Route("/api/replay", api_upload, methods=["POST"])] if site.uploads else []),
        Route("/games/{game}.js", game_script),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]

    routes = [*routes, *own]

    def check_bot_pair(request: Request) -> dict[str, str]:
        reader = site.need_reader()
        a, b = str(request.path_params["a"]), str(request.path_params["b"])
        reader.bot_id(a)
        reader.bot_id(b)
        return {"a": a, "b": b}

    app = Starlette(routes=routes, exception_handlers={
        NotFound: not_found, Withheld: withheld, GameError: bad_replay, HTTPException: http_error,
        Exception: server_error, 500: server_error})
    app.add_middleware(BodyLimit, bound=bound)
    return app


def server_options() -> dict[str, Any]:
    """Return the HTTP server's settings every arena web server shares: h11 (pure Python, its header bound
    settable), request line and headers bounded by :data:`~arena.web.limits.HEADER_BYTES`, no access log, and the
    client's address the socket's (a proxy's ``X-Forwarded-For`` is believed only where configured)."""
    return {"http": "h11", "h11_max_incomplete_event_size": HEADER_BYTES, "log_level": "warning",
            "access_log": False, "lifespan": "off", "proxy_headers": False}


def serve(site: Site, host: str, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve ``site`` on ``host``:``port`` (0: a free port) until interrupted; ``on_ready(url)`` once listening.

    Raises :class:`OSError` when the address cannot be bound.
    """
    import socket

    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(False)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        if site.reader is not None:
            site.reader.start()  # the figures over the whole database, before the first page asks
        on_ready(f"http://{shown}:{bound}/")
        config = uvicorn.Config(build_app(site), **server_options())
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        if site.reader is not None:
            site.reader.close()
