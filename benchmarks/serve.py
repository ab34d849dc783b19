"""Time to first byte of every page of `arena serve` on a ladder database of a million synthetic matches.

    python benchmarks/serve.py                       # fills arena-serve-bench.db in the temporary folder once (kept)
    python benchmarks/serve.py --matches 100000 --db other.db --fresh

The database is filled through the ladder's store (arena.ladder.store: its deal sets, and its matches
20,000 to a transaction) with synthetic matches of 8 bots in deal sets of 4 rotations: random places, totals,
faults, decision times and a random walk of ratings; every match stores the same real replay (a Cabanga! match
between random players), so the file has the size of a real ladder's. Then `arena serve` starts on it
(printed: when it listens, and when each whole-database figure, computed in the background, is ready), and
every page and its JSON are asked for REPEAT times each: the median and the worst time to first byte are
printed (target: under 200 ms each). Last, a deal set of 4 matches is added as a running ladder adds it (they
stay: the kept database grows by 4 matches a run), and the board's answer time and how long it takes to show
them are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import random
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.core import replay  # noqa: E402
from arena.core.referee import Fault, FaultKind, MatchSummary, random_seat, referee_match  # noqa: E402
from arena.games import get_game  # noqa: E402
from arena.ladder.ratings import Rating  # noqa: E402
from arena.ladder.readmodel import ReadModel  # noqa: E402
from arena.ladder.store import Finished, LadderIdentity, Store  # noqa: E402

BOTS = [f"bot-{i}" for i in range(8)]
SEATS = 4
REPEAT = 7
TARGET_MS = 200.0


def real_replay() -> tuple[int, bytes]:
    """Return the seed and compressed replay of one real Cabanga! match between random players."""
    game = get_game("cabanga")
    seed = 20261201
    record = asyncio.run(referee_match(game, [random_seat(f"p{i}", i) for i in range(SEATS)], seed))
    return seed, replay.compress(replay.from_record(record))


def fill(path: Path, matches: int) -> None:
    """Write a ladder database of ``matches`` synthetic matches at ``path``, through the ladder's store."""
    began = time.monotonic()
    seed, blob = real_replay()
    store = Store(path)
    try:
        store.claim(LadderIdentity("cabanga", SEATS, 123456789, get_game("cabanga").options().to_json()))
        store.record_settings({"deadline": 1.0, "time_bank": 0.0, "max_faults": 3, "tables": 2, "matches": matches,
                               "hours": None})
        for name in BOTS:
            store.register_bot(name, name, [], Rating(25.0, 8.333))
        rng = random.Random(1)
        skill = [rng.gauss(0, 1) for _ in BOTS]
        mu = [25.0] * len(BOTS)
        sigma = [8.333] * len(BOTS)
        speed = [rng.uniform(0.0002, 0.02) for _ in BOTS]  # each bot's typical seconds a decision
        batch: list[Finished] = []
        stored = deal = 0
        while stored < matches:
            group = rng.sample(range(len(BOTS)), SEATS)
            store.plan_deal(deal, 1000 + deal, [BOTS[b] for b in group])
            for rotation in range(min(SEATS, matches - stored)):
                stored += 1
                seating = [group[(s - rotation) % SEATS] for s in range(SEATS)]
                scores = [skill[b] + rng.gauss(0, 1.5) for b in seating]
                order = sorted(range(SEATS), key=lambda s: -scores[s])
                places = [0] * SEATS
                totals = [0] * SEATS
                faults = []
                after = {}
                for place, s in enumerate(order, 1):
                    bot = seating[s]
                    places[s], totals[s] = place, 4 * place + rng.randrange(4)
                    if rng.random() < 0.002:
                        faults.append(Fault(s, rng.randrange(60), FaultKind.TIMEOUT, "no answer within 1.000 s"))
                    mu[bot] += (2.5 - place) * 0.1 * sigma[bot] / 8.333
                    sigma[bot] = max(0.8, sigma[bot] * 0.995)
                    after[BOTS[bot]] = Rating(mu[bot], sigma[bot])
                latencies = tuple(tuple(rng.expovariate(1 / speed[b]) for _ in range(3)) for b in seating)
                summary = MatchSummary(seed, 60, tuple(totals), tuple(places), frozenset(), tuple(faults), latencies)
                batch.append(Finished(deal, rotation, summary, tuple(BOTS[b] for b in seating), after, 0.1, blob))
            deal += 1
            if len(batch) >= 20_000 or stored >= matches:
                store.record_matches(batch)
                batch = []
    finally:
        store.close()
    print(f"filled {path} with {matches} matches in {time.monotonic() - began:.0f} s "
          f"({path.stat().st_size / 2**20:.0f} MiB)")


def ttfb(host: str, port: int, path: str) -> tuple[float, int]:
    """Return the seconds until the first byte of the answer to GET ``path``, and its status."""
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        began = time.perf_counter()
        connection.request("GET", path)
        response = connection.getresponse()  # returns once the status line and headers are in
        elapsed = time.perf_counter() - began
        response.read()
        return elapsed, response.status
    finally:
        connection.close()


def get(host: str, port: int, path: str) -> bytes:
    connection = http.client.HTTPConnection(host, port, timeout=60)
    try:
        connection.request("GET", path)
        return connection.getresponse().read()
    finally:
        connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=1_000_000)
    parser.add_argument("--db", type=Path, default=Path(tempfile.gettempdir()) / "arena-serve-bench.db")
    parser.add_argument("--fresh", action="store_true", help="Fill the database again even if it exists.")
    args = parser.parse_args()
    if args.fresh or not args.db.exists():
        for suffix in ("", "-wal", "-shm"):
            Path(f"{args.db}{suffix}").unlink(missing_ok=True)
        fill(args.db, args.matches)
    store = Store(args.db, readonly=True)
    count = ReadModel(store).newest_match()
    store.close()
    print(f"database {args.db}: {count} matches")

    began = time.monotonic()
    server = subprocess.Popen([sys.executable, "-c", "from arena.cli import run; run()", "serve", "--db", str(args.db)],
                              cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], 600)
        line = server.stdout.readline() if ready else ""
        found = re.search(r"http://([\d.]+):(\d+)/", line)
        if found is None:
            raise SystemExit(f"arena serve did not start: {line!r}")
        host, port = found.group(1), int(found.group(2))
        print(f"arena serve listening after {time.monotonic() - began:.1f} s")
        for path in ("/api/board", "/api/h2h", "/api/ratings"):
            while json.loads(get(host, port, path)).get("pending"):
                time.sleep(0.5)
            print(f"{path} ready (first computed in the background) {time.monotonic() - began:.1f} s after start")
        middle = count // 2
        paths = ["/", "/api/board", "/ratings", "/api/ratings", "/h2h", "/api/h2h", f"/h2h/{BOTS[0]}/{BOTS[1]}",
                 f"/api/h2h/{BOTS[0]}/{BOTS[1]}", f"/api/h2h/{BOTS[0]}/{BOTS[1]}?before={middle}", "/matches",
                 "/api/matches", f"/api/matches?before={middle}", f"/bot/{BOTS[3]}", f"/api/bot/{BOTS[3]}",
                 f"/api/bot/{BOTS[3]}/matches", f"/api/bot/{BOTS[3]}/matches?filter=won",
                 f"/api/bot/{BOTS[3]}/matches?filter=faulted", f"/api/bot/{BOTS[3]}/matches?before={middle}",
                 f"/match/{middle}", f"/api/match/{middle}", f"/api/match/{middle}?seat=1", "/api/version",
                 "/static/app.js", "/static/vendor/uPlot.iife.min.js", "/games/cabanga.js", "/match/99999999"]
        print(f"{'page':52} {'median ms':>10} {'worst ms':>9}  status")
        worst_all = 0.0
        for path in paths:
            times = []
            status = 0
            for _ in range(REPEAT):
                seconds, status = ttfb(host, port, path)
                times.append(seconds * 1000)
            worst_all = max(worst_all, max(times))
            flag = "" if max(times) < TARGET_MS else "  over target"
            print(f"{path:52} {statistics.median(times):10.1f} {max(times):9.1f}  {status}{flag}")
        print(f"worst time to first byte over every page: {worst_all:.1f} ms (target {TARGET_MS:.0f} ms)")
        live(args.db, host, port, count)
    finally:
        server.terminate()
        server.wait(30)


def live(path: Path, host: str, port: int, count: int) -> None:
    """Add a deal set as a ladder would; print the board's answer time and when it shows the new matches."""
    store = Store(path)  # the one writer, beside the server's read-only connections
    try:
        last = store.deals()[-1]
        group, blob = last.bots, store.replay(1)
        planned = store.plan_deal(last.deal + 1, last.seed + 1, group)
        summary = MatchSummary(blob["seed"], 60, tuple(range(1, SEATS + 1)), tuple(range(1, SEATS + 1)), frozenset(),
                               (), tuple((0.001,) for _ in range(SEATS)))
        store.record_matches([Finished(planned.deal, rotation, summary, (*group[rotation:], *group[:rotation]), {}, 0.1,
                                       replay.compress(blob)) for rotation in range(SEATS)])
    finally:
        store.close()
    began = time.perf_counter()
    first_byte, _ = ttfb(host, port, "/api/board")
    while True:
        at = json.loads(get(host, port, "/api/board"))["at"]
        if at >= count + SEATS or time.perf_counter() - began > 120:
            break
        time.sleep(0.2)
    print(f"after {SEATS} new matches: /api/board answered in {first_byte * 1000:.1f} ms; it showed them "
          f"{time.perf_counter() - began:.1f} s later (recomputed in the background)")


if __name__ == "__main__":
    main()
