"""Matches between bot processes: an arena server, tables of launched bots, and the referee.

Every launched bot reaches the arena through a server and Unix socket of its own (:class:`arena.launch.session.
BotSession`); the shared server of :func:`serving` listens on a Unix socket in a private temporary folder, and
on ``address`` (``HOST:PORT``) if given, for remote bots.
"""

from __future__ import annotations

import contextlib
import secrets
import statistics
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from arena.core.deals import DealKey
from arena.core.referee import DEFAULT_CLOCK, Clock, MatchRecord, referee_match
from arena.games.base import Event, Game, Options
from arena.launch import tempdir
from arena.launch.botlist import BotSpec
from arena.launch.pool import ProcessPool
from arena.launch.sandbox import Sandbox
from arena.protocol.server import ArenaServer


@contextlib.asynccontextmanager
async def serving(address: str | None = None) -> AsyncIterator[ArenaServer]:
    """Run the shared arena server for the body of the ``async with``: on a private Unix socket, and also on
    ``address`` (``HOST:PORT``) if given, for remote bots. Each bot a table launches has a server of its own.
    """
    server = ArenaServer()
    with tempdir.folder("serve") as folder:
        await server.start(f"unix:{folder / 'arena.sock'}", also=[address] if address else [])
        try:
            yield server
        finally:
            await server.stop()


def seat_names(bots: Sequence[BotSpec]) -> list[str]:
    """Return one name per seat: the bot's name, with ``#2``, ``#3``... when a bot holds several seats."""
    names: list[str] = []
    for i, bot in enumerate(bots):
        count = sum(1 for b in bots[: i + 1] if b.name == bot.name)
        names.append(bot.name if count == 1 else f"{bot.name}#{count}")
    return names


async def run_match(
    game: Game,
    bots: Sequence[BotSpec],
    seed: int,
    options: Options | None = None,
    *,
    clock: Clock = DEFAULT_CLOCK,
    max_faults: int = 3,
    address: str | None = None,
    log_dir: Path | None = None,
    on_event: Callable[[Event], None] | None = None,
    sandbox: Sandbox | None = None,
    sealed_window: float = 0.0,
    match_id: str | None = None,
) -> MatchRecord:
    """Launch one process per seat (``bots`` in seat order), play one match, stop them; return the record.

    Every launched process is new, so none has played this deal before; a remote bot is a process the arena
    does not own, and may remember the deal from an earlier match of the same seed (README "Fair deals").

    Raises :class:`arena.launch.process.LaunchError` when a bot does not start or connect, and
    :class:`arena.games.base.GameError` for a bad configuration.
    """
    async with serving(address) as server:
        # without a log folder the bots still log to a private one, so a bot that fails to start can say why
        with tempdir.folder("logs") as scratch:
            pool = ProcessPool(server, log_dir=log_dir or scratch, sandbox=sandbox)
            match_id = match_id or new_match_id(game)
            try:
                seats = await pool.seat(bots, seat_names(bots), deal=DealKey(game.name, seed),
                                        match=match_id)
                return await referee_match(game, seats, seed, options, clock=clock, max_faults=max_faults,
                                        match_id=match_id, on_event=on_event, sealed_window=sealed_window)
            finally:
                await pool.close()


def new_match_id(game: Game) -> str:
    """Return a fresh match id for ``game``: random, never derived from the seed (bots see the id, G2)."""
    return f"{game.name}-{secrets.token_hex(4)}"


def latency_summary(seconds: Sequence[float]) -> tuple[float, float]:
    """Return the median and 99th percentile of ``seconds`` (0, 0 when empty)."""
    if not seconds:
        return 0.0, 0.0
    if len(seconds) == 1:
        return seconds[0], seconds[0]
    ordered = sorted(seconds)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return statistics.median(ordered), p99
