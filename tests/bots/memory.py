"""A Cabanga! test bot with a memory: it says in its output (its log) whenever it sees a deal again.

Run by the arena: python -m tests.bots.memory (from the repository's root).

It keeps, for as long as its process lives, a fingerprint of every deal it was seated at: the start cards
and starter of every round (the eight start cards of a round are shuffled from the seed: 8! orders). A deal
set plays one seed once per rotation, so a process seated at two rotations of one deal set sees the same
round 1 again, at another seat, and knows its opponents' hands from what it held before. Its output:
  process MARK OTHERS      once: the mark it left in its scratch folder (``TMPDIR``), and how many marks of
                           other processes it found there (0: its scratch is its own)
  deal ROUND STARTER TOPS  each round it sees start
  hand CARDS               its first hand of each match
  REPEAT ROUND ...         a round start it had seen in an earlier match: the deal came back
It plays the first legal card and never throws.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence

from arena.games.base import Event, MatchInfo, MatchResult
from arena.games.cabanga import CabangaView, Card, PlayCard, RoundStarted
from arena.sdk import Bot, run


class MemoryBot(Bot):
    agent = "memory"

    def __init__(self) -> None:
        self.remembered: set[tuple[int, int, tuple[str, ...]]] = set()
        self.this_match: set[tuple[int, int, tuple[str, ...]]] = set()
        self.first_request = True
        scratch = os.environ.get("TMPDIR", "/tmp")
        others = [name for name in os.listdir(scratch) if name.startswith("memory-mark-")]
        mark = f"memory-mark-{secrets.token_hex(8)}"
        with open(os.path.join(scratch, mark), "w") as file:
            file.write("seen\n")
        print("process", mark, len(others), flush=True)

    def on_match_start(self, info: MatchInfo) -> None:
        self.this_match = set()
        self.first_request = True

    def on_events(self, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, RoundStarted):
                start = (event.round, event.starter, tuple(card.text for card in event.tops))
                print("deal", event.round, event.starter, " ".join(start[2]), flush=True)
                if start in self.remembered:
                    print("REPEAT", event.round, event.starter, " ".join(start[2]), flush=True)
                self.this_match.add(start)

    def on_match_end(self, result: MatchResult, events: Sequence[Event]) -> None:
        self.on_events(events)
        self.remembered |= self.this_match

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        self._first_hand(view)
        return choices[0]

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        self._first_hand(view)
        return ()

    def _first_hand(self, view: CabangaView) -> None:
        if self.first_request:
            self.first_request = False
            print("hand", " ".join(card.text for card in view.hand), flush=True)


if __name__ == "__main__":
    run(MemoryBot())
