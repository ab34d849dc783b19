"""How strong the reference search bots are against the best bundled heuristic, at several time settings.

Run: python benchmarks/search_strength.py [--game cabanga|lama] [--ms 10,100,500] [--deal-sets N] [--tables T]
                                          [--sandbox strict|limits|auto] [--json]

For each time setting, one `arena ladder` run (real bot processes, in the jail by default) of a fixed number of
deal sets between exactly these bots: the search bot at ``--ms`` and the greedy bot, plus, in Cabanga! (3 seats
at least), the tidy bot in the third seat. Every deal set seats them all, with the seats rotated, so each deal
set gives one paired score of the search bot against the greedy bot (1 ahead, 1/2 level, 0 behind, averaged
over the rotations). It prints the mean score with its 95% interval over deal sets (normal approximation,
:func:`arena.ladder.estimate.mean_score_interval`), the search bot's latency and faults, and the wall time.

The run goes to its budget: no sequential test stops it early, so the mean is not biased by when it stopped.
Every setting plays the same deals (the same ladder seed), so the settings differ only in the search's time.
The ladder's database of each run stays in ``--keep`` (default: a temporary folder) for a closer look.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.ladder.estimate import Evidence, mean_score_interval
from arena.ladder.store import Store

ROOT = Path(__file__).resolve().parent.parent
OPPONENTS = {"cabanga": ("cabanga-greedy", "cabanga-tidy"), "lama": ("lama-greedy",)}
SEATS = {"cabanga": 3, "lama": 2}


def bot_list(game: str, ms: float) -> str:
    """Return a bot list (TOML) of the search bot at ``ms`` and the game's opponents, run from this checkout."""
    entries = [(f"{game}-search-{ms:g}", f"arena.games.{game}.bots.search.bot", ["--ms", f"{ms:g}"])]
    entries += [(name, f"arena.games.{game}.bots.{name.split('-', 1)[1]}.bot", []) for name in OPPONENTS[game]]
    text = ""
    for name, module, extra in entries:
        command = ", ".join(f'"{part}"' for part in ["{python}", "-m", module, *extra])
        text += f'[[bot]]\nname = "{name}"\ncommand = [{command}]\ncwd = "{ROOT}"\ngames = ["{game}"]\n\n'
    return text


def measure(game: str, ms: float, deal_sets: int, tables: int, sandbox: str, folder: Path) -> dict[str, object]:
    """Run one ladder of ``deal_sets`` deal sets; return the search bot's figures against the greedy bot."""
    search, greedy = f"{game}-search-{ms:g}", OPPONENTS[game][0]
    seats = SEATS[game]
    bots = folder / f"{game}-{ms:g}.toml"
    bots.write_text(bot_list(game, ms))
    db = folder / f"{game}-{ms:g}.db"
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", "from arena.cli import run; run()", "ladder", "--bots", str(bots),
                           "--game", game, "--seats", str(seats), "--matches", str(deal_sets * seats),
                           "--tables", str(tables), "--db", str(db), "--seed", "2112", "--sandbox", sandbox],
                          capture_output=True, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"the ladder of {search} failed:\n{done.stderr[-2000:]}")
    store = Store(db, readonly=True)
    try:
        scores = Evidence.of(store.results()).paired(search, greedy)
        row = next(row for row in store.leaderboard() if row.bot == search)
    finally:
        store.close()
    interval = mean_score_interval(scores)
    return {"game": game, "search": search, "against": greedy, "deal_sets": len(scores),
            "mean_score": round(sum(scores) / len(scores), 3) if scores else None,
            "low": round(interval[0], 3) if interval else None, "high": round(interval[1], 3) if interval else None,
            "faults": row.faults, "median_ms": round(row.median_ms, 1), "p99_ms": round(row.p99_ms, 1),
            "seconds": round(seconds)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(OPPONENTS), default="cabanga")
    parser.add_argument("--ms", default="10,100,500", help="milliseconds a decision, several (default 10,100,500)")
    parser.add_argument("--deal-sets", type=int, default=40, help="deal sets per time setting (default 40)")
    parser.add_argument("--tables", type=int, default=2, help="matches at once (default 2)")
    parser.add_argument("--sandbox", default="auto", choices=("auto", "strict", "limits"))
    parser.add_argument("--keep", type=Path, default=None, help="folder for the bot lists and databases")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-strength-") as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for ms in (float(x) for x in args.ms.split(",")):
            row = measure(args.game, ms, args.deal_sets, args.tables, args.sandbox, folder)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['search']} against {row['against']}: mean score {row['mean_score']} "
                      f"(95% interval {row['low']}-{row['high']}) over {row['deal_sets']} deal sets; "
                      f"its latency median {row['median_ms']} ms, p99 {row['p99_ms']} ms; faults {row['faults']}; "
                      f"{row['seconds']} s", flush=True)


if __name__ == "__main__":
    main()
