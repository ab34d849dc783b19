"""The arena's cost per decision over gRPC, next to a bare gRPC stream ping-pong on the same machine.

Run: python benchmarks/protocol.py [--matches N] [--turns N] [--json]

Prints, in one run:
  bare          round trip of one message each way on a bare grpc.aio bidirectional stream between two Python
                processes over a Unix socket, with the arena's gRPC settings (arena.protocol.transport): gRPC's own
                transport, which the arena's server for local bots (arena.protocol.http2) replaced, and the SDK's
                client too (benchmarks/native_echo.py --arena-http2 serves the same ping-pong by the arena's own);
  bare_default  the same with gRPC's default settings, for reference (measured in a process of its own);
  arena         per decision in whole 4-seat Cabanga! matches with the bundled random bots: the referee's
                median and p99 ask-to-answer latency, and the wall time of the matches per decision;
  ratio         arena median latency / bare median round trip (target: at most 1.5);
  two_tables    whole matches per second with two tables at once (target: 10 or more on 2 cores).

The bare and arena figures are taken in turns (--turns), so that a slow spell of a shared machine weighs on
both sides of the ratio alike.
"""

from __future__ import annotations

from arena.protocol import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from grpc import aio

from arena.core.deals import DealKey
from arena.core.referee import Clock, referee_match
from arena.games import get_game
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.runner import latency_summary, serving
from arena.protocol.seats import RemoteSeat
from arena.v2 import arena_pb2 as pb
from arena.v2 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent

ECHO_CLIENT = """
import sys, grpc.aio, asyncio
from arena.v2 import arena_pb2 as pb, arena_pb2_grpc as pb_grpc
async def main():
    async with grpc.aio.insecure_channel(sys.argv[1]) as channel:
        call = pb_grpc.ArenaStub(channel).Play()
        await call.write(pb.BotMessage(hello=pb.Hello(token="bare")))
        while True:
            message = await call.read()
            if message is grpc.aio.EOF or message.WhichOneof("body") == "goodbye":
                break
            await call.write(pb.BotMessage(answer=pb.Answer(request_id=message.request.request_id, picks=[0])))
        await call.done_writing()
asyncio.run(main())
"""


class _Echo(pb_grpc.ArenaServicer):  # type: ignore[misc]  # generated code is untyped
    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.samples: list[float] = []

    async def Play(self, request_iterator: AsyncIterator[pb.BotMessage], context: object
                   ) -> AsyncIterator[pb.ArenaMessage]:
        await anext(request_iterator)  # hello
        for i in range(self.rounds):
            start = time.perf_counter()
            yield pb.ArenaMessage(request=pb.DecisionRequest(request_id=i + 1, choices=["R7:left"]))
            await anext(request_iterator)
            self.samples.append(time.perf_counter() - start)
        yield pb.ArenaMessage(goodbye=pb.Goodbye(reason="done"))


async def bare_round_trip(rounds: int) -> list[float]:
    """Return ``rounds`` round-trip times of a bare stream ping-pong with a client in another process."""
    with tempfile.TemporaryDirectory() as folder:
        address = f"unix:{Path(folder) / 'bare.sock'}"
        server = aio.server()
        echo = _Echo(rounds)
        pb_grpc.add_ArenaServicer_to_server(echo, server)
        server.add_insecure_port(address)
        await server.start()
        client = subprocess.Popen([sys.executable, "-c", ECHO_CLIENT, address])
        while client.poll() is None:
            await asyncio.sleep(0.05)
        await server.stop(0)
    return echo.samples[rounds // 10:]  # the first tenth warms up


async def arena_matches(matches: int, tables: int, first_seed: int = 0) -> dict[str, Any]:
    """Play ``matches`` whole Cabanga! matches (seeds from ``first_seed`` on) on ``tables`` tables at once.

    Returns every decision's latency (seconds), the number of decisions and the elapsed wall time.
    """
    game = get_game("cabanga")
    bots = [BotSpec("random", ("{python}", "bot.py"), ROOT / "arena" / "games" / "cabanga" / "bots" / "random")] * 4
    latencies: list[float] = []
    async with serving() as server:
        seated = [ProcessPool(server) for _ in range(tables)]
        # seated once for every match: each match has a seed of its own (the queue), so no deal repeats
        seat_lists = await asyncio.gather(*(t.seat(bots, [f"t{i}s{s}" for s in range(4)],
                                                   deal=DealKey(game.name, -1 - i))
                                            for i, t in enumerate(seated)))
        queue = list(range(first_seed, first_seed + matches))

        async def worker(seats: list[RemoteSeat]) -> None:
            while queue:
                seed = queue.pop()
                record = await referee_match(game, seats, seed, clock=Clock(1.0))
                for seat in record.latencies:
                    latencies.extend(seat)

        start = time.perf_counter()
        try:
            await asyncio.gather(*(worker(s) for s in seat_lists))
        finally:
            elapsed = time.perf_counter() - start
            await asyncio.gather(*(t.close() for t in seated))
    return {"latencies": latencies, "decisions": len(latencies), "elapsed": elapsed}


def bare_default(rounds: int) -> tuple[float, float]:
    """Return the bare round trip's median and p99 (seconds) with gRPC's default settings, from a new process."""
    env = {**os.environ, "GRPC_EXPERIMENTS": ""}
    out = subprocess.run([sys.executable, __file__, "--bare-only", "--rounds", str(rounds)], env=env,
                         capture_output=True, text=True, check=True).stdout
    figures = json.loads(out)
    return figures["median"], figures["p99"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=40, help="matches per arena measurement (default 40)")
    parser.add_argument("--rounds", type=int, default=3000, help="bare ping-pong round trips (default 3000)")
    parser.add_argument("--turns", type=int, default=4,
                        help="bare and arena measurements alternate, in this many turns each (default 4)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    parser.add_argument("--bare-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare_only:
        samples = asyncio.run(bare_round_trip(args.rounds))
        print(json.dumps({"median": statistics.median(samples), "p99": sorted(samples)[int(0.99 * len(samples))]}))
        return
    turns = max(1, args.turns)
    bare: list[float] = []
    latencies: list[float] = []
    decisions = 0
    elapsed = 0.0
    for turn in range(turns):
        bare += asyncio.run(bare_round_trip(max(100, args.rounds // turns)))
        share = args.matches // turns + (1 if turn < args.matches % turns else 0)
        figures = asyncio.run(arena_matches(share, 1, first_seed=turn * (args.matches // turns + 1)))
        latencies += figures["latencies"]
        decisions += int(figures["decisions"])
        elapsed += figures["elapsed"]
    two = asyncio.run(arena_matches(args.matches, 2))
    default_median, default_p99 = bare_default(args.rounds)
    bare_median = statistics.median(bare)
    bare_p99 = sorted(bare)[int(0.99 * len(bare))]
    median, p99 = latency_summary(latencies)
    two_median, two_p99 = latency_summary(two["latencies"])
    rows = [
        {"measure": "bare_stream_round_trip", "median_us": round(bare_median * 1e6, 1),
         "p99_us": round(bare_p99 * 1e6, 1), "samples": len(bare)},
        {"measure": "bare_default_grpc", "median_us": round(default_median * 1e6, 1),
         "p99_us": round(default_p99 * 1e6, 1)},
        {"measure": "arena_decision", "tables": 1, "median_us": round(median * 1e6, 1),
         "p99_us": round(p99 * 1e6, 1), "wall_us_per_decision": round(elapsed / decisions * 1e6, 1),
         "decisions": decisions, "matches_per_s": round(args.matches / elapsed, 2)},
        {"measure": "ratio", "arena_median_over_bare_median": round(median / bare_median, 2), "target_max": 1.5},
        {"measure": "two_tables", "tables": 2, "matches_per_s": round(args.matches / two["elapsed"], 2),
         "median_us": round(two_median * 1e6, 1), "p99_us": round(two_p99 * 1e6, 1), "target_min": 10},
    ]
    for row in rows:
        if args.json:
            print(json.dumps(row))
        else:
            print("  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
