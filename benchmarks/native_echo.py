"""What a native seat would save: the bare stream's server CPU per round trip, grpc.aio against C++.

Run: python benchmarks/native_echo.py [--rounds N] [--turns N] [--json]

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
example bot (see .ci/run).
"""

from __future__ import annotations

from arena.protocol import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from protocol import ECHO_CLIENT, bare_round_trip  # the bare stream of benchmarks/protocol.py

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3000, help="round trips per turn (default 3000)")
    parser.add_argument("--turns", type=int, default=4, help="turns of each server, alternating (default 4)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        program = build(Path(folder))
        runs: dict[str, list[tuple[float, float, float]]] = {"grpc.aio": [], "c++": []}
        for _ in range(args.turns):
            runs["grpc.aio"].append(python_turn(args.rounds))
            runs["c++"].append(native_turn(program, args.rounds))
    for server, turns in runs.items():
        user, kernel, wall = (statistics.median(t[i] for t in turns) * 1e6 for i in range(3))
        totals = [round((t[0] + t[1]) * 1e6, 1) for t in turns]
        row = {"server": server, "cpu_us": round(statistics.median(totals), 1), "cpu_us_turns": totals,
               "user_us": round(user, 1), "kernel_us": round(kernel, 1), "wall_us": round(wall, 1),
               "rounds": args.rounds, "turns": args.turns}
        print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
