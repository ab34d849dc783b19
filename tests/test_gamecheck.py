"""`arena games --check` (arena/tools/gamecheck.py), the checks every game must pass: every built-in game and the
game kept outside the package (tests/tinygame) pass them, and a game with a mistake planted fails, the failing
check named: a view that shows another seat's hand, a default that is not legal, a view that tells what lies face
down, a rule changed under the recorded match."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.games import all_games, game_folder
from arena.tools import gamecheck

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import run; run()"]
TINY_VIEW = "TinyView(seat, None if self.over else self._active, tuple(self._hands[seat]), self.totals)"
PLANTS = {
    # the view's laid values are the next seat's hand: G2 broken, for every seat
    "another hand": ("rules.py", TINY_VIEW, "TinyView(seat, None if self.over else self._active, "
                     "tuple(self._hands[seat]), tuple(c.value for c in self._hands[(seat + 1) % self.seats]))"),
    # a seat's default is no card at all, for a prompt of one card
    "illegal default": ("rules.py", "return (Prompt(self._active, \"lay\", Pick.ONE, hand, (hand[0],)),)",
                        "return (Prompt(self._active, \"lay\", Pick.ONE, hand, ()),)"),
    # the view tells the value of the first card left in the deck, face down: no hand, no pile order, but not a
    # thing a seat was told
    "face-down card": ("rules.py", TINY_VIEW, "TinyView(seat, self._deck[0].value, tuple(self._hands[seat]), "
                       "self.totals)"),
    # T3 scores one more per card laid: the recorded match no longer re-runs to its events
    "changed rule": ("rules.py", "return tuple(sum(c.value for c in laid) for laid in self._laid)",
                     "return tuple(sum(c.value for c in laid) + len(laid) for laid in self._laid)"),
}


def tiny_package(root: Path, plant: tuple[str, str, str] | None = None) -> Path:
    """Return ``root`` holding the package ``tinygame`` (messages generated), with ``plant`` (file, text, new text)
    made in it."""
    from grpc_tools import protoc

    shutil.copytree(ROOT / "tests" / "tinygame", root / "tinygame", ignore=shutil.ignore_patterns("__pycache__"))
    if plant is not None:
        path = root / "tinygame" / plant[0]
        text = path.read_text()
        assert text.count(plant[1]) == 1, plant  # the mistake is planted, exactly once
        path.write_text(text.replace(plant[1], plant[2]))
    assert protoc.main(["protoc", f"-I{root}", f"--python_out={root}", str(root / "tinygame" / "tiny.proto")]) == 0
    return root


def check_tiny(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARENA_GAMES": "tiny=tinygame", "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)])}
    return subprocess.run([*ARENA, "games", "--check", "tiny", *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def outcome_lines(output: str) -> dict[str, str]:
    """Return each check's line of `arena games --check`'s output, by the check's name."""
    lines = [line.strip() for line in output.splitlines() if line.startswith("  ")]
    return {line.split()[1].rstrip(":"): line for line in lines}


def test_every_built_in_game_passes_every_check() -> None:
    result = CliRunner().invoke(main, ["games", "--check"])
    assert result.exit_code == 0, result.output
    names = [game.name for game in all_games()]
    assert result.output.splitlines()[-1] == f"PASS: every check of {len(names)} games"
    for name in names:
        assert f"\n{name}: " in "\n" + result.output
    lines = [line.strip() for line in result.output.splitlines() if line.startswith("  ")]
    assert len(lines) == len(names) * len(gamecheck.CHECKS)
    assert all(line.startswith("ok ") for line in lines), [line for line in lines if not line.startswith("ok ")]
    # the checks compared something: situations met again, requests on the wire, a recorded match
    assert "views: 0 situations" not in result.output and " 0 requests" not in result.output


def test_each_built_in_game_keeps_a_recorded_match_in_its_folder() -> None:
    for game in all_games():
        folder = game_folder(game.name)
        assert folder is not None and (folder / gamecheck.GOLDEN).is_file(), game.name
        data = gamecheck.golden_path(game)
        assert data is not None and data.stat().st_size < 16_000  # a small file


@pytest.mark.process
def test_the_outside_game_passes_every_check_and_its_recorded_match_re_runs(tmp_path: Path) -> None:
    done = check_tiny(tiny_package(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    lines = outcome_lines(done.stdout)
    assert sorted(lines) == sorted(gamecheck.CHECKS)
    assert all(line.startswith("ok ") for line in lines.values()), done.stdout
    assert "golden.json: 9 steps re-run to the same 12 events" in lines["golden"]
    assert done.stdout.endswith("PASS: every check of 1 game\n")


@pytest.mark.parametrize(("plant", "check", "said"), [
    ("another hand", "hiding", "view shows 'hand "),
    ("illegal default", "defaults", "default '-' for 'lay' is not legal"),
    ("face-down card", "views", "holds the same cards and was told the same in"),
    ("changed rule", "golden", "golden.json differs from the stored events at event 10"),
])
@pytest.mark.process
def test_a_planted_mistake_fails_its_check_by_name(tmp_path: Path, plant: str, check: str, said: str) -> None:
    done = check_tiny(tiny_package(tmp_path, PLANTS[plant]))
    assert done.returncode == 1, done.stdout + done.stderr
    lines = outcome_lines(done.stdout)
    assert lines[check].startswith(f"FAILED   {check}: ") and said in lines[check], done.stdout
    assert done.stderr.strip().startswith("Error: checks fail: tiny (") and check in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    if plant == "face-down card":  # seen only by the views check: no hand and no pile order is shown
        assert lines["hiding"].startswith("ok "), done.stdout


def test_a_game_that_raises_fails_the_check_with_what_it_raised() -> None:
    """The game's own code raising is a failing check, never a traceback of the command."""
    from arena.games.base import Game

    class Broken(type(all_games()[0])):  # type: ignore[misc]
        def deck(self, options: object, seats: int) -> tuple[object, ...]:
            raise RuntimeError("no deck today")

    outcomes = {o.check: o for o in gamecheck.check_game(Broken(), gamecheck.Budget(playouts=1, deals=0))}
    assert outcomes["playouts"].status is gamecheck.Status.FAILED
    assert outcomes["playouts"].detail == "the game raised RuntimeError: no deck today"
    assert outcomes["seats"].status is gamecheck.Status.OK
    assert isinstance(Broken(), Game)


@pytest.mark.process
def test_record_writes_a_golden_match_the_check_re_runs(tmp_path: Path) -> None:
    root = tiny_package(tmp_path)
    (root / "tinygame" / gamecheck.GOLDEN).unlink()
    assert "skipped  golden: no recorded match" in check_tiny(root).stdout  # a plug-in may keep none
    env = {**os.environ, "ARENA_GAMES": "tiny=tinygame", "PYTHONPATH": os.pathsep.join([str(root), str(ROOT)])}
    done = subprocess.run([*ARENA, "games", "--record", "tiny", "--seats", "3", "--seed", "1"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("recorded 9 steps and 12 events of Tiny Duel (3 seats, seed 1) to ")
    recorded = (root / "tinygame" / gamecheck.GOLDEN).read_text()
    assert recorded == (ROOT / "tests" / "tinygame" / gamecheck.GOLDEN).read_text()  # the same every time
    assert "ok       golden: golden.json: 9 steps" in check_tiny(root).stdout


def test_bad_uses_of_the_games_command_are_one_line_errors() -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["games", "--record"])
    assert result.exit_code == 2 and "--record needs a GAME" in result.output
    result = runner.invoke(main, ["games", "nope", "--check"])
    assert result.exit_code == 2 and "unknown game 'nope'" in result.output
    result = runner.invoke(main, ["games", "lama", "--seats", "3"])
    assert result.exit_code == 2 and "--seats and -o go with --check or --record" in result.output
    result = runner.invoke(main, ["games", "lama", "--check", "-o", "climb=two"])
    assert result.exit_code != 0 and "climb must be one of one, any" in result.output
    result = runner.invoke(main, ["games", "--record", "lama", "--seats", "9"])
    assert result.exit_code == 2 and "not 9" in result.output
