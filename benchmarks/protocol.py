"""The arena's cost per decision over gRPC, next to a bare gRPC stream ping-pong on the same machine.

Run: python benchmarks/protocol.py [--matches N] [--json]

Prints, in one run:
  bare     round trip of one message each way on a bare grpc.aio bidirectional stream between two Python
           processes over a Unix socket (the same transport the arena uses for local bots);
  arena    per decision in whole 4-seat Cabanga! matches with the bundled random bots: the referee's
           median and p99 ask-to-answer latency, and the wall time of the matches per decision;
  ratio    arena median latency / bare median round trip (target: at most 1.5);
  tables   whole matches per second with two tables at once (target: 10 or more on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from grpc import aio

from arena.games import get_game
from arena.launcher import BotSpec, Table
from arena.referee import Clock, play_match
from arena.runner import latency_summary, serving
from arena.server import RemoteSeat
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parent.parent

ECHO_CLIENT = """
import sys, grpc.aio, asyncio
from arena.v1 import arena_pb2 as pb, arena_pb2_grpc as pb_grpc
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


async def arena_matches(matches: int, tables: int) -> dict[str, float]:
    """Play ``matches`` whole Cabanga! matches on ``tables`` tables at once; return latency and rate figures."""
    game = get_game("cabanga")
    bots = [BotSpec("random", ("{python}", "cabanga_random.py"), ROOT / "bots")] * 4
    latencies: list[float] = []
    decisions = 0
    async with serving() as server:
        seated = [Table(server) for _ in range(tables)]
        seat_lists = await asyncio.gather(*(t.seat(bots, [f"t{i}s{s}" for s in range(4)])
                                            for i, t in enumerate(seated)))
        queue = list(range(matches))

        async def worker(seats: list[RemoteSeat]) -> None:
            nonlocal decisions
            while queue:
                seed = queue.pop()
                record = await play_match(game, seats, seed, clock=Clock(1.0))
                for seat in record.latencies:
                    latencies.extend(seat)
                    decisions += len(seat)

        start = time.perf_counter()
        try:
            await asyncio.gather(*(worker(s) for s in seat_lists))
        finally:
            elapsed = time.perf_counter() - start
            await asyncio.gather(*(t.close() for t in seated))
    median, p99 = latency_summary(latencies)
    return {"median_us": median * 1e6, "p99_us": p99 * 1e6, "wall_us_per_decision": elapsed / decisions * 1e6,
            "matches_per_s": matches / elapsed, "decisions": decisions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=40, help="matches per arena measurement (default 40)")
    parser.add_argument("--rounds", type=int, default=3000, help="bare ping-pong round trips (default 3000)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    bare = asyncio.run(bare_round_trip(args.rounds))
    bare_median = statistics.median(bare)
    bare_p99 = sorted(bare)[int(0.99 * len(bare))]
    one = asyncio.run(arena_matches(args.matches, 1))
    two = asyncio.run(arena_matches(args.matches, 2))
    rows = [
        {"measure": "bare_stream_round_trip", "median_us": round(bare_median * 1e6, 1),
         "p99_us": round(bare_p99 * 1e6, 1), "samples": len(bare)},
        {"measure": "arena_decision", "tables": 1, "median_us": round(one["median_us"], 1),
         "p99_us": round(one["p99_us"], 1), "wall_us_per_decision": round(one["wall_us_per_decision"], 1),
         "decisions": one["decisions"], "matches_per_s": round(one["matches_per_s"], 2)},
        {"measure": "ratio", "arena_median_over_bare_median": round(one["median_us"] / (bare_median * 1e6), 2),
         "target_max": 1.5},
        {"measure": "two_tables", "tables": 2, "matches_per_s": round(two["matches_per_s"], 2),
         "median_us": round(two["median_us"], 1), "p99_us": round(two["p99_us"], 1), "target_min": 10},
    ]
    for row in rows:
        if args.json:
            print(json.dumps(row))
        else:
            print("  ".join(f"{k}={v}" for k, v in row.items()))


if __name__ == "__main__":
    main()
