"""A L.A.M.A. search bot: determinized search (PIMC) over sampled deals, the greedy plan as rollout policy.

Every turn: deal the cards it cannot see so that they agree with what it was told
(:func:`arena.games.lama.search.sample_world`), try each of its choices in each deal, play the round out with
the greedy plan for every seat, and keep the choice that did best on average, while its time lasts.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.search.bot [--ms 100]
[--seed 0] [--worlds N]. ``--ms``: milliseconds per turn at most (less when the deadline is shorter; see
:class:`arena.games.search.SearchClock`). ``--worlds N``: N deals per turn whatever the clock says (then the bot
is deterministic for a seed and match id; under a clock, the number of deals depends on the machine's speed).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from arena.games.base import Event, MatchInfo
from arena.games.lama import Card, LamaOptions, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.games.lama.search import LamaKnowledge, SearchReport, options_from, pimc_turn
from arena.games.search import SearchClock, seeded_rng
from arena.sdk import run


class SearchLama(LamaBot):
    """PIMC over sampled deals; the greedy bot's plan in the rollouts."""

    agent = "lama-search"

    def __init__(self, ms: float = 100.0, seed: int = 0, worlds: int | None = None) -> None:
        self.clock = SearchClock(ms)
        self.seed = seed
        self.worlds = worlds
        self.deadline: float | None = None
        self.seconds_left: float | None = None
        self.knowledge: LamaKnowledge | None = None
        self.options = LamaOptions()
        self.rng = random.Random(seed)
        self.report = SearchReport()

    def on_match_start(self, info: MatchInfo) -> None:
        self.options = options_from(info.options)
        self.knowledge = LamaKnowledge(info.seat, len(info.names), climb=self.options.climb)
        self.deadline = info.clock.deadline
        self.rng = seeded_rng(self.seed, info.match_id, info.seat)

    def on_events(self, events: Sequence[Event]) -> None:
        if self.knowledge is not None:
            self.knowledge.observe(events)

    def on_clock(self, seconds: float) -> None:
        self.seconds_left = seconds

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        if self.knowledge is None or self.knowledge.seat != view.seat or len(self.knowledge.free) != len(
                view.hand_sizes):
            self.knowledge = LamaKnowledge(view.seat, len(view.hand_sizes), climb=self.options.climb,
                                           assume_plays=False)
        self.clock.open(self.seconds_left, self.deadline)
        return pimc_turn(view, choices, self.knowledge, self.rng, self.clock, options=self.options,
                         max_worlds=self.worlds, report=self.report)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the bot's options and serve the arena."""
    parser = argparse.ArgumentParser(description="A L.A.M.A. search bot (PIMC).")
    parser.add_argument("--ms", type=float, default=100.0, help="milliseconds per turn at most (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness (default 0)")
    parser.add_argument("--worlds", type=int, default=None, help="deals per turn, whatever the clock says")
    args = parser.parse_args(argv)
    run(SearchLama(args.ms, args.seed, args.worlds))


if __name__ == "__main__":
    main()
