"""The arena server against hostile streams, in-process: tokens, hellos, floods, garbage, other seats' requests.

Each test starts a server on a private Unix socket and talks to it with a raw gRPC client (bytes in, bytes out),
so it can send what no SDK would.
"""

from __future__ import annotations

import asyncio
import socket
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest
from grpc import aio

from arena.core.referee import FaultKind, SeatFault
from arena.protocol import server as server_module
from arena.protocol.server import ArenaServer, Connection, ServerError
from arena.v2 import arena_pb2 as pb

pytestmark = pytest.mark.process

METHOD = "/arena.v2.Arena/Play"


def hello(token: str) -> bytes:
    return pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2)).SerializeToString()


class RawBot:
    """A client stream that sends bytes the test gives it and reads the arena's messages."""

    def __init__(self, channel: aio.Channel) -> None:
        self.outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        call = channel.stream_stream(METHOD, request_serializer=lambda b: b,
                                     response_deserializer=pb.ArenaMessage.FromString)
        self.call = call(self._outgoing())

    async def _outgoing(self) -> AsyncIterator[bytes]:
        while (data := await self.outbox.get()) is not None:
            yield data

    def send(self, data: bytes) -> None:
        self.outbox.put_nowait(data)

    async def read(self) -> pb.ArenaMessage:
        return await asyncio.wait_for(self.call.read(), 5)  # type: ignore[no-any-return]

    async def status(self) -> grpc.StatusCode:
        """Read until the stream ends; return its status."""
        try:
            while await asyncio.wait_for(self.call.read(), 5) is not aio.EOF:  # type: ignore[attr-defined]
                pass
        except grpc.RpcError as exc:
            return exc.code()  # type: ignore[no-any-return]
        return await self.call.code()  # type: ignore[no-any-return]


def with_server(body: Callable[[ArenaServer, aio.Channel], Awaitable[None]]) -> None:
    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="arena-auth-") as folder:
            server = ArenaServer()
            address = await server.start(f"unix:{Path(folder) / 's.sock'}")
            try:
                async with aio.insecure_channel(address) as channel:
                    await asyncio.wait_for(body(server, channel), 20)
            finally:
                await server.stop(0)

    asyncio.run(main())


async def connect(server: ArenaServer, channel: aio.Channel, token: str) -> RawBot:
    bot = RawBot(channel)
    bot.send(hello(token))
    assert (await bot.read()).WhichOneof("body") == "welcome"
    return bot


def test_wrong_reused_and_missing_tokens_are_refused_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("alice")
        other = server.add_slot("bob")
        await connect(server, channel, slot.token)
        for token in ("", "made-up", slot.token):
            bot = RawBot(channel)
            bot.send(hello(token))
            assert await bot.status() == grpc.StatusCode.UNAUTHENTICATED, token
        removed = server.add_slot("carol")
        server.remove_slot(removed)
        bot = RawBot(channel)
        bot.send(hello(removed.token))
        assert await bot.status() == grpc.StatusCode.UNAUTHENTICATED
        assert other.connection is None  # nothing was bound to another seat

    with caplog.at_level("WARNING", logger="arena.protocol.server"):
        with_server(body)
    refusals = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused")]
    assert any(m.endswith("no token") for m in refusals)
    assert sum(m.endswith("unknown token") for m in refusals) == 2
    assert any("the token of 'alice' is already in use" in m for m in refusals)


def test_a_stream_must_start_with_a_hello_in_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "HELLO_TIMEOUT", 0.2)

    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("alice")
        bot = RawBot(channel)
        bot.send(pb.BotMessage(answer=pb.Answer(request_id=1)).SerializeToString())
        assert await bot.status() == grpc.StatusCode.UNAUTHENTICATED
        silent = RawBot(channel)
        await asyncio.sleep(0)
        assert await silent.status() == grpc.StatusCode.UNAUTHENTICATED
        garbage = RawBot(channel)
        garbage.send(b"\xff\xff\xff\xff")
        assert await garbage.status() == grpc.StatusCode.UNAUTHENTICATED
        assert not slot.used  # the token still works for its bot
        await connect(server, channel, slot.token)

    with_server(body)


def test_streams_waiting_for_a_hello_are_few(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server_module, "MAX_WAITING_STREAMS", 2)
    monkeypatch.setattr(server_module, "HELLO_TIMEOUT", 2.0)

    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        waiting = [RawBot(channel) for _ in range(2)]
        await asyncio.sleep(0.3)
        extra = RawBot(channel)
        assert await extra.status() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for bot in waiting:
            bot.call.cancel()

    with_server(body)


def test_a_flood_of_messages_closes_the_stream_as_a_malformed_answer() -> None:
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("flooder")
        bot = await connect(server, channel, slot.token)
        assert slot.connection is not None
        asking = asyncio.create_task(slot.connection.ask(pb.DecisionRequest()))
        assert (await bot.read()).WhichOneof("body") == "request"
        for _ in range(server_module.MESSAGE_BURST + 5):
            bot.send(pb.BotMessage(answer=pb.Answer(request_id=999_999)).SerializeToString())
        with pytest.raises(SeatFault) as fault:
            await asking
        assert fault.value.kind is FaultKind.MALFORMED
        # RESOURCE_EXHAUSTED, or INTERNAL when gRPC resets the stream with the bot's messages still in flight
        assert await bot.status() in (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL)
        assert "flood" in slot.connection.close_reason and not slot.online

    with_server(body)


def test_one_answer_per_request_is_never_a_flood() -> None:
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("steady")
        bot = await connect(server, channel, slot.token)
        connection = slot.connection
        assert connection is not None
        for _ in range(3 * server_module.MESSAGE_BURST):
            asking = asyncio.create_task(connection.ask(pb.DecisionRequest()))
            request = (await bot.read()).request
            for _ in range(2 if request.request_id % 4 == 0 else 1):  # now and then a repeated answer
                bot.send(pb.BotMessage(answer=pb.Answer(request_id=request.request_id)).SerializeToString())
            await asking
        assert slot.online

    with_server(body)


def test_bytes_that_do_not_parse_close_the_stream_as_malformed() -> None:
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("garbler")
        bot = await connect(server, channel, slot.token)
        assert slot.connection is not None
        asking = asyncio.create_task(slot.connection.ask(pb.DecisionRequest()))
        await bot.read()
        bot.send(b"\x12\xff\xff\xff\xff\x0f garbage")
        with pytest.raises(SeatFault) as fault:
            await asking
        assert fault.value.kind is FaultKind.MALFORMED
        assert await bot.status() == grpc.StatusCode.INVALID_ARGUMENT

    with_server(body)


def test_a_bot_cannot_answer_another_seats_request() -> None:
    """Request ids are per stream: alice's answer with bob's request id settles nothing of bob's."""
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        alice_slot, bob_slot = server.add_slot("alice"), server.add_slot("bob")
        alice = await connect(server, channel, alice_slot.token)
        bob = await connect(server, channel, bob_slot.token)
        assert alice_slot.connection is not None and bob_slot.connection is not None
        to_alice = asyncio.create_task(alice_slot.connection.ask(pb.DecisionRequest()))
        to_bob = asyncio.create_task(bob_slot.connection.ask(pb.DecisionRequest()))
        alice_id = (await alice.read()).request.request_id
        bob_id = (await bob.read()).request.request_id
        assert alice_id == bob_id == 1  # the same number, on two streams
        alice.send(pb.BotMessage(answer=pb.Answer(request_id=bob_id, picks=[7])).SerializeToString())
        assert list((await to_alice).picks) == [7]
        await asyncio.sleep(0.1)
        assert not to_bob.done(), "alice's answer settled bob's request"
        bob.send(pb.BotMessage(answer=pb.Answer(request_id=bob_id, picks=[3])).SerializeToString())
        assert list((await to_bob).picks) == [3]

    with_server(body)


def test_answers_owed_past_the_deadline_are_remembered_until_they_come() -> None:
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("slow")
        bot = await connect(server, channel, slot.token)
        connection: Connection | None = slot.connection
        assert connection is not None
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(connection.ask(pb.DecisionRequest()), 0.05)
        assert slot.owes_answers
        request_id = (await bot.read()).request.request_id
        bot.send(pb.BotMessage(answer=pb.Answer(request_id=request_id)).SerializeToString())
        for _ in range(100):
            if not slot.owes_answers:
                break
            await asyncio.sleep(0.01)
        assert not slot.owes_answers and slot.online  # a late answer is dropped, not a fault

    with_server(body)


def test_a_bot_that_never_reads_its_stream_loses_it_and_never_holds_up_the_arena() -> None:
    """Requests pile up in a stream nobody reads until a write cannot complete: the deadline still holds."""
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("deaf")
        await connect(server, channel, slot.token)  # reads its welcome, and never again
        connection = slot.connection
        assert connection is not None
        big = pb.DecisionRequest(match_id="m" * 1_000_000)
        loop = asyncio.get_running_loop()
        timeouts = 0
        for _ in range(60):  # at most 60 MB, far beyond what gRPC buffers for a stream
            started = loop.time()
            try:
                await asyncio.wait_for(connection.ask(big), 0.05)
            except TimeoutError:
                timeouts += 1
            except SeatFault as fault:
                assert fault.kind is FaultKind.DISCONNECT
                break
            assert loop.time() - started < 1.0
        else:
            pytest.fail("60 requests of 1 MB were all written to a stream that is never read")
        assert timeouts > 0 and not slot.online
        assert "does not read its stream" in connection.close_reason
        await asyncio.wait_for(connection.flushed.wait(), 1)  # the stream ends; the server can stop

    with_server(body)


def test_a_deadline_shorter_than_a_write_never_costs_a_healthy_bot_its_stream() -> None:
    """With a 0.1 ms deadline the referee gives up while the request is still being written: not the bot's fault."""
    async def body(server: ArenaServer, channel: aio.Channel) -> None:
        slot = server.add_slot("healthy")
        bot = await connect(server, channel, slot.token)
        connection = slot.connection
        assert connection is not None
        for _ in range(50):
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(connection.ask(pb.DecisionRequest(), 0.0001), 0.0001)
        for _ in range(50):  # the bot reads every request, just too late to answer
            assert (await bot.read()).WhichOneof("body") == "request"
        assert slot.online, connection.close_reason

    with_server(body)


def test_a_port_in_use_is_a_clear_error() -> None:
    async def main() -> None:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            with pytest.raises(ServerError, match=rf"cannot listen on '127.0.0.1:{port}': .*in use"):
                await ArenaServer().start(f"127.0.0.1:{port}")
        first = ArenaServer()
        address = await first.start("127.0.0.1:0")
        try:  # another arena on the same port: refused, never shared (no SO_REUSEPORT)
            with pytest.raises(ServerError, match="in use"):
                await ArenaServer().start(address)
        finally:
            await first.stop(0)
        with pytest.raises(ServerError, match="HOST:PORT"):
            await ArenaServer().start("127.0.0.1:notaport")

    asyncio.run(main())
