"""The gRPC arena server: bot sessions, tokens, and the seats that speak to bots over a stream.

Every bot process opens one long-lived ``Arena.Play`` stream and says hello with a token. A token is made by
:meth:`ArenaServer.add_slot` for one seat holder, and works once: a stream with a missing, unknown or reused
token is refused with UNAUTHENTICATED. The authenticated stream becomes the slot's :class:`Connection`:
one reader task resolves per-request futures by id (late answers are dropped), and the referee waits on
those futures with its own deadline, never on a read of the stream (DESIGN.md "Transport").
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc
from grpc import aio

from arena import wire
from arena.games.base import Decision, Event, MatchResult
from arena.referee import FaultKind, MatchInfo, Request, SeatFault
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = logging.getLogger("arena.server")

PROTOCOL_VERSION = 1
HELLO_TIMEOUT = 10.0
"""Seconds a new stream has to send its Hello."""
MAX_MESSAGE_BYTES = 1 << 20
"""Largest message a bot may send (an answer is a few bytes); larger ones fail the bot's stream."""
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", 16 << 20),
    # a decision is never re-sent, and local traffic never goes through a proxy (DESIGN.md)
    ("grpc.enable_retries", 0),
    ("grpc.enable_http_proxy", 0),
    ("grpc.keepalive_permit_without_calls", 1),
]


class ServerError(RuntimeError):
    """The arena server could not start or bind its address."""


class Connection:
    """One authenticated bot stream: an outbox, and the decisions it still owes, by request id."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.outbox: asyncio.Queue[pb.ArenaMessage | None] = asyncio.Queue()
        self.pending: dict[int, asyncio.Future[pb.Answer]] = {}
        self.closed = asyncio.Event()
        self.close_reason = ""
        self._next_id = 0

    def send(self, message: pb.ArenaMessage) -> None:
        """Queue ``message`` for the bot; a closed connection drops it."""
        if not self.closed.is_set():
            self.outbox.put_nowait(message)

    async def ask(self, request: pb.DecisionRequest) -> pb.Answer:
        """Send a decision request and return the bot's answer.

        Raises :class:`SeatFault` (DISCONNECT) when the stream closes first, or (MALFORMED) when the bot
        answers with an id that was never asked. The caller bounds the wait; cancelling it only forgets the
        request, so a late answer is dropped by id.
        """
        if self.closed.is_set():
            raise SeatFault(FaultKind.DISCONNECT, f"not connected ({self.close_reason})")
        self._next_id += 1
        request.request_id = self._next_id
        future: asyncio.Future[pb.Answer] = asyncio.get_running_loop().create_future()
        self.pending[self._next_id] = future
        self.outbox.put_nowait(pb.ArenaMessage(request=request))
        try:
            return await future
        finally:
            self.pending.pop(request.request_id, None)

    def on_answer(self, answer: pb.Answer) -> None:
        """Resolve the request ``answer`` is for; an answer to no pending request is dropped or a fault."""
        future = self.pending.get(answer.request_id)
        if future is not None:
            if not future.done():
                future.set_result(answer)
            return
        if 0 < answer.request_id <= self._next_id:
            return  # a late or repeated answer to a request already settled: dropped by id
        for other in self.pending.values():  # an id never asked: the request in hand is answered wrongly
            if not other.done():
                other.set_exception(SeatFault(
                    FaultKind.MALFORMED, f"answer for request id {answer.request_id}, which was never sent"))

    def close(self, reason: str) -> None:
        """Close the stream: pending requests fail as a disconnect; the writer ends."""
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.closed.set()
        for future in self.pending.values():
            if not future.done():
                future.set_exception(SeatFault(FaultKind.DISCONNECT, f"stream closed: {reason}"))
        self.outbox.put_nowait(None)


@dataclass
class Slot:
    """A seat holder the arena expects: a name, a single-use token, and the stream that used it."""

    name: str
    token: str
    used: bool = False
    connection: Connection | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)
    is_alive: Callable[[], bool] | None = None
    """For a launched bot: whether its process still runs (tells a crash from a disconnect)."""

    @property
    def online(self) -> bool:
        """Return whether a stream is bound and open."""
        return self.connection is not None and not self.connection.closed.is_set()

    def goodbye(self, reason: str) -> None:
        """Tell the bot to stop, then close its stream."""
        if self.connection is not None:
            self.connection.send(pb.ArenaMessage(goodbye=pb.Goodbye(reason=reason)))
            self.connection.close(reason)


class RemoteSeat:
    """A referee seat played by a bot over its slot's stream."""

    def __init__(self, slot: Slot) -> None:
        self.slot = slot
        self.name = slot.name
        self._seat = 0

    def _fault_for_absence(self) -> SeatFault:
        if self.slot.is_alive is not None and not self.slot.is_alive():
            return SeatFault(FaultKind.CRASH, "the bot process has exited")
        reason = self.slot.connection.close_reason if self.slot.connection else "never connected"
        return SeatFault(FaultKind.DISCONNECT, f"not connected ({reason})")

    async def match_started(self, info: MatchInfo) -> None:
        self._seat = info.seat
        if self.slot.online:
            assert self.slot.connection is not None
            self.slot.connection.send(pb.ArenaMessage(match_start=wire.match_start(info)))

    async def decide(self, request: Request) -> Decision:
        connection = self.slot.connection
        if connection is None or connection.closed.is_set():
            raise self._fault_for_absence()
        try:
            answer = await connection.ask(wire.decision_request(request))
        except SeatFault as fault:
            if fault.kind is FaultKind.DISCONNECT:
                raise self._fault_for_absence() from None
            raise
        try:
            return wire.decision_from_picks(request.prompt, answer.picks)
        except wire.WireError as exc:
            raise SeatFault(FaultKind.MALFORMED, str(exc)) from None

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                         result: MatchResult) -> None:
        if self.slot.online:
            assert self.slot.connection is not None
            self.slot.connection.send(pb.ArenaMessage(match_end=wire.match_end(match_id, events, result)))


class _Servicer(pb_grpc.ArenaServicer):  # type: ignore[misc]  # generated code is untyped
    def __init__(self, server: ArenaServer) -> None:
        self._server = server

    async def Play(
        self,
        request_iterator: AsyncIterator[pb.BotMessage],
        context: aio.ServicerContext[pb.BotMessage, pb.ArenaMessage],
    ) -> AsyncIterator[pb.ArenaMessage]:
        peer = context.peer()
        try:
            first = await asyncio.wait_for(anext(request_iterator), HELLO_TIMEOUT)
        except (TimeoutError, StopAsyncIteration):
            log.warning("refused %s: no hello within %.0f s", peer, HELLO_TIMEOUT)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the first message must be a hello")
        if first.WhichOneof("body") != "hello":
            log.warning("refused %s: first message is not a hello", peer)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the first message must be a hello")
        slot = self._server.claim(first.hello.token)
        if slot is None:
            log.warning("refused %s: missing, unknown or reused token", peer)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing, unknown or already used token")
            return
        if first.hello.protocol_version not in (0, PROTOCOL_VERSION):
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"protocol version {first.hello.protocol_version} is not spoken here; "
                                f"this arena speaks {PROTOCOL_VERSION}")
        connection = Connection(slot)
        slot.connection = connection
        slot.connected.set()
        log.info("%s connected from %s (%s)", slot.name, peer, first.hello.agent or "no agent given")
        reader = asyncio.create_task(self._read(request_iterator, connection))
        try:
            yield pb.ArenaMessage(welcome=pb.Welcome(protocol_version=PROTOCOL_VERSION, bot_name=slot.name))
            while True:
                message = await connection.outbox.get()
                if message is None:
                    break
                yield message
        finally:
            reader.cancel()
            connection.close("stream ended")
            log.info("%s disconnected: %s", slot.name, connection.close_reason)

    async def _read(self, request_iterator: AsyncIterator[pb.BotMessage], connection: Connection) -> None:
        try:
            async for message in request_iterator:
                if message.WhichOneof("body") == "answer":
                    connection.on_answer(message.answer)
                # a second hello or an empty message is ignored: it answers nothing
            connection.close("the bot closed its stream")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the transport failed: the bot is gone
            connection.close(f"{type(exc).__name__}: {exc}")


class ArenaServer:
    """The gRPC server that bots connect to, with its slots (one per expected bot stream)."""

    def __init__(self) -> None:
        self._slots: dict[str, Slot] = {}
        self._server: aio.Server | None = None
        self.address = ""

    def add_slot(self, name: str, token: str | None = None) -> Slot:
        """Return a new slot for a bot called ``name``, with a fresh random token unless one is given."""
        token = token or secrets.token_urlsafe(24)
        if token in self._slots:
            raise ServerError(f"token for {name!r} is already in use by {self._slots[token].name!r}")
        slot = Slot(name, token)
        self._slots[token] = slot
        return slot

    def claim(self, token: str) -> Slot | None:
        """Return the slot of ``token`` and mark it used, or ``None`` if the token is unknown or used."""
        slot = self._slots.get(token) if token else None
        if slot is None or slot.used:
            return None
        slot.used = True
        return slot

    def remove_slot(self, slot: Slot) -> None:
        """Forget ``slot`` (its token stops working) and close its stream."""
        self._slots.pop(slot.token, None)
        slot.goodbye("the arena no longer needs this seat")

    async def start(self, address: str) -> str:
        """Start serving on ``address`` (``unix:PATH`` or ``HOST:PORT``, port 0 picks one); return the address.

        Raises :class:`ServerError` when the address cannot be bound.
        """
        server = aio.server(options=CHANNEL_OPTIONS)
        pb_grpc.add_ArenaServicer_to_server(_Servicer(self), server)
        try:
            port = server.add_insecure_port(address)
        except RuntimeError as exc:
            raise ServerError(f"cannot listen on {address!r}: {exc}") from None
        if port == 0 and not address.startswith("unix:"):
            raise ServerError(f"cannot listen on {address!r}: the address is in use or not valid")
        await server.start()
        self._server = server
        if not address.startswith("unix:") and address.rsplit(":", 1)[-1] == "0":
            address = f"{address.rsplit(':', 1)[0]}:{port}"
        self.address = address
        return address

    async def stop(self, grace: float = 1.0) -> None:
        """Say goodbye to every bot and stop serving."""
        for slot in list(self._slots.values()):
            slot.goodbye("the arena is shutting down")
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
