"""arena new: a minimal bot and its bot list entry that pass arena check as written (issue 11)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from toolchain import assert_explained, recorded_match

from arena.cli import main
from arena.contest.manifest import Manifest, read_manifest
from arena.core.referee import Clock
from arena.games import get_game
from arena.launch.botlist import BotSpec, bundled_bots
from arena.tools.new import ScaffoldError, decoded_games

ROOT = Path(__file__).resolve().parent.parent


def installed_arena_is_this_tree() -> bool:
    """A launched Python bot imports the arena installed for its interpreter (its environment is clean)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", "import arena; print(arena.__file__)"], cwd="/", env=env,
                          capture_output=True, text=True)
    return done.returncode == 0 and Path(done.stdout.strip()).resolve().is_relative_to(ROOT)


@pytest.mark.process
@pytest.mark.parametrize("game", ["cabanga", "lama", "goofspiel"])
def test_a_new_python_bot_passes_arena_check_as_written_and_says_why(tmp_path: Path, game: str) -> None:
    made = CliRunner().invoke(main, ["new", "my-bot", "--game", game, "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "my-bot"
    assert sorted(p.name for p in folder.iterdir()) == ["bot.py", "bot.toml", "bots.toml"]
    assert f'games = ["{game}"]' in (folder / "bots.toml").read_text()
    # its contest manifest: the submission as written
    assert read_manifest(folder) == Manifest("my-bot", ("bot.py",), (game,), "python")
    if not installed_arena_is_this_tree():
        pytest.skip("the interpreter's installed arena is not this source tree (pip install -e . here), and a "
                    "launched bot imports that one")
    checked = CliRunner().invoke(main, ["check", str(folder / "bots.toml")])
    assert checked.exit_code == 0, checked.output
    assert "PASS: my-bot" in checked.output and f"{game}, 3 seats" in checked.output
    # the template's debug text rides on its answers: "R7:left: the first legal play", "throw all 2", ...
    rules = get_game(game)
    others = [bundled_bots()[f"{game}-easy"], bundled_bots()[f"{game}-random"]]  # quick: the search bots think
    seats = [BotSpec("my-bot", ("{python}", "bot.py"), folder), *others]
    record, answered = recorded_match(rules, seats, 1, rules.options({"rounds": 1}), clock=Clock(2.0))
    assert record.faults == [], record.faults
    assert_explained(answered[0])


@pytest.mark.process
def test_a_new_javascript_bot_passes_arena_check(tmp_path: Path, js_modules: Path) -> None:
    made = CliRunner().invoke(main, ["new", "jsbot", "--game", "lama", "--lang", "js", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "jsbot"
    # the protocol's envelope and the game's own messages, where bot.js looks for them
    proto = folder / "proto" / "arena"
    assert (proto / "v2" / "arena.proto").read_bytes() == (ROOT / "proto" / "arena" / "v2" / "arena.proto").read_bytes()
    assert (proto / "games" / "lama" / "lama.proto").read_bytes() == (
        ROOT / "arena" / "games" / "lama" / "lama.proto").read_bytes()
    # what `npm install` would fetch: a copy, not a link, since the bot's jail shows only its own folder
    shutil.copytree(js_modules, folder / "node_modules", symlinks=True)
    checked = CliRunner().invoke(main, ["check", str(folder / "bots.toml")])
    assert checked.exit_code == 0, checked.output
    assert "PASS: jsbot" in checked.output
    lama = get_game("lama")
    seats = [BotSpec("jsbot", ("node", "bot.js"), folder), bundled_bots()["lama-easy"]]
    record, answered = recorded_match(lama, seats, 1, lama.options({"rounds": 1}), clock=Clock(2.0))
    assert record.faults == [], record.faults
    assert_explained(answered[0])  # "L3: the first legal choice"


def test_a_new_cpp_bot_has_what_its_build_needs(tmp_path: Path) -> None:
    made = CliRunner().invoke(main, ["new", "cppbot", "--game", "cabanga", "--lang", "cpp", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "cppbot"
    for file in ("bot.cc", "CMakeLists.txt"):
        assert (folder / file).read_bytes() == (ROOT / "bots" / "cpp" / file).read_bytes()
    # the envelope and the messages of every game bot.cc decodes, where CMakeLists.txt looks for them
    proto = folder / "proto" / "arena"
    assert (proto / "v2" / "arena.proto").read_bytes() == (ROOT / "proto" / "arena" / "v2" / "arena.proto").read_bytes()
    for game in ("cabanga", "lama"):
        assert (proto / "games" / game / f"{game}.proto").read_bytes() == (
            ROOT / "arena" / "games" / game / f"{game}.proto").read_bytes()
    assert 'command = ["./build/arena-bot"]' in (folder / "bots.toml").read_text()
    manifest = read_manifest(folder)  # a contest builds it in its jail, and runs what CMake built
    assert (manifest.command, manifest.runtime) == (("build/arena-bot",), "native")
    assert manifest.build is not None and "cmake --build build" in manifest.build[-1]
    assert "cmake --build" in made.output
    # where CMakeLists.txt looks first (proto/ beside it), and the games it compiles: configuring it costs CMake
    # half a minute of resolving gRPC's pkg-config tree; tests/test_cpp_bot.py builds the same files
    cmake = (folder / "CMakeLists.txt").read_text()
    assert "${CMAKE_CURRENT_SOURCE_DIR}/proto/arena/v2/arena.proto" in cmake and "set(GAMES cabanga lama)" in cmake
    assert "${GAMES_ROOT}/arena/games/${GAME}/${GAME}.proto" in cmake


def test_a_new_cpp_bot_for_another_game_has_that_games_proto_beside_the_two_it_decodes(tmp_path: Path) -> None:
    made = CliRunner().invoke(main, ["new", "cppbot", "--game", "goofspiel", "--lang", "cpp", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    games = tmp_path / "cppbot" / "proto" / "arena" / "games"
    assert sorted(p.name for p in games.iterdir()) == ["cabanga", "goofspiel", "lama"]
    assert 'games = ["goofspiel"]' in (tmp_path / "cppbot" / "bots.toml").read_text()


def test_the_games_the_examples_decode_are_named_by_the_cpp_example_and_decoded_by_all_four() -> None:
    """arena new copies the .proto of the games the examples decode, which it reads from the C++ example's
    CMakeLists.txt (no list of games in the arena's code): the Go, Java and Rust examples decode the same."""
    games = decoded_games(ROOT / "bots")
    assert games == ("cabanga", "lama")
    uses = {"go/main.go": '"arenabot/games/{}"', "java/Bot.java": "import arena.{}.v1.", "rust/src/main.rs": "{}::v1"}
    for source, pattern in uses.items():
        text = (ROOT / "bots" / source).read_text()
        assert all(pattern.format(game) in text for game in games), source


def test_an_example_without_its_games_line_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "cpp").mkdir()
    (tmp_path / "cpp" / "CMakeLists.txt").write_text("project(x)\n")
    with pytest.raises(ScaffoldError, match=r"names no games: set\(GAMES \.\.\.\) is missing"):
        decoded_games(tmp_path)


@pytest.mark.parametrize("game", ["lama", "goofspiel"])
def test_a_new_go_bot_has_what_its_build_needs(tmp_path: Path, game: str) -> None:
    made = CliRunner().invoke(main, ["new", "gobot", "--game", game, "--lang", "go", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "gobot"
    for file in ("main.go", "build.sh"):
        assert (folder / file).read_bytes() == (ROOT / "bots" / "go" / file).read_bytes()
    # the envelope, the games main.go decodes (it imports their code) and the bot's own game, where build.sh
    # looks first; tests/test_go_bot.py builds such a folder and checks it
    proto = folder / "proto" / "arena"
    assert (proto / "v2" / "arena.proto").read_bytes() == (ROOT / "proto" / "arena" / "v2" / "arena.proto").read_bytes()
    for name in ("cabanga", "lama", game):
        assert (proto / "games" / name / f"{name}.proto").read_bytes() == (
            ROOT / "arena" / "games" / name / f"{name}.proto").read_bytes()
    assert sorted(p.name for p in (proto / "games").iterdir()) == sorted({"cabanga", "lama", game})
    assert "[ -f proto/arena/v2/arena.proto ]" in (folder / "build.sh").read_text()
    assert (folder / ".gitignore").read_text() == "build/\n"
    bots = (folder / "bots.toml").read_text()
    assert 'command = ["./build/arena-bot"]' in bots and f'games = ["{game}"]' in bots
    manifest = read_manifest(folder)  # a contest builds it in its jail, offline, and runs what Go built
    assert (manifest.command, manifest.runtime, manifest.build) == (("build/arena-bot",), "native",
                                                                    ("sh", "build.sh"))
    assert f"sh {folder / 'build.sh'} && arena check" in made.output


@pytest.mark.parametrize("game", ["cabanga", "goofspiel"])
def test_a_new_java_bot_has_what_its_build_needs(tmp_path: Path, game: str) -> None:
    made = CliRunner().invoke(main, ["new", "javabot", "--game", game, "--lang", "java", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "javabot"
    for file in ("Bot.java", "build.sh"):
        assert (folder / file).read_bytes() == (ROOT / "bots" / "java" / file).read_bytes()
    # the envelope, the games Bot.java decodes (it imports their code) and the bot's own game, where build.sh
    # looks first; tests/test_java_bot.py builds such a folder and checks it
    proto = folder / "proto" / "arena"
    assert (proto / "v2" / "arena.proto").read_bytes() == (ROOT / "proto" / "arena" / "v2" / "arena.proto").read_bytes()
    assert sorted(p.name for p in (proto / "games").iterdir()) == sorted({"cabanga", "lama", game})
    assert "[ -f proto/arena/v2/arena.proto ]" in (folder / "build.sh").read_text()
    assert (folder / ".gitignore").read_text() == "build/\n"
    bots = (folder / "bots.toml").read_text()
    assert 'command = ["./build/arena-bot"]' in bots and f'games = ["{game}"]' in bots
    manifest = read_manifest(folder)  # a contest builds it in its jail, offline, and runs the JVM build.sh set up
    assert (manifest.command, manifest.runtime, manifest.build) == (("build/arena-bot",), "native",
                                                                    ("sh", "build.sh"))
    assert f"sh {folder / 'build.sh'} && arena check" in made.output


@pytest.mark.parametrize("game", ["cabanga", "goofspiel"])
def test_a_new_rust_bot_has_what_its_build_needs(tmp_path: Path, game: str) -> None:
    made = CliRunner().invoke(main, ["new", "rustbot", "--game", game, "--lang", "rust", "--dir", str(tmp_path)])
    assert made.exit_code == 0, made.output
    folder = tmp_path / "rustbot"
    for file in ("src/main.rs", "build.rs", "build.sh"):
        assert (folder / file).read_bytes() == (ROOT / "bots" / "rust" / file).read_bytes()
    # the package is the bot's, its program still arena-bot (build.sh copies it to build/arena-bot)
    cargo = (ROOT / "bots" / "rust" / "Cargo.toml").read_text()
    renamed = cargo.replace('name = "arena-bot"\nversion', 'name = "rustbot"\nversion')
    assert (folder / "Cargo.toml").read_text() == renamed
    assert 'name = "rustbot"' in (folder / "Cargo.toml").read_text()
    # the envelope, the games main.rs decodes (it uses their code) and the bot's own game, where build.rs looks
    # first; tests/test_rust_bot.py builds such a folder and checks it
    proto = folder / "proto" / "arena"
    assert (proto / "v2" / "arena.proto").read_bytes() == (ROOT / "proto" / "arena" / "v2" / "arena.proto").read_bytes()
    assert sorted(p.name for p in (proto / "games").iterdir()) == sorted({"cabanga", "lama", game})
    assert 'Path::new("proto/arena/v2/arena.proto").is_file()' in (folder / "build.rs").read_text()
    assert (folder / ".gitignore").read_text() == "build/\nCargo.lock\n"
    bots = (folder / "bots.toml").read_text()
    assert 'command = ["./build/arena-bot"]' in bots and f'games = ["{game}"]' in bots
    manifest = read_manifest(folder)  # a contest builds it in its jail, offline, and keeps only the program
    assert (manifest.command, manifest.runtime, manifest.build) == (
        ("build/arena-bot",), "native", ("sh", "-c", "sh build.sh && rm -rf build/target build/cargo-home"))
    assert f"sh {folder / 'build.sh'} && arena check" in made.output

def test_new_refuses_a_bad_name_and_a_folder_in_use(tmp_path: Path) -> None:
    bad = CliRunner().invoke(main, ["new", "../evil", "--dir", str(tmp_path)])
    assert bad.exit_code == 1 and "a bot name is a letter" in bad.output
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("mine")
    used = CliRunner().invoke(main, ["new", "taken", "--dir", str(tmp_path)])
    assert used.exit_code == 1 and "exists and is not empty" in used.output
