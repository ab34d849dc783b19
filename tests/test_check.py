"""arena check: passes the bundled bots, fails a faulty bot with the right reason (issue 11)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.core.referee import Clock
from arena.games import BOT_LIST, game_names, get_game
from arena.launch.botlist import BotSpec, load_bot_list
from arena.tools.check import check_bot, edge_states

ROOT = Path(__file__).resolve().parent.parent


def bot_list(tmp_path: Path, command: list[str], name: str = "mine") -> Path:
    path = tmp_path / "bots.toml"
    path.write_text(f'[[bot]]\nname = "{name}"\ncommand = {json.dumps(command)}\ncwd = "{ROOT}"\n')
    return path


def faulty(*mode: str) -> BotSpec:
    return BotSpec("faulty", ("{python}", "-m", "tests.bots.sdk_faulty", *mode), ROOT)


BUNDLED = [(game, bot.name) for game in game_names()
           for bot in load_bot_list(ROOT / "arena" / "games" / game / BOT_LIST)]


@pytest.mark.process
@pytest.mark.parametrize(("game", "name"), BUNDLED, ids=[name for _, name in BUNDLED])
def test_check_passes_every_bundled_bot_in_the_games_its_entry_declares(game: str, name: str) -> None:
    """The search bots (the medium and hard levels) are checked at a deadline of 0.2 s, not the default 1 s: they
    fit their search to the clock the arena gives (``on_clock``), so a short deadline is the harder test of the
    same bot. Their seat-count matches are of one round (each decision takes the clock's share, 80 ms): a round's
    end and the next are still met in the option variants played to a low target or over several rounds."""
    short = ["--deadline", "0.2", "--rounds", "1"] if name.endswith(("-medium", "-hard")) else []
    result = CliRunner().invoke(main, ["check", str(ROOT / "arena" / "games" / game / BOT_LIST), "--name", name,
                                       *short, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["passed"] and report["verdict"].startswith(f"PASS: {name}")
    kinds = {row["kind"] for row in report["latency"]}
    assert kinds == set(get_game(game).kinds)
    seats = range(get_game(game).min_seats, get_game(game).max_seats + 1)
    assert all(any(f"{game}, {n} seats" in run for run in report["runs"]) for n in seats)
    assert sum(1 for run in report["runs"] if run.startswith(f"{game}:")) >= 3  # the edge states
    assert not any(run.startswith(other) for other in game_names() if other != game for run in report["runs"])


@pytest.mark.process
def test_check_passes_the_javascript_bot(tmp_path: Path, js_modules: Path) -> None:
    path = tmp_path / "bots.toml"
    path.write_text(f'[[bot]]\nname = "js"\ncommand = ["node", "bot.js"]\ncwd = "{ROOT / "bots" / "js"}"\n')
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 0, result.output
    assert "PASS: js" in result.output


@pytest.mark.process
def test_check_fails_a_bot_that_times_out_on_throws_only() -> None:
    report = asyncio.run(check_bot(faulty("slow-throw", "0.4"), [get_game("cabanga")], clock=Clock(0.15)))
    assert not report.passed
    throws = [p for p in report.problems if p.request is not None and p.request["kind"] == "throw"]
    assert throws and all(p.kind == "timeout" for p in throws)
    # the throws time out first in every match: a play only ever times out behind a throw still running
    first = {p.where.rsplit(", step", 1)[0]: p for p in reversed(report.problems) if p.request is not None}
    assert all(p.request is not None and p.request["kind"] == "throw" for p in first.values())
    assert report.faults["timeout on throw"] >= len(first)


@pytest.mark.process
def test_check_fails_a_bot_that_answers_illegally_at_six_seats_only() -> None:
    report = asyncio.run(check_bot(faulty("illegal-at-6"), [get_game("cabanga")], clock=Clock(0.5)))
    assert not report.passed
    assert report.problems and all("6 seats" in p.where for p in report.problems), \
        [p.where for p in report.problems]
    assert {p.kind for p in report.problems} <= {"malformed", "illegal", "benched"}
    assert any("repeat a choice" in p.detail for p in report.problems)
    assert set(report.seat_counts["malformed on throw"]) == {6}


@pytest.mark.process
def test_check_fails_a_bot_that_crashes_on_one_round_and_shows_its_output(tmp_path: Path) -> None:
    path = bot_list(tmp_path, ["{python}", "-m", "tests.bots.sdk_faulty", "crash-rounds-1"])
    result = CliRunner().invoke(main, ["check", str(path), "--game", "lama", "--deadline", "0.5"])
    assert result.exit_code == 1, result.output
    problems = [line for line in result.output.splitlines() if line.startswith("problem:")]
    assert problems and all("rounds=1" in line for line in problems), problems
    assert any("crash: the bot process has ended: exited with code 3" in line for line in problems)
    assert "I cannot play a match of one round" in result.output  # the end of its stderr
    assert result.output.rstrip().splitlines()[-1].startswith("FAIL: mine")


def test_the_edge_states_are_what_they_say() -> None:
    for edge in edge_states():
        (prompt,) = [p for p in edge.state.pending() if p.seat == edge.seat]
        texts = prompt.choice_texts().split()
        if "three candidates" in edge.label:
            assert len(texts) == 3 and prompt.kind == "throw"
        if "must quit" in edge.label:
            assert texts == ["quit"]
        if "may not draw" in edge.label:
            assert "draw" not in texts and len(texts) >= 2
        if "last card" in edge.label:
            assert len(edge.state.view(edge.seat).hand) == 1
