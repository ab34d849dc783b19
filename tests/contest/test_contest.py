"""`arena contest` as authors and an attacker use it: a real contest process (its ladder playing the bundled bots),
`arena author add`, `arena submit` and the submission API, each author's view and nobody else's, a broken
submission rejected with its reason for its author only, a new version retiring the old, the web forms' CSRF
tokens and the login rate limit, and a kill -9 mid-build, then mid-check, that loses and doubles nothing.

Submissions are built and checked in the bot jail: without bubblewrap these tests skip (outside CI) or fail (CI).
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from costs import starts_processes

from arena.contest.archive import pack
from arena.contest.store import ContestStore, State

from .harness import (
    ARENA,
    Contest,
    add_author,
    call,
    log_in,
    need_jail,
    submit,
    wait_matches,
    wait_state,
    write_bot,
    write_config,
)

pytestmark = pytest.mark.process

# --------------------------------------------------------------------------------------------- one contest


@pytest.fixture(scope="module")
@starts_processes
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Contest, dict[str, str], Path]]:
    """One contest for the module's tests (the last one kills it with SIGKILL and starts it again)."""
    need_jail()
    folder = tmp_path_factory.mktemp("contest")
    config = write_config(folder, open_registration="true")
    tokens = {"alice": add_author(config, "alice")}  # by the command, once; the others straight into its store
    (folder / "data").mkdir(exist_ok=True)
    store = ContestStore(folder / "data" / "contest.db")
    try:
        tokens |= {"bob": store.authors.add("bob"), "root": store.authors.add("root", admin=True)}
    finally:
        store.close()
    contests = [Contest(config)]
    try:
        yield contests[0], tokens, folder
    finally:
        for contest in contests:
            contest.kill(signal.SIGTERM)


def test_a_submission_is_built_checked_and_played_and_its_author_alone_sees_its_report_and_logs(
        running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = running
    bot = write_bot(folder / "alice-bot", "firsty", build='["sh", "-c", "echo built > built.txt"]', mark="ALICELOG")
    done = submit(contest, bot, tokens["alice"], "--wait")
    assert done.returncode == 0, done.stderr
    assert "firsty v1: playing" in done.stdout
    status, mine = call(f"{contest.url}/api/contest/submissions", tokens["alice"])
    assert status == 200 and [s["state"] for s in mine["submissions"]] == ["playing"]
    first = mine["submissions"][0]
    assert first["ladder_name"] == "alice:firsty:v1"
    # built in the jail: its folder holds what the build wrote; checked: its report says so
    status, detail = call(f"{contest.url}/api/contest/submissions/{first['id']}", tokens["alice"])
    assert "build (" in detail["report"] and "PASS: alice:firsty:v1" in detail["report"]
    matches = wait_matches(contest, "alice:firsty:v1")
    assert any(s["bot"] == "alice:firsty:v1" for s in matches[0]["seats"])
    status, logs = call(f"{contest.url}/api/contest/submissions/{first['id']}/logs", tokens["alice"])
    assert status == 200
    # its check's log, and the log of a process the ladder started
    assert any(log["name"].startswith("check: ") and "MARK-ALICELOG starting" in log["text"] for log in logs["logs"])
    assert any(not log["name"].startswith("check") and "MARK-ALICELOG starting" in log["text"] for log in logs["logs"])

    # bob sees none of it: not its report, not its logs (one answer for "not yours" and "no such id")
    for path in (f"/api/contest/submissions/{first['id']}", f"/api/contest/submissions/{first['id']}/logs",
                 "/api/contest/submissions/" + "0" * 32):
        status, answer = call(contest.url + path, tokens["bob"])
        assert status == 404 and answer == {"error": "no such submission of yours"}, (path, answer)
    status, theirs = call(f"{contest.url}/api/contest/submissions", tokens["bob"])
    assert theirs["submissions"] == []
    # the admin sees it
    status, detail = call(f"{contest.url}/api/contest/submissions/{first['id']}", tokens["root"])
    assert status == 200 and detail["bot"] == "firsty"

    # a second version retires the first, which stays on the board with its matches
    done = submit(contest, write_bot(folder / "alice-bot", "firsty", version=2), tokens["alice"], "--wait")
    assert done.returncode == 0, done.stderr
    status, mine = call(f"{contest.url}/api/contest/submissions", tokens["alice"])
    assert [(s["version"], s["state"]) for s in mine["submissions"]] == [(2, "playing"), (1, "retired")]
    wait_matches(contest, "alice:firsty:v2")
    assert wait_matches(contest, "alice:firsty:v1", timeout=0)  # the old version keeps its matches


def test_a_broken_submission_is_rejected_with_its_reason_for_its_author_only(
        running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = running
    done = submit(contest, write_bot(folder / "bob-bot", "crashy", crash=True), tokens["bob"], "--wait")
    assert done.returncode == 1
    assert "crashy v1: rejected (arena check failed" in done.stdout
    assert "my bug" in done.stderr  # the report's end, the bot's own words
    status, mine = call(f"{contest.url}/api/contest/submissions", tokens["bob"])
    rejected = mine["submissions"][0]
    assert rejected["state"] == "rejected"
    status, answer = call(f"{contest.url}/api/contest/submissions/{rejected['id']}", tokens["alice"])
    assert status == 404
    # never in the ladder
    status, _ = call(f"{contest.url}/api/bot/{urllib.parse.quote('bob:crashy:v1')}")
    assert status == 404
    # a build that fails is rejected with its reason; so is an archive that is no archive
    broken = write_bot(folder / "bob-build", "builder", build='["sh", "-c", "echo no compiler; exit 3"]')
    done = submit(contest, broken, tokens["bob"], "--wait")
    assert done.returncode == 1 and "builder v1: rejected (build: the build exited with status 3)" in done.stdout
    status, answer = call(f"{contest.url}/api/contest/submissions", tokens["bob"], data=b"not a tar.gz",
                          headers={"Content-Type": "application/gzip"})
    assert status == 400 and "gzip" in answer["error"]


def test_a_submitted_bot_sees_no_other_submission_nor_the_contests_files(
        running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = running
    data = folder / "data"
    peeker = write_bot(folder / "peeker", "peeker")
    targets = [data / "contest.db", data / "ladder.db", data / "archives", data / "logs", folder / "contest.toml",
               folder / "alice-bot" / "bot.py"]
    probe = ("import os, sys\n"
             f"for path in {[str(t) for t in targets]!r}:\n"
             "    try:\n"
             "        os.listdir(path) if os.path.isdir(path) else open(path, 'rb').read(16)\n"
             "        print('peek', path, 'read', flush=True)\n"
             "    except OSError as exc:\n"
             "        print('peek', path, 'blocked', type(exc).__name__, flush=True)\n"
             # the folder of the submissions holds, for the jail, only its own (the path to it)
             f"print('peek bots:', sorted(os.listdir({str(data / 'bots')!r})), flush=True)\n")
    (peeker / "bot.py").write_text(probe + (peeker / "bot.py").read_text())
    done = submit(contest, peeker, tokens["bob"], "--wait")
    assert done.returncode == 0, done.stderr
    submission = next(s for s in call(f"{contest.url}/api/contest/submissions", tokens["bob"])[1]["submissions"]
                      if s["bot"] == "peeker")
    logs = call(f"{contest.url}/api/contest/submissions/{submission['id']}/logs", tokens["bob"])[1]["logs"]
    said = [line for log in logs if log["name"].startswith("check: ") for line in log["text"].splitlines()
            if line.startswith("peek ")]
    assert said[:len(targets)] == [f"peek {target} blocked FileNotFoundError" for target in targets]
    # other submissions' folders (the earlier tests' bots, outside) are not in its jail
    assert said[len(targets)] == f"peek bots: {[submission['id']]!r}"


def test_no_token_a_wrong_one_or_a_revoked_one_submits_nothing(running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = running
    data = pack(write_bot(folder / "eve-bot", "eve"))
    for token in (None, "arena_" + "x" * 43, tokens["alice"] + "x", "", "a" * 300):
        status, answer = call(f"{contest.url}/api/contest/submissions", token, data=data,
                              headers={"Content-Type": "application/gzip"})
        assert status == 401, (token, answer)
    config = folder / "contest.toml"
    mallory = add_author(config, "mallory")
    done = subprocess.run([*ARENA, "author", "revoke", "mallory", "--contest", str(config)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    status, answer = call(f"{contest.url}/api/contest/submissions", mallory, data=data)
    assert status == 401
    # the command line never takes a token
    done = subprocess.run([*ARENA, "submit", str(folder / "eve-bot"), "--to", contest.url], capture_output=True,
                          text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "ARENA_TOKEN"})
    assert done.returncode == 1 and "no token: set ARENA_TOKEN" in done.stderr


# ------------------------------------------------------------------------------------------ in a browser

def test_browser_an_author_uploads_watches_it_play_and_another_author_reaches_none_of_it(
        running: tuple[Contest, dict[str, str], Path], browser: Any, tmp_path: Path) -> None:
    contest, tokens, folder = running
    archive = tmp_path / "webby.tar.gz"
    archive.write_bytes(pack(write_bot(folder / "web-bot", "webby", mark="WEBLOG")))
    page = log_in(browser, contest.url, tokens["alice"])
    page.set_input_files("input[name=archive]", str(archive))
    page.click("form[action='/me/submit'] button")
    page.wait_for_selector("#state")
    own = page.url
    assert re.fullmatch(re.escape(contest.url) + r"/me/submission/[0-9a-f]{32}", own)
    deadline = time.monotonic() + 120
    while page.inner_text("#state") != "playing" and time.monotonic() < deadline:
        time.sleep(0.5)
        page.reload()
    assert page.inner_text("#state") == "playing", page.inner_text("#main")
    assert "PASS: alice:webby:v1" in page.inner_text("#report")
    # its first deal set complete (every rotation), its matches' replays are shown: from its own seat
    deadline = time.monotonic() + 90
    while not (shown := [m for m in wait_matches(contest, "alice:webby:v1") if m["replay"]]):
        assert time.monotonic() < deadline, "no complete deal set of webby"
        time.sleep(0.3)
    page.reload()
    assert "MARK-WEBLOG starting" in page.inner_text("#main")  # its log
    seat = next(s["seat"] for s in shown[0]["seats"] if s["bot"] == "alice:webby:v1")
    page.click(f"a[href='/match/{shown[0]['id']}?seat={seat}']")
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    assert page.get_attribute("body", "data-seat") == str(seat) and page.input_value("#seat") == str(seat)
    page.go_back()

    # bob, logged in, reaches none of alice's pages by their address, nor her submissions' ids through the API
    other = log_in(browser, contest.url, tokens["bob"])
    response = other.goto(own)
    assert response is not None and response.status == 404
    assert "MARK-WEBLOG" not in other.content() and "webby" not in other.inner_text("#main")
    # bob's page names alice's bot only where the public board does (an opponent he may choose), never her
    # submission or its report
    bobs = other.goto(contest.url + "/me").text()
    assert own.rsplit("/", 1)[1] not in bobs and "PASS: alice:webby" not in bobs and "MARK-WEBLOG" not in bobs
    admin = other.goto(contest.url + "/admin")
    assert admin is not None and admin.status == 404
    status, _ = call(contest.url + "/api/contest/submissions/" + own.rsplit("/", 1)[1], tokens["bob"])
    assert status == 404
    # bob's own rejected bot: its report quotes its crash, markup and all, as text that never runs
    dialogs: list[str] = []

    def seen(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    other.on("dialog", seen)
    other.goto(contest.url + "/me")
    other.click("a:has-text('crashy')")
    assert "<script>alert(1)</script> my bug" in other.inner_text("#report") and not dialogs
    # alice has two bots in the contest, the most it takes: a third name is refused, a new version is not
    status, answer = call(f"{contest.url}/api/contest/submissions", tokens["alice"],
                          data=pack(write_bot(folder / "third", "third")))
    assert status == 400 and "you have 2 bots in the contest" in answer["error"]

    # the operator disables webby from the admin page: it plays no more, and its author sees why
    admin_page = log_in(browser, contest.url, tokens["root"])
    admin_page.goto(contest.url + "/admin")
    admin_page.click("form[action^='/admin/disable/'] button >> nth=0")
    admin_page.wait_for_url(contest.url + "/admin")
    page.reload()
    disabled = [s for s in call(f"{contest.url}/api/contest/submissions", tokens["alice"])[1]["submissions"]
                if s["reason"] == "disabled by the operator"]
    assert len(disabled) == 1 and disabled[0]["state"] == "rejected"
    # everyone sees the public board with authors' names
    public = browser.new_context().new_page()
    public.goto(contest.url + "/")
    public.wait_for_selector("body[data-ready='1']", timeout=20_000)
    assert "alice:webby:v1" in public.inner_text("#board")
    response = public.goto(own)
    assert response is not None and response.url.endswith("/login")  # not logged in: the login form


def test_the_web_forms_need_their_csrf_token_and_logins_are_rate_limited(
        running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, _ = running
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def post(path: str, fields: dict[str, str]) -> tuple[int, str]:
        request = urllib.request.Request(contest.url + path, data=urllib.parse.urlencode(fields).encode(),
                                         method="POST")
        try:
            with opener.open(request, timeout=30) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()

    with opener.open(contest.url + "/login", timeout=30) as response:
        page = response.read().decode()
        assert "no-store" in response.headers["Cache-Control"]
        assert response.headers["X-Frame-Options"] == "DENY"
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None
    # a login without the form's token (a cross-site form post) is refused before the token is looked at
    status, _ = post("/login", {"token": tokens["alice"]})
    assert status == 403
    cookies = {c.name: c for c in jar}
    assert cookies["arena_login"].has_nonstandard_attr("HttpOnly")
    status, page = post("/login", {"token": tokens["alice"], "csrf": csrf.group(1)})
    assert status == 200 and "Bots of alice" in page
    session = {c.name: c for c in jar}["arena_session"]
    assert session.has_nonstandard_attr("HttpOnly") and session.get_nonstandard_attr("SameSite") == "strict"
    # an upload form post without its CSRF token is refused
    status, page = post("/me/submit", {"archive": "x"})
    assert status in (400, 403) and "Not submitted" in page
    # this contest takes registrations: a new author gets a token on the page, once, and it works at once
    with opener.open(contest.url + "/register", timeout=30) as response:
        csrf = re.search(r'name="csrf" value="([^"]+)"', response.read().decode())
    assert csrf is not None
    status, page = post("/register", {"name": "carol", "csrf": csrf.group(1)})
    token = re.search(r"<pre>(arena_[A-Za-z0-9_-]+)</pre>", page)
    assert status == 200 and token is not None
    assert call(f"{contest.url}/api/contest/submissions", token.group(1))[1] == {"author": "carol",
                                                                                "submissions": []}
    status, page = post("/register", {"name": "carol", "csrf": csrf.group(1)})
    assert status == 400 and "carol" in page  # a name is taken once
    # a login brute force hits the limit (10 tries a minute from one address)
    with opener.open(contest.url + "/login", timeout=30) as response:
        csrf = re.search(r'name="csrf" value="([^"]+)"', response.read().decode())
    assert csrf is not None
    codes = [post("/login", {"token": f"arena_guess{i}", "csrf": csrf.group(1)})[0] for i in range(12)]
    limited = codes.index(429)  # the logins of the tests before count too: the limit is the address's
    assert 1 <= limited <= 9 and codes == [401] * limited + [429] * (12 - limited)
    status, page = post("/login", {"token": tokens["alice"], "csrf": csrf.group(1)})
    assert status == 429 and "wait a minute" in page  # the right token too, until the minute is over


# ------------------------------------------------------------------------------------------- kill -9


def test_a_contest_killed_mid_build_and_mid_check_resumes_with_nothing_lost_doubled_or_stored_twice(
        running: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = running
    config = folder / "contest.toml"
    token = tokens["bob"]
    # a build of 3 s, and a bot that takes 3 s to start: time enough to be caught building, then checking
    slow = write_bot(folder / "slow", "slow", build='["sh", "-c", "sleep 3; echo built > built.txt"]', slow_start=3)
    done = submit(contest, slow, token)
    assert done.returncode == 0, done.stderr
    status, mine = call(f"{contest.url}/api/contest/submissions", token)
    before = len(mine["submissions"])
    slow_id = mine["submissions"][0]["id"]
    wait_state(contest, token, slow_id, ("building",))
    contest.kill()  # kill -9, mid-build and mid-match
    again = Contest(config)
    try:
        wait_state(again, token, slow_id, ("checking",))
    finally:
        again.kill()  # kill -9, mid-check
    # a playing bot's built folder lost meanwhile (a restored backup, a wiped disk): it is built and checked again
    store = ContestStore(folder / "data" / "contest.db")
    try:
        lost = next(s for s in store.submissions.all("alice") if s.state is State.PLAYING)
    finally:
        store.close()
    shutil.rmtree(folder / "data" / "bots" / lost.id)
    third = Contest(config)
    try:
        status, mine = call(f"{third.url}/api/contest/submissions", token)
        assert status == 200 and len(mine["submissions"]) == before
        final = wait_state(third, token, slow_id, ("playing",))
        assert final["reason"] in ("", "taken up again after a restart")
        wait_matches(third, "bob:slow:v1")
        back = wait_state(third, tokens["alice"], lost.id, ("playing",))
        assert back["version"] == lost.version and (folder / "data" / "bots" / lost.id / "bot.py").is_file()
        # SIGTERM (systemd, docker stop) stops it in order, as Ctrl-C does, and it says so
        third.process.send_signal(signal.SIGTERM)
        assert third.process.wait(60) == 0
        assert third.process.stderr is not None
        said = third.process.stderr.read()
        assert "SIGTERM: stopping" in said and "stopped; the same command resumes it" in said, said
    finally:
        third.kill(signal.SIGTERM)
    store = ContestStore(folder / "data" / "contest.db")
    try:
        assert [s.state.value for s in store.submissions.all("bob") if s.bot == "slow"] == ["playing"]
    finally:
        store.close()
    db = sqlite3.connect(folder / "data" / "ladder.db")
    try:
        rows = db.execute("SELECT deal, rotation FROM matches").fetchall()
    finally:
        db.close()
    assert rows and len(rows) == len(set(rows))  # no (deal, rotation) stored twice
