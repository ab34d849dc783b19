"""What a bot process's start costs: the CPU of a fresh bundled bot from its launch to the end of its first match.

Run: python benchmarks/bot_start.py [--game cabanga] [--bot cabanga-random] [--matches 10] [--sandbox strict]
                                    [--json]

Plays ``--matches`` one-round matches of ``--bot`` in every seat (the game's fewest seats), each with fresh
processes, one match at a time, through the arena's own launcher (:func:`arena.launch.runner.run_match`) in the
``--sandbox`` mode. The arena runs in this process, so the machine's busy CPU time over a match (``/proc/stat``)
less this process's own is the bots', their supervisors' and their jails' (a jail's processes are reaped inside
its PID namespace, where ``getrusage`` does not see them): run it on an otherwise idle machine.

  cpu per process   that CPU over the processes started, ms: the interpreter, its imports, the connection, the
                    first match's start (its game loaded) and a round of a cheap bot's decisions
  wall per match    from the launch of a match's processes to their end, ms
  python -c pass    the same interpreter started bare (``-c pass``) outside any jail, ms of CPU: the floor

A ladder starts a process of each bot per table and seat rotation (docs/figures.md, issue 38): with two tables,
a field of 4 bots at 4 seats starts 16, of 12 bots 48 to 72, so this is the price of the first second of a run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arena.games import BOT_LIST, get_game
from arena.launch.botlist import load_bot_list
from arena.launch.runner import run_match
from arena.launch.sandbox import Mode, choose_sandbox

ROOT = Path(__file__).resolve().parent.parent


def others_cpu() -> float:
    """Return the CPU seconds the whole machine has been busy (``/proc/stat``), less this process's own."""
    with open("/proc/stat", encoding="ascii") as f:
        ticks = [int(n) for n in f.readline().split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK") - time.process_time()


def bare_python(runs: int = 5) -> float:
    """Return the median CPU seconds of ``python -c pass`` with this interpreter (reaped here: its own rusage)."""
    spent = []
    for _ in range(runs):
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        before = usage.ru_utime + usage.ru_stime
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(usage.ru_utime + usage.ru_stime - before)
    return statistics.median(spent)


def measure(game_name: str, bot: str, matches: int, mode: str) -> dict[str, Any]:
    game = get_game(game_name)
    specs = {spec.name: spec for spec in load_bot_list(ROOT / "arena" / "games" / game.name / BOT_LIST)}
    if bot not in specs:
        raise SystemExit(f"no bundled bot {bot!r} in {game.name}: {', '.join(specs)}")
    seats = game.min_seats
    options = game.options({"rounds": 1})
    sandbox = choose_sandbox(mode)
    cpu: list[float] = []
    wall: list[float] = []
    for seed in range(matches):
        before, started = others_cpu(), time.perf_counter()
        asyncio.run(run_match(game, [specs[bot]] * seats, seed, options, sandbox=sandbox))
        wall.append(time.perf_counter() - started)
        cpu.append((others_cpu() - before) / seats)
    return {"game": game.name, "bot": bot, "sandbox": sandbox.level, "seats": seats, "matches": matches,
            "cpu_per_process_ms": round(statistics.median(cpu) * 1e3, 1),
            "cpu_per_process_ms_all": [round(c * 1e3, 1) for c in cpu],
            "wall_per_match_ms": round(statistics.median(wall) * 1e3, 1),
            "bare_python_ms": round(bare_python() * 1e3, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="cabanga", help="the game (default cabanga)")
    parser.add_argument("--bot", default=None, help="a bundled bot of the game (default GAME-random)")
    parser.add_argument("--matches", type=int, default=10, help="matches, each with fresh processes (default 10)")
    parser.add_argument("--sandbox", default="auto", choices=[m.value for m in Mode], help="default auto")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    figures = measure(args.game, args.bot or f"{args.game}-random", args.matches, args.sandbox)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['bot']} ({figures['sandbox']}), {figures['matches']} matches of {figures['seats']} fresh "
          f"processes: cpu per process {figures['cpu_per_process_ms']} ms (median), wall per match "
          f"{figures['wall_per_match_ms']} ms; python -c pass {figures['bare_python_ms']} ms")


if __name__ == "__main__":
    main()
