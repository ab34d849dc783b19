"""Fixtures shared by the test modules."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

JS = Path(__file__).resolve().parent.parent / "bots" / "js"


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
