"""What the example bots' tests (tests/test_cpp_bot.py, test_go_bot.py, test_java_bot.py, test_rust_bot.py) share:
a missing toolchain skips with the reason, or fails under CI=true (.ci/run installs it); and a build by the
bot's own build.sh."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest


def unavailable(reason: str) -> NoReturn:
    """Skip the test for ``reason`` (a package missing here); under CI=true fail instead: CI installs it."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


def build_script(folder: Path, *, timeout: float = 600, env: dict[str, str] | None = None) -> Path:
    """Build the bot in ``folder`` with its build.sh (in ``env``, default this process's); return its program,
    ``build/arena-bot``."""
    done = subprocess.run(["sh", str(folder / "build.sh")], capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder / "build" / "arena-bot"
