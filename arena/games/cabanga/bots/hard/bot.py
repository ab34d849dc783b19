"""The hard Cabanga! house bot: determinized search of every decision, plays and sealed throws alike.

Every decision (a PLAY, or a THROW it is asked with the others, sealed): deal the cards it cannot see so that
they agree with every public event and with what each other seat has shown of its plan in this match (a seat
that never throws may hold the cards of a gap it did not throw into; one that always throws may not), try each
choice in every deal (common random numbers), play the round on with each seat's fitted plan (the greedy plan,
with how often it throws and how often it sheds its costliest card as fitted), and keep the choice that did best
on average. (``--tracking-rollouts`` plays the rollouts by a card-counting plan instead, which beats the greedy
plan as a bot, but made no stronger search and halves the rollouts a second: docs/figures.md.) Choices far behind
are dropped as deals come in (by their paired difference on the same deals), so the time goes to the close
ones, and the search ends early when one is clearly ahead of every other. A throw is weighed like a play: what it
sheds from the hand against the cards it may still fill a gap with. See
:func:`arena.games.cabanga.search.hard_search`.

The clock: at most ``--share`` of the match's per-decision deadline (default 0.4, so 400 ms at the default 1 s
deadline), less when the request left less (it stops 30 ms before the time the request allows), and a little of
a time bank when there is one (:class:`arena.games.search.SearchClock`). ``--ms`` caps it further.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.cabanga.bots.hard.bot
[--share 0.4] [--ms MS] [--seed 0] [--worlds N] [--plain] [--width N] [--throw-all] [--tracking-rollouts]
[--ismcts].
``--worlds N``: N deals per decision whatever the clock says (deterministic for a seed and match id). For
measuring what each part adds: ``--plain`` (no opponent model: every seat played by the greedy plan and trusted
to throw everything), ``--width N`` (only the N best plays by the greedy plan), ``--throw-all`` (no throw search),
``--ismcts`` (information-set MCTS over the same deals instead: :func:`arena.games.cabanga.search.ismcts_search`,
``--worlds N`` then N iterations; weaker than the determinized search at equal CPU: docs/figures.md).
Keyword arguments only, for measuring in-process (``benchmarks/search_duel.py``), all off by default and none
stronger in its screen (docs/figures.md): ``own_exact`` and ``others_exact`` (later turns in a rollout by the
world's plan, :func:`arena.games.cabanga.search.exact_row`), ``likely`` (worlds weighed by each seat's last play,
:meth:`arena.games.cabanga.search.CabangaModel.fit`), ``horizon`` (rollouts cut after that many steps).
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence
from typing import Any

from arena.games.base import Event, MatchInfo
from arena.games.cabanga import CabangaOptions, CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.games.cabanga.search import (
    PREFER_FIRST,
    CabangaKnowledge,
    CabangaModel,
    PlanCache,
    SearchReport,
    hard_search,
    ismcts_search,
    options_from,
    ranked_plays,
    throw_options,
)
from arena.games.search import MatchOdds, SearchClock, seeded_rng
from arena.sdk import run

NO_CAP_MS = 1e9
SPREAD = 4.3
"""The match odds' (``match``) standard deviation of two seats' difference in one round's points."""
PACE = 2.6 * 1.5
"""The match odds' mean points a round of the leading total."""


class HardCabanga(CabangaBot):
    """Search of plays and throws over deals that agree with the events and the fitted opponent models."""

    agent = "cabanga-hard"

    def __init__(self, share: float = 0.4, ms: float = NO_CAP_MS, seed: int = 0, worlds: int | None = None,
                 plain: bool = False, width: int | None = None, search_throws: bool = True,
                 tracking: bool = False, match: bool = False, ismcts: bool = False, iterations: int | None = None,
                 tree_opponents: bool = False, noise: float = 0.0, own_track: bool = False, own_colour: float = 1.0,
                 own_scale: float = 2.0, others_colour: float = 1.0, others_scale: float = 2.0,
                 prefer_first: float = PREFER_FIRST, spread: float = SPREAD, pace: float = PACE,
                 own_exact: bool = False, others_exact: bool = False, likely: float | None = None,
                 horizon: int = 100_000) -> None:
        self.horizon = horizon
        self.likely = likely
        self.own_exact = own_exact
        self.others_exact = others_exact
        self.prefer_first = prefer_first
        self.spread = spread
        self.pace = pace
        self.others_colour = others_colour
        self.others_scale = others_scale
        self.own_colour = own_colour
        self.own_scale = own_scale
        self.noise = noise
        self.own_track = own_track
        self.match = match
        self.ismcts = ismcts
        self.iterations = iterations
        self.tree_opponents = tree_opponents
        self.clock = SearchClock(ms, share=share)
        self.seed = seed
        self.worlds = worlds
        self.plain = plain
        self.width = width
        self.search_throws = search_throws
        self.tracking = tracking
        self.deadline: float | None = None
        self.seconds_left: float | None = None
        self.knowledge: CabangaKnowledge | None = None
        self.model: CabangaModel | None = None
        self.options = CabangaOptions()
        self.cache = PlanCache(self.options.symbols)
        self.rng = random.Random(seed)
        self.hand: tuple[Card, ...] = ()
        self.report = SearchReport()

    def on_match_start(self, info: MatchInfo) -> None:
        seats = len(info.names)
        self.knowledge = CabangaKnowledge(info.seat, seats)
        self.model = self._model(info.seat, seats)
        self.options = options_from(info.options)
        self.cache = PlanCache(self.options.symbols)
        self.deadline = info.clock.deadline
        self.rng = seeded_rng(self.seed, info.match_id, info.seat)
        self.hand = ()

    def _model(self, seat: int, seats: int) -> CabangaModel:
        return CabangaModel(seat, seats, track=self.tracking, noise=self.noise, own_track=self.own_track,
                            own_colour=self.own_colour, own_scale=self.own_scale, others_colour=self.others_colour,
                            others_scale=self.others_scale, own_exact=self.own_exact,
                            others_exact=self.others_exact)

    def on_events(self, events: Sequence[Event]) -> None:
        if self.knowledge is not None and self.model is not None:
            self.model.observe(events, self.knowledge, self.hand)

    def on_clock(self, seconds: float) -> None:
        self.seconds_left = seconds

    def _ready(self, view: CabangaView) -> tuple[CabangaKnowledge, CabangaModel]:
        seats = len(view.hand_sizes)
        if self.knowledge is None or self.model is None or self.knowledge.seat != view.seat or \
                len(self.knowledge.free) != seats:
            # no match start seen (a test's local seat): trust only the view
            self.knowledge = CabangaKnowledge(view.seat, seats, assume_full_throws=False)
            self.model = self._model(view.seat, seats)
        self.hand = view.hand
        model = self.model
        if self.plain:
            model = self._model(view.seat, seats)  # no evidence: every seat trusted
        return self.knowledge, model

    def _odds(self, view: CabangaView) -> dict[str, Any]:
        if not self.match:
            return {}
        odds = MatchOdds(self.options.target, self.spread, self.pace, self.options.rounds)
        left = self.options.rounds - view.round if self.options.rounds is not None else None
        return {"odds": odds, "rounds_left": left}

    def _start_clock(self) -> None:
        self.clock.open(self.seconds_left, self.deadline)

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        knowledge, model = self._ready(view)
        ranked = ranked_plays(view, choices, self.options.symbols)[:self.width]
        self._start_clock()
        best = self._search(view, ranked, knowledge, model)
        return ranked[best]

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        knowledge, model = self._ready(view)
        options = throw_options(view, candidates) if self.search_throws else [tuple(candidates)]
        self._start_clock()
        best = self._search(view, options, knowledge, model)
        return options[best]

    def _search(self, view: CabangaView, options: Sequence[Any], knowledge: CabangaKnowledge,
                model: CabangaModel) -> int:
        if self.ismcts:
            return ismcts_search(view, options, knowledge, model, self.rng, self.clock, self.cache,
                                 max_iterations=self.iterations, report=self.report,
                                 opponents_in_tree=self.tree_opponents, **self._odds(view))
        return hard_search(view, options, knowledge, model, self.rng, self.clock, self.cache,
                           max_worlds=self.worlds, report=self.report, prefer_first=self.prefer_first,
                           likely=self.likely, horizon=self.horizon,
                           **self._odds(view))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the bot's options and serve the arena."""
    parser = argparse.ArgumentParser(description="The hard Cabanga! house bot (search of plays and throws).")
    parser.add_argument("--share", type=float, default=0.4,
                        help="share of the per-decision deadline to search for (default 0.4)")
    parser.add_argument("--ms", type=float, default=NO_CAP_MS, help="milliseconds per decision at most")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness (default 0)")
    parser.add_argument("--worlds", type=int, default=None, help="deals per decision, whatever the clock says")
    parser.add_argument("--plain", action="store_true", help="no opponent model (for measuring what it adds)")
    parser.add_argument("--width", type=int, default=None, help="plays tried, best first by the greedy plan (all)")
    parser.add_argument("--throw-all", action="store_true", help="throw every card it may (for measuring the search)")
    parser.add_argument("--tracking-rollouts", action="store_true",
                        help="the tracking plan in the rollouts instead of the greedy plan (for measuring it)")
    parser.add_argument("--ismcts", action="store_true",
                        help="information-set MCTS instead of the determinized search (for measuring it)")
    args = parser.parse_args(argv)
    run(HardCabanga(args.share, args.ms, args.seed, args.worlds, args.plain, args.width, not args.throw_all,
                    args.tracking_rollouts, ismcts=args.ismcts, iterations=args.worlds if args.ismcts else None))


if __name__ == "__main__":
    main()
