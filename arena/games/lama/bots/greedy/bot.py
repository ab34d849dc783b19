"""A L.A.M.A. bot with a simple plan: play when it can (the card it holds most of), draw while its hand
is costly and the pile lasts, and quit when its hand is cheap.

Run by the arena (it sets ARENA_ADDRESS and ARENA_TOKEN): python -m arena.games.lama.bots.greedy.bot
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.lama import DRAW, LLAMA, QUIT, Card, LamaView, TurnAction
from arena.games.lama.bot import LamaBot
from arena.sdk import run

QUIT_AT = 4
"""Quit rather than draw when the hand would score at most this many points."""


def hand_points(hand: Sequence[Card]) -> int:
    """Return what ``hand`` would score now (L9): distinct values once, 10 once for any llama."""
    values = {c for c in hand}
    return sum(10 if c is LLAMA else c.value for c in values)


class GreedyLama(LamaBot):
    """Plays the value it holds most of (so the rest follows), else draws or quits by the hand's cost.

    Measured in-process, 4 seats, 300 seeded matches with two of each: mean place 2.35 against
    lama-steady's 2.62 (benchmarks/bot_strength.py has the figures against the random bot).
    """

    agent = "lama-greedy"

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        plays = [c for c in choices if isinstance(c, Card)]
        if plays:
            # shed the value held most often (its copies can follow one another), the lower one on a tie
            return max(plays, key=lambda c: (view.hand.count(c), -c.value))
        if DRAW in choices and hand_points(view.hand) > QUIT_AT:
            return DRAW
        return QUIT


if __name__ == "__main__":
    run(GreedyLama())
