"""Reading a ladder's database from a test while a ladder process may be writing it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from arena.ladder.store import Store, StoreError


def stored_count(db: Path) -> int:
    """Return how many matches the database holds (0 before it exists or holds a ladder); read-only, never waits
    for the writer's lock."""
    try:
        store = Store(db, readonly=True)
    except StoreError:
        return 0
    try:
        return store.match_count()
    except sqlite3.Error:  # a file being made by the ladder
        return 0
    finally:
        store.close()


def seeds(db: Path) -> list[tuple[int, int, int]]:
    """Return the (deal, rotation, seed) of every stored match, in the order stored."""
    store = Store(db, readonly=True)
    try:
        return store.match_seeds()
    finally:
        store.close()
