"""The leaderboard as printed: the order-free estimate first, the online and raw figures beside it.

Built from a ladder database: the batch fit over every stored match (:mod:`arena.ladder.estimate`) gives the order,
the estimate with its 95% interval and the rank range; the store gives each bot's TrueSkill rating (online:
it depends on the order the matches were played in), its raw wins and points (averages over whoever it met:
misleading when strong bots mostly meet strong bots), faults and latency.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.ladder.estimate import BotEstimate, Estimate, Evidence, NeighbourPair, SequentialTest, estimate
from arena.ladder.store import BoardRow, Store


@dataclass(frozen=True, slots=True)
class BoardLine:
    """One bot's line: its place in the batch fit (``None`` before its first match) and its stored figures."""

    rank: int
    fit: BotEstimate | None
    raw: BoardRow
    decided: bool

    def to_json(self) -> dict[str, Any]:
        fit = self.fit
        data: dict[str, Any] = {
            "rank": self.rank, "bot": self.raw.bot, "ranks": fit.ranks if fit else "",
            "estimate": round(fit.strength, 3) if fit else None, "low": round(fit.low, 3) if fit else None,
            "high": round(fit.high, 3) if fit else None, "matches": self.raw.matches, "decided": self.decided,
        }
        renamed = {"wins": "raw_wins", "mean_points": "raw_points"}
        for key, value in self.raw.to_json().items():
            if key not in ("rank", "bot", "matches"):
                data[renamed.get(key, key)] = value
        return data


@dataclass(frozen=True, slots=True)
class Board:
    lines: list[BoardLine]
    pairs: list[NeighbourPair]
    matches: int
    not_started: dict[str, str] = field(default_factory=dict)
    """Bots that this run of the ladder left out because they did not start, and why."""

    @property
    def open_pairs(self) -> int:
        return sum(1 for p in self.pairs if not p.verdict.decided)


def build_board(store: Store, test: SequentialTest | None = None, replicates: int = 200) -> Board:
    """Return the board of the ladder in ``store``: every bot, best first by the batch fit."""
    outcomes = store.results()
    fitted: Estimate = estimate(Evidence.of(outcomes), test=test, replicates=replicates)
    raw = {row.bot: row for row in store.leaderboard()}
    lines: list[BoardLine] = []
    for bot in fitted.bots:
        if bot.bot in raw:
            lines.append(BoardLine(len(lines) + 1, bot, raw.pop(bot.bot), fitted.decided(bot.bot)))
    for row in sorted(raw.values(), key=lambda r: r.bot):  # bots without a match yet
        lines.append(BoardLine(len(lines) + 1, None, row, False))
    return Board(lines, fitted.pairs, len(outcomes))
