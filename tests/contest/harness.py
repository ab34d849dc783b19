"""A real `arena contest` process and what its tests do with it: start it, add authors, submit, call the API.

Shared by tests/contest/test_contest.py and the adversarial suite's contest tests.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.launch.sandbox import Isolation, detect_sandbox

ROOT = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]

BOT = '''from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


class First(CabangaBot):
    def play(self, view, choices):
        self.debug(f"DEBUG-{mark}: the first of {{len(choices)}}")
        return choices[0]

    def throw(self, view, candidates):
        return []


if __name__ == "__main__":
    print("MARK-{mark} starting", flush=True)
    run(First())
'''


def need_jail() -> None:
    sandbox = detect_sandbox()
    if sandbox.isolation is not Isolation.JAIL:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must have the bot jail: {sandbox.describe()}")
        pytest.skip(f"a contest builds and checks submissions in the bot jail, and there is none here: "
                    f"{sandbox.describe()}")


def write_config(folder: Path, **extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "house.toml").write_text("".join(f'[[bot]]\nbundled = "cabanga-{name}"\n\n'
                                               for name in ("greedy", "tidy", "random")))
    lines = ['game = "cabanga"', "seats = 3", "options = { rounds = 1 }", 'listen = "127.0.0.1:0"',
             'baseline = "house.toml"', 'data = "data"', *(f"{k} = {v}" for k, v in extra.items()),
             "[submissions]", "check_rounds = 1", "per_day = 5", "build_seconds = 60"]
    path = folder / "contest.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_bot(folder: Path, name: str, *, build: str | None = None, mark: str = "", crash: bool = False,
              version: int = 1, slow_start: float = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    text = BOT.format(mark=mark or name)
    if slow_start:
        text = text.replace("    run(First())", f"    import time\n    time.sleep({slow_start})\n    run(First())")
    if crash:
        text = text.replace("return choices[0]", "raise RuntimeError('<script>alert(1)</script> my bug')")
    (folder / "bot.py").write_text(text + f"# version {version}\n")
    manifest = f'name = "{name}"\ncommand = ["bot.py"]\ngames = ["cabanga"]\nruntime = "python"\n'
    if build is not None:
        manifest += f"build = {build}\n"
    (folder / "bot.toml").write_text(manifest)
    return folder


class Contest:
    """A running `arena contest` process, its address and its log."""

    def __init__(self, config: Path) -> None:
        self.config = config
        self.log = tempfile.NamedTemporaryFile(mode="w+", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen([*ARENA, "contest", str(config)], cwd=config.parent, stdout=self.log,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert self.process.stderr is not None
        deadline = time.monotonic() + 90
        seen = ""
        self.url = ""
        while time.monotonic() < deadline and not self.url:
            ready, _, _ = select.select([self.process.stderr], [], [], 1)
            if ready:
                line = self.process.stderr.readline()
                if not line and self.process.poll() is not None:
                    break
                seen += line
                found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
                if found:
                    self.url = found.group(1)
        if not self.url:
            self.kill()
            raise AssertionError(f"arena contest did not start: {seen}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)
            self.process.wait(30)
        # every bot process of the contest is in its session: none may outlive it
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            try:
                if os.getsid(int(pid)) == self.process.pid:
                    os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.process.stderr is not None:
            self.process.stderr.close()


def add_author(config: Path, name: str, *extra: str) -> str:
    done = subprocess.run([*ARENA, "author", "add", name, "--contest", str(config), *extra], capture_output=True,
                          text=True, timeout=60, cwd=config.parent)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token.startswith("arena_") and "shown this once" in done.stderr
    return token


def call(url: str, token: str | None = None, data: bytes | None = None, method: str | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=data, headers=sent, method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        body, status = exc.read(), int(exc.code)
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode("utf-8", "replace")


@dataclass
class Submitted:
    returncode: int
    stdout: str
    stderr: str


def submit(contest: Contest, folder: Path, token: str, *more: str) -> Submitted:
    """Run `arena submit` as the author would (in-process: the command's own code, without a new interpreter)."""
    result = CliRunner().invoke(main, ["submit", str(folder), "--to", contest.url, *more], env={"ARENA_TOKEN": token})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Submitted(result.exit_code, result.stdout, result.stderr)


def wait_state(contest: Contest, token: str, submission_id: str, states: tuple[str, ...],
               timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        status, data = call(f"{contest.url}/api/contest/submissions/{submission_id}", token)
        assert status == 200, data
        if data["state"] in states or time.monotonic() > deadline:
            assert data["state"] in states, data
            return dict(data)
        time.sleep(0.6)  # the API takes 120 calls a minute from an address


def wait_matches(contest: Contest, bot: str, count: int = 1, timeout: float = 90) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        status, data = call(f"{contest.url}/api/bot/{urllib.parse.quote(bot)}/matches")
        matches = list(data["matches"]) if status == 200 else []
        if len(matches) >= count or time.monotonic() > deadline:
            assert len(matches) >= count, (status, data)
            return matches
        time.sleep(0.2)


def log_in(browser: Any, url: str, token: str) -> Any:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "/me")  # not logged in: sent to the login form
    page.fill("input[name=token]", token)
    page.click("form[action='/login'] button")
    page.wait_for_selector("h1:has-text('Bots of')")
    return page
