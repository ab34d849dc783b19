"""An author's loop in a real `arena contest` (issue 33): a scrimmage asked for from the terminal and played by
processes and on deals the ladder never uses, its result and replays the requester's alone; their ladder matches,
replays and logs as files; and another author who tries every id in sequence reaches none of it.

Submissions are built and checked in the bot jail: without bubblewrap these tests skip (outside CI) or fail (CI).
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from costs import starts_processes

from arena.cli import main
from arena.contest.store import ContestStore

from .harness import Contest, call, log_in, need_jail, submit, wait_matches, write_bot, write_config


@pytest.fixture(scope="module")
@starts_processes
def loop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Contest, dict[str, str], Path]]:
    need_jail()
    folder = tmp_path_factory.mktemp("loop")
    config = write_config(folder)
    (folder / "data").mkdir()
    store = ContestStore(folder / "data" / "contest.db")
    try:
        tokens = {name: store.authors.add(name) for name in ("alice", "bob")}
    finally:
        store.close()
    contest = Contest(config)
    try:
        done = submit(contest, write_bot(folder / "alice-bot", "firsty", mark="ALICE"), tokens["alice"], "--wait")
        assert done.returncode == 0, done.stderr
        yield contest, tokens, folder
    finally:
        contest.kill()


def cli(contest: Contest, token: str, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["submit", "--to", contest.url, *args], env={"ARENA_TOKEN": token})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.process
def test_a_scrimmage_from_the_terminal_plays_apart_from_the_ladder_and_is_its_requesters_alone(
        loop: tuple[Contest, dict[str, str], Path], tmp_path: Path) -> None:
    contest, tokens, folder = loop
    code, out, err = cli(contest, tokens["alice"], "--scrimmage", "firsty", "--against", "house:cabanga-random",
                         "--against", "house:cabanga-greedy", "--matches", "6", "--wait")
    assert code == 0, err + out
    assert re.search(r"(yours is better|yours is worse|no difference within the zone|not decided by these "
                     r"matches) \(mean score [0-9.]+, .*2 deal sets, 6 matches\)", out), out
    assert "against cabanga-random:" in out and "against cabanga-greedy:" in out
    scrimmage_id = re.search(r"scrimmage ([0-9a-f]{32})", out)
    assert scrimmage_id is not None
    sid = scrimmage_id.group(1)
    # its replay from alice's seat, as a file arena replay reads
    code, out, err = cli(contest, tokens["alice"], "--replay", f"{sid}:0", "-o", str(tmp_path / "s0.json"))
    assert code == 0, err
    seat = json.loads((tmp_path / "s0.json").read_text())
    assert seat["format"] == "arena-seat-replay/1" and seat["names"][seat["seat"]] == "alice:firsty:v1"
    assert "seed" not in seat
    shown = CliRunner().invoke(main, ["replay", str(tmp_path / "s0.json")])
    assert shown.exit_code == 0 and "as seen by seat" in shown.output

    # apart from the ladder: no deal and no process in common
    data = folder / "data"
    with sqlite3.connect(data / "contest.db") as db:
        scrimmage_replays = [json.loads(zlib.decompress(blob)) for (blob,) in
                             db.execute("SELECT replay FROM scrimmage_matches")]
    with sqlite3.connect(data / "ladder.db") as db:
        ladder_replays = [json.loads(zlib.decompress(blob)) for (blob,) in db.execute("SELECT replay FROM matches")]
    assert len(scrimmage_replays) == 6 and ladder_replays
    assert not {r["seed"] for r in scrimmage_replays} & {r["seed"] for r in ladder_replays}
    scrimmage_matches = {r["match_id"] for r in scrimmage_replays}
    ladder_matches = {r["match_id"] for r in ladder_replays}
    for log in (data / "logs").rglob("*.log"):
        played = set(re.findall(r"\[arena\] match ([0-9a-f]+) starts", log.read_text(errors="replace")))
        if log.parent.name == "scrimmages":
            assert played <= scrimmage_matches, log
        elif not log.parent.name.startswith("check-"):
            assert not played & scrimmage_matches, log
    assert any(log.parent.name == "scrimmages" for log in (data / "logs").rglob("*.log"))
    assert not ladder_matches & scrimmage_matches

    # bob reaches none of it, by API, page or CLI, whatever id he tries
    status, answer = call(f"{contest.url}/api/contest/scrimmages/{sid}", tokens["bob"])
    assert status == 404, answer
    status, answer = call(f"{contest.url}/api/contest/scrimmages/{sid}/replay/0", tokens["bob"])
    assert status == 404, answer
    assert call(f"{contest.url}/api/contest/scrimmages", tokens["bob"])[1] == {"scrimmages": []}
    code, _, err = cli(contest, tokens["bob"], "--replay", f"{sid}:0", "-o", str(tmp_path / "stolen.json"))
    assert code == 1 and "404" in err and not (tmp_path / "stolen.json").exists()
    newest = max(m["id"] for m in wait_matches(contest, "alice:firsty:v1"))
    for match_id in range(max(1, newest - 20), newest + 2):  # the API takes 120 calls a minute from an address
        status, _ = call(f"{contest.url}/api/contest/matches/{match_id}/replay", tokens["bob"])
        assert status == 404, match_id
    # alice's bot's opponents' author would see only how often theirs was chosen: the house has no author


def test_an_authors_matches_replays_and_logs_come_as_files(loop: tuple[Contest, dict[str, str], Path],
                                                          tmp_path: Path) -> None:
    contest, tokens, _ = loop
    played = wait_matches(contest, "alice:firsty:v1", count=3)
    code, out, err = cli(contest, tokens["alice"], "--matches", "--json")
    assert code == 0, err
    listed = json.loads(out)["matches"]
    # every complete one the public list showed a moment ago is listed, back to the oldest of this page (the
    # ladder plays on meanwhile: newer matches push older ones to the next page)
    assert listed
    oldest = min(m["id"] for m in listed)
    assert {m["id"] for m in listed} >= {m["id"] for m in played if m["replay"] and m["id"] >= oldest}
    assert [m["id"] for m in listed] == sorted((m["id"] for m in listed), reverse=True)
    first = listed[0]
    assert "alice:firsty:v1" in first["bots"] and first["seats"] == [first["bots"].index("alice:firsty:v1")]
    code, out, err = cli(contest, tokens["alice"], "--replay", str(first["id"]), "-o", str(tmp_path / "m.json"))
    assert code == 0, err
    seat = json.loads((tmp_path / "m.json").read_text())
    assert seat["seat"] == first["seats"][0] and "seed" not in seat
    # its debug text beside its decisions, for alice; the public API of the same match holds none of it
    assert any(d.get("debug", "").startswith("DEBUG-ALICE: the first of") for d in seat["decisions"])
    status, public = call(f"{contest.url}/api/match/{first['id']}")
    assert status == 200 and "DEBUG-ALICE" not in json.dumps(public)
    status, public = call(f"{contest.url}/api/match/{first['id']}?seat={first['seats'][0]}")
    assert status == 200 and "DEBUG-ALICE" not in json.dumps(public)
    code, out, err = cli(contest, tokens["alice"], "--logs", "firsty", "-o", str(tmp_path / "logs"))
    assert code == 0, err
    files = {p.name: p.read_text() for p in (tmp_path / "logs").iterdir()}
    assert "PASS: alice:firsty:v1" in files["report.txt"]
    assert any("MARK-ALICE starting" in text for name, text in files.items() if name != "report.txt")
    # the same asked of the wrong version or by the wrong author
    code, _, err = cli(contest, tokens["alice"], "--logs", "nobody", "-o", str(tmp_path / "x"))
    assert code == 1 and "you have no version 'nobody'" in err
    code, _, err = cli(contest, tokens["bob"], "--replay", str(first["id"]), "-o", str(tmp_path / "b.json"))
    assert code == 1 and "404" in err
    # and the choices an author makes about scrimmages
    code, out, _ = cli(contest, tokens["bob"], "--opponent", "no")
    assert code == 0 and "may not choose your bots" in out
    code, _, err = cli(contest, tokens["alice"], "--scrimmage", "firsty", "--against", "bob:anything")
    assert code == 1 and "bob does not take part" in err


def test_the_operators_export_holds_every_complete_deal_set_and_each_replay_verifies(
        loop: tuple[Contest, dict[str, str], Path], tmp_path: Path) -> None:
    contest, _, folder = loop
    wait_matches(contest, "alice:firsty:v1", count=3)
    result = CliRunner().invoke(main, ["contest", "export", "--to", str(tmp_path / "export"), "--contest",
                                       str(folder / "contest.toml")])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp_path / "export" / "results.jsonl").read_text().splitlines()]
    assert lines and f"wrote {len(lines)} matches" in result.output
    assert [line["match"] for line in lines] == sorted(line["match"] for line in lines)
    by_deal: dict[int, list[int]] = {}
    for line in lines:
        by_deal.setdefault(line["deal"], []).append(line["rotation"])
    assert all(sorted(rotations) == [0, 1, 2] for rotations in by_deal.values())  # complete deal sets only
    from arena.core import replay as replay_format

    for line in lines:
        data = replay_format.read(tmp_path / "export" / "replays" / f"{line['match']}.json")
        assert "debug" not in data and data["names"] == line["bots"]
        _, difference = replay_format.verify(data)
        assert difference is None, line
        assert data["result"]["totals"] == line["totals"]
    one = CliRunner().invoke(main, ["replay", str(tmp_path / "export" / "replays" / f"{lines[0]['match']}.json")])
    assert one.exit_code == 0 and "replay verified" in one.output
    bad = CliRunner().invoke(main, ["contest", "export", "--to", str(tmp_path / "x"), "--contest",
                                    str(tmp_path / "none.toml")])
    assert bad.exit_code == 1 and "cannot read the contest configuration" in bad.output


def test_browser_a_scrimmage_asked_on_the_page_shows_its_verdict_and_the_bots_debug_text_on_its_own_seat(
        loop: tuple[Contest, dict[str, str], Path], browser: Any) -> None:
    contest, tokens, _ = loop
    page = log_in(browser, contest.url, tokens["alice"])
    page.check("input[name=against][value='house:cabanga-random']")
    page.fill("input[name=count]", "3")
    page.click("#scrimmage-form button")
    page.wait_for_selector("#state")
    assert re.fullmatch(re.escape(contest.url) + r"/me/scrimmage/[0-9a-f]{32}", page.url)
    deadline = time.monotonic() + 120
    while not page.query_selector("#verdict") and time.monotonic() < deadline:
        time.sleep(1)
        page.reload()
    assert page.query_selector("#verdict") is not None, page.inner_text("#main")
    assert page.inner_text("#state") == "done"
    page.click("#games a >> nth=0")  # its first match, from alice's seat
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    seat = page.get_attribute("body", "data-seat")
    assert seat is not None and seat.isdigit()
    # only her seat is offered; her bot's text is on the frames of her decisions
    assert page.eval_on_selector_all("#seat option", "os => os.map(o => o.value)") == [seat]
    page.click("#last")
    texts: list[str] = []
    for _ in range(60):
        texts += page.eval_on_selector_all("#debug .debug-text", "ps => ps.map(p => p.textContent)")
        page.click("#back")
    assert texts and all(t.startswith("debug of alice:firsty:v1: DEBUG-ALICE") for t in texts), texts
    # another author's page of the same match: not found
    other = log_in(browser, contest.url, tokens["bob"])
    response = other.goto(page.url)
    assert response is not None and response.status == 404
