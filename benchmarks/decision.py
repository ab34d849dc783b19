"""What a decision costs: the arena's CPU, the bots' CPU and the wall time, in whole matches over gRPC.

Run: python benchmarks/decision.py [--matches N] [--runs R] [--seats S ...] [--tables K ...] [--profile FILE]
     [--profile-mode cprofile|pyspy] [--json]

Plays whole Cabanga! matches of the bundled random bot (each seat its own process, in the machine's jail, as a
ladder seats them) at every seat count of --seats (default 3, 4, 6) on one and two tables at once (--tables),
and prints per configuration, the median over --runs runs (each run a fresh server and fresh processes):

  arena_cpu_us   the arena process's CPU per decision (every thread of it: Python and gRPC's own), from
                 ``time.process_time`` around the matches only (seating excluded);
  bots_cpu_us    the bot processes' CPU per decision (their jails' processes included), from each thread's
                 ``/proc/PID/task/TID/schedstat``;
  loop_thread_cpu_us  the part of arena_cpu_us spent by the thread that runs the event loop (the rest is
                 gRPC's own threads, its poller, when gRPC serves the bots: ARENA_UNIX_TRANSPORT=grpc or an
                 older arena; the arena's own server runs on the loop's thread);
  kernel_cpu_us  the part of arena_cpu_us spent in the kernel on the arena's behalf (system calls: sending,
                 receiving, polling, waking threads), from ``os.times``;
  ratio          arena_cpu_us / bots_cpu_us;
  wall_us        wall time of the matches per decision (tables play at once: wall / every table's decisions);
  latency_us     the referee's median ask-to-answer time of one decision.

Then ``bare``: a bare grpc.aio bidirectional stream ping-pong between two Python processes over a Unix socket
with the arena's gRPC settings (:mod:`arena.protocol.transport`), the round trip's median wall time and the
server side's CPU per round trip: what a request and its answer cost through gRPC's own transport with nothing of
ours around them (the arena's own server costs less than half that: ``benchmarks/native_echo.py``).
The bare and arena figures are taken in turns (one bare run before each run of the matches), so a slow spell of a
shared machine weighs on both.

Last, ``half_deadline``: matches in which every seat is a bot that answers each request after half its deadline
(``--half-deadline-ms``, default 100 ms), and the faults they were charged (expected: 0), so a cheaper arena is
seen to keep its clocks.

--profile FILE profiles the arena during one extra 4-seat, one-table run: with cProfile (the default) on the
loop thread's CPU clock (``time.thread_time``: waits and preemption are not counted; Python frames only, and the
profiler's cost per call weighs on call-heavy code), it prints the functions with the most own time and writes the
statistics to FILE; with ``--profile-mode pyspy`` (``pip install py-spy``) py-spy samples the arena's Python
stacks from outside at 1,000 Hz without stopping it and writes FILE as raw (collapsed) stacks, summarized here.
py-spy samples wall time: a thread preempted in a system call, or blocked in gRPC's C core, is sampled as busy.
--sandbox limits plays the bots without the jail (the arena's side is the same).

--fake-transport N plays N 4-seat matches in this process only: the referee, the remote seats, their connections
and the codec as in a match, over a fake stream whose bot answers every request at once with its first choice.
It prints the decisions and the CPU per decision of that Python alone, which a machine's load does not change when
counted in instructions: ``valgrind --tool=callgrind python benchmarks/decision.py --fake-transport N`` for two
values of N, the difference of the totals over the difference of the decisions.
"""

from __future__ import annotations

from arena.protocol import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import argparse
import asyncio
import contextlib
import cProfile
import glob
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import arena.games
from arena.core.deals import DealKey
from arena.core.referee import Clock, MatchRecord, referee_match
from arena.games import BOT_LIST, get_game
from arena.launch.botlist import BotSpec, load_bot_list
from arena.launch.pool import ProcessPool
from arena.launch.procs import descendants
from arena.launch.runner import latency_summary, serving
from arena.launch.sandbox import Mode, Sandbox, choose_sandbox
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import Connection, Outgoing, Slot
from arena.v2 import arena_pb2 as pb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from protocol import bare_round_trip  # the bare stream of benchmarks/protocol.py

ROOT = Path(__file__).resolve().parent.parent
# the bundled random bot as `arena ladder` starts it: from the arena package imported here, so that with an older
# checkout on PYTHONPATH the bots run that checkout's SDK too
RANDOM_BOT = next(b for b in load_bot_list(Path(arena.games.__file__).parent / "cabanga" / BOT_LIST)
                  if b.name == "cabanga-random")
CLOCK = Clock(1.0)
HALF_BOT = BotSpec("half", ("{python}", "half_deadline_bot.py"),
                   ROOT / "benchmarks" / "decision_bots" / "half_deadline")


def _cpu_ns(pid: int) -> dict[tuple[int, int], int]:
    """Return the CPU time (ns) of each thread of ``pid`` so far, by (pid, thread id)."""
    out: dict[tuple[int, int], int] = {}
    for path in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        with contextlib.suppress(OSError, ValueError, IndexError), open(path, encoding="ascii") as f:
            out[(pid, int(path.split("/")[4]))] = int(f.read().split()[0])
    return out


def children_cpu() -> dict[tuple[int, int], int]:
    """Return the CPU time (ns) of every thread of every process below this one."""
    out: dict[tuple[int, int], int] = {}
    for pid in descendants(os.getpid()):
        out.update(_cpu_ns(pid))
    return out


def cpu_since(before: dict[tuple[int, int], int]) -> float:
    """Return the seconds of CPU the processes below this one spent since ``before`` (threads born since count
    whole; threads that ended since are lost, and the bots' threads live as long as the bots)."""
    now = children_cpu()
    return sum(ns - before.get(key, 0) for key, ns in now.items()) / 1e9


async def play(seats: int, tables: int, matches: int, *, bot: BotSpec = RANDOM_BOT, clock: Clock = CLOCK,
               first_seed: int = 0, profile: cProfile.Profile | None = None,
               pyspy: Path | None = None, sandbox: Sandbox | None = None) -> dict[str, Any]:
    """Play ``matches`` whole Cabanga! matches of ``bot`` at ``seats`` seats on ``tables`` tables at once.

    Returns the arena's and the bots' CPU seconds in the matches, their wall time, every decision's latency
    and the matches' faults.
    """
    game = get_game("cabanga")
    latencies: list[float] = []
    records: list[MatchRecord] = []
    async with serving() as server:
        pools = [ProcessPool(server, sandbox=sandbox) for _ in range(tables)]
        try:
            # seated once for every match: each match has a seed of its own, so no deal repeats
            seat_lists = await asyncio.gather(*(p.seat([bot] * seats, [f"t{i}s{s}" for s in range(seats)],
                                                       deal=DealKey(game.name, -1 - i))
                                                for i, p in enumerate(pools)))
            queue = list(range(first_seed, first_seed + matches))

            async def table(seat_list: list[RemoteSeat]) -> None:
                while queue:
                    record = await referee_match(game, seat_list, queue.pop(), clock=clock)
                    records.append(record)
                    for seat in record.latencies:
                        latencies.extend(seat)

            spy = None
            if pyspy is not None:
                spy = subprocess.Popen([_pyspy(), "record", "--nonblocking", "--threads", "--rate", "1000", "--format",
                                        "raw", "--output", str(pyspy), "--pid", str(os.getpid())],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                await asyncio.sleep(1.0)  # py-spy attaches
            bots_before = children_cpu()
            threads_before = _cpu_ns(os.getpid())
            cpu = time.process_time()
            times = os.times()
            start = time.perf_counter()
            if profile is not None:
                profile.enable()
            try:
                await asyncio.gather(*(table(s) for s in seat_lists))
            finally:
                if profile is not None:
                    profile.disable()
            wall = time.perf_counter() - start
            arena_cpu = time.process_time() - cpu
            system_cpu = os.times().system - times.system
            bots_cpu = cpu_since(bots_before)
            threads = _cpu_ns(os.getpid())
            main_thread = (os.getpid(), threading.get_native_id())  # the loop's thread
            loop_cpu = (threads.get(main_thread, 0) - threads_before.get(main_thread, 0)) / 1e9
            if spy is not None:
                spy.send_signal(2)
                await asyncio.to_thread(spy.wait)
        finally:
            await asyncio.gather(*(p.close() for p in pools))
    return {"arena_cpu": arena_cpu, "system_cpu": system_cpu, "loop_cpu": loop_cpu, "bots_cpu": bots_cpu,
            "wall": wall, "latencies": latencies,
            "decisions": len(latencies), "faults": sum(len(r.faults) for r in records), "matches": len(records),
            "fault_kinds": sorted({f.kind.value for r in records for f in r.faults})}


async def fake_transport(matches: int) -> int:
    """Play ``matches`` 4-seat Cabanga! matches over connections whose bot answers at once; return the decisions."""
    game = get_game("cabanga")
    loop = asyncio.get_running_loop()
    seats = []
    for i in range(4):
        slot = Slot(f"s{i}", f"t{i}")

        def answerer(slot: Slot) -> Callable[[Outgoing], Awaitable[None]]:
            async def write(message: Outgoing) -> None:
                connection = slot.connection
                if isinstance(message, bytes) and connection is not None:  # a request: answered with its first choice
                    answer = pb.BotMessage(answer=pb.Answer(request_id=connection._next_id, picks=[0]))
                    loop.call_soon(connection.on_message, answer)
                await asyncio.sleep(0)  # a write completes later, as on a stream
            return write

        slot.connection = Connection(slot, answerer(slot))
        seats.append(RemoteSeat(slot))
    decisions = 0
    for seed in range(matches):
        record = await referee_match(game, seats, seed, clock=CLOCK)
        decisions += sum(len(seat) for seat in record.latencies)
    return decisions


def _pyspy() -> str:
    """Return py-spy's program: beside this interpreter (a venv's), else on the PATH."""
    beside = Path(sys.executable).parent / "py-spy"
    return str(beside) if beside.exists() else shutil.which("py-spy") or "py-spy"


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=20, help="matches per configuration and run (default 20)")
    parser.add_argument("--runs", type=int, default=3, help="runs of every configuration, in turns (default 3)")
    parser.add_argument("--seats", type=int, action="append", help="seat counts (default 3, 4 and 6)")
    parser.add_argument("--tables", type=int, action="append", help="tables at once (default 1 and 2)")
    parser.add_argument("--rounds", type=int, default=2000, help="bare ping-pong round trips per run (default 2000)")
    parser.add_argument("--half-deadline-ms", type=float, default=100.0,
                        help="the deadline of the half-deadline bots (default 100 ms; 0: skip them)")
    parser.add_argument("--half-matches", type=int, default=2, help="matches of the half-deadline bots (default 2)")
    parser.add_argument("--profile", type=Path, help="profile one more 4-seat, one-table run into this file")
    parser.add_argument("--profile-mode", choices=["cprofile", "pyspy"], default="cprofile")
    parser.add_argument("--sandbox", choices=[m.value for m in Mode], default="auto",
                        help="the bots' isolation (default auto: the strongest this machine gives, as a ladder)")
    parser.add_argument("--fake-transport", type=int, metavar="N",
                        help="only play N matches in this process over a fake stream (see above)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    if args.fake_transport is not None:
        cpu = time.process_time()
        decisions = asyncio.run(fake_transport(args.fake_transport))
        print(json.dumps({"measure": "fake_transport", "matches": args.fake_transport, "decisions": decisions,
                          "cpu_us": round((time.process_time() - cpu) / max(1, decisions) * 1e6, 1)}))
        return
    sandbox = choose_sandbox(args.sandbox)
    seat_counts = args.seats or [3, 4, 6]
    table_counts = args.tables or [1, 2]
    configs = [(s, t) for s in seat_counts for t in table_counts]
    runs: dict[tuple[int, int], list[dict[str, Any]]] = {c: [] for c in configs}
    bare: list[float] = []
    bare_cpu: list[float] = []
    for run in range(max(1, args.runs)):
        cpu = time.process_time()
        samples = asyncio.run(bare_round_trip(args.rounds))
        bare_cpu.append((time.process_time() - cpu) / args.rounds)  # the warm-up tenth included
        bare.extend(samples)
        for seats, tables in configs:
            runs[(seats, tables)].append(asyncio.run(play(seats, tables, args.matches, sandbox=sandbox,
                                                          first_seed=run * args.matches)))
    rows: list[dict[str, Any]] = []
    for (seats, tables), figures in runs.items():
        per = [(f["arena_cpu"] / f["decisions"], f["bots_cpu"] / f["decisions"], f["wall"] / f["decisions"],
                f["loop_cpu"] / f["decisions"], f["system_cpu"] / f["decisions"]) for f in figures]
        median, p99 = latency_summary([x for f in figures for x in f["latencies"]])
        arena_us = _median([p[0] for p in per]) * 1e6
        bots_us = _median([p[1] for p in per]) * 1e6
        rows.append({
            "measure": "decision", "seats": seats, "tables": tables, "sandbox": sandbox.level, "runs": len(figures),
            "decisions": sum(f["decisions"] for f in figures),
            "arena_cpu_us": round(arena_us, 1), "arena_cpu_us_runs": [round(p[0] * 1e6, 1) for p in per],
            "loop_thread_cpu_us": round(_median([p[3] for p in per]) * 1e6, 1),
            "kernel_cpu_us": round(_median([p[4] for p in per]) * 1e6, 1),
            "bots_cpu_us": round(bots_us, 1), "ratio": round(arena_us / bots_us, 2) if bots_us else 0.0,
            "wall_us": round(_median([p[2] for p in per]) * 1e6, 1),
            "latency_us": round(median * 1e6, 1), "latency_p99_us": round(p99 * 1e6, 1),
            "matches_per_s": round(_median([f["matches"] / f["wall"] for f in figures]), 2),
            "faults": sum(f["faults"] for f in figures)})
    rows.append({"measure": "bare", "round_trip_us": round(_median(bare) * 1e6, 1),
                 "round_trip_p99_us": round(sorted(bare)[int(0.99 * len(bare))] * 1e6, 1),
                 "server_cpu_us": round(_median(bare_cpu) * 1e6, 1), "samples": len(bare)})
    if args.half_deadline_ms > 0:
        deadline = args.half_deadline_ms / 1000
        half = asyncio.run(play(4, 1, args.half_matches, bot=HALF_BOT, clock=Clock(deadline), sandbox=sandbox))
        rows.append({"measure": "half_deadline", "seats": 4, "deadline_ms": args.half_deadline_ms,
                     "matches": half["matches"], "decisions": half["decisions"],
                     "latency_us": round(latency_summary(half["latencies"])[0] * 1e6, 1),
                     "faults": half["faults"], "fault_kinds": half["fault_kinds"], "expected_faults": 0})
    for row in rows:
        print(json.dumps(row) if args.json else "  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.profile is not None:
        profile_run(args.profile, args.profile_mode, args.matches)


def profile_run(path: Path, mode: str, matches: int) -> None:
    """Profile the arena in one 4-seat, one-table run; print where its time went."""
    if mode == "pyspy":
        if not Path(_pyspy()).exists():
            sys.exit("py-spy is not installed: pip install py-spy")
        figures = asyncio.run(play(4, 1, matches, pyspy=path))
        print(f"py-spy: {figures['decisions']} decisions, {figures['arena_cpu'] / figures['decisions'] * 1e6:.0f} us "
              f"of arena CPU each while sampled; raw stacks in {path}")
        print(summarize_stacks(path.read_text()))
        return
    profile = cProfile.Profile(time.thread_time)  # CPU time of the loop thread: waits and preemption are not counted
    figures = asyncio.run(play(4, 1, matches, profile=profile))
    profile.dump_stats(str(path))
    print(f"cProfile: {figures['decisions']} decisions, {figures['arena_cpu'] / figures['decisions'] * 1e6:.0f} us "
          f"of arena CPU each under the profiler; the functions with the most own time:")
    with tempfile.TemporaryFile("w+") as out:
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("tottime").print_stats(25)
        out.seek(0)
        print(out.read())


def summarize_stacks(raw: str, top: int = 30) -> str:
    """Return a table of py-spy's collapsed stacks: per function, its share of the samples, inclusive and own."""
    inclusive: dict[str, int] = {}
    own: dict[str, int] = {}
    threads: dict[str, int] = {}
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [_short(f) for f in stack.split(";")]
        threads[frames[0]] = threads.get(frames[0], 0) + count
        for frame in set(frames[1:]):
            inclusive[frame] = inclusive.get(frame, 0) + count
        own[frames[-1]] = own.get(frames[-1], 0) + count
    if not total:
        return "no samples"
    lines = ["samples by thread: " + ", ".join(f"{k} {v / total:.1%}" for k, v in
                                                sorted(threads.items(), key=lambda kv: -kv[1])),
             f"{'inclusive':>9} {'own':>6}  function"]
    for frame, count in sorted(inclusive.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{count / total:9.1%} {own.get(frame, 0) / total:6.1%}  {frame}")
    lines.append("most own time:")
    for frame, count in sorted(own.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"{count / total:9.1%}  {frame}")
    return "\n".join(lines)


def _short(frame: str) -> str:
    """Return a py-spy frame (``function (path:line)``) without its line and with the path cut to its last parts."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return f"{name} ({'/'.join(path.split('/')[-2:])})" if path else name


if __name__ == "__main__":
    main()
