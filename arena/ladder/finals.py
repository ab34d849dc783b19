"""The finals' rules on a ladder (issue 34): which pairs must be decided, the progressive cut, the commitment to the
secret seed and the final board.

They are pure functions of the stored matches, so that three parties apply the same ones: the ladder as it runs
(:class:`arena.ladder.ladder.Ladder` with ``top`` and ``cut``), the verifier of a finals export
(:mod:`arena.ladder.finals_export`), which recomputes every decision from the published matches, and the
benchmark (``benchmarks/finals.py``).

- **The top places.** A finals run stops when each of its top ``top`` places is decided: the neighbour pairs of
  places 1..top+1 of the current order (by the batch fit), place ``top`` against place ``top + 1`` included, or
  the ``top``-th place could belong to the next bot. Pairs further down are never waited for.
- **The cut** (Halite's progressive cut, done with intervals): after every ``every`` deal sets, the finalists
  whose whole rank range (the 95% range of places over the bootstrap, :func:`arena.ladder.estimate.estimate`)
  lies below place ``top + margin`` leave the finals, once they played as many deal sets as the sequential test
  wants before it decides (``min_deals``: a bootstrap over a handful of deal sets is too sure of itself). The
  board it looks at is that of the first ``after`` deal sets, all of whose rotations are played, whatever else
  the tables are playing: the same matches give the same cut, so a verifier recomputes it.
- **The commitment.** Before the first match the finals publish SHA-256 of their secret seed (128 random bits:
  nobody finds the seed from its hash); after the last, the seed itself. Every deal's seed is a keyed hash of its
  number under it (:func:`arena.ladder.ladder.deal_seed`), so nobody could choose the deals once committed.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.ladder.estimate import BotEstimate, Estimate, Evidence, SequentialTest, Verdict, estimate, point_order
from arena.ladder.ratings import Outcome

Pair = tuple[str, str]

COMMITMENT_TAG = "arena-finals/"
"""What the commitment hashes before the seed's decimal digits (a hash of this and nothing else)."""


class FinalsRuleError(ValueError):
    """Finals rules that cannot be applied: a top of no places, a cut of no deal sets."""


def commitment(seed: int) -> str:
    """Return the commitment to the secret ``seed``: the hex SHA-256 of ``"arena-finals/SEED"`` (SEED in decimal).

    Published when the finals start; anyone checks the seed against it once it is published at their end.
    """
    return hashlib.sha256(f"{COMMITMENT_TAG}{seed}".encode()).hexdigest()


def top_pairs(order: Sequence[str], top: int) -> list[Pair]:
    """Return the neighbour pairs that decide the top ``top`` places of ``order`` (best first): places 1..top+1."""
    return list(itertools.pairwise(order))[:top]


def active_order(evidence: Evidence, active: Collection[str]) -> list[str]:
    """Return the bots of ``active`` best first by the batch fit over ``evidence`` (those without a match last, by
    name): the order whose top pairs must be decided."""
    fitted = [b for b in point_order(evidence) if b in active]
    return fitted + sorted(set(active) - set(fitted))


@dataclass(frozen=True, slots=True)
class Cut:
    """The progressive cut: after every ``every`` deal sets, the finalists whose whole rank range lies below place
    ``top + margin`` leave."""

    every: int
    margin: int = 1

    def __post_init__(self) -> None:
        if self.every < 1:
            raise FinalsRuleError(f"a cut comes after every N deal sets, N at least 1, not {self.every!r}")
        if self.margin < 0:
            raise FinalsRuleError(f"the cut's margin is a number of places, 0 or more, not {self.margin!r}")

    def to_json(self) -> dict[str, int]:
        return {"every": self.every, "margin": self.margin}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Cut:
        return cls(int(data["every"]), int(data.get("margin", 1)))


@dataclass(frozen=True, slots=True)
class CutOut:
    """A finalist the cut took out, with the evidence: its rank range and its estimate with its interval."""

    bot: str
    rank_low: int
    rank_high: int
    strength: float
    low: float
    high: float

    @classmethod
    def of(cls, row: BotEstimate) -> CutOut:
        return cls(row.bot, row.rank_low, row.rank_high, row.strength, row.low, row.high)

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "ranks": [self.rank_low, self.rank_high], "estimate": round(self.strength, 3),
                "low": round(self.low, 3), "high": round(self.high, 3)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CutOut:
        low, high = data["ranks"]
        return cls(str(data["bot"]), int(low), int(high), float(data["estimate"]), float(data["low"]),
                   float(data["high"]))


@dataclass(frozen=True, slots=True)
class CutRecord:
    """One cut: it looked at the first ``after`` deal sets; ``start`` is the first deal set planned without the bots
    it took ``out`` (they finish the sets they were in, so that those stay fair)."""

    after: int
    start: int
    out: tuple[CutOut, ...]

    def to_json(self) -> dict[str, Any]:
        return {"after": self.after, "start": self.start, "out": [o.to_json() for o in self.out]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CutRecord:
        return cls(int(data["after"]), int(data["start"]), tuple(CutOut.from_json(o) for o in data["out"]))


def cut_board(outcomes: Iterable[Outcome], after: int, test: SequentialTest) -> tuple[Estimate, dict[str, int]]:
    """Return the board a cut looks at, the estimate over the matches of the first ``after`` deal sets, and the deal
    sets each bot played among them."""
    evidence = Evidence.of(o for o in outcomes if o.deal < after)
    played: dict[str, int] = {}
    for pairs in evidence.deals.values():
        for bot in {name for pair in pairs for name in pair}:
            played[bot] = played.get(bot, 0) + 1
    return estimate(evidence, test=test), played


def cut_out(board: Estimate, played: Mapping[str, int], active: Collection[str], top: int, margin: int, keep: int,
            min_deals: int) -> list[BotEstimate]:
    """Return the bots of ``active`` that the cut takes out, worst first: those whose best place in the rank range of
    ``board`` is below ``top + margin``, once they played ``min_deals`` deal sets (a bootstrap over fewer is too
    sure of itself: as the sequential test, the cut measures the spread before it trusts it); never so many that
    fewer than ``keep`` stay (the weakest go first)."""
    out = [row for row in reversed(board.bots)
           if row.bot in active and row.rank_low > top + margin and played.get(row.bot, 0) >= min_deals]
    return out[:max(0, len(active) - keep)]


@dataclass(frozen=True, slots=True)
class FinalBoard:
    """The finals' result: the board of every finalist that played, and the verdict on each top pair."""

    board: Estimate
    order: list[str]
    """The finalists still in (neither cut nor left out), best first: whose top places the finals decide."""
    pairs: list[tuple[Pair, Verdict]]
    top: int

    @property
    def decided(self) -> bool:
        return all(verdict.decided for _, verdict in self.pairs)

    @property
    def undecided(self) -> list[Pair]:
        return [pair for pair, verdict in self.pairs if not verdict.decided]

    def to_json(self) -> dict[str, Any]:
        return {
            "top": self.top,
            "order": self.order,
            "bots": [{"bot": b.bot, "estimate": round(b.strength, 3), "low": round(b.low, 3), "high": round(b.high, 3),
                      "ranks": [b.rank_low, b.rank_high], "matches": b.matches} for b in self.board.bots],
            "top_pairs": [{"first": a, "second": b, "verdict": v.value} for (a, b), v in self.pairs],
            "decided": self.decided,
            "undecided": [list(pair) for pair in self.undecided],
        }


def final_board(evidence: Evidence, active: Collection[str], test: SequentialTest, top: int) -> FinalBoard:
    """Return the finals' board over ``evidence`` and the sequential test's verdict on the top pairs of ``active``."""
    order = active_order(evidence, active)
    pairs = [((a, b), test.verdict(evidence.paired(a, b))) for a, b in top_pairs(order, top)]
    return FinalBoard(estimate(evidence, test=test), order, pairs, top)


def describe_pairs(board: FinalBoard) -> list[str]:
    """Return a line per top pair: who is ahead, or that the finals left it undecided."""
    lines = []
    for place, ((a, b), verdict) in enumerate(board.pairs, start=1):
        said = {Verdict.FIRST: f"{a} is better than {b}", Verdict.SECOND: f"{b} is better than {a}",
                Verdict.EQUAL: f"{a} and {b} are equal within the zone",
                Verdict.OPEN: f"{a} against {b} is undecided: the order of places {place} and {place + 1} is not "
                              "claimed"}[verdict]
        lines.append(f"places {place}-{place + 1}: {said}")
    return lines
