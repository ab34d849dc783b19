"""Every request body bounded before it is read (arena.web.limits.BodyLimit), driven as the HTTP server drives an
ASGI application: a declared body over the bound is refused without a byte read, a streamed one is cut at the
bound, a body left unread closes the connection, and one within its bound passes whole."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.web.app import Site, body_bound, build_app, server_options
from arena.web.limits import SMALL_BODY, BodyLimit

LIMIT = 1000


def application() -> Starlette:
    async def read(request: Request) -> Response:
        return JSONResponse({"bytes": len(await request.body())})

    async def ignore(request: Request) -> Response:
        return JSONResponse({"read": False})

    app = Starlette(routes=[Route("/read", read, methods=["POST"]), Route("/ignore", ignore, methods=["POST"])])
    app.add_middleware(BodyLimit, bound=lambda method, path: LIMIT)
    return app


def drive(app: Any, path: str, chunks: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[int, dict[str, str],
                                                                                                 bytes, int]:
    """Send a request of ``chunks`` to ``app``; return its status, headers, body and how many chunks it read."""
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 80)}
    asked = 0
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        nonlocal asked
        asked += 1
        if asked > len(chunks):
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": chunks[asked - 1], "more_body": asked < len(chunks)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], {k.decode(): v.decode() for k, v in start["headers"]}, body, asked


def test_a_body_declared_over_its_bound_is_refused_before_a_byte_is_read() -> None:
    status, headers, body, asked = drive(application(), "/read", [b"x" * 600] * 1000,
                                         [(b"content-length", b"600000")])
    assert (status, asked) == (413, 0) and headers["connection"] == "close"
    assert b"over 1000 bytes" in body
    status, _, _, asked = drive(application(), "/read", [b"x"], [(b"content-length", b"-1")])
    assert (status, asked) == (413, 0)  # a length that is no length


def test_a_streamed_body_is_cut_at_its_bound() -> None:
    chunks = [b"x" * 300] * 100
    status, headers, _, asked = drive(application(), "/read", chunks, [(b"transfer-encoding", b"chunked")])
    assert status == 413 and asked == 4 and headers["connection"] == "close"  # 1200 bytes: past the bound
    # a body that lies about its length too
    status, _, _, asked = drive(application(), "/read", chunks, [(b"content-length", b"10")])
    assert status == 413 and asked == 4


def test_a_body_within_its_bound_passes_whole_and_keeps_the_connection() -> None:
    status, headers, body, _ = drive(application(), "/read", [b"x" * 500, b"y" * 500],
                                     [(b"content-length", b"1000")])
    assert status == 200 and json.loads(body) == {"bytes": 1000} and "connection" not in headers


def test_a_body_left_unread_closes_the_connection_instead_of_being_read() -> None:
    status, headers, _, asked = drive(application(), "/ignore", [b"x" * 300] * 100,
                                      [(b"transfer-encoding", b"chunked")])
    assert status == 200 and asked == 0 and headers["connection"] == "close"


def test_arena_serve_bounds_every_route_and_a_contest_takes_no_replay_upload() -> None:
    assert body_bound("POST", "/api/replay") == 16 * 1024 * 1024
    assert body_bound("POST", "/") == body_bound("GET", "/api/board") == SMALL_BODY
    paths = {getattr(route, "path", "") for route in build_app(Site(None)).routes}
    assert "/api/replay" in paths
    paths = {getattr(route, "path", "") for route in build_app(Site(None, uploads=False)).routes}
    assert "/api/replay" not in paths and "/replay" not in paths
    status, _, body, asked = drive(build_app(Site(None)), "/api/replay", [b"{}"],
                                   [(b"content-length", b"%d" % (17 * 1024 * 1024))])
    assert (status, asked) == (413, 0) and json.loads(body)["error"].startswith("the request's body is over 16 MiB")


def test_the_http_server_believes_no_forwarded_address_and_bounds_headers() -> None:
    options = server_options()
    assert options["proxy_headers"] is False and options["http"] == "h11"
    assert 0 < options["h11_max_incomplete_event_size"] <= 64 * 1024
