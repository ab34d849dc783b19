"""A game defined outside arena plugs in by its folder and its registration alone.

tests/tinygame/ is a whole game folder (rules, .proto, codec, bot base class, tools, web renderer). This test
copies it to a package ``tinygame`` of its own, generates its messages' code there, registers it with
``ARENA_GAMES=tiny=tinygame`` and drives every command through it as a user would, with no edit to arena:
play, match over gRPC (the bots jailed where the machine has a jail), replay, replay --seat, check, new, a
ladder, and serve's replay data and renderer.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Return a folder holding the package ``tinygame`` (messages generated) and a bot list of two of its bots."""
    from grpc_tools import protoc

    pkg = tmp_path_factory.mktemp("pkg")
    shutil.copytree(ROOT / "tests" / "tinygame", pkg / "tinygame", ignore=shutil.ignore_patterns("__pycache__"))
    assert protoc.main(["protoc", f"-I{pkg}", f"--python_out={pkg}", str(pkg / "tinygame" / "tiny.proto")]) == 0
    (pkg / "bots.toml").write_text(
        '[[bot]]\nname = "high"\ncommand = ["{python}", "-m", "tinygame.bot"]\ncwd = "."\ngames = ["tiny"]\n'
        '[[bot]]\nname = "also-high"\ncommand = ["{python}", "-m", "tinygame.bot"]\ncwd = "."\ngames = ["tiny"]\n')
    return pkg


def arena(pkg: Path, *args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_GAMES": "tiny=tinygame", "PYTHONPATH": os.pathsep.join([str(pkg), str(ROOT)])}
    done = subprocess.run([*ARENA, *map(str, args)], cwd=pkg, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done


def test_the_registered_game_is_listed_and_played_in_process(tiny: Path) -> None:
    assert "tiny: Tiny Duel, 2-3 seats; decisions: lay; options: cards=3" in arena(tiny, "games").stdout
    out = arena(tiny, "demo", "--game", "tiny", "--seats", "3", "--seed", "4").stdout
    assert "lays" in out and "match over: 1." in out


def test_a_match_over_grpc_replays_and_rates_by_the_games_own_places(tiny: Path) -> None:
    replay = tiny / "match.json"
    out = arena(tiny, "match", "--bots", "bots.toml", "--game", "tiny", "--seats", "2", "--seed", "3", "-o",
                "cards=4", "--replay", replay).stdout
    assert "fault" not in out and "match over" in out
    data = json.loads(replay.read_text())
    assert data["game"] == "tiny" and data["options"] == {"cards": 4}
    again = arena(tiny, "replay", replay).stdout
    final = next(line for line in again.splitlines() if line.startswith("match over: "))
    assert final in out.splitlines() and "replay verified" in again  # the same events, the same places
    totals = [int(part.rsplit("(", 1)[1].rstrip(")")) for part in final.split(": ", 1)[1].split(", ")]
    assert totals == sorted(totals, reverse=True)  # highest first: the game's places, not lowest-first totals
    seat = arena(tiny, "replay", replay, "--seat", "1").stdout
    assert "lay" in seat


def test_the_registered_games_bundled_bots_play_when_no_list_is_given(tiny: Path) -> None:
    """A game from another package ships its bundled bots in its folder (tinygame/bots/bots.toml), as the built-in
    games do: `arena match` plays them when given no bot list."""
    out = arena(tiny, "match", "--game", "tiny", "--seats", "2", "--seed", "3").stdout
    final = next(line for line in out.splitlines() if line.startswith("match over: "))
    assert "fault" not in out and "tiny-highest" in final and "tiny-lowest" in final, out


def test_check_and_new_work_for_the_registered_game(tiny: Path) -> None:
    report = json.loads(arena(tiny, "check", "bots.toml", "--name", "high", "--json").stdout)
    runs = report["runs"]  # every seat count, the game's own option variants and edge state
    assert runs == ["tiny, 2 seats, seat 0", "tiny, 3 seats, seat 1", "tiny, 3 seats, cards=1, seat 0",
                    "tiny, 3 seats, cards=5, seat 1", "tiny: one card each, 3 seats"], runs
    assert report["problems"] == [] and report["passed"]
    arena(tiny, "new", "mine", "--game", "tiny", "--dir", tiny)
    bot = (tiny / "mine" / "bot.py").read_text()
    assert "class Mine(TinyBot):" in bot and "def lay(" in bot
    assert "PASS: mine answered" in arena(tiny, "check", tiny / "mine" / "bots.toml").stdout


def test_a_ladder_of_the_registered_game_and_its_replay_page(tiny: Path) -> None:
    db = tiny / "ladder.db"
    arena(tiny, "ladder", "--bots", "bots.toml", "--game", "tiny", "--seats", "2", "--matches", "4", "--db", db,
          "--seed", "2")
    env = {**os.environ, "ARENA_GAMES": "tiny=tinygame", "PYTHONPATH": os.pathsep.join([str(tiny), str(ROOT)])}
    server = subprocess.Popen([*ARENA, "serve", "--db", str(db)], cwd=tiny, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True)
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 60)
        line = server.stdout.readline() if ready else ""
        assert line.startswith("serving http://"), line
        url = line.split()[1].rstrip("/")
        with urllib.request.urlopen(url + "/api/match/1", timeout=30) as response:
            match = json.loads(response.read())
        assert match["game"] == "tiny" and len(match["frames"]) == 1 + 2 * 3
        assert match["frames"][-1]["table"]["hands"] == [[], []]
        with urllib.request.urlopen(url + "/games/tiny.js", timeout=30) as response:
            assert b"window.ArenaGames.tiny = draw" in response.read()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.parametrize("told", [True, False])
def test_a_bot_told_its_games_packages_loads_its_game_without_reading_the_installed_ones(told: bool) -> None:
    """A bot the arena launches is told every game's package (``ARENA_GAMES``, tests/test_sandbox.py), and a
    registered game is found without reading every installed distribution's entry points (importlib.metadata's
    import and its scan: a fifth of a bot's start in the jail). Not told, it reads them, as before."""
    told_games = "g.register_text('lama=arena.games.lama'); " if told else ""
    code = ("import sys; import arena.games as g; " + told_games +
            "import arena.sdk, arena.games.lama.bots.hard.bot; g.get_game('lama'); g.game_part('lama', 'codec'); "
            "print('importlib.metadata' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(not told)]
