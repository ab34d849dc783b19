"""G2 where it matters: on the wire. Every message a seat is sent, serialized and parsed back as a bot would,
holds no other seat's hand, no pile's order, no seed and no token, and depends on nothing hidden.

The property test plays seeded random matches of every registered game at every seat count through the arena's
own server side (:class:`RemoteSeat`, :class:`Connection`, ``wire``; only the gRPC stream is replaced), so every
message is the very bytes a bot receives, with the real request ids, steps and send times, and checks each one
against the secrets that ``state.zones()`` names while the match is in that state: the other hands, and the order
of the piles the game names in ``hidden_order``. A pair of Cabanga! matches that differ only in a hidden card
(one seat may throw in one of them) must send the other seats the same messages, up to the send time. Then real
matches and a real ladder between processes check what a bot actually received.
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, cast

import pytest

from arena.core.referee import Clock, MatchRecord, Request, SeatFaulted, referee_match
from arena.games import all_games, get_game
from arena.games.base import Decision, Event, Game, MatchState, Prompt, View, random_decision
from arena.games.cabanga import CABANGA, CabangaState
from arena.ladder.ladder import Ladder, LadderConfig
from arena.ladder.store import Store
from arena.launch.botlist import BotSpec
from arena.launch.process import log_file_name
from arena.launch.runner import run_match
from arena.protocol import codec
from arena.protocol import server as server_module
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import Connection, Outgoing, Slot
from arena.tools import gamecheck
from arena.tools.gamecheck import varint
from arena.v2 import arena_pb2 as pb

CONFIGS = [(game, seats) for game in all_games() for seats in range(game.min_seats, game.max_seats + 1)]
REQUESTS = 600  # per game and seat count, at least: random matches are played until this many are checked
MIN_MATCHES = 3
ROOT = Path(__file__).resolve().parent.parent
SPY = ROOT / "tests" / "adversarial" / "hostile.py"


def check_secrets(data: bytes, message: pb.ArenaMessage, state: MatchState, seat: int, tokens: list[str]) -> None:
    """Nothing in ``message`` (sent to ``seat``, serialized as ``data``) is a token or a secret of ``state`` (the
    library's check: :func:`arena.tools.gamecheck.check_message_hides`)."""
    for token in tokens:
        assert token.encode() not in data, "a token is on the wire"
    game = get_game(state.game)
    gamecheck.check_message_hides(game, data, message, state, seat, gamecheck.packed_types(codec.codec_for(game.name)),
                                  "a message")


class Watched(Protocol):
    """A game that keeps the state of the match it started (:func:`watched`)."""

    state: MatchState | None


def watched(game: Game, arranged: MatchState | None = None) -> Game:
    """Return ``game`` as a game of a dynamic subclass of its class that keeps the state of the match it starts in
    ``state`` (the test reads it), or starts the match ``arranged``."""
    base = type(game)

    def _new(self: Any, options: Any, seats: int, seed: int) -> MatchState:
        state = arranged if arranged is not None else base._new(self, options, seats, seed)
        self.state = state
        return state

    copy: Any = base.__new__(type(f"Watched{base.__name__}", (base,), {"_new": _new}))
    copy.__dict__.update(getattr(game, "__dict__", {}))
    copy.state = None
    return cast(Game, copy)


Choose = Callable[[Prompt, View], Decision]


class WireSeat:
    """A seat played through the arena's own server side (:class:`RemoteSeat`, :class:`Connection`, ``wire``) with
    the gRPC stream replaced by a function: every message is kept as the very bytes the stream would carry (real
    request ids, send times and steps), decoded as the SDK decodes it, and answered with ``choose``.
    ``check(seat, data, message)`` runs as each message is written, while the match is in that state.
    """

    def __init__(self, name: str, choose: Choose,
                 check: Callable[[int, bytes, pb.ArenaMessage], None] = lambda *_: None) -> None:
        self.slot = Slot(name, secrets.token_urlsafe(24))
        self.connection = Connection(self.slot, self._write)
        self.slot.connection = self.connection
        self.slot.connected.set()
        self.remote = RemoteSeat(self.slot)
        self.choose = choose
        self.check = check
        self.sent: list[bytes] = []
        self.times: list[float] = []
        """The event loop's clock when each message was written."""
        self.seat = 0
        self.codec = codec.codec_for("cabanga")  # until the MatchStart names the game

    async def _write(self, message: Outgoing) -> None:
        data = message if isinstance(message, bytes) else message.SerializeToString()
        self.sent.append(data)
        self.times.append(asyncio.get_running_loop().time())
        parsed = pb.ArenaMessage.FromString(data)
        if parsed.WhichOneof("body") == "match_start":
            self.seat = parsed.match_start.seat
            self.codec = codec.codec_for(parsed.match_start.game)
        self.check(self.seat, data, parsed)
        if parsed.WhichOneof("body") == "request":
            answer = self.answer(parsed.request)
            if answer is not None:
                asyncio.get_running_loop().call_soon(self.connection.on_message, pb.BotMessage(answer=answer))

    def answer(self, request: pb.DecisionRequest) -> pb.Answer | None:
        """Return the answer to ``request`` (``None``: no answer)."""
        prompt = codec.prompt_from_proto(request, self.seat, self.codec)
        decision = self.choose(prompt, codec.view_from_proto(request, self.codec))
        return pb.Answer(request_id=request.request_id, picks=[prompt.choices.index(a) for a in decision])


class ThrowFaultSeat(WireSeat):
    """A :class:`WireSeat` that faults whenever it is asked to throw: it crashes (its adapter raises before
    anything is sent), does not answer (a timeout), or answers a choice that does not exist (illegal)."""

    def __init__(self, name: str, choose: Choose, fault: str) -> None:
        super().__init__(name, choose)
        self.fault = fault
        decide = self.remote.decide

        async def crashing(request: Request) -> Decision:
            if fault == "crash" and request.prompt.kind == "throw":
                raise RuntimeError("the bot died")
            return await decide(request)

        self.remote.decide = crashing  # type: ignore[method-assign]

    def answer(self, request: pb.DecisionRequest) -> pb.Answer | None:
        if codec.prompt_from_proto(request, self.seat, self.codec).kind != "throw":
            return super().answer(request)
        if self.fault == "timeout":
            return None
        return pb.Answer(request_id=request.request_id, picks=[len(request.choices) + 5])


def play_and_check(game: Game, seats: int, seed: int, rng: random.Random) -> int:
    """Play one random match of ``game`` (a :func:`watched` one) through the arena's server side and check every
    message of it as it is sent; return the number of requests checked."""
    tokens: list[str] = []
    asked = [0] * seats  # requests each seat was sent so far
    last_id = [0] * seats
    checked = 0

    def check(seat: int, data: bytes, message: pb.ArenaMessage) -> None:
        nonlocal checked
        state = cast(Watched, game).state
        assert state is not None
        check_secrets(data, message, state, seat, tokens)
        which = message.WhichOneof("body")
        if which == "match_start":
            assert message.match_start.seat == seat
            assert len(message.match_start.match_id) == 16 and str(seed) not in message.match_start.match_id
        if which != "request":
            return
        request = message.request
        # the real step: the seat's own count of requests; the real id: one more than its previous one
        assert request.step == asked[seat], (request.step, asked[seat])
        assert request.request_id == last_id[seat] + 1
        assert abs(request.sent_time_ms - time.time() * 1000) < 60_000
        asked[seat] += 1
        last_id[seat] = request.request_id
        # what the bot decodes is exactly what the seat may know: its view and its choices
        game_codec = codec.codec_for(state.game)
        assert codec.view_from_proto(request, game_codec) == state.view(seat)
        assert codec.prompt_from_proto(request, seat, game_codec) in state.pending()
        checked += 1

    async def match() -> tuple[MatchRecord, list[WireSeat]]:
        players = [WireSeat(f"bot{i}", lambda prompt, _view: random_decision(prompt, rng), check)
                   for i in range(seats)]
        tokens.extend(p.slot.token for p in players)
        return await referee_match(game, [p.remote for p in players], seed, clock=Clock(5.0),
                                match_id=secrets.token_hex(8)), players

    record, players = asyncio.run(match())
    assert record.result is not None and record.faults == []
    assert sum(asked) == sum(len(step) for step in record.steps)
    # every seat heard every public event once, in order, through its requests and its MatchEnd, and of the
    # private events (a draw's cards) its own only, each where it happened
    state = cast(Watched, game).state
    assert state is not None
    for seat, player in enumerate(players):
        heard: list[Event] = []
        for data in player.sent:
            message = pb.ArenaMessage.FromString(data)
            which = message.WhichOneof("body")
            if which in ("request", "match_end"):
                events = message.request.events if which == "request" else message.match_end.events
                heard += [codec.event_from_proto(e, codec.codec_for(game.name)) for e in events]
        told = [e for e in heard if not isinstance(e, SeatFaulted)]
        assert told == with_private(record.events, state.private_events(seat)), \
            f"seat {seat} is not told exactly the public events and its own private ones"
    return checked


def with_private(public: Sequence[Event], private: Sequence[tuple[int, Event]]) -> list[Event]:
    """Return the public events with one seat's private events put where they happened."""
    out: list[Event] = []
    at = 0
    for position, event in private:
        out += public[at:position]
        at = max(at, position)
        out.append(event)
    return out + list(public[at:])


@pytest.mark.parametrize(("game", "seats"), CONFIGS, ids=[f"{g.name}-{n}" for g, n in CONFIGS])
def test_g2_no_message_to_a_seat_holds_hidden_information(game: Game, seats: int) -> None:
    rng = random.Random(f"hiding/{game.name}/{seats}")
    checked = matches = 0
    while checked < REQUESTS or matches < MIN_MATCHES:
        seed = 10**12 + rng.randrange(10**12)  # large: a leaked seed cannot pass for a count
        checked += play_and_check(watched(game), seats, seed, rng)
        matches += 1


# Two Cabanga! matches that differ only in a card of seat 2's hand, with the same public history: seat 0
# plays R10 onto the right red pile, which leaves R2..R9 between the row's tops (C10). In match A seat 2
# holds R5 and is asked whether to throw it (it keeps it); in match B it holds Y5 instead (the same penalty
# symbol), and nobody is asked. Then seat 1 plays B10, seat 2 P13, and seat 0 its last card, Y17: the round
# and the match end (rounds=1). R5 or Y5 lies in the penalty pile of the other match, so its size is the same.
PAIR_HANDS = {"A": [["R10", "Y17"], ["B10", "Y10"], ["P13", "R5"]],
              "B": [["R10", "Y17"], ["B10", "Y10"], ["P13", "Y5"]]}
PAIR_SCRIPT = {0: ["R10:right", "Y17:left"], 1: ["B10:right"], 2: ["P13:left"]}


def play_pair_match(hands: list[list[str]], sealed_window: float = 0.0, fault: str | None = None,
                    deadline: float = 5.0) -> tuple[MatchRecord, list[WireSeat]]:
    options = CABANGA.options({"rounds": 1})
    state = CabangaState.arranged(hands, options=options, seed=7)

    def scripted(seat: int) -> Choose:
        plays = iter(PAIR_SCRIPT[seat])

        def choose(prompt: Prompt, view: View) -> Decision:
            if prompt.kind == "throw":
                return ()
            return (prompt.parse(next(plays))[0],)
        return choose

    async def match() -> tuple[MatchRecord, list[WireSeat]]:
        players = [WireSeat(f"bot{i}", scripted(i)) if i != 2 or fault is None
                   else ThrowFaultSeat(f"bot{i}", scripted(i), fault) for i in range(3)]
        return await referee_match(watched(CABANGA, state), [p.remote for p in players], 99, options,
                                clock=Clock(deadline),
                                match_id="same-id", sealed_window=sealed_window), players

    return asyncio.run(match())


FAULT_KINDS = {"crash": "CRASH", "timeout": "TIMEOUT", "illegal": "MALFORMED"}  # a pick out of range


@pytest.mark.parametrize("fault", list(FAULT_KINDS))
def test_g2_a_fault_inside_a_sealed_window_is_not_told_to_the_other_seats(fault: str) -> None:
    """Seat 2 faults when asked whether to throw R5 (match A); in match B it holds Y5 and is not asked. The
    fault is recorded, but the other seats are sent the same messages in both: a fault told to them would say
    that seat 2 held a card it could throw."""
    a, a_players = play_pair_match(PAIR_HANDS["A"], 0.02, fault=fault, deadline=0.3)
    b, b_players = play_pair_match(PAIR_HANDS["B"], 0.02, deadline=0.3)
    assert [(f.seat, f.kind.name) for f in a.faults] == [(2, FAULT_KINDS[fault])] and b.faults == []
    assert a.events == b.events
    assert len(a.steps) == len(b.steps) + 1
    for seat in (0, 1):
        sent_a = [without_send_time(d) for d in a_players[seat].sent]
        sent_b = [without_send_time(d) for d in b_players[seat].sent]
        assert sent_a == sent_b, f"seat {seat} is told of seat 2's fault in the throw window"


def without_send_time(data: bytes) -> pb.ArenaMessage:
    message = pb.ArenaMessage.FromString(data)
    if message.WhichOneof("body") == "request":
        message.request.ClearField("sent_time_ms")
    return message


@pytest.mark.parametrize("sealed_window", [0.0, 0.02])
def test_g2_matches_that_differ_only_in_hidden_cards_send_the_other_seats_the_same_messages(
        sealed_window: float) -> None:
    """Every field, id, step and event a seat is sent depends only on its own hand and the public history."""
    a, a_players = play_pair_match(PAIR_HANDS["A"], sealed_window)
    b, b_players = play_pair_match(PAIR_HANDS["B"], sealed_window)
    assert a.events == b.events and a.faults == b.faults == []  # the same public history
    # the pair is a real test: the referee did one more step in A (the throw it asked of seat 2)
    assert len(a.steps) == len(b.steps) + 1 and {2} in [set(step) for step in a.steps]
    assert [without_send_time(d) for d in a_players[2].sent] != [without_send_time(d) for d in b_players[2].sent]
    for seat in (0, 1):
        sent_a = [without_send_time(d) for d in a_players[seat].sent]
        sent_b = [without_send_time(d) for d in b_players[seat].sent]
        assert sent_a == sent_b, f"seat {seat} can tell the matches apart"
        assert len(sent_a) >= 3
    # with a throw window, seat 1's first request (after seat 0's R10, which left a gap) waits for the window's
    # end in both matches, whether seat 2 was asked to throw or not (a lower bound: a busy machine only adds)
    for players in (a_players, b_players):
        asked_seat_0 = players[0].times[1]  # after its MatchStart
        asked_seat_1 = players[1].times[1]
        assert asked_seat_1 - asked_seat_0 >= sealed_window - 0.001


@pytest.mark.process
def test_g2_what_a_bot_receives_holds_no_seed_and_no_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real match: a spy bot logs every message it receives; none holds the seed or any seat's token."""
    tokens: list[str] = []
    add_slot = server_module.ArenaServer.add_slot

    def recording(self: server_module.ArenaServer, name: str, token: str | None = None) -> server_module.Slot:
        slot = add_slot(self, name, token)
        tokens.append(slot.token)
        return slot

    monkeypatch.setattr(server_module.ArenaServer, "add_slot", recording)
    game = get_game("cabanga")
    seed = 10**12 + 4321
    spy = BotSpec("spy", ("{python}", str(SPY), "spy"), ROOT)
    bots = [spy, BotSpec("g", ("{python}", "-m", "arena.games.cabanga.bots.greedy.bot"), ROOT),
            BotSpec("r", ("{python}", "-m", "arena.games.cabanga.bots.random.bot"), ROOT)]
    record = asyncio.run(run_match(game, bots, seed, game.options({"rounds": 1}), clock=Clock(1.0),
                                   log_dir=tmp_path))
    assert record.result is not None and record.faults == []
    received = [bytes.fromhex(line.split()[1]) for line in
                (tmp_path / log_file_name("spy", 0)).read_text().splitlines() if line.startswith("received ")]
    kinds = Counter(pb.ArenaMessage.FromString(data).WhichOneof("body") for data in received)
    assert kinds["welcome"] == 1 and kinds["match_start"] == 1 and kinds["request"] >= 5, kinds
    assert len(tokens) == 3
    for data in received:
        assert str(seed).encode() not in data and varint(seed) not in data, "the seed reached a bot"
        for token in tokens:
            assert token.encode() not in data, "a token reached a bot"
        assert str(tmp_path).encode() not in data, "the log folder reached a bot"
    # the real requests: each one's step is the seat's own count of requests, its id one more than the last
    requests = [m.request for m in map(pb.ArenaMessage.FromString, received) if m.WhichOneof("body") == "request"]
    assert [r.step for r in requests] == list(range(len(requests)))
    assert [r.request_id for r in requests] == list(range(1, len(requests) + 1))
    assert len(record.latencies[0]) == len(requests)


@pytest.mark.process
def test_g2_no_ladder_secret_reaches_a_bot(tmp_path: Path) -> None:
    """A ladder's seed, its match seeds, database and log folder never reach a bot; match ids are opaque."""
    game = get_game("cabanga")
    bots = [BotSpec("spy", ("{python}", str(SPY), "spy"), ROOT),
            BotSpec("g", ("{python}", "-m", "arena.games.cabanga.bots.greedy.bot"), ROOT),
            BotSpec("r", ("{python}", "-m", "arena.games.cabanga.bots.random.bot"), ROOT)]
    ladder_seed = 10**15 + 777
    config = LadderConfig(game, game.options({"rounds": 1}), 3, ladder_seed, bots, matches=6, tables=1,
                          clock=Clock(2.0), log_dir=tmp_path / "logs")
    store = Store(tmp_path / "ladder.db")
    try:
        asyncio.run(Ladder(config, store, on_note=lambda _: None).run())
        match_seeds = [seed for _, _, seed in store.match_seeds()]
    finally:
        store.close()
    assert len(match_seeds) == 6
    received = [bytes.fromhex(line.split()[1]) for path in sorted((tmp_path / "logs").glob("spy-*.log"))
                for line in path.read_text().splitlines() if line.startswith("received ")]
    messages = [pb.ArenaMessage.FromString(data) for data in received]
    starts = [m.match_start for m in messages if m.WhichOneof("body") == "match_start"]
    assert len(starts) == 6  # the spy played every match, at three processes (one per rotation)
    assert len({s.match_id for s in starts}) == 6
    assert all(len(s.match_id) == 16 and int(s.match_id, 16) >= 0 for s in starts)
    for data in received:
        for secret in (ladder_seed, *match_seeds):
            assert str(secret).encode() not in data and varint(secret) not in data, "a seed reached a bot"
        for path in (tmp_path, tmp_path / "ladder.db", tmp_path / "logs"):
            assert str(path).encode() not in data, f"{path} reached a bot"
