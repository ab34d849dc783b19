"""The referee with in-process seats: faults, defaults, benching, clocks, replays."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from arena.core import replay as replay_format
from arena.core.referee import (
    Clock,
    Defaulted,
    FaultKind,
    LocalSeat,
    MatchRecord,
    Request,
    SeatFault,
    random_seat,
    referee_match,
)
from arena.games import get_game
from arena.games.base import Decision, DecisionKind, Event, GameError, Prompt, View, random_decision

CABANGA = get_game("cabanga")
LAMA = get_game("lama")


def play(game_name: str, seats: list[object], seed: int = 1, **kw: object) -> MatchRecord:
    game = get_game(game_name)
    return asyncio.run(referee_match(game, seats, seed, **kw))  # type: ignore[arg-type]


class SleepySeat:
    """Sleeps ``delay`` seconds (async) before answering with the default."""

    def __init__(self, name: str, delay: float, kinds: set[DecisionKind] | None = None) -> None:
        self.name = name
        self.delay = delay
        self.kinds = kinds

    async def match_started(self, info: object) -> None:
        return None

    async def decide(self, request: Request) -> Decision:
        if self.kinds is None or request.prompt.kind in self.kinds:
            await asyncio.sleep(self.delay)
        return request.prompt.default

    async def match_over(self, *args: object) -> None:
        return None


def test_same_seed_and_seats_give_the_same_record() -> None:
    a = play("cabanga", [random_seat(f"r{i}", i) for i in range(4)], seed=9)
    b = play("cabanga", [random_seat(f"r{i}", i) for i in range(4)], seed=9)
    assert a.steps == b.steps
    assert [e.to_json() for e in a.events] == [e.to_json() for e in b.events]
    assert a.faults == [] and a.result is not None


def test_replay_reruns_to_the_same_events() -> None:
    record = play("lama", [random_seat(f"r{i}", i) for i in range(3)], seed=4)
    state, events = replay_format.rerun(replay_format.from_record(record))
    assert [e.to_json() for e in events] == [e.to_json() for e in record.events]
    assert state.result == record.result


def test_replay_with_a_tampered_decision_is_refused() -> None:
    record = play("cabanga", [random_seat(f"r{i}", i) for i in range(3)], seed=4)
    data = replay_format.from_record(record)
    first = data["steps"][0]
    seat = next(iter(first))
    first[seat] = "Y99:left"
    with pytest.raises(GameError, match="Y99:left"):
        replay_format.rerun(data)


def test_replay_cut_short_is_refused() -> None:
    data = replay_format.from_record(play("lama", [random_seat(f"r{i}", i) for i in range(2)], seed=4))
    data["steps"] = data["steps"][:-1]
    with pytest.raises(GameError, match="not over"):
        replay_format.rerun(data)


def test_a_crashing_seat_gets_defaults_and_is_benched_after_max_faults() -> None:
    def boom(prompt: Prompt, view: View) -> Decision:
        raise RuntimeError("bot bug")

    seats = [LocalSeat("bad", boom), random_seat("a", 1), random_seat("b", 2)]
    record = play("cabanga", seats, max_faults=2)
    bad = [f for f in record.faults if f.seat == 0]
    assert [f.kind for f in bad[:2]] == [FaultKind.CRASH, FaultKind.CRASH]
    assert len(bad) == 2, "a benched seat is not asked again, so it faults no more"
    assert "bot bug" in bad[0].detail
    assert record.benched == {0}
    assert record.ranking_places()[0] == 3
    assert record.result is not None


def test_an_illegal_answer_is_a_fault_and_the_default_is_applied() -> None:
    def illegal(prompt: Prompt, view: View) -> Decision:
        return (prompt.choices[0], prompt.choices[0]) if prompt.choices else ()

    record = play("lama", [LocalSeat("bad", illegal), random_seat("a", 1)], max_faults=1)
    fault = record.faults[0]
    assert fault.seat == 0 and fault.kind is FaultKind.ILLEGAL
    step = record.steps[fault.step]
    assert step[0] in ("L1", "L2", "L3", "L4", "L5", "L6", "LL", "draw", "quit")


def test_seat_fault_kinds_pass_through() -> None:
    async def gone(request: Request) -> Decision:
        raise SeatFault(FaultKind.DISCONNECT, "went away")

    seat = SleepySeat("gone", 0)
    seat.decide = gone  # type: ignore[method-assign]
    record = play("lama", [seat, random_seat("a", 1)], max_faults=1)
    assert record.faults[0].kind is FaultKind.DISCONNECT and record.faults[0].detail == "went away"


def test_a_slow_seat_times_out_without_holding_up_the_match() -> None:
    start = time.perf_counter()
    record = play("lama", [SleepySeat("slow", 5.0), random_seat("a", 1)], clock=Clock(0.05), max_faults=2)
    took = time.perf_counter() - start
    assert [f.kind for f in record.faults] == [FaultKind.TIMEOUT, FaultKind.TIMEOUT]
    assert took < 2.0, f"the referee waited {took:.2f} s on a seat whose clock is 0.05 s"


def test_c11_simultaneous_throw_asks_every_seat_at_once() -> None:
    """Sleepers on the throw: a throw step lasts about one sleep, not one per thrower."""
    seats = [SleepySeat(f"s{i}", 0.1, {"throw"}) for i in range(6)]
    record = play("cabanga", seats, seed=2, clock=Clock(0.5), options=CABANGA.options({"rounds": 1}))
    assert record.faults == []
    multi = [t for step, t in zip(record.steps, record.step_seconds, strict=True) if len(step) >= 3]
    assert multi
    assert max(multi) < 0.25


def test_time_bank_absorbs_an_overrun() -> None:
    seats = [SleepySeat("slow", 0.08), random_seat("a", 1)]
    with_bank = play("lama", seats, clock=Clock(0.05, bank=10.0), options=LAMA.options({"rounds": 1}))
    assert with_bank.faults == []
    without = play("lama", [SleepySeat("slow", 0.08), random_seat("a", 1)], clock=Clock(0.05),
                   options=LAMA.options({"rounds": 1}))
    assert without.faults and without.faults[0].kind is FaultKind.TIMEOUT


def test_clock_and_fault_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="deadline"):
        Clock(0)
    with pytest.raises(ValueError, match="bank"):
        Clock(1.0, bank=-1)
    with pytest.raises(GameError, match="max_faults"):
        play("lama", [random_seat("a", 1), random_seat("b", 2)], max_faults=0)


def test_benched_seats_share_last_place() -> None:
    def boom(prompt: Prompt, view: View) -> Decision:
        raise RuntimeError("x")

    record = play("cabanga", [LocalSeat("b1", boom), LocalSeat("b2", boom), random_seat("a", 1),
                              random_seat("c", 2)], max_faults=1)
    places = record.ranking_places()
    assert places[0] == places[1] == 3
    assert sorted(places[2:]) in ([1, 2], [1, 1])


def test_random_decision_is_legal_for_every_prompt() -> None:
    import random

    rng = random.Random(3)
    state = CABANGA.new_match(5, 3)
    for _ in range(200):
        if state.over:
            break
        decisions = {p.seat: random_decision(p, rng) for p in state.pending()}
        for p in state.pending():
            p.check(decisions[p.seat])
        state.apply(decisions)


class OverrunningSeat(SleepySeat):
    """Overruns every deadline by the same margin and notes the time each request allows it."""

    def __init__(self, name: str, delay: float) -> None:
        super().__init__(name, delay)
        self.limits: list[float] = []

    async def decide(self, request: Request) -> Decision:
        self.limits.append(request.timeout)
        return await super().decide(request)


def test_time_bank_runs_out_within_a_match() -> None:
    """Each overrun is taken from the bank: the time a request allows shrinks, and once the bank is spent the
    same overrun is a timeout (a bank that never ran down would allow every overrun of the match)."""
    slow = OverrunningSeat("slow", 0.1)
    record = play("lama", [slow, random_seat("a", 1)], clock=Clock(0.05, bank=0.2), max_faults=50,
                  options=LAMA.options({"rounds": 3}))
    assert len(slow.limits) >= 5
    assert slow.limits[0] == pytest.approx(0.25)
    assert all(later <= earlier for earlier, later in itertools.pairwise(slow.limits))
    assert slow.limits[-1] == pytest.approx(0.05, abs=1e-6)  # the bank is spent: only the deadline is left
    timeouts = [f for f in record.faults if f.seat == 0 and f.kind is FaultKind.TIMEOUT]
    assert timeouts and timeouts[0].step > 0  # the first requests ran on the bank


def test_the_operator_sees_a_defaulted_decision_where_it_happened_and_no_seat_is_told() -> None:
    """on_event (what `arena match` prints) gets a Defaulted line for each fault, just before the events its step
    caused, sealed throws included; the record's events and what the seats are told stay the game's."""
    def crash(prompt: Prompt, view: View) -> Decision:
        raise RuntimeError("boom")

    game = get_game("cabanga")
    seen: list[Event] = []
    seats = [LocalSeat("crasher", crash), random_seat("a", 1), random_seat("b", 2)]
    record = asyncio.run(referee_match(game, seats, 4, game.options({"rounds": 1}), max_faults=1000,
                                       on_event=seen.append))
    defaulted = [e for e in seen if isinstance(e, Defaulted)]
    assert len(defaulted) == len(record.faults) > 0
    assert [(d.seat, d.fault) for d in defaulted] == [(f.seat, f.kind) for f in record.faults]
    assert not any(isinstance(e, Defaulted) for e in record.events)
    first = seen.index(defaulted[0])
    assert seen[first + 1].to_json()["event"] in ("played", "threw", "throws_closed")  # the step it defaulted
    assert defaulted[0].describe(["crasher", "a", "b"]).startswith("crasher faulted (crash); the default is applied: ")


def test_a_seats_own_timeout_error_is_a_timeout_fault_charged_its_whole_time() -> None:
    """As with asyncio.timeout: a TimeoutError out of a seat counts as its time running out."""
    async def late(request: Request) -> Decision:
        raise TimeoutError("the seat's own")

    seat = SleepySeat("late", 0)
    seat.decide = late  # type: ignore[method-assign]
    record = play("lama", [seat, random_seat("a", 1)], clock=Clock(0.3), max_faults=1)
    assert record.faults[0].kind is FaultKind.TIMEOUT and record.latencies[0] == [0.3]


def test_cancelling_the_match_while_a_seat_decides_cancels_it_and_charges_no_timeout() -> None:
    """The deadline's timer cancels only the ask it belongs to: a cancellation from outside goes through."""
    seen: list[str] = []

    class Stuck(SleepySeat):
        async def decide(self, request: Request) -> Decision:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            return request.prompt.default

    async def main() -> None:
        match = asyncio.ensure_future(referee_match(LAMA, [Stuck("stuck", 0), random_seat("a", 1)], 1,
                                                    clock=Clock(5.0)))
        await asyncio.sleep(0.05)
        match.cancel()
        with pytest.raises(asyncio.CancelledError):
            await match

    asyncio.run(main())
    assert seen == ["cancelled"]


def test_a_step_of_several_seats_cancelled_from_outside_cancels_every_ask() -> None:
    """C11: the seats of a sealed step are asked at once, and a cancelled match leaves none of them running."""
    cancelled: list[str] = []

    class Thrower(SleepySeat):
        async def decide(self, request: Request) -> Decision:
            if request.prompt.kind == "throw":
                try:
                    await asyncio.sleep(10)
                except asyncio.CancelledError:
                    cancelled.append(self.name)
                    raise
            return request.prompt.default

    async def main() -> tuple[int, int]:
        seats = [Thrower(f"s{i}", 0) for i in range(6)]
        match = asyncio.ensure_future(referee_match(CABANGA, seats, 2, clock=Clock(5.0)))
        while len(asyncio.all_tasks()) < 4:  # the throw step's asks are running
            await asyncio.sleep(0.01)
        asking = len(asyncio.all_tasks()) - 2  # less this task and the match's
        match.cancel()
        with pytest.raises(asyncio.CancelledError):
            await match
        await asyncio.sleep(0.05)
        return asking, len(cancelled)  # before asyncio.run cancels what is left

    asking, stopped = asyncio.run(main())
    assert asking >= 2 and stopped == asking


def test_a_match_cancelled_as_a_seat_hears_its_start_is_cancelled_not_played_on() -> None:
    """A seat that hears the start at once (an in-process one): a cancel that comes while the referee waits for it
    stops the match. Python 3.11's asyncio.wait_for returned the finished call and lost the cancel, so a ladder
    told to stop (a contest at its finals' deadline) played on."""
    game = get_game("lama")

    class Thinking(LocalSeat):
        """Hears the start at once, and thinks (yields to the loop) before each decision."""

        async def decide(self, request: Request) -> Decision:
            await asyncio.sleep(0)
            return await super().decide(request)

    async def main() -> asyncio.Task[MatchRecord]:
        seats = [Thinking(f"s{i}", lambda prompt, view: prompt.default) for i in range(3)]
        task = asyncio.create_task(referee_match(game, seats, 7, game.options({"rounds": "1"})))
        await asyncio.sleep(0)  # the referee is telling the first seat that the match starts
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return task

    assert asyncio.run(main()).cancelled()


class TimedSeat(SleepySeat):
    """Sleeps ``delay`` seconds and notes, for each ask, the time its request allowed and how long it ran."""

    def __init__(self, name: str, delay: float) -> None:
        super().__init__(name, delay)
        self.ran: list[tuple[float, float]] = []

    async def decide(self, request: Request) -> Decision:
        start = time.perf_counter()
        try:
            return await super().decide(request)
        finally:
            self.ran.append((request.timeout, time.perf_counter() - start))


def test_a_late_seat_faults_at_its_own_deadline_after_an_earlier_deadline_passed_unused() -> None:
    """The referee keeps every ask's deadline with one timer, set for the earliest: the seat before answered
    in time, so the timer goes off at that seat's deadline with nothing due and waits for the next one. The
    late seat is cancelled at its own deadline, never sooner, and faults for it."""
    fast, late = TimedSeat("fast", 0.06), TimedSeat("late", 1.0)
    record = play("lama", [fast, late], clock=Clock(0.15), max_faults=1, options=LAMA.options({"rounds": 1}))
    assert [(f.seat, f.kind) for f in record.faults] == [(1, FaultKind.TIMEOUT)]
    assert fast.ran and all(took < timeout for timeout, took in fast.ran)  # answered in time, each one
    (timeout, took), = late.ran  # benched after its one fault
    assert timeout <= took < timeout + 0.5, f"the late seat was cut off after {took:.3f} s of {timeout} s"


def test_asks_at_once_with_different_deadlines_each_end_at_their_own() -> None:
    """C11 with banks: a seat that overran has less time left than the others in the next sealed step; the
    one timer moves to its earlier deadline, and the others still get their whole time."""
    from arena.core.referee import _ask, _Deadlines  # the step's asks as the referee makes them: one timer

    async def main() -> list[tuple[float, float]]:
        seats = [TimedSeat(f"s{i}", 1.0) for i in range(3)]
        state = LAMA.new_match(2, 1)
        prompt = state.pending()[0]
        deadlines = _Deadlines(asyncio.get_running_loop())
        asks = [_ask(seat, Request("m", 0, prompt, state.view(prompt.seat), (), limit), deadlines, None)
                for seat, limit in zip(seats, (0.3, 0.1, 0.2), strict=True)]
        answers = await asyncio.gather(*asks)
        assert deadlines.timer is None and not deadlines.asks  # nothing left to go off
        assert all(isinstance(answer, SeatFault) and answer.kind is FaultKind.TIMEOUT for _, answer, _ in answers)
        return [seat.ran[0] for seat in seats]

    for timeout, took in asyncio.run(main()):
        assert timeout <= took < timeout + 0.08, f"an ask of {timeout} s was cut off after {took:.3f} s"
