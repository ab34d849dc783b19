"""A bot's debug text on the arena's side (issue 33): the referee keeps it beside the decision, cut at 1 KiB a
decision and 64 KiB a match a seat with the cuts said, control characters made visible, never a fault; the replay
shows it to that seat alone (`arena replay --seat`, a seat's replay, the viewer from that seat), never in another
seat's request or replay nor on a public page, and an export leaves it out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli import main
from arena.contest.export import strip_debug
from arena.core import replay as replay_format
from arena.core.referee import (
    DEBUG_BYTES,
    DEBUG_CUT,
    DEBUG_FULL,
    DEBUG_MATCH_BYTES,
    DebugLog,
    Explained,
    LocalSeat,
    MatchRecord,
    Request,
    SeatFault,
    random_seat,
    referee_match,
)
from arena.games import get_game
from arena.games.base import FaultKind, Prompt, View, random_decision
from arena.protocol import codec
from arena.web.replays import viewer_data

SECRET = "SEAT1-DEBUG-7f3a"


class Explaining(LocalSeat):
    """A seat that answers at random and explains every answer; every few a crash, with its text too."""

    def __init__(self, name: str, text: str, crash_every: int = 0) -> None:
        self.count = 0
        self.text = text
        self.crash_every = crash_every
        import random

        rng = random.Random(name)

        def decide(prompt: Prompt, view: View) -> Any:
            return random_decision(prompt, rng)

        super().__init__(name, decide)

    async def decide(self, request: Request) -> Any:
        self.count += 1
        if self.crash_every and self.count % self.crash_every == 0:
            raise SeatFault(FaultKind.CRASH, "the bot reported: oops", f"{self.text} before its crash")
        return Explained(await super().decide(request), f"{self.text} {self.count}\tline\x1b[2J")


class Listening(LocalSeat):
    """A seat that keeps every request it is sent, as the wire would carry them."""

    def __init__(self, name: str) -> None:
        self.sent: list[bytes] = []
        inner = random_seat(name, name)
        super().__init__(name, inner._decide)

    async def decide(self, request: Request) -> Any:
        self.sent.append(codec.request_bytes(request))
        return await super().decide(request)


def played(game_name: str = "cabanga", seats: int = 3) -> tuple[MatchRecord, Listening]:
    game = get_game(game_name)
    listener = Listening("listener")
    players = [random_seat("first", 0), Explaining("explainer", SECRET, crash_every=9), listener][:seats]
    record = asyncio.run(referee_match(game, players, 99, game.options({"rounds": 1}), max_faults=100))
    return record, listener


def test_the_referee_keeps_a_seats_debug_text_beside_its_decision_and_only_its_seat_sees_it() -> None:
    record, listener = played()
    assert record.debug and {seat for _, seat, _ in record.debug} == {1}
    kept = [text for _, _, text in record.debug]
    assert any(text.startswith(f"{SECRET} 1") for text in kept)
    assert any(text == f"{SECRET} before its crash" for text in kept)  # a crash's text is kept too
    # control characters made visible, a tab among them; the text is never sent to another seat
    assert all("\x1b" not in text and "\t" not in text for text in kept) and any("\\x1b[2J" in t for t in kept)
    assert listener.sent and not any(SECRET.encode() in request for request in listener.sent)
    data = replay_format.from_record(record)
    assert {entry["seat"] for entry in data["debug"]} == {1}
    mine = json.dumps(replay_format.seat_replay(data, 1))
    theirs = json.dumps(replay_format.seat_replay(data, 2))
    assert SECRET in mine and SECRET not in theirs
    steps = {step for step, _, _ in record.debug}
    assert {d.step for d in replay_format.seat_decisions(data, 1) if d.debug} == steps  # beside each decision
    # the viewer: from seat 1 with its debug text; from seat 2, from above or on a public page never
    assert SECRET in json.dumps(viewer_data(data, 1, debug=True))
    for seat, debug in ((2, True), (1, False), (None, False)):
        assert SECRET not in json.dumps(viewer_data(data, seat, debug=debug)), (seat, debug)
    assert SECRET in json.dumps(viewer_data(data, None, debug=True))  # the operator, from above
    assert SECRET not in json.dumps(strip_debug(data))
    assert replay_format.without_debug(data, keep=2).get("debug") == []


def test_arena_replay_seat_prints_the_debug_text_beside_the_decision(tmp_path: Path) -> None:
    record, _ = played("lama", 3)
    path = tmp_path / "m.json"
    replay_format.write(path, replay_format.from_record(record))
    mine = CliRunner().invoke(main, ["replay", str(path), "--seat", "1"])
    assert mine.exit_code == 0 and f"  debug: {SECRET} 1" in mine.output
    step = next(step for step, seat, _ in record.debug if seat == 1)
    one = CliRunner().invoke(main, ["replay", str(path), "--seat", "1", "--step", str(step), "--json"])
    lines = [json.loads(line) for line in one.output.splitlines()]
    assert lines[1]["step"] == step and lines[1]["debug"].startswith(SECRET)
    other = CliRunner().invoke(main, ["replay", str(path), "--seat", "2"])
    assert other.exit_code == 0 and SECRET not in other.output
    # and its seat's replay, as an author downloads it, shows it the same way
    seat_file = tmp_path / "seat1.json"
    replay_format.write(seat_file, replay_format.seat_replay(replay_format.from_record(record), 1))
    assert f"  debug: {SECRET} 1" in CliRunner().invoke(main, ["replay", str(seat_file)]).output


def test_a_decisions_text_is_cut_at_1_kib_and_a_seats_at_64_kib_a_match_with_the_cuts_said() -> None:
    log = DebugLog(2)
    log.add(0, 0, "é" * 2000)  # 4000 bytes of UTF-8
    step, seat, text = log.entries[0]
    assert (step, seat) == (0, 0) and len(text.encode()) <= DEBUG_BYTES and text.endswith(DEBUG_CUT)
    for step in range(1, 200):
        log.add(step, 0, "x" * 2000)
        log.add(step, 1, "short")
    kept0 = [text for _, seat, text in log.entries if seat == 0]
    assert sum(len(t.encode()) for t in kept0) <= DEBUG_MATCH_BYTES
    assert kept0[-1].endswith(DEBUG_FULL) and sum(t.endswith(DEBUG_FULL) for t in kept0) == 1  # said once
    assert len([t for _, seat, t in log.entries if seat == 1]) == 199  # another seat's budget is its own
    log.add(300, 1, "")
    assert log.entries[-1][0] == 199  # nothing kept of an empty text
    log.add(301, 1, "line one\nline two\x07")
    assert log.entries[-1][2] == "line one\nline two\\x07"  # line breaks kept, other controls made visible


def test_not_utf8_debug_bytes_are_replaced_and_said_never_a_fault() -> None:
    text = codec.debug_text(b"ok \xff\xfe there")
    assert text.startswith(codec.NOT_UTF8) and "\ufffd" in text
    log = DebugLog(1)
    log.add(0, 0, text)
    assert log.entries[0][2].startswith("[not UTF-8")
