"""The hard L.A.M.A. house bot: determinized search (PIMC) of every turn at the time the deadline allows, with
the other seats played in the rollouts by what they have shown in this match.

Every turn: deal the cards it cannot see so that they agree with everything it was told
(:func:`arena.games.lama.search.sample_world`), try every choice in each deal, play the round on, and value the
round's end by the match standing: its expected pairwise score at the match's end given every seat's total
(:class:`arena.games.search.MatchOdds`; a round that ends the match counts by its places, and the points
gained on a seat near the end weigh more than far from it). In the rollouts a seat seen quitting early (with
three cards or more, twice) is played as one that quits whenever it cannot play; its own seat by its own plan
(it plays a card of the top's value whenever it may, else the greedy plan's card, and quits rather than draws at
10 points or less, not 4), every other seat by the greedy plan quitting at 13 points or less
(:class:`arena.games.lama.search.LamaModel`). The turn chosen is that plan's own unless another beats it by a
standard error of their paired difference over the same deals: the best of several noisy means is biased upwards.
Against ``lama-medium`` at equal deals the match odds, the quitting bars and the preference for the plan's turn add
0.055 together (the third pass), and keeping the top in its own rollouts 0.032 more (the fifth; docs/figures.md).
The clock: at most ``--share`` of the
per-decision deadline (default 0.4: 400 ms at the default 1 s), stopping 30 ms before what the request allows
(:class:`SearchClock`).

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.hard.bot [--share 0.4]
[--ms MS] [--seed 0] [--worlds N] [--third-pass | --second-pass | --greedy-rollouts] (the earlier versions, for
measuring).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from typing import Any

from arena.games.base import Event, MatchInfo
from arena.games.lama import Card, LamaOptions, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.games.lama.search import QUIT_AT as GREEDY_QUIT_AT
from arena.games.lama.search import LamaKnowledge, LamaModel, SearchReport, options_from, pimc_turn
from arena.games.search import MatchOdds, SearchClock, seeded_rng
from arena.sdk import run

NO_CAP_MS = 1e9
QUIT_AT = 10
"""The rollouts' plan for its own seat: the greedy plan, quitting rather than drawing at 10 points or less
(:func:`arena.games.lama.search.quit_at_policy`)."""
OTHERS_QUIT_AT = 13
"""The same plan for every other seat not seen quitting early, quitting at 13 points or less (the medium search
quits about half the time at 10 to 15 points with nothing to play)."""
PREFER_FIRST = 1.0
"""Standard errors of the paired difference by which another turn must beat the plan's own to be chosen."""
SPREAD = 11.0
"""The standard deviation of two seats' difference in one round's points (greedy plans quitting at 10, 2 seats)."""
PACE = 8.0
"""The leading total's mean points a round in the same matches (40 points in about 5 rounds)."""


class HardLama(LamaBot):
    """PIMC of every turn at the deadline's share, rollouts by the fitted opponent plans."""

    agent = "lama-hard"

    def __init__(self, share: float = 0.4, ms: float = NO_CAP_MS, seed: int = 0, worlds: int | None = None,
                 own_quit_at: int | None = QUIT_AT, others_quit_at: int | None = OTHERS_QUIT_AT, match: bool = True,
                 spread: float = SPREAD, pace: float = PACE, prefer_first: float | None = PREFER_FIRST,
                 keep_top: bool = True) -> None:
        self.keep_top = keep_top
        self.prefer_first = prefer_first
        self.match = match
        self.spread = spread
        self.pace = pace
        self.own_quit_at = own_quit_at
        self.others_quit_at = others_quit_at
        self.clock = SearchClock(ms, share=share)
        self.seed = seed
        self.worlds = worlds
        self.deadline: float | None = None
        self.seconds_left: float | None = None
        self.knowledge: LamaKnowledge | None = None
        self.model: LamaModel | None = None
        self.options = LamaOptions()
        self.rng = random.Random(seed)
        self.report = SearchReport()

    def on_match_start(self, info: MatchInfo) -> None:
        self.options = options_from(info.options)
        self.knowledge = LamaKnowledge(info.seat, len(info.names), climb=self.options.climb)
        self.model = LamaModel(info.seat, len(info.names), self.own_quit_at, self.others_quit_at, self.keep_top)
        self.deadline = info.clock.deadline
        self.rng = seeded_rng(self.seed, info.match_id, info.seat)

    def on_events(self, events: Sequence[Event]) -> None:
        if self.knowledge is not None and self.model is not None:
            self.knowledge.observe(events)
            self.model.observe(events)

    def on_clock(self, seconds: float) -> None:
        self.seconds_left = seconds

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        seats = len(view.hand_sizes)
        if self.knowledge is None or self.model is None or self.knowledge.seat != view.seat or \
                len(self.knowledge.free) != seats:
            self.knowledge = LamaKnowledge(view.seat, seats, climb=self.options.climb, assume_plays=False)
            self.model = LamaModel(view.seat, seats, self.own_quit_at, self.others_quit_at, self.keep_top)
        self.clock.open(self.seconds_left, self.deadline)
        return pimc_turn(view, choices, self.knowledge, self.rng, self.clock, options=self.options,
                         max_worlds=self.worlds, report=self.report, policies=self.model.policies(),
                         quit_at=self.own_quit_at if self.own_quit_at is not None else GREEDY_QUIT_AT,
                         prefer_first=self.prefer_first, keep_top=self.keep_top, **self._odds(view))

    def _odds(self, view: LamaView) -> dict[str, Any]:
        if not self.match:
            return {}
        rounds = self.options.rounds
        return {"odds": MatchOdds(self.options.target, self.spread, self.pace, rounds),
                "rounds_left": rounds - view.round if rounds is not None else None}


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the bot's options and serve the arena."""
    parser = argparse.ArgumentParser(description="The hard L.A.M.A. house bot (PIMC at the deadline's share).")
    parser.add_argument("--share", type=float, default=0.4, help="share of the deadline to search (default 0.4)")
    parser.add_argument("--ms", type=float, default=NO_CAP_MS, help="milliseconds per turn at most")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness (default 0)")
    parser.add_argument("--worlds", type=int, default=None, help="deals per turn, whatever the clock says")
    parser.add_argument("--greedy-rollouts", action="store_true",
                        help="the greedy plan (quitting at 4) in the rollouts, as lama-medium, rounds scored by "
                        "points, the best mean chosen (the first pass, for measuring)")
    parser.add_argument("--third-pass", action="store_true",
                        help="its own rollouts by the greedy plan's card, not keeping the top (the third pass, for "
                        "measuring)")
    parser.add_argument("--second-pass", action="store_true",
                        help="quit-at-10 rollouts for every seat, rounds scored by points, the best mean chosen "
                        "(the second pass, for measuring)")
    args = parser.parse_args(argv)
    if args.second_pass:  # the rollouts, utility and choice of 2026-12-05's second pass
        run(HardLama(args.share, args.ms, args.seed, args.worlds, QUIT_AT, QUIT_AT, match=False, prefer_first=None,
                     keep_top=False))
    elif args.greedy_rollouts:  # the first pass's
        run(HardLama(args.share, args.ms, args.seed, args.worlds, None, None, match=False, prefer_first=None,
                     keep_top=False))
    elif args.third_pass:
        run(HardLama(args.share, args.ms, args.seed, args.worlds, keep_top=False))
    else:
        run(HardLama(args.share, args.ms, args.seed, args.worlds))


if __name__ == "__main__":
    main()
