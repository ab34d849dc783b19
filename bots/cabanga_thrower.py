"""A weak Cabanga! bot: plays any legal card at random, but never misses a chance to throw.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m bots.cabanga_thrower
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.cabanga import CabangaView, Card
from arena.sdk import run
from bots.cabanga_random import RandomCabanga


class ThrowerCabanga(RandomCabanga):
    """Random plays; every throwable card thrown."""

    agent = "cabanga-thrower"

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


if __name__ == "__main__":
    run(ThrowerCabanga())
