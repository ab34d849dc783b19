"""The C++ example bot (bots/cpp) is built with CMake and plays both games, saying why in each answer's debug
text; arena check passes it.

It needs gRPC's C++ library and code generator (Debian: libgrpc++-dev protobuf-compiler-grpc), cmake and a
C++ compiler; .ci/run installs them when missing. Elsewhere the test skips with the reason, but with CI=true a
missing package is a failure.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolchain import assert_explained, recorded_match, unavailable

from arena.cli import main
from arena.core.referee import Clock
from arena.games import get_game
from arena.launch.botlist import BotSpec

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
CPP = ROOT / "bots" / "cpp"
NEEDED = ("cmake", "c++", "protoc", "grpc_cpp_plugin", "pkg-config")


def build() -> Path:
    missing = [tool for tool in NEEDED if shutil.which(tool) is None]
    if not missing and subprocess.run(["pkg-config", "--exists", "grpc++"]).returncode != 0:
        missing.append("grpc++ (libgrpc++-dev)")
    if missing:
        reason = (f"the C++ bot needs {', '.join(missing)} "
                  "(apt-get install libgrpc++-dev protobuf-compiler-grpc cmake g++)")
        unavailable(reason)
    build_dir = CPP / "build"
    for command in (["cmake", "-S", str(CPP), "-B", str(build_dir)],
                    ["cmake", "--build", str(build_dir), "-j2"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return build_dir / "arena-bot"


def test_the_cpp_bot_builds_and_plays_both_games_saying_why() -> None:
    binary = build()
    assert binary.is_file()
    cpp = BotSpec("cpp", ("./build/arena-bot",), CPP)
    for game_name, others in (("cabanga", "cabanga.bots.greedy"), ("lama", "lama.bots.greedy")):
        game = get_game(game_name)
        other = BotSpec("py", ("{python}", "-m", f"arena.games.{others}.bot"), ROOT)
        record, answered = recorded_match(game, [cpp, other, cpp], 5, game.options({"rounds": 2}), clock=Clock(1.0))
        assert record.result is not None and record.faults == [], record.faults
        assert len(record.latencies[0]) > 5 and len(record.latencies[2]) > 5
        for seat in (0, 2):  # "R7:left: gap 2", "throw all 2", "L3: the lowest legal card", "draw: no card fits, ..."
            assert_explained(answered[seat])
        texts = [one.answer.debug for one in answered[0] + answered[2]]
        assert any((": gap " if game_name == "cabanga" else ": the lowest legal card") in text for text in texts)
    result = CliRunner().invoke(main, ["check", str(CPP / "bots.toml")])
    assert result.exit_code == 0, result.output
    assert "PASS: cpp-example" in result.output
