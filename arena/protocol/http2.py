"""The arena's own HTTP/2 server for gRPC streams on Unix sockets, on asyncio's loop: what launched bots talk to.

gRPC's Python server (grpc.aio) runs its C core's I/O on a poller thread of its own and hands every completion to
the event loop through a socket: for the arena's streams, one small message each way a decision, those hand-overs
cost more than the rest of a decision's work (``python benchmarks/native_echo.py --arena-http2``: 82 us of the
server's CPU a round trip through grpc.aio, 35 us through this server, with the frames read and written on the loop
itself). This module is that server, for the one kind of call the arena serves (a bidirectional stream,
``Arena.Play``) and the one kind of socket its launched bots reach (a Unix socket only their jail holds); remote
bots over TCP still meet gRPC's own server (:mod:`arena.protocol.server`).

It speaks HTTP/2 (RFC 9113) as a server must to a gRPC client (gRPC over HTTP/2: its length-prefixed messages, its
status in trailers) and is strict about the rest: whatever a gRPC client would not send is a connection error,
answered with GOAWAY and the connection closed. Header blocks are decoded by ``hpack`` (python-hyper's HPACK,
RFC 7541: Huffman codes and the dynamic table are not code to write again); what it writes needs no state (literal
headers). What a peer can make it hold is bounded: a frame of at most :data:`MAX_FRAME_SIZE` bytes, a header list
of :data:`MAX_HEADER_LIST_SIZE`, :data:`MAX_CONCURRENT_STREAMS` streams a connection and
:data:`MAX_STREAMS_PER_CONNECTION` in its life, unread messages within the flow-control window a stream is given
(:data:`STREAM_WINDOW`, granted again as the call reads; a message larger than half of it is granted as it comes,
up to the largest message read), and frames the arena did not ask for: a peer that sends
more than :data:`MAX_FRAMES_UNANSWERED` frames between two of the arena's writes (pings, settings, window
updates, resets...) is told to calm down (GOAWAY, ENHANCE_YOUR_CALM) and cut off. Writes wait for the peer's
flow-control window and for the socket to drain, so a peer that does not read holds up only its own writer.

A call's handler is a coroutine ``handler(requests, call)``, as for grpc.aio: :class:`Call` has the parts of
``grpc.aio.ServicerContext`` the arena uses (``read``, ``write``, ``abort``, ``peer``).

The same frames make the Python SDK's client (:func:`connect`, :class:`ClientCall`): a bot's one call to the
arena, on its own loop, where gRPC's client would hand every message over from its poller thread too. It talks to
this server and to gRPC's (remote bots over TCP), and reads the call's status from its trailers.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import enum
import logging
import struct
import urllib.parse
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NoReturn, cast

import hpack

log = logging.getLogger("arena.protocol.http2")


class _End:
    """The type of :data:`EOF`."""

    def __repr__(self) -> str:
        return "EOF"


EOF: Any = _End()
"""What a read returns once the peer's side of the stream has ended (grpc.aio's is its own ``aio.EOF``)."""


class StatusCode(enum.Enum):
    """A call's status: gRPC's codes, named and valued as ``grpc.StatusCode`` (so ``str()`` reads the same), kept
    here so that the Python SDK, which speaks the stream with this module alone, does not load gRPC's library (13
    ms and some 10 MiB of every bot process). Where a code comes in, any enum of the same values is taken:
    ``grpc.StatusCode``'s too (:func:`number`)."""

    OK = (0, "ok")
    CANCELLED = (1, "cancelled")
    UNKNOWN = (2, "unknown")
    INVALID_ARGUMENT = (3, "invalid argument")
    DEADLINE_EXCEEDED = (4, "deadline exceeded")
    NOT_FOUND = (5, "not found")
    ALREADY_EXISTS = (6, "already exists")
    PERMISSION_DENIED = (7, "permission denied")
    RESOURCE_EXHAUSTED = (8, "resource exhausted")
    FAILED_PRECONDITION = (9, "failed precondition")
    ABORTED = (10, "aborted")
    OUT_OF_RANGE = (11, "out of range")
    UNIMPLEMENTED = (12, "unimplemented")
    INTERNAL = (13, "internal")
    UNAVAILABLE = (14, "unavailable")
    DATA_LOSS = (15, "data loss")
    UNAUTHENTICATED = (16, "unauthenticated")


def number(code: enum.Enum) -> int:
    """Return the number of a status code: of :class:`StatusCode` or ``grpc.StatusCode`` (their values are
    (number, text))."""
    return int(code.value[0])

# frame types (RFC 9113, section 6)
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
# flags
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
# error codes (section 7)
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, ENHANCE_YOUR_CALM = (
    0x5, 0x6, 0x7, 0x8, 0x9, 0xB)
# settings (section 6.5.2)
SETTINGS_HEADER_TABLE_SIZE, SETTINGS_ENABLE_PUSH, SETTINGS_MAX_CONCURRENT_STREAMS = 0x1, 0x2, 0x3
SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE, SETTINGS_MAX_HEADER_LIST_SIZE = 0x4, 0x5, 0x6

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DEFAULT_WINDOW = 65_535
"""Every flow-control window's size until SETTINGS or WINDOW_UPDATE say otherwise."""
MAX_WINDOW = (1 << 31) - 1
MAX_FRAME_SIZE = 16_384
"""The largest frame the arena reads (HTTP/2's default; it never asks for more)."""
MAX_HEADER_LIST_SIZE = 16_384
"""The largest header list (decoded) a call may start with."""
MAX_CONCURRENT_STREAMS = 4
"""Streams a connection may have open at once: a bot needs one; a few more allow a reconnect."""
MAX_STREAMS_PER_CONNECTION = 64
"""Streams a connection may open in its life: beyond, it is told to calm down (no bot needs more)."""
STREAM_WINDOW = 256 << 10
"""The flow-control window a stream is given: what a peer may send ahead of the call's reads."""
CONNECTION_WINDOW = MAX_CONCURRENT_STREAMS * STREAM_WINDOW
MAX_FRAMES_UNANSWERED = 256
"""Frames a peer may send between two writes of the arena (a decision's answer takes a few)."""

_STATUS_200 = b"\x88"  # ":status: 200", static table entry 8
_CONTENT_TYPE = b"\x0f\x10\x10application/grpc"  # "content-type" (static name 31), literal not indexed
RESPONSE_HEADERS = _STATUS_200 + _CONTENT_TYPE


class Http2Error(Exception):
    """A connection error (RFC 9113, section 5.4.1): the connection ends with GOAWAY and ``code``."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code


class StreamGone(Exception):
    """The stream was reset, or its connection closed, before the call ended."""


class MessageRefused(Exception):
    """A message the arena does not read: larger than allowed (compressed or inflated), compressed by an encoding it
    does not read, or broken."""


class CallFailed(Exception):
    """A call this process made ended with a status other than OK (or its connection could not be made)."""

    def __init__(self, code: StatusCode, details: str) -> None:
        super().__init__(f"{code}: {details}")
        self.code = code
        self.details = details


class CallAborted(Exception):
    """Raised by :meth:`Call.abort`: the call ends with this status."""

    def __init__(self, code: enum.Enum, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


def frame(kind: int, flags: int, stream: int, payload: bytes | memoryview = b"") -> bytes:
    """Return one frame."""
    return struct.pack(">I", len(payload))[1:] + struct.pack(">BBI", kind, flags, stream) + bytes(payload)


def opening(key: int, value: int) -> bytes:
    """Return what either end says first: its SETTINGS (its stream window, its largest header list, and the one
    setting of its own, ``key``) and the connection's window raised to :data:`CONNECTION_WINDOW`."""
    settings = struct.pack(">HIHIHI", key, value, SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW,
                           SETTINGS_MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST_SIZE)
    raise_window = struct.pack(">I", CONNECTION_WINDOW - DEFAULT_WINDOW)
    return frame(SETTINGS, 0, 0, settings) + frame(WINDOW_UPDATE, 0, 0, raise_window)


def _hpack_length(value: int) -> bytes:
    """Return ``value`` as an HPACK integer with a 7-bit prefix and no Huffman flag (RFC 7541, 5.1)."""
    if value < 127:
        return bytes((value,))
    out = bytearray((127,))
    value -= 127
    while value >= 128:
        out.append((value & 127) | 128)
        value >>= 7
    out.append(value)
    return bytes(out)


def _literal(name: bytes, value: bytes) -> bytes:
    """Return a header as a literal with a new name, not indexed (RFC 7541, 6.2.2): no table state."""
    return b"\x00" + _hpack_length(len(name)) + name + _hpack_length(len(value)) + value


def _percent_encode(text: str) -> bytes:
    """Return ``grpc-message``'s value: UTF-8, with bytes outside printable ASCII and '%' percent-encoded."""
    return b"".join(bytes((b,)) if 0x20 <= b <= 0x7E and b != 0x25 else b"%%%02X" % b for b in text.encode())


def trailers(code: enum.Enum, details: str = "") -> bytes:
    """Return the header block of a call's end: ``grpc-status`` and, when not OK, ``grpc-message``."""
    block = _literal(b"grpc-status", str(number(code)).encode())
    if details and number(code) != 0:
        block += _literal(b"grpc-message", _percent_encode(details[:1024]))
    return block


Handler = Callable[[AsyncIterator[Any], "Call"], Awaitable[None]]


class Stream:
    """One gRPC call's stream on an :class:`Endpoint`: its messages each way and its flow control.

    Messages come in as bytes; ``decode`` turns each into a message when it is read (an error it raises reaches
    the reader), ``encode`` turns what is written into bytes.
    """

    def __init__(self, connection: Endpoint, stream_id: int, decode: Callable[[bytes], Any],
                 encode: Callable[[Any], bytes]) -> None:
        self._connection = connection
        self.stream_id = stream_id
        self._decode = decode
        self._encode = encode
        self._messages: collections.deque[tuple[bytes, int, bool]] = collections.deque()
        """Whole messages not read yet, each with how many of its bytes were granted again as they came, and
        whether it is compressed."""
        self.encoding = b"identity"
        """How the peer compresses the messages it flags as compressed (its ``grpc-encoding``)."""
        self._partial = bytearray()
        self._early = 0
        """Bytes at the head of ``_partial`` granted again as they came (a message larger than half a window)."""
        self._waiter: asyncio.Future[None] | None = None
        self._error: Exception | None = None
        self.remote_ended = False
        """The peer has closed its side (END_STREAM): no more messages come."""
        self.ended = False
        """The arena has closed its side (trailers sent, or the stream reset)."""
        self.send_window = connection.peer_initial_window
        self.receive_window = STREAM_WINDOW
        self._unacknowledged = 0
        self.task: asyncio.Task[None] | None = None

    async def read(self) -> Any:
        """Return the next message, or :data:`EOF` once the peer has closed its side.

        Raises :class:`StreamGone` when the stream was reset or its connection lost, :class:`MessageRefused` for
        a message the arena does not read (each after the messages that came whole before), and what ``decode``
        raises for bytes that do not parse.
        """
        while not self._messages:
            if self._error is not None:
                raise self._error
            if self.remote_ended:
                return self._end()
            self._waiter = self._connection.loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        body, early, compressed = self._messages.popleft()
        self.consumed(len(body) + 5 - early)
        return self._decode(self._decompress(body) if compressed else body)

    def _decompress(self, body: bytes) -> bytes:
        """Return a compressed message's bytes, at most the largest message read (a small message may inflate to
        gigabytes). Raises :class:`MessageRefused` for another encoding, a larger message or a broken one."""
        window = _ENCODINGS.get(self.encoding)
        if window is None:
            raise MessageRefused(f"a message compressed with {self.encoding.decode(errors='replace')!r} "
                                 f"(the arena reads {', '.join(e.decode() for e in _ENCODINGS)})")
        inflater = zlib.decompressobj(window)
        limit = self._connection.max_message
        try:
            out = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise MessageRefused(f"a compressed message that does not inflate: {exc}") from None
        if len(out) > limit or inflater.unconsumed_tail:
            raise MessageRefused(f"a compressed message over the {limit} bytes the arena reads once inflated")
        if not inflater.eof:
            raise MessageRefused("a compressed message cut short")
        return out

    async def write(self, message: Any) -> None:
        """Send one message, after waiting for the peer's flow-control window and the socket to drain.

        A write cancelled half-way leaves a part of a message in the stream, so the stream is reset.
        """
        body = self._encode(message)
        connection = self._connection
        if self.ended or self._error is not None or connection.closing:
            raise StreamGone("the stream is closed")
        self._start()
        data = memoryview(b"\x00" + struct.pack(">I", len(body)) + body)
        written = False
        try:
            while data:
                size = min(len(data), connection.send_window, self.send_window, connection.peer_max_frame)
                if size <= 0:
                    await connection.window_opened()
                    if self.ended or self._error is not None or connection.closing:
                        raise StreamGone("the stream closed during a write")
                    continue
                connection.send_window -= size
                self.send_window -= size
                written = True
                connection.send(frame(DATA, 0, self.stream_id, data[:size]))
                data = data[size:]
                if connection.paused:
                    await connection.drained()
                    if connection.closing:
                        raise StreamGone("the connection closed during a write")
        except asyncio.CancelledError:
            if written and data:
                self.reset(CANCEL)
            raise

    def _start(self) -> None:
        """Send what goes before the first message (nothing here)."""

    def _end(self) -> Any:
        """Return what a read gives once the peer's side has ended: :data:`EOF`."""
        return EOF

    # ------------------------------------------------------------------------------------ the connection's side

    def receive(self, data: bytes | memoryview) -> None:
        """Take a DATA frame's payload: complete messages are queued for :meth:`read`."""
        if self._error is not None:  # the call is failing: what comes next is not read
            self._unacknowledged += len(data)
            return
        partial = self._partial
        partial += data
        while len(partial) >= 5:
            size = int.from_bytes(partial[1:5], "big")
            if partial[0] > 1:
                self._fail(MessageRefused(f"a message flagged {partial[0]} (0: plain, 1: compressed)"))
                return
            if size > self._connection.max_message:
                self._fail(MessageRefused(f"a message of {size} bytes, over the {self._connection.max_message} "
                                          f"bytes the arena reads"))
                return
            if len(partial) < 5 + size:
                if 5 + size > STREAM_WINDOW // 2:  # it could not come whole within the window: granted as it comes
                    self.consumed(len(partial) - self._early)
                    self._early = len(partial)
                break
            early = min(self._early, 5 + size)
            self._early -= early
            self._messages.append((bytes(partial[5:5 + size]), early, partial[0] == 1))
            del partial[:5 + size]
        self._wake()

    def end_remote(self) -> None:
        """The peer closed its side."""
        self.remote_ended = True
        self._wake()

    def gone(self, reason: str) -> None:
        """The stream was reset or its connection lost: the reader fails and the handler is cancelled."""
        self.ended = True
        self._fail(StreamGone(reason))
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def reset_by_peer(self, code: int) -> None:
        """The peer reset the stream (RST_STREAM with ``code``)."""
        self.gone(f"the peer reset the stream (code {code})")

    def reset(self, code: int) -> None:
        """Reset the stream (RST_STREAM with ``code``) and forget it."""
        if not self.ended:
            self.ended = True
            self._connection.send(frame(RST_STREAM, 0, self.stream_id, struct.pack(">I", code)))
        self._connection.forget(self)

    def unread(self) -> int:
        """Return the bytes received but not read: the connection's window gets them back when the call goes."""
        return (sum(len(m) + 5 - early for m, early, _ in self._messages) + len(self._partial) - self._early
                + self._unacknowledged)

    def consumed(self, size: int) -> None:
        """Count ``size`` bytes as read; grant them again to the peer once half the window is read."""
        self._unacknowledged += size
        if self._unacknowledged >= STREAM_WINDOW // 2:
            grant, self._unacknowledged = self._unacknowledged, 0
            self.receive_window += grant
            if not self.remote_ended:
                self._connection.send(frame(WINDOW_UPDATE, 0, self.stream_id, struct.pack(">I", grant)))
            self._connection.grant(grant)

    def _fail(self, error: Exception) -> None:
        """Fail the reads after the messages already whole (what was partly received is dropped)."""
        if self._error is None:
            self._error = error
        self._unacknowledged += len(self._partial) - self._early
        self._partial.clear()
        self._early = 0
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class Call(Stream):
    """A call the server serves: the handler's context (what the arena uses of grpc.aio's ``ServicerContext``)."""

    def __init__(self, connection: Http2Connection, stream_id: int, decode: Callable[[bytes], Any],
                 encode: Callable[[Any], bytes]) -> None:
        super().__init__(connection, stream_id, decode, encode)
        self._headers_sent = False

    def peer(self) -> str:
        """Return the peer, as gRPC names it (``unix:`` and the socket's path)."""
        return self._connection.peer

    async def requests(self) -> AsyncIterator[Any]:
        """Yield the messages until the peer closes its side (the handler's request iterator)."""
        while (message := await self.read()) is not EOF:
            yield message

    async def abort(self, code: enum.Enum, details: str = "") -> NoReturn:
        """End the call with ``code`` (raises :class:`CallAborted`, which the call's task ends on)."""
        raise CallAborted(code, details)

    def _start(self) -> None:
        if not self._headers_sent:
            self._headers_sent = True
            self._connection.send(frame(HEADERS, END_HEADERS, self.stream_id, RESPONSE_HEADERS))

    def finish(self, code: enum.Enum, details: str = "") -> None:
        """End the arena's side with the call's status (trailers; a trailers-only response if nothing was sent)."""
        if self.ended or self._connection.closing:
            self._connection.forget(self)
            return
        self.ended = True
        block = trailers(code, details)
        if not self._headers_sent:
            block = RESPONSE_HEADERS + block
        # the peer's side may stay open (gRPC's client takes a RST_STREAM after trailers for a failure): what it
        # still sends on the stream is dropped
        self._connection.send(frame(HEADERS, END_HEADERS | END_STREAM, self.stream_id, block))
        self._connection.forget(self)


class ClientCall(Stream):
    """A call this process made (:func:`connect`): write messages, read the server's until its status."""

    def __init__(self, connection: ClientConnection, stream_id: int, decode: Callable[[bytes], Any],
                 encode: Callable[[Any], bytes]) -> None:
        super().__init__(connection, stream_id, decode, encode)
        self.responded = False
        """The server's response headers came."""
        self.code: StatusCode | None = None
        self.details = ""

    def ended_with(self, code: StatusCode, details: str) -> None:
        """The server ended the call with this status."""
        self.code, self.details = code, details
        self.end_remote()

    def _end(self) -> Any:
        if self.code is StatusCode.OK:
            return EOF
        raise CallFailed(self.code or StatusCode.UNKNOWN, self.details)

    def reset_by_peer(self, code: int) -> None:
        if self.code is None:  # after the status, a reset only ends what the server no longer reads
            super().reset_by_peer(code)

    def done_writing(self) -> None:
        """End this side of the call (END_STREAM): the server reads to its end; the reads go on."""
        if not self.ended and not self._connection.closing:
            self.ended = True
            self._connection.send(frame(DATA, END_STREAM, self.stream_id))

    def close(self) -> None:
        """End this side (END_STREAM) unless it ended, and the connection (GOAWAY, then the socket closes)."""
        self.done_writing()
        self._connection.close(NO_ERROR, "the call is over")


class Endpoint(asyncio.Protocol):
    """One HTTP/2 connection, either end: its frames, its streams and its flow control.

    ``idle_timeout``: seconds a connection without a stream is kept; ``frame_budget``: frames the peer may send
    between two writes of this end (None: no bound, for either).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, *, peer: str, max_message: int,
                 idle_timeout: float | None, frame_budget: int | None) -> None:
        self.loop = loop
        self.peer = peer
        self.max_message = max_message
        self.idle_timeout = idle_timeout
        self.frame_budget = frame_budget
        self.refused: Callable[..., None] = log.info
        """Where a connection ended for the peer's misconduct is told (a server's bounded log)."""
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._preface = False
        self._settled = False  # the peer's first SETTINGS came: the handshake is done
        self._decoder = hpack.Decoder(max_header_list_size=MAX_HEADER_LIST_SIZE)
        self._continuation: tuple[int, int, bytearray] | None = None  # a header block still coming
        self.calls: dict[int, Stream] = {}
        self._last_stream = 0
        self._opened = 0
        self.peer_initial_window = DEFAULT_WINDOW
        self.peer_max_frame = MAX_FRAME_SIZE
        self.send_window = DEFAULT_WINDOW
        self._receive_window = CONNECTION_WINDOW
        self._unanswered = 0
        self._window_waiters: list[asyncio.Future[None]] = []
        self.paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        self.closing = False
        self._timer: asyncio.TimerHandle | None = None

    # ----------------------------------------------------------------------------------------- asyncio's side

    def connection_made(self, pipe: asyncio.BaseTransport) -> None:
        # a cast, not an isinstance check: uvloop's transports (Ray's async actors run on uvloop) have the methods
        # of asyncio.Transport without deriving from it
        self.transport = cast(asyncio.Transport, pipe)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        try:
            self._frames(data)
        except Http2Error as error:
            self.close(error.code, str(error))

    def eof_received(self) -> bool | None:
        self.close(NO_ERROR, "the peer closed the connection")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closing = True
        self._cancel_timer()
        for call in list(self.calls.values()):
            call.gone("the connection was lost")
        self.calls.clear()
        self._release()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        waiters, self._drain_waiters = self._drain_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    # --------------------------------------------------------------------------------------- for the calls

    def send(self, data: bytes) -> None:
        """Write bytes to the peer (a frame); anything written answers the peer's frames so far."""
        if not self.closing and self.transport is not None:
            self._unanswered = 0
            self.transport.write(data)

    def window_opened(self) -> asyncio.Future[None]:
        """Return a future that resolves when a flow-control window may have grown (or the connection closes)."""
        waiter = self.loop.create_future()
        self._window_waiters.append(waiter)
        return waiter

    def drained(self) -> asyncio.Future[None]:
        """Return a future that resolves when the socket takes writes again (or the connection closes)."""
        waiter = self.loop.create_future()
        if not self.paused or self.closing:
            waiter.set_result(None)
        else:
            self._drain_waiters.append(waiter)
        return waiter

    def grant(self, size: int) -> None:
        """Give the peer ``size`` more bytes of the connection's window (a call read them)."""
        self._receive_window += size
        self.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", size)))

    def forget(self, call: Stream) -> None:
        """Drop an ended call; its unread bytes go back to the connection's window."""
        if self.calls.pop(call.stream_id, None) is not None:
            unread = call.unread()
            if unread and not self.closing:
                self.grant(unread)
            if not self.calls and not self.closing:
                self._start_idle_timer()

    def close(self, code: int = NO_ERROR, reason: str = "") -> None:
        """End the connection: GOAWAY with ``code``, every call gone, the socket closed once written."""
        if self.closing:
            return
        if code != NO_ERROR:
            self.refused("closed a connection on %s: %s", self.peer, reason)
        if self.transport is not None:
            debug = reason.encode()[:256]
            self.transport.write(frame(GOAWAY, 0, 0, struct.pack(">II", self._last_stream, code) + debug))
        self.closing = True
        self._cancel_timer()
        for call in list(self.calls.values()):
            call.gone(f"the connection closed: {reason}")
        self.calls.clear()
        self._release()
        if self.transport is not None:
            self.transport.close()

    # ------------------------------------------------------------------------------------------ the frames

    def _frames(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        if not self._preface:
            if len(buffer) < len(PREFACE):
                if not PREFACE.startswith(bytes(buffer)):
                    raise Http2Error(PROTOCOL_ERROR, "not an HTTP/2 connection preface")
                return
            if bytes(buffer[:len(PREFACE)]) != PREFACE:
                raise Http2Error(PROTOCOL_ERROR, "not an HTTP/2 connection preface")
            del buffer[:len(PREFACE)]
            self._preface = True
        at = 0
        try:
            while len(buffer) - at >= 9 and not self.closing:
                length = int.from_bytes(buffer[at:at + 3], "big")
                if length > MAX_FRAME_SIZE:
                    raise Http2Error(FRAME_SIZE_ERROR, f"a frame of {length} bytes")
                if len(buffer) - at < 9 + length:
                    break
                kind, flags = buffer[at + 3], buffer[at + 4]
                stream = int.from_bytes(buffer[at + 5:at + 9], "big") & 0x7FFFFFFF
                payload = bytes(buffer[at + 9:at + 9 + length])
                at += 9 + length
                self._unanswered += 1
                if self.frame_budget is not None and self._unanswered > self.frame_budget:
                    raise Http2Error(ENHANCE_YOUR_CALM, f"more than {self.frame_budget} frames unanswered")
                self._frame(kind, flags, stream, payload)
        finally:
            del buffer[:at]

    def _frame(self, kind: int, flags: int, stream: int, payload: bytes) -> None:
        if self._continuation is not None and kind != CONTINUATION:
            raise Http2Error(PROTOCOL_ERROR, "a frame inside a header block")
        if not self._settled and kind != SETTINGS:
            raise Http2Error(PROTOCOL_ERROR, "the connection must start with SETTINGS")
        if kind == DATA:
            self._data(flags, stream, payload)
        elif kind == HEADERS:
            self._headers(flags, stream, payload)
        elif kind == CONTINUATION:
            self._continued(flags, stream, payload)
        elif kind == SETTINGS:
            self._settings(flags, stream, payload)
        elif kind == WINDOW_UPDATE:
            self._window_update(stream, payload)
        elif kind == PING:
            if stream or len(payload) != 8:
                raise Http2Error(PROTOCOL_ERROR if stream else FRAME_SIZE_ERROR, "a malformed PING")
            if not flags & ACK:
                unanswered = self._unanswered
                self.send(frame(PING, ACK, 0, payload))
                self._unanswered = unanswered  # a ping's answer answers nothing else
        elif kind == RST_STREAM:
            if not stream or len(payload) != 4:
                raise Http2Error(PROTOCOL_ERROR if not stream else FRAME_SIZE_ERROR, "a malformed RST_STREAM")
            self._idle_check(stream)
            call = self.calls.get(stream)
            if call is not None:
                call.reset_by_peer(int.from_bytes(payload, "big"))
                self.forget(call)
        elif kind == PRIORITY:
            if not stream or len(payload) != 5:
                raise Http2Error(PROTOCOL_ERROR if not stream else FRAME_SIZE_ERROR, "a malformed PRIORITY")
        elif kind == GOAWAY:
            if stream or len(payload) < 8:
                raise Http2Error(PROTOCOL_ERROR, "a malformed GOAWAY")
            self.close(NO_ERROR, "the peer went away")
        elif kind == PUSH_PROMISE:
            raise Http2Error(PROTOCOL_ERROR, "a client may not push")
        # other types are extensions: ignored (section 4.1)

    def _idle_check(self, stream: int) -> None:
        if stream > self._last_stream:
            raise Http2Error(PROTOCOL_ERROR, f"a frame for stream {stream}, never opened")

    def _data(self, flags: int, stream: int, payload: bytes) -> None:
        if not stream:
            raise Http2Error(PROTOCOL_ERROR, "DATA on stream 0")
        self._idle_check(stream)
        self._receive_window -= len(payload)
        if self._receive_window < 0:
            raise Http2Error(FLOW_CONTROL_ERROR, "DATA beyond the connection's window")
        call = self.calls.get(stream)
        if call is not None and call.remote_ended:
            raise Http2Error(STREAM_CLOSED, f"DATA after the end of stream {stream}")
        if call is None:  # a stream the arena is done with: dropped, its bytes given back to the connection
            if payload:
                self.grant(len(payload))
            return
        call.receive_window -= len(payload)
        if call.receive_window < 0:
            raise Http2Error(FLOW_CONTROL_ERROR, f"DATA beyond stream {stream}'s window")
        body: bytes | memoryview = payload
        if flags & PADDED:
            if not payload or payload[0] >= len(payload):
                raise Http2Error(PROTOCOL_ERROR, "padding longer than its frame")
            padding = payload[0] + 1
            body = memoryview(payload)[1:len(payload) - payload[0]]
            call.consumed(padding)  # padding is never read: it counts as read at once
        if body:
            call.receive(body)
        if flags & END_STREAM:
            call.end_remote()

    def _headers(self, flags: int, stream: int, payload: bytes) -> None:
        if not stream:
            raise Http2Error(PROTOCOL_ERROR, "HEADERS on stream 0")
        block = memoryview(payload)
        if flags & PADDED:
            if not block or block[0] >= len(block):
                raise Http2Error(PROTOCOL_ERROR, "padding longer than its frame")
            block = block[1:len(block) - block[0]]
        if flags & PRIORITY_FLAG:
            if len(block) < 5:
                raise Http2Error(FRAME_SIZE_ERROR, "a HEADERS frame too short for its priority")
            block = block[5:]
        if flags & END_HEADERS:
            self._header_block(flags, stream, bytes(block))
        else:
            self._continuation = (stream, flags, bytearray(block))

    def _continued(self, flags: int, stream: int, payload: bytes) -> None:
        if self._continuation is None or self._continuation[0] != stream:
            raise Http2Error(PROTOCOL_ERROR, "CONTINUATION out of a header block")
        block = self._continuation[2]
        block += payload
        if len(block) > MAX_HEADER_LIST_SIZE:
            raise Http2Error(ENHANCE_YOUR_CALM, "a header block too large")
        if flags & END_HEADERS:
            first = self._continuation[1]
            self._continuation = None
            self._header_block(first, stream, bytes(block))

    def _header_block(self, flags: int, stream: int, block: bytes) -> None:
        try:  # every block is decoded, even a refused stream's: the decoder's table must follow the peer's
            headers = {bytes(name): bytes(value) for name, value in self._decoder.decode(block, raw=True)}
        except (hpack.HPACKError, ValueError) as exc:
            raise Http2Error(COMPRESSION_ERROR, f"a header block that does not decode: {exc}") from None
        self._on_headers(flags, stream, headers)

    def _on_headers(self, flags: int, stream: int, headers: dict[bytes, bytes]) -> None:
        """Take a decoded header block (what it means depends on the end)."""
        raise NotImplementedError

    def _settings(self, flags: int, stream: int, payload: bytes) -> None:
        if stream:
            raise Http2Error(PROTOCOL_ERROR, "SETTINGS on a stream")
        if flags & ACK:
            if payload:
                raise Http2Error(FRAME_SIZE_ERROR, "a SETTINGS acknowledgement with a payload")
            return
        if len(payload) % 6:
            raise Http2Error(FRAME_SIZE_ERROR, "a SETTINGS frame of a length not a multiple of 6")
        for at in range(0, len(payload), 6):
            key, value = struct.unpack_from(">HI", payload, at)
            if key == SETTINGS_ENABLE_PUSH and value > 1:
                raise Http2Error(PROTOCOL_ERROR, "SETTINGS_ENABLE_PUSH above 1")
            if key == SETTINGS_INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise Http2Error(FLOW_CONTROL_ERROR, "SETTINGS_INITIAL_WINDOW_SIZE too large")
                delta = value - self.peer_initial_window
                self.peer_initial_window = value
                for call in self.calls.values():
                    call.send_window += delta
                    if call.send_window > MAX_WINDOW:
                        raise Http2Error(FLOW_CONTROL_ERROR, "a stream's window grew too large")
            elif key == SETTINGS_MAX_FRAME_SIZE:
                if not MAX_FRAME_SIZE <= value <= (1 << 24) - 1:
                    raise Http2Error(PROTOCOL_ERROR, "SETTINGS_MAX_FRAME_SIZE out of range")
                self.peer_max_frame = value
            # SETTINGS_HEADER_TABLE_SIZE bounds the peer's decoder: what the arena writes uses no table
        unanswered = self._unanswered
        self.send(frame(SETTINGS, ACK, 0))
        self._unanswered = unanswered
        if not self._settled:
            self._settled = True
            self._cancel_timer()
            self._start_idle_timer()
        self._open_windows()

    def _window_update(self, stream: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise Http2Error(FRAME_SIZE_ERROR, "a WINDOW_UPDATE of a length other than 4")
        increment = int.from_bytes(payload, "big") & 0x7FFFFFFF
        if not increment:
            raise Http2Error(PROTOCOL_ERROR, "a WINDOW_UPDATE of 0")
        if not stream:
            self.send_window += increment
            if self.send_window > MAX_WINDOW:
                raise Http2Error(FLOW_CONTROL_ERROR, "the connection's window grew too large")
        else:
            self._idle_check(stream)
            call = self.calls.get(stream)
            if call is None:
                return  # a stream already ended
            call.send_window += increment
            if call.send_window > MAX_WINDOW:
                raise Http2Error(FLOW_CONTROL_ERROR, f"stream {stream}'s window grew too large")
        self._open_windows()

    # ------------------------------------------------------------------------------------------- helpers

    def _open_windows(self) -> None:
        waiters, self._window_waiters = self._window_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def _release(self) -> None:
        self._open_windows()
        self.resume_writing()

    def _start_idle_timer(self) -> None:
        self._cancel_timer()
        if self.idle_timeout is not None:
            self._timer = self.loop.call_later(self.idle_timeout, self._timed_out, "idle, with no stream")

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self, why: str) -> None:
        self._timer = None
        self.close(NO_ERROR, why)


class Http2Connection(Endpoint):
    """A connection the server accepted: the peer opens the calls."""

    def __init__(self, server: Http2Server) -> None:
        super().__init__(server.loop, peer=server.peer, max_message=server.max_message,
                         idle_timeout=server.idle_timeout, frame_budget=MAX_FRAMES_UNANSWERED)
        self.server = server
        self.refused = server.refused

    def connection_made(self, pipe: asyncio.BaseTransport) -> None:
        super().connection_made(pipe)
        assert self.transport is not None
        if not self.server.admit(self):
            self.closing = True
            self.transport.abort()
            return
        self.transport.write(opening(SETTINGS_MAX_CONCURRENT_STREAMS, MAX_CONCURRENT_STREAMS))
        self._timer = self.loop.call_later(self.server.handshake_timeout, self._timed_out, "no HTTP/2 handshake")

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.server.discard(self)

    def _on_headers(self, flags: int, stream: int, headers: dict[bytes, bytes]) -> None:
        call = self.calls.get(stream)
        if call is not None:  # trailers: the peer's side ends
            if not flags & END_STREAM or call.remote_ended:
                raise Http2Error(PROTOCOL_ERROR, f"a second header block on stream {stream}")
            call.end_remote()
            return
        if stream <= self._last_stream or not stream % 2:
            raise Http2Error(PROTOCOL_ERROR, f"HEADERS for stream {stream}, which the peer may not open")
        self._last_stream = stream
        self._opened += 1
        if self._opened > MAX_STREAMS_PER_CONNECTION:
            raise Http2Error(ENHANCE_YOUR_CALM, f"more than {MAX_STREAMS_PER_CONNECTION} streams")
        if len(self.calls) >= MAX_CONCURRENT_STREAMS:
            self.send(frame(RST_STREAM, 0, stream, struct.pack(">I", REFUSED_STREAM)))
            return
        method, path = headers.get(b":method"), headers.get(b":path", b"")
        if method != b"POST" or not headers.get(b"content-type", b"").startswith(b"application/grpc"):
            raise Http2Error(PROTOCOL_ERROR, "not a gRPC call")
        self._cancel_timer()
        call = Call(self, stream, self.server.decode, self.server.encode)
        call.encoding = headers.get(b"grpc-encoding", b"identity")
        self.calls[stream] = call
        if flags & END_STREAM:
            call.end_remote()
        handler = self.server.handler if path == self.server.path else unimplemented(path)
        call.task = self.loop.create_task(self.server.run(call, handler))


class ClientConnection(Endpoint):
    """A connection this process made for one call (:func:`connect`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, peer: str, path: str, authority: str, agent: str,
                 decode: Callable[[bytes], Any], encode: Callable[[Any], bytes], max_message: int) -> None:
        super().__init__(loop, peer=peer, max_message=max_message, idle_timeout=None, frame_budget=None)
        self._preface = True  # a client reads no preface: the server's first frame is its SETTINGS
        self._last_stream = 1
        self.call = ClientCall(self, 1, decode, encode)
        self.calls[1] = self.call
        self._request = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path.encode()),
                         (b":authority", authority.encode()), (b"content-type", b"application/grpc"),
                         (b"te", b"trailers"), (b"user-agent", _visible_ascii(agent)[:200].encode())]

    def connection_made(self, pipe: asyncio.BaseTransport) -> None:
        super().connection_made(pipe)
        assert self.transport is not None
        block = b"".join(_literal(name, value) for name, value in self._request)
        self.transport.write(PREFACE + opening(SETTINGS_ENABLE_PUSH, 0) + frame(HEADERS, END_HEADERS, 1, block))

    def _on_headers(self, flags: int, stream: int, headers: dict[bytes, bytes]) -> None:
        call = self.calls.get(stream)
        if call is None:
            return  # a call already ended (the stream id was checked as opened)
        assert isinstance(call, ClientCall)
        if call.remote_ended:
            raise Http2Error(PROTOCOL_ERROR, f"a header block after the end of stream {stream}")
        if not call.responded:
            call.responded = True
            status = headers.get(b":status", b"")
            if status != b"200":
                call.ended_with(StatusCode.UNAVAILABLE if status in (b"502", b"503", b"504")
                                else StatusCode.UNKNOWN, f"HTTP status {status.decode(errors='replace')}")
                return
            if not flags & END_STREAM:
                return
        elif not flags & END_STREAM:
            raise Http2Error(PROTOCOL_ERROR, f"a second header block on stream {stream} that does not end it")
        call.ended_with(*grpc_status(headers))


_ENCODINGS = {b"gzip": 16 + zlib.MAX_WBITS, b"deflate": zlib.MAX_WBITS}
"""The compressions gRPC's clients use (``grpc-encoding``), by zlib's window bits: what a client of gRPC's own
server may send, so the arena reads them too."""


def _visible_ascii(text: str) -> str:
    """Return ``text`` with every character outside printable ASCII as '?': a header's value (RFC 9113, 8.2.1,
    forbids some characters in one, and a strict server resets a call that carries them)."""
    return "".join(c if " " <= c <= "~" else "?" for c in text)


def grpc_status(headers: dict[bytes, bytes]) -> tuple[StatusCode, str]:
    """Return the status and message a call's trailers give (UNKNOWN when they give none, or one not known)."""
    try:
        value = int(headers.get(b"grpc-status", b""))
    except ValueError:
        return StatusCode.UNKNOWN, "the call ended without a status"
    code = next((c for c in StatusCode if c.value[0] == value), StatusCode.UNKNOWN)
    return code, urllib.parse.unquote(headers.get(b"grpc-message", b"").decode("ascii", errors="replace"))


def target(address: str) -> tuple[str, int] | str:
    """Return where a gRPC target names (``unix:PATH``, ``unix://PATH``, ``[dns:///]HOST:PORT``): a Unix socket's
    path, or a host and port. Raises ValueError for a target this client does not reach."""
    if address.startswith("unix://"):
        return address.removeprefix("unix://")
    if address.startswith("unix:"):
        return address.removeprefix("unix:")
    rest = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ValueError(f"not an address this client reaches: {address!r} (unix:PATH or HOST:PORT)")
    return host.strip("[]"), int(port)


async def connect(address: str, path: str, *, decode: Callable[[bytes], Any], encode: Callable[[Any], bytes],
                  max_message: int, agent: str = "arena-sdk") -> ClientCall:
    """Open a connection to the gRPC server at ``address`` and start a bidirectional call to ``path`` on it.

    Raises :class:`CallFailed` (UNAVAILABLE) when the connection cannot be made.
    """
    loop = asyncio.get_running_loop()
    try:
        where = target(address)
    except ValueError as exc:
        raise CallFailed(StatusCode.UNAVAILABLE, str(exc)) from None

    def protocol() -> ClientConnection:
        authority = "localhost" if isinstance(where, str) else f"{where[0]}:{where[1]}"
        return ClientConnection(loop, peer=address, path=path, authority=authority, agent=agent, decode=decode,
                                encode=encode, max_message=max_message)

    try:
        if isinstance(where, str):
            _, connection = await loop.create_unix_connection(protocol, where)
        else:
            _, connection = await loop.create_connection(protocol, *where)
    except OSError as exc:
        raise CallFailed(StatusCode.UNAVAILABLE, f"cannot connect to {address}: {exc.strerror or exc}") from None
    return connection.call


def unimplemented(path: bytes) -> Handler:
    """Return the handler of a call to a method not served here: UNIMPLEMENTED, once the peer has sent its first
    message or closed its side (a gRPC client that writes at once would otherwise see its write fail, and the call
    end as INTERNAL), or after a few seconds."""

    async def handler(requests: AsyncIterator[Any], call: Call) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(call.read(), 5.0)
        await call.abort(StatusCode.UNIMPLEMENTED, f"no method {path.decode(errors='replace')!r} here")

    return handler


class Http2Server:
    """Serves ``handler`` for the calls to ``path`` on Unix sockets, with at most ``max_connections`` at once."""

    def __init__(self, handler: Handler, *, path: str, decode: Callable[[bytes], Any], encode: Callable[[Any], bytes],
                 max_message: int, max_connections: int, handshake_timeout: float, idle_timeout: float,
                 refused: Callable[..., None] | None = None) -> None:
        self.handler = handler
        self.refused: Callable[..., None] = refused if refused is not None else log.warning
        """Logs a refused connection, or one closed for a protocol error (a message and its arguments, as
        ``logging``'s): a peer that reconnects or errs in a loop must not flood the log, so the arena passes its
        rate-bounded refusal log."""
        self.path = path.encode()
        self.decode = decode
        self.encode = encode
        self.max_message = max_message
        self.max_connections = max_connections
        self.handshake_timeout = handshake_timeout
        self.idle_timeout = idle_timeout
        self.loop = asyncio.get_running_loop()
        self.peer = "unix:"
        self.connections: set[Http2Connection] = set()
        self._listeners: list[tuple[asyncio.AbstractServer, Path]] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def listen(self, path: Path) -> None:
        """Listen on the Unix socket ``path`` (an old socket file there is replaced). Raises OSError."""
        listener = await self.loop.create_unix_server(lambda: Http2Connection(self), str(path))
        self._listeners.append((listener, path))
        if len(self._listeners) == 1:
            self.peer = f"unix:{path}"

    def admit(self, connection: Http2Connection) -> bool:
        """Return whether a new connection may stay (false once ``max_connections`` are open)."""
        if len(self.connections) >= self.max_connections:
            self.refused("refused a connection on %s: %d are open already", self.peer, len(self.connections))
            return False
        self.connections.add(connection)
        return True

    def discard(self, connection: Http2Connection) -> None:
        self.connections.discard(connection)

    async def run(self, call: Call, handler: Handler) -> None:
        """Run ``handler`` for ``call``, then end the call with its status."""
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await handler(call.requests(), call)
            call.finish(StatusCode.OK)
        except CallAborted as aborted:
            call.finish(aborted.code, aborted.details)
        except asyncio.CancelledError:
            call.reset(CANCEL)
            raise
        except StreamGone:
            call.reset(CANCEL)
        except Exception:
            log.exception("the call on stream %d failed", call.stream_id)
            call.finish(StatusCode.INTERNAL, "the arena failed")
        finally:
            self._tasks.discard(task)

    async def stop(self, grace: float) -> None:
        """Stop listening, give the calls ``grace`` seconds to end, cancel the rest and close every connection."""
        for listener, path in self._listeners:
            listener.close()
            with contextlib.suppress(OSError):
                path.unlink()
        if self._tasks and grace > 0:
            await asyncio.wait(list(self._tasks), timeout=grace)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks))
        for connection in list(self.connections):
            connection.close(NO_ERROR, "the arena stopped")
        for listener, _ in self._listeners:
            await listener.wait_closed()
        self._listeners.clear()
