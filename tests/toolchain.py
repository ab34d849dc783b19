"""What the example bots' tests (tests/test_cpp_bot.py, test_go_bot.py, test_java_bot.py, test_rust_bot.py,
test_js_bot.py) share: a missing toolchain skips with the reason, or fails under CI=true (.ci/run installs it); a
build by the bot's own build.sh; and a match that keeps every answer the bots sent (:func:`recorded_match`), to
read what the arena reads of them, their debug text included."""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from arena.core.deals import DealKey
from arena.core.referee import Clock, MatchRecord, Request, SeatFault, referee_match
from arena.games.base import Decision, Event, FaultKind, Game, MatchInfo, MatchResult, Options, Pick
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.runner import seat_names, serving
from arena.protocol import codec
from arena.protocol.seats import RemoteSeat


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


@dataclass(frozen=True)
class Answered:
    """One decision a bot was asked and what it answered, as the arena reads it."""

    kind: str
    pick: Pick
    choices: tuple[str, ...]
    answer: codec.BotAnswer

    @property
    def chosen(self) -> tuple[str, ...]:
        """The texts of the choices the answer picked."""
        return tuple(self.choices[i] for i in self.answer.picks)


class RecordingSeat:
    """A bot's remote seat that keeps each answer its bot sends (:class:`Answered`), then judges it as the arena's
    own seat does: a crash report is a crash, picks that do not fit the request are malformed."""

    def __init__(self, seat: RemoteSeat) -> None:
        self.seat = seat
        self.name = seat.name
        self.answered: list[Answered] = []

    async def match_started(self, info: MatchInfo) -> None:
        await self.seat.match_started(info)

    async def decide(self, request: Request) -> Decision:
        connection = self.seat.slot.connection
        if connection is None:
            raise SeatFault(FaultKind.DISCONNECT, "not connected")
        answer = codec.answer_from_proto(await connection.ask(codec.request_bytes(request), request.timeout))
        prompt = request.prompt
        self.answered.append(Answered(prompt.kind, prompt.pick, tuple(a.text for a in prompt.choices), answer))
        if answer.crash:
            raise SeatFault(FaultKind.CRASH, f"the bot reported: {answer.crash}")
        try:
            return codec.decision_from_picks(prompt, answer.picks)
        except codec.WireError as exc:
            raise SeatFault(FaultKind.MALFORMED, str(exc)) from None

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...], result: MatchResult) -> None:
        await self.seat.match_over(match_id, seat, events, result)


def recorded_match(game: Game, bots: Sequence[BotSpec], seed: int, options: Options | None = None, *,
                   clock: Clock) -> tuple[MatchRecord, list[list[Answered]]]:
    """Launch one process per seat (as ``run_match`` does), play one match; return its record and, by seat, every
    answer the seat's bot sent."""

    async def play() -> tuple[MatchRecord, list[list[Answered]]]:
        async with serving() as server:
            with tempdir.folder("logs") as logs:
                pool = ProcessPool(server, log_dir=logs)
                try:
                    remote = await pool.seat(bots, seat_names(bots), deal=DealKey(game.name, seed))
                    seats = [RecordingSeat(seat) for seat in remote]
                    record = await referee_match(game, seats, seed, options, clock=clock)
                finally:
                    await pool.close()
        return record, [seat.answered for seat in seats]

    return asyncio.run(play())


def assert_explained(answered: Sequence[Answered]) -> None:
    """Assert that every answer carries the examples' debug text: a choice of one, its choice's text then ": " and
    the reason; a choice of a set, "throw all N" or "none" (as bots/*/ write it)."""
    assert answered, "the bot was asked nothing"
    for one in answered:
        text = one.answer.debug
        if one.pick is Pick.ONE:
            assert text.startswith(f"{one.chosen[0]}: ") and len(text) > len(one.chosen[0]) + 2, (one, text)
        else:
            assert text == (f"throw all {len(one.choices)}" if one.chosen else "none"), (one, text)
