"""Who plays the next deal set: a pure part of the ladder (ratings and match counts in, a group out).

Measured in issue 12: anchoring every deal set on the most uncertain bot starved the best bots (the weakest
bot's sigma stays the highest, so it played 97% of the matches and the two best ones 3%), and the board's order
never became reliable. This scheduler keeps testing everyone:

1. New bots first: a bot with fewer than ``new_matches`` matches plays (fewest first).
2. No bot falls far below its fair share: one whose matches are under ``min_share`` of the field's mean plays.
3. The other seats go to the bots whose order is least decided: neighbours in the current order (by mu), the
   pair with the widest overlap first (the chance that their order is wrong, from mu and sigma); pairs the
   sequential test has already decided come after every open pair.

Within each rule ties go to the bot with fewer matches, then by name; the group is seated in an order drawn
from ``rng``, so the same inputs and ``rng`` state give the same group.

With the pool in mind (issue 23): among open pairs about equally undecided (their overlaps within
``warm_tolerance`` of each other, on a grid of that step), the pair whose processes are already warm on the
machine goes first: each bot of a deal set needs a process per rotation, and one it does not hold warm must be
started. Rules 1 and 2 do not look at the pool, so every bot still gets its share.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from arena.ladder.ratings import Rating


@dataclass(frozen=True, slots=True)
class FieldState:
    """What the scheduler sees: the bots that can play, their ratings and matches, the pairs decided."""

    bots: Sequence[str]
    ratings: Mapping[str, Rating]
    played: Mapping[str, int]
    decided: Collection[frozenset[str]] = field(default_factory=frozenset)
    """Neighbour pairs the sequential test has decided (only with ``--until-decided``)."""
    warm: Mapping[str, int] = field(default_factory=dict)
    """The processes of each bot the machine's pool holds warm (none known: every start is a cold one)."""


class Scheduler(Protocol):
    """Chooses the bots of the next deal set."""

    def next_group(self, state: FieldState, seats: int, rng: random.Random) -> list[str]:
        """Return ``seats`` distinct bots of ``state.bots``, in the seating of rotation 0."""
        ...


@dataclass(frozen=True, slots=True)
class FairScheduler:
    """The ladder's scheduler (see the module's docstring)."""

    min_share: float = 0.75
    """A bot with fewer matches than this share of the field's mean plays next."""
    new_matches: int = 8
    """A bot with fewer matches than this is new and plays first."""
    warm_tolerance: float = 0.02
    """Open pairs whose overlaps fall in the same step of this size are about equally useful: the one that
    needs fewer process starts goes first (0: the pool is never looked at)."""

    def next_group(self, state: FieldState, seats: int, rng: random.Random) -> list[str]:
        bots = sorted(state.bots)
        if len(bots) < seats:
            raise ValueError(f"{len(bots)} bots cannot fill {seats} seats")
        played = {b: state.played.get(b, 0) for b in bots}
        group: list[str] = []

        def add(candidates: Sequence[str]) -> None:
            for bot in candidates:
                if len(group) < seats and bot not in group:
                    group.append(bot)

        add(sorted((b for b in bots if played[b] < self.new_matches), key=lambda b: (played[b], b)))
        mean = sum(played.values()) / len(bots)
        add(sorted((b for b in bots if played[b] < self.min_share * mean), key=lambda b: (played[b], b)))
        for pair in open_pairs_first(bots, state.ratings, state.decided, played, warm=state.warm, seats=seats,
                                     tolerance=self.warm_tolerance):
            if len(group) >= seats:
                break
            add(sorted(pair, key=lambda b: (played[b], b)))
        rng.shuffle(group)
        return group


def open_pairs_first(bots: Sequence[str], ratings: Mapping[str, Rating], decided: Collection[frozenset[str]],
                     played: Mapping[str, int], *, warm: Mapping[str, int] | None = None, seats: int = 0,
                     tolerance: float = 0.0) -> list[tuple[str, str]]:
    """Return the neighbour pairs of the order by mu, open ones first, widest overlap first.

    With ``tolerance`` > 0, overlaps are compared on a grid of that step first, and within a step the pair that
    would start fewer processes (``seats`` per bot, less those ``warm``) goes first; pairs that would start as
    many keep the order of their overlaps.
    """
    default = Rating()
    order = sorted(bots, key=lambda b: (-ratings.get(b, default).mu, b))
    pairs = list(itertools.pairwise(order))
    held = warm or {}

    def key(pair: tuple[str, str]) -> tuple[bool, float, int, float, int, str]:
        a, b = (ratings.get(x, default) for x in pair)
        overlap = 1.0 - win_probability_of_order(a, b)
        step, starts = overlap, 0
        if tolerance > 0:
            step = math.floor(overlap / tolerance)
            starts = sum(max(0, seats - held.get(bot, 0)) for bot in pair)
        return (frozenset(pair) in decided, -step, starts, -overlap, played.get(pair[0], 0) + played.get(pair[1], 0),
                pair[0])

    return sorted(pairs, key=key)


def win_probability_of_order(a: Rating, b: Rating) -> float:
    """Return the probability that ``a``'s skill exceeds ``b``'s (their order is right), from mu and sigma."""
    spread = math.sqrt(a.sigma**2 + b.sigma**2)
    if spread == 0:
        return 1.0 if a.mu > b.mu else 0.5
    return 0.5 * math.erfc(-(a.mu - b.mu) / spread / math.sqrt(2))

