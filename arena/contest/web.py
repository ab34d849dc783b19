"""The contest's web application: its pages (:mod:`arena.contest.pages`, one module per concern) before
``arena serve``'s pages, and the server that runs it with the contest (:func:`serve_contest`).

:func:`contest_app` assembles the pages' modules (:data:`PAGES`), bounds every request body (the pages' own bounds,
a form's elsewhere: :mod:`arena.web.limits`), adds the security headers, and puts what the handlers read in the
application's state: ``contest``, ``store``, ``config`` and ``reader``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute

from arena.contest.config import ContestConfig
from arena.contest.pages import admin, api, authors, finals, scrimmages, sessions
from arena.contest.pages.common import FORM_BYTES, SecurityHeaders
from arena.contest.service import Contest
from arena.web.app import Site, build_app, server_options
from arena.web.data import Reader

log = logging.getLogger("arena.contest.web")

PAGES = (sessions, authors, admin, api, scrimmages, finals)
"""The modules of the contest's pages, each with its ``routes`` (in this order, before ``arena serve``'s)."""


def body_bounds(config: ContestConfig) -> dict[tuple[str, str], int]:
    """Return the bound of each (method, path) of the contest that takes more than a form's fields (uploads)."""
    return {**authors.bodies(config), **api.bodies(config)}


def contest_app(contest: Contest, reader: Reader) -> Starlette:
    """Return the contest's web application: its own pages and API before ``arena serve``'s pages of ``reader``."""
    config = contest.config
    links = [("/me", "My bots"), *([("/finals", "Finals")] if config.finals is not None else [])]
    site = Site(reader, links=links, private_faults=True, uploads=False, notice=lambda: contest.finals.notice())
    routes: list[BaseRoute] = [route for module in PAGES for route in module.routes]
    bodies = body_bounds(config)

    def bound(method: str, path: str) -> int:
        return bodies.get((method, path), FORM_BYTES)

    app = build_app(site, routes, bound)
    app.state.contest = contest
    app.state.store = contest.store
    app.state.config = config
    app.state.reader = reader
    app.add_middleware(finals.Notice)
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
