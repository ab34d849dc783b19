"""Which bot process may play which deal: no process ever plays the same deal twice.

A deal set plays one seed once per rotation of the seats, so a process that played rotation 0 of a seed and
then rotation 1 would know, from memory, the hands its opponents now hold (RULES.md G2). The guarantee
lives here, in one place: a table asks :class:`DealLedger` which of a bot's processes may take a seat at a
deal (:meth:`DealLedger.lane`), and tells it which deal each process was seated at (:meth:`DealLedger.played`).

A process is known by its lane: ``(bot name, index)``. For each seat the ledger picks the lowest lane of that
bot that is not taken at this match and has not played this deal; the table starts a process for a lane that
has none. So lane k plays rotation k of every deal set, and a table of a deal set of n seats keeps n warm
processes per bot. When a table stops a process, the lane forgets its deals (:meth:`DealLedger.forget`): the
next process of that lane is a new one, with its own new scratch folder and nothing of the old one.

A deal is identified by the game and the seed (:class:`DealKey`), not by the options or the seat count: the
same seed deals the same first cards whatever the target, and overlapping hands at another seat count would
be a leak too.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

Lane = tuple[str, int]
"""A process of a table, by bot name and index: ``("greedy", 0)`` is the first process of bot ``greedy``."""


@dataclass(frozen=True, slots=True)
class DealKey:
    """The identity of a deal: the game and the match seed (never sent to a bot)."""

    game: str
    seed: int


class DealLedger:
    """Remembers, per lane, the deals its current process has played, and picks lanes that have not.

    A ledger made by :meth:`probe` sees what its parent has seen and notes plays of its own only: for planning
    matches ahead without copying what every process has played (which grows with every match of a ladder).
    """

    def __init__(self, parent: DealLedger | None = None) -> None:
        self._seen: dict[Lane, set[DealKey]] = {}
        self._parent = parent

    def seen(self, lane: Lane, deal: DealKey) -> bool:
        """Return whether the process of ``lane`` has played ``deal``."""
        return deal in self._seen.get(lane, ()) or (self._parent is not None and self._parent.seen(lane, deal))

    def probe(self) -> DealLedger:
        """Return a ledger on top of this one (of its class): it sees this one's plays, and what is noted in it
        stays in it."""
        probe = object.__new__(type(self))
        DealLedger.__init__(probe, self)
        return probe

    def lane(self, bot: str, deal: DealKey, taken: Collection[Lane]) -> Lane:
        """Return the lowest lane of ``bot`` not in ``taken`` whose process has not played ``deal``.

        A lane with no process yet has played nothing, so there always is one.
        """
        index = 0
        while (bot, index) in taken or self.seen((bot, index), deal):
            index += 1
        return bot, index

    def played(self, lanes: Collection[Lane], deal: DealKey) -> None:
        """Note that the processes of ``lanes`` are seated at ``deal``."""
        for lane in lanes:
            self._seen.setdefault(lane, set()).add(deal)

    def forget(self, lane: Lane) -> None:
        """Forget the deals of ``lane``: its process is stopped, the next one starts afresh."""
        self._seen.pop(lane, None)

