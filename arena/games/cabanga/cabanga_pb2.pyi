from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class View(_message.Message):
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
    step: str
    hand: _containers.RepeatedScalarFieldContainer[str]
    tops: _containers.RepeatedScalarFieldContainer[str]
    previous_colour: str
    throw_row: str
    throw_tops: _containers.RepeatedScalarFieldContainer[str]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    penalty_size: int
    set_aside_size: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., active: _Optional[int] = ..., step: _Optional[str] = ..., hand: _Optional[_Iterable[str]] = ..., tops: _Optional[_Iterable[str]] = ..., previous_colour: _Optional[str] = ..., throw_row: _Optional[str] = ..., throw_tops: _Optional[_Iterable[str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., penalty_size: _Optional[int] = ..., set_aside_size: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class RoundStarted(_message.Message):
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

class Played(_message.Message):
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

class Threw(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...

class Reshuffled(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class Drew(_message.Message):
    __slots__ = ("seat", "count", "owed")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    OWED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    count: int
    owed: int
    def __init__(self, seat: _Optional[int] = ..., count: _Optional[int] = ..., owed: _Optional[int] = ...) -> None: ...

class ThrowsClosed(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class PenaltyCards(_message.Message):
    __slots__ = ("seat", "cards")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[str]] = ...) -> None: ...
