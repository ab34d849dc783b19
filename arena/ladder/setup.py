"""What a ladder decides for itself before it runs: its seed, its number of tables, where its matches are played
(here, or on a Ray cluster) and its rating system. The command line (``arena ladder``, ``arena compare``) only
parses and prints; it asks :func:`open_ladder` for a ready :class:`~arena.ladder.ladder.Ladder`.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.ladder.cluster import RayExecutor
from arena.ladder.executor import Executor
from arena.ladder.ladder import Ladder, LadderConfig, LadderError, Progress
from arena.ladder.ratings import TrueSkillSystem
from arena.ladder.store import LadderIdentity, Store

SECRET_BITS = 128
"""The bits of a drawn ladder seed: far beyond guessing, and every deal seed is a keyed hash under it."""


def ladder_seed(store: Store, seed: int | None, rng: random.Random | None = None, *,
                untrusted: bool = False, config: LadderConfig | None = None) -> tuple[int, bool]:
    """Return the ladder's seed and whether it was drawn (a secret) rather than given.

    It is ``seed`` when given; else the one ``store`` holds (a resumed ladder keeps its seed); else a new random
    one of :data:`SECRET_BITS` bits. With ``untrusted`` (the bots are strangers', as in a contest), a held seed that
    was given rather than drawn (an older contest's, which defaulted to 1) is replaced by a drawn one when the
    store holds ``config``'s ladder: the deal sets planned so far keep their stored seeds, every later one follows
    from the secret.

    Raises :class:`~arena.ladder.store.StoreError` for a store it cannot read or write.
    """
    if seed is not None:
        return seed, False
    held = store.identity()
    draw = rng or random.SystemRandom()
    if held is None:
        return draw.getrandbits(SECRET_BITS), True
    if untrusted and not held.drawn and config is not None and _same_ladder(held, config):
        secret = draw.getrandbits(SECRET_BITS)
        store.rekey(secret)
        return secret, True
    return held.seed, held.drawn


def _same_ladder(held: LadderIdentity, config: LadderConfig) -> bool:
    return (held.game, held.seats, json.dumps(held.options, sort_keys=True)) == (
        config.game.name, config.seats, json.dumps(config.options.to_json(), sort_keys=True))


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
                sandbox_mode: str = "auto", untrusted: bool = False,
                on_progress: Callable[[Progress], None] | None = None, on_note: Callable[[str], None] | None = None,
                executor: Executor | None = None, rng: random.Random | None = None) -> Opened:
    """Return the ladder of ``config`` on ``store``: rated by TrueSkill for its game and seats (``tau``), played on
    the Ray cluster at ``cluster`` (its bots shipped from the folder ``ship``; every node seeing the folder
    ``shared`` as this machine does) or here, or on ``executor``.

    The ladder's seed is ``seed``, or the one ``store`` holds, or a new one (:func:`ladder_seed`; ``untrusted``: the
    bots are strangers', and a held seed that was given is replaced by a secret); its tables are ``tables``, or
    :func:`default_tables`. Both are written into ``config``. ``rng`` draws a new seed (default: the system's
    randomness; tests pass a seeded one).

    Raises :class:`LadderError` for a configuration that cannot run (a ship folder without a cluster or not
    holding a bot) and :class:`~arena.ladder.store.StoreError` for a store that belongs to another ladder.
    """
    if ship is not None and cluster is None:
        raise LadderError("--cluster-ship ships the bots to a cluster's nodes: give --cluster too")
    if ship is not None:
        outside = [b.name for b in config.bots if not b.remote and not b.cwd.is_relative_to(ship.resolve())]
        if outside:
            raise LadderError(f"bot {outside[0]!r} is not in the --cluster-ship folder {str(ship)!r}")
    held = store.identity()
    config.seed, config.seed_drawn = ladder_seed(store, seed, rng, untrusted=untrusted, config=config)
    if held is not None and not held.drawn and config.seed_drawn and on_note is not None:
        on_note("this ladder's seed was given (an older contest's default), so its bots could compute its deals: "
                "a secret one is drawn for every deal set from now on")
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
