from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class View(_message.Message):
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

class RoundStarted(_message.Message):
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

class Played(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...

class Drew(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Quit(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DrewCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: str
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[str] = ...) -> None: ...
