"""A bot written in another language (JavaScript, bots/js/bot.js) plays a whole match over the protocol.

It is written from the protocol's .proto files alone (version 2: the envelope proto/arena/v2/arena.proto and
each game's arena/games/<name>/<name>.proto) and loads them at run time, decoding the view and the events (each a
google.protobuf.Any) by their type URLs; its jail shows it those files. Each answer carries its debug text, the
reason for its choice. The test installs its npm packages (npm ci, from bots/js/package-lock.json) when they are
missing (the js_modules fixture).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from toolchain import assert_explained, recorded_match

from arena.core.referee import Clock
from arena.games import get_game
from arena.launch.botlist import BotSpec

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
JS = ROOT / "bots" / "js"


def test_javascript_bot_plays_both_games_without_faults_saying_why(js_modules: Path) -> None:
    js = BotSpec("js", ("node", "bot.js"), JS)
    for game_name, others in (("cabanga", ["cabanga.bots.greedy", "cabanga.bots.random"]),
                              ("lama", ["lama.bots.greedy"])):
        game = get_game(game_name)
        bots = [js, *(BotSpec(o, ("{python}", "-m", f"arena.games.{o}.bot"), ROOT) for o in others)]
        record, answered = recorded_match(game, bots, 5, game.options({"rounds": 2}), clock=Clock(2.0))
        assert record.result is not None
        assert record.faults == [], record.faults
        assert len(record.latencies[0]) > 5  # it really decided, and every answer was legal and in time
        assert_explained(answered[0])  # "R7:left: the first legal choice", "throw all 2"
        assert {one.kind for one in answered[0]} >= ({"play", "throw"} if game_name == "cabanga" else {"turn"})
