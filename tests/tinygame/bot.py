"""Tiny Duel's typed bot base class, and a bot that lays its highest card (run as a program)."""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.bot import Bot
from tinygame.rules import Card, TinyView


class TinyBot(Bot):
    def lay(self, view: TinyView, choices: Sequence[Card]) -> Card:
        raise NotImplementedError


class Highest(TinyBot):
    agent = "tiny-highest"

    def lay(self, view: TinyView, choices: Sequence[Card]) -> Card:
        return max(choices, key=lambda c: c.value)


if __name__ == "__main__":
    from arena.sdk import run

    run(Highest())
