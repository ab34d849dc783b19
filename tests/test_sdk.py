"""The Python SDK: a decision goes to the bot method named for its kind; importing the SDK loads no game."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from costs import until_over
from toolchain import Answered, RecordingSeat

from arena.core.referee import Clock, Request, random_seat, referee_match
from arena.games import all_games, get_game
from arena.games.base import Event, MatchInfo, MatchResult, Pick, random_decision
from arena.games.bot import DEBUG_BYTES, DEBUG_CUT, Bot, kind_clashes, take_debug
from arena.games.cabanga.bot import CabangaBot
from arena.games.lama.bot import LamaBot
from arena.launch import tempdir
from arena.protocol import codec
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer
from arena.sdk import _answer, local_seat, serve
from arena.v2 import arena_pb2 as pb

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.process
def test_importing_the_sdk_loads_neither_the_referee_nor_any_game() -> None:
    code = "import sys, arena.sdk; print(' '.join(sorted(m for m in sys.modules if m.startswith('arena'))))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60,
                            cwd=ROOT).stdout.split()
    assert "arena.sdk" in loaded and "arena.games" in loaded
    assert "arena.core.referee" not in loaded and "arena.protocol.server" not in loaded
    assert not [m for m in loaded if m.startswith("arena.games.") and m.count(".") >= 2
                and m.split(".")[2] in {g.name for g in all_games()}], loaded


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.name)
def test_every_games_decision_kinds_can_be_bot_methods(game: Any) -> None:
    assert game.kinds and not kind_clashes(game.kinds)


class Recorder(Bot):
    """Answers every kind through a method of its name, and records which one was called."""

    def __init__(self) -> None:
        self.called: list[str] = []
        self.rng = random.Random(1)

    def play(self, view: Any, choices: Sequence[Any]) -> Any:
        self.called.append("play")
        return choices[0]

    def throw(self, view: Any, candidates: Sequence[Any]) -> list[Any]:
        self.called.append("throw")
        return list(candidates)

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        self.called.append("turn")
        return choices[-1]


@pytest.mark.parametrize("name", ["cabanga", "lama"])
def test_a_decision_goes_to_the_method_named_for_its_kind(name: str) -> None:
    state = get_game(name).new_match(4, 5)
    bot, rng = Recorder(), random.Random(5)
    for _ in until_over(state):
        prompts = state.pending()
        for prompt in prompts:
            decision = bot.decide(prompt, state.view(prompt.seat))
            assert bot.called[-1] == prompt.kind
            prompt.check(decision)  # one choice for pick one, the candidates as a tuple for a subset
            assert (decision == tuple(prompt.choices)) if prompt.pick is Pick.SUBSET else len(decision) == 1
        state.apply({p.seat: random_decision(p, rng) for p in prompts})
    assert set(bot.called) == set(get_game(name).kinds)


def test_a_bot_without_the_kinds_method_says_which_game_it_does_not_play() -> None:
    state = get_game("lama").new_match(2, 1)
    prompt = state.pending()[0]
    with pytest.raises(NotImplementedError, match="has no method 'turn'"):
        Bot().decide(prompt, state.view(prompt.seat))
    with pytest.raises(NotImplementedError, match=r"does not play L\.A\.M\.A\."):
        LamaBot().decide(prompt, state.view(prompt.seat))
    cabanga = get_game("cabanga").new_match(3, 1)
    first = cabanga.pending()[0]
    with pytest.raises(NotImplementedError, match="does not play Cabanga!"):
        CabangaBot().decide(first, cabanga.view(first.seat))


# ------------------------------------------------------------------------------------------- debug text


class Explainer(LamaBot):
    """Says why it plays what it plays, in pieces; at a match's start and end too."""

    def __init__(self) -> None:
        self.matches = 0

    def on_match_start(self, info: MatchInfo) -> None:
        self.matches += 1
        self.debug(f"match {self.matches} starts")

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        self.debug(f"{choices[0]}: the first")
        self.debug(len(choices))  # not a str: str()'d
        return choices[0]

    def on_match_end(self, result: MatchResult, events: Sequence[Event]) -> None:
        self.debug("the end")  # no answer follows: dropped


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no")


def test_debug_text_joins_with_newlines_str_s_what_is_not_text_and_is_taken_once() -> None:
    bot = Bot()
    assert take_debug(bot) == b""
    bot.debug("R7:left: gap 2")
    bot.debug(3.5)
    bot.debug(None)
    bot.debug(Unprintable())
    bot.debug("é\ud800")  # a lone surrogate cannot be UTF-8: shown as ?
    assert take_debug(bot).decode() == "R7:left: gap 2\n3.5\nNone\n<debug: str() failed: RuntimeError>\né?"
    assert take_debug(bot) == b""


@pytest.mark.parametrize("pieces", [["x" * 5000], ["é" * 700], ["ab"] * 2000, ["€" * 341, "z"]],
                         ids=["one long", "two-byte", "many calls", "three-byte then one"])
def test_debug_text_is_cut_at_1_kib_on_a_character_and_says_so(pieces: list[str]) -> None:
    bot = Bot()
    for piece in pieces:
        bot.debug(piece)
    data = take_debug(bot)
    whole = "\n".join(pieces).encode()
    assert len(whole) > DEBUG_BYTES
    assert len(data) <= DEBUG_BYTES and len(data) > DEBUG_BYTES - len(DEBUG_CUT) - 3
    text = data.decode()  # whole characters only
    assert text.endswith(DEBUG_CUT) and whole.startswith(text.removesuffix(DEBUG_CUT).encode())
    assert len(bot.__dict__.get("_debug_parts") or ()) == 0
    # kept no more than the cap while it was written
    many = Bot()
    for _ in range(100_000):
        many.debug("0123456789")
    assert sum(map(len, many._debug_parts or ())) <= DEBUG_BYTES + 1


def test_debug_text_exactly_at_the_cap_is_not_cut() -> None:
    bot = Bot()
    bot.debug("a" * (DEBUG_BYTES - 3))
    bot.debug("é")  # 1 newline + 2 bytes: 1024 in all
    assert take_debug(bot) == b"a" * (DEBUG_BYTES - 3) + "\né".encode()


def _lama_request() -> tuple[pb.DecisionRequest, int]:
    state = get_game("lama").new_match(2, 1)
    prompt = state.pending()[0]
    request = Request("m1", 0, prompt, state.view(prompt.seat), (), 1.0)
    message = pb.ArenaMessage.FromString(codec.request_bytes(request) + codec.request_stamp(5, 0))
    return message.request, prompt.seat


def test_an_answer_carries_the_debug_text_of_its_decision_a_crash_report_too() -> None:
    request, seat = _lama_request()
    bot = Explainer()
    bot.debug("before the decision")  # written since the previous answer: goes with this one
    answer = _answer(bot, request, seat, codec.codec_for("lama"))
    first = request.choices[0]
    assert list(answer.picks) == [0] and not answer.crash
    assert answer.debug.decode() == f"before the decision\n{first}: the first\n{len(request.choices)}"

    class Failing(Explainer):
        def turn(self, view: Any, choices: Sequence[Any]) -> Any:
            self.debug("about to fail")
            raise ValueError("boom")

    crashed = _answer(Failing(), request, seat, codec.codec_for("lama"))
    assert crashed.crash == "ValueError: boom" and crashed.debug == b"about to fail"
    assert _answer(Bot(), request, seat, codec.codec_for("lama")).debug == b""


@pytest.mark.process
def test_debug_text_from_match_start_goes_with_the_first_answer_and_from_match_end_nowhere() -> None:
    # the SDK's own loop (arena.sdk.serve) against the arena's server, two matches on one stream
    bot = Explainer()
    game = get_game("lama")

    async def play() -> list[list[Answered]]:
        with tempdir.folder("sdk") as folder:
            server = ArenaServer.private()
            address = await server.start(f"unix:{folder / 'arena.sock'}")
            slot = server.add_slot("explainer")
            served = asyncio.ensure_future(asyncio.to_thread(serve, bot, address, slot.token))
            try:
                await asyncio.wait_for(slot.connected.wait(), 30)
                seat = RecordingSeat(RemoteSeat(slot))
                matches = []
                for seed in (1, 2):
                    record = await referee_match(game, [seat, random_seat("other", seed)], seed,
                                                 game.options({"rounds": 1}), clock=Clock(5.0))
                    assert record.faults == [], record.faults
                    matches.append(seat.answered)
                    seat.answered = []
            finally:
                await server.stop()
                assert await asyncio.wait_for(served, 30) == 0
        return matches

    for number, answered in enumerate(asyncio.run(play()), 1):
        texts = [one.answer.debug for one in answered]
        reasons = [f"{one.chosen[0]}: the first\n{len(one.choices)}" for one in answered]
        assert texts == [f"match {number} starts\n{reasons[0]}", *reasons[1:]]
    assert bot.matches == 2 and take_debug(bot) == b"the end"  # the last match's end: never sent


def test_a_local_seat_keeps_its_bots_last_debug_text() -> None:
    bot = Explainer()
    seat = local_seat(bot, "explainer")
    game = get_game("lama")
    record = asyncio.run(referee_match(game, [seat, random_seat("other", 1)], 1, game.options({"rounds": 1})))
    assert record.result is not None
    last = seat.last_debug  # type: ignore[attr-defined]
    assert last.endswith(": the first\n" + last.rsplit("\n", 1)[-1]) and "starts" not in last
