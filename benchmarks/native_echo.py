"""What a native seat would save: the bare stream's server CPU per round trip, grpc.aio against C++.

Run: python benchmarks/native_echo.py [--rounds N] [--turns N] [--arena-http2] [--h2] [--no-native] [--json]

Issue 38 asks for the arena's CPU per decision under 150 us; docs/figures.md finds most of what is left in
grpc.aio's own work (its poller thread handing every completion to the event loop). Before a native seat is
written behind the ``Seat`` port, this measures its ceiling: the same ping-pong as ``benchmarks/protocol.py``'s
bare stream (one request each way, the same Python client process over a Unix socket, the arena's gRPC settings),
served once by grpc.aio in this process and once by ``native_echo/echo.cc`` (gRPC's C++ callback API, built here
into a temporary folder with protoc, grpc_cpp_plugin, g++ and pkg-config's grpc++), in turns. It prints each
server's CPU per round trip (user and kernel, from ``os.times`` and ``getrusage``) and the wall time per round trip,
the median over the turns (grpc.aio's figures include its server's start and the client's launch, as
``benchmarks/decision.py``'s bare figure does: a few microseconds a round trip at 3,000; the C++ CPU is counted from
its server's start, its wall time includes the client's launch too). It needs the C++ toolchain of the C++
example bot (see .ci/run); ``--no-native`` leaves the C++ server out.

Two more servers say what a transport in Python without gRPC's C core costs, served in this process on asyncio's
own loop (no poller thread, no hand-over of completions) to the same gRPC client: ``--arena-http2`` by the arena's
own HTTP/2 server (:mod:`arena.protocol.http2`, which serves the launched bots), and ``--h2`` through the ``h2``
package (python-hyper's HTTP/2 state machine, not a dependency of the arena: ``pip install h2``).
"""

from __future__ import annotations

from arena.protocol import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import argparse
import asyncio
import importlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from protocol import ECHO_CLIENT, bare_round_trip  # the bare stream of benchmarks/protocol.py

from arena.protocol import http2
from arena.v2 import arena_pb2 as pb

ROOT = Path(__file__).resolve().parent.parent
SOURCE = Path(__file__).resolve().parent / "native_echo" / "echo.cc"
PROTO = ROOT / "arena" / "v2" / "arena.proto"


def build(folder: Path) -> Path:
    """Compile echo.cc with the C++ code protoc makes of arena.proto; return the program's path."""
    plugin = shutil.which("grpc_cpp_plugin")
    if plugin is None or shutil.which("protoc") is None or shutil.which("pkg-config") is None:
        sys.exit("native_echo: needs protoc, grpc_cpp_plugin, pkg-config and g++ (apt-get install libgrpc++-dev "
                 "protobuf-compiler-grpc g++ pkg-config)")
    subprocess.run(["protoc", f"-I{PROTO.parent}", f"--cpp_out={folder}", f"--grpc_out={folder}",
                    f"--plugin=protoc-gen-grpc={plugin}", str(PROTO)], check=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"], check=True,
                           capture_output=True, text=True).stdout.split()
    program = folder / "echo"
    subprocess.run(["g++", "-O2", "-std=c++17", f"-I{folder}", str(SOURCE), str(folder / "arena.pb.cc"),
                    str(folder / "arena.grpc.pb.cc"), "-o", str(program), *flags], check=True)
    return program


def native_turn(program: Path, rounds: int) -> tuple[float, float, float]:
    """One ping-pong served by the C++ program: its user and kernel CPU and the wall time per round trip (s)."""
    with tempfile.TemporaryDirectory() as folder:
        address = f"unix:{Path(folder) / 'echo.sock'}"
        # Debian's gRPC C++ (1.51) knows none of the experiments the arena turns off, and says so on every start
        env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
        server = subprocess.Popen([str(program), address, str(rounds)], stdout=subprocess.PIPE, text=True, env=env)
        try:
            assert server.stdout is not None
            if server.stdout.readline().strip() != "ready":
                raise SystemExit("native_echo: the C++ server did not start")
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", ECHO_CLIENT, address], check=True)
            wall = (time.perf_counter() - start) / rounds
            user, kernel = (float(x) / 1e6 for x in server.stdout.readline().split())
        finally:
            server.kill()
            server.wait()
    return user, kernel, wall


def python_turn(rounds: int) -> tuple[float, float, float]:
    """One ping-pong served by grpc.aio in this process: its user and kernel CPU and wall time per round trip."""
    before = os.times()
    start = time.perf_counter()
    asyncio.run(bare_round_trip(rounds))
    wall = (time.perf_counter() - start) / rounds
    after = os.times()
    return (after.user - before.user) / rounds, (after.system - before.system) / rounds, wall


def grpc_message(message: pb.ArenaMessage) -> bytes:
    """Return ``message`` as a gRPC length-prefixed message (not compressed)."""
    body = message.SerializeToString()
    return b"\x00" + len(body).to_bytes(4, "big") + body


def echo_request(number: int, rounds: int) -> pb.ArenaMessage:
    """Return the ping-pong's ``number``th message: a request as protocol.py's echo sends, a goodbye at the end."""
    if number > rounds:
        return pb.ArenaMessage(goodbye=pb.Goodbye(reason="done"))
    return pb.ArenaMessage(request=pb.DecisionRequest(request_id=number, choices=["R7:left"]))


def arena_echo(rounds: int) -> http2.Handler:
    """Return the ping-pong as a handler of the arena's own server: the hello, then a request and its answer at a
    time, as protocol.py's echo servicer does through grpc.aio."""

    async def handler(requests: AsyncIterator[Any], call: http2.Call) -> None:
        await call.read()  # the hello
        for number in range(1, rounds + 1):
            await call.write(echo_request(number, rounds))
            await call.read()
        await call.write(echo_request(rounds + 1, rounds))

    return handler


class H2Echo(asyncio.Protocol):
    """The ping-pong served on asyncio's loop through the ``h2`` package's HTTP/2 state machine."""

    def __init__(self, rounds: int) -> None:
        h2_config: Any = importlib.import_module("h2.config")
        h2_connection: Any = importlib.import_module("h2.connection")
        self.events: Any = importlib.import_module("h2.events")
        self.connection: Any = h2_connection.H2Connection(h2_config.H2Configuration(client_side=False))
        self.rounds = rounds
        self.sent = 0
        self.messages = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, pipe: asyncio.BaseTransport) -> None:
        assert isinstance(pipe, asyncio.Transport)
        self.transport = pipe
        self.connection.initiate_connection()
        pipe.write(self.connection.data_to_send())

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        connection, events = self.connection, self.events
        for event in connection.receive_data(data):
            if isinstance(event, events.DataReceived):
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                self.messages += event.data
                while len(self.messages) >= 5 and len(self.messages) >= 5 + (
                        size := int.from_bytes(self.messages[1:5], "big")):
                    del self.messages[:5 + size]
                    self.sent += 1
                    connection.send_data(event.stream_id, grpc_message(echo_request(self.sent, self.rounds)))
                    if self.sent > self.rounds:
                        connection.send_headers(event.stream_id, [("grpc-status", "0")], end_stream=True)
            elif isinstance(event, events.RequestReceived):
                connection.send_headers(event.stream_id, [(":status", "200"), ("content-type", "application/grpc")])
        out = connection.data_to_send()
        if out:
            self.transport.write(out)


async def _serve_echo(protocol: Callable[[], asyncio.Protocol] | None, rounds: int) -> None:
    """Serve one ping-pong on a Unix socket until the client process ends: with ``protocol``, or (None) with the
    arena's own HTTP/2 server."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "echo.sock"
        own: http2.Http2Server | None = None
        server: asyncio.AbstractServer | None = None
        if protocol is None:
            own = http2.Http2Server(arena_echo(rounds), path="/arena.v2.Arena/Play", decode=bytes,
                                    encode=pb.ArenaMessage.SerializeToString, max_message=1 << 16,
                                    max_connections=8, handshake_timeout=5.0, idle_timeout=10.0)
            await own.listen(path)
        else:
            server = await asyncio.get_running_loop().create_unix_server(protocol, str(path))
        client = await asyncio.create_subprocess_exec(sys.executable, "-c", ECHO_CLIENT, f"unix:{path}")
        await client.wait()
        if own is not None:
            await own.stop(0)
        if server is not None:
            server.close()
            await server.wait_closed()
        if client.returncode:
            raise SystemExit(f"native_echo: the client failed ({client.returncode})")


def asyncio_turn(protocol: Callable[[], asyncio.Protocol] | None, rounds: int) -> tuple[float, float, float]:
    """One ping-pong served in this process by ``protocol``, or (None) by the arena's own HTTP/2 server: its user
    and kernel CPU and wall time per round trip."""
    before = os.times()
    start = time.perf_counter()
    asyncio.run(_serve_echo(protocol, rounds))
    wall = (time.perf_counter() - start) / rounds
    after = os.times()
    return (after.user - before.user) / rounds, (after.system - before.system) / rounds, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3000, help="round trips per turn (default 3000)")
    parser.add_argument("--turns", type=int, default=4, help="turns of each server, alternating (default 4)")
    parser.add_argument("--arena-http2", action="store_true",
                        help="also serve it by the arena's own HTTP/2 server (arena/protocol/http2.py)")
    parser.add_argument("--h2", action="store_true", help="also serve it on asyncio's loop through the h2 package")
    parser.add_argument("--no-native", action="store_true", help="leave the C++ server out (no build)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    if args.h2:
        try:
            importlib.import_module("h2")
        except ImportError:
            sys.exit("native_echo: --h2 needs the h2 package (pip install h2)")
    servers: dict[str, Callable[[], tuple[float, float, float]]] = {
        "grpc.aio": lambda: python_turn(args.rounds)}
    if args.arena_http2:
        servers["arena-http2"] = lambda: asyncio_turn(None, args.rounds)
    if args.h2:
        servers["python-h2"] = lambda: asyncio_turn(lambda: H2Echo(args.rounds), args.rounds)
    with tempfile.TemporaryDirectory() as folder:
        if not args.no_native:
            program = build(Path(folder))
            servers["c++"] = lambda: native_turn(program, args.rounds)
        runs: dict[str, list[tuple[float, float, float]]] = {server: [] for server in servers}
        for _ in range(args.turns):
            for server, turn in servers.items():
                runs[server].append(turn())
    for server, turns in runs.items():
        user, kernel, wall = (statistics.median(t[i] for t in turns) * 1e6 for i in range(3))
        totals = [round((t[0] + t[1]) * 1e6, 1) for t in turns]
        row = {"server": server, "cpu_us": round(statistics.median(totals), 1), "cpu_us_turns": totals,
               "user_us": round(user, 1), "kernel_us": round(kernel, 1), "wall_us": round(wall, 1),
               "rounds": args.rounds, "turns": args.turns}
        print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
