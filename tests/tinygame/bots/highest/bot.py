"""Tiny Duel's bundled bot tiny-highest: lays its highest card (the game's bot module's Highest)."""

from __future__ import annotations

from arena.sdk import run
from tinygame.bot import Highest

if __name__ == "__main__":
    run(Highest())
