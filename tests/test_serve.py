"""`arena serve` on a real database made by a short real ladder: its HTTP answers, then its pages in a real
headless browser (Debian's chromium driven by Playwright; its own browsers are never downloaded).

The browser tests skip outside CI when chromium or Playwright is missing (with the reason), and fail with
CI=true. Each page's screenshot is kept in test-artifacts/serve/ (or $ARENA_TEST_ARTIFACTS/serve/).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from costs import starts_processes

from arena.core import replay as replay_format
from arena.core.referee import MatchRecord, random_seat, referee_match
from arena.games import get_game
from arena.games.base import Scoring
from arena.games.goofspiel.web import table as goofspiel_table
from arena.games.lama.web import chips
from arena.games.lama.web import table as lama_table
from arena.web.data import INLINE_SECONDS, HeadToHead, Live, Reader, Withheld

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]
ARTIFACTS = Path(os.environ.get("ARENA_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "serve"
LADDER = ["--game", "cabanga", "--seats", "4", "--tables", "2", "--seed", "11"]
FIRST_MATCHES = 14
"""Three complete deal sets of four rotations, and two rotations of the fourth (its replays are withheld)."""


def arena(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *map(str, args)], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


class Server:
    """A running `arena serve` process and its address."""

    def __init__(self, *args: str | Path) -> None:
        # its log goes to a file: a pipe nobody reads could fill up and stall the server
        self.log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed by stop())
        self.process = subprocess.Popen([*ARENA, "serve", *map(str, args)], cwd=ROOT, stdout=subprocess.PIPE,
                                        stderr=self.log, text=True)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        line = self.process.stdout.readline() if ready else ""
        if not line.startswith("serving http://"):
            self.stop()
            self.log.seek(0)
            raise AssertionError(f"arena serve did not start: {line!r} {self.log.read()}")
        self.url = line.split()[1].rstrip("/")

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=30) as response:
                return int(response.status), response.read().decode()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read().decode()

    def json(self, path: str) -> Any:
        """Return the JSON at ``path``; a whole-database figure still being computed ({"pending": true}) is
        asked for again, as the page does, for up to a minute."""
        deadline = time.monotonic() + 60
        while True:
            status, text = self.get(path)
            assert status == 200, (path, status, text)
            data = json.loads(text)
            if not (isinstance(data, dict) and data.get("pending")) or time.monotonic() > deadline:
                return data
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.log.close()


@pytest.fixture(scope="module")
@starts_processes
def ladder_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("serve") / "ladder.db"
    # the four heuristic bots, named as an author would: the data below is made for four bots at four seats
    (db.parent / "bots.toml").write_text("".join(f'[[bot]]\nbundled = "cabanga-{name}"\n\n'
                                                 for name in ("greedy", "tidy", "thrower", "random")))
    result = arena("ladder", *LADDER, "--bots", db.parent / "bots.toml", "--matches", FIRST_MATCHES, "--db", db)
    assert result.returncode == 0, result.stderr
    return db


@pytest.fixture(scope="module")
@starts_processes
def server(ladder_db: Path) -> Iterator[Server]:
    server = Server("--db", ladder_db)
    try:
        yield server
    finally:
        server.stop()


def cli_board(db: Path) -> list[dict[str, Any]]:
    result = arena("leaderboard", "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    # the isolation level is the ladder's, not a bot's: the pages show it with the settings (summary)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return [{k: v for k, v in row.items() if k != "sandbox"} for row in rows if "pair" not in row]


def replay_totals(*source: str | Path) -> list[int]:
    """Return the final totals `arena replay --json` prints for a stored match or a replay file."""
    result = arena("replay", *source, "--json")
    assert result.returncode == 0, result.stderr
    over = [json.loads(line) for line in result.stdout.splitlines() if '"match_over"' in line]
    return list(over[-1]["totals"])


def db_rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def walk_keys(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield str(key)
            yield from walk_keys(value)
    elif isinstance(data, list):
        for value in data:
            yield from walk_keys(value)


# --------------------------------------------------------------------------------------------- over HTTP


@pytest.mark.process
def test_the_api_gives_the_leaderboard_of_the_command(server: Server, ladder_db: Path) -> None:
    rows = server.json("/api/board")["rows"]
    assert [{k: r[k] for k in c} for r, c in zip(rows, cli_board(ladder_db), strict=True)] == cli_board(ladder_db)
    for row in rows:
        assert row["low"] <= row["estimate"] <= row["high"]


def test_bad_urls_and_ids_give_a_clear_404_page(server: Server) -> None:
    for path, needle in [("/bot/nobody", "no bot 'nobody'"), ("/match/99999", "no match 99999"),
                         ("/match/abc", "no page '/match/abc'"), ("/nothing/here", "no page '/nothing/here'"),
                         ("/h2h/nobody/cabanga-random", "no bot 'nobody'"), ("/games/chess.js", "unknown game")]:
        status, text = server.get(path)
        assert status == 404, path
        assert "<html" in text and needle.replace("'", "&#x27;") in text, (path, text)
        assert "Traceback" not in text
    status, text = server.get("/api/match/99999")
    assert status == 404 and json.loads(text)["error"].startswith("no match 99999")
    status, text = server.get("/api/matches?before=soon")
    assert status == 400 and "before must be a whole number" in text
    status, text = server.get("/api/match/1?seat=7")
    assert status == 400 and "seat 7 is not at this 4-seat table" in text


def test_a_replay_of_an_unfinished_deal_set_is_withheld(server: Server, ladder_db: Path) -> None:
    open_deal = db_rows(ladder_db, "SELECT deal FROM matches GROUP BY deal HAVING count(*) < 4")
    assert open_deal, "the fixture should leave a deal set unfinished"
    (match_id,) = db_rows(ladder_db, f"SELECT min(id) FROM matches WHERE deal = {open_deal[0][0]}")[0]
    for path in (f"/match/{match_id}", f"/api/match/{match_id}"):
        status, text = server.get(path)
        assert status == 403, path
        assert "not all played yet" in text
    listed = {m["id"]: m["replay"] for m in server.json("/api/matches")["matches"]}
    assert listed[match_id] is False and listed[1] is True


@pytest.mark.parametrize("played", [1, 2, 3])
def test_no_replay_of_a_deal_set_is_served_whatever_rotation_it_stopped_at(
        ladder_db: Path, tmp_path: Path, played: int) -> None:
    """A complete deal set of the ladder cut back to its first ``played`` of 4 rotations: none of its matches
    has a replay, in the list or on its own; the whole set (the control) has them all."""
    (deal,) = db_rows(ladder_db, "SELECT deal FROM matches GROUP BY deal HAVING count(*) = 4 ORDER BY deal")[0]
    cut = tmp_path / "cut.db"
    with sqlite3.connect(ladder_db) as source, sqlite3.connect(cut) as target:
        source.backup(target)
    with sqlite3.connect(cut) as db:
        gone = f"SELECT id FROM matches WHERE deal = {deal} AND rotation >= {played}"
        for table in ("faults", "ratings", "seats"):
            db.execute(f"DELETE FROM {table} WHERE match_id IN ({gone})")
        db.execute(f"DELETE FROM matches WHERE deal = {deal} AND rotation >= {played}")
    ids = [i for (i,) in db_rows(cut, f"SELECT id FROM matches WHERE deal = {deal} ORDER BY rotation")]
    assert len(ids) == played
    for path, shown in ((cut, False), (ladder_db, True)):
        reader = Reader(path)
        try:
            listed = {m["id"]: m["replay"] for m in reader.matches(before=max(ids) + 1)["matches"]}
            for match_id in ids:
                assert listed[match_id] is shown, (path, match_id)
                if shown:
                    assert reader.replay(match_id)
                else:
                    with pytest.raises(Withheld):
                        reader.match(match_id)
                    with pytest.raises(Withheld):
                        reader.replay(match_id)
        finally:
            reader.close()


def test_no_seed_leaves_the_database(server: Server, ladder_db: Path) -> None:
    seeds = {str(s) for (s,) in db_rows(ladder_db, "SELECT seed FROM matches")}
    bot = server.json("/api/board")["rows"][0]["bot"]
    texts = []
    for path in ["/api/summary", "/api/board", "/api/ratings", "/api/h2h", "/api/matches", f"/api/bot/{bot}",
                 f"/api/bot/{bot}/matches?filter=lost", "/api/match/1", "/api/match/1?seat=0",
                 f"/api/h2h/{bot}/cabanga-random"]:
        status, text = server.get(path)
        assert status == 200, path
        assert "seed" not in set(walk_keys(json.loads(text))), path
        texts.append(text)
    everything = "\n".join(texts)
    assert not [s for s in seeds if s in everything]


@pytest.mark.process
def test_a_match_re_runs_to_the_totals_of_arena_replay(server: Server, ladder_db: Path) -> None:
    data = server.json("/api/match/2")
    assert data["frames"][-1]["table"]["totals"] == replay_totals("2", "--db", ladder_db) == data["result"]["totals"]
    assert data["frames"][-1]["events"] == len(data["events"])
    assert data["rounds"][0] == [1, 0]


def test_a_seat_sees_only_its_own_hand(server: Server) -> None:
    above = server.json("/api/match/3")
    seen = server.json("/api/match/3?seat=1")
    assert all(all(h is not None for h in f["table"]["hands"]) for f in above["frames"])
    for frame in seen["frames"]:
        hands = frame["table"]["hands"]
        assert hands[1] is not None and [h for s, h in enumerate(hands) if s != 1] == [None] * 3
        assert set(frame["decisions"]) <= {"1"}
        assert frame["table"]["set_aside"] is None
    # the seat's own hand is the same as seen from above at the same moment (the first frame)
    assert seen["frames"][0]["table"]["hands"][1] == above["frames"][0]["table"]["hands"][1]
    assert seen["frames"][-1]["table"]["totals"] == above["frames"][-1]["table"]["totals"]
    assert len(seen["frames"]) <= len(above["frames"])


def test_head_to_head_counts_the_complete_deal_sets_both_bots_played(server: Server, ladder_db: Path) -> None:
    by_deal: dict[int, dict[int, dict[str, tuple[int, int]]]] = {}
    for deal, match_id, name, total, place in db_rows(
            ladder_db, "SELECT m.deal, s.match_id, b.name, s.total, s.place FROM seats s "
                       "JOIN matches m ON m.id = s.match_id JOIN bots b ON b.id = s.bot_id"):
        by_deal.setdefault(deal, {}).setdefault(match_id, {})[name] = (total, place)
    expected: dict[tuple[str, str], list[int]] = {}
    for matches in by_deal.values():
        if len(matches) < 4:
            continue  # an unfinished deal set does not count yet
        names = sorted(set.intersection(*(set(m) for m in matches.values())))
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                ta, tb = (sum(m[x][0] for m in matches.values()) for x in (a, b))
                e = expected.setdefault((a, b), [0] * 6)
                e[0] += 1
                e[1 + (ta == tb) + 2 * (ta > tb)] += 1
                e[4] += sum(m[a][1] < m[b][1] for m in matches.values())
                e[5] += sum(m[a][1] > m[b][1] for m in matches.values())
    shown = {}
    for p in server.json("/api/h2h")["pairs"]:
        row = [p["deals"], p["a_better"], p["even"], p["b_better"], p["a_ahead"], p["b_ahead"]]
        if p["a"] > p["b"]:
            row = [row[0], row[3], row[2], row[1], row[5], row[4]]
        shown[tuple(sorted((p["a"], p["b"])))] = row
    assert shown == expected and len(expected) == 6


def test_the_server_only_reads(server: Server, ladder_db: Path) -> None:
    before = hashlib.sha256(ladder_db.read_bytes()).hexdigest()
    for path in ["/", "/api/board", "/api/h2h", "/api/match/1"]:
        assert server.get(path)[0] == 200
    request = urllib.request.Request(server.url + "/api/board", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 405
    assert hashlib.sha256(ladder_db.read_bytes()).hexdigest() == before


@pytest.mark.process
def test_the_settings_show_the_isolation_level_when_stored_and_never_the_seed(
        ladder_db: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.db"
    source = sqlite3.connect(f"file:{ladder_db}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    before = Reader(copy)
    board = map(json.loads, arena("leaderboard", "--db", copy, "--json").stdout.splitlines())
    levels = {row["sandbox"] for row in board if "pair" not in row}
    assert len(levels) == 1
    try:
        assert before.summary()["meta"] == {"sandbox": levels.pop()}
    finally:
        before.close()
    target.execute("DELETE FROM meta WHERE key = 'sandbox'")
    target.execute("INSERT INTO meta VALUES ('isolation', 'namespaces')")
    target.commit()
    target.close()
    reader = Reader(copy)
    try:
        summary = reader.summary()
        assert summary["meta"] == {"isolation": "namespaces"}
        assert summary["settings"]["deadline"] == 1.0 and summary["seats"] == 4
        assert "seed" not in set(walk_keys(summary))
    finally:
        reader.close()


@pytest.mark.process
def test_serve_refuses_a_missing_database_and_a_bad_replay_in_one_line(tmp_path: Path) -> None:
    result = arena("serve", "--db", tmp_path / "none.db")
    assert result.returncode != 0 and "does not exist" in result.stderr and "Traceback" not in result.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"game": "lama", "options": {}, "seed": 1, "names": ["a", "b"], "steps": [{"0": "L9"}]}))
    result = arena("serve", "--replay", bad)
    assert result.returncode != 0 and "does not re-run" in result.stderr and "Traceback" not in result.stderr


def test_lama_table_hides_other_hands_and_shows_totals_as_chips() -> None:
    state = get_game("lama").new_match(3, 5)
    seen = lama_table(state, 2)
    above = lama_table(state, None)
    assert seen["hands"][:2] == [None, None] and seen["hands"][2] == above["hands"][2]
    assert all(len(h) == 6 for h in above["hands"])
    assert chips(0) == [0, 0] and chips(23) == [2, 3]


def test_goofspiel_table_hides_other_hands_and_shows_the_last_trick() -> None:
    state = get_game("goofspiel").new_match(3, 5)
    assert goofspiel_table(state, None)["last"] is None
    state.apply({seat: (prompt.choices[-seat - 1],) for seat, prompt in enumerate(state.pending())})  # 13, 12, 11
    seen = goofspiel_table(state, 1)
    above = goofspiel_table(state, None)
    assert seen["hands"][0] is None and seen["hands"][2] is None and seen["hands"][1] == above["hands"][1]
    assert seen["prize_deck"] is None and sorted(above["prize_deck"], key=int) == seen["to_come"]
    assert seen["last"] == {"trick": 1, "bids": ["13", "12", "11"], "winner": 0, "won": above["totals"][0]}
    assert seen["hand_sizes"] == [12, 12, 12]


def test_head_to_head_counts_deal_set_totals_the_way_the_game_does() -> None:
    deal = {1: [(1, 10, 2), (2, 20, 1)], 2: [(2, 5, 2), (1, 30, 1)]}  # match: (bot, total, place) by seat
    lower, higher = HeadToHead(2), HeadToHead(2, Scoring.HIGHER_WINS)
    lower._fold(deal)
    higher._fold(deal)  # bot 1 totals 40 over the set, bot 2 25
    assert (lower.pairs[(1, 2)].a_better, lower.pairs[(1, 2)].b_better) == (0, 1)
    assert (higher.pairs[(1, 2)].a_better, higher.pairs[(1, 2)].b_better) == (1, 0)


class FakeReader:
    """What :class:`arena.web.data.Live` needs of a reader: the newest match id, a worker, a store."""

    def __init__(self) -> None:
        self.path = Path("fake.db")
        self.newest = 1
        self.background = ThreadPoolExecutor(max_workers=1)

    def version(self) -> int:
        return self.newest

    def store(self) -> None:
        return None


def test_a_slow_figure_is_pending_first_then_kept_while_matches_land() -> None:
    reader = FakeReader()
    release = threading.Event()
    computed: list[int] = []

    def compute(_: object) -> int:
        release.wait(30)
        time.sleep(INLINE_SECONDS + 0.01)  # a slow figure: never recomputed while a page waits
        computed.append(reader.newest)
        return reader.newest * 10

    figure = Live(reader, compute)  # type: ignore[arg-type]
    try:
        assert figure.get(wait=0.01) is None  # pending: the first computation is running
        release.set()
        assert figure.get(wait=30) == (10, 1)
        reader.newest = 2
        assert figure.get(wait=0) == (10, 1)  # stale but at once; a background recomputation follows later
        assert computed == [1]
    finally:
        reader.background.shutdown(wait=True, cancel_futures=True)


def test_a_slow_stale_figure_is_recomputed_when_asked_again_after_ten_times_its_cost() -> None:
    reader = FakeReader()
    now = [0.0]

    def compute(_: object) -> int:
        now[0] += 1.0  # each computation costs one (fake) second: slow
        return reader.newest * 10

    figure = Live(reader, compute, clock=lambda: now[0])  # type: ignore[arg-type]
    try:
        assert figure.get(wait=30) == (10, 1)
        reader.newest = 2  # the ladder stores one more match, then no more
        assert figure.get(wait=30) == (10, 1)  # too soon after the last computation: stale, nothing started
        now[0] += 9.5
        assert figure.get(wait=30) == (10, 1)
        now[0] += 0.5  # ten times the last cost has passed: the next ask starts a recomputation
        assert figure.get(wait=30) == (10, 1)
        reader.background.submit(lambda: None).result(timeout=30)  # the one worker has finished it
        assert figure.get(wait=0) == (20, 2)
    finally:
        reader.background.shutdown(wait=True, cancel_futures=True)


def test_a_quick_figure_is_never_stale() -> None:
    reader = FakeReader()
    figure = Live(reader, lambda _: reader.newest * 10)  # type: ignore[arg-type]
    try:
        assert figure.get(wait=30) == (10, 1)
        reader.newest = 5
        assert figure.get(wait=0) == (50, 5)
    finally:
        reader.background.shutdown(wait=True, cancel_futures=True)


# ------------------------------------------------------------------------------------- in a real browser


@pytest.fixture
@starts_processes
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, errors


def open_page(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


@pytest.mark.process
def test_browser_leaderboard_lists_every_bot_in_the_order_of_the_command(
        page: Any, server: Server, ladder_db: Path) -> None:
    open_page(page, server.url + "/")
    shown = page.eval_on_selector_all("#board tbody tr td.bot", "cells => cells.map(c => c.textContent)")
    assert shown == [r["bot"] for r in cli_board(ladder_db)]
    assert page.locator("#board svg.interval").count() == len(shown)
    assert "seats: 4" in page.inner_text("#settings") and "deadline" in page.inner_text("#settings")
    shot(page, "leaderboard")
    page.click("#board th:has-text('raw points')")  # sortable: ascending mean points
    points = page.eval_on_selector_all("#board tbody tr td:nth-child(12)", "cells => cells.map(c => +c.textContent)")
    assert points == sorted(points)


def test_browser_a_board_behind_the_stored_matches_is_asked_for_again_without_a_new_match(
        page: Any, server: Server) -> None:
    answers: list[dict[str, Any]] = []
    behind = [True]

    def answer(route: Any) -> None:
        response = route.fetch()
        data = response.json()
        answers.append(dict(data))
        if behind[0]:
            data["at"] = data["version"] - 1  # as if the server's figure did not count the newest match yet
        route.fulfill(response=response, json=data)

    page.route("**/api/board", answer)
    open_page(page, server.url + "/")
    newest = answers[0]["version"]
    assert "updating" in page.inner_text("#main .as-of")
    behind[0] = False  # the server's recomputation is done
    page.wait_for_selector(f"#main .as-of[data-at='{newest}']", timeout=20_000)
    assert "updating" not in page.inner_text("#main .as-of")
    assert len(answers) >= 2 and all(a["version"] == newest for a in answers)  # no match landed meanwhile


@pytest.mark.process
def test_browser_ratings_plot_has_one_series_per_bot(page: Any, server: Server, ladder_db: Path) -> None:
    open_page(page, server.url + "/ratings")
    series = page.evaluate("window.arenaRatingsPlot.series.slice(1).map(s => s.label)")
    assert sorted(series) == sorted(r["bot"] for r in cli_board(ladder_db))
    shot(page, "ratings")


@pytest.mark.process
def test_browser_match_steps_to_the_end_with_the_totals_of_arena_replay(
        page: Any, server: Server, ladder_db: Path) -> None:
    open_page(page, server.url + "/match/1")
    page.click("#forward")
    page.click("#forward")
    assert page.get_attribute("body", "data-frame") == "2"
    assert page.locator("#log div.now").count() >= 1
    shot(page, "match")
    page.click("#last")
    totals = page.eval_on_selector_all("#table .seat .total", "cells => cells.map(c => +c.textContent)")
    assert totals == replay_totals("1", "--db", ladder_db)
    assert "(end)" in page.inner_text("#status")
    # back one step, and the jump to a round
    page.click("#back")
    assert "(end)" not in page.inner_text("#status")
    page.select_option("#round", index=0)
    assert page.get_attribute("body", "data-frame") == "0"


def test_browser_seat_selector_hides_the_other_hands(page: Any, server: Server) -> None:
    open_page(page, server.url + "/match/1")
    page.click("#forward")
    assert page.locator("#table .hand.hidden").count() == 0
    page.select_option("#seat", "2")
    page.wait_for_function("document.body.dataset.seat === '2'")
    for seat in range(4):
        hand = page.locator(f"#table .seat[data-seat='{seat}'] .hand")
        cards = hand.locator(".card[data-card]").count()
        if seat == 2:
            assert cards > 0
        else:
            assert cards == 0 and "hidden" in (hand.get_attribute("class") or "")
    shot(page, "match-seat-view")
    page.select_option("#seat", "all")
    page.wait_for_function("document.body.dataset.seat === 'all'")
    assert page.locator("#table .hand.hidden").count() == 0


@pytest.mark.process
def test_browser_head_to_head_bot_and_matches_pages(page: Any, server: Server, ladder_db: Path) -> None:
    bots = [r["bot"] for r in cli_board(ladder_db)]
    open_page(page, server.url + "/h2h")
    assert page.locator("#h2h tbody tr").count() == len(bots)
    assert page.locator("#pairs tbody tr").count() == len(bots) * (len(bots) - 1) // 2
    shot(page, "head-to-head")
    open_page(page, f"{server.url}/h2h/{bots[0]}/{bots[1]}")
    assert page.locator("#pair-matches tbody tr").count() > 0
    shot(page, "pair")
    open_page(page, f"{server.url}/bot/{bots[-1]}")
    assert page.locator("#latency rect").count() > 0 and page.locator("#deadline").count() == 1
    assert page.locator("#bot-matches tbody tr").count() == cli_board(ladder_db)[-1]["matches"]
    shot(page, "bot")
    wins = {r["bot"]: r["raw_wins"] for r in cli_board(ladder_db)}
    open_page(page, f"{server.url}/bot/{bots[0]}")
    page.click("button[data-filter='won']")
    page.wait_for_function(f"document.querySelectorAll('#bot-matches tbody tr').length === {wins[bots[0]]}")
    open_page(page, server.url + "/matches")
    assert page.locator("#matches tbody tr").count() == FIRST_MATCHES
    shot(page, "matches")
    page.goto(server.url + "/match/424242")
    assert "no match 424242" in page.inner_text("#error")
    shot(page, "not-found")


def test_browser_older_matches_are_appended_below_the_first_page(page: Any, server: Server) -> None:
    shown_first = 10

    def cut_first_page(route: Any) -> None:
        response = route.fetch()
        data = response.json()
        if "before=" not in route.request.url:  # the first page, as if the ladder held more than a page
            data["matches"] = data["matches"][:shown_first]
            data["next"] = data["matches"][-1]["id"]
        route.fulfill(response=response, json=data)

    page.route("**/api/matches*", cut_first_page)
    open_page(page, server.url + "/matches")
    assert page.locator("#matches tbody tr").count() == shown_first
    page.click("#older")
    page.wait_for_function(f"document.querySelectorAll('#matches tbody tr').length === {FIRST_MATCHES}",
                           timeout=20_000)
    ids = page.eval_on_selector_all("#matches tbody tr", "rows => rows.map(r => +r.dataset.id)")
    assert ids == sorted(set(ids), reverse=True) and len(ids) == FIRST_MATCHES  # newest first, none twice
    assert page.locator("#matches tbody tr.fresh").count() == 0  # older matches are not new ones
    assert page.inner_text("#main .pager") == "no older matches"


def replay_file(path: Path, game_name: str, seats: int, seed: int, **options: Any) -> Path:
    """Write the replay of a match of in-process random players to ``path``, as `arena match --replay` writes
    one (the same writer; tests/test_cli.py runs the command itself): these tests are about serving a replay
    file, not about the bots that played it."""
    game = get_game(game_name)

    def play() -> MatchRecord:  # in a thread of its own: the browser's driver may hold this thread's event loop
        players = [random_seat(f"random-{i}", seed * 10 + i) for i in range(seats)]
        return asyncio.run(referee_match(game, players, seed, game.options(options)))

    with ThreadPoolExecutor(1) as pool:
        replay_format.write(path, replay_format.from_record(pool.submit(play).result()))
    return path


@pytest.fixture(scope="module")
def lama_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return replay_file(tmp_path_factory.mktemp("lama") / "lama.json", "lama", 3, 5)


@pytest.fixture(scope="module")
def goofspiel_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return replay_file(tmp_path_factory.mktemp("goofspiel") / "goofspiel.json", "goofspiel", 3, 5, ties="carry")


@pytest.mark.process
def test_serve_replay_shows_a_goofspiel_replay(goofspiel_replay: Path) -> None:
    server = Server("--replay", goofspiel_replay)
    try:
        data = server.json("/api/replay/file")
        assert data["game"] == "goofspiel" and "seed" not in set(walk_keys(data))
        assert len(data["frames"]) == 14  # the deal, then 13 tricks of sealed bids
        assert data["frames"][-1]["table"]["totals"] == replay_totals(goofspiel_replay)
        seen = server.json("/api/replay/file?seat=1")
        assert all(t["hands"][0] is None and t["prize_deck"] is None for t in (f["table"] for f in seen["frames"]))
        status, script = server.get("/games/goofspiel.js")
        assert status == 200 and "ArenaGames.goofspiel" in script
    finally:
        server.stop()


@pytest.mark.process
def test_browser_shows_a_goofspiel_replay(page: Any, server: Server, goofspiel_replay: Path) -> None:
    open_page(page, server.url + "/replay")
    page.set_input_files("#file", str(goofspiel_replay))
    page.wait_for_selector("body[data-game='goofspiel']")
    assert page.locator("#table .prize .card").count() == 1
    page.click("#forward")
    assert page.locator("#table .seat .bid .card").count() == 3  # the first trick's bids
    shot(page, "upload-goofspiel")
    page.click("#last")
    totals = page.eval_on_selector_all("#table .seat .total", "cells => cells.map(c => +c.textContent)")
    assert totals == replay_totals(goofspiel_replay)
    page.select_option("#seat", "0")
    page.wait_for_function("document.body.dataset.seat === '0'")
    page.click("#first")
    assert page.locator("#table .seat[data-seat='1'] .hand .card[data-card]").count() == 0
    assert page.locator("#table .seat[data-seat='0'] .hand .card[data-card]").count() == 13


@pytest.mark.process
def test_serve_replay_shows_a_replay_file_without_a_database(lama_replay: Path) -> None:
    server = Server("--replay", lama_replay)
    try:
        status, text = server.get("/")
        assert status == 200 and 'data-source="file"' in text  # redirected to the replay's page
        data = server.json("/api/replay/file")
        assert data["game"] == "lama" and "seed" not in set(walk_keys(data))
        assert data["frames"][-1]["table"]["totals"] == replay_totals(lama_replay)
        status, text = server.get("/matches")
        assert status == 404 and "not a ladder database" in text
    finally:
        server.stop()


@pytest.mark.process
def test_browser_opens_an_uploaded_lama_replay(page: Any, server: Server, lama_replay: Path) -> None:
    replay = lama_replay
    open_page(page, server.url + "/replay")
    page.set_input_files("#file", str(replay))
    page.wait_for_selector("body[data-game='lama']")
    page.click("#forward")
    assert page.locator("#table .discard").count() == 1
    shot(page, "upload-lama")
    page.click("#last")
    totals = page.eval_on_selector_all("#table .seat .total", "cells => cells.map(c => +c.textContent)")
    assert totals == replay_totals(replay)
    page.select_option("#seat", "0")
    page.wait_for_function("document.body.dataset.seat === '0'")
    assert page.locator("#table .seat[data-seat='1'] .card[data-card]").count() == 0


@pytest.mark.process
def test_browser_a_running_ladder_s_new_match_appears_without_a_reload(
        page: Any, server: Server, ladder_db: Path) -> None:
    open_page(page, server.url + "/matches")
    page.evaluate("window.notReloaded = true")
    assert page.locator("#matches tbody tr").count() == FIRST_MATCHES
    result = arena("ladder", *LADDER, "--bots", ladder_db.parent / "bots.toml", "--matches", FIRST_MATCHES + 4,
                   "--db", ladder_db)
    assert result.returncode == 0, result.stderr
    page.wait_for_function(f"document.querySelectorAll('#matches tbody tr').length === {FIRST_MATCHES + 4}",
                           timeout=20_000)
    assert page.evaluate("window.notReloaded") is True
    assert page.locator("#matches tbody tr.fresh").count() == 4
    shot(page, "matches-live")
    open_page(page, server.url + "/")
    # the board of a small ladder is recomputed while the page waits, unless that took over 50 ms (a busy
    # machine): then the page shows the last one and asks again until it counts the newest match
    page.wait_for_selector(f"#main .as-of[data-at='{FIRST_MATCHES + 4}']", timeout=20_000)
    shown = page.eval_on_selector_all("#board tbody tr td.bot", "cells => cells.map(c => c.textContent)")
    assert shown == [r["bot"] for r in cli_board(ladder_db)]
    assert f"matches: {FIRST_MATCHES + 4}" in page.inner_text("#settings")


def test_browser_a_faulted_decision_shows_its_fault_and_the_default_on_its_frame(
        page: Any, server: Server, tmp_path: Path) -> None:
    import concurrent.futures

    from test_viewer_frames import _replay  # a Cabanga! match whose seat 0 crashes at every throw

    replay = tmp_path / "crash.json"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # the browser's driver holds this thread's event loop
        replay_format.write(replay, pool.submit(_replay).result())
    open_page(page, server.url + "/replay")
    page.set_input_files("#file", str(replay))
    page.wait_for_selector("body[data-game='cabanga']")
    for _ in range(400):  # step until the crasher's first fault
        text = page.inner_text("#table .seat[data-seat='0'] .decision")
        if ": crash" in text:
            break
        page.click("#forward")
    assert re.match(r"step \d+, request \d+: crash: RuntimeError: my throw code is broken; the default applied: "
                    "nothing thrown", text), text
    shot(page, "faulted-decision")
    page.click("#first")
    page.click("#forward")
    answered = page.inner_text("#table .seat .decision >> nth=0") or page.inner_text("#table .seat .decision >> nth=1")
    assert "decided:" not in answered
