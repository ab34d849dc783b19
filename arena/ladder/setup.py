"""What a ladder decides for itself before it runs: its seed, its number of tables, where its matches are played
(here, or on a Ray cluster) and its rating system. The command line (``arena ladder``, ``arena compare``) only
parses and prints; it asks :func:`open_ladder` for a ready :class:`~arena.ladder.ladder.Ladder`.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.ladder.cluster import RayExecutor
from arena.ladder.executor import Executor
from arena.ladder.ladder import Ladder, LadderConfig, LadderError, Progress
from arena.ladder.ratings import TrueSkillSystem
from arena.ladder.store import Store


def ladder_seed(store: Store, seed: int | None, rng: random.Random | None = None) -> int:
    """Return the ladder's seed: ``seed`` when given, else the one ``store`` holds (a resumed ladder keeps its
    seed), else a new random one. Raises :class:`~arena.ladder.store.StoreError` for a store it cannot read."""
    if seed is not None:
        return seed
    held = store.identity()
    return held.seed if held is not None else (rng or random.SystemRandom()).randrange(2**62)


def default_tables(cluster: str | None, cpus: int | None = None) -> int | None:
    """Return the tables of a ladder whose operator gave none: one per core here; on a cluster ``None`` (the
    cluster's executor counts its nodes' cores)."""
    if cluster is not None:
        return None
    return cpus or os.cpu_count() or 1


@dataclass
class Opened:
    """A ladder ready to run, and where it plays (``None``: here)."""

    ladder: Ladder
    cluster: RayExecutor | None


def open_ladder(config: LadderConfig, store: Store, *, seed: int | None = None, tables: int | None = None,
                tau: float = 0.0, cluster: str | None = None, ship: Path | None = None, shared: Path | None = None,
                sandbox_mode: str = "auto",
                on_progress: Callable[[Progress], None] | None = None, on_note: Callable[[str], None] | None = None,
                executor: Executor | None = None) -> Opened:
    """Return the ladder of ``config`` on ``store``: rated by TrueSkill for its game and seats (``tau``), played on
    the Ray cluster at ``cluster`` (its bots shipped from the folder ``ship``; every node seeing the folder
    ``shared`` as this machine does) or here, or on ``executor``.

    The ladder's seed is ``seed``, or the one ``store`` holds, or a new one (:func:`ladder_seed`); its tables are
    ``tables``, or :func:`default_tables`. Both are written into ``config``.

    Raises :class:`LadderError` for a configuration that cannot run (a ship folder without a cluster or not
    holding a bot) and :class:`~arena.ladder.store.StoreError` for a store that belongs to another ladder.
    """
    if ship is not None and cluster is None:
        raise LadderError("--cluster-ship ships the bots to a cluster's nodes: give --cluster too")
    if ship is not None:
        outside = [b.name for b in config.bots if not b.remote and not b.cwd.is_relative_to(ship.resolve())]
        if outside:
            raise LadderError(f"bot {outside[0]!r} is not in the --cluster-ship folder {str(ship)!r}")
    config.seed = ladder_seed(store, seed)
    config.tables = tables or default_tables(cluster) or 1
    ray: RayExecutor | None = None
    if cluster is not None and executor is None:
        ray = RayExecutor(cluster, tables, seats=config.seats,
                          sandbox_mode=sandbox_mode, log_dir=config.log_dir, on_note=on_note,
                          ship=ship.resolve() if ship is not None else None, shared=shared)
        executor = ray
    ladder = Ladder(config, store, on_progress=on_progress, on_note=on_note, executor=executor,
                    rating_system=TrueSkillSystem.for_game(config.game.name, config.seats, tau=tau))
    return Opened(ladder, ray)
