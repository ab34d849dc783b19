"""A Cabanga! search bot: determinized search (PIMC) over sampled deals, the greedy plan as rollout policy.

Every PLAY decision: deal the cards it cannot see so that they agree with what it was told
(:func:`arena.games.cabanga.search.sample_world`), try its best few plays in each deal, play the round out with
the greedy plan for every seat, and keep the play that did best on average, while its time lasts. Throws
everything it may (a thrown card leaves its hand and costs the player a draw).

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.search.bot [--ms 100]
[--seed 0] [--width 8] [--worlds N]. ``--ms``: milliseconds per play at most (less when the deadline is shorter; see
:class:`arena.games.search.SearchClock`). ``--worlds N``: N deals per play whatever the clock says (then the bot
is deterministic for a seed and match id; under a clock, the number of deals depends on the machine's speed).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from arena.games.base import Event, MatchInfo
from arena.games.cabanga import CabangaOptions, CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.games.cabanga.search import CabangaKnowledge, SearchReport, options_from, pimc_play
from arena.games.search import SearchClock, seeded_rng
from arena.sdk import run


class SearchCabanga(CabangaBot):
    """PIMC over sampled deals; the greedy bot's plan in the rollouts; every throw."""

    agent = "cabanga-search"

    def __init__(self, ms: float = 100.0, seed: int = 0, width: int = 6, worlds: int | None = None,
                 horizon: int | None = None) -> None:
        self.horizon = horizon
        self.clock = SearchClock(ms)
        self.seed = seed
        self.width = width
        self.worlds = worlds
        self.deadline: float | None = None
        self.seconds_left: float | None = None
        self.knowledge: CabangaKnowledge | None = None
        self.options = CabangaOptions()
        self.rng = random.Random(seed)
        self.report = SearchReport()

    def on_match_start(self, info: MatchInfo) -> None:
        self.knowledge = CabangaKnowledge(info.seat, len(info.names))
        self.options = options_from(info.options)
        self.deadline = info.clock.deadline
        self.rng = seeded_rng(self.seed, info.match_id, info.seat)

    def on_events(self, events: Sequence[Event]) -> None:
        if self.knowledge is not None:
            self.knowledge.observe(events)

    def on_clock(self, seconds: float) -> None:
        self.seconds_left = seconds

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        if self.knowledge is None or self.knowledge.seat != view.seat or len(self.knowledge.free) != len(
                view.hand_sizes):
            self.knowledge = CabangaKnowledge(view.seat, len(view.hand_sizes), assume_full_throws=False)
        self.clock.open(self.seconds_left, self.deadline)
        return pimc_play(view, choices, self.knowledge, self.rng, self.clock, options=self.options,
                         width=self.width, horizon=self.horizon, max_worlds=self.worlds, report=self.report)

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        return candidates


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the bot's options and serve the arena."""
    parser = argparse.ArgumentParser(description="A Cabanga! search bot (PIMC).")
    parser.add_argument("--ms", type=float, default=100.0, help="milliseconds per play at most (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness (default 0)")
    parser.add_argument("--width", type=int, default=6, help="plays tried per deal, best first (default 6)")
    parser.add_argument("--worlds", type=int, default=None, help="deals per play, whatever the clock says")
    args = parser.parse_args(argv)
    run(SearchCabanga(args.ms, args.seed, args.width, args.worlds))


if __name__ == "__main__":
    main()
