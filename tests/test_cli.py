"""The arena command line, through click's CliRunner (and real bot processes for `arena match`)."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_match_writes_a_replay_that_verifies(tmp_path: Path) -> None:
    replay = tmp_path / "m.json"
    code, out, _ = run("match", "--game", "lama", "--seed", "7", "--replay", str(replay))
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
