"""The Go example bot (bots/go) builds offline with Debian's Go packages and plays both games, saying why in each
answer's debug text; arena check passes it; and the bot `arena new --lang go` writes builds, says why it bids and
passes arena check too.

It needs Go, Debian's gRPC and protobuf Go sources and the code generators (golang-go golang-google-grpc-dev
golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc
protobuf-compiler); .ci/run installs them when missing. Elsewhere the tests skip with the reason, but with
CI=true a missing package is a failure.

The example is built once for the module; its build fills Go's build cache (GOCACHE, Go's default), so the new
bot's build, the same main.go, compiles only its own generated code and links: about a second.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolchain import assert_explained, build_script, recorded_match, unavailable

from arena.cli import main
from arena.core.referee import Clock
from arena.games import get_game
from arena.launch.botlist import BotSpec, bundled_bots

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
GO = ROOT / "bots" / "go"
NEEDED = ("go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc")
GOCODE = Path("/usr/share/gocode/src")
PACKAGES = ("golang-go golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev "
            "protoc-gen-go protoc-gen-go-grpc protobuf-compiler")


@pytest.fixture(scope="module")
def example() -> Path:
    """The example bot, built (skip, or with CI=true fail, without the toolchain)."""
    missing = [tool for tool in NEEDED if shutil.which(tool) is None]
    if not (GOCODE / "google.golang.org" / "grpc").is_dir():
        missing.append("gRPC's Go sources (golang-google-grpc-dev)")
    if (GOCODE / "github.com" / "golang" / "protobuf" / "proto" / "table_marshal.go").exists():
        missing.append("github.com/golang/protobuf 1.4 or later (golang-github-golang-protobuf-1-5-dev; 1.3 is there)")
    if missing:
        reason = f"the Go bot needs {', '.join(missing)} (apt-get install {PACKAGES})"
        unavailable(reason)
    return build_script(GO)


def test_the_go_bot_builds_and_plays_both_games_saying_why(example: Path) -> None:
    assert example.is_file()
    go = BotSpec("go", ("./build/arena-bot",), GO)
    for game_name, other in (("cabanga", "cabanga-easy"), ("lama", "lama-easy")):
        game = get_game(game_name)
        seats = [go, bundled_bots()[other], go]
        record, answered = recorded_match(game, seats, 5, game.options({"rounds": 2}), clock=Clock(1.0))
        assert record.result is not None and record.faults == [], record.faults
        assert len(record.latencies[0]) > 5 and len(record.latencies[2]) > 5
        for seat in (0, 2):  # "R7:left: gap 2", "throw all 2", "L3: the lowest legal card", "draw: no card fits, ..."
            assert_explained(answered[seat])
        texts = [one.answer.debug for one in answered[0] + answered[2]]
        assert any((": gap " if game_name == "cabanga" else ": the lowest legal card") in text for text in texts)
    result = CliRunner().invoke(main, ["check", str(GO / "bots.toml")])
    assert result.exit_code == 0, result.output
    assert "PASS: go-example" in result.output


def test_a_new_go_bot_builds_and_passes_check(example: Path, tmp_path: Path) -> None:
    # goofspiel: a game main.go does not decode, played from the envelope alone (its first legal choice)
    made = CliRunner().invoke(main, ["new", "gobot", "--game", "goofspiel", "--lang", "go", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "gobot"
    program = build_script(folder)  # from proto/ in its folder, the arena's source tree out of sight
    assert program.is_file() and (folder / "build" / "src" / "arenabot" / "games" / "goofspiel").is_dir()
    checked = CliRunner().invoke(main, ["check", str(folder / "bots.toml")])
    assert checked.exit_code == 0, checked.output
    assert "PASS: gobot" in checked.output
    game = get_game("goofspiel")
    record, answered = recorded_match(game, [BotSpec("gobot", ("./build/arena-bot",), folder),
                                             bundled_bots()["goofspiel-easy"]], 1,
                                      game.options({"cards": 5, "rounds": 1}), clock=Clock(1.0))
    assert record.faults == [], record.faults
    assert_explained(answered[0])  # played from the envelope alone: "3: the first legal choice"
