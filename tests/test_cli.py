"""The arena command line, through click's CliRunner (and real bot processes for `arena match`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_play_prints_a_followable_match() -> None:
    code, out, _ = run("demo", "--game", "cabanga", "--seats", "4", "--seed", "7")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("Cabanga!, 4 seats, seed 7")
    assert any(" plays " in line and " pile " in line for line in lines)
    assert any("throws" in line for line in lines)
    assert any("penalty card" in line for line in lines)
    assert any(line.startswith("round 1 scored:") for line in lines)
    assert lines[-1].startswith("match over: 1. ")


def test_demo_same_seed_same_output_and_another_seed_differs() -> None:
    a = run("demo", "--game", "lama", "--seats", "3", "--seed", "11")[1]
    b = run("play", "--game", "lama", "--seats", "3", "--seed", "11")[1]  # the command's old name, kept hidden
    c = run("demo", "--game", "lama", "--seats", "3", "--seed", "12")[1]
    assert a == b
    assert a != c


def test_play_json_is_one_object_a_line() -> None:
    code, out, _ = run("demo", "--game", "lama", "--seats", "2", "--seed", "3", "--json")
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[0]["event"] == "match" and objects[0]["seed"] == 3 and objects[0]["names"] == ["ann", "bob"]
    assert objects[1]["event"] == "round_started"
    assert objects[-1]["event"] == "match_over"
    assert {o["event"] for o in objects} >= {"played", "round_scored"}


def test_play_options_change_the_match() -> None:
    code, out, _ = run("demo", "--seed", "5", "-o", "rounds=1", "--json")
    assert code == 0
    scored = [json.loads(line) for line in out.splitlines() if '"round_scored"' in line]
    assert len(scored) == 1


def test_play_bad_input_is_a_clear_error() -> None:
    code, _, err = run("demo", "--game", "cabanga", "--seats", "2")
    assert code == 2 and "3 to 6 seats" in err
    code, _, err = run("demo", "-o", "target=zero")
    assert code == 2 and "target" in err and "'zero'" in err
    code, _, err = run("demo", "-o", "colour=red")
    assert code == 2 and "colour" in err
    code, _, err = run("demo", "-o", "novalue")
    assert code == 2 and "KEY=VALUE" in err
    code, _, err = run("demo", "--game", "chess")
    assert code == 2 and "chess" in err


@pytest.mark.process
def test_match_writes_a_replay_that_verifies(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    # every bundled L.A.M.A. bot, the search bots too, which think 0.4 of the deadline: a short one keeps it quick
    code, out, _ = run("match", "--game", "lama", "--seed", "7", "--deadline", "0.2", "--replay", str(replay))
    assert code == 0, out
    assert "latency: lama-easy:" in out and "median" in out and "p99" in out
    assert "match over" in out
    code, again, _ = run("replay", str(replay))
    assert code == 0
    assert again.splitlines()[-1].startswith("replay verified")
    data = json.loads(replay.read_text())
    data["events"][-1]["totals"][0] += 1
    replay.write_text(json.dumps(data))
    code, _, err = run("replay", str(replay))
    assert code == 1 and "differs" in err


def test_match_with_a_bad_bot_list_is_a_clear_error(tmp_path: Path) -> None:
    code, _, err = run("match", "--bots", str(tmp_path / "missing.toml"))
    assert code == 2 and "does not exist" in err
    bad = tmp_path / "bad.toml"
    bad.write_text("[[bot]]\nname = 'x'\n")
    code, _, err = run("match", "--bots", str(bad))
    assert code == 2 and "command" in err
    bad.write_text("this is not toml [")
    code, _, err = run("match", "--bots", str(bad))
    assert code == 2 and "TOML" in err


def test_replay_of_a_missing_or_broken_file(tmp_path: Path) -> None:
    code, _, err = run("replay", str(tmp_path / "none.json"))
    assert code == 1 and "does not exist" in err
    broken = tmp_path / "b.json"
    broken.write_text("{")
    code, _, err = run("replay", str(broken))
    assert code == 1 and "cannot read" in err


def bot_entries(path: Path, games: list[list[str]]) -> Path:
    """Write a bot list of one bot per entry of ``games`` (a bot's ``games`` key; empty: none)."""
    path.write_text("".join(f'[[bot]]\nname = "b{i}"\ncommand = ["bot"]\n'
                            + (f"games = {json.dumps(said)}\n" if said else "") + "\n" for i, said in enumerate(games)))
    return path


def test_the_game_is_taken_from_a_bot_list_whose_bots_all_play_one(tmp_path: Path) -> None:
    from arena.cli import game_and_bots

    lama_only = bot_entries(tmp_path / "lama.toml", [["lama"], ["lama", "cabanga"], []])
    game, _, bots = game_and_bots(None, [], [lama_only])
    assert game.name == "lama" and len(bots) == 3
    game, _, _ = game_and_bots("goofspiel", [], [lama_only])  # --game wins over the list
    assert game.name == "goofspiel"


def test_without_bots_or_game_the_first_registered_game_plays_its_bundled_bots() -> None:
    from arena.cli import game_and_bots
    from arena.games import BUILTIN, bot_list, default_game, game_packages

    assert default_game() == next(iter(BUILTIN)) == next(iter(game_packages()))
    game, _, bots = game_and_bots(None, [], [])
    assert game.name == default_game() and bots and all(default_game() in bot.games for bot in bots)
    assert bot_list(game.name) is not None
    code, out, _ = run("ladder", "--help")
    assert code == 0 and f"game, {default_game()}." in " ".join(out.split())


def test_a_bot_list_that_does_not_settle_the_game_asks_for_game_naming_the_games(tmp_path: Path) -> None:
    games = ", ".join(sorted(["cabanga", "goofspiel", "lama"]))
    cases = [([["cabanga", "lama"], ["lama", "cabanga", "goofspiel"]], "plays cabanga, lama"),
             ([["cabanga", "lama", "goofspiel"]], "plays every game"),
             ([[], []], "do not say which game they play"),
             ([["cabanga"], ["lama"]], "no game is played by every bot")]
    for said, why in cases:
        path = bot_entries(tmp_path / "bots.toml", said)
        for command in (["match"], ["ladder"], ["compare", "b0", "b1"]):
            code, _, err = run(*command, "--bots", str(path))
            errors = [line for line in err.splitlines() if line.startswith("Error")]
            assert code == 2 and len(errors) == 1, err
            assert errors[0].startswith("Error: give --game: ") and why in errors[0], errors[0]
            assert errors[0].endswith(f"the games are {games}"), errors[0]


def test_with_one_game_registered_a_bot_list_needs_no_game(tmp_path: Path) -> None:
    from arena.cli import settled_game
    from arena.launch.botlist import load_bot_list

    path = bot_entries(tmp_path / "bots.toml", [[], ["elsewhere"]])
    assert settled_game(load_bot_list(path), [path], ["solo"]) == "solo"
