"""How tests/data/ladder-e732209.db and contest-e732209.db were made: with the arena of commit e732209, the
last before both stores stood on one SQLite shell (issue 37).

    git -C <clone> archive e732209 | tar -x -C /tmp/old && PYTHONPATH=/tmp/old python tests/data/make_old_databases.py

It is kept to say what the files hold, not to be run again: the files are the fixture (tests/test_store.py and
tests/contest/test_store.py open them with today's code and check that every stored thing is still there). Run
with a newer arena, it would make files of the newer format.

The ladder: 5 bots on L.A.M.A. (one round), 4 seats, 2 tables, in-process random players through the real
ladder (a fake executor in place of bot processes); "crashy" raises in one of its decisions in four (crash
faults); a first run of 10 matches, then a second run of 14 in which "bravo"'s program changed (its old
version kept under a retired name). The third deal set of the first run is incomplete when it stops.
The contest: three authors (an admin, a revoked one), submissions in every state, a report, a live session,
rate-limit attempts.
"""

from __future__ import annotations

import asyncio
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.contest.store import ContestStore, State
from arena.core.referee import LocalSeat, random_decision, random_seat, referee_match
from arena.games import get_game
from arena.games.base import Decision, Prompt, View
from arena.ladder.executor import Job, Played
from arena.ladder.ladder import Ladder, LadderConfig
from arena.ladder.store import Store
from arena.launch.botlist import BotSpec

HERE = Path(__file__).resolve().parent
NAMES = ("alpha", "bravo", "charlie", "delta", "crashy")


class InProcess:
    """An executor of random in-process players (the ladder's executor interface)."""

    tables = slots = 2

    async def start(self) -> None:
        return None

    def prepare(self, jobs: Sequence[Job]) -> None:
        return None

    def warm(self) -> dict[str, int]:
        return {}

    async def run(self, job: Job) -> Played:
        seats = [crashy(name, job.seed) if name == "crashy" else random_seat(name, f"{name}-{job.seed}")
                 for name in job.seating]
        record = await referee_match(job.game, seats, job.seed, job.options, clock=job.clock,
                                     max_faults=job.max_faults, match_id=job.match, throw_window=job.throw_window)
        return Played.of(record, 0.0, 0.01)

    async def release(self) -> None:
        return None

    async def close(self) -> None:
        return None


def crashy(name: str, seed: int) -> LocalSeat:
    rng = random.Random(seed)

    def decide(prompt: Prompt, view: View) -> Decision:
        if rng.random() < 0.25:
            raise RuntimeError("a planted crash")
        return random_decision(prompt, rng)

    return LocalSeat(name, decide)


def ladder(path: Path) -> None:
    game = get_game("lama")
    for matches, changed in ((10, ""), (14, "v2")):
        bots = [BotSpec(name, ("{python}", "-c", f"# {name} {changed if name == 'bravo' else ''}"), HERE)
                for name in NAMES]
        config = LadderConfig(game, game.options({"rounds": 1}), 4, 2026, bots, matches=matches, tables=2)
        store = Store(path)
        try:
            asyncio.run(Ladder(config, store, executor=InProcess()).run())
        finally:
            store.close()


def contest(path: Path) -> None:
    clock = iter(range(1_800_000_000, 1_900_000_000, 60))
    store = ContestStore(path, clock=lambda: float(next(clock)))
    try:
        store.add_author("root", admin=True)
        store.add_author("ann")
        store.add_author("bob")
        store.revoke("bob")
        queued = store.add_submission("ann", "greedy", "sha256:1")
        first = store.add_submission("ann", "steady", "sha256:2")
        for state in (State.BUILDING, State.CHECKING):
            store.set_state(first.id, state)
        store.set_report(first.id, "build (1.0 s):\nok\n\ncheck: 12 matches, no fault")
        store.enter_ladder(first.id)
        second = store.add_submission("ann", "steady", "sha256:3")
        for state in (State.BUILDING, State.CHECKING):
            store.set_state(second.id, state)
        store.enter_ladder(second.id)  # retires the first
        rejected = store.add_submission("ann", "broken", "sha256:4")
        store.set_state(rejected.id, State.BUILDING)
        store.set_state(rejected.id, State.REJECTED, "build failed: exit 2")
        store.set_report(rejected.id, "build (0.2 s):\nmake: *** [all] Error 2")
        store.open_session("ann", 1e9)  # far in the future: still live when a test opens the file
        store.allow("login", "127.0.0.1", 10, 1e9)
        store.allow("upload", "ann", 10, 1e9)
        assert store.submission(queued.id) is not None
    finally:
        store.close()


def main() -> None:
    for name in ("ladder-e732209.db", "contest-e732209.db"):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{HERE / name}{suffix}").unlink(missing_ok=True)
    ladder(HERE / "ladder-e732209.db")
    contest(HERE / "contest-e732209.db")
    print("made", *sorted(p.name for p in HERE.glob("*.db")), file=sys.stderr)


if __name__ == "__main__":
    main()
