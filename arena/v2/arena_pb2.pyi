from google.protobuf import any_pb2 as _any_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Pick(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PICK_UNSPECIFIED: _ClassVar[Pick]
    PICK_ONE: _ClassVar[Pick]
    PICK_SUBSET: _ClassVar[Pick]
PICK_UNSPECIFIED: Pick
PICK_ONE: Pick
PICK_SUBSET: Pick

class BotMessage(_message.Message):
    __slots__ = ("hello", "answer")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    answer: Answer
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "protocol_version", "agent")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    token: str
    protocol_version: int
    agent: str
    def __init__(self, token: _Optional[str] = ..., protocol_version: _Optional[int] = ..., agent: _Optional[str] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("request_id", "picks", "crash", "debug")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PICKS_FIELD_NUMBER: _ClassVar[int]
    CRASH_FIELD_NUMBER: _ClassVar[int]
    DEBUG_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    picks: _containers.RepeatedScalarFieldContainer[int]
    crash: str
    debug: bytes
    def __init__(self, request_id: _Optional[int] = ..., picks: _Optional[_Iterable[int]] = ..., crash: _Optional[str] = ..., debug: _Optional[bytes] = ...) -> None: ...

class ArenaMessage(_message.Message):
    __slots__ = ("welcome", "match_start", "request", "match_end", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    match_start: MatchStart
    request: DecisionRequest
    match_end: MatchEnd
    goodbye: Goodbye
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("protocol_version", "bot_name", "arena_time_ms")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    ARENA_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    bot_name: str
    arena_time_ms: int
    def __init__(self, protocol_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., arena_time_ms: _Optional[int] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "game", "seat", "names", "options", "deadline_ms", "time_bank_ms", "max_faults")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: str
    seat: int
    names: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.ScalarMap[str, str]
    deadline_ms: int
    time_bank_ms: int
    max_faults: int
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[str] = ..., seat: _Optional[int] = ..., names: _Optional[_Iterable[str]] = ..., options: _Optional[_Mapping[str, str]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_faults: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "step", "kind", "pick", "choices", "default_picks", "timeout_ms", "sent_time_ms", "view", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PICK_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_PICKS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SENT_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    match_id: str
    step: int
    kind: str
    pick: Pick
    choices: _containers.RepeatedScalarFieldContainer[str]
    default_picks: _containers.RepeatedScalarFieldContainer[int]
    timeout_ms: int
    sent_time_ms: int
    view: _any_pb2.Any
    events: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
    def __init__(self, request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., step: _Optional[int] = ..., kind: _Optional[str] = ..., pick: _Optional[_Union[Pick, str]] = ..., choices: _Optional[_Iterable[str]] = ..., default_picks: _Optional[_Iterable[int]] = ..., timeout_ms: _Optional[int] = ..., sent_time_ms: _Optional[int] = ..., view: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "totals", "places", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    events: _containers.RepeatedCompositeFieldContainer[_any_pb2.Any]
    def __init__(self, match_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., events: _Optional[_Iterable[_Union[_any_pb2.Any, _Mapping]]] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class SeatFaulted(_message.Message):
    __slots__ = ("seat", "kind")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: str
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[str] = ...) -> None: ...

class RoundScored(_message.Message):
    __slots__ = ("round", "points", "totals")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    round: int
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchOver(_message.Message):
    __slots__ = ("totals", "places")
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ...) -> None: ...
