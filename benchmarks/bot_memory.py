"""What a warm bot process holds: its memory with its supervisor and jail, as the ladder's pool counts it.

Run: python benchmarks/bot_memory.py [--game GAME] [--bot NAME] [--count N] [--sandbox MODE] [--json]

Starts ``--count`` processes (default 8) of a bundled bot (default: the game's random bot) in a process pool, in
the ``--sandbox`` isolation (default strict), seats them at one match's deal, waits a second, and prints the median
over the processes of:
  rss_mib   resident memory of the process tree (the bot, its supervisor and bubblewrap), shared pages counted in
            each: what the pool's memory budget counts (:func:`arena.launch.pool.process_tree_memory`);
  pss_mib   proportional memory of the same tree (PSS, shared pages split among the processes sharing them): what
            the machine really gives each one.
A field of B bots at S seats keeps B x S processes warm: multiply.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's arena

import arena
from arena.core.deals import DealKey
from arena.games import BOT_LIST, game_names
from arena.launch.botlist import load_bot_list
from arena.launch.pool import ProcessPool, process_tree_memory
from arena.launch.procs import descendants
from arena.launch.runner import serving
from arena.launch.sandbox import Mode, choose_sandbox

MIB = 1 << 20


def pss_mib(pid: int) -> float:
    """Return the proportional memory of ``pid`` and its descendants, MiB (0 for what is gone)."""
    total = 0
    for member in [pid, *descendants(pid)]:
        with contextlib.suppress(OSError, ValueError, IndexError), \
                open(f"/proc/{member}/smaps_rollup", encoding="ascii") as f:
            total += sum(int(line.split()[1]) for line in f if line.startswith("Pss:"))
    return total / 1024


async def measure(game: str, bot: str, count: int, mode: str) -> dict[str, Any]:
    """Start ``count`` warm processes of ``bot`` and return their median memory."""
    specs = load_bot_list(Path(arena.__file__).parent / "games" / game / BOT_LIST)
    spec = next((b for b in specs if b.name == bot), None)
    if spec is None:
        raise SystemExit(f"no bundled bot {bot!r} for {game}: {', '.join(b.name for b in specs)}")
    sandbox = choose_sandbox(mode)
    async with serving() as server:
        pool = ProcessPool(server, sandbox=sandbox, keep=None)
        try:
            await pool.seat([spec] * count, deal=DealKey(game, 1))
            await asyncio.sleep(1.0)  # connected and settled
            sessions = [s for s in pool._running.values() if s.process is not None and s.process.pid is not None]
            rss = [process_tree_memory(s) / MIB for s in sessions]
            pss = [pss_mib(s.process.pid) for s in sessions if s.process is not None and s.process.pid is not None]
        finally:
            await pool.close()
    return {"game": game, "bot": bot, "sandbox": sandbox.level, "processes": len(rss),
            "rss_mib": round(statistics.median(rss), 1), "pss_mib": round(statistics.median(pss), 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--game", choices=game_names(), default="cabanga", help="the game (default cabanga)")
    parser.add_argument("--bot", default=None, help="a bundled bot of the game (default: GAME-random)")
    parser.add_argument("--count", type=int, default=8, help="processes to start (default 8)")
    parser.add_argument("--sandbox", choices=[m.value for m in Mode], default="strict",
                        help="bot isolation (default strict)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.game, args.bot or f"{args.game}-random", args.count, args.sandbox))
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{figures['bot']} ({figures['sandbox']}), {figures['processes']} warm processes: "
              f"{figures['rss_mib']} MiB resident each with its supervisor and jail (what the pool counts), "
              f"{figures['pss_mib']} MiB proportional")
    return 0


if __name__ == "__main__":
    sys.exit(main())
