from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class View(_message.Message):
    __slots__ = ("seat", "round", "trick", "prize", "pot", "hand", "to_come", "bids", "totals")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    PRIZE_FIELD_NUMBER: _ClassVar[int]
    POT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TO_COME_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    round: int
    trick: int
    prize: str
    pot: int
    hand: _containers.RepeatedScalarFieldContainer[str]
    to_come: _containers.RepeatedScalarFieldContainer[str]
    bids: _containers.RepeatedScalarFieldContainer[str]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., round: _Optional[int] = ..., trick: _Optional[int] = ..., prize: _Optional[str] = ..., pot: _Optional[int] = ..., hand: _Optional[_Iterable[str]] = ..., to_come: _Optional[_Iterable[str]] = ..., bids: _Optional[_Iterable[str]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("round", "cards")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    round: int
    cards: int
    def __init__(self, round: _Optional[int] = ..., cards: _Optional[int] = ...) -> None: ...

class PrizeTurned(_message.Message):
    __slots__ = ("trick", "prize", "pot")
    TRICK_FIELD_NUMBER: _ClassVar[int]
    PRIZE_FIELD_NUMBER: _ClassVar[int]
    POT_FIELD_NUMBER: _ClassVar[int]
    trick: int
    prize: str
    pot: int
    def __init__(self, trick: _Optional[int] = ..., prize: _Optional[str] = ..., pot: _Optional[int] = ...) -> None: ...

class BidsRevealed(_message.Message):
    __slots__ = ("trick", "bids", "winner", "won")
    TRICK_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    WON_FIELD_NUMBER: _ClassVar[int]
    trick: int
    bids: _containers.RepeatedScalarFieldContainer[str]
    winner: int
    won: int
    def __init__(self, trick: _Optional[int] = ..., bids: _Optional[_Iterable[str]] = ..., winner: _Optional[int] = ..., won: _Optional[int] = ...) -> None: ...
