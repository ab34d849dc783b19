"""Every request body bounded before it is read, on every route of ``arena serve`` and ``arena contest``.

:class:`BodyLimit` sits in front of the application: a request that declares a body over its route's bound
(``Content-Length``) is answered 413 at once, before a byte of it is read; one that sends more than it declared,
or sends it in chunks, is cut when it passes the bound, the endpoint reading it gets a 413
(:class:`~starlette.exceptions.HTTPException`); and a body left unread, whatever the answer, is never read after
it: the answer closes the connection.
So no route holds more than its bound of any request, whoever sends it. Request headers are bounded by the HTTP
server itself (:data:`HEADER_BYTES`, uvicorn's ``h11_max_incomplete_event_size``).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SMALL_BODY = 16 * 1024
"""The bound of a route that takes no upload: a form's fields, or nothing."""
HEADER_BYTES = 32 * 1024
"""The most a request's line and headers may hold together (the HTTP server refuses more)."""

BodyBound = Callable[[str, str], int]
"""The bound of a request body in bytes, by (method, path)."""


def too_large(limit: int) -> str:
    """Return the message of a body over ``limit`` bytes."""
    size = f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit // 1024} KiB" \
        if limit % 1024 == 0 else f"{limit} bytes"
    return f"the request's body is over {size}, the most this page takes"


class BodyLimit:
    """The ASGI middleware that bounds every request body by ``bound(method, path)`` (see the module)."""

    def __init__(self, app: ASGIApp, bound: BodyBound) -> None:
        self.app = app
        self.bound = bound

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.bound(scope["method"], scope["path"])
        declared = _content_length(scope)
        if declared is not None and (declared < 0 or declared > limit):
            await _refuse(scope, send, limit)
            return
        received = 0
        # a body the application leaves unread (a GET page, a refusal) is not read after the answer either: the
        # connection is closed instead, or the HTTP server would read it all to keep the connection alive
        unread = bool(declared) or any(name == b"transfer-encoding" for name, _ in scope["headers"])

        async def bounded() -> Message:
            nonlocal received, unread
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise HTTPException(413, too_large(limit))
                unread = unread and bool(message.get("more_body", False))
            return message

        async def closing(message: Message) -> None:
            if message["type"] == "http.response.start" and unread:
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
            await send(message)

        await self.app(scope, bounded, closing)


def _content_length(scope: Scope) -> int | None:
    """Return the declared body length (-1 for one that is not a number), or ``None`` where none is declared."""
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() and len(text) < 20 else -1
    return None


async def _refuse(scope: Scope, send: Send, limit: int) -> None:
    message = too_large(limit)
    if str(scope["path"]).startswith("/api/"):
        body, kind = json.dumps({"error": message}).encode(), b"application/json"
    else:
        body, kind = f"{message}\n".encode(), b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})
