"""The replay viewer shows what went wrong where it went wrong: on the frame of a decision, the seat's choices or
candidates, its answer and latency, or its fault (kind, reason) and the default applied instead."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from arena.core import replay as replay_format
from arena.core.referee import LocalSeat, referee_match
from arena.games import get_game
from arena.games.base import Pick, Prompt, View
from arena.web.replays import viewer_data


def _first(prompt: Prompt, view: View) -> tuple[Any, ...]:
    return (prompt.choices[0],) if prompt.pick is Pick.ONE else ()


def _crash_on_throw(prompt: Prompt, view: View) -> tuple[Any, ...]:
    if prompt.pick is Pick.SUBSET:
        raise RuntimeError("my throw code is broken")
    return (prompt.choices[0],)


def _replay() -> dict[str, Any]:
    game = get_game("cabanga")
    seats = [LocalSeat("crasher", _crash_on_throw), LocalSeat("a", _first), LocalSeat("b", _first)]
    record = asyncio.run(referee_match(game, seats, 11, game.options({"rounds": 1}), max_faults=100))
    return replay_format.from_record(record)


def test_a_faulted_decision_shows_the_fault_and_the_default_on_its_frame_not_a_choice() -> None:
    data = _replay()
    assert any(f["seat"] == 0 and f["kind"] == "crash" for f in data["faults"]), data["faults"]
    frames = viewer_data(data, None)["frames"]
    faulted = [f for f in frames if f["details"].get("0", {}).get("fault")]
    assert faulted, "no frame shows the crash"
    line = faulted[0]["decisions"]["0"]
    where = PREFIX.match(line)
    assert where is not None, line  # the referee's step and the seat's own request count, as its log names it
    line = line[where.end():]
    assert line.startswith("crash: RuntimeError: my throw code is broken; the default applied: nothing thrown")
    assert "candidates: " in line and "decided: -" not in line
    answered = [PREFIX.sub("", f["decisions"][s]) for f in frames for s in f["decisions"]
                if not f["details"][s]["fault"]]
    assert answered and all(text.startswith(("answered ", "threw ")) and ("choices: " in text or "candidates: " in text)
                            for text in answered)
    assert any(" ms (" in text for text in answered)  # the latency, where the replay has it
    # the requests seat 0 was sent, numbered 0, 1, 2... in order: what DecisionRequest.step told the bot
    numbers = [f["details"]["0"]["request"] for f in frames if "0" in f["details"]]
    assert numbers == list(range(len(numbers))) and len(numbers) > 5
    assert all(f["details"][s]["step"] == int(PREFIX.match(f["decisions"][s]).group(1))  # type: ignore[union-attr]
               for f in frames for s in f["decisions"])


PREFIX = re.compile(r"step (\d+), (?:request \d+|not sent): ")


def test_a_seat_sees_the_details_of_its_own_decisions_only() -> None:
    data = _replay()
    for frame in viewer_data(data, 1)["frames"]:
        assert set(frame["details"]) <= {"1"} and set(frame["decisions"]) <= {"1"}


def test_a_seats_event_log_is_what_replay_seat_says_it_was_told_its_own_draws_included() -> None:
    """From a seat, the viewer's log holds what the referee told that seat (as `arena replay --seat` shows it):
    its own private draws, the faults every seat hears of, never another seat's draws."""
    game = get_game("cabanga")
    # seat 2 crashes on its plays (every seat hears of those faults); seat 0 on its sealed throws (nobody does)
    seats = [LocalSeat("crasher", _crash_on_throw), LocalSeat("a", _first), LocalSeat("c", _crash_on_play)]
    data = replay_format.from_record(asyncio.run(referee_match(game, seats, 11, game.options({"rounds": 1}),
                                                               max_faults=100)))
    names = [str(n) for n in data["names"]]
    for seat in range(3):
        log = [line["text"] for line in viewer_data(data, seat)["events"]]
        told = [e.describe(names) for d in replay_format.seat_decisions(data, seat) for e in d.events]
        assert told and log[:len(told)] == told  # the same lines in the same order, up to its last decision
        private = [t for t in log if t.endswith(" only)")]  # a seat's own draw: "c draws R3 B9 (seen by c only)"
        assert private and all(t.startswith(f"{names[seat]} draws ") for t in private), (seat, private)
        heard = [t for t in log if "faulted" in t]
        assert heard and all(t.startswith("c faulted") for t in heard)  # seat 0's sealed throws are not told
    assert not [t for t in (line["text"] for line in viewer_data(data, None)["events"]) if t.endswith(" only)")]


def _crash_on_play(prompt: Prompt, view: View) -> tuple[Any, ...]:
    if prompt.kind == "play":
        raise RuntimeError("my play code is broken")
    return prompt.default
