"""The Rust example bot (bots/rust) builds offline with Debian's Rust packages and plays both games in the real
jail, saying why in each answer's debug text; arena check passes it; and the bot `arena new --lang rust` writes builds,
says why it bids and passes arena check too.

It needs rustc, cargo, protoc (with google/protobuf/any.proto) and the sources of the crates Debian packages as
librust-*-dev under /usr/share/cargo/registry (rustc cargo librust-h2-dev librust-tokio-dev librust-prost-dev
librust-prost-types-dev librust-prost-build-dev librust-bytes-dev librust-http-dev protobuf-compiler
libprotobuf-dev); .ci/run installs them when missing. Elsewhere the tests skip with the reason, but with CI=true a
missing package is a failure.

The example is built once for the module, into its own build/target, and the new bot's build shares that
folder (CARGO_TARGET_DIR): it compiles only its own crate, not the crates again (its package has the bot's name, so
the two bots' builds keep apart there and neither undoes the other's). A cold module takes about a minute on 2
cores (the crates' build, 45 s of it); a warm one 10 to 25 s (the new bot's crate, in a new folder, recompiles).
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
RUST = ROOT / "bots" / "rust"
TARGET = RUST / "build" / "target"
CRATES = Path("/usr/share/cargo/registry")
NEEDED_CRATES = {"h2": "librust-h2-dev", "tokio": "librust-tokio-dev", "prost": "librust-prost-dev",
                 "prost-types": "librust-prost-types-dev", "prost-build": "librust-prost-build-dev",
                 "bytes": "librust-bytes-dev", "http": "librust-http-dev"}
"""The crates build.sh looks for, and their packages."""
PACKAGES = ("rustc cargo librust-h2-dev librust-tokio-dev librust-prost-dev librust-prost-types-dev "
            "librust-prost-build-dev librust-bytes-dev librust-http-dev protobuf-compiler libprotobuf-dev")


def build(folder: Path) -> Path:
    """Build the Rust bot in ``folder`` with its build.sh, into the example's target folder; return its program."""
    return build_script(folder, timeout=900, env={**os.environ, "CARGO_TARGET_DIR": str(TARGET)})


@pytest.fixture(scope="module")
def example() -> Path:
    """The example bot, built (skip, or with CI=true fail, without the toolchain)."""
    missing = [tool for tool in ("cargo", "rustc", "protoc") if shutil.which(tool) is None]
    missing += [f"the crate {crate} ({package})" for crate, package in NEEDED_CRATES.items()
                if not any(path.name[len(crate) + 1:][:1].isdigit() for path in CRATES.glob(f"{crate}-*"))]
    if not Path("/usr/include/google/protobuf/any.proto").is_file():
        missing.append("google/protobuf/any.proto (libprotobuf-dev)")
    if missing:
        reason = f"the Rust bot needs {', '.join(missing)} (apt-get install {PACKAGES})"
        unavailable(reason)
    return build(RUST)


def test_the_rust_bot_builds_and_plays_both_games_in_the_jail_saying_why(example: Path) -> None:
    assert example.is_file()
    # the real jail where the machine has one (CI's has): the bot must fit the default limits (memory_mb is each
    # process's address space) and reach the arena's Unix socket from inside
    jailed = detect_sandbox().isolation is Isolation.JAIL
    if os.environ.get("CI") == "true":
        assert jailed, detect_sandbox().describe()
    rust = BotSpec("rust", ("./build/arena-bot",), RUST)
    for game_name, other in (("cabanga", "cabanga-easy"), ("lama", "lama-easy")):
        game = get_game(game_name)
        seats = [rust, bundled_bots()[other], rust]
        record, answered = recorded_match(game, seats, 5, game.options({"rounds": 2}), clock=Clock(1.0))
        assert record.result is not None and record.faults == [], record.faults
        assert len(record.latencies[0]) > 5 and len(record.latencies[2]) > 5
        for seat in (0, 2):  # "R7:left: gap 2", "throw all 2", "L3: the lowest legal card", "draw: no card fits, ..."
            assert_explained(answered[seat])
        texts = [one.answer.debug for one in answered[0] + answered[2]]
        assert any((": gap " if game_name == "cabanga" else ": the lowest legal card") in text for text in texts)
    result = CliRunner().invoke(main, ["check", str(RUST / "bots.toml")])
    assert result.exit_code == 0, result.output
    assert "PASS: rust-example" in result.output


def test_a_new_rust_bot_builds_and_passes_check(example: Path, tmp_path: Path) -> None:
    # goofspiel: a game src/main.rs does not decode, played from the envelope alone (its first legal choice)
    made = CliRunner().invoke(main, ["new", "rustbot", "--game", "goofspiel", "--lang", "rust", "--dir",
                                     str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "rustbot"
    program = build(folder)  # from proto/ in its folder, the arena's source tree out of sight
    assert program.is_file()
    # build.rs generated goofspiel's code too, for the author to decode its views
    assert list((TARGET / "release" / "build").glob("rustbot-*/out/arena.goofspiel.v1.rs"))
    checked = CliRunner().invoke(main, ["check", str(folder / "bots.toml")])
    assert checked.exit_code == 0, checked.output
    assert "PASS: rustbot" in checked.output
    game = get_game("goofspiel")
    record, answered = recorded_match(game, [BotSpec("rustbot", ("./build/arena-bot",), folder),
                                             bundled_bots()["goofspiel-easy"]], 1,
                                      game.options({"cards": 5, "rounds": 1}), clock=Clock(1.0))
    assert record.faults == [], record.faults
    assert_explained(answered[0])  # played from the envelope alone: "3: the first legal choice"
