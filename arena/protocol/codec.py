"""The game-neutral codec: the only module that turns referee values into the envelope's messages and back.

The envelope (``proto/arena/v2/arena.proto``) names no game. The game, the decision kind and the options
travel as names and text; the view and the game's events as the game's own messages (its folder's ``codec``,
:class:`arena.games.codec.GameCodec`) packed in ``google.protobuf.Any``; the events every game shares
(:class:`SeatFaulted`, :class:`RoundScored`, :class:`MatchOver`) as the envelope's own, packed the same way.
Every ``*_from_proto`` function raises :class:`WireError` for a message that does not describe a valid value,
so a bad message from the network can never reach the rules core unchecked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from arena.games import game_part_value
from arena.games.base import (
    Action,
    Decision,
    Event,
    FaultKind,
    GameError,
    MatchInfo,
    MatchOver,
    MatchResult,
    Pick,
    Prompt,
    RoundScored,
    SeatFaulted,
    View,
)
from arena.games.codec import CodecError, GameCodec, option_texts, type_url
from arena.v2 import arena_pb2 as pb

if TYPE_CHECKING:  # a bot imports this module: it must not load the referee
    from arena.core.referee import Request

PROTOCOL_VERSION = 2
"""The version of the envelope this arena and this SDK speak (``Hello.protocol_version``)."""
SERVICE = pb.DESCRIPTOR.services_by_name["Arena"].full_name
PLAY_PATH = f"/{SERVICE}/Play"
"""The one call a bot makes, as HTTP/2 names it (``:path``): the arena serves it, the SDK opens it."""

WireError = CodecError
"""A protobuf message that does not describe a valid game value."""

PICK_TO_PB = {Pick.ONE: pb.PICK_ONE, Pick.SUBSET: pb.PICK_SUBSET}
PICK_FROM_PB = {v: k for k, v in PICK_TO_PB.items()}

_codecs: dict[str, GameCodec] = {}


def codec_for(game: str) -> GameCodec:
    """Return the codec of the game called ``game`` (its folder's ``codec.CODEC``). Raises :class:`WireError`."""
    codec = _codecs.get(game)
    if codec is None:
        try:
            codec = game_part_value(game, "codec", "CODEC", GameCodec)
        except GameError as exc:
            raise WireError(f"no codec for game {game!r}: {exc}") from None
        _codecs[game] = codec
    return codec


def _url(message: Message) -> str:
    """Return the type URL of ``message`` (found once per message type)."""
    kind = type(message)
    url = _urls.get(kind)
    if url is None:
        url = _urls[kind] = type_url(kind)
    return url


_urls: dict[type[Message], str] = {}


def _pack(message: Message) -> AnyMessage:
    return AnyMessage(type_url=_url(message), value=message.SerializeToString())


_SMALL = tuple(bytes((i,)) for i in range(0x80))
"""The varints of 0 to 127: one byte each, the lengths of most fields of a request."""


def _varint(value: int) -> bytes:
    """Return ``value`` (0 or more) as a protobuf varint."""
    if value < 0x80:
        return _SMALL[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _number(message: type[Message], field: str) -> int:
    return int(message.DESCRIPTOR.fields_by_name[field].number)


def _key(message: type[Message], field: str, wire_type: int = 2) -> bytes:
    """Return the key that starts ``message``'s field ``field`` (by default length-delimited: wire type 2)."""
    return _varint(_number(message, field) << 3 | wire_type)


def _field(key: bytes, data: bytes) -> bytes:
    """Return a length-delimited field: ``key``, the length of ``data``, ``data``."""
    return key + _varint(len(data)) + data


_REQUEST_KEY = _key(pb.ArenaMessage, "request")
_EVENTS_KEY = _key(pb.DecisionRequest, "events")
_STEP_KEY = _key(pb.DecisionRequest, "step", 0)
_ID_KEY = _key(pb.DecisionRequest, "request_id", 0)
_SENT_KEY = _key(pb.DecisionRequest, "sent_time_ms", 0)
_TIMEOUT_KEY = _key(pb.DecisionRequest, "timeout_ms", 0)
_DEFAULT_KEY = _key(pb.DecisionRequest, "default_picks")
_VIEW_KEY = _key(pb.DecisionRequest, "view")
_VALUE_KEY = _key(AnyMessage, "value")
_PICK_PIECES = {pick: _key(pb.DecisionRequest, "pick", 0) + _varint(number) for pick, number in PICK_TO_PB.items()}


class _Pieces(dict[str, bytes]):
    """Serialized fields of a request by their text (a choice, a kind, a match id), made when first asked for.

    Choices and kinds are few per game; match ids one per match: the cache starts again when it holds ``size``.
    """

    def __init__(self, key: bytes, size: int = 4096) -> None:
        super().__init__()
        self._key = key
        self._size = size

    def __missing__(self, text: str) -> bytes:
        if len(self) >= self._size:
            self.clear()
        piece = self[text] = _field(self._key, text.encode())
        return piece


_choice_pieces = _Pieces(_key(pb.DecisionRequest, "choices"))
_kind_pieces = _Pieces(_key(pb.DecisionRequest, "kind"))
_match_pieces = _Pieces(_key(pb.DecisionRequest, "match_id"))
_url_pieces = _Pieces(_key(AnyMessage, "type_url"))


# ------------------------------------------------------------------------------------------ arena side


def match_start(info: MatchInfo) -> pb.MatchStart:
    """Return the MatchStart message telling a seat about its new match."""
    return pb.MatchStart(
        match_id=info.match_id,
        game=info.game,
        seat=info.seat,
        names=info.names,
        options=option_texts(info.options),
        deadline_ms=round(info.clock.deadline * 1000),
        time_bank_ms=round(info.clock.bank * 1000),
        max_faults=info.max_faults,
    )


def request_bytes(request: Request) -> bytes:
    """Return the serialized ArenaMessage asking a seat to decide, still without its id and send time.

    A serialized message followed by another is the two merged (repeated fields appended), as protobuf
    defines it. So the request is its own fields and view, then one piece per event that every seat shares and
    :data:`event_pieces` encodes once, and last the connection's :func:`request_stamp`. The request's own fields
    are written here from pieces kept by their text (a choice's field is the same bytes in every request), in
    the order and form protobuf writes them: a decision of every seat passes here.
    """
    prompt = request.prompt
    view = request.view
    codec = codec_for(view.game)
    choices = prompt.choices
    value = codec.encode_view(view).SerializeToString()
    any_view = _url_pieces[codec.view_url] + (_VALUE_KEY + _varint(len(value)) + value if value else b"")
    step = request.step
    parts = [_match_pieces[request.match_id] if request.match_id else b"",
             _STEP_KEY + _varint(step) if step else b"",
             _kind_pieces[prompt.kind], _PICK_PIECES[prompt.pick]]
    pieces = _choice_pieces
    parts += [pieces[action.text] for action in choices]
    if prompt.default:
        picks = b"".join([_varint(choices.index(action)) for action in prompt.default])
        parts.append(_DEFAULT_KEY + _varint(len(picks)) + picks)
    parts += (_TIMEOUT_KEY, _varint(max(1, int(request.timeout * 1000))),
              _VIEW_KEY, _varint(len(any_view)), any_view)
    body = b"".join(parts)
    head = _REQUEST_KEY + _varint(len(body)) + body
    if not request.events:
        return head
    events = event_pieces.pieces
    parts = [head]
    for event in request.events:  # the cache's lookup inline: most events were encoded for another seat
        hit = events.get(id(event))
        parts.append(hit[1] if hit is not None and hit[0] is event else event_pieces.piece(event, codec))
    return b"".join(parts)


def request_stamp(request_id: int, sent_time_ms: int) -> bytes:
    """Return the piece that ends a serialized request: its id and the arena's clock when it was sent."""
    # written here (the same bytes as the two messages would give): every request passes here
    body = (_ID_KEY + _varint(request_id) if request_id else b"") + \
        (_SENT_KEY + _varint(sent_time_ms) if sent_time_ms else b"")
    return _REQUEST_KEY + _varint(len(body)) + body


class EventPieces:
    """Serialized request pieces holding one event each, by event, for the most recent ``size`` events.

    Every seat is sent every public event, so each is encoded once rather than once per seat. Events are
    immutable and found by identity (the piece holds its event, so an id is never reused while cached).
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self.pieces: dict[int, tuple[Event, bytes]] = {}

    def piece(self, event: Event, codec: GameCodec) -> bytes:
        """Return the serialized ArenaMessage whose request holds ``event`` (a ``codec`` game's) and nothing else."""
        hit = self.pieces.get(id(event))
        if hit is not None and hit[0] is event:
            return hit[1]
        if len(self.pieces) >= self._size:
            self.pieces.clear()
        # the request and events fields around the event's Any, written here: two messages fewer to build
        piece = _field(_REQUEST_KEY, _field(_EVENTS_KEY, event_to_proto(event, codec).SerializeToString()))
        self.pieces[id(event)] = (event, piece)
        return piece


event_pieces = EventPieces()
"""The arena's one cache of event pieces (shared by its tables: they run on one event loop)."""


def decision_from_picks(prompt: Prompt, picks: Sequence[int]) -> Decision:
    """Return the decision that ``picks`` (indices into the prompt's choices) stand for.

    Raises :class:`WireError` for an index out of range, a repeated index, or a count that the prompt's
    pick does not allow. Legality beyond that is the referee's to check.
    """
    choices = prompt.choices
    n = len(choices)
    if len(picks) == 1:  # most answers: one pick, fine for either kind of prompt when it is in range
        i = picks[0]
        if 0 <= i < n:
            return (choices[i],)
    if any(not 0 <= i < n for i in picks):
        raise WireError(f"pick {list(picks)!r} is out of range for {n} choices")
    if len(set(picks)) != len(picks):
        raise WireError(f"picks {list(picks)!r} repeat a choice")
    if prompt.pick is Pick.ONE and len(picks) != 1:
        raise WireError(f"expected exactly one pick, got {len(picks)}")
    return tuple(prompt.choices[i] for i in picks)


def match_end(match_id: str, events: Iterable[Event], result: MatchResult, codec: GameCodec) -> pb.MatchEnd:
    """Return the MatchEnd message: final totals and places plus the events the seat has not seen."""
    return pb.MatchEnd(match_id=match_id, totals=result.totals, places=result.places,
                       events=[event_to_proto(e, codec) for e in events])


NOT_UTF8 = "[not UTF-8: bad bytes replaced by \N{REPLACEMENT CHARACTER}] "
"""What starts the debug text of an answer whose bytes were not UTF-8 (at the start, so no cut removes it)."""


def debug_text(raw: bytes) -> str:
    """Return an Answer's debug bytes as text: "" for none; bytes that are not UTF-8 replaced by U+FFFD,
    with :data:`NOT_UTF8` in front. Never raises. Neither cut nor escaped: the referee does both."""
    if not raw:
        return ""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return NOT_UTF8 + raw.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class BotAnswer:
    """A bot's Answer as the arena reads it: ``picks`` (indices into the request's choices), ``crash`` (the
    bot's own reason for not deciding, "" when it decided) and ``debug``, its debug text (:func:`debug_text`)."""

    request_id: int
    picks: tuple[int, ...]
    crash: str
    debug: str


def answer_from_proto(answer: pb.Answer) -> BotAnswer:
    """Return what an Answer says. Never raises: the picks are checked against the request by
    :func:`decision_from_picks`."""
    return BotAnswer(answer.request_id, tuple(answer.picks), answer.crash, debug_text(answer.debug))


def _texts(values: Iterable[Action]) -> list[str]:
    return [v.text for v in values]


_SHARED_TO_PB: dict[type, Callable[[Any], Message]] = {
    SeatFaulted: lambda e: pb.SeatFaulted(seat=e.seat, kind=e.fault.value),
    RoundScored: lambda e: pb.RoundScored(round=e.round, points=e.points, totals=e.totals),
    MatchOver: lambda e: pb.MatchOver(totals=e.totals, places=e.places),
}
_SHARED_FROM_PB: dict[str, tuple[type[Message], Callable[[Any], Event]]] = {
    type_url(pb.SeatFaulted): (pb.SeatFaulted, lambda m: SeatFaulted(m.seat, FaultKind(m.kind))),
    type_url(pb.RoundScored): (pb.RoundScored, lambda m: RoundScored(m.round, tuple(m.points), tuple(m.totals))),
    type_url(pb.MatchOver): (pb.MatchOver, lambda m: MatchOver(tuple(m.totals), tuple(m.places))),
}
TYPE_URLS: dict[type[Message], str] = {message: url for url, (message, _) in _SHARED_FROM_PB.items()}


def event_to_proto(event: Event, codec: GameCodec) -> AnyMessage:
    """Return the wire form of an event of ``codec``'s game, or of an event every game shares."""
    shared = _SHARED_TO_PB.get(type(event))
    message = shared(event) if shared is not None else codec.encode_event(event)
    if message is None:
        raise TypeError(f"no wire form for the {codec.game} event {type(event).__name__}")
    return _pack(message)


# -------------------------------------------------------------------------------------------- bot side


def view_from_proto(request: pb.DecisionRequest, codec: GameCodec) -> View:
    """Return the view of ``codec``'s game a DecisionRequest carries. Raises :class:`WireError`."""
    view = request.view
    if view.type_url != codec.view_url:
        raise WireError(f"the request carries a {view.type_url or 'missing'} view, not {codec.view_url}")
    try:
        message = codec.view_message.FromString(view.value)
    except Exception as exc:  # a DecodeError
        raise WireError(f"bad {codec.game} view: {exc}") from None
    return codec.decode_view(message)


def prompt_from_proto(request: pb.DecisionRequest, seat: int, codec: GameCodec) -> Prompt:
    """Return the prompt a DecisionRequest carries, its choices parsed into actions. Raises :class:`WireError`."""
    pick = PICK_FROM_PB.get(request.pick)
    if pick is None:
        raise WireError(f"unknown pick {request.pick}")
    actions = codec.actions(request.kind)
    try:
        choices: tuple[Action, ...] = tuple(map(actions.__getitem__, request.choices))
    except KeyError as exc:
        raise WireError(f"bad choices: no such {request.kind} choice {exc}") from None
    try:
        default = tuple(map(choices.__getitem__, request.default_picks))
    except IndexError:
        raise WireError(f"bad default: picks {list(request.default_picks)} for {len(choices)} choices") from None
    return Prompt(seat, request.kind, pick, choices, default)


def event_from_proto(message: AnyMessage, codec: GameCodec) -> Event:
    """Return the event of ``codec``'s game (or a shared one) a wire event stands for. Raises :class:`WireError`,
    also for an event of a type that neither the envelope nor the game knows."""
    shared = _SHARED_FROM_PB.get(message.type_url)
    if shared is not None:
        kind, decode = shared
        try:
            return decode(kind.FromString(message.value))
        except Exception as exc:
            raise WireError(f"bad {kind.DESCRIPTOR.name} event: {exc}") from None
    event = codec.decode_event(message.type_url, message.value)
    if event is None:
        raise WireError(f"unknown event type {message.type_url or '(none)'}")
    return event
