"""An author's bot list: bundled bots named by name (`bundled = "..."`), lists given twice merged, and the warning
for a bot that says it plays another game."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.launch.botlist import BotListError, bundled_bots, load_bot_list, parse_bot_list

ROOT = Path(__file__).resolve().parent.parent


def test_a_bundled_bot_is_named_by_its_name_wherever_the_arena_lives(tmp_path: Path) -> None:
    mine, greedy, renamed = parse_bot_list({"bot": [
        {"name": "mine", "command": ["{python}", "bot.py"]},
        {"bundled": "cabanga-greedy"},
        {"bundled": "cabanga-tidy", "name": "tidy", "limits": {"cpu_seconds": 9}},
    ]}, tmp_path)
    bundled = bundled_bots()["cabanga-easy"]  # its old name, kept as an alias for one release
    assert (greedy.name, greedy.command, greedy.cwd) == ("cabanga-greedy", bundled.command, bundled.cwd)
    assert greedy.cwd == bundled.cwd == ROOT  # the bundled list's (the folder holding arena), not the author's
    assert renamed.name == "tidy" and renamed.limits.cpu_seconds == 9 and renamed.games == ("cabanga",)
    assert mine.cwd == tmp_path


@pytest.mark.parametrize(("entry", "message"), [
    ({"bundled": "no-such-bot"}, "bundled must name a bundled bot"),
    ({"bundled": "cabanga-greedy", "command": ["x"]}, "takes only name and limits besides bundled, not 'command'"),
    ({"bundled": 7}, "bundled must name a bundled bot"),
])
def test_a_bad_bundled_entry_is_a_one_line_error(tmp_path: Path, entry: dict[str, object], message: str) -> None:
    with pytest.raises(BotListError, match=message) as error:
        parse_bot_list({"bot": [entry]}, tmp_path)
    assert "\n" not in str(error.value)


def test_two_bots_of_one_name_are_refused_also_through_bundled(tmp_path: Path) -> None:
    with pytest.raises(BotListError, match="two bots are named 'cabanga-greedy'"):
        parse_bot_list({"bot": [{"bundled": "cabanga-greedy"}, {"bundled": "cabanga-greedy"}]}, tmp_path)


def _list(path: Path, *names: str) -> Path:
    path.write_text("".join(f'[[bot]]\nbundled = "{bundled}"\nname = "{name}"\n\n'
                            for name, bundled in zip(names, ["cabanga-greedy", "cabanga-tidy", "cabanga-random"],
                                                     strict=False)))
    return path


@pytest.mark.process
def test_bots_given_twice_are_merged_and_a_name_in_both_is_a_one_line_error(tmp_path: Path) -> None:
    first, second = _list(tmp_path / "a.toml", "a1", "a2"), _list(tmp_path / "b.toml", "b1")
    result = CliRunner().invoke(main, ["match", "--bots", str(first), "--bots", str(second), "--seed", "3",
                                       "-o", "rounds=1", "--sandbox", "limits"])
    assert result.exit_code == 0, result.output
    header = "\n".join(result.output.splitlines()[:3])
    assert all(name in header for name in ("a1", "a2", "b1")), header  # every bot of both lists is seated
    clash = _list(tmp_path / "c.toml", "a1")
    result = CliRunner().invoke(main, ["match", "--bots", str(first), "--bots", str(clash)])
    assert result.exit_code == 2
    assert "bot 'a1' is in both" in result.output and str(clash) in result.output
    assert len(load_bot_list(first)) == 2


@pytest.mark.process
def test_a_match_warns_about_a_bot_that_says_it_plays_another_game(tmp_path: Path) -> None:
    bots = tmp_path / "bots.toml"
    bots.write_text('[[bot]]\nbundled = "lama-greedy"\n\n[[bot]]\nbundled = "cabanga-greedy"\n\n'
                    '[[bot]]\nbundled = "cabanga-tidy"\n')
    result = CliRunner().invoke(main, ["match", "--game", "cabanga", "--bots", str(bots), "--seed", "1",
                                       "-o", "rounds=1", "--sandbox", "limits"])
    assert "warning: bot 'lama-greedy' says it plays lama, not cabanga" in result.stderr
    assert "cabanga-greedy" not in result.stderr.split("warning")[-1].split("\n")[0]


@pytest.mark.process
def test_a_bot_that_fails_to_start_is_shown_with_the_first_and_last_lines_of_its_output(tmp_path: Path) -> None:
    program = tmp_path / "panics.py"
    program.write_text("import sys\nprint('panic: the first line says why')\n"
                       "for i in range(300):\n    print(f'goroutine {i} [running]: main.go:{i}')\n"
                       "print('exit status 2')\nsys.exit(2)\n")
    bots = tmp_path / "bots.toml"
    bots.write_text(f'[[bot]]\nname = "panics"\ncommand = ["{{python}}", "{program.name}"]\n\n'
                    '[[bot]]\nbundled = "cabanga-greedy"\n\n[[bot]]\nbundled = "cabanga-tidy"\n')
    result = CliRunner().invoke(main, ["match", "--bots", str(bots), "--seed", "1", "--log-dir",
                                       str(tmp_path / "logs"), "--sandbox", "limits"])
    assert result.exit_code == 1
    assert "panic: the first line says why" in result.stderr  # the head, which a tail alone cut off
    assert "exit status 2" in result.stderr and "bytes left out" in result.stderr
    assert "goroutine 150 " not in result.stderr  # the middle is left out


@pytest.mark.process
def test_the_ladders_board_marks_a_bot_that_never_started(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("raise SystemExit('no such thing')\n")
    bots = tmp_path / "bots.toml"
    bots.write_text('[[bot]]\nname = "broken"\ncommand = ["{python}", "broken.py"]\n\n'
                    '[[bot]]\nbundled = "cabanga-greedy"\n\n[[bot]]\nbundled = "cabanga-tidy"\n\n'
                    '[[bot]]\nbundled = "cabanga-random"\n')
    result = CliRunner().invoke(main, ["ladder", "--bots", str(bots), "--seats", "3", "--matches", "3",
                                       "--tables", "1", "--db", str(tmp_path / "l.db"), "-o", "rounds=1",
                                       "--sandbox", "limits"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if " broken " in f" {line} ")
    assert "did not start" in row
    assert any(line.startswith("did not start: broken: ") for line in result.stdout.splitlines()), result.stdout


def test_a_game_that_ships_no_bundled_bots_asks_for_a_bot_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The game owns its bundled bots (arena/games/GAME/bots/bots.toml): a game without that list has none."""
    from arena import games

    lama = games.game_folder("lama")
    assert lama is not None and games.bot_list("lama") == lama / games.BOT_LIST == ROOT / "arena" / "games" / "lama" / \
        "bots" / "bots.toml"
    monkeypatch.setattr(games, "BOT_LIST", "bots/none.toml")  # as if the folder held none
    assert games.bot_list("lama") is None
    result = CliRunner().invoke(main, ["match", "--game", "lama"])
    assert result.exit_code == 2 and "L.A.M.A. ships no bundled bots" in result.output, result.output
    assert "give a bot list with --bots" in result.output


def test_the_benchmarks_native_list_runs_the_example_bots_as_their_own_lists_do() -> None:
    native = load_bot_list(ROOT / "benchmarks" / "native_bots.toml")
    assert [b.name for b in native] == ["cpp-example", "go-example", "rust-example"]
    for bot in native:
        own = {b.name: b for b in load_bot_list(ROOT / "bots" / bot.name.removesuffix("-example") / "bots.toml")}
        assert bot.cwd == own[bot.name].cwd and bot.command == own[bot.name].command
        assert set(bot.games) <= set(own[bot.name].games)
