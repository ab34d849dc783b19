"""The referee: plays one match between seats, whatever the game.

It asks every seat that must decide now at once, waits for each answer no longer than that seat's clock
allows, turns every failure to answer well into a recorded :class:`Fault` plus the prompt's documented
default, and benches a seat after too many faults (DESIGN.md "Faults"). It knows nothing of gRPC: a seat is
anything with an async :meth:`Seat.decide`; :class:`LocalSeat` runs a Python function in-process.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from arena.games.base import (
    NO_DECISION_TEXT,
    Decision,
    Event,
    Game,
    GameError,
    IllegalDecisionError,
    MatchResult,
    MatchState,
    Options,
    Prompt,
    View,
    decision_text,
    random_decision,
)
from arena.games.base import Clock as Clock
from arena.games.base import FaultKind as FaultKind
from arena.games.base import MatchInfo as MatchInfo
from arena.games.base import SeatFaulted as SeatFaulted
from arena.text import capped, visible


@dataclass(frozen=True, slots=True)
class Fault:
    """One recorded fault: which seat, at which step (index of the decision), what kind, and why.

    ``detail`` is cut to :data:`arena.text.DETAIL_CHARS` (also when read back from an older replay): a bot
    chooses much of it, a malformed answer's picks or a crash reason, and a message may be 64 KiB.
    """

    seat: int
    step: int
    kind: FaultKind
    detail: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "detail", capped(self.detail))

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "step": self.step, "kind": self.kind.value, "detail": self.detail}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fault:
        return cls(int(data["seat"]), int(data["step"]), FaultKind(data["kind"]), str(data["detail"]))


@dataclass(frozen=True, slots=True)
class Defaulted(Event):
    """For the operator's listing only (``referee_match``'s ``on_event``): ``seat``'s decision at this step was
    replaced by the default ``decision`` for a fault of ``fault``. Never told to a seat (a fault in a sealed window
    would tell that the seat held a card) and never kept in the record's events: the record keeps the fault."""

    kind: ClassVar[str] = "defaulted"
    seat: int
    fault: FaultKind
    decision: str

    def to_json(self) -> dict[str, Any]:
        return {"event": self.kind, "seat": self.seat, "kind": self.fault.value, "default": self.decision}

    def describe(self, names: Sequence[str]) -> str:
        applied = "nothing" if self.decision == NO_DECISION_TEXT else self.decision
        return f"{names[self.seat]} faulted ({self.fault.value}); the default is applied: {applied}"


class MatchLog:
    """The events of one match as the seats are told them, and what each seat has been told so far.

    Public events (the game's, and the referee's :class:`SeatFaulted`) go to every seat; a seat's private
    events (:meth:`MatchState.private_events`) go to that seat only, where they happened. :meth:`since_last`
    returns what a seat has not been told yet and marks it told.
    """

    def __init__(self, state: MatchState) -> None:
        self.state = state
        self.public: list[Event] = list(state.events)
        seats = state.seats
        self._game_seen = len(state.events)
        self._placed = [len(state.private_events(s)) for s in range(seats)]  # game private events placed
        self._private: list[list[tuple[int, Event]]] = [[] for _ in range(seats)]  # (position in public, event)
        self._sent = [0] * seats
        self._private_sent = [0] * seats

    def fault(self, seat: int, kind: FaultKind) -> None:
        """Tell every seat that ``seat`` faulted at the pending step, unless that step is a sealed window.

        In a sealed window (a Cabanga! throw) only seats holding a card are asked, so a fault there would tell
        the others that the seat held one (G2): the fault is recorded, but not told.
        """
        if not self.state.in_window():
            self.public.append(SeatFaulted(seat, kind))

    def apply(self, decisions: Mapping[int, Decision]) -> list[Event]:
        """Apply ``decisions`` to the match, log what followed, and return the game's public events."""
        state = self.state
        events = state.apply(decisions)
        offset = len(self.public) - self._game_seen  # public positions = game positions + referee events
        self.public.extend(events)
        self._game_seen += len(events)
        for seat, placed in enumerate(self._placed):
            private = state.private_events(seat)
            if len(private) > placed:
                self._private[seat].extend((position + offset, event) for position, event in private[placed:])
                self._placed[seat] = len(private)
        return events

    def since_last(self, seat: int) -> tuple[Event, ...]:
        """Return the events ``seat`` has not been told yet, oldest first, and count them as told."""
        public = self.public
        start, end = self._sent[seat], len(public)
        self._sent[seat] = end
        private = self._private[seat]
        told = self._private_sent[seat]
        if told == len(private):
            return tuple(public[start:end])
        out: list[Event] = []
        at = start
        for position, event in private[told:]:
            out.extend(public[at:position])
            at = max(at, position)
            out.append(event)
        out.extend(public[at:end])
        self._private_sent[seat] = len(private)
        return tuple(out)


class SeatFault(Exception):
    """Raised by a :class:`Seat` that could not produce an answer: the referee records it as a fault.

    ``detail`` is cut to :data:`arena.text.DETAIL_CHARS` here, where every fault's detail is made. ``debug`` is the
    debug text the bot sent with a failed answer (its crash report, a malformed answer), recorded as an answer's.
    """

    def __init__(self, kind: FaultKind, detail: str, debug: str = "") -> None:
        detail = capped(detail)
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.debug = debug


class Explained(tuple[Any, ...]):
    """A decision with the debug text its seat attached to it: what a :class:`Seat` returns to have that text
    recorded (a plain decision has none). It is the decision itself, a tuple of actions, with ``debug`` beside.

    The text is its author's: the referee cuts it (:class:`DebugLog`) and keeps it in the record, the replay
    shows it to that seat's owner only; it never reaches another seat.
    """

    debug: str

    def __new__(cls, decision: Decision, debug: str) -> Explained:
        explained = super().__new__(cls, decision)
        explained.debug = debug
        return explained


DEBUG_BYTES = 1024
"""The most debug text kept of one decision, in bytes of UTF-8 (the cut said)."""
DEBUG_MATCH_BYTES = 64 * 1024
"""The most debug text kept of one seat over a match (the cut said once, the rest dropped)."""
DEBUG_CUT = " [cut: the arena keeps 1 KiB of debug text a decision]"
DEBUG_FULL = "[the arena keeps 64 KiB of a seat's debug text a match: the rest is left out]"


class DebugLog:
    """The debug text of a match's seats as the referee keeps it: each decision's cut at :data:`DEBUG_BYTES`, each
    seat's at :data:`DEBUG_MATCH_BYTES` a match, control characters made visible (line breaks kept), the cuts
    said in the text. Entries are (step, seat, text)."""

    def __init__(self, seats: int) -> None:
        self.entries: list[tuple[int, int, str]] = []
        # each seat's bytes left, the room of the note that the rest is left out kept apart
        self._left = [DEBUG_MATCH_BYTES - len(DEBUG_FULL.encode())] * seats
        self._full = [False] * seats

    def add(self, step: int, seat: int, text: str) -> None:
        """Keep what may be kept of ``text``, the debug text of ``seat``'s decision at ``step``."""
        if not text or self._full[seat]:
            return
        data = visible(text, newline="\n").encode("utf-8", "replace")
        if len(data) > DEBUG_BYTES:
            cut = DEBUG_CUT.encode()
            data = data[:DEBUG_BYTES - len(cut)].decode("utf-8", "ignore").encode() + cut
        left = self._left[seat]
        if len(data) > left:  # the seat's match is full: what fits, and the note, once
            data = data[:left].decode("utf-8", "ignore").encode() + DEBUG_FULL.encode()
            self._full[seat] = True
            left = 0
        else:
            left -= len(data)
        self._left[seat] = left
        self.entries.append((step, seat, data.decode("utf-8", "replace")))


@dataclass(frozen=True, slots=True)
class Request:
    """What a seat is asked: the prompt, the seat's view, and the public events since its previous request.

    ``step`` counts the requests this seat was sent before in this match (0 for its first): a number the seat
    knows itself. The referee's own step count is not sent: Cabanga! throw steps exist only when some seat
    holds a card to throw, so it would tell the other seats about hidden hands (G2).
    """

    match_id: str
    step: int
    prompt: Prompt
    view: View
    events: tuple[Event, ...]
    timeout: float


class Seat(Protocol):
    """One seat's decider. ``decide`` returns a decision or raises :class:`SeatFault`."""

    name: str

    async def match_started(self, info: MatchInfo) -> None: ...

    async def decide(self, request: Request) -> Decision: ...

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                         result: MatchResult) -> None: ...


class LocalSeat:
    """A seat played in-process by a Python function of (prompt, view) returning a decision."""

    def __init__(self, name: str, decide: Callable[[Prompt, View], Decision]) -> None:
        self.name = name
        self._decide = decide

    async def decide(self, request: Request) -> Decision:
        try:
            return self._decide(request.prompt, request.view)
        except Exception as exc:  # a bot's bug is its fault, never the referee's
            raise SeatFault(FaultKind.CRASH, f"{type(exc).__name__}: {exc}") from exc

    async def match_started(self, info: MatchInfo) -> None:
        return None

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                         result: MatchResult) -> None:
        return None


def random_seat(name: str, seed: int | str) -> LocalSeat:
    """Return an in-process seat choosing uniformly among legal decisions, reproducibly from ``seed``."""
    rng = random.Random(seed)
    return LocalSeat(name, lambda prompt, _view: random_decision(prompt, rng))


DEFAULT_CLOCK = Clock()
_T = TypeVar("_T")

WINDOW_SPIN = 0.0015
"""The last seconds of a held sealed window that the referee waits out by yielding, not with a timer (1 ms grain)."""


@dataclass
class MatchRecord:
    """Everything about one played match: enough to show it, rate it and replay it."""

    game: str
    options: dict[str, Any]
    seed: int
    names: list[str]
    steps: list[dict[int, str]] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    latencies: list[list[float]] = field(default_factory=list)
    benched: set[int] = field(default_factory=set)
    step_seconds: list[float] = field(default_factory=list)
    """Per step: the wall time from asking the seats to having every answer or fault."""
    asked: list[dict[int, float]] = field(default_factory=list)
    """Per step: the seats asked (not benched) and the seconds each took to answer or fault."""
    result: MatchResult | None = None
    match_id: str = ""
    """The opaque id every seat was told (MatchStart): what a bot's log names the match by."""
    debug: list[tuple[int, int, str]] = field(default_factory=list)
    """The seats' debug text as kept (:class:`DebugLog`): (step, seat, text), in order; each seat's owner's alone."""

    def ranking_places(self) -> tuple[int, ...]:
        """Return the places used for ratings: the game's places, with benched seats placed last (shared)."""
        assert self.result is not None, "the match has not finished"
        ok = [s for s in range(len(self.names)) if s not in self.benched]
        game_places = self.result.places  # which way totals count is the game's business, never worked out here
        places = [0] * len(self.names)
        for s in ok:
            places[s] = 1 + sum(1 for o in ok if game_places[o] < game_places[s])
        for s in self.benched:
            places[s] = len(ok) + 1
        return tuple(places)

    def summary(self) -> MatchSummary:
        """Return what a ladder keeps of this finished match besides its replay."""
        assert self.result is not None, "the match has not finished"
        return MatchSummary(self.seed, len(self.steps), tuple(self.result.totals), self.ranking_places(),
                            frozenset(self.benched), tuple(self.faults), tuple(tuple(s) for s in self.latencies))


@dataclass(frozen=True)
class MatchSummary:
    """A finished match as a ladder rates and stores it: the outcome, the faults and the decision times.

    It is all the ladder's head needs besides the replay, and small: a table on another machine sends this
    and the packed replay (:func:`arena.core.replay.pack`) instead of the record, whose events and cards would
    cost the head more to unpickle than to rate and store the match.
    """

    seed: int
    steps: int
    totals: tuple[int, ...]
    places: tuple[int, ...]
    """The places used for ratings (:meth:`MatchRecord.ranking_places`): benched seats last, shared."""
    benched: frozenset[int]
    faults: tuple[Fault, ...]
    latencies: tuple[tuple[float, ...], ...]
    """Per seat: the seconds of each decision."""

    @property
    def rated_places(self) -> tuple[int | None, ...]:
        """Return each seat's place for a rating system: ``None`` for a benched seat."""
        return tuple(None if seat in self.benched else place for seat, place in enumerate(self.places))


async def referee_match(
    game: Game,
    seats: Sequence[Seat],
    seed: int,
    options: Options | None = None,
    *,
    clock: Clock = DEFAULT_CLOCK,
    max_faults: int = 3,
    match_id: str = "",
    on_event: Callable[[Event], None] | None = None,
    sealed_window: float = 0.0,
) -> MatchRecord:
    """Play one whole match between ``seats`` and return its record.

    Every seat that must decide is asked at once; no seat is waited on past its clock. A seat's failure
    (see :class:`FaultKind`) is recorded and the prompt's default applied; after ``max_faults`` faults the
    seat is benched: played by the defaults, never asked again this match. Raises :class:`GameError` for a
    bad configuration; a bot can never make this raise.

    With ``sealed_window`` seconds, every sealed window the game opens (:meth:`MatchState.opens_window`, the
    Cabanga! throw after a play) lasts at least that long, whether or not a seat is asked in it: the next
    request is not sent before. So the time between requests does not tell a seat whether another seat held
    a card to throw, as long as the seats asked answer within the window.
    """
    if max_faults < 1:
        raise GameError(f"max_faults must be at least 1, got {max_faults!r}")
    opts = options if options is not None else game.options()
    state = game.new_match(len(seats), seed, opts)
    record = MatchRecord(game.name, opts.to_json(), seed, [s.name for s in seats],
                         latencies=[[] for _ in seats], match_id=match_id)
    match_log = MatchLog(state)
    sent = [0] * len(seats)  # per seat: how many requests it has been sent (its request's step)
    window_end: float | None = None  # when the open sealed window closes (loop clock), when held
    banks = [clock.bank] * len(seats)
    fault_counts = [0] * len(seats)
    debug = DebugLog(len(seats))
    record.debug = debug.entries

    def emit(events: Sequence[Event]) -> None:
        record.events.extend(events)
        if on_event is not None:
            for event in events:
                on_event(event)

    for s, seat in enumerate(seats):
        info = MatchInfo(match_id, game.name, s, tuple(record.names), record.options, clock, max_faults)
        # a seat that cannot hear the start will fault on its first decision instead; asyncio.timeout, not
        # wait_for: Python 3.11's wait_for returns a call that finished as its caller was cancelled, losing the
        # cancel (a ladder told to stop played on)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(clock.deadline):
                await seat.match_started(info)
    emit(state.events)
    loop = asyncio.get_running_loop()
    deadlines = _Deadlines(loop)  # every ask's deadline: one timer for the match
    task = asyncio.current_task(loop)
    assert task is not None, "a match is refereed in a task"
    while not state.over:
        if window_end is not None and not state.in_window():
            await _sleep_until(loop, window_end)
            window_end = None
        step = len(record.steps)
        prompts = state.pending()
        calls = []
        decisions: dict[int, Decision] = {}
        for prompt in prompts:
            s = prompt.seat
            if s in record.benched:
                decisions[s] = prompt.default
                continue
            history = match_log.since_last(s)
            limit = clock.deadline + banks[s]
            request = Request(match_id, sent[s], prompt, state.view(s), history, limit)
            sent[s] += 1
            calls.append((seats[s], request))
        # every prompted seat is asked at once; each call ends by its own seat's clock
        asked_at = loop.time()
        if len(calls) == 1:  # most steps: asked from this task, no task of its own
            answers = [await _ask(*calls[0], deadlines, task)]
        else:
            answers = await _all(loop, [_ask(seat, request, deadlines, None) for seat, request in calls])
        record.step_seconds.append(loop.time() - asked_at)
        took: dict[int, float] = {}
        record.asked.append(took)
        faulted = len(record.faults)  # the faults of this step are the ones recorded from here
        for prompt, answer, elapsed in answers:
            s = prompt.seat
            record.latencies[s].append(elapsed)
            took[s] = elapsed
            banks[s] = max(0.0, banks[s] - max(0.0, elapsed - clock.deadline))
            if isinstance(answer, _WITH_DEBUG) and answer.debug:
                debug.add(step, s, answer.debug)
            if not isinstance(answer, SeatFault):
                try:
                    prompt.check(answer)
                    decisions[s] = answer
                    continue
                except IllegalDecisionError as err:
                    answer = SeatFault(FaultKind.ILLEGAL, str(err))
            decisions[s] = prompt.default
            record.faults.append(Fault(s, step, answer.kind, answer.detail))
            match_log.fault(s, answer.kind)
            fault_counts[s] += 1
            if fault_counts[s] >= max_faults:
                record.benched.add(s)
        if len(decisions) == 1:  # most steps: one seat decided
            ((s, d),) = decisions.items()
            record.steps.append({s: decision_text(d)})
        else:
            record.steps.append({s: decision_text(d) for s, d in sorted(decisions.items())})
        if on_event is not None:  # the operator sees a defaulted decision where it happened, sealed ones too
            for fault in record.faults[faulted:]:
                on_event(Defaulted(fault.seat, fault.kind, record.steps[-1][fault.seat]))
        emit(match_log.apply(decisions))
        if sealed_window > 0 and state.opens_window():
            window_end = loop.time() + sealed_window
    if window_end is not None:  # the match ended in a window: its end is told no sooner
        await _sleep_until(loop, window_end)
    deadlines.close()  # (a match that raises leaves it to go off with no ask left: nothing happens)
    record.result = state.result
    assert record.result is not None
    for s, seat in enumerate(seats):
        if s not in record.benched:
            # the match is decided; a bot that fails to hear it costs nothing
            with contextlib.suppress(Exception):
                async with asyncio.timeout(clock.deadline):
                    await seat.match_over(match_id, s, match_log.since_last(s), record.result)
    return record


_WITH_DEBUG = (Explained, SeatFault)
"""The answers that may carry a seat's debug text (a tuple: ``Explained | SeatFault`` is a new union each time)."""


async def _all(loop: asyncio.AbstractEventLoop, calls: Sequence[Coroutine[Any, Any, _T]]) -> list[_T]:
    """Run ``calls`` at once, each in a task of its own, and return their results in order.

    What ``asyncio.gather`` does for calls that never raise (:func:`ask_seat` returns its faults), without its
    bookkeeping per call: the tasks all start before any is awaited; cancelling the wait cancels them all.
    """
    tasks = [loop.create_task(call) for call in calls]
    try:
        return [await task for task in tasks]
    except BaseException:
        for task in tasks:
            task.cancel()
        raise


async def _sleep_until(loop: asyncio.AbstractEventLoop, when: float) -> None:
    """Return at loop time ``when``, however long ago the wait began.

    The event loop's timers wake at whole milliseconds counted from when it starts waiting (epoll), so one
    sleep would end a held sealed window up to a millisecond later when a seat was asked in it. Sleep until close,
    then yield to the loop until the time: the end no longer depends on when the last wait began.
    """
    while (left := when - loop.time()) > WINDOW_SPIN:
        await asyncio.sleep(left - WINDOW_SPIN)
    while loop.time() < when:
        await asyncio.sleep(0)


async def ask_seat(seat: Seat, request: Request) -> tuple[Prompt, Decision | SeatFault, float]:
    """Ask one seat, never waiting past ``request.timeout``; return (prompt, answer or fault, seconds)."""
    deadlines = _Deadlines(asyncio.get_running_loop())
    try:
        return await _ask(seat, request, deadlines, None)
    finally:
        deadlines.close()


async def _ask(seat: Seat, request: Request, deadlines: _Deadlines,
               task: asyncio.Task[Any] | None) -> tuple[Prompt, Decision | SeatFault, float]:
    """:func:`ask_seat` from ``task`` (the current task; ``None``: find it), its deadline kept by ``deadlines``."""
    loop = deadlines.loop
    started = loop.time()
    # the deadline as asyncio.timeout enforces it (a timer that cancels this task, told apart from any other
    # cancellation by the count of cancel requests), with no context manager and no timer of its own: every
    # decision of every seat passes here
    if task is None:
        task = asyncio.current_task(loop)
        assert task is not None, "a seat is asked from a task"
    expiry = _Expiry(task, started + request.timeout)
    deadlines.add(expiry)
    try:
        decision = await seat.decide(request)
    except asyncio.CancelledError:
        if expiry.fired and task.uncancel() <= expiry.cancelling:
            return request.prompt, _timeout(request), request.timeout
        raise
    except TimeoutError:  # as asyncio.timeout let it through: a seat's own TimeoutError is a timeout too
        if expiry.fired:
            task.uncancel()
        return request.prompt, _timeout(request), request.timeout
    except SeatFault as fault:
        if expiry.fired:
            task.uncancel()
        return request.prompt, fault, loop.time() - started
    except Exception as exc:  # a seat adapter's bug is charged to the seat, the match goes on
        if expiry.fired:
            task.uncancel()
        return request.prompt, SeatFault(FaultKind.CRASH, f"{type(exc).__name__}: {exc}"), \
            loop.time() - started
    finally:
        deadlines.discard(expiry)
    if expiry.fired:  # the time ran out as the answer came: the answer counts, as with asyncio.timeout
        task.uncancel()
    return request.prompt, decision, loop.time() - started


class _Expiry:
    """One ask's deadline: at ``when`` (loop time), :class:`_Deadlines` cancels the asking task."""

    __slots__ = ("cancelling", "fired", "task", "when")

    def __init__(self, task: asyncio.Task[Any], when: float) -> None:
        self.task = task
        self.when = when
        self.cancelling = task.cancelling()
        self.fired = False

    def expire(self) -> None:
        self.fired = True
        self.task.cancel()


class _Deadlines:
    """The deadlines of the asks in flight at one table, kept by one timer of the event loop.

    The timer is set for the earliest deadline and moved only when an ask's deadline comes before it: asks
    answered in time (nearly all) leave it where it is, and when it goes off with no ask past its deadline it
    is set again for the earliest. So the loop keeps one timer a table instead of one a decision. An ask is
    expired when its timer would have gone off: at the loop's turn where its time is due, never sooner.
    """

    __slots__ = ("asks", "loop", "timer", "when")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.asks: list[_Expiry] = []
        self.timer: asyncio.TimerHandle | None = None
        self.when = _NEVER

    def add(self, expiry: _Expiry) -> None:
        self.asks.append(expiry)
        if expiry.when < self.when:
            if self.timer is not None:
                self.timer.cancel()
            self.when = expiry.when
            self.timer = self.loop.call_at(expiry.when, self._due)

    def discard(self, expiry: _Expiry) -> None:
        asks = self.asks
        if asks and asks[-1] is expiry:
            asks.pop()
        elif expiry in asks:
            asks.remove(expiry)

    def _due(self) -> None:
        """The timer went off: expire the asks whose time is due, set it for the next deadline."""
        due = max(self.when, self.loop.time())  # the loop found ``when`` due: so is every deadline up to it
        self.timer = None
        self.when = _NEVER
        waiting = []
        for expiry in self.asks:
            if expiry.when <= due:
                expiry.expire()
            else:
                waiting.append(expiry)
        self.asks = waiting
        if waiting:
            self.when = min(expiry.when for expiry in waiting)
            self.timer = self.loop.call_at(self.when, self._due)

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None


_NEVER = float("inf")


def _timeout(request: Request) -> SeatFault:
    return SeatFault(FaultKind.TIMEOUT, f"no answer within {request.timeout:.3f} s")
