"""The wire form: every view, prompt and event survives protobuf encoding and decoding unchanged."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from arena.core.referee import Request
from arena.games import all_games, get_game
from arena.games.base import Event, Game, Pick, Prompt, random_decision
from arena.games.cabanga import cabanga_pb2
from arena.games.codec import GameCodec, type_url
from arena.games.lama import lama_pb2
from arena.protocol import codec as wire
from arena.v2 import arena_pb2 as pb


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.name)
def test_views_prompts_and_events_round_trip(game: Game) -> None:
    rng = random.Random(game.name)
    codec = wire.codec_for(game.name)
    requests = events = 0
    for seats in range(game.min_seats, game.max_seats + 1):
        for seed in range(6):
            state = game.new_match(seats, seed)
            seen = 0
            while not state.over:
                for prompt in state.pending():
                    view = state.view(prompt.seat)
                    history = tuple(state.events[seen:])
                    data = wire.request_bytes(Request("m", 0, prompt, view, history, 1.0))
                    decoded = pb.ArenaMessage.FromString(data).request
                    assert decoded.kind == prompt.kind and decoded.view.type_url == codec.view_url
                    assert wire.view_from_proto(decoded, codec) == view
                    back = wire.prompt_from_proto(decoded, prompt.seat, codec)
                    assert back == prompt
                    assert [wire.event_from_proto(e, codec) for e in decoded.events] == list(history)
                    requests += 1
                seen = len(state.events)
                state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
            for event in state.events:
                assert wire.event_from_proto(wire.event_to_proto(event, codec), codec) == event
                events += 1
    assert requests > 100 and events > 100


def test_a_request_is_its_pieces_concatenated_and_each_event_is_encoded_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    state = get_game("cabanga").new_match(4, 3)
    rng = random.Random(3)
    for _ in range(12):
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
    history = tuple(state.events)
    prompt = state.pending()[0]
    encoded: list[object] = []
    real = wire.event_to_proto
    codec = wire.codec_for("cabanga")

    def counting(event: Event, codec: GameCodec) -> AnyMessage:
        encoded.append(event)
        return real(event, codec)

    monkeypatch.setattr(wire, "event_to_proto", counting)
    monkeypatch.setattr(wire, "event_pieces", wire.EventPieces(size=len(history) + 1))
    for seat in range(4):  # the same events, sent to every seat
        request = Request("m", 7, prompt, state.view(seat), history, 1.0)
        data = wire.request_bytes(request) + wire.request_stamp(1000 + seat, 1_700_000_000_123)
        decoded = pb.ArenaMessage.FromString(data).request
        assert (decoded.request_id, decoded.sent_time_ms, decoded.step) == (1000 + seat, 1_700_000_000_123, 7)
        assert wire.view_from_proto(decoded, codec) == state.view(seat)
        assert [wire.event_from_proto(e, codec) for e in decoded.events] == list(history)
    assert len(encoded) == len({id(e) for e in history}) > 5  # once per event (shared ones once), not per seat
    # a full cache starts again; equal events that are different objects are each encoded correctly
    small = wire.EventPieces(size=2)
    copies = [dataclasses.replace(e) for e in history]  # type: ignore[type-var]
    for event in (*history, *copies):
        piece = small.piece(event, codec)
        assert wire.event_from_proto(pb.ArenaMessage.FromString(piece).request.events[0], codec) == event


def _prompt(pick: Pick) -> Prompt:
    state = get_game("cabanga").new_match(3, 1)
    p = state.pending()[0]
    return Prompt(p.seat, p.kind, pick, p.choices, p.default if pick is Pick.ONE else ())


def test_picks_out_of_range_repeated_or_miscounted_are_wire_errors() -> None:
    one = _prompt(Pick.ONE)
    assert wire.decision_from_picks(one, [1]) == (one.choices[1],)
    with pytest.raises(wire.WireError, match="out of range"):
        wire.decision_from_picks(one, [len(one.choices)])
    with pytest.raises(wire.WireError, match="exactly one"):
        wire.decision_from_picks(one, [])
    with pytest.raises(wire.WireError, match="exactly one"):
        wire.decision_from_picks(one, [0, 1])
    subset = _prompt(Pick.SUBSET)
    assert wire.decision_from_picks(subset, []) == ()
    with pytest.raises(wire.WireError, match="repeat"):
        wire.decision_from_picks(subset, [0, 0])


def test_bad_wire_values_are_refused() -> None:
    lama, cabanga = wire.codec_for("lama"), wire.codec_for("cabanga")

    def with_view(kind: str, choices: list[str], view: Message, **fields: Any) -> pb.DecisionRequest:
        request = pb.DecisionRequest(kind=kind, pick=pb.PICK_ONE, choices=choices, **fields)
        request.view.Pack(view)
        return request

    request = with_view("turn", ["L9"], lama_pb2.View(discard="L1"))
    with pytest.raises(wire.WireError, match="L9"):
        wire.prompt_from_proto(request, 0, lama)
    request = with_view("turn", ["L1"], lama_pb2.View(discard="L1", hand=["X1"]))
    with pytest.raises(wire.WireError, match="X1"):
        wire.view_from_proto(request, lama)
    with pytest.raises(wire.WireError, match="missing view"):
        wire.view_from_proto(pb.DecisionRequest(), lama)
    with pytest.raises(wire.WireError, match=r"arena\.lama\.v1\.View view, not"):
        wire.view_from_proto(request, cabanga)  # the view of another game than the match's
    with pytest.raises(wire.WireError, match="no decision kind 'play'"):
        wire.prompt_from_proto(with_view("play", ["L1"], lama_pb2.View()), 0, lama)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"]), default_picks=[1])
    with pytest.raises(wire.WireError, match="bad default"):
        wire.prompt_from_proto(request, 0, cabanga)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"], previous_colour="Z"))
    with pytest.raises(wire.WireError, match="bad cabanga view"):
        wire.view_from_proto(request, cabanga)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"], previous_colour="R", throw_tops=["R7"]))
    with pytest.raises(wire.WireError, match="two row tops"):
        wire.view_from_proto(request, cabanga)
    with pytest.raises(wire.WireError, match="unknown event type"):
        wire.event_from_proto(AnyMessage(), cabanga)
    with pytest.raises(wire.WireError, match="bad cabanga event Played"):
        wire.event_from_proto(AnyMessage(type_url=type_url(cabanga_pb2.Played), value=b"\x12\x02Q1"), cabanga)
