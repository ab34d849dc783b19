"""The wire form: every view, prompt and event survives protobuf encoding and decoding unchanged."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from costs import until_over
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import DecodeError, Message

from arena.core.referee import Request
from arena.games import all_games, get_game
from arena.games.base import (
    Clock,
    Event,
    FaultKind,
    Game,
    MatchInfo,
    MatchOver,
    MatchResult,
    Pick,
    Prompt,
    SeatFaulted,
    random_decision,
)
from arena.games.cabanga import cabanga_pb2
from arena.games.codec import GameCodec, option_texts, type_url
from arena.games.lama import lama_pb2
from arena.games.lama.codec import CODEC as LAMA_CODEC
from arena.protocol import codec
from arena.v2 import arena_pb2 as pb


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.name)
def test_views_prompts_and_events_round_trip(game: Game) -> None:
    rng = random.Random(game.name)
    game_codec = codec.codec_for(game.name)
    requests = events = 0
    for seats in range(game.min_seats, game.max_seats + 1):
        for seed in range(6):
            state = game.new_match(seats, seed)
            seen = 0
            for _ in until_over(state):
                for prompt in state.pending():
                    view = state.view(prompt.seat)
                    history = tuple(state.events[seen:])
                    data = codec.request_bytes(Request("m", 0, prompt, view, history, 1.0))
                    decoded = pb.ArenaMessage.FromString(data).request
                    assert decoded.kind == prompt.kind and decoded.view.type_url == game_codec.view_url
                    assert codec.view_from_proto(decoded, game_codec) == view
                    back = codec.prompt_from_proto(decoded, prompt.seat, game_codec)
                    assert back == prompt
                    assert [codec.event_from_proto(e, game_codec) for e in decoded.events] == list(history)
                    requests += 1
                seen = len(state.events)
                state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
            for event in state.events:
                assert codec.event_from_proto(codec.event_to_proto(event, game_codec), game_codec) == event
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
    real = codec.event_to_proto
    game_codec = codec.codec_for("cabanga")

    def counting(event: Event, game_codec: GameCodec) -> AnyMessage:
        encoded.append(event)
        return real(event, game_codec)

    monkeypatch.setattr(codec, "event_to_proto", counting)
    monkeypatch.setattr(codec, "event_pieces", codec.EventPieces(size=len(history) + 1))
    for seat in range(4):  # the same events, sent to every seat
        request = Request("m", 7, prompt, state.view(seat), history, 1.0)
        data = codec.request_bytes(request) + codec.request_stamp(1000 + seat, 1_700_000_000_123)
        decoded = pb.ArenaMessage.FromString(data).request
        assert (decoded.request_id, decoded.sent_time_ms, decoded.step) == (1000 + seat, 1_700_000_000_123, 7)
        assert codec.view_from_proto(decoded, game_codec) == state.view(seat)
        assert [codec.event_from_proto(e, game_codec) for e in decoded.events] == list(history)
    assert len(encoded) == len({id(e) for e in history}) > 5  # once per event (shared ones once), not per seat
    # a full cache starts again; equal events that are different objects are each encoded correctly
    small = codec.EventPieces(size=2)
    copies = [dataclasses.replace(e) for e in history]  # type: ignore[type-var]
    for event in (*history, *copies):
        piece = small.piece(event, game_codec)
        assert codec.event_from_proto(pb.ArenaMessage.FromString(piece).request.events[0], game_codec) == event


def _prompt(pick: Pick) -> Prompt:
    state = get_game("cabanga").new_match(3, 1)
    p = state.pending()[0]
    return Prompt(p.seat, p.kind, pick, p.choices, p.default if pick is Pick.ONE else ())


def test_picks_out_of_range_repeated_or_miscounted_are_wire_errors() -> None:
    one = _prompt(Pick.ONE)
    assert codec.decision_from_picks(one, [1]) == (one.choices[1],)
    with pytest.raises(codec.WireError, match="out of range"):
        codec.decision_from_picks(one, [len(one.choices)])
    with pytest.raises(codec.WireError, match="exactly one"):
        codec.decision_from_picks(one, [])
    with pytest.raises(codec.WireError, match="exactly one"):
        codec.decision_from_picks(one, [0, 1])
    subset = _prompt(Pick.SUBSET)
    assert codec.decision_from_picks(subset, []) == ()
    with pytest.raises(codec.WireError, match="repeat"):
        codec.decision_from_picks(subset, [0, 0])


def test_bad_wire_values_are_refused() -> None:
    lama, cabanga = codec.codec_for("lama"), codec.codec_for("cabanga")

    def with_view(kind: str, choices: list[str], view: Message, **fields: Any) -> pb.DecisionRequest:
        request = pb.DecisionRequest(kind=kind, pick=pb.PICK_ONE, choices=choices, **fields)
        request.view.Pack(view)
        return request

    request = with_view("turn", ["L9"], lama_pb2.View(discard="L1"))
    with pytest.raises(codec.WireError, match="L9"):
        codec.prompt_from_proto(request, 0, lama)
    request = with_view("turn", ["L1"], lama_pb2.View(discard="L1", hand=["X1"]))
    with pytest.raises(codec.WireError, match="X1"):
        codec.view_from_proto(request, lama)
    with pytest.raises(codec.WireError, match="missing view"):
        codec.view_from_proto(pb.DecisionRequest(), lama)
    with pytest.raises(codec.WireError, match=r"arena\.lama\.v1\.View view, not"):
        codec.view_from_proto(request, cabanga)  # the view of another game than the match's
    with pytest.raises(codec.WireError, match="no decision kind 'play'"):
        codec.prompt_from_proto(with_view("play", ["L1"], lama_pb2.View()), 0, lama)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"]), default_picks=[1])
    with pytest.raises(codec.WireError, match="bad default"):
        codec.prompt_from_proto(request, 0, cabanga)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"], previous_colour="Z"))
    with pytest.raises(codec.WireError, match="bad cabanga view"):
        codec.view_from_proto(request, cabanga)
    request = with_view("play", ["R7:left"], cabanga_pb2.View(hand=["R7"], previous_colour="R", throw_tops=["R7"]))
    with pytest.raises(codec.WireError, match="two row tops"):
        codec.view_from_proto(request, cabanga)
    with pytest.raises(codec.WireError, match="unknown event type"):
        codec.event_from_proto(AnyMessage(), cabanga)
    with pytest.raises(codec.WireError, match="bad cabanga event Played"):
        codec.event_from_proto(AnyMessage(type_url=type_url(cabanga_pb2.Played), value=b"\x12\x02Q1"), cabanga)


def test_a_request_is_exactly_its_head_and_one_piece_per_event() -> None:
    state = get_game("lama").new_match(3, 2)
    rng = random.Random(2)
    for _ in range(4):
        state.apply({p.seat: random_decision(p, rng) for p in state.pending()})
    prompt, history, game_codec = state.pending()[0], tuple(state.events), codec.codec_for("lama")
    head = codec.request_bytes(Request("m", 3, prompt, state.view(prompt.seat), (), 1.0))
    data = codec.request_bytes(Request("m", 3, prompt, state.view(prompt.seat), history, 1.0))
    assert history and data == head + b"".join(codec.event_pieces.piece(e, game_codec) for e in history)


@pytest.mark.parametrize("seconds, ms", [(2.5, 2500), (0.0101, 10), (0.0019, 1), (0.0001, 1)])
def test_a_request_tells_the_bot_its_time_in_whole_milliseconds_never_zero(seconds: float, ms: int) -> None:
    state = get_game("lama").new_match(2, 1)
    prompt = state.pending()[0]
    data = codec.request_bytes(Request("m", 0, prompt, state.view(prompt.seat), (), seconds))
    assert pb.ArenaMessage.FromString(data).request.timeout_ms == ms


def test_match_start_tells_a_seat_its_match_seat_names_options_and_clock() -> None:
    options = get_game("cabanga").options({"rounds": 2})
    info = MatchInfo("m-7", "cabanga", 2, ("a", "b", "c"), options.to_json(), Clock(1.2345, 30.0006), 5)
    start = codec.match_start(info)
    assert (start.match_id, start.game, start.seat, list(start.names)) == ("m-7", "cabanga", 2, ["a", "b", "c"])
    assert (start.deadline_ms, start.time_bank_ms, start.max_faults) == (1234, 30001, 5)
    assert dict(start.options) == option_texts(options.to_json()) and start.options["rounds"] == "2"


def test_match_end_carries_the_totals_places_and_the_unseen_events() -> None:
    game_codec = codec.codec_for("cabanga")
    state = get_game("cabanga").new_match(3, 1)
    state.apply({p.seat: random_decision(p, random.Random(1)) for p in state.pending()})
    events = [*state.events, SeatFaulted(1, FaultKind.TIMEOUT), MatchOver((3, 9, 3), (1, 3, 1))]
    end = codec.match_end("m-7", events, MatchResult((3, 9, 3), (1, 3, 1)), game_codec)
    assert (end.match_id, list(end.totals), list(end.places)) == ("m-7", [3, 9, 3], [1, 3, 1])
    assert [codec.event_from_proto(e, game_codec) for e in end.events] == events


def test_a_games_codec_is_its_folders_looked_up_once_and_an_unknown_game_is_a_wire_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "_codecs", {})
    lookups: list[str] = []
    real = codec.game_part_value

    def counting(game: str, *args: Any) -> Any:
        lookups.append(game)
        return real(game, *args)

    monkeypatch.setattr(codec, "game_part_value", counting)
    assert codec.codec_for("lama") is LAMA_CODEC
    assert codec.codec_for("lama") is LAMA_CODEC
    assert lookups == ["lama"]
    with pytest.raises(codec.WireError, match="no codec for game 'chess'"):
        codec.codec_for("chess")


def test_malformed_messages_are_wire_errors_that_say_what_was_wrong() -> None:
    lama = codec.codec_for("lama")
    request = pb.DecisionRequest(kind="turn", pick=pb.PICK_ONE, choices=["L1"])
    request.view.type_url, request.view.value = lama.view_url, b"\xff\xff"
    with pytest.raises(codec.WireError, match="bad lama view: "):
        codec.view_from_proto(request, lama)
    for pick in (pb.PICK_UNSPECIFIED, 7):
        with pytest.raises(codec.WireError, match=f"unknown pick {pick}"):
            codec.prompt_from_proto(pb.DecisionRequest(kind="turn", pick=pick, choices=["L1"]), 0, lama)
    fault = AnyMessage(type_url=type_url(pb.SeatFaulted), value=pb.SeatFaulted(seat=1, kind="late").SerializeToString())
    with pytest.raises(codec.WireError, match="bad SeatFaulted event: "):
        codec.event_from_proto(fault, lama)
    with pytest.raises(codec.WireError, match=r"unknown event type \(none\)"):
        codec.event_from_proto(AnyMessage(), lama)
    with pytest.raises(codec.WireError, match=r"unknown event type type\.googleapis\.com/arena\.Nothing"):
        codec.event_from_proto(AnyMessage(type_url="type.googleapis.com/arena.Nothing"), lama)


def test_an_event_the_game_cannot_encode_is_a_type_error_naming_it() -> None:
    state = get_game("cabanga").new_match(3, 1)
    state.apply({p.seat: random_decision(p, random.Random(1)) for p in state.pending()})
    foreign = state.events[-1]  # a Cabanga! event, sent as if of a L.A.M.A. match
    with pytest.raises(TypeError, match=f"no wire form for the lama event {type(foreign).__name__}"):
        codec.event_to_proto(foreign, codec.codec_for("lama"))


# ------------------------------------------------------------------------------------- an answer's debug text


@pytest.mark.parametrize(("raw", "text"), [
    (b"", ""),
    ("R7:left: gap 2\nno colour twice — ok ✓".encode(), "R7:left: gap 2\nno colour twice — ok ✓"),
    (b"\x1b[2J\x00 kept as sent", "\x1b[2J\x00 kept as sent"),  # escaped by the referee, not here
    (b"bad \xff\xfe bytes \xc3", f"{codec.NOT_UTF8}bad \ufffd\ufffd bytes \ufffd"),
    ("cut in a character: é".encode()[:-1], f"{codec.NOT_UTF8}cut in a character: \ufffd"),
])
def test_an_answers_debug_bytes_are_read_as_utf8_and_bad_bytes_replaced_and_said(raw: bytes, text: str) -> None:
    message = pb.Answer(request_id=7, picks=[2, 0], crash="", debug=raw)
    answer = codec.answer_from_proto(pb.Answer.FromString(message.SerializeToString()))
    assert answer == codec.BotAnswer(7, (2, 0), "", text)
    assert codec.debug_text(raw) == text


def test_debug_bytes_that_are_not_utf8_never_spoil_the_answer_as_a_string_field_would() -> None:
    # why the field is bytes: protobuf refuses a string field that is not UTF-8, and the arena's stream would
    # close on the message that does not parse (tests/adversarial: a malformed answer); debug bytes parse whole
    bad = b"\xff\xfe"
    debugged = pb.BotMessage(answer=pb.Answer(request_id=3, picks=[1], debug=bad)).SerializeToString()
    answer = codec.answer_from_proto(pb.BotMessage.FromString(debugged).answer)
    assert answer.picks == (1,) and answer.debug == codec.NOT_UTF8 + "\ufffd\ufffd"
    crashed = pb.BotMessage(answer=pb.Answer(request_id=3, crash="xx")).SerializeToString()
    with pytest.raises(DecodeError, match="UTF-8"):
        pb.BotMessage.FromString(crashed.replace(b"xx", bad))


def _answer_before_debug() -> type[Message]:
    """Return the Answer message of the envelope as it was before the debug field: an older arena's."""
    older = descriptor_pb2.FileDescriptorProto()
    pb.DESCRIPTOR.CopyToProto(older)
    answer = next(m for m in older.message_type if m.name == "Answer")
    kept = [f for f in answer.field if f.name != "debug"]
    assert len(kept) == len(answer.field) - 1
    del answer.field[:]
    answer.field.extend(kept)
    imported = descriptor_pb2.FileDescriptorProto()
    any_pb2.DESCRIPTOR.CopyToProto(imported)
    pool = descriptor_pool.DescriptorPool()  # its own: the real envelope lives in the default pool
    pool.Add(imported)
    pool.Add(older)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("arena.v2.Answer"))


def test_the_debug_field_is_additive_for_older_arenas_and_older_bots() -> None:
    # an arena of before the field reads a debugging bot's answer whole, the debug text skipped
    older = _answer_before_debug()
    assert "debug" not in older.DESCRIPTOR.fields_by_name
    new = pb.Answer(request_id=9, picks=[4, 1], debug=b"why: this").SerializeToString()
    read = older.FromString(new)
    assert (read.request_id, list(read.picks), read.crash) == (9, [4, 1], "")  # type: ignore[attr-defined]
    # and an older bot's answer, without the field, reads as one with no debug text
    old = older(request_id=9, picks=[4, 1], crash="").SerializeToString()  # type: ignore[call-arg]
    assert codec.answer_from_proto(pb.Answer.FromString(old)) == codec.BotAnswer(9, (4, 1), "", "")
