"""A Goofspiel bot that bids by rank: the prize's rank among the prizes still in play picks the card of the same
rank in its hand, so its high cards go to the high prizes. It counts the pot as part of the prize (GS5), and
takes a prize for sure when a card of its hand beats every card the other seats still hold and costs no more
than the ranked card (the other hands are public: every seat starts with the same cards, every bid is revealed).

It also watches the events: a seat that has bid the prize's value plus the same offset at its last tricks (one
that bids the prize's value, or one above it) is expected to do so again. It outbids the highest bid expected
with its cheapest card that does, if that costs at most two ranks more than the ranked card; else it gives the
trick up with its lowest card. Without events (a bot driven by views alone) it only bids by rank.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.goofspiel.bots.matcher.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.base import Event
from arena.games.goofspiel import BidsRevealed, Card, GoofspielView, PrizeTurned, RoundStarted
from arena.games.goofspiel.bot import GoofspielBot
from arena.sdk import run

STREAK = 3
"""How many tricks in a row a seat must bid with the same offset to the prize before it is expected to again."""
REACH = 2
"""How many ranks above its ranked card the bot pays to outbid seats it expects."""


def ranked(count: int, rank: int, prizes: int) -> int:
    """Return the index, among ``count`` cards sorted, of the card of ``rank`` among ``prizes`` prizes (0: the
    lowest)."""
    return min(count - 1, round(rank * (count - 1) / max(1, prizes - 1)))


def other_hands(view: GoofspielView) -> dict[int, set[int]]:
    """Return the card values every other seat still holds, by seat.

    Every seat was dealt the same cards: this seat's hand and bids together; another seat holds them less its bids.
    """
    dealt = {card.value for card in view.hand} | {card.value for card in view.bids[view.seat]}
    return {seat: dealt - {card.value for card in bids} for seat, bids in enumerate(view.bids) if seat != view.seat}


class MatcherGoofspiel(GoofspielBot):
    """Bids the card of the prize's rank, adjusted to the other seats (see the module docstring)."""

    agent = "goofspiel-matcher"

    def __init__(self) -> None:
        self.prize = 0
        self.offsets: dict[int, list[int]] = {}
        """By seat: its bid's value less the prize's, at each trick of this round so far."""

    def on_events(self, events: Sequence[Event]) -> None:
        for event in events:
            if isinstance(event, RoundStarted):
                self.offsets = {}
            elif isinstance(event, PrizeTurned):
                self.prize = event.prize.value
            elif isinstance(event, BidsRevealed) and self.prize:
                for seat, card in enumerate(event.bids):
                    self.offsets.setdefault(seat, []).append(card.value - self.prize)

    def expected(self, view: GoofspielView) -> int | None:
        """Return the highest bid the seats that bid steadily are expected to make now (those whose habit names a
        card they hold), or ``None`` when no seat does."""
        assert view.prize is not None
        expected = [view.prize.value + recent[0] for seat, held in other_hands(view).items()
                    if len(recent := self.offsets.get(seat, [])[-STREAK:]) == STREAK and len(set(recent)) == 1
                    and view.prize.value + recent[0] in held]
        return max(expected, default=None)

    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        if view.prize is None:
            return choices[0]
        worth = view.prize.value + view.pot
        prizes = 1 + len(view.to_come)
        rank = sum(1 for card in view.to_come if card.value < worth)  # the prizes to come worth less than this one
        mine = ranked(len(choices), rank, prizes)
        best = max((max(held, default=0) for held in other_hands(view).values()), default=0)
        sure = next((i for i, card in enumerate(choices) if card.value > best), None)  # choices come lowest first
        if sure is not None and sure <= mine:
            return choices[sure]  # a certain win for no more than the ranked card
        expected = self.expected(view)
        if expected is not None:
            over = next((i for i, card in enumerate(choices) if card.value > expected), None)
            return choices[over] if over is not None and over <= mine + REACH else choices[0]
        return choices[mine]


if __name__ == "__main__":
    run(MatcherGoofspiel())
