"""The arena's own HTTP/2 server (arena/protocol/http2.py) against peers that send what no gRPC client would.

Each test serves an echo call (every message written back, the call ended when the peer ends its side) on a Unix
socket and talks to it with raw frames, or with a gRPC client where the behaviour a bot sees is the point. A
protocol error must end the peer's connection (GOAWAY with the code RFC 9113 names) and leave the server serving
the next one; a peer may never make it hold more than its bounds. The last tests are the same module's client (the
Python SDK's) against gRPC's own server and the arena's, and what it sends.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc
import hpack
import pytest
from grpc import aio

from arena.protocol import http2
from arena.protocol.http2 import (
    ACK,
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    GOAWAY,
    HEADERS,
    PADDED,
    PING,
    PREFACE,
    RST_STREAM,
    SETTINGS,
    WINDOW_UPDATE,
    Call,
    Http2Server,
    frame,
)
from arena.protocol.server import ArenaServer
from arena.v2 import arena_pb2 as pb

pytestmark = pytest.mark.process

PATH = "/test.Echo/Play"
MAX_MESSAGE = 1024
Frame = tuple[int, int, int, bytes]


async def echo(requests: AsyncIterator[bytes], call: Call) -> None:
    async for message in requests:
        await call.write(message)


def serve(body: Callable[[Path, Http2Server], Awaitable[None]], tmp_path: Path, *, handler: http2.Handler = echo,
          max_message: int = MAX_MESSAGE, handshake: float = 5.0, idle: float = 10.0, max_connections: int = 8,
          loop: str = "asyncio") -> None:
    """Serve ``handler`` on a Unix socket in ``tmp_path`` and run ``body(socket_path, server)``, then stop."""
    async def main() -> None:
        server = Http2Server(handler, path=PATH, decode=bytes, encode=bytes, max_message=max_message,
                             max_connections=max_connections, handshake_timeout=handshake, idle_timeout=idle)
        socket_path = tmp_path / "h2.sock"
        await server.listen(socket_path)
        try:
            await asyncio.wait_for(body(socket_path, server), 20)
        finally:
            await server.stop(0)

    if loop == "uvloop":
        import uvloop

        uvloop.run(main())
    else:
        asyncio.run(main())


def call_headers(path: str = PATH, method: str = "POST") -> bytes:
    return hpack.Encoder().encode([(":method", method), (":scheme", "http"), (":path", path),
                                   (":authority", "localhost"), ("content-type", "application/grpc"),
                                   ("te", "trailers")])


def message(body: bytes, compressed: bool = False) -> bytes:
    return bytes((int(compressed),)) + struct.pack(">I", len(body)) + body


class Peer:
    """A raw HTTP/2 client: writes the bytes a test gives it, reads the server's frames."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, path: Path, *, handshake: bool = True) -> Peer:
        reader, writer = await asyncio.open_unix_connection(str(path))
        peer = cls(reader, writer)
        if handshake:
            peer.send(PREFACE + frame(SETTINGS, 0, 0))
        return peer

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def next_frame(self, timeout: float = 5.0) -> Frame | None:
        """Return the server's next frame, or None when it closed the connection."""
        try:
            head = await asyncio.wait_for(self.reader.readexactly(9), timeout)
            length = int.from_bytes(head[:3], "big")
            payload = await asyncio.wait_for(self.reader.readexactly(length), timeout)
        except (asyncio.IncompleteReadError, ConnectionResetError):
            return None
        return head[3], head[4], int.from_bytes(head[5:9], "big") & 0x7FFFFFFF, payload

    async def until(self, kind: int, stream: int | None = None) -> Frame:
        """Return the next frame of ``kind`` (on ``stream``), skipping the others; fail if the connection ends."""
        while (got := await self.next_frame()) is not None:
            if got[0] == kind and (stream is None or got[2] == stream):
                return got
        raise AssertionError(f"the connection ended before a frame of type {kind}")

    async def goaway(self) -> int:
        """Read until the server's GOAWAY; return its error code, after checking the connection then closes."""
        code = int.from_bytes((await self.until(GOAWAY))[3][4:8], "big")
        while await self.next_frame() is not None:
            pass
        return code

    async def messages(self, stream: int, count: int) -> list[bytes]:
        """Return the next ``count`` messages the server sends on ``stream``."""
        data = b""
        out: list[bytes] = []
        while len(out) < count:
            data += (await self.until(DATA, stream))[3]
            while len(data) >= 5 and len(data) >= 5 + (size := int.from_bytes(data[1:5], "big")):
                out.append(data[5:5 + size])
                data = data[5 + size:]
        return out

    def close(self) -> None:
        self.writer.close()


async def echoes(path: Path) -> None:
    """Check that the server still serves a well-behaved peer."""
    peer = await Peer.open(path)
    peer.send(frame(HEADERS, END_HEADERS, 1, call_headers()) + frame(DATA, 0, 1, message(b"still here")))
    assert await peer.messages(1, 1) == [b"still here"]
    peer.close()


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_call_echoes_and_ends_with_ok_trailers(tmp_path: Path, loop: str) -> None:
    """The good path in raw frames: response headers, the messages, then trailers with grpc-status 0; on
    asyncio's loop and on uvloop's (whose transports are not asyncio's classes)."""
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        peer.send(frame(HEADERS, END_HEADERS, 1, call_headers()) + frame(DATA, 0, 1, message(b"one") + message(b"")))
        headers = await peer.until(HEADERS, 1)
        assert dict(hpack.Decoder().decode(headers[3]))[":status"] == "200"
        assert await peer.messages(1, 2) == [b"one", b""]
        # a message split over three frames, one of them padded
        whole = message(b"x" * 300)
        peer.send(frame(DATA, 0, 1, whole[:2]) + frame(DATA, PADDED, 1, bytes((7,)) + whole[2:100] + bytes(7))
                  + frame(DATA, END_STREAM, 1, whole[100:]))
        assert await peer.messages(1, 1) == [b"x" * 300]
        end = await peer.until(HEADERS, 1)
        assert end[1] & END_STREAM
        assert dict(hpack.Decoder().decode(end[3]))["grpc-status"] == "0"
        peer.close()

    serve(body, tmp_path, loop=loop)


@pytest.mark.parametrize(("what", "data", "code"), [
    ("not HTTP/2 at all", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", http2.PROTOCOL_ERROR),
    ("a frame before SETTINGS", PREFACE + frame(PING, 0, 0, bytes(8)), http2.PROTOCOL_ERROR),
    ("a frame over 16 KiB", PREFACE + frame(SETTINGS, 0, 0) + frame(DATA, 0, 1, bytes(20_000)),
     http2.FRAME_SIZE_ERROR),
    ("DATA on a stream never opened", PREFACE + frame(SETTINGS, 0, 0) + frame(DATA, 0, 5, b"x"),
     http2.PROTOCOL_ERROR),
    ("a header block that does not decode", PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 1,
                                                                                     b"\xff\xff\xff\xff\xff"),
     http2.COMPRESSION_ERROR),
    ("a stream of even id", PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 2, call_headers()),
     http2.PROTOCOL_ERROR),
    ("a PING of 7 bytes", PREFACE + frame(SETTINGS, 0, 0) + frame(PING, 0, 0, bytes(7)), http2.FRAME_SIZE_ERROR),
    ("a window update of 0", PREFACE + frame(SETTINGS, 0, 0) + frame(WINDOW_UPDATE, 0, 0, bytes(4)),
     http2.PROTOCOL_ERROR),
    ("a window grown past 2^31 - 1", PREFACE + frame(SETTINGS, 0, 0)
     + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", (1 << 31) - 1)), http2.FLOW_CONTROL_ERROR),
    ("a settings frame of 5 bytes", PREFACE + frame(SETTINGS, 0, 0) + frame(SETTINGS, 0, 0, bytes(5)),
     http2.FRAME_SIZE_ERROR),
    ("a push from the client", PREFACE + frame(SETTINGS, 0, 0) + frame(http2.PUSH_PROMISE, END_HEADERS, 1, bytes(4)),
     http2.PROTOCOL_ERROR),
    ("CONTINUATION out of a header block", PREFACE + frame(SETTINGS, 0, 0) + frame(CONTINUATION, END_HEADERS, 1),
     http2.PROTOCOL_ERROR),
    ("a frame in the middle of a header block", PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, 0, 1, call_headers())
     + frame(PING, 0, 0, bytes(8)), http2.PROTOCOL_ERROR),
    ("not a gRPC call", PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 1, call_headers(method="GET")),
     http2.PROTOCOL_ERROR),
    ("padding longer than its frame", PREFACE + frame(SETTINGS, 0, 0) + frame(HEADERS, END_HEADERS, 1, call_headers())
     + frame(DATA, PADDED, 1, bytes((9,)) + b"abc"), http2.PROTOCOL_ERROR),
])
def test_a_protocol_error_ends_the_connection_with_its_code_and_the_server_serves_on(
        tmp_path: Path, what: str, data: bytes, code: int) -> None:
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path, handshake=False)
        peer.send(data)
        if what == "not HTTP/2 at all":  # a GOAWAY is written, then the connection closes
            assert await peer.goaway() == code
        else:
            assert await peer.goaway() == code, what
        await echoes(path)
        assert len(server.connections) <= 1

    serve(body, tmp_path)


def test_a_flood_of_pings_is_cut_off(tmp_path: Path) -> None:
    """Pings, settings and window updates nobody asked for: after MAX_FRAMES_UNANSWERED, ENHANCE_YOUR_CALM."""
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        peer.send(frame(PING, 0, 0, bytes(8)) * (http2.MAX_FRAMES_UNANSWERED + 10))
        acks = 0
        while (got := await peer.next_frame()) is not None and got[0] != GOAWAY:
            acks += got[0] == PING and got[1] & ACK
        assert got is not None and int.from_bytes(got[3][4:8], "big") == http2.ENHANCE_YOUR_CALM
        assert acks <= http2.MAX_FRAMES_UNANSWERED
        await echoes(path)

    serve(body, tmp_path)


def test_pings_answered_between_messages_are_no_flood(tmp_path: Path) -> None:
    """A ping a message (gRPC clients probe the bandwidth so) goes on for as long as the call does."""
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        peer.send(frame(HEADERS, END_HEADERS, 1, call_headers()))
        for i in range(3 * http2.MAX_FRAMES_UNANSWERED):
            peer.send(frame(DATA, 0, 1, message(b"%d" % i)) + frame(PING, 0, 0, bytes(8)))
            assert await peer.messages(1, 1) == [b"%d" % i]
        peer.close()

    serve(body, tmp_path)


def test_streams_are_bounded_at_once_and_in_a_connections_life(tmp_path: Path) -> None:
    """A fifth stream at once is refused (RST_STREAM REFUSED_STREAM); opening and resetting streams over and
    over (the "rapid reset" attack) ends the connection after MAX_STREAMS_PER_CONNECTION."""
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        for stream in (1, 3, 5, 7, 9):
            peer.send(frame(HEADERS, END_HEADERS, stream, call_headers()))
        refused = await peer.until(RST_STREAM, 9)
        assert int.from_bytes(refused[3], "big") == http2.REFUSED_STREAM
        peer.send(frame(DATA, 0, 7, message(b"seven")))
        assert await peer.messages(7, 1) == [b"seven"]
        peer.close()

        peer = await Peer.open(path)
        for i in range(http2.MAX_STREAMS_PER_CONNECTION + 1):
            stream = 2 * i + 1
            peer.send(frame(HEADERS, END_HEADERS, stream, call_headers()) + frame(RST_STREAM, 0, stream, bytes(4)))
        assert await peer.goaway() == http2.ENHANCE_YOUR_CALM
        await echoes(path)

    serve(body, tmp_path)


def test_a_header_block_is_bounded(tmp_path: Path) -> None:
    """CONTINUATION frames that never end a header block: cut off once the block passes the header list bound."""
    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        peer.send(frame(HEADERS, 0, 1, call_headers()))
        for _ in range(http2.MAX_HEADER_LIST_SIZE // 4096 + 2):
            peer.send(frame(CONTINUATION, 0, 1, bytes(4096)))
        assert await peer.goaway() == http2.ENHANCE_YOUR_CALM
        await echoes(path)

    serve(body, tmp_path)


def test_data_beyond_the_window_is_a_flow_control_error(tmp_path: Path) -> None:
    """A peer may send a stream no more than its window ahead of the call's reads (a call that reads nothing)."""
    async def deaf(requests: AsyncIterator[bytes], call: Call) -> None:
        await asyncio.sleep(30)

    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        peer.send(frame(HEADERS, END_HEADERS, 1, call_headers()))
        chunk = bytes(http2.MAX_FRAME_SIZE)
        for _ in range(http2.STREAM_WINDOW // len(chunk) + 1):
            peer.send(frame(DATA, 0, 1, chunk))
        assert await asyncio.wait_for(peer.goaway(), 10) == http2.FLOW_CONTROL_ERROR

    serve(body, tmp_path, handler=deaf, max_message=1 << 20)


@pytest.mark.parametrize("compressed", [False, True])
def test_a_message_too_large_or_compressed_fails_the_call_not_the_server(tmp_path: Path, compressed: bool) -> None:
    """The reader gets MessageRefused (the call's status says so), before the message is even all there."""
    seen: list[str] = []

    async def reader(requests: AsyncIterator[Any], call: Call) -> None:
        try:
            await call.read()
        except http2.MessageRefused as exc:
            seen.append(str(exc))
            await call.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))

    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)
        size = 10 if compressed else MAX_MESSAGE + 1
        peer.send(frame(HEADERS, END_HEADERS, 1, call_headers())
                  + frame(DATA, 0, 1, message(bytes(size), compressed)[:50]))
        end = await peer.until(HEADERS, 1)
        end = await peer.until(HEADERS, 1) if not end[1] & END_STREAM else end
        status = dict(hpack.Decoder().decode(end[3]))
        assert status["grpc-status"] == str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])
        assert ("compressed" if compressed else f"{MAX_MESSAGE + 1} bytes") in status["grpc-message"]

    serve(body, tmp_path, handler=reader)
    assert len(seen) == 1


def test_connections_are_bounded_and_a_silent_one_times_out(tmp_path: Path) -> None:
    """Past max_connections a new connection is closed at once; one that never completes its handshake, or
    holds no stream, is closed after its timeout."""
    async def body(path: Path, server: Http2Server) -> None:
        silent = [await Peer.open(path, handshake=False) for _ in range(2)]
        extra = await Peer.open(path)
        assert await extra.next_frame() is None  # closed at once, nothing written
        for peer in silent:  # both handshakes time out, which makes room again
            assert await peer.goaway() == http2.NO_ERROR
        idle = await Peer.open(path)
        assert (await idle.next_frame())[0] == SETTINGS  # type: ignore[index]
        assert await idle.goaway() == http2.NO_ERROR  # idle: no stream
        await echoes(path)

    serve(body, tmp_path, handshake=0.3, idle=0.3, max_connections=2)


def test_a_peer_that_does_not_read_holds_up_only_its_own_write(tmp_path: Path) -> None:
    """Writes wait for the peer's window: a write that cannot complete is cancellable, and the stream is reset
    rather than left with half a message; the server goes on serving."""
    written: list[int] = []

    async def flood(requests: AsyncIterator[bytes], call: Call) -> None:
        await call.read()
        for i in range(100):
            try:
                await asyncio.wait_for(call.write(bytes(60_000)), 0.2)
            except TimeoutError:
                written.append(i)
                return

    async def body(path: Path, server: Http2Server) -> None:
        peer = await Peer.open(path)  # its window: 65,535 bytes, never granted more
        peer.send(frame(HEADERS, END_HEADERS, 1, call_headers()) + frame(DATA, 0, 1, message(b"go")))
        reset = await peer.until(RST_STREAM, 1)
        assert int.from_bytes(reset[3], "big") == http2.CANCEL
        assert written == [1]  # the first write fits the window, the second cannot complete
        other = await Peer.open(path)  # the next peer is served, its first write whole
        other.send(frame(HEADERS, END_HEADERS, 1, call_headers()) + frame(DATA, 0, 1, message(b"go")))
        assert await other.messages(1, 1) == [bytes(60_000)]

    serve(body, tmp_path, handler=flood)


def test_grpc_message_trailers_decode_as_sent() -> None:
    """Trailers written without HPACK state decode to the status and the percent-encoded message, long ones too."""
    details = "ünïcode, 100% " + "long " * 60
    decoded = dict(hpack.Decoder().decode(http2.trailers(grpc.StatusCode.UNAUTHENTICATED, details)))
    assert decoded["grpc-status"] == "16"
    assert decoded["grpc-message"].startswith("%C3%BCn%C3%AFcode, 100%25 long")
    assert len(decoded["grpc-message"]) > 300
    assert dict(hpack.Decoder().decode(http2.trailers(grpc.StatusCode.OK, "ignored"))) == {"grpc-status": "0"}


def test_a_grpc_client_sees_unimplemented_for_another_method_and_its_status_and_message(tmp_path: Path) -> None:
    """Through gRPC's own client: an unknown method, and the status and message a handler aborts with."""
    async def aborting(requests: AsyncIterator[bytes], call: Call) -> None:
        await call.read()
        await call.abort(grpc.StatusCode.PERMISSION_DENIED, "not you: ünïcode")

    async def body(path: Path, server: Http2Server) -> None:
        async with aio.insecure_channel(f"unix:{path}") as channel:
            other = channel.stream_stream("/test.Echo/Other", request_serializer=bytes,
                                          response_deserializer=bytes)()
            await other.write(b"hi")  # answered once the message came: the write does not fail
            assert await other.code() == grpc.StatusCode.UNIMPLEMENTED
            play = channel.stream_stream(PATH, request_serializer=bytes, response_deserializer=bytes)()
            await play.write(b"hi")
            assert await play.code() == grpc.StatusCode.PERMISSION_DENIED
            assert await play.details() == "not you: ünïcode"

    serve(body, tmp_path, handler=aborting)


def test_the_arena_serves_a_launched_bots_socket_by_its_own_server_and_grpc_clients_play_on_it(
        tmp_path: Path) -> None:
    """ArenaServer on a Unix socket: the HTTP/2 server here, a gRPC bot says hello and is welcomed."""
    async def main() -> None:
        server = ArenaServer.private()
        address = await server.start(f"unix:{tmp_path / 'arena.sock'}")
        try:
            assert server._http2 is not None and server._server is None  # no gRPC server was started
            slot = server.add_slot("bot")
            async with aio.insecure_channel(address) as channel:
                call = channel.stream_stream("/arena.v2.Arena/Play", request_serializer=bytes,
                                             response_deserializer=pb.ArenaMessage.FromString)()
                await call.write(pb.BotMessage(hello=pb.Hello(token=slot.token, protocol_version=2))
                                 .SerializeToString())
                assert (await call.read()).WhichOneof("body") == "welcome"
                assert slot.online
        finally:
            await server.stop(0)

    asyncio.run(main())


# ------------------------------------------------------------------------------------------------ the client side


@pytest.mark.parametrize("where", ["unix", "tcp"])
def test_the_client_talks_to_grpcs_own_server_and_reads_its_status(tmp_path: Path, where: str) -> None:
    """The SDK's client against gRPC's server (what remote bots meet over TCP): messages both ways, OK at the end,
    and a failure's status and message (percent-encoded by gRPC) as the server sent them."""
    class Servicer:
        async def echo(self, requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
            async for request in requests:
                if request == b"fail":
                    await context.abort(grpc.StatusCode.PERMISSION_DENIED, "not you: ünïcode 100%")
                yield request

    async def main() -> None:
        server = aio.server()
        handler = grpc.stream_stream_rpc_method_handler(Servicer().echo)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Echo", {"Play": handler}),))
        address = f"unix:{tmp_path / 'g.sock'}"
        if where == "tcp":
            address = f"127.0.0.1:{server.add_insecure_port('127.0.0.1:0')}"
        else:
            server.add_insecure_port(address)
        await server.start()
        try:
            call = await http2.connect(address, PATH, decode=bytes, encode=bytes, max_message=2 << 20)
            # the last two over several frames and window updates, the last larger than a stream's window: it is
            # granted again as it comes, or it could never come whole
            for body in (b"one", b"", b"x" * 100_000, b"y" * (1 << 20)):
                await call.write(body)
                assert await asyncio.wait_for(call.read(), 10) == body
            call.close()
            call = await http2.connect(address, PATH, decode=bytes, encode=bytes, max_message=1 << 20)
            await call.write(b"fail")
            with pytest.raises(http2.CallFailed) as failed:
                await call.read()
            assert failed.value.code == http2.StatusCode.PERMISSION_DENIED
            assert failed.value.details == "not you: ünïcode 100%"
            call.close()
        finally:
            await server.stop(0)

    asyncio.run(main())


def test_the_client_reads_to_the_end_then_eof_and_says_why_it_cannot_connect(tmp_path: Path) -> None:
    async def body(path: Path, server: Http2Server) -> None:
        call = await http2.connect(f"unix:{path}", PATH, decode=bytes, encode=bytes,
                                   max_message=MAX_MESSAGE)
        await call.write(b"last")
        call.done_writing()  # this side ends: the echo ends the call once it has answered
        assert await call.read() == b"last"
        assert await call.read() is http2.EOF and call.code is http2.StatusCode.OK
        with pytest.raises(http2.StreamGone):
            await call.write(b"after the end")
        call.close()
        with pytest.raises(http2.CallFailed, match=r"UNAVAILABLE.*cannot connect"):
            await http2.connect(f"unix:{tmp_path / 'nothing.sock'}", PATH, decode=bytes, encode=bytes,
                                max_message=MAX_MESSAGE)

    serve(body, tmp_path)


@pytest.mark.parametrize(("address", "where"), [
    ("unix:/run/arena/arena.sock", "/run/arena/arena.sock"), ("unix:///tmp/a.sock", "/tmp/a.sock"),
    ("127.0.0.1:50051", ("127.0.0.1", 50051)), ("dns:///arena.example:443", ("arena.example", 443)),
    ("[::1]:7000", ("::1", 7000)), ("ipv4:10.0.0.1:9", ("10.0.0.1", 9)),
])
def test_a_grpc_target_names_a_socket_or_a_host_and_port(address: str, where: object) -> None:
    assert http2.target(address) == where


@pytest.mark.parametrize("address", ["arena.example", "host:port", ":50051"])
def test_a_target_the_client_cannot_reach_is_an_error(address: str) -> None:
    with pytest.raises(ValueError, match="not an address"):
        http2.target(address)


def test_the_sdk_says_why_its_stream_failed_and_exits_1(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A bot whose token is refused: the SDK prints the arena's status and message, and serve returns 1."""
    from arena.games.lama.bots.greedy.bot import GreedyLama
    from arena.sdk import serve

    async def main() -> int:
        server = ArenaServer.private()
        address = await server.start(f"unix:{tmp_path / 'arena.sock'}")
        try:
            return await asyncio.to_thread(serve, GreedyLama(), address, "not-a-token-anyone-was-given")
        finally:
            await server.stop(0)

    assert asyncio.run(main()) == 1
    err = capfd.readouterr().err
    assert "arena: stream failed: StatusCode.UNAUTHENTICATED: missing, unknown or already used token" in err


def test_refused_connections_go_to_the_arenas_bounded_refusal_log(tmp_path: Path,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """A bot that connects over and over past its server's bound is refused each time, and the log says so a
    bounded number of times (the arena's RefusalLog), however many times it tries."""
    from arena.protocol import server as server_module

    async def main() -> int:
        server = ArenaServer.private()
        await server.start(f"unix:{tmp_path / 'arena.sock'}")
        try:
            held = [await Peer.open(tmp_path / "arena.sock") for _ in range(server_module.PRIVATE_CONNECTIONS)]
            for peer in held:
                assert (await peer.next_frame())[0] == SETTINGS  # type: ignore[index]  # all admitted
            for _ in range(20):
                extra = await Peer.open(tmp_path / "arena.sock")
                assert await extra.next_frame() is None  # closed at once
            return server.refusals.total
        finally:
            await server.stop(0)

    with caplog.at_level("WARNING", logger="arena.protocol.server"):
        assert asyncio.run(main()) == 20
    refusals = [r for r in caplog.records if "refused a connection" in r.getMessage()]
    assert 1 <= len(refusals) <= server_module.REFUSAL_LOG_BURST


def test_the_clients_headers_are_a_grpc_call_and_its_agent_only_printable_ascii(tmp_path: Path) -> None:
    """What the client opens a call with, read raw: a gRPC call to the path, and the bot's agent (its author's
    text) with the characters a header may not carry (RFC 9113, 8.2.1: NUL, CR, LF...) replaced, and cut."""
    seen: list[dict[str, str]] = []

    async def main() -> None:
        got = asyncio.get_running_loop().create_future()

        async def raw(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            assert await reader.readexactly(len(PREFACE)) == PREFACE
            while True:
                head = await reader.readexactly(9)
                payload = await reader.readexactly(int.from_bytes(head[:3], "big"))
                if head[3] == HEADERS:
                    got.set_result(dict(hpack.Decoder().decode(payload)))
                    writer.close()
                    return

        server = await asyncio.start_unix_server(raw, str(tmp_path / "raw.sock"))
        async with server:
            call = await http2.connect(f"unix:{tmp_path / 'raw.sock'}", PATH, decode=bytes, encode=bytes,
                                       max_message=MAX_MESSAGE, agent="bøt\r\n\x00 " + "long" * 100)
            seen.append(await asyncio.wait_for(got, 5))
            call.close()

    asyncio.run(main())
    headers = seen[0]
    assert (headers[":method"], headers[":path"], headers["te"]) == ("POST", PATH, "trailers")
    assert headers["content-type"] == "application/grpc"
    assert headers["user-agent"].startswith("b?t??? long") and len(headers["user-agent"]) == 200


def test_a_message_larger_than_a_streams_window_comes_whole_both_ways(tmp_path: Path) -> None:
    """A message may be larger than the window a stream is given (up to the largest message read): its bytes are
    granted again as they come, so it comes whole; through gRPC's own client, to the arena's server and back."""
    async def body(path: Path, server: Http2Server) -> None:
        async with aio.insecure_channel(f"unix:{path}") as channel:
            call = channel.stream_stream(PATH, request_serializer=bytes, response_deserializer=bytes)()
            for body in (b"a" * (http2.STREAM_WINDOW + 1), b"b" * (1 << 20), b"small"):
                await call.write(body)
                assert await asyncio.wait_for(call.read(), 10) == body
            await call.done_writing()
            assert await call.code() == grpc.StatusCode.OK

    serve(body, tmp_path, max_message=2 << 20)


def test_messages_compressed_as_grpcs_clients_do_are_read_and_a_compression_bomb_is_not(tmp_path: Path) -> None:
    """gRPC's clients may compress (gzip, deflate) what they send, as gRPC's own server reads: so does the arena's.
    A message that would inflate past the largest message read is refused before it is inflated whole."""
    import gzip

    seen: list[str] = []

    async def reader(requests: AsyncIterator[bytes], call: Call) -> None:
        try:
            async for message in requests:
                await call.write(message)
        except http2.MessageRefused as exc:
            seen.append(str(exc))
            await call.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))

    async def body(path: Path, server: Http2Server) -> None:
        for compression in (grpc.Compression.Gzip, grpc.Compression.Deflate):
            async with aio.insecure_channel(f"unix:{path}", compression=compression) as channel:
                call = channel.stream_stream(PATH, request_serializer=bytes, response_deserializer=bytes)()
                for body in (b"z" * 900, b"hello"):
                    await call.write(body)
                    assert await asyncio.wait_for(call.read(), 5) == body
                await call.done_writing()
                assert await call.code() == grpc.StatusCode.OK
        bomb = gzip.compress(bytes(1 << 19))  # half a kilobyte that inflates to half a megabyte
        assert len(bomb) < MAX_MESSAGE
        gzip_headers = hpack.Encoder().encode([(":method", "POST"), (":scheme", "http"), (":path", PATH),
                                               (":authority", "x"), ("content-type", "application/grpc"),
                                               ("grpc-encoding", "gzip")])
        peer = await Peer.open(path)
        peer.send(frame(HEADERS, END_HEADERS, 1, gzip_headers) + frame(DATA, 0, 1, message(bomb, True)))
        end = await peer.until(HEADERS, 1)
        assert dict(hpack.Decoder().decode(end[3]))["grpc-status"] == str(
            grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])

    serve(body, tmp_path, handler=reader)
    assert len(seen) == 1 and "once inflated" in seen[0]


def test_a_bot_that_compresses_its_stream_is_welcomed_by_the_arena(tmp_path: Path) -> None:
    """Through the arena's server itself: a gRPC bot with gzip on says hello, compressed, and is let in."""
    async def main() -> None:
        server = ArenaServer.private()
        address = await server.start(f"unix:{tmp_path / 'arena.sock'}")
        try:
            slot = server.add_slot("zipped")
            async with aio.insecure_channel(address, compression=grpc.Compression.Gzip) as channel:
                call = channel.stream_stream("/arena.v2.Arena/Play", request_serializer=bytes,
                                             response_deserializer=pb.ArenaMessage.FromString)()
                await call.write(pb.BotMessage(hello=pb.Hello(token=slot.token, protocol_version=2,
                                                              agent="z" * 500)).SerializeToString())
                assert (await asyncio.wait_for(call.read(), 5)).WhichOneof("body") == "welcome"
                assert slot.online
        finally:
            await server.stop(0)

    asyncio.run(main())
