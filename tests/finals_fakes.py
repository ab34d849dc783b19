"""Bots of known strengths for the finals' tests: an executor that plays every match in-process, each bot a
L.A.M.A. greedy player that takes a random choice with its own probability (0: the best, 1: a random player).

The same job gives the same match (the players' randomness is seeded by the deal, the rotation and the seat), so a
finals run on one table is the same run when resumed, and every match's replay re-runs.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from arena.core.referee import LocalSeat, random_decision, referee_match
from arena.games import get_game
from arena.games.base import Decision, Prompt, View
from arena.games.lama.bots.greedy.bot import GreedyLama
from arena.ladder.executor import Job, Played
from arena.launch.botlist import BotSpec
from arena.launch.process import LaunchError

GAME = get_game("lama")
OPTIONS = GAME.options({"rounds": "1"})
SEATS = 3


def player(name: str, epsilon: float, seed: str) -> LocalSeat:
    """Return a seat that plays as the greedy bot, but a random choice with probability ``epsilon``."""
    greedy = GreedyLama()
    rng = random.Random(seed)

    def decide(prompt: Prompt, view: View) -> Decision:
        if rng.random() < epsilon:
            return random_decision(prompt, rng)
        return greedy.decide(prompt, view)

    return LocalSeat(name, decide)


class StrengthExecutor:
    """Stands in for the bot processes: each bot of ``epsilon`` plays with its probability of a random choice; the
    bots of ``broken`` never start."""

    def __init__(self, epsilon: Mapping[str, float], tables: int = 1, broken: Collection[str] = (),
                 delay: float = 0.0) -> None:
        self.epsilon = dict(epsilon)
        self.tables = self.slots = tables
        self.broken = set(broken)
        self.delay = delay
        self.jobs: list[tuple[int, int, tuple[str, ...]]] = []

    async def start(self) -> None:
        return None

    def prepare(self, jobs: Sequence[Job]) -> None:
        return None

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        await asyncio.sleep(self.delay)
        bad = [name for name in job.seating if name in self.broken]
        if bad:
            raise LaunchError(f"bot {bad[0]!r} exited with code 3 before connecting", bots=bad)
        seats = [player(name, self.epsilon.get(name.split(":")[0], 0.5), f"{job.seed}/{job.rotation}/{seat}")
                 for seat, name in enumerate(job.seating)]
        record = await referee_match(job.game, seats, job.seed, job.options, clock=job.clock,
                                     max_faults=job.max_faults, match_id=job.match)
        self.jobs.append((job.deal, job.rotation, tuple(job.seating)))
        return Played.of(record, 0.0, 0.001)

    async def release(self) -> None:
        return None

    async def close(self) -> None:
        return None


def specs(names: Sequence[str], folder: Path) -> list[BotSpec]:
    """Return bot specs for ``names`` (never started: the executor plays them)."""
    return [BotSpec(name, ("fake", name), folder) for name in names]
