"""A Cabanga! bot that takes half its deadline over every decision, then plays like the random bot.

benchmarks/decision.py seats it to show that the arena's clocks give a bot that answers in time no fault.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from arena.games.base import MatchInfo
from arena.games.cabanga import CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.sdk import run


class HalfDeadline(CabangaBot):
    """Sleeps half the match's per-decision deadline before each answer."""

    agent = "half-deadline"

    def __init__(self) -> None:
        self.rng = random.Random()
        self.pause = 0.0

    def on_match_start(self, info: MatchInfo) -> None:
        self.pause = info.clock.deadline / 2

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        time.sleep(self.pause)
        return self.rng.choice(choices)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        time.sleep(self.pause)
        return [card for card in candidates if self.rng.random() < 0.5]


if __name__ == "__main__":
    run(HalfDeadline())
