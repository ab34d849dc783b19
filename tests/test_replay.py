"""The replay format (arena/core/replay.py) and `arena replay --seat`: a stored ladder match as one seat met it,
showing what that seat saw and nothing it did not (G2), and a bot asked the same requests again."""

from __future__ import annotations

import asyncio
import json
import pickle
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.core import replay as replay_format
from arena.core.referee import Clock, FaultKind, LocalSeat, MatchLog, MatchRecord, random_seat, referee_match
from arena.games import get_game
from arena.games.base import Event
from arena.games.cabanga import PenaltyCards
from arena.games.lama import DrewCard
from arena.ladder.executor import Played
from arena.ladder.store import LadderIdentity, Store

ROOT = Path(__file__).resolve().parent.parent
SEED = 10**12 + 777  # large: a leaked seed cannot pass for a count


def crashing(name: str, every: int) -> LocalSeat:
    count = [0]

    def decide(prompt: Any, view: Any) -> Any:
        count[0] += 1
        if count[0] % every == 0:
            raise RuntimeError(f"oops at {count[0]}")
        return prompt.default

    return LocalSeat(name, decide)


def stored_match(tmp_path: Path, game_name: str, seats: int) -> tuple[Path, MatchRecord]:
    """Play a match in-process and store it as a ladder does; return the database and the record."""
    game = get_game(game_name)
    players = [random_seat(f"bot{i}", i) for i in range(seats - 1)] + [crashing(f"bot{seats - 1}", 7)]
    record = asyncio.run(referee_match(game, players, SEED, game.options(), max_faults=1000))
    path = tmp_path / "ladder.db"
    store = Store(path)
    store.claim(LadderIdentity(game.name, seats, 5, game.options().to_json()))
    for name in record.names:
        store.register_bot(name, "f" + name, ["{python}", name])
    store.plan_deal(0, SEED, record.names)
    store.record_match(0, 0, record.summary(), record.names, {}, 1.0, replay_format.pack(record))
    store.close()
    return path, record


def card_lists(value: Any) -> list[list[str]]:
    if isinstance(value, dict):
        return [lst for v in value.values() for lst in card_lists(v)]
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return [value]
        return [lst for v in value for lst in card_lists(v)]
    return []


@pytest.mark.parametrize(("game", "seats"), [("cabanga", 4), ("cabanga", 6), ("lama", 3)])
def test_g2_replay_seat_shows_what_the_seat_saw_and_nothing_else(tmp_path: Path, game: str, seats: int) -> None:
    path, record = stored_match(tmp_path, game, seats)
    seat = 1
    result = CliRunner().invoke(main, ["replay", "1", "--db", str(path), "--seat", str(seat), "--json"])
    assert result.exit_code == 0, result.output
    assert str(SEED) not in result.output, "the seed is shown to the seat"
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert lines[0]["event"] == "seat" and "seed" not in lines[0]
    decisions = lines[1:]
    # the same match again, step by step, to compare every shown decision with the state of its moment
    g = get_game(game)
    state = g.new_match(seats, SEED, g.options())
    match_log = MatchLog(state)
    faults = {(f.step, f.seat): f for f in record.faults}
    shown = iter(decisions)
    for step, chosen in enumerate(record.steps):
        prompts = state.pending()
        for prompt in prompts:
            if prompt.seat != seat:
                continue
            told = match_log.since_last(seat)
            line = next(shown)
            assert line["step"] == step and line["view"] == state.view(seat).to_json()
            assert line["events"] == [e.to_json() for e in told]
            assert all(e.seat == seat for e in told if isinstance(e, PenaltyCards | DrewCard))
            assert line["decision"] == chosen[seat]
            zones = state.zones()
            own = Counter(c.text for c in zones[f"hand {seat}"])
            for name, cards in zones.items():
                texts = [c.text for c in cards]
                if len(texts) < 2:
                    continue
                for lst in card_lists(line):
                    if name.startswith("hand ") and name != f"hand {seat}" and Counter(texts) != own:
                        assert Counter(lst) != Counter(texts), f"seat {seat} is shown {name}"
                    if name in ("penalty pile", "draw pile"):
                        assert lst != texts and lst != texts[::-1], f"seat {seat} is shown the {name}"
        for (s_step, s), fault in faults.items():
            if s_step == step:
                match_log.fault(s, fault.kind)
        match_log.apply({p.seat: p.parse(chosen[p.seat]) for p in prompts})
    assert next(shown, None) is None
    # the faulty seat's own view names its faults and their reasons; another seat is told only the kind
    mine = CliRunner().invoke(main, ["replay", "1", "--db", str(path), "--seat", str(seats - 1)])
    assert mine.exit_code == 0 and "fault: crash (RuntimeError: oops at 7)" in mine.output
    assert "oops" not in result.output and "faulted (crash)" in CliRunner().invoke(
        main, ["replay", "1", "--db", str(path), "--seat", str(seat)]).output


@pytest.mark.parametrize(("game", "seats"), [("cabanga", 4), ("lama", 3)])
def test_g2_a_seats_replay_holds_what_the_seat_met_and_reads_as_the_whole_one_shows_it(
        tmp_path: Path, game: str, seats: int) -> None:
    """What an author downloads of a contest match: one seat's decisions with what it was told and saw, no seed,
    no other seat's view or decision; `arena replay FILE` reads it as `--seat` shows the whole replay."""
    path, record = stored_match(tmp_path, game, seats)
    whole = replay_format.from_record(record)
    mine = replay_format.seat_replay(whole, 1)
    text = json.dumps(mine)
    assert replay_format.is_seat_replay(mine) and not replay_format.is_seat_replay(whole)
    assert str(SEED) not in text and "seed" not in mine and "steps" not in mine and "events" not in mine
    assert {d["view"]["seat"] for d in mine["decisions"]} == {1}
    assert all(f["seat"] == seats - 1 for f in whole["faults"]) and mine["faults"] == []  # another's faults: no
    expected = [d.to_json(record.names) for d in replay_format.seat_decisions(whole, 1)]
    assert mine["decisions"] == expected and mine["after"][-1].startswith("match over")
    written = tmp_path / "seat1.json"
    replay_format.write(written, mine)
    shown = CliRunner().invoke(main, ["replay", str(written)])
    from_db = CliRunner().invoke(main, ["replay", "1", "--db", str(path), "--seat", "1"])
    assert shown.exit_code == 0 and from_db.exit_code == 0, shown.output
    assert shown.output.startswith(from_db.output) and "shown, not re-run" in shown.output
    again = CliRunner().invoke(main, ["replay", str(written), "--seat", "1", "--step", "5", "--json"])
    lines = [json.loads(line) for line in again.output.splitlines()]
    assert len(lines) == 2 and lines[1]["step"] >= 5 and "told" not in lines[1]
    other = CliRunner().invoke(main, ["replay", str(written), "--seat", "0"])
    assert other.exit_code == 1 and "the replay of seat 1 alone" in other.output
    bots = tmp_path / "bots.toml"
    bots.write_text('[[bot]]\nbundled = "lama-greedy"\n')
    asked = CliRunner().invoke(main, ["replay", str(written), "--bot", str(bots)])
    assert asked.exit_code == 2 and "holds no seed" in asked.output


def test_replay_seat_step_jumps_to_one_decision(tmp_path: Path) -> None:
    path, _record = stored_match(tmp_path, "lama", 3)
    result = CliRunner().invoke(main, ["replay", "1", "--db", str(path), "--seat", "0", "--step", "10", "--json"])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()][1:]
    assert len(lines) == 1 and lines[0]["step"] >= 10 and lines[0]["latency_ms"] is not None
    bad = CliRunner().invoke(main, ["replay", "1", "--db", str(path), "--seat", "7"])
    assert bad.exit_code == 1 and "seat 7 is not at this 3-seat table" in bad.output


@pytest.mark.process
def test_replay_bot_asks_the_same_requests_again_and_shows_where_answers_differ(tmp_path: Path) -> None:
    # a match played by in-process random seats; lama-greedy, asked seat 0's requests again, answers otherwise
    game = get_game("lama")
    record = asyncio.run(referee_match(game, [random_seat(f"r{i}", i) for i in range(3)], 3,
                                       game.options({"rounds": 1}), clock=Clock(1.0)))
    replay_path = tmp_path / "m.json"
    replay_format.write(replay_path, replay_format.from_record(record))
    bots = tmp_path / "bots.toml"
    bots.write_text(f'[[bot]]\nname = "greedy"\ncommand = ["{{python}}", "-m", "arena.games.lama.bots.greedy.bot"]\n'
                    f'cwd = "{ROOT}"\n')
    result = CliRunner().invoke(main, ["replay", str(replay_path), "--seat", "0", "--bot", str(bots)])
    asked = sum(1 for step in record.steps if "0" in {str(s) for s in step})
    last = result.output.rstrip().splitlines()[-1]
    assert last.startswith("greedy answers ") and last.endswith(f"of {asked} requests as in the replay"), last
    differ = [line for line in result.output.splitlines() if " now answers " in line]
    assert result.exit_code == (1 if differ else 0)
    assert differ, "a greedy bot agreed with a random seat on every decision"


def test_replay_file_round_trip_and_verification(tmp_path: Path) -> None:
    game = get_game("cabanga")
    record = asyncio.run(referee_match(game, [random_seat(f"r{i}", i) for i in range(3)], 9,
                                       game.options({"rounds": 1})))
    data = replay_format.from_record(record)
    assert replay_format.decompress(replay_format.compress(data)) == data
    path = tmp_path / "r.json"
    replay_format.write(path, data)
    assert replay_format.read(path) == data
    assert replay_format.verify(data)[1] is None
    data["events"] = data["events"][:-1]
    assert "differs from the stored events" in (replay_format.verify(data)[1] or "")
    with pytest.raises(replay_format.ReplayError, match="does not exist"):
        replay_format.read(tmp_path / "nope.json")
    assert all(isinstance(e, Event) for e in replay_format.rerun(data)[1])
    assert [f.kind for f in record.faults] == [] and FaultKind.CRASH.value == "crash"


def test_a_table_sends_the_head_a_summary_and_the_packed_replay_not_the_record(tmp_path: Path) -> None:
    """What crosses from a cluster's table to the head: the outcome, faults and decision times, and the replay
    as the database stores it; the record's events and cards stay on the table."""
    _, record = stored_match(tmp_path, "cabanga", 4)
    played = Played.of(record, 0.1, 2.0, starts=4, sandbox="strict")
    summary = played.summary
    assert summary.seed == SEED and summary.steps == len(record.steps)
    assert record.result is not None and summary.totals == tuple(record.result.totals)
    assert summary.places == record.ranking_places() and summary.benched == record.benched
    assert summary.faults == tuple(record.faults) and len(summary.faults) > 0
    assert [list(s) for s in summary.latencies] == record.latencies
    assert summary.rated_places == tuple(None if s in record.benched else p
                                         for s, p in enumerate(record.ranking_places()))
    assert replay_format.decompress(played.replay) == replay_format.from_record(record)
    sent = pickle.dumps(played)
    assert pickle.loads(sent) == played
    # no event nor card: the head unpickles plain values, not the game's objects (a record holds hundreds); a
    # fault's kind (an enum of the contract, arena.games.base) is the one object of arena it carries
    assert b"arena.games.cabanga" in pickle.dumps(record) and b"arena.games.cabanga" not in sent
    assert {m for m in re.findall(rb"arena[\w.]*", sent)} <= {b"arena.ladder.executor", b"arena.core.referee",
                                                             b"arena.games.base"}


def test_a_bots_log_line_leads_to_its_decision_in_replay_seat(tmp_path: Path) -> None:
    """The bot names a decision by the match id and its own request count (DecisionRequest.step); the replay keeps
    the match id and `arena replay --seat` numbers the seat's decisions the same way, beside the referee's step,
    also after the seat was benched (its later decisions were never sent)."""
    told: list[tuple[str, int]] = []  # (match id, step) of every request seat 0 was sent

    class Telling(LocalSeat):
        async def decide(self, request: Any) -> Any:
            told.append((request.match_id, request.step))
            if len(told) == 3:  # three faults in a row from here: benched at max_faults 3
                raise RuntimeError("boom")
            if 3 < len(told) <= 5:
                raise RuntimeError("boom")
            return await super().decide(request)

    game = get_game("lama")
    seats = [Telling("teller", lambda prompt, view: (prompt.choices[0],)), random_seat("r", 1)]
    record = asyncio.run(referee_match(game, seats, 5, game.options({"rounds": 2}), match_id="lama-0b5e55ed",
                                       max_faults=3))
    assert 0 in record.benched
    path = tmp_path / "m.json"
    replay_format.write(path, replay_format.from_record(record))
    assert json.loads(path.read_text())["match_id"] == "lama-0b5e55ed"
    result = CliRunner().invoke(main, ["replay", str(path), "--seat", "0"])
    assert result.exit_code == 0, result.output
    assert "match id lama-0b5e55ed" in result.output.splitlines()[0]
    numbered = re.findall(r"^step (\d+), (request (\d+)|not sent):", result.output, re.M)
    sent = [int(n) for _, _, n in numbered if n]
    assert sent == [step for _, step in told] == list(range(len(told)))
    assert any(kind == "not sent" for _, kind, _ in numbered)  # benched: the rest of its decisions
    lines = CliRunner().invoke(main, ["replay", str(path), "--seat", "0", "--json"]).output.splitlines()
    requests = [json.loads(line).get("request", "absent") for line in lines[1:]]
    assert [r for r in requests if r is not None] == sent and requests[-1] is None
