"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

JS = Path(__file__).resolve().parent.parent / "bots" / "js"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
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
