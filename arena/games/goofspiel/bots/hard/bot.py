"""The hard Goofspiel house bot: every bid searched against the other seats' plans as fitted in this match.

Everything in Goofspiel is public but the order of the prizes to come and the bids being made now (GS9). So at
each trick it tries every card of its hand in many rollouts: the prizes to come in a random order, each other
seat bidding by a plan drawn from what it has shown (:class:`arena.games.goofspiel.search.BidModel`: the prize's
value, one above it, the card of the prize's rank, at random, weighted by how often each named its bids), the
round played on, and keeps the card that won most (:func:`arena.games.goofspiel.search.search_bid`). The clock: at
most ``--share`` of the per-decision deadline (default 0.4: 400 ms at the default 1 s), stopping 30 ms before what
the request allows.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.goofspiel.bots.hard.bot
[--share 0.4] [--ms MS] [--seed 0] [--rollouts N]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Sequence

from arena.games.base import Event, MatchInfo
from arena.games.goofspiel import BidsRevealed, Card, GoofspielView, RoundStarted
from arena.games.goofspiel.bot import GoofspielBot
from arena.games.goofspiel.search import BidModel, SearchReport, search_bid
from arena.games.search import SearchClock, seeded_rng
from arena.sdk import run

NO_CAP_MS = 1e9


class HardGoofspiel(GoofspielBot):
    """Searches every bid against the fitted plans of the other seats."""

    agent = "goofspiel-hard"

    def __init__(self, share: float = 0.4, ms: float = NO_CAP_MS, seed: int = 0, rollouts: int | None = None
                 ) -> None:
        self.clock = SearchClock(ms, share=share)
        self.seed = seed
        self.rollouts = rollouts
        self.deadline: float | None = None
        self.seconds_left: float | None = None
        self.model: BidModel | None = None
        self.carry = False
        self.rng = random.Random(seed)
        self.report = SearchReport()
        self.asked: dict[int, tuple[int, int, list[list[int]], list[int]]] = {}
        """By trick: the prize, the pot, every seat's hand and the prizes to come when this seat was asked."""

    def on_match_start(self, info: MatchInfo) -> None:
        self.model = BidModel(len(info.names))
        self.carry = info.options.get("ties") == "carry"
        self.deadline = info.clock.deadline
        self.rng = seeded_rng(self.seed, info.match_id, info.seat)
        self.asked = {}

    def on_events(self, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, RoundStarted):
                self.asked = {}
            elif isinstance(event, BidsRevealed) and self.model is not None and event.trick in self.asked:
                prize, pot, hands, to_come = self.asked.pop(event.trick)
                for seat, card in enumerate(event.bids):
                    if seat < len(hands) and card.value in hands[seat]:
                        tops = [max(h) for o, h in enumerate(hands) if o != seat and h]
                        self.model.seen(seat, card.value, prize, pot, sorted(hands[seat]), to_come, tops)

    def on_clock(self, seconds: float) -> None:
        self.seconds_left = seconds

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        if view.prize is None:
            return choices[0]
        seats = len(view.bids)
        if self.model is None or len(self.model.weights) != seats:
            self.model = BidModel(seats)
        suit = {card.value for card in view.hand} | {card.value for card in view.bids[view.seat]}
        hands = [sorted(card.value for card in view.hand) if s == view.seat else
                 sorted(suit - {card.value for card in view.bids[s]}) for s in range(seats)]
        to_come = sorted(card.value for card in view.to_come)
        self.asked[view.trick] = (view.prize.value, view.pot, hands, to_come)
        self.clock.open(self.seconds_left, self.deadline)
        value = search_bid(view.seat, view.prize.value, view.pot, hands, to_come, list(view.totals), self.model,
                           self.carry, self.rng, self.clock, max_rollouts=self.rollouts, report=self.report)
        return next(card for card in choices if card.value == value)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the bot's options and serve the arena."""
    parser = argparse.ArgumentParser(description="The hard Goofspiel house bot (searched bids, fitted plans).")
    parser.add_argument("--share", type=float, default=0.4, help="share of the deadline to search (default 0.4)")
    parser.add_argument("--ms", type=float, default=NO_CAP_MS, help="milliseconds per bid at most")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness (default 0)")
    parser.add_argument("--rollouts", type=int, default=None, help="rollouts per card, whatever the clock says")
    args = parser.parse_args(argv)
    run(HardGoofspiel(args.share, args.ms, args.seed, args.rollouts))


if __name__ == "__main__":
    main()
