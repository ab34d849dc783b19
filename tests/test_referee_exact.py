"""The referee, exactly: what each seat is asked and told, when, with what time allowed, and what is recorded.

A scripted game (every step names the seats it prompts, whether it is a sealed window or opens one, and which
seat privately learns what, where) and scripted seats run on an event loop whose clock is virtual: time moves
only when every task waits, by exactly the time the next timer needs. So the time a request allows, the time a
seat took, a deadline, a time bank and a sealed window are checked to the microsecond, however busy the machine
is, and a test never sleeps.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import pytest

from arena.core.referee import (
    Clock,
    Defaulted,
    Fault,
    FaultKind,
    LocalSeat,
    MatchInfo,
    MatchLog,
    MatchRecord,
    MatchSummary,
    Request,
    Seat,
    SeatFault,
    SeatFaulted,
    random_seat,
    referee_match,
)
from arena.games.base import (
    Decision,
    Event,
    Game,
    GameError,
    MatchOver,
    MatchResult,
    MatchState,
    Pick,
    Prompt,
    View,
    places_from_totals,
)
from arena.text import DETAIL_CHARS

T = TypeVar("T")

TICK = 1e-6
"""Virtual seconds one turn of the event loop takes when something is ready to run (a spin must end)."""

NEAR = 1e-4
"""How close a virtual time must be to the expected one: a few loop turns of :data:`TICK`."""

INSTANT = pytest.approx(0, abs=NEAR)


class _VirtualSelector(selectors.DefaultSelector):
    """Never waits: moves its loop's clock forward by the time it was asked to wait (a turn's tick at least)."""

    loop: VirtualLoop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # nothing is scheduled: only a thread could wake the loop
            return super().select(None)
        self.loop.now += timeout if timeout > 0 else TICK
        return super().select(0)


class VirtualLoop(asyncio.SelectorEventLoop):
    """An event loop on a virtual clock (:class:`_VirtualSelector`), starting at 0."""

    def __init__(self) -> None:
        selector = _VirtualSelector()
        selector.loop = self
        self.now = 0.0
        super().__init__(selector)

    def time(self) -> float:
        return self.now


def run(coro: Coroutine[Any, Any, T]) -> T:
    with asyncio.Runner(loop_factory=VirtualLoop) as runner:
        return runner.run(coro)


def now() -> float:
    return asyncio.get_running_loop().time()


# ---------------------------------------------------------------------------------------------- the scripted game


@dataclass(frozen=True, slots=True)
class Act:
    text: str


CHOICES = tuple(Act(text) for text in "abcdefgh")
A, B, C = CHOICES[:3]


@dataclass(frozen=True)
class Turn:
    """One step of the script: the seats prompted (one of a..h each, or a subset: :meth:`ScriptState.default`)."""

    seats: tuple[int, ...]
    sealed: bool = False
    """The step is a sealed window's decision (:meth:`MatchState.in_window`)."""
    opens: bool = False
    """A window opens after this step (:meth:`MatchState.opens_window`)."""
    secrets: tuple[tuple[int, int], ...] = ()
    """(seat, k): the seat alone learns something after the first k events of this step."""
    pick: Pick = Pick.ONE


@dataclass(frozen=True)
class Script:
    """The scripted game's options: the steps of its one match."""

    plan: tuple[Turn, ...]

    def to_json(self) -> dict[str, Any]:
        return {"steps": len(self.plan)}


DEFAULT_PLAN = (Turn((0,)), Turn((1,)))


@dataclass(frozen=True, slots=True)
class Dealt(Event):
    kind: ClassVar[str] = "dealt"

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind}

    def describe(self, names: Sequence[str]) -> str:
        return "dealt"


@dataclass(frozen=True, slots=True)
class Did(Event):
    kind: ClassVar[str] = "did"
    seat: int
    decision: str

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "decision": self.decision}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} did {self.decision}"


@dataclass(frozen=True, slots=True)
class Learnt(Event):
    """Private: ``seat`` learnt something at ``step``."""

    kind: ClassVar[str] = "learnt"
    seat: int
    step: int

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "step": self.step}

    def describe(self, names: Sequence[str]) -> str:
        return f"{names[self.seat]} learnt something"


@dataclass(frozen=True, slots=True)
class ScriptView(View):
    game: ClassVar[str] = "script"
    seat: int
    step: int
    learnt: int

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "step": self.step, "learnt": self.learnt}


class ScriptState(MatchState):
    game = "script"

    def __init__(self, seats: int, seed: int, plan: tuple[Turn, ...]) -> None:
        super().__init__(seats, seed)
        self.plan = plan
        self.at = 0
        self.points = [0] * seats
        self.learnt = [0] * seats
        self._log.append(Dealt())

    def pending(self) -> tuple[Prompt, ...]:
        if self.over:
            return ()
        turn = self.plan[self.at]
        return tuple(Prompt(s, "pick", turn.pick, CHOICES, self.default(s, turn.pick)) for s in turn.seats)

    @staticmethod
    def default(seat: int, pick: Pick) -> Decision:
        """Each seat's own default: c, d, e...; for a subset nothing for seat 0, its one letter for the others."""
        return () if pick is Pick.SUBSET and seat == 0 else (CHOICES[2 + seat],)

    def view(self, seat: int) -> View:
        self._check_seat(seat)
        return ScriptView(seat, self.at, self.learnt[seat])

    def _apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        turn = self.plan[self.at]
        events: list[Event] = []
        for s in sorted(decisions):
            text = " ".join(a.text for a in decisions[s]) or "-"
            events.append(Did(s, text))
            self.points[s] += sum(1 for a in decisions[s] if a is B)
        for seat, k in turn.secrets:
            self._private[seat].append((len(self._log) + k, Learnt(seat, self.at)))
            self.learnt[seat] += 1
        self.at += 1
        if self.at == len(self.plan):
            events.append(MatchOver(tuple(self.points), places_from_totals(self.points)))
        return events

    def zones(self) -> dict[str, tuple[Any, ...]]:
        return {}

    @property
    def totals(self) -> tuple[int, ...]:
        return tuple(self.points)

    def opens_window(self) -> bool:
        return self.at > 0 and self.plan[self.at - 1].opens

    def in_window(self) -> bool:
        return not self.over and self.plan[self.at].sealed


class ScriptGame(Game):
    name = "script"
    title = "Script"
    min_seats = 1
    max_seats = 6
    kinds = ("pick",)

    def options(self, raw: Mapping[str, Any] | None = None) -> Script:
        return Script(DEFAULT_PLAN)

    def _new(self, options: Any, seats: int, seed: int) -> MatchState:
        return ScriptState(seats, seed, options.plan)

    def deck(self, options: Any, seats: int) -> tuple[Any, ...]:
        return ()

    def parse_card(self, text: str) -> Any:
        raise GameError(text)


GAME = ScriptGame()


# --------------------------------------------------------------------------------------------- the scripted seats

Behaviour = Callable[[Request], Awaitable[Decision]]


def answer(decision: Decision = (A,), after: float = 0.0) -> Behaviour:
    """Answer ``decision`` ``after`` seconds."""
    async def behave(request: Request) -> Decision:
        await asyncio.sleep(after)
        return decision
    return behave


def fail(error: BaseException, after: float = 0.0) -> Behaviour:
    """Raise ``error`` ``after`` seconds."""
    async def behave(request: Request) -> Decision:
        await asyncio.sleep(after)
        raise error
    return behave


def in_turn(*behaviours: Behaviour) -> Behaviour:
    """The seat's k-th request is answered by the k-th behaviour (the last one after that)."""
    async def behave(request: Request) -> Decision:
        return await behaviours[min(request.step, len(behaviours) - 1)](request)
    return behave


@dataclass
class Over:
    match_id: str
    seat: int
    events: tuple[Event, ...]
    result: MatchResult
    at: float


@dataclass
class Bot:
    """A seat that answers by its ``behaviour`` and notes everything it is sent and when."""

    name: str
    behaviour: Behaviour = field(default_factory=answer)
    start: Behaviour | None = None
    """What ``match_started`` does (it is given a dummy request): raise, or take its time."""
    end: Behaviour | None = None
    requests: list[Request] = field(default_factory=list)
    asked_at: list[float] = field(default_factory=list)
    infos: list[MatchInfo] = field(default_factory=list)
    overs: list[Over] = field(default_factory=list)

    async def match_started(self, info: MatchInfo) -> None:
        self.infos.append(info)
        if self.start is not None:
            await self.start(_NO_REQUEST)

    async def decide(self, request: Request) -> Decision:
        self.requests.append(request)
        self.asked_at.append(now())
        return await self.behaviour(request)

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...], result: MatchResult) -> None:
        self.overs.append(Over(match_id, seat, events, result, now()))
        if self.end is not None:
            await self.end(_NO_REQUEST)

    def told(self) -> list[tuple[Event, ...]]:
        """The events of each request, then of the match's end."""
        return [r.events for r in self.requests] + [o.events for o in self.overs]


_NO_REQUEST = Request("", 0, Prompt(0, "pick", Pick.ONE, CHOICES, (C,)), ScriptView(0, 0, 0), (), 1.0)


def play(plan: Sequence[Turn], bots: Sequence[Seat], **kw: Any) -> MatchRecord:
    return run(referee_match(GAME, bots, 5, Script(tuple(plan)), **kw))


def over(totals: Sequence[int]) -> MatchOver:
    return MatchOver(tuple(totals), places_from_totals(totals))


# -------------------------------------------------------------------------------------------------- the requests


def test_each_seat_is_asked_with_its_own_view_its_own_count_and_the_events_since_it_was_last_told() -> None:
    bots = [Bot("zero", answer((B,))), Bot("one")]
    plan = [Turn((0,)), Turn((1,)), Turn((0, 1)), Turn((0,))]
    record = play(plan, bots, match_id="m-1", clock=Clock(2.0, bank=0.5))
    zero, one = bots
    assert [r.step for r in zero.requests] == [0, 1, 2] and [r.step for r in one.requests] == [0, 1]
    assert all(r.match_id == "m-1" and r.timeout == 2.5 for r in zero.requests + one.requests)
    assert [r.view for r in zero.requests] == [ScriptView(0, 0, 0), ScriptView(0, 2, 0), ScriptView(0, 3, 0)]
    assert [r.view for r in one.requests] == [ScriptView(1, 1, 0), ScriptView(1, 2, 0)]
    assert [r.prompt.seat for r in zero.requests] == [0, 0, 0] and [r.prompt.seat for r in one.requests] == [1, 1]
    assert zero.told() == [(Dealt(),), (Did(0, "b"), Did(1, "a")), (Did(0, "b"), Did(1, "a")),
                           (Did(0, "b"), over([3, 0]))]
    assert one.told() == [(Dealt(), Did(0, "b")), (Did(1, "a"),), (Did(0, "b"), Did(1, "a"), Did(0, "b"), over([3, 0]))]
    assert record.steps == [{0: "b"}, {1: "a"}, {0: "b", 1: "a"}, {0: "b"}]
    assert record.events == [Dealt(), Did(0, "b"), Did(1, "a"), Did(0, "b"), Did(1, "a"), Did(0, "b"), over([3, 0])]
    assert record.result == MatchResult((3, 0), (2, 1))
    assert (record.game, record.seed, record.names, record.match_id) == ("script", 5, ["zero", "one"], "m-1")
    assert record.options == {"steps": 4} and record.faults == [] and record.benched == set()
    assert record.asked == [{0: INSTANT}, {1: INSTANT}, {0: INSTANT, 1: INSTANT}, {0: INSTANT}]
    assert [o.match_id for o in zero.overs + one.overs] == ["m-1", "m-1"]
    assert [o.seat for o in zero.overs + one.overs] == [0, 1]
    assert [o.result for o in zero.overs + one.overs] == [record.result] * 2


def test_a_match_without_options_or_id_is_played_with_the_games_defaults() -> None:
    bots = [Bot("zero"), Bot("one"), Bot("two")]
    record = run(referee_match(GAME, bots, 8))
    assert record.match_id == "" and record.options == {"steps": 2}
    assert record.steps == [{0: "a"}, {1: "a"}] and not bots[2].requests
    assert [r.match_id for r in bots[0].requests + bots[1].requests] == ["", ""]
    assert [i.max_faults for bot in bots for i in bot.infos] == [3, 3, 3]


def test_every_seat_is_told_the_match_it_joins() -> None:
    bots = [Bot("zero"), Bot("one"), Bot("two")]
    clock = Clock(0.7, bank=3.0)
    play([Turn((2,))], bots, match_id="m-2", clock=clock, max_faults=5)
    for seat, bot in enumerate(bots):
        assert bot.infos == [MatchInfo("m-2", "script", seat, ("zero", "one", "two"), {"steps": 1}, clock, 5)]


def test_a_seat_that_fails_to_hear_the_start_or_the_end_holds_up_nothing() -> None:
    """A start or an end that raises is ignored; one that does not return is given up after the deadline."""
    hangs = Bot("hangs", start=answer(after=100.0), end=answer(after=100.0))
    breaks = Bot("breaks", start=fail(RuntimeError("no")), end=fail(RuntimeError("no")))
    finished: list[float] = []

    async def match() -> MatchRecord:
        record = await referee_match(GAME, [hangs, breaks], 1, Script(DEFAULT_PLAN), clock=Clock(0.5))
        finished.append(now())
        return record

    record = run(match())
    assert record.faults == [] and record.steps == [{0: "a"}, {1: "a"}]
    assert hangs.asked_at == [pytest.approx(0.5, abs=NEAR)]  # the start waited 0.5 s for it, not 100
    assert len(hangs.overs) == len(breaks.overs) == 1
    assert finished == [pytest.approx(hangs.overs[0].at + 0.5, abs=NEAR)]


# ------------------------------------------------------------------------------------------ faults and defaults


def test_each_kind_of_failure_is_a_fault_of_its_kind_and_the_prompts_default_is_applied() -> None:
    bot = Bot("bad", in_turn(
        answer((A,), after=3.0),  # past the deadline: a timeout
        fail(SeatFault(FaultKind.MALFORMED, "picks [7]"), after=0.25),  # the seat's own fault, its kind kept
        fail(ValueError("adapter bug"), after=0.5),  # anything else the seat raises: a crash
        answer((A, B)),  # one of a, b, c was asked for: illegal
        answer((A, A)),  # a subset naming a choice twice: illegal
        answer((B,), after=0.125),  # fine
    ))
    good = Bot("good")
    plan = [Turn((0, 1)), Turn((0,)), Turn((0,)), Turn((0,)), Turn((0,), pick=Pick.SUBSET), Turn((0,))]
    record = play(plan, [bot, good], clock=Clock(1.0), max_faults=10)
    prompt = Prompt(0, "pick", Pick.ONE, CHOICES, (C,))
    subset = Prompt(0, "pick", Pick.SUBSET, CHOICES, ())
    illegal = ["seat 0: 'a b' is not one of the legal pick choices a b c d e f g h",
               "seat 0: 'a a' names a choice more than once"]
    with pytest.raises(GameError) as one:
        prompt.check((A, B))
    with pytest.raises(GameError) as two:
        subset.check((A, A))
    assert [str(one.value), str(two.value)] == illegal
    assert record.faults == [
        Fault(0, 0, FaultKind.TIMEOUT, "no answer within 1.000 s"),
        Fault(0, 1, FaultKind.MALFORMED, "picks [7]"),
        Fault(0, 2, FaultKind.CRASH, "ValueError: adapter bug"),
        Fault(0, 3, FaultKind.ILLEGAL, illegal[0]),
        Fault(0, 4, FaultKind.ILLEGAL, illegal[1]),
    ]
    assert record.steps == [{0: "c", 1: "a"}, {0: "c"}, {0: "c"}, {0: "c"}, {0: "-"}, {0: "b"}]
    assert record.events[1:] == [Did(0, "c"), Did(1, "a"), Did(0, "c"), Did(0, "c"), Did(0, "c"), Did(0, "-"),
                                 Did(0, "b"), over([1, 0])]
    assert record.latencies[0] == [1.0, pytest.approx(0.25, abs=NEAR), pytest.approx(0.5, abs=NEAR),
                                   INSTANT, INSTANT,
                                   pytest.approx(0.125, abs=NEAR)]
    assert record.asked[:2] == [{0: 1.0, 1: INSTANT}, {0: pytest.approx(0.25, abs=NEAR)}]
    assert record.benched == set()


def test_a_fault_is_told_to_every_seat_just_before_the_events_of_its_step() -> None:
    """Seat 2 disconnects at step 2: every seat, seat 2 too, is told that seat 2 faulted, and nothing else of it."""
    bots = [Bot("zero"), Bot("one"), Bot("two", fail(SeatFault(FaultKind.DISCONNECT, "gone")))]
    plan = [Turn((0,)), Turn((1,)), Turn((0, 2)), Turn((1,))]
    play(plan, bots)
    zero, one, two = bots
    faulted = SeatFaulted(2, FaultKind.DISCONNECT)
    assert one.requests[1].events == (Did(1, "a"), faulted, Did(0, "a"), Did(2, "e"))
    assert two.told() == [(Dealt(), Did(0, "a"), Did(1, "a")),
                          (faulted, Did(0, "a"), Did(2, "e"), Did(1, "a"), over([0, 0, 0]))]
    assert zero.told()[2] == (faulted, Did(0, "a"), Did(2, "e"), Did(1, "a"), over([0, 0, 0]))


def test_a_fault_in_a_sealed_window_is_recorded_but_told_to_no_seat() -> None:
    """Only the seats that may decide in a sealed window are asked: a fault told there would tell the others
    that the seat was asked (G2)."""
    slow = Bot("slow", in_turn(answer(after=9.0), answer()))
    bots = [Bot("zero"), slow, Bot("two")]
    plan = [Turn((0,), opens=True), Turn((1, 2), sealed=True), Turn((0,)), Turn((1,))]
    record = play(plan, bots, clock=Clock(1.0))
    assert record.faults == [Fault(1, 1, FaultKind.TIMEOUT, "no answer within 1.000 s")]
    assert record.steps[1] == {1: "d", 2: "a"}
    for bot in bots:
        assert not any(isinstance(e, SeatFaulted) for told in bot.told() for e in told), bot.name
    assert bots[0].requests[1].events == (Did(0, "a"), Did(1, "d"), Did(2, "a"))


def test_a_seat_is_benched_after_max_faults_and_played_by_the_defaults_without_being_asked() -> None:
    """Seat 0 faults twice and is benched; seat 1 faults once after that, which is its first fault, not a third."""
    crash = Bot("crash", in_turn(answer((B,)), fail(RuntimeError("x"))))
    once = Bot("once", in_turn(answer(), answer(), fail(RuntimeError("y")), answer()))
    plan = [Turn((0,))] + [Turn((0, 1))] * 5
    record = play(plan, [crash, once], max_faults=2)
    assert [(f.seat, f.step) for f in record.faults] == [(0, 1), (0, 2), (1, 3)] and record.benched == {0}
    assert len(crash.requests) == 3 and crash.overs == []  # benched: not asked, not told the end
    assert len(once.requests) == 5 and len(once.overs) == 1
    assert record.steps == [{0: "b"}, {0: "c", 1: "a"}, {0: "c", 1: "a"}, {0: "c", 1: "d"}, {0: "c", 1: "a"},
                            {0: "c", 1: "a"}]
    assert record.asked[3:] == [{1: INSTANT}] * 3
    assert len(record.latencies[0]) == 3 and len(record.latencies[1]) == 5
    assert record.ranking_places() == (2, 1)


def test_the_default_is_three_faults_before_the_bench() -> None:
    crash = Bot("crash", fail(RuntimeError("x")))
    record = run(referee_match(GAME, [crash], 1, Script((Turn((0,)),) * 6)))
    assert [f.step for f in record.faults] == [0, 1, 2] and record.benched == {0} and len(crash.requests) == 3


def test_one_fault_is_enough_when_max_faults_is_1() -> None:
    record = play([Turn((0,))] * 3, [Bot("crash", fail(RuntimeError("x")))], max_faults=1)
    assert [f.step for f in record.faults] == [0] and record.benched == {0}
    with pytest.raises(GameError, match="max_faults must be at least 1, got 0"):
        play([Turn((0,))], [Bot("x")], max_faults=0)


def test_the_operator_is_shown_each_default_where_it_was_applied() -> None:
    seen: list[Event] = []
    bots = [Bot("zero", fail(RuntimeError("x"))), Bot("one", answer((A,), after=5.0))]
    plan = [Turn((0,)), Turn((0, 1), pick=Pick.SUBSET), Turn((1,))]
    record = play(plan, bots, clock=Clock(1.0), max_faults=9, on_event=seen.append)
    assert seen == [Dealt(), Defaulted(0, FaultKind.CRASH, "c"), Did(0, "c"),
                    Defaulted(0, FaultKind.CRASH, "-"), Defaulted(1, FaultKind.TIMEOUT, "d"), Did(0, "-"), Did(1, "d"),
                    Defaulted(1, FaultKind.TIMEOUT, "d"), Did(1, "d"), over([0, 0])]
    assert record.events == [e for e in seen if not isinstance(e, Defaulted)]


def test_a_defaulted_decision_is_shown_and_written_as_such() -> None:
    names = ["ann", "bob"]
    assert Defaulted(1, FaultKind.TIMEOUT, "-").describe(names) == \
        "bob faulted (timeout); the default is applied: nothing"
    assert Defaulted(0, FaultKind.ILLEGAL, "R5:left").describe(names) == \
        "ann faulted (illegal); the default is applied: R5:left"
    assert Defaulted(1, FaultKind.CRASH, "draw").to_json() == \
        {"event": "defaulted", "seat": 1, "kind": "crash", "default": "draw"}


def test_a_fault_is_written_and_read_back_whole_and_its_detail_is_capped() -> None:
    fault = Fault(2, 17, FaultKind.MALFORMED, "picks [9]")
    assert fault.to_json() == {"seat": 2, "step": 17, "kind": "malformed", "detail": "picks [9]"}
    assert Fault.from_json(fault.to_json()) == fault
    assert Fault.from_json({"seat": "3", "step": "4", "kind": "timeout", "detail": 5}) == \
        Fault(3, 4, FaultKind.TIMEOUT, "5")
    long = Fault.from_json({"seat": 0, "step": 0, "kind": "crash", "detail": "x" * 5000})
    assert len(long.detail) == DETAIL_CHARS and long.detail.startswith("xxx")
    error = SeatFault(FaultKind.CRASH, "y" * 5000)
    assert error.kind is FaultKind.CRASH and len(error.detail) == DETAIL_CHARS and str(error) == error.detail
    assert str(SeatFault(FaultKind.DISCONNECT, "went away")) == "went away"


# -------------------------------------------------------------------------------------------------- time allowed


def test_the_time_bank_pays_each_overrun_and_only_the_overrun() -> None:
    """Deadline 1 s and a 2 s bank: a request allows the deadline plus what is left of the seat's bank, an answer
    within the deadline costs the bank nothing, an overrun costs exactly its excess, a timeout the rest."""
    times = [1.5, 0.5, 1.7, 9.0, 0.9, 1.5]
    slow = Bot("slow", in_turn(*(answer((A,), after=t) for t in times)))
    steady = Bot("steady", answer((A,), after=0.75))
    record = play([Turn((0, 1))] * len(times), [slow, steady], clock=Clock(1.0, bank=2.0), max_faults=9)
    assert [r.timeout for r in slow.requests] == pytest.approx([3.0, 2.5, 2.5, 1.8, 1.0, 1.0], abs=NEAR)
    assert [r.timeout for r in steady.requests] == [3.0] * len(times)  # each seat has its own bank
    assert [f.step for f in record.faults] == [3, 5]
    assert record.steps == [{0: "a", 1: "a"}] * 3 + [{0: "c", 1: "a"}, {0: "a", 1: "a"}, {0: "c", 1: "a"}]
    assert record.faults[0].detail == "no answer within 1.800 s"
    assert record.latencies[0] == pytest.approx([1.5, 0.5, 1.7, 1.8, 0.9, 1.0], abs=NEAR)
    assert record.latencies[1] == pytest.approx([0.75] * len(times), abs=NEAR)
    # the seats are asked at once: a step lasts as long as its slowest seat, not their sum
    assert record.step_seconds == pytest.approx([1.5, 0.75, 1.7, 1.8, 0.9, 1.0], abs=NEAR)
    assert slow.asked_at == pytest.approx([0.0, 1.5, 2.25, 3.95, 5.75, 6.65], abs=NEAR)


def test_a_sealed_window_holds_the_next_request_until_it_closes_asked_in_or_not() -> None:
    """With a 0.5 s window: the sealed step inside it is asked at once, the step after it not before the window
    closes; a window nobody is asked in lasts as long; a step that opens no window delays nothing; a match that
    ends in a window is told its end when the window closes."""
    bots = [Bot("zero", answer((A,), after=0.125)), Bot("one", answer((A,), after=0.25)), Bot("two")]
    plan = [Turn((0,), opens=True), Turn((1, 2), sealed=True), Turn((2,)), Turn((0,), opens=True), Turn((1,)),
            Turn((2,), opens=True)]
    record = play(plan, bots, sealed_window=0.5)
    zero, one, two = bots
    # the window opened at 0.125 is asked in at once (the sealed step) and closes at 0.625
    assert two.asked_at == pytest.approx([0.125, 0.625, 1.5], abs=NEAR)
    assert zero.asked_at == pytest.approx([0.0, 0.625], abs=NEAR)  # a step that opens no window delays nothing
    assert one.asked_at == pytest.approx([0.125, 1.25], abs=NEAR)  # the window opened at 0.75, nobody asked in it
    assert [o.at for o in zero.overs + one.overs + two.overs] == pytest.approx([2.0] * 3, abs=NEAR)
    assert record.steps[1] == {1: "a", 2: "a"}


@pytest.mark.parametrize("window", [{}, {"sealed_window": 0.0}], ids=["by-default", "zero"])
def test_without_a_sealed_window_no_request_waits(window: dict[str, float]) -> None:
    bots = [Bot("zero", answer((A,), after=0.125)), Bot("one")]
    play([Turn((0,), opens=True), Turn((1,), sealed=True), Turn((0,), opens=True)], bots, **window)
    assert bots[0].asked_at == pytest.approx([0.0, 0.125], abs=NEAR)
    assert bots[1].asked_at == pytest.approx([0.125], abs=NEAR)
    assert bots[1].overs[0].at == pytest.approx(0.25, abs=NEAR)


# ------------------------------------------------------------------------------------ what each seat is told (G2)


def test_a_seats_private_events_are_told_to_it_alone_where_they_happened() -> None:
    """Seat 1 learns something at step 0 before that step's event, after a fault the referee told everyone (so
    the game's positions and the table's differ by one); seat 0 learns something at step 1 between its events;
    seat 2 never learns anything and is told the public events only."""
    bots = [Bot("zero", in_turn(fail(RuntimeError("x")), answer())), Bot("one"), Bot("two")]
    plan = [Turn((0,), secrets=((1, 0),)), Turn((1, 2), secrets=((0, 1),)), Turn((0, 1)), Turn((1,)),
            Turn((0, 2), secrets=((0, 2),))]
    play(plan, bots)
    zero, one, two = bots
    crash = SeatFaulted(0, FaultKind.CRASH)
    assert zero.told() == [
        (Dealt(),),
        (crash, Did(0, "c"), Did(1, "a"), Learnt(0, 1), Did(2, "a")),
        (Did(0, "a"), Did(1, "a"), Did(1, "a")),
        (Did(0, "a"), Did(2, "a"), Learnt(0, 4), over([0, 0, 0])),
    ]
    assert one.told() == [
        (Dealt(), crash, Learnt(1, 0), Did(0, "c")),
        (Did(1, "a"), Did(2, "a")),
        (Did(0, "a"), Did(1, "a")),
        (Did(1, "a"), Did(0, "a"), Did(2, "a"), over([0, 0, 0])),
    ]
    assert two.told() == [
        (Dealt(), crash, Did(0, "c")),
        (Did(1, "a"), Did(2, "a"), Did(0, "a"), Did(1, "a"), Did(1, "a")),
        (Did(0, "a"), Did(2, "a"), over([0, 0, 0])),
    ]
    assert [r.view for r in zero.requests] == [ScriptView(0, 0, 0), ScriptView(0, 2, 1), ScriptView(0, 4, 1)]


def test_the_table_log_tells_each_event_once() -> None:
    """MatchLog alone: what is not yet told, and nothing twice, with the start's events included."""
    state = ScriptState(2, 1, (Turn((0,), secrets=((1, 1),)), Turn((1,)), Turn((0,))))
    match_log = MatchLog(state)
    assert match_log.since_last(0) == (Dealt(),) and match_log.since_last(0) == ()
    match_log.fault(0, FaultKind.TIMEOUT)
    match_log.apply({0: (A,)})
    assert match_log.since_last(1) == (Dealt(), SeatFaulted(0, FaultKind.TIMEOUT), Did(0, "a"), Learnt(1, 0))
    assert match_log.since_last(1) == ()
    match_log.apply({1: (B,)})
    assert match_log.since_last(1) == (Did(1, "b"),)
    assert match_log.since_last(0) == (SeatFaulted(0, FaultKind.TIMEOUT), Did(0, "a"), Did(1, "b"))


# ------------------------------------------------------------------------------------- seats, records, summaries


def test_a_local_seat_decides_from_its_prompt_and_view_and_a_bug_is_its_crash() -> None:
    def by_view(prompt: Prompt, view: View) -> Decision:
        assert isinstance(view, ScriptView)
        return (CHOICES[view.step % 3],)

    def broken(prompt: Prompt, view: View) -> Decision:
        raise KeyError("k")

    seat = LocalSeat("local", by_view)
    assert seat.name == "local"
    record = play([Turn((0,))] * 3, [seat])
    assert record.steps == [{0: "a"}, {0: "b"}, {0: "c"}] and record.faults == []
    crashed = play([Turn((0,))], [LocalSeat("broken", broken)])
    assert crashed.faults == [Fault(0, 0, FaultKind.CRASH, "KeyError: 'k'")]
    assert run(seat.match_started(_NO_REQUEST_INFO)) is None


_NO_REQUEST_INFO = MatchInfo("", "script", 0, ("x",), {}, Clock(), 3)


def test_a_random_seat_is_named_and_reproducible() -> None:
    seat = random_seat("rnd", 11)
    assert seat.name == "rnd"
    first = play([Turn((0,))] * 12, [random_seat("rnd", 11)]).steps
    again = play([Turn((0,))] * 12, [random_seat("rnd", 11)]).steps
    other = play([Turn((0,))] * 12, [random_seat("rnd", 12)]).steps
    assert first == again != other


def test_a_finished_match_is_summed_up_for_the_ladder() -> None:
    bots = [Bot("zero", answer((B,), after=0.25)), Bot("one", fail(RuntimeError("x"))), Bot("two")]
    record = play([Turn((0, 1, 2))] * 2, bots, max_faults=1)
    assert record.ranking_places() == (2, 3, 1)
    summary = record.summary()
    latencies: Any = ((pytest.approx(0.25, abs=NEAR),) * 2, (INSTANT,), (INSTANT,) * 2)
    assert summary == MatchSummary(5, 2, (2, 0, 0), (2, 3, 1), frozenset({1}),
                                   (Fault(1, 0, FaultKind.CRASH, "RuntimeError: x"),), latencies)
    assert summary.rated_places == (2, None, 1)


def test_an_unfinished_match_has_no_places() -> None:
    record = MatchRecord("script", {}, 1, ["a", "b"])
    with pytest.raises(AssertionError) as places:
        record.ranking_places()
    with pytest.raises(AssertionError) as summary:
        record.summary()
    assert str(places.value) == str(summary.value) == "the match has not finished"
