"""The server side of a seat's stream (:class:`Connection`): answers are matched to requests by id."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import socket
from pathlib import Path

import grpc
import pytest
from grpc import aio

from arena.protocol.server import PROTOCOL_VERSION, ArenaServer, Connection, Outgoing, Slot
from arena.v2 import arena_pb2 as pb
from arena.v2 import arena_pb2_grpc as pb_grpc


def request(text: str) -> pb.DecisionRequest:
    return pb.DecisionRequest(choices=[text])


def test_a_late_answer_to_an_old_request_is_dropped_not_applied_to_the_current_one() -> None:
    """A bot answers request 1 after its time ran out, while request 2 waits: request 2 still waits, for its
    own answer, and gets that one; no fault is raised for the late answer."""

    async def scenario() -> pb.Answer:
        written: list[Outgoing] = []

        async def write(message: Outgoing) -> None:
            written.append(message)

        slot = Slot("bot", secrets.token_urlsafe(24))
        connection = Connection(slot, write)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(connection.ask(request("first")), 0.05)  # never answered in time
        second = asyncio.ensure_future(connection.ask(request("second")))
        await asyncio.sleep(0.01)
        connection.on_message(pb.BotMessage(answer=pb.Answer(request_id=1, picks=[7])))  # late, for request 1
        await asyncio.sleep(0.01)
        assert not second.done(), "the late answer to request 1 was taken for request 2"
        connection.on_message(pb.BotMessage(answer=pb.Answer(request_id=2, picks=[0])))
        answer = await asyncio.wait_for(second, 1.0)
        assert not connection.closed.is_set()
        assert len(written) == 2
        return answer

    answer = asyncio.run(scenario())
    assert answer.request_id == 2 and list(answer.picks) == [0]


@pytest.mark.process
@pytest.mark.parametrize("turns", range(5))
def test_a_start_cancelled_half_way_leaves_nothing_serving(tmp_path: Path, turns: int) -> None:
    """A bot's server whose start is cancelled (a bot started ahead that is no longer needed, a ladder ending)
    after ``turns`` turns of the loop: nothing serves on its socket afterwards, whichever turn the cancel came at.
    Before, a cancel in the middle of gRPC's start left its server running unowned: no one stopped it, and at exit
    its finalizer failed on the closed loop."""
    path = tmp_path / "arena.sock"

    async def scenario() -> None:
        server = ArenaServer.private()
        start = asyncio.ensure_future(server.start(f"unix:{path}"))
        for _ in range(turns):
            await asyncio.sleep(0)
        start.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await start
        await server.stop(0)  # what a session's stop does: it stops the server it knows of
        with socket.socket(socket.AF_UNIX) as probe, pytest.raises((ConnectionRefusedError, FileNotFoundError)):
            probe.connect(str(path))

    asyncio.run(scenario())


@pytest.mark.process
@pytest.mark.parametrize("closes", [True, False])
def test_a_goodbye_keeps_the_stream_until_the_bot_closes_its_side(tmp_path: Path, closes: bool) -> None:
    """A stopping server says goodbye and keeps the stream open until the bot closes its side, so the bot reads its
    goodbye before the connection goes (a server that ended the stream at once could close the connection under a
    goodbye not yet read: the bot saw its stream fail, ``Stream removed``); a bot that never closes is cut off when
    the server's goodbye grace ends."""

    async def main() -> None:
        server = ArenaServer(goodbye_grace=30.0 if closes else 0.1)
        address = await server.start(f"unix:{tmp_path / 'arena.sock'}")
        slot = server.add_slot("bot")
        async with aio.insecure_channel(address) as channel:
            call = pb_grpc.ArenaStub(channel).Play()
            await call.write(pb.BotMessage(hello=pb.Hello(token=slot.token, protocol_version=PROTOCOL_VERSION)))
            assert (await call.read()).WhichOneof("body") == "welcome"
            stopping = asyncio.ensure_future(server.stop(grace=60.0))
            assert (await call.read()).WhichOneof("body") == "goodbye"
            if closes:
                await asyncio.sleep(0.2)
                assert not call.done() and not stopping.done()  # the stream waits for the bot
                await call.done_writing()
                assert await call.read() is aio.EOF  # type: ignore[attr-defined]
                assert await call.code() == grpc.StatusCode.OK
            else:  # cut off once the grace ends: the stream ends, cleanly or removed under the bot
                with contextlib.suppress(aio.AioRpcError):
                    await call.read()
                assert call.done()
            await asyncio.wait_for(stopping, 30)

    asyncio.run(main())
