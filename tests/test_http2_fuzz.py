"""The arena's HTTP/2 server (arena/protocol/http2.py) fed frames a fuzzer makes, in-process (no socket).

Whatever a peer sends, the server either goes on or ends the connection with a GOAWAY: nothing it sends makes
``data_received`` raise (asyncio would then tear the connection down without a word), and what the server holds
for it (unparsed bytes, header blocks, unread messages) stays within the bounds the module states.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from typing import Any

import hpack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.protocol import http2
from arena.protocol.http2 import PREFACE, Call, Http2Connection, Http2Server, frame

SETTINGS = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PATH = "/test.Echo/Play"


class FakeTransport:
    """What the connection writes, kept; closing and aborting noted."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


async def echo(requests: AsyncIterator[bytes], call: Call) -> None:
    async for message in requests:
        await call.write(message)


HEADER_BLOCK = hpack.Encoder().encode([(":method", "POST"), (":scheme", "http"), (":path", PATH),
                                       (":authority", "x"), ("content-type", "application/grpc")])

anything = st.tuples(st.integers(0, 12), st.sampled_from([0, 0x1, 0x4, 0x5, 0x8, 0x20, 0x24, 0x25, 0xFF]),
                     st.sampled_from([0, 1, 2, 3, 5, 7, 0x7FFFFFFF]), st.binary(max_size=64))
messages = st.builds(lambda body, cut: (b"\x00" + struct.pack(">I", len(body)) + body)[:cut],
                     st.binary(max_size=40), st.integers(0, 64))
small = st.binary(max_size=10)
# mostly frames of the kinds a call is made of, each on the stream its kind goes on, so that sequences get past
# the opening and reach the states behind it; and some of anything
frames = st.lists(st.one_of(
    st.tuples(st.just(http2.DATA), st.sampled_from([0, 0, 0x1, 0x8]), st.sampled_from([1, 1, 3]), messages),
    st.tuples(st.just(http2.SETTINGS), st.sampled_from([0, 0, 0x1]), st.just(0), st.one_of(
        small, st.builds(lambda pairs: b"".join(struct.pack(">HI", k, v) for k, v in pairs),
                         st.lists(st.tuples(st.integers(0, 8), st.integers(0, (1 << 32) - 1)), max_size=3)))),
    st.tuples(st.just(http2.PING), st.sampled_from([0, 0x1]), st.just(0), small),
    st.tuples(st.just(http2.WINDOW_UPDATE), st.just(0), st.sampled_from([0, 1, 3]),
              st.one_of(small, st.builds(lambda n: struct.pack(">I", n), st.integers(0, (1 << 32) - 1)))),
    st.tuples(st.just(http2.RST_STREAM), st.just(0), st.sampled_from([1, 3, 5]), small),
    st.tuples(st.just(http2.HEADERS), st.sampled_from([0x4, 0x5, 0x0, 0x24, 0x8]), st.sampled_from([1, 3, 5, 7]),
              st.one_of(st.just(HEADER_BLOCK), small)),
    st.tuples(st.just(http2.CONTINUATION), st.sampled_from([0, 0x4]), st.sampled_from([1, 3]), small),
    anything,
), max_size=25)
OPENING = (http2.HEADERS, http2.END_HEADERS, 1, HEADER_BLOCK)


def written_frames(data: bytes) -> list[int]:
    """Return the types of the frames in what the server wrote."""
    kinds, at = [], 0
    while at + 9 <= len(data):
        kinds.append(data[at + 3])
        at += 9 + int.from_bytes(data[at:at + 3], "big")
    return kinds


@SETTINGS
@given(st.booleans(), frames, st.integers(1, 64))
def test_no_frames_make_the_server_raise_or_hold_more_than_its_bounds(
        opened: bool, sequence: list[tuple[int, int, int, bytes]], chunk: int) -> None:
    async def main() -> None:
        server = Http2Server(echo, path=PATH, decode=bytes, encode=bytes, max_message=1024, max_connections=8,
                             handshake_timeout=5, idle_timeout=10, refused=lambda *args: None)
        connection = Http2Connection(server)
        transport = FakeTransport()
        connection.connection_made(transport)  # type: ignore[arg-type]
        data = PREFACE + frame(http2.SETTINGS, 0, 0) + b"".join(frame(*f) for f in [*[OPENING] * opened, *sequence])
        for at in range(0, len(data), chunk):  # the bytes arrive cut anywhere
            connection.data_received(data[at:at + chunk])  # must never raise
            await asyncio.sleep(0)  # the calls' handlers run
            assert len(connection._buffer) < 9 + http2.MAX_FRAME_SIZE + chunk
            assert len(connection.calls) <= http2.MAX_CONCURRENT_STREAMS
            for call in connection.calls.values():
                assert call.unread() <= http2.STREAM_WINDOW + http2.MAX_FRAME_SIZE
            if connection.closing:
                assert transport.closed
                assert written_frames(bytes(transport.written))[-1] == http2.GOAWAY  # said why, then closed
                break
        connection.connection_lost(None)
        for _ in range(3):
            await asyncio.sleep(0)
        assert not server._tasks or all(t.done() for t in server._tasks)

    asyncio.run(main())
