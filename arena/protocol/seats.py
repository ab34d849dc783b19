"""The seats the referee talks to when a bot plays over the protocol: :class:`RemoteSeat`, one per slot.

A remote seat turns the referee's calls into the envelope's messages on its slot's stream (MatchStart, a
DecisionRequest per decision, MatchEnd), and a bot's answer, or its absence, into a decision or a fault.
"""

from __future__ import annotations

import asyncio
import contextlib

from arena.core.referee import Explained, Request, SeatFault
from arena.games.base import Decision, Event, FaultKind, MatchInfo, MatchResult
from arena.games.codec import GameCodec
from arena.protocol import codec
from arena.protocol.server import Slot
from arena.v2 import arena_pb2 as pb

EXIT_WAIT = 0.5
"""Seconds a lost stream's process is given to end, so that a crash is told from a disconnect. A crashed bot's
end takes its jail's two bubblewrap processes and its supervisor's clearing up (its cgroup, its stage) before
the arena sees it: on a loaded machine 0.15 s was sometimes too short and a crash was charged as a disconnect.
The wait ends as soon as the process does; only a bot that lives on without its stream waits it out."""


class RemoteSeat:
    """A referee seat played by a bot over its slot's stream.

    ``ended`` is the end of the bot's process, for a launched bot (it resolves to how the process ended): a
    seat whose stream is gone and whose process has ended is charged a crash, not a disconnect.
    """

    def __init__(self, slot: Slot, ended: asyncio.Future[str] | None = None) -> None:
        self.slot = slot
        self.name = slot.name
        self.ended = ended
        self._codec: GameCodec | None = None

    async def _fault_for_absence(self) -> SeatFault:
        """Return the fault of a seat whose stream is gone: CRASH when its process has ended, else DISCONNECT.

        A process that has just lost its stream may be a moment from its end (a sandboxed bot's supervisor
        first clears up after it), so a recent loss waits for the process a little (:data:`EXIT_WAIT`).
        """
        connection = self.slot.connection
        ended = self.ended
        if ended is not None and not ended.done() and connection is not None:
            left = connection.closed_at + EXIT_WAIT - asyncio.get_running_loop().time()
            if left > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(ended), left)
        if ended is not None and ended.done() and not ended.cancelled():
            return SeatFault(FaultKind.CRASH, f"the bot process has ended: {ended.result()}")
        reason = connection.close_reason if connection is not None else "never connected"
        kind = connection.close_kind if connection is not None else FaultKind.DISCONNECT
        return SeatFault(kind, f"not connected ({reason})")

    async def match_started(self, info: MatchInfo) -> None:
        self._codec = codec.codec_for(info.game)
        if self.slot.online:
            assert self.slot.connection is not None
            self.slot.connection.send(pb.ArenaMessage(match_start=codec.match_start(info)))

    async def decide(self, request: Request) -> Decision:
        connection = self.slot.connection
        if connection is None or connection.closed.is_set():
            raise await self._fault_for_absence()
        try:
            answer = await connection.ask(codec.request_bytes(request), request.timeout)
        except SeatFault as fault:
            if fault.kind is FaultKind.DISCONNECT:
                raise await self._fault_for_absence() from None
            raise
        debug = codec.debug_text(answer.debug) if answer.debug else ""
        if answer.crash:  # the bot's code failed and said so: a crash, at once, and the bot lives on
            raise SeatFault(FaultKind.CRASH, f"the bot reported: {answer.crash}", debug)
        try:
            decision = codec.decision_from_picks(request.prompt, answer.picks)
        except codec.WireError as exc:
            raise SeatFault(FaultKind.MALFORMED, str(exc), debug) from None
        return Explained(decision, debug) if debug else decision

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                         result: MatchResult) -> None:
        if self.slot.online:
            assert self.slot.connection is not None and self._codec is not None, "a match ends after it starts"
            self.slot.connection.send(pb.ArenaMessage(match_end=codec.match_end(match_id, events, result, self._codec)))
