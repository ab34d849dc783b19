"""The Java example bot (bots/java) builds offline with Debian's Java packages and plays both games in the real
jail, saying why in each answer's debug text; arena check passes it; and the bot `arena new --lang java` writes builds,
says why it bids and passes arena check too.

It needs a JDK (17 or later: the bot opens the arena's Unix socket with java.nio), protoc, gRPC's Java plugin and
the jars of gRPC, protobuf, Netty, Guava and PerfMark in /usr/share/java (openjdk-17-jdk-headless
protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java libprotobuf-java libnetty-java libperfmark-java
libguava-java); .ci/run installs them when missing. Elsewhere the tests skip with the reason, but with CI=true a
missing package is a failure.

Each build compiles the generated code with javac: some 4 s of CPU, so the module builds twice (the example and
the new bot, whose proto/ holds a third game's .proto), and plays about 15 s of matches and checks on 2 cores.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolchain import assert_explained, build_script, recorded_match, unavailable

from arena.cli import main
from arena.core.referee import Clock
from arena.games import get_game
from arena.launch.botlist import BotSpec, bundled_bots
from arena.launch.sandbox import Isolation, detect_sandbox

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
JAVA = ROOT / "bots" / "java"
NEEDED = ("java", "javac", "protoc", "grpc_java_plugin")
LIBS = Path("/usr/share/java")
JARS = {"grpc-netty": "libgrpc-java", "protobuf": "libprotobuf-java", "netty-codec-http2": "libnetty-java",
        "perfmark-api": "libperfmark-java", "guava": "libguava-java"}
"""A jar of each package build.sh takes jars from, and its package."""
PACKAGES = ("openjdk-17-jdk-headless protobuf-compiler protobuf-compiler-grpc-java-plugin libgrpc-java "
            "libprotobuf-java libnetty-java libperfmark-java libguava-java")


@pytest.fixture(scope="module")
def example() -> Path:
    """The example bot, built (skip, or with CI=true fail, without the toolchain)."""
    missing = [tool for tool in NEEDED if shutil.which(tool) is None]
    missing += [f"{jar}.jar ({package})" for jar, package in JARS.items() if not (LIBS / f"{jar}.jar").is_file()]
    if missing:
        reason = f"the Java bot needs {', '.join(missing)} (apt-get install {PACKAGES})"
        unavailable(reason)
    return build_script(JAVA)


def test_the_java_bot_builds_and_plays_both_games_in_the_jail_saying_why(example: Path) -> None:
    assert example.is_file()
    # the real jail where the machine has one (CI's has): a JVM there must find its configuration in /etc and fit
    # the default limits, and the bot reaches the arena's socket through a port of its own loopback
    jailed = detect_sandbox().isolation is Isolation.JAIL
    if os.environ.get("CI") == "true":
        assert jailed, detect_sandbox().describe()
    java = BotSpec("java", ("./build/arena-bot",), JAVA)
    for game_name, other in (("cabanga", "cabanga-easy"), ("lama", "lama-easy")):
        game = get_game(game_name)
        seats = [java, bundled_bots()[other], java]
        record, answered = recorded_match(game, seats, 5, game.options({"rounds": 2}), clock=Clock(1.0))
        assert record.result is not None and record.faults == [], record.faults
        assert len(record.latencies[0]) > 5 and len(record.latencies[2]) > 5
        for seat in (0, 2):  # "R7:left: gap 2", "throw all 2", "L3: the lowest legal card", "draw: no card fits, ..."
            assert_explained(answered[seat])
        texts = [one.answer.debug for one in answered[0] + answered[2]]
        assert any((": gap " if game_name == "cabanga" else ": the lowest legal card") in text for text in texts)
    result = CliRunner().invoke(main, ["check", str(JAVA / "bots.toml")])
    assert result.exit_code == 0, result.output
    assert "PASS: java-example" in result.output


def test_a_new_java_bot_builds_and_passes_check(example: Path, tmp_path: Path) -> None:
    # goofspiel: a game Bot.java does not decode, played from the envelope alone (its first legal choice)
    made = CliRunner().invoke(main, ["new", "javabot", "--game", "goofspiel", "--lang", "java", "--dir",
                                     str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "javabot"
    program = build_script(folder)  # from proto/ in its folder, the arena's source tree out of sight
    assert program.is_file() and (folder / "build" / "src" / "arena" / "goofspiel" / "v1").is_dir()
    checked = CliRunner().invoke(main, ["check", str(folder / "bots.toml")])
    assert checked.exit_code == 0, checked.output
    assert "PASS: javabot" in checked.output
    game = get_game("goofspiel")
    record, answered = recorded_match(game, [BotSpec("javabot", ("./build/arena-bot",), folder),
                                             bundled_bots()["goofspiel-easy"]], 1,
                                      game.options({"cards": 5, "rounds": 1}), clock=Clock(1.0))
    assert record.faults == [], record.faults
    assert_explained(answered[0])  # played from the envelope alone: "3: the first legal choice"
