"""The gRPC arena server: bot sessions, tokens, and the seats that speak to bots over a stream.

Every bot process opens one long-lived ``Arena.Play`` stream and says hello with a token. A token is made by
:meth:`ArenaServer.add_slot` for one seat holder, and works once: a stream with a missing, unknown or reused
token is refused with UNAUTHENTICATED, and the refusal is logged. The authenticated stream becomes the slot's
:class:`Connection`: one reader task resolves per-request futures by id (late answers are dropped), and the
referee waits on those futures with its own deadline, never on a read of the stream (DESIGN.md "Transport").

What a bot sends is bounded: a message is at most :data:`MAX_MESSAGE_BYTES` (gRPC refuses a larger one before
reading it), and a stream may send at most one message per request it was sent plus :data:`MESSAGE_BURST`; a
bot that floods, or sends bytes that do not parse, loses its stream, which costs it faults, not the arena
memory. Streams waiting for their hello are few and short-lived.

Every bot the arena launches has a server of its own (:meth:`ArenaServer.private`), on a Unix socket that only
its jail holds: its waiting room, its connections (at most :data:`PRIVATE_CONNECTIONS`) and its refusals are its
own, so a bot that floods can only keep itself out. Unix sockets are served by the arena's own HTTP/2 server on
the event loop (:mod:`arena.protocol.http2`: less than half grpc.aio's CPU a message), TCP addresses by gRPC's
(``unix_transport="grpc"``, or ``ARENA_UNIX_TRANSPORT=grpc`` in the environment, serves Unix sockets by gRPC's
too). The shared server, for remote bots (``--listen``), bounds
its waiting room per peer host (:data:`PEER_WAITING_STREAMS`) and its connections. Refusals are logged at most
:data:`REFUSAL_LOG_BURST` lines per :data:`REFUSAL_LOG_WINDOW` seconds per server; the rest are counted.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import secrets
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol

from arena.protocol import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import grpc
from google.protobuf.message import DecodeError
from grpc import aio

from arena.core.referee import FaultKind, SeatFault
from arena.protocol import codec, http2
from arena.text import visible
from arena.v2 import arena_pb2 as pb

log = logging.getLogger("arena.protocol.server")

PROTOCOL_VERSION = codec.PROTOCOL_VERSION
HELLO_TIMEOUT = 5.0
"""Seconds a new stream has to send its Hello."""
MAX_MESSAGE_BYTES = 64 << 10
"""Largest message a bot may send (an answer is a few bytes); gRPC fails the stream of a larger one unread."""
MESSAGE_BURST = 16
"""Messages a stream may send beyond one per request it was sent (late answers, a second hello...)."""
MAX_WAITING_STREAMS = 64
"""Streams that may wait for their hello at once on the shared server; more are refused (RESOURCE_EXHAUSTED)."""
PEER_WAITING_STREAMS = 8
"""Streams from one peer host that may wait for their hello at once on the shared server."""
MAX_CONNECTIONS = 256
"""Connections the shared server keeps at once (each costs the arena a file descriptor)."""
PRIVATE_WAITING_STREAMS = 4
"""Streams that may wait for their hello at once on a launched bot's own server."""
PRIVATE_CONNECTIONS = 8
"""Connections a launched bot's own server keeps at once (a bot needs one)."""
HANDSHAKE_TIMEOUT_MS = 5000
"""Milliseconds a new connection has to complete its HTTP/2 handshake."""
IDLE_CONNECTION_MS = 10_000
"""Milliseconds a connection without a stream is kept (a bot's connection always holds its stream)."""
REFUSAL_LOG_BURST = 5
REFUSAL_LOG_WINDOW = 60.0
GOODBYE_GRACE = 1.0
"""Seconds a stream stays open after its goodbye was written, for the bot to read it and close its side: a server
that stops next would otherwise close the connection under a goodbye not yet read (the bot would see its stream
fail, not the goodbye)."""
INLINE_WRITE_MIN_TIMEOUT = 0.05
"""Shortest deadline (seconds) for which the asking task writes its request itself. A write takes a fraction of
a millisecond; a shorter deadline could cancel a healthy write, which would cost the bot its stream."""
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", 16 << 20),
    # a bot needs one stream; a few more per connection allow a reconnect, not a flood of streams
    ("grpc.max_concurrent_streams", 4),
    # a decision is never re-sent, and local traffic never goes through a proxy (DESIGN.md)
    ("grpc.enable_retries", 0),
    ("grpc.enable_http_proxy", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    # a port in use is an error, never silently shared with another server
    ("grpc.so_reuseport", 0),
    ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
    ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS),
]


UNIX_TRANSPORTS = ("http2", "grpc")
UNIX_TRANSPORT = os.environ.get("ARENA_UNIX_TRANSPORT", "http2")
"""What serves Unix sockets: the arena's own HTTP/2 server (``http2``, the default) or gRPC's (``grpc``)."""


class ServerError(RuntimeError):
    """The arena server could not start or bind its address."""


Outgoing = pb.ArenaMessage | bytes
"""A message to a bot: a message, or a decision request serialized already (:func:`codec.request_bytes`)."""


class Connection:
    """One authenticated bot stream: its writer, and the decisions it still owes, by request id.

    Messages are written in order, one at a time (gRPC allows one write in flight per stream). A decision
    request is written by the task that asks, with no hop through a writer task, unless a write is already
    in flight (then the writing task sends it next) or the caller's deadline is too short to wait for a
    write (:data:`INLINE_WRITE_MIN_TIMEOUT`). A write that is cancelled before it completes (the seat's time
    ran out while the bot was not reading its stream) leaves the stream unusable, so the connection closes.
    """

    def __init__(self, slot: Slot, write: Callable[[Outgoing], Awaitable[None]]) -> None:
        self.slot = slot
        # kept: in Python 3.11 every asyncio.get_running_loop() is a getpid() system call
        self._loop = asyncio.get_running_loop()
        self._write = write
        self._backlog: collections.deque[Outgoing] = collections.deque()
        self._writing = False
        self._writer: asyncio.Task[None] | None = None
        self.flushed = asyncio.Event()
        """Set once the connection is closed and nothing more will be written: the stream may end."""
        self.pending: dict[int, asyncio.Future[pb.Answer]] = {}
        self.overdue: set[int] = set()
        """Requests whose time ran out with no answer yet: a bot that owes some is stuck or spinning."""
        self.closed = asyncio.Event()
        self.close_reason = ""
        self.closed_at = 0.0
        self.close_kind = FaultKind.DISCONNECT
        """What the closing costs the bot: a disconnect, or (closed for garbage or a flood) a malformed answer."""
        self.said_goodbye = False
        """The arena closed the stream with a goodbye (the bot should close its side next)."""
        self.status: grpc.StatusCode | None = None
        """The status the stream ends with, when the arena ends it for the bot's misconduct."""
        self.credit = MESSAGE_BURST
        self._next_id = 0

    def send(self, message: Outgoing) -> None:
        """Send ``message`` to the bot after those before it, without waiting; a closed connection drops it."""
        if self.closed.is_set():
            return
        if self._writing:
            self._backlog.append(message)
        else:
            self._writing = True
            self._writer = self._loop.create_task(self._drain(message))

    def stop_writing(self) -> None:
        """Cancel a write still in flight (the stream is ending)."""
        if self._writer is not None:
            self._writer.cancel()

    async def _drain(self, message: Outgoing) -> None:
        """Write ``message`` and then the backlog, until it is empty. Call with ``_writing`` set."""
        try:
            while True:
                await self._write(message)
                if not self._backlog:
                    return
                message = self._backlog.popleft()
        except asyncio.CancelledError:
            self.close("a write to the bot did not complete in time (it does not read its stream)")
            raise
        except Exception as exc:  # the stream is gone
            self.close(f"cannot write to the bot: {type(exc).__name__}: {exc}")
        finally:
            self._writing = False
            self._backlog.clear()
            if self.closed.is_set():
                self.flushed.set()

    async def ask(self, request: bytes | pb.DecisionRequest, timeout: float | None = None) -> pb.Answer:
        """Send a decision request and return the bot's answer.

        ``request`` is a DecisionRequest, or an ArenaMessage holding one serialized without its id and send
        time (:func:`codec.request_bytes`); the connection numbers it and stamps it with the arena's clock.

        Raises :class:`SeatFault` when the stream closes first (DISCONNECT, or MALFORMED when the arena
        closed it for garbage or a flood), or (MALFORMED) when the bot answers with an id that was never
        asked. The caller bounds the wait (``timeout`` says by how much, when it is known); cancelling it
        only forgets the request, so a late answer is dropped by id.
        """
        if self.closed.is_set():
            raise SeatFault(FaultKind.DISCONNECT, f"not connected ({self.close_reason})")
        body = request if isinstance(request, bytes) else pb.ArenaMessage(request=request).SerializeToString()
        self._next_id += 1
        request_id = self._next_id
        message = body + codec.request_stamp(request_id, time.time_ns() // 1_000_000)
        future: asyncio.Future[pb.Answer] = self._loop.create_future()
        self.pending[request_id] = future
        self.credit = min(self.credit + 1, MESSAGE_BURST + 1)
        try:
            if self._writing or (timeout is not None and timeout < INLINE_WRITE_MIN_TIMEOUT):
                self.send(message)  # after the write in flight, or by a task the caller's deadline cannot cancel
            else:
                self._writing = True
                await self._drain(message)
            return await future
        except asyncio.CancelledError:  # the seat's time ran out (the future was cancelled with the wait)
            if future.cancelled() or not future.done():
                self.overdue.add(request_id)
            raise
        finally:
            self.pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # seen: a write cancelled mid-way closes the stream, failing this future

    def on_message(self, message: pb.BotMessage) -> None:
        """Take one message from the bot: an answer resolves its request; too many messages close the stream."""
        self.credit -= 1
        if self.credit < 0:
            self.close("flood: more messages than requests", FaultKind.MALFORMED,
                       grpc.StatusCode.RESOURCE_EXHAUSTED)
            return
        if message.WhichOneof("body") == "answer":
            self.on_answer(message.answer)
        # a second hello or an empty message answers nothing; it only spends credit

    def on_answer(self, answer: pb.Answer) -> None:
        """Resolve the request ``answer`` is for; an answer to no pending request is dropped or a fault."""
        future = self.pending.get(answer.request_id)
        if future is not None:
            if not future.done():
                future.set_result(answer)
            return
        if 0 < answer.request_id <= self._next_id:
            self.overdue.discard(answer.request_id)
            return  # a late or repeated answer to a request already settled: dropped by id
        for other in self.pending.values():  # an id never asked: the request in hand is answered wrongly
            if not other.done():
                other.set_exception(SeatFault(
                    FaultKind.MALFORMED, f"answer for request id {answer.request_id}, which was never sent"))

    def close(self, reason: str, kind: FaultKind = FaultKind.DISCONNECT,
              status: grpc.StatusCode | None = None) -> None:
        """Close the stream: pending requests fail with a fault of ``kind``; the writer ends.

        ``status`` is the error the bot's stream ends with (none: the stream ends normally).
        """
        if self.closed.is_set():
            return
        self.close_reason = reason
        self.close_kind = kind
        self.status = status
        self.closed.set()
        self.closed_at = asyncio.get_running_loop().time()
        for future in self.pending.values():
            if not future.done():
                future.set_exception(SeatFault(kind, f"stream closed: {reason}"))
        if not self._writing:
            self.flushed.set()


@dataclass
class Slot:
    """A seat holder the arena expects: a name, a single-use token, and the stream that used it."""

    name: str
    token: str
    used: bool = False
    connection: Connection | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def online(self) -> bool:
        """Return whether a stream is bound and open."""
        return self.connection is not None and not self.connection.closed.is_set()

    @property
    def owes_answers(self) -> bool:
        """Return whether the bot left requests unanswered past their deadline (it may be stuck)."""
        return self.connection is not None and bool(self.connection.overdue)

    def goodbye(self, reason: str) -> None:
        """Tell the bot to stop, then close its stream."""
        if self.connection is not None and not self.connection.closed.is_set():
            self.connection.send(pb.ArenaMessage(goodbye=pb.Goodbye(reason=reason)))
            self.connection.said_goodbye = True
            self.connection.close(reason)


def _serialize(message: Outgoing) -> bytes:
    """Serialize a message to a bot; a decision request comes serialized already (:func:`codec.request_bytes`)."""
    return message if isinstance(message, bytes) else message.SerializeToString()


_EOF: object = aio.EOF  # type: ignore[attr-defined]  # not in the stubs: what a read returns at the stream's end


class StreamContext(Protocol):
    """What the servicer uses of a call: gRPC's ``aio.ServicerContext``, or :class:`arena.protocol.http2.Call`."""

    def peer(self) -> str: ...

    async def read(self) -> Any: ...

    async def write(self, message: Outgoing) -> None: ...

    async def abort(self, code: grpc.StatusCode, details: str) -> NoReturn: ...


class RefusalLog:
    """Logs refused streams at a bounded rate: ``burst`` lines per ``window`` seconds, then a count of the rest."""

    def __init__(self, burst: int = REFUSAL_LOG_BURST, window: float = REFUSAL_LOG_WINDOW) -> None:
        self.burst = burst
        self.window = window
        self._since = -window
        self._lines = 0
        self.suppressed = 0
        self.total = 0

    def __call__(self, message: str, *args: object) -> None:
        self.total += 1
        now = time.monotonic()
        if now - self._since >= self.window:
            if self.suppressed:
                log.warning("%d more refusals were not logged in the last %.0f s", self.suppressed, self.window)
            self._since, self._lines, self.suppressed = now, 0, 0
        if self._lines < self.burst:
            self._lines += 1
            log.warning(message, *args)
        else:
            self.suppressed += 1


def peer_host(peer: str) -> str:
    """Return the host part of a gRPC peer (``ipv4:1.2.3.4:5`` gives ``1.2.3.4``; ``unix:`` peers are one host)."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0]
    return kind


class _Servicer:
    def __init__(self, server: ArenaServer) -> None:
        self._server = server
        self._waiting = 0
        self._waiting_by_peer: collections.Counter[str] = collections.Counter()

    async def _hello(self, request_iterator: AsyncIterator[pb.BotMessage], context: StreamContext) -> Slot:
        """Return the slot a new stream's hello claims; abort the stream (and log why) when there is none."""
        peer = context.peer()
        host = peer_host(peer)
        refused = self._server.refusals
        if self._waiting >= self._server.max_waiting:
            refused("refused %s: %d streams are already waiting for their hello", peer, self._waiting)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams waiting for a hello")
        if self._waiting_by_peer[host] >= self._server.peer_waiting:
            refused("refused %s: %d streams from %s are already waiting for their hello", peer,
                    self._waiting_by_peer[host], host)
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too many streams waiting for a hello")
        self._waiting += 1
        self._waiting_by_peer[host] += 1
        try:
            first = await asyncio.wait_for(anext(request_iterator), HELLO_TIMEOUT)
        except (TimeoutError, StopAsyncIteration, DecodeError, grpc.RpcError) as exc:
            refused("refused %s: no hello within %.0f s (%s)", peer, HELLO_TIMEOUT, type(exc).__name__)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the first message must be a hello")
        finally:
            self._waiting -= 1
            self._waiting_by_peer[host] -= 1
            if not self._waiting_by_peer[host]:
                del self._waiting_by_peer[host]
        if first.WhichOneof("body") != "hello":
            refused("refused %s: the first message is not a hello", peer)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the first message must be a hello")
        slot, why = self._server.claim(first.hello.token)
        if slot is None:
            refused("refused %s (%r): %s", peer, first.hello.agent[:80], why)  # %r escapes it, as visible() does
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing, unknown or already used token")
        assert slot is not None
        if first.hello.protocol_version not in (0, PROTOCOL_VERSION):
            refused("refused %s for %s: protocol version %d", peer, slot.name, first.hello.protocol_version)
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"protocol version {first.hello.protocol_version} is not spoken here; "
                                f"this arena speaks {PROTOCOL_VERSION}")
        log.info("%s connected from %s (%s)", slot.name, peer, visible(first.hello.agent[:80]) or "no agent given")
        return slot

    async def Play(self, request_iterator: AsyncIterator[pb.BotMessage], context: StreamContext) -> None:
        slot = await self._hello(request_iterator, context)
        connection = Connection(slot, context.write)
        connection.send(pb.ArenaMessage(welcome=pb.Welcome(protocol_version=PROTOCOL_VERSION, bot_name=slot.name,
                                                           arena_time_ms=time.time_ns() // 1_000_000)))
        slot.connection = connection
        slot.connected.set()
        reader = asyncio.create_task(self._read(context, connection))
        try:
            await connection.flushed.wait()  # the connection is closed and has written its last message
            if connection.said_goodbye and not reader.done():  # until the bot closes its side, briefly
                await asyncio.wait((reader,), timeout=self._server.goodbye_grace)
        finally:
            reader.cancel()
            connection.close("stream ended")
            connection.stop_writing()
            log.info("%s disconnected: %s", slot.name, connection.close_reason)
        if connection.status is not None:
            await context.abort(connection.status, connection.close_reason)

    async def _read(self, context: StreamContext, connection: Connection) -> None:
        # the stream's reads awaited here, not through its request iterator (an async generator around them):
        # every answer passes here
        read = context.read
        end = http2.EOF if isinstance(context, http2.Call) else _EOF
        try:
            while (message := await read()) is not end:
                connection.on_message(message)
                if connection.closed.is_set():
                    return
            connection.close(f"the stream ended (the bot closed it, or sent a message over "
                             f"{MAX_MESSAGE_BYTES} bytes)")
        except asyncio.CancelledError:
            raise
        except DecodeError as exc:
            connection.close(f"a message that does not parse: {exc}", FaultKind.MALFORMED,
                             grpc.StatusCode.INVALID_ARGUMENT)
        except http2.MessageRefused as exc:  # too large or compressed: refused before it is read
            connection.close(str(exc), FaultKind.MALFORMED, grpc.StatusCode.RESOURCE_EXHAUSTED)
        except Exception as exc:  # the transport failed: the bot is gone
            connection.close(f"{type(exc).__name__}: {exc}")


class ArenaServer:
    """The gRPC server that bots connect to, with its slots (one per expected bot stream).

    ``max_waiting`` streams may wait for their hello at once, ``peer_waiting`` of them from one peer host;
    ``max_connections`` connections are kept at once (more are closed as they come). A stream told goodbye stays
    open until the bot closes its side, ``goodbye_grace`` seconds at most (:data:`GOODBYE_GRACE`).
    """

    def __init__(self, *, max_waiting: int | None = None, peer_waiting: int | None = None,
                 max_connections: int | None = None, goodbye_grace: float = GOODBYE_GRACE,
                 unix_transport: str | None = None) -> None:
        self._slots: dict[str, Slot] = {}
        self.goodbye_grace = goodbye_grace
        self.unix_transport = UNIX_TRANSPORT if unix_transport is None else unix_transport
        if self.unix_transport not in UNIX_TRANSPORTS:
            raise ServerError(f"unknown transport for Unix sockets {self.unix_transport!r} "
                              f"(ARENA_UNIX_TRANSPORT: one of {', '.join(UNIX_TRANSPORTS)})")
        self._server: aio.Server | None = None
        self._http2: http2.Http2Server | None = None
        self.address = ""
        self.addresses: list[str] = []
        self.max_waiting = MAX_WAITING_STREAMS if max_waiting is None else max_waiting
        self.peer_waiting = PEER_WAITING_STREAMS if peer_waiting is None else peer_waiting
        self.max_connections = MAX_CONNECTIONS if max_connections is None else max_connections
        self.refusals = RefusalLog()

    @classmethod
    def private(cls) -> ArenaServer:
        """Return a server for one launched bot: its own waiting room and connections, few of each."""
        return cls(max_waiting=PRIVATE_WAITING_STREAMS, peer_waiting=PRIVATE_WAITING_STREAMS,
                   max_connections=PRIVATE_CONNECTIONS)

    def add_slot(self, name: str, token: str | None = None) -> Slot:
        """Return a new slot for a bot called ``name``, with a fresh random token unless one is given."""
        token = token or secrets.token_urlsafe(24)
        if token in self._slots:
            raise ServerError(f"token for {name!r} is already in use by {self._slots[token].name!r}")
        slot = Slot(name, token)
        self._slots[token] = slot
        return slot

    def claim(self, token: str) -> tuple[Slot | None, str]:
        """Return the slot of ``token``, now marked used; or ``None`` and why (for the log).

        A token works once: missing, unknown (never given, or its slot removed) and used tokens are refused.
        """
        if not token:
            return None, "no token"
        slot = self._slots.get(token)
        if slot is None:
            return None, "unknown token"
        if slot.used:
            return None, f"the token of {slot.name!r} is already in use"
        slot.used = True
        return slot, ""

    def remove_slot(self, slot: Slot) -> None:
        """Forget ``slot`` (its token stops working) and close its stream."""
        self._slots.pop(slot.token, None)
        slot.goodbye("the arena no longer needs this seat")

    async def start(self, address: str, *, also: Sequence[str] = ()) -> str:
        """Start serving on ``address`` and on every address of ``also``; return ``address`` as bound.

        Each is ``unix:PATH`` or ``HOST:PORT`` (port 0 picks one). ``address`` is the main one (a launched
        bot's own server listens on one Unix socket, which its jail holds); ``also`` lets remote bots in, and
        :attr:`addresses` lists everything bound. Raises :class:`ServerError` when an address cannot be bound.
        """
        for where in (address, *also):
            if not where.startswith("unix:"):
                _check_free(where)
        servicer = _Servicer(self)
        own = [where for where in (address, *also) if where.startswith("unix:") and self.unix_transport == "http2"]
        if own:
            await self._start_http2(servicer, own)
        if len(own) == len((address, *also)):
            self.address = address
            self.addresses = [address, *also]
            return self.address
        server = aio.server(options=[*CHANNEL_OPTIONS,
                                     ("grpc.max_allowed_incoming_connections", self.max_connections)])
        # registered by hand rather than with the generated add_ArenaServicer_to_server: its serializer would
        # not take requests that are serialized already
        handlers = {"Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play, request_deserializer=pb.BotMessage.FromString, response_serializer=_serialize)}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(codec.SERVICE, handlers),))
        server.add_registered_method_handlers(codec.SERVICE, handlers)  # type: ignore[attr-defined]  # not in the stubs
        bound = []
        for where in (address, *also):
            if where in own:
                bound.append(where)
                continue
            try:
                port = server.add_insecure_port(where)
            except RuntimeError as exc:
                raise ServerError(f"cannot listen on {where!r}: {exc}") from None
            if where.startswith("unix:"):
                bound.append(where)
                continue
            if port == 0:
                raise ServerError(f"cannot listen on {where!r}: the address is in use or not valid")
            bound.append(f"{where.rsplit(':', 1)[0]}:{port}" if where.rsplit(":", 1)[-1] == "0" else where)
        # a start cancelled half-way (a bot started ahead that is no longer needed, the ladder ending) would leave
        # gRPC's server serving with nobody to stop it: it is let finish, then stopped
        starting = asyncio.ensure_future(server.start())
        try:
            await asyncio.shield(starting)
        except BaseException:
            await asyncio.wait([starting])
            starting.exception()  # seen: what is raised here is the cancel, or this same error
            await server.stop(0)
            if self._http2 is not None:
                await self._http2.stop(0)
                self._http2 = None
            raise
        self._server = server
        self.address = bound[0]
        self.addresses = bound
        return self.address

    async def _start_http2(self, servicer: _Servicer, addresses: list[str]) -> None:
        """Serve the Unix sockets of ``addresses`` by the arena's own HTTP/2 server."""
        server = http2.Http2Server(
            servicer.Play, path=codec.PLAY_PATH, decode=pb.BotMessage.FromString, encode=_serialize,
            max_message=MAX_MESSAGE_BYTES, max_connections=self.max_connections,
            handshake_timeout=HANDSHAKE_TIMEOUT_MS / 1000, idle_timeout=IDLE_CONNECTION_MS / 1000,
            refused=self.refusals)
        for where in addresses:
            # a start cancelled half-way lets the bind finish, then closes what it bound
            listening = asyncio.ensure_future(server.listen(Path(where.removeprefix("unix:"))))
            try:
                await asyncio.shield(listening)
            except BaseException as exc:
                await asyncio.wait([listening])
                listening.exception()  # seen: what is raised here is the cancel, or this same error
                await server.stop(0)
                if isinstance(exc, OSError):
                    raise ServerError(f"cannot listen on {where!r}: {exc.strerror or exc}") from None
                raise
        self._http2 = server

    async def stop(self, grace: float = 1.0) -> None:
        """Say goodbye to every bot and stop serving."""
        for slot in list(self._slots.values()):
            slot.goodbye("the arena is shutting down")
        if self._http2 is not None:
            await self._http2.stop(grace)
            self._http2 = None
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None


def _check_free(address: str) -> None:
    """Raise :class:`ServerError` with a plain reason when ``HOST:PORT`` cannot be bound (in use, bad host).

    gRPC would say only that binding failed, after logging to stderr; trying first gives one clear line.
    """
    host, sep, port_text = address.rpartition(":")
    host = host.strip("[]")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ServerError(f"cannot listen on {address!r}: expected HOST:PORT, e.g. 127.0.0.1:50051")
    try:
        infos = socket.getaddrinfo(host or None, int(port_text), type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise ServerError(f"cannot listen on {address!r}: {exc.strerror or exc}") from None
    for family, kind, proto, _, sockaddr in infos[:1]:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC does: TIME_WAIT is no obstacle
            try:
                probe.bind(sockaddr)
            except OSError as exc:
                raise ServerError(f"cannot listen on {address!r}: {exc.strerror or exc}") from None
