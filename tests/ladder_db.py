"""Reading a ladder's database from a test while a ladder process may be writing it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from arena.ladder.store import Store


def stored_count(db: Path) -> int:
    """Return how many matches the database holds (0 before it exists); read-only, never waits for a lock."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            return int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0


def seeds(db: Path) -> list[tuple[int, int, int]]:
    """Return the (deal, rotation, seed) of every stored match, in the order stored."""
    store = Store(db, readonly=True)
    try:
        return store.match_seeds()
    finally:
        store.close()
