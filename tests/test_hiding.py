"""G2 where it matters: on the wire. Every message a seat is sent, serialized and parsed back as a bot would,
holds no other seat's hand, no pile's order, no seed and no token.

The property test plays seeded random matches of both games at every seat count, builds every message the
referee would send (MatchStart, each prompted seat's DecisionRequest with the events since its previous one,
MatchEnd) from the state of that moment, and checks it against the secrets that ``state.zones()`` names. Then
a real match between processes checks what a bot actually received.
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import Message

from arena import server as server_module
from arena import wire
from arena.games import GAMES, get_game
from arena.games.base import Event, Game, MatchState, random_decision
from arena.games.cabanga import PenaltyCards
from arena.games.lama import DrewCard
from arena.launcher import BotSpec, log_file_name
from arena.referee import Clock, MatchInfo, Request, TableLog
from arena.runner import run_match
from arena.v1 import arena_pb2 as pb

CONFIGS = [(game, seats) for game in GAMES.values() for seats in range(game.min_seats, game.max_seats + 1)]
PLAYOUTS = {"cabanga": 5, "lama": 30}  # per seat count; every prompted seat of every step is checked
SECRET_PILES = {"cabanga": "penalty pile", "lama": "draw pile"}
ROOT = Path(__file__).resolve().parent.parent
SPY = ROOT / "tests" / "adversarial" / "hostile.py"


def fields(message: Message) -> Iterator[tuple[str, Any]]:
    """Yield (name, value) for every set field of ``message`` and of its sub-messages, lists whole."""
    for descriptor, value in message.ListFields():
        if descriptor.message_type is not None:
            children = value if descriptor.is_repeated else [value]
            for child in children:
                yield from fields(child)
        else:
            yield descriptor.name, list(value) if descriptor.is_repeated else value


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        out.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            return bytes(out)


def check_secrets(data: bytes, message: Message, state: MatchState, seat: int, tokens: list[str]) -> None:
    """Nothing in ``message`` (sent to ``seat``, serialized as ``data``) is a secret of ``state``."""
    for token in tokens:
        assert token.encode() not in data, "a token is on the wire"
    assert str(state.seed).encode() not in data and varint(state.seed) not in data, "the seed is on the wire"
    values = list(fields(message))
    assert all(value != state.seed for _, value in values)
    card_lists = [value for _, value in values if isinstance(value, list) and value and isinstance(value[0], str)]
    zones = state.zones()
    own = Counter(c.text for c in zones[f"hand {seat}"])
    for name, cards in zones.items():
        texts = [c.text for c in cards]
        if name.startswith("hand ") and name != f"hand {seat}" and len(texts) >= 2 and Counter(texts) != own:
            for lst in card_lists:
                assert Counter(lst) != Counter(texts), f"seat {seat} is sent {name}: {lst}"
        if name == SECRET_PILES[state.game] and len(texts) >= 2:
            for lst in card_lists:
                assert lst != texts and lst != texts[::-1], f"seat {seat} is sent the order of the {name}"
                if state.game == "cabanga" and len(texts) >= 3:  # every card is unique: no run of three either
                    runs = {tuple(texts[i:i + 3]) for i in range(len(texts) - 2)}
                    runs |= {run[::-1] for run in runs}
                    assert not runs & {tuple(lst[i:i + 3]) for i in range(len(lst) - 2)}, \
                        f"seat {seat} is sent a run of the {name}"


def roundtrip(message: Message) -> tuple[bytes, Any]:
    data = message.SerializeToString()
    parsed = type(message).FromString(data)
    assert parsed == message
    return data, parsed


def play_and_check(game: Game, seats: int, seed: int, rng: random.Random) -> int:
    """Play one random match and check every message of it; return the number of states checked."""
    state = game.new_match(seats, seed)
    options = game.options()
    tokens = [secrets.token_urlsafe(24) for _ in range(seats)]
    match_id = secrets.token_hex(6)
    names = tuple(f"bot{i}" for i in range(seats))
    for s in range(seats):
        info = MatchInfo(match_id, game.name, s, names, options.to_json(), Clock(0.5), 3)
        data, start = roundtrip(wire.match_start(info))
        check_secrets(data, start, state, s, tokens)
        assert start.seat == s and list(start.names) == list(names)
    table = TableLog(state)
    checked = 0
    while not state.over:
        prompts = state.pending()
        for step, prompt in enumerate(prompts):
            s = prompt.seat
            history: tuple[Event, ...] = table.since_last(s)
            private = [e for e in history if isinstance(e, PenaltyCards | DrewCard)]
            assert all(e.seat == s for e in private), f"seat {s} is told another seat's draw"
            # the very bytes a connection sends: the request, then its id and send time
            data = wire.request_bytes(Request(match_id, step, prompt, state.view(s), history, 0.5)) + \
                wire.request_stamp(rng.randrange(1, 2**40), rng.randrange(1, 2**41))
            parsed = pb.ArenaMessage.FromString(data)
            check_secrets(data, parsed, state, s, tokens)
            request = parsed.request
            # what the bot decodes is exactly what the seat may know: its view, its choices, public events
            assert wire.view_from_proto(request) == state.view(s)
            assert wire.prompt_from_proto(request, s).choices == prompt.choices
            assert [wire.event_from_proto(e) for e in request.events] == list(history)
            checked += 1
        table.apply({p.seat: random_decision(p, rng) for p in prompts})
    assert state.result is not None
    for s in range(seats):
        data, end = roundtrip(wire.match_end(match_id, table.since_last(s), state.result))
        check_secrets(data, end, state, s, tokens)
    return checked


@pytest.mark.parametrize(("game", "seats"), CONFIGS, ids=[f"{g.name}-{n}" for g, n in CONFIGS])
def test_g2_no_message_to_a_seat_holds_hidden_information(game: Game, seats: int) -> None:
    rng = random.Random(f"hiding/{game.name}/{seats}")
    checked = 0
    for _ in range(PLAYOUTS[game.name]):
        seed = 10**12 + rng.randrange(10**12)  # large: a leaked seed cannot pass for a count
        checked += play_and_check(game, seats, seed, rng)
    assert checked >= 150  # thousands over all the seat counts of both games


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
    bots = [spy, BotSpec("g", ("{python}", "-m", "bots.cabanga_greedy"), ROOT),
            BotSpec("r", ("{python}", "-m", "bots.cabanga_random"), ROOT)]
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
