"""Tiny Duel's bundled bot tiny-lowest: lays its lowest card."""

from __future__ import annotations

from collections.abc import Sequence

from arena.sdk import run
from tinygame.bot import TinyBot
from tinygame.rules import Card, TinyView


class Lowest(TinyBot):
    agent = "tiny-lowest"

    def lay(self, view: TinyView, choices: Sequence[Card]) -> Card:
        return min(choices, key=lambda c: c.value)


if __name__ == "__main__":
    run(Lowest())
