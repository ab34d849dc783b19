"""A hostile author against a real `arena contest` in the strict jail: what the contest must keep to itself.

- A submitted bot that recomputes the deals with the arena's own code and the defaults (the seed a contest took
  when its config named none, the old and the new ways of deriving a deal's seed) finds none of its hands.
- Two authors whose ladder names mangle alike (``alice:my_bot:v1``, ``alice_my:bot:v1``) each see their own logs
  only, by page and by API.
- A 600 MiB body sent to every route, declared or chunked, is refused within its bound: the contest's memory
  stays where it was (measured on the process).
- A forged ``X-Forwarded-For`` does not dodge the rate limits of a contest that is not behind a proxy.
- An upload refusal, a rejection's reason and a build report name no path of the host.
- The contest's secret seed appears in no page, API answer, log or replay.
"""

from __future__ import annotations

import hashlib
import hmac
import http.cookiejar
import json
import random
import re
import socket
import sqlite3
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from io import BytesIO
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from costs import starts_processes
from starlette.routing import Mount, Route

from arena.contest.config import load_config
from arena.contest.store import ContestStore
from arena.contest.web import contest_app
from arena.games import get_game
from tests.contest.harness import Contest, call, need_jail, submit, wait_matches, wait_state, write_config

pytestmark = pytest.mark.process

SPY = '''import hashlib, hmac, random
from arena.games import get_game
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run

MARK = "{mark}"


def old_deal_seed(ladder, deal):  # how the arena derived a deal's seed before its seeds were keyed
    return random.Random(f"arena-ladder/{{ladder}}/deal/{{deal}}").randrange(2**53)


def keyed_deal_seed(ladder, deal):  # how it derives them now, read from its code
    digest = hmac.new(f"arena-ladder/{{ladder}}".encode(), f"deal/{{deal}}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") >> 11


# the seeds a contest's defaults could give: small ladder seeds (a contest's defaulted to 1), and small match seeds
CANDIDATES = sorted({{f(ladder, deal) for ladder in range(8) for deal in range(40)
                     for f in (old_deal_seed, keyed_deal_seed)}} | set(range(64)))


def recompute(options, seats, hand):
    """Return the seeds among CANDIDATES that deal ``hand`` (the cards not played yet) to some seat."""
    game = get_game("cabanga")
    parsed = game.options(options)
    mine = set(hand)
    return [seed for seed in CANDIDATES for seat in range(seats)
            if mine <= set(game.new_match(seats, seed, parsed).view(seat).hand)]


class Spy(CabangaBot):
    def on_match_start(self, info):
        self.info = info
        self.tried = False

    def play(self, view, choices):
        if not self.tried and len(view.hand) >= 5:
            self.tried = True
            found = recompute(self.info.options, len(self.info.names), view.hand)
            print(f"{{MARK}} tried {{len(CANDIDATES)}} seeds on {{len(view.hand)}} cards:",
                  f"RECOMPUTED {{found}}" if found else "nothing", flush=True)
        for line in range(20):
            print(f"{{MARK}} line {{line}} of a log only my author may read", flush=True)
        return choices[0]

    def throw(self, view, candidates):
        return []


if __name__ == "__main__":
    run(Spy())
'''


def write_spy(folder: Path, name: str, mark: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(SPY.format(mark=mark))
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["bot.py"]\ngames = ["cabanga"]\n'
                                     'runtime = "python"\n')
    return folder


@pytest.fixture(scope="module")
@starts_processes
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Contest, dict[str, str], Path]]:
    """A contest as its operator writes it with no seed, taking registrations, not behind a proxy; two authors
    whose bots' ladder names mangle alike, each with a spy that plays."""
    need_jail()
    folder = tmp_path_factory.mktemp("hostile")
    config = write_config(folder, open_registration="true")
    (folder / "data").mkdir()
    store = ContestStore(folder / "data" / "contest.db")
    try:
        tokens = {name: store.authors.add(name) for name in ("alice", "alice_my")}
    finally:
        store.close()
    contest = Contest(config)
    try:
        for author, bot, mark in (("alice", "my_bot", "MARK-ALICE"), ("alice_my", "bot", "MARK-MALLORY")):
            done = submit(contest, write_spy(folder / author, bot, mark), tokens[author], "--wait")
            assert done.returncode == 0, done.stderr + done.stdout
        yield contest, tokens, folder
    finally:
        contest.kill()


def own_submission(contest: Contest, token: str) -> dict[str, Any]:
    status, mine = call(f"{contest.url}/api/contest/submissions", token)
    assert status == 200
    return dict(mine["submissions"][0])


# ------------------------------------------------------------------------------------------------ the deals


def spy_module() -> dict[str, Any]:
    scope: dict[str, Any] = {"__name__": "spy"}
    exec(SPY.format(mark="TEST"), scope)  # the test's own text: the spy's recompute, run here
    return scope


def test_the_spy_would_recompute_a_deal_whose_seed_it_can_guess() -> None:
    """The positive control: the spy's method finds a hand dealt from a guessable seed, by either derivation."""
    spy = spy_module()
    game = get_game("cabanga")
    options = {"rounds": 1}
    for seed in (spy["old_deal_seed"](1, 3), spy["keyed_deal_seed"](1, 7), 5):
        hand = game.new_match(3, seed, game.options(options)).view(1).hand
        assert spy["recompute"](options, 3, hand[2:]) == [seed]


def test_a_bot_in_the_contest_cannot_recompute_its_deals(hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, _, folder = hostile
    wait_matches(contest, "alice:my_bot:v1", count=3)
    wait_matches(contest, "alice_my:bot:v1", count=3)
    said = [line for path in (folder / "data" / "logs").rglob("*.log") for line in
            path.read_text(errors="replace").splitlines() if " tried " in line and line.startswith("MARK-")]
    assert len(said) >= 4, said  # the spies ran their search in the check and in ladder matches
    assert all(line.endswith("nothing") for line in said), said
    # the seed is secret, drawn (128 bits), and kept by the ladder's database
    db = sqlite3.connect(folder / "data" / "ladder.db")
    try:
        (ladder,) = db.execute("SELECT value FROM meta WHERE key = 'ladder'").fetchone()
    finally:
        db.close()
    identity = json.loads(ladder)
    assert identity["drawn"] is True and identity["seed"] > 2**64


# ------------------------------------------------------------------------------------------------- the logs


def page_as(contest: Contest, token: str, path: str) -> str:
    """Return the page ``path`` as the author of ``token`` sees it, logged in by the form."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with opener.open(contest.url + "/login", timeout=30) as response:
        csrf = re.search(r'name="csrf" value="([^"]+)"', response.read().decode())
    assert csrf is not None
    data = urllib.parse.urlencode({"token": token, "csrf": csrf.group(1)}).encode()
    with opener.open(urllib.request.Request(contest.url + "/login", data=data, method="POST"), timeout=30):
        pass
    try:
        with opener.open(contest.url + path, timeout=30) as response:
            return str(response.read().decode())
    except urllib.error.HTTPError as exc:
        return f"{exc.code} {exc.read().decode()}"


def test_authors_whose_names_mangle_alike_see_their_own_logs_only(
        hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, _ = hostile
    wait_matches(contest, "alice:my_bot:v1", count=2)
    wait_matches(contest, "alice_my:bot:v1", count=2)
    own = {"alice": "MARK-ALICE", "alice_my": "MARK-MALLORY"}
    for author, mark in own.items():
        other = next(m for a, m in own.items() if a != author)
        submission = own_submission(contest, tokens[author])
        status, logs = call(f"{contest.url}/api/contest/submissions/{submission['id']}/logs", tokens[author])
        assert status == 200
        played = [log for log in logs["logs"] if not log["name"].startswith("check")]
        assert played and all(submission["id"] in log["name"] for log in played)
        text = "".join(log["text"] for log in logs["logs"])
        assert f"{mark} line" in text and other not in text, author
        page = page_as(contest, tokens[author], f"/me/submission/{submission['id']}")
        assert f"{mark} line" in page and other not in page, author
        # and the other's submission is not found, by API or page
        theirs = own_submission(contest, tokens[next(a for a in own if a != author)])
        status, answer = call(f"{contest.url}/api/contest/submissions/{theirs['id']}/logs", tokens[author])
        assert status == 404, answer
        assert page_as(contest, tokens[author], f"/me/submission/{theirs['id']}").startswith("404")


# ---------------------------------------------------------------------------------------- bodies and memory

BIG = 600 * 1024 * 1024
CHUNK = 1024 * 1024


def peak_memory(pid: int) -> int:
    """Return the process's peak resident memory in bytes (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def every_route(config: Path) -> list[tuple[str, str]]:
    """Return (method, path) of every route of the contest's web application, its parameters filled in."""
    app = contest_app(SimpleNamespace(config=load_config(config), store=None), None)  # type: ignore[arg-type]
    values = {"id": "0" * 32, "name": "x", "match_id": "1", "a": "x", "b": "y", "action": "revoke", "target": "x",
              "game": "cabanga", "n": "0"}
    found: list[tuple[str, str]] = [("POST", "/nowhere")]
    for route in app.routes:
        if isinstance(route, Mount):
            found.append(("POST", route.path + "/style.css"))
        elif isinstance(route, Route):
            path = re.sub(r"\{(\w+)(?::\w+)?\}", lambda m: values[m.group(1)], route.path)
            found += [(method, path) for method in sorted(route.methods or {"GET"}) if method != "HEAD"]
    return sorted(set(found))


def send_big(url: str, method: str, path: str, *, chunked: bool, token: str = "") -> tuple[int, str]:
    """Send a body of up to :data:`BIG` bytes to ``path``; return the bytes the server took before it closed the
    connection, and its status line (empty when it sent none)."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {BIG}"
    if token:
        framing += f"\r\nAuthorization: Bearer {token}"
    sent = 0
    with socket.create_connection((host, int(port)), timeout=20) as sock:
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/gzip\r\n"
                     f"{framing}\r\n\r\n".encode())
        block = b"\0" * CHUNK
        piece = b"%x\r\n" % CHUNK + block + b"\r\n" if chunked else block
        try:
            while sent < BIG:
                sock.sendall(piece)
                sent += CHUNK
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            pass
        try:
            answer = sock.recv(4096).decode("latin-1")
        except (ConnectionResetError, TimeoutError):
            answer = ""
    return sent, answer.split("\r\n", 1)[0]


def test_a_600_mib_body_to_every_route_is_refused_within_its_bound(
        hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = hostile
    routes = every_route(folder / "contest.toml")
    assert ("POST", "/api/contest/submissions") in routes and ("POST", "/login") in routes
    assert ("POST", "/api/replay") not in routes  # a contest takes no anonymous replay upload
    before = peak_memory(contest.process.pid)
    taken: dict[tuple[str, str, bool], int] = {}
    answers: dict[tuple[str, str, bool], str] = {}
    for method, path in routes:
        for chunked in (False, True):
            sent, status = send_big(contest.url, method, path, chunked=chunked)
            taken[method, path, chunked] = sent
            answers[method, path, chunked] = status
            # cut short (a page that reads no body answers, then closes): nobody took 600 MiB
            assert sent < BIG, (method, path, chunked, status)
    for method, path in routes:
        # a body declared too big is refused before a byte of it is read
        assert answers[method, path, False] in ("", "HTTP/1.1 413 Request Entity Too Large"), (method, path)
    for path in ("/login", "/register"):
        # and one sent in chunks, where it is read, once it passes the bound
        assert answers["POST", path, True] in ("", "HTTP/1.1 413 Request Entity Too Large"), path
    # an author's upload too, whose bound is the archive's (8 MiB)
    for chunked in (False, True):
        sent, status = send_big(contest.url, "POST", "/api/contest/submissions", chunked=chunked,
                                token=tokens["alice"])
        assert sent < BIG and status in ("", "HTTP/1.1 413 Request Entity Too Large"), (chunked, status)
    grown = peak_memory(contest.process.pid) - before
    print(f"the contest's peak memory grew by {grown / 2**20:.1f} MiB over {len(taken)} requests of 600 MiB; "
          f"the most taken by one: {max(taken.values()) / 2**20:.0f} MiB")
    # the largest bound is an upload (8 MiB); what the kernel buffers is not the contest's memory
    assert grown < 48 * 2**20, grown
    # and it still serves
    assert call(f"{contest.url}/api/board")[0] == 200


# ------------------------------------------------------------------------------------------------- paths


def archive(*entries: tuple[str, bytes | None, bytes]) -> bytes:
    """Return a .tar.gz of (name, link target or None, content) entries, as a hostile author makes one."""
    out = BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, link, content in entries:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link.decode()
            else:
                info.size = len(content)
            tar.addfile(info, BytesIO(content) if link is None else None)
    return out.getvalue()


def test_refusals_reasons_and_reports_name_no_host_path(hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = hostile
    host = {str(folder), str(folder.resolve()), str(Path(__file__).resolve().parents[2])}  # and arena's checkout
    manifest = b'name = "pathy"\ncommand = ["bot.py"]\ngames = ["cabanga"]\nruntime = "python"\n'
    refused = {
        "no manifest": archive(("bot.py", None, b"print(1)\n")),
        "manifest a link": archive(("bot.py", None, b"print(1)\n"), ("bot.toml", b"/etc/passwd", b"")),
        "manifest not toml": archive(("bot.toml", None, b"name = ["),),
        "a control character": archive(("bot.toml", None, manifest), ("lib/a\nb.py", None, b"")),
    }
    for case, data in refused.items():
        status, answer = call(f"{contest.url}/api/contest/submissions", tokens["alice"], data=data,
                              headers={"Content-Type": "application/gzip"})
        assert status == 400, (case, answer)
        assert not [h for h in host if h in answer["error"]], (case, answer)
    assert "control character" in answer["error"]
    # a build that prints where its files are: the report and the reason show them relative to the upload
    bot = folder / "pathy"
    bot.mkdir()
    (bot / "bot.py").write_text("print(1)\n")
    (bot / "bot.toml").write_bytes(manifest + b'build = ["sh", "-c", "find / -name bot.py 2>/dev/null; '
                                              b'ls /nowhere/bot.py; exit 3"]\n')
    done = submit(contest, bot, tokens["alice"])
    assert done.returncode == 0, done.stderr
    pathy = own_submission(contest, tokens["alice"])
    final = wait_state(contest, tokens["alice"], pathy["id"], ("rejected",))
    status, detail = call(f"{contest.url}/api/contest/submissions/{pathy['id']}", tokens["alice"])
    said = json.dumps(detail)
    assert "exited with status 3" in final["reason"] and "bot.py" in detail["report"]
    assert not [h for h in host if h in said], said


# ------------------------------------------------------------------------------------------- the seed shown


def test_the_secret_seed_is_in_no_page_answer_log_or_replay(hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, tokens, folder = hostile
    matches = wait_matches(contest, "alice:my_bot:v1", count=3)
    db = sqlite3.connect(folder / "data" / "ladder.db")
    try:
        (ladder,) = db.execute("SELECT value FROM meta WHERE key = 'ladder'").fetchone()
        deal_seeds = [str(s) for (s,) in db.execute("SELECT seed FROM deals")]
    finally:
        db.close()
    secret = str(json.loads(ladder)["seed"])
    shown = [call(contest.url + path)[1] for path in ("/", "/matches", "/api/summary", "/api/board", "/api/matches")]
    shown += [call(f"{contest.url}/api/match/{m['id']}")[1] for m in matches if m["replay"]]
    shown += [call(f"{contest.url}/api/contest/submissions", token)[1] for token in tokens.values()]
    everything = json.dumps(shown)
    assert secret not in everything and not [s for s in deal_seeds if s in everything]
    logs = [path.read_text(errors="replace") for path in (folder / "data" / "logs").rglob("*.log")]
    contest.log.flush()
    logs.append(Path(contest.log.name).read_text(errors="replace"))
    assert not [log for log in logs if secret in log]


def test_a_deal_seed_is_a_keyed_hash_of_its_number() -> None:
    """HMAC-SHA256 of the deal's number under the ladder seed: one bit of the secret, or another purpose, and
    the seeds share nothing; the same secret gives the same seeds (a resumed ladder, a verified export)."""
    from arena.ladder.ladder import DEAL_SEED_BITS, deal_seed

    def expected(secret: int, deal: int, purpose: str) -> int:
        digest = hmac.new(f"arena-ladder/{secret}".encode(), f"{purpose}/{deal}".encode(), hashlib.sha256).digest()
        return int.from_bytes(digest[:8], "big") >> (64 - DEAL_SEED_BITS)

    secret = random.Random(5).getrandbits(128)
    seeds = [deal_seed(secret, deal) for deal in range(200)]
    assert seeds == [expected(secret, deal, "deal") for deal in range(200)]
    assert all(0 <= s < 2**DEAL_SEED_BITS for s in seeds) and len(set(seeds)) == 200
    assert not set(seeds) & {deal_seed(secret ^ 1, deal) for deal in range(200)}
    assert not set(seeds) & {deal_seed(secret, deal, "scrimmage") for deal in range(200)}


# ------------------------------------------------------------------------------------------- rate limits
# last: it spends the address's logins and registrations for the hour


def test_a_forged_forwarded_address_does_not_dodge_the_rate_limits(
        hostile: tuple[Contest, dict[str, str], Path]) -> None:
    contest, _, _ = hostile
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))

    def post(path: str, fields: dict[str, str], forged: str) -> int:
        data = urllib.parse.urlencode(fields).encode()
        request = urllib.request.Request(contest.url + path, data=data, method="POST",
                                         headers={"X-Forwarded-For": forged, "X-Real-IP": forged,
                                                  "Forwarded": f"for={forged}"})
        try:
            with opener.open(request, timeout=30) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)

    def csrf(path: str) -> str:
        with opener.open(contest.url + path, timeout=30) as response:
            found = re.search(r'name="csrf" value="([^"]+)"', response.read().decode())
        assert found is not None
        return found.group(1)

    token = csrf("/register")
    codes = [post("/register", {"name": f"sybil{i}", "csrf": token}, f"203.0.113.{i}") for i in range(8)]
    assert codes == [200] * 5 + [429] * 3, codes  # five an hour from one address, whatever it claims
    token = csrf("/login")
    codes = [post("/login", {"token": f"arena_guess{i}", "csrf": token}, f"198.51.100.{i}") for i in range(12)]
    assert 429 in codes and codes[codes.index(429):] == [429] * (12 - codes.index(429)), codes
