from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Game(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_UNSPECIFIED: _ClassVar[Game]
    GAME_CABANGA: _ClassVar[Game]
    GAME_LAMA: _ClassVar[Game]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_THROW: _ClassVar[DecisionKind]
    DECISION_KIND_TURN: _ClassVar[DecisionKind]

class Pick(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PICK_UNSPECIFIED: _ClassVar[Pick]
    PICK_ONE: _ClassVar[Pick]
    PICK_SUBSET: _ClassVar[Pick]
GAME_UNSPECIFIED: Game
GAME_CABANGA: Game
GAME_LAMA: Game
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_THROW: DecisionKind
DECISION_KIND_TURN: DecisionKind
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
    __slots__ = ("request_id", "picks", "crash")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PICKS_FIELD_NUMBER: _ClassVar[int]
    CRASH_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    picks: _containers.RepeatedScalarFieldContainer[int]
    crash: str
    def __init__(self, request_id: _Optional[int] = ..., picks: _Optional[_Iterable[int]] = ..., crash: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("match_id", "game", "seat", "names", "target", "rounds", "symbols", "deadline_ms", "time_bank_ms", "max_faults", "climb")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    SYMBOLS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    CLIMB_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    game: Game
    seat: int
    names: _containers.RepeatedScalarFieldContainer[str]
    target: int
    rounds: int
    symbols: _containers.RepeatedScalarFieldContainer[int]
    deadline_ms: int
    time_bank_ms: int
    max_faults: int
    climb: str
    def __init__(self, match_id: _Optional[str] = ..., game: _Optional[_Union[Game, str]] = ..., seat: _Optional[int] = ..., names: _Optional[_Iterable[str]] = ..., target: _Optional[int] = ..., rounds: _Optional[int] = ..., symbols: _Optional[_Iterable[int]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_faults: _Optional[int] = ..., climb: _Optional[str] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "match_id", "step", "kind", "pick", "choices", "default_picks", "timeout_ms", "sent_time_ms", "cabanga", "lama", "events")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PICK_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_PICKS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SENT_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    CABANGA_FIELD_NUMBER: _ClassVar[int]
    LAMA_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    match_id: str
    step: int
    kind: DecisionKind
    pick: Pick
    choices: _containers.RepeatedScalarFieldContainer[str]
    default_picks: _containers.RepeatedScalarFieldContainer[int]
    timeout_ms: int
    sent_time_ms: int
    cabanga: CabangaView
    lama: LamaView
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., step: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., pick: _Optional[_Union[Pick, str]] = ..., choices: _Optional[_Iterable[str]] = ..., default_picks: _Optional[_Iterable[int]] = ..., timeout_ms: _Optional[int] = ..., sent_time_ms: _Optional[int] = ..., cabanga: _Optional[_Union[CabangaView, _Mapping]] = ..., lama: _Optional[_Union[LamaView, _Mapping]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("match_id", "totals", "places", "events")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, match_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class CabangaView(_message.Message):
    __slots__ = ("seat", "round", "active", "step", "hand", "tops", "previous_colour", "throw_row", "throw_tops", "hand_sizes", "penalty_size", "set_aside_size", "totals")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOPS_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_COLOUR_FIELD_NUMBER: _ClassVar[int]
    THROW_ROW_FIELD_NUMBER: _ClassVar[int]
    THROW_TOPS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    PENALTY_SIZE_FIELD_NUMBER: _ClassVar[int]
    SET_ASIDE_SIZE_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    active: int
    step: DecisionKind
    hand: _containers.RepeatedScalarFieldContainer[str]
    tops: _containers.RepeatedScalarFieldContainer[str]
    previous_colour: str
    throw_row: str
    throw_tops: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    penalty_size: int
    set_aside_size: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., active: _Optional[int] = ..., step: _Optional[_Union[DecisionKind, str]] = ..., hand: _Optional[_Iterable[str]] = ..., tops: _Optional[_Iterable[str]] = ..., previous_colour: _Optional[str] = ..., throw_row: _Optional[str] = ..., throw_tops: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., penalty_size: _Optional[int] = ..., set_aside_size: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class LamaView(_message.Message):
    __slots__ = ("seat", "round", "active", "hand", "discard", "discard_size", "draw_size", "hand_sizes", "in_round", "totals")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DISCARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    DRAW_SIZE_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    IN_ROUND_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    active: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    discard: str
    discard_size: int
    draw_size: int
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    in_round: _containers.RepeatedScalarFieldContainer[bool]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., active: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., discard: _Optional[str] = ..., discard_size: _Optional[int] = ..., draw_size: _Optional[int] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., in_round: _Optional[_Iterable[bool]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("cabanga_round_started", "cabanga_played", "cabanga_threw", "cabanga_reshuffled", "cabanga_drew", "cabanga_throws_closed", "cabanga_penalty_cards", "lama_round_started", "lama_played", "lama_drew", "lama_quit", "lama_drew_card", "round_scored", "match_over", "seat_faulted")
    CABANGA_ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    CABANGA_PLAYED_FIELD_NUMBER: _ClassVar[int]
    CABANGA_THREW_FIELD_NUMBER: _ClassVar[int]
    CABANGA_RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    CABANGA_DREW_FIELD_NUMBER: _ClassVar[int]
    CABANGA_THROWS_CLOSED_FIELD_NUMBER: _ClassVar[int]
    CABANGA_PENALTY_CARDS_FIELD_NUMBER: _ClassVar[int]
    LAMA_ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    LAMA_PLAYED_FIELD_NUMBER: _ClassVar[int]
    LAMA_DREW_FIELD_NUMBER: _ClassVar[int]
    LAMA_QUIT_FIELD_NUMBER: _ClassVar[int]
    LAMA_DREW_CARD_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORED_FIELD_NUMBER: _ClassVar[int]
    MATCH_OVER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FAULTED_FIELD_NUMBER: _ClassVar[int]
    cabanga_round_started: CabangaRoundStarted
    cabanga_played: CabangaPlayed
    cabanga_threw: CabangaThrew
    cabanga_reshuffled: CabangaReshuffled
    cabanga_drew: CabangaDrew
    cabanga_throws_closed: CabangaThrowsClosed
    cabanga_penalty_cards: CabangaPenaltyCards
    lama_round_started: LamaRoundStarted
    lama_played: LamaPlayed
    lama_drew: LamaDrew
    lama_quit: LamaQuit
    lama_drew_card: LamaDrewCard
    round_scored: RoundScored
    match_over: MatchOver
    seat_faulted: SeatFaulted
    def __init__(self, cabanga_round_started: _Optional[_Union[CabangaRoundStarted, _Mapping]] = ..., cabanga_played: _Optional[_Union[CabangaPlayed, _Mapping]] = ..., cabanga_threw: _Optional[_Union[CabangaThrew, _Mapping]] = ..., cabanga_reshuffled: _Optional[_Union[CabangaReshuffled, _Mapping]] = ..., cabanga_drew: _Optional[_Union[CabangaDrew, _Mapping]] = ..., cabanga_throws_closed: _Optional[_Union[CabangaThrowsClosed, _Mapping]] = ..., cabanga_penalty_cards: _Optional[_Union[CabangaPenaltyCards, _Mapping]] = ..., lama_round_started: _Optional[_Union[LamaRoundStarted, _Mapping]] = ..., lama_played: _Optional[_Union[LamaPlayed, _Mapping]] = ..., lama_drew: _Optional[_Union[LamaDrew, _Mapping]] = ..., lama_quit: _Optional[_Union[LamaQuit, _Mapping]] = ..., lama_drew_card: _Optional[_Union[LamaDrewCard, _Mapping]] = ..., round_scored: _Optional[_Union[RoundScored, _Mapping]] = ..., match_over: _Optional[_Union[MatchOver, _Mapping]] = ..., seat_faulted: _Optional[_Union[SeatFaulted, _Mapping]] = ...) -> None: ...

class CabangaRoundStarted(_message.Message):
    __slots__ = ("round", "starter", "tops", "hand_size")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    TOPS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    round: int
    starter: int
    tops: _containers.RepeatedScalarFieldContainer[str]
    hand_size: int
    def __init__(self, round: _Optional[int] = ..., starter: _Optional[int] = ..., tops: _Optional[_Iterable[str]] = ..., hand_size: _Optional[int] = ...) -> None: ...

class CabangaPlayed(_message.Message):
    __slots__ = ("seat", "card", "side", "penalty", "row_tops")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    PENALTY_FIELD_NUMBER: _ClassVar[int]
    ROW_TOPS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    side: str
    penalty: bool
    row_tops: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ..., side: _Optional[str] = ..., penalty: _Optional[bool] = ..., row_tops: _Optional[_Iterable[str]] = ...) -> None: ...

class CabangaThrew(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class CabangaReshuffled(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class CabangaDrew(_message.Message):
    __slots__ = ("seat", "count", "owed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    OWED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    owed: int
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., owed: _Optional[int] = ...) -> None: ...

class CabangaThrowsClosed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CabangaPenaltyCards(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class LamaRoundStarted(_message.Message):
    __slots__ = ("round", "starter", "discard", "hand_size")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    STARTER_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    round: int
    starter: int
    discard: str
    hand_size: int
    def __init__(self, round: _Optional[int] = ..., starter: _Optional[int] = ..., discard: _Optional[str] = ..., hand_size: _Optional[int] = ...) -> None: ...

class LamaPlayed(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class LamaDrew(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class LamaQuit(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class LamaDrewCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

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
