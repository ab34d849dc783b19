"""Innocent bots beside a bot that spins in every one of its processes: faults charged to them, by deadline.

Run: python benchmarks/spin.py [--matches N] [--children C] [--deadline D ...] [--sandbox MODE]

For each deadline (default 0.5, 0.2 and 0.1 s), runs `arena ladder` (a temporary database, 4 seats, 1 table,
one round a match) with three bundled Cabanga! bots and a hostile bot that, in each of its processes (a table
keeps one per rotation of a deal), forks C children (default 3) that spin the CPU for good, and plays on.
Prints, per deadline, the faults charged to the innocent bots (what must stay 0) and to the spinner, and the
matches stored (both read by `arena leaderboard --json`). Run it with ``PYTHONPATH=<another checkout>`` to measure
that code with the same bots.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "adversarial" / "hostile.py"
GOOD = {name: f"arena.games.cabanga.bots.{name}.bot" for name in ("greedy", "tidy", "random")}


def measure(deadline: float, matches: int, children: int, sandbox: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="arena-spin-") as folder:
        bots = Path(folder) / "bots.toml"
        entries = [(name, f'"-m", "{module}"') for name, module in GOOD.items()]
        entries.append(("spinner", f'"{HOSTILE}", "spin-all", "{children}"'))
        bots.write_text("".join(f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", {args}]\ncwd = "{ROOT}"\n\n'
                                for name, args in entries))
        db = Path(folder) / "ladder.db"
        done = subprocess.run(
            [sys.executable, "-c", "from arena.cli import run; run()", "ladder", "--bots", str(bots),
             "--game", "cabanga", "--seats", "4", "--matches", str(matches), "--tables", "1", "--seed", "5",
             "--db", str(db), "-o", "rounds=1", "--deadline", str(deadline), "--max-faults", "2", "--sandbox", sandbox],
            capture_output=True, text=True, timeout=1800, cwd=folder, check=False)
        if done.returncode != 0:
            raise SystemExit(f"the ladder failed: {done.stderr[-2000:]}")
        board = subprocess.run(
            [sys.executable, "-c", "from arena.cli import run; run()", "leaderboard", "--db", str(db), "--json"],
            capture_output=True, text=True, timeout=300, cwd=folder, check=False)
        if board.returncode != 0:
            raise SystemExit(f"the leaderboard failed: {board.stderr[-2000:]}")
    rows = [row for row in map(json.loads, board.stdout.splitlines()) if "pair" not in row]
    stored = sum(int(row["matches"]) for row in rows) // 4  # every match has 4 seats
    faults = {str(row["bot"]): int(row["faults"]) for row in rows}
    innocent = sum(n for name, n in faults.items() if name != "spinner")
    return {"deadline": deadline, "matches": stored, "innocent_faults": innocent,
            "spinner_faults": faults.get("spinner", 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=16)
    parser.add_argument("--children", type=int, default=3)
    parser.add_argument("--deadline", type=float, action="append")
    parser.add_argument("--sandbox", default="strict")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for deadline in args.deadline or [0.5, 0.2, 0.1]:
        row = measure(deadline, args.matches, args.children, args.sandbox)
        if args.json:
            print(json.dumps(row))
        else:
            print(f"deadline {deadline:.1f} s: {row['matches']} matches, faults on innocent bots "
                  f"{row['innocent_faults']}, on the spinner {row['spinner_faults']}")


if __name__ == "__main__":
    main()
