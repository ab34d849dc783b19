"""A game's messages on the wire: what a game's ``codec`` module gives the game-neutral protocol.

A game's folder has its own ``.proto`` (its view, its events) and a ``codec`` module whose ``CODEC`` is a
:class:`GameCodec`: a mapping from the game's values to its generated messages and back. The protocol
(:mod:`arena.protocol.codec`) packs them in ``google.protobuf.Any``; the events every game shares
(:class:`~arena.games.base.RoundScored`, :class:`~arena.games.base.MatchOver`) are the envelope's own.

Decoding is the bot's side: a message from the network is checked here, so a bad one raises
:class:`CodecError` and never reaches the rules unchecked. Pure: no I/O, nothing of arena but the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message

from arena.games.base import Action, DecisionKind, Event, GameError, View

TYPE_URL_PREFIX = "type.googleapis.com/"
"""What every ``google.protobuf.Any`` type URL starts with, before the message's full name."""

E = TypeVar("E", bound=Event)


class CodecError(GameError):
    """A message that does not describe a valid value of the game."""


def type_url(message: type[Message]) -> str:
    """Return the ``google.protobuf.Any`` type URL of ``message``'s type."""
    return TYPE_URL_PREFIX + message.DESCRIPTOR.full_name


@dataclass(frozen=True)
class EventCodec(Generic[E]):
    """How one of a game's event types travels: its message type and the conversions both ways."""

    event: type[E]
    message: type[Message]
    encode: Callable[[E], Message]
    decode: Callable[[Any], E]


class GameCodec:
    """A game's wire forms: its view message, its events and its actions by text, per decision kind."""

    def __init__(self, *, game: str, view: type[Message], encode_view: Callable[[Any], Message],
                 decode_view: Callable[[Any], View], events: Sequence[EventCodec[Any]],
                 actions: Mapping[DecisionKind, Iterable[Action]]) -> None:
        self.game = game
        self.view_message = view
        self.view_url = type_url(view)
        self._encode_view = encode_view
        self._decode_view = decode_view
        self._by_event = {codec.event: codec for codec in events}
        self.events_by_url: dict[str, EventCodec[Any]] = {type_url(codec.message): codec for codec in events}
        self._actions = {kind: {a.text: a for a in acts} for kind, acts in actions.items()}

    @property
    def kinds(self) -> tuple[DecisionKind, ...]:
        """Return the decision kinds whose actions this codec knows."""
        return tuple(self._actions)

    def encode_view(self, view: View) -> Message:
        """Return the message of ``view``."""
        return self._encode_view(view)

    def decode_view(self, message: Message) -> View:
        """Return the view ``message`` holds. Raises :class:`CodecError`."""
        try:
            return self._decode_view(message)
        except (GameError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise CodecError(f"bad {self.game} view: {exc}") from None

    def encode_event(self, event: Event) -> Message | None:
        """Return the message of one of the game's own events, ``None`` for an event that is not the game's."""
        codec = self._by_event.get(type(event))
        return None if codec is None else codec.encode(event)

    def decode_event(self, url: str, data: bytes) -> Event | None:
        """Return the event of the game's own type ``url`` serialized as ``data``, ``None`` for a type that is
        not the game's. Raises :class:`CodecError` for a message that does not parse or describe an event."""
        codec = self.events_by_url.get(url)
        if codec is None:
            return None
        try:
            event: Event = codec.decode(codec.message.FromString(data))
        except Exception as exc:  # a DecodeError, or a value the rules refuse: never past this point
            raise CodecError(f"bad {self.game} event {codec.message.DESCRIPTOR.name}: {exc}") from None
        return event

    def actions(self, kind: DecisionKind) -> Mapping[str, Action]:
        """Return every action of decision ``kind`` by its text form. Raises :class:`CodecError` for a kind the
        game does not have."""
        try:
            return self._actions[kind]
        except KeyError:
            raise CodecError(f"{self.game} has no decision kind {kind!r}; its kinds are "
                             f"{', '.join(self._actions)}") from None


def option_texts(options: Mapping[str, Any]) -> dict[str, str]:
    """Return match options (a game's ``Options.to_json()``) as the wire carries them: each value in text, a
    list's items joined by commas, an unset (``None``) option left out. A game's ``options()`` reads them back."""
    texts = {}
    for name, value in options.items():
        if value is None:
            continue
        if isinstance(value, bool):
            texts[name] = "true" if value else "false"
        elif isinstance(value, list | tuple):
            texts[name] = ",".join(map(str, value))
        else:
            texts[name] = str(value)
    return texts
