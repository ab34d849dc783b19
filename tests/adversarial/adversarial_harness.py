"""The harness of the adversarial suite: a server, a pool of warm well-behaved bots, and a way to seat a hostile one.

Every hostile match is a real match between real processes on a private Unix socket: the hostile bot plus two
well-behaved bots, one round of Cabanga!, a short deadline. After each, the hostile bot is stopped and a match
between well-behaved bots only must play without a fault: the arena is still healthy.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from arena.core.deals import DealKey
from arena.core.referee import Clock, MatchRecord, referee_match
from arena.games import get_game
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.process import BotProcess
from arena.launch.sandbox import Limits
from arena.protocol.server import ArenaServer, Slot

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parent / "hostile.py"
DEADLINE = 0.25
MAX_FAULTS = 2
T = TypeVar("T")


def good(name: str, module: str) -> BotSpec:
    return BotSpec(name, ("{python}", "-m", f"arena.games.{module}.bot"), ROOT)


def hostile(name: str, *mode: str, **limits: int) -> BotSpec:
    """A hostile bot run as ``python -m tests.adversarial.hostile`` from the project's root, as the bundled
    bots are: its jail holds the ``tests`` folder and the SDK of the ``arena`` package, nothing else of the project."""
    return BotSpec(name, ("{python}", "-m", "tests.adversarial.hostile", *mode), ROOT, Limits().updated(limits))


GOOD = [good("greedy", "cabanga.bots.greedy"), good("random", "cabanga.bots.random"), good("tidy", "cabanga.bots.tidy")]


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def start_time(pid: int) -> int | None:
    """Return when process ``pid`` started (clock ticks after boot), or ``None`` when there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22; the name before ")" may hold spaces


@dataclass
class Arena:
    """A long-lived server and process pool, driven from synchronous tests through one event loop."""

    runner: asyncio.Runner
    server: ArenaServer
    pool: ProcessPool
    log_dir: Path
    seed: int = 100
    peak_rss: float = 0.0
    pids: dict[int, int | None] = field(default_factory=dict)
    """Every bot process seen: pid to its start time (a reused pid is another process)."""

    def run(self, make: Callable[[], Awaitable[T]], timeout: float = 30.0) -> T:
        async def bounded() -> T:
            return await asyncio.wait_for(make(), timeout)
        return self.runner.run(bounded())

    def process(self, name: str) -> tuple[Slot, BotProcess]:
        session = self.pool._running[(name, 0)]
        assert session.process is not None
        return session.slot, session.process

    def play(self, bot: BotSpec, *, before: Callable[[], None] | None = None, deadline: float = DEADLINE,
             **options: Any) -> MatchRecord:
        """Play one round of Cabanga! with ``bot`` in seat 0 and two good bots; return the record.

        ``before`` runs once the seats are connected, before the match starts.
        """
        game = get_game("cabanga")
        self.seed += 1

        async def match() -> MatchRecord:
            seats = await self.pool.seat([bot, *GOOD[:2]], deal=DealKey(game.name, self.seed))
            for s in self.pool._running.values():
                if s.process and s.process.pid and s.process.pid not in self.pids:
                    self.pids[s.process.pid] = start_time(s.process.pid)
            if before is not None:
                before()
            sampler = asyncio.create_task(self._sample_rss())
            try:
                return await referee_match(game, seats, self.seed, game.options({"rounds": 1, **options}),
                                        clock=Clock(deadline), max_faults=MAX_FAULTS, match_id=f"m{self.seed}")
            finally:
                sampler.cancel()

        return self.run(match)

    async def _sample_rss(self) -> None:
        while True:
            self.peak_rss = max(self.peak_rss, rss_mib())
            await asyncio.sleep(0.02)

    def retire(self, name: str) -> None:
        self.run(lambda: self.pool.retire(name))

    def healthy(self) -> MatchRecord:
        """Play a match between the well-behaved bots only; it must have no fault."""
        game = get_game("cabanga")
        self.seed += 1

        async def match() -> MatchRecord:
            seats = await self.pool.seat(GOOD, deal=DealKey(game.name, self.seed))
            return await referee_match(game, seats, self.seed, game.options({"rounds": 1}), clock=Clock(1.0),
                                    max_faults=MAX_FAULTS, match_id=f"h{self.seed}")

        record = self.run(match)
        assert record.result is not None and record.faults == [], record.faults
        return record
