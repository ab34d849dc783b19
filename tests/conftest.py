"""Fixtures shared by the test modules, and the guard that keeps the ``process`` marker honest.

A test that starts a process or a server (a subprocess, bot processes, ``arena serve``, a contest, a gRPC server) is
marked ``process`` (registered in pyproject.toml), so that ``python -m pytest -m "not process"`` runs the pure tests
alone, in under a minute. The guard (:class:`ProcessGuard`) sees every process started (``fork_exec`` under
``subprocess``, ``multiprocessing`` and asyncio's subprocesses; ``os.fork``, ``posix_spawn``, ``os.system``) and
every server (a socket that listens, a gRPC server) while a test runs, its fixtures included: in a test not marked
``process`` that is an error of the test, naming what it started.
"""

from __future__ import annotations

import _posixsubprocess
import functools
import os
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from costs import STARTS_PROCESSES, starts_processes

JS = Path(__file__).resolve().parent.parent / "bots" / "js"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
@starts_processes
def browser() -> Iterator[Any]:
    """Return Debian's chromium driven by Playwright (its own browsers are never downloaded), one per module.

    Skips outside CI when chromium or Playwright is missing, with the reason; with CI=true that fails.
    """
    reason = None
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = reason or "playwright is not installed (pip install -e '.[test]')"
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests must run in CI: {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="session")
@starts_processes
def js_modules() -> Path:
    """Return bots/js/node_modules, installed with npm ci (from bots/js/package-lock.json) when missing.

    The JavaScript bot needs node and its npm packages; without node the test fails (CI installs the
    machine's node; the registry is reachable).
    """
    npm = shutil.which("npm")
    assert npm is not None and shutil.which("node") is not None, "node and npm are needed for the JS bot"
    if not all((JS / "node_modules" / package).is_dir() for package in ("@grpc/grpc-js", "protobufjs")):
        done = subprocess.run([npm, "ci", "--silent", "--no-audit", "--no-fund"], cwd=JS, capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0, done.stdout + done.stderr
    return JS / "node_modules"


PROCESS = "process"
"""The marker of a test that starts a process or a server."""


class ProcessGuard:
    """Notes the processes and servers started while a test not marked :data:`PROCESS` runs (see the module)."""

    def __init__(self) -> None:
        self.item: pytest.Item | None = None
        self.seen: dict[str, list[str]] = {}

    def note(self, what: str) -> None:
        item = self.item
        if item is not None and item.get_closest_marker(PROCESS) is None:
            self.seen.setdefault(item.nodeid, []).append(what)

    def watch(self, owner: Any, name: str, what: Callable[..., str]) -> None:
        """Note ``what(*args)`` whenever ``owner.name`` is called, before it runs."""
        original = getattr(owner, name, None)
        if original is None:
            return

        @functools.wraps(original)
        def watched(*args: Any, **kwargs: Any) -> Any:
            self.note(what(*args))
            return original(*args, **kwargs)

        setattr(owner, name, watched)

    def install(self) -> None:
        def program(args: Any, *_: Any) -> str:
            shown = [os.fsdecode(a) for a in list(args or [])[:3]]
            return f"the process {' '.join(shown)!r}"

        self.watch(subprocess, "_fork_exec", program)  # subprocess's own name for it (asyncio's processes too)
        self.watch(_posixsubprocess, "fork_exec", program)  # multiprocessing's
        for name in ("fork", "forkpty"):
            self.watch(os, name, lambda *_, name=name: f"os.{name}()")
        for name in ("posix_spawn", "posix_spawnp", "system"):
            self.watch(os, name, lambda first="", *_, name=name: f"os.{name}({str(first)!r})")
        self.watch(socket.socket, "listen", lambda sock, *_: f"a server listening on {sock.getsockname()!r}")
        import grpc
        from grpc import aio

        self.watch(grpc, "server", lambda *_: "a gRPC server")
        self.watch(aio, "server", lambda *_: "a gRPC server")


GUARD = ProcessGuard()


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("ARENA_PROCESS_GUARD", "1") != "0":
        GUARD.install()


TEST_SECONDS = float(os.environ.get("ARENA_TEST_TIMEOUT", "600"))
"""The most a test may take, its fixtures included (0: no cap). A hang guard, not a measure: the slowest test takes
about a minute, and a loop that never ends (a match whose rules never end it, a wait for a process that never
answers) fails the test with its traceback instead of hanging the suite."""


def _out_of_time(signum: int, frame: Any) -> None:
    # a BaseException (pytest's Failed): no `except Exception` of the code under test swallows it
    pytest.fail(f"the test took more than {TEST_SECONDS:g} s (ARENA_TEST_TIMEOUT)", pytrace=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``process`` every test that uses a fixture that starts processes (:func:`costs.starts_processes`)."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None or item.get_closest_marker(PROCESS) is not None:
            continue
        if any(getattr(fixture.func, STARTS_PROCESSES, False)
               for name in info.names_closure for fixture in info.name2fixturedefs.get(name, ())):
            item.add_marker(PROCESS)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    GUARD.item = item
    timed = TEST_SECONDS > 0 and threading.current_thread() is threading.main_thread()
    if timed:
        previous = signal.signal(signal.SIGALRM, _out_of_time)
        signal.setitimer(signal.ITIMER_REAL, TEST_SECONDS, 5.0)  # again every 5 s, should the first be swallowed
    try:
        yield
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        GUARD.item = None
        GUARD.seen.pop(item.nodeid, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    seen = GUARD.seen.get(item.nodeid) if call.when == "teardown" else None
    if seen and report.passed:
        report.outcome = "failed"
        shown = "; ".join(dict.fromkeys(seen))
        report.longrepr = (f"{item.nodeid} is not marked {PROCESS} but starts a process or a server: {shown}. Mark "
                           f"it @pytest.mark.{PROCESS} (ARENA_PROCESS_GUARD=0 turns this guard off)")
