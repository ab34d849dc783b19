"""What a Python bot imports: the :class:`Bot` base class and :func:`run`.

A bot overrides one method per decision kind of its game::

    from arena.sdk import Bot, run

    class Lowest(Bot):
        def play(self, view, choices):      # Cabanga!: one PlayCard among the legal choices
            return choices[0]
        def throw(self, view, candidates):  # Cabanga!: any of the candidate cards (default: none)
            return candidates
        def turn(self, view, choices):      # L.A.M.A.: a Card to play, DRAW or QUIT
            return choices[0]

    if __name__ == "__main__":
        run(Lowest())

``run`` connects to the arena named by ``ARENA_ADDRESS`` with the token ``ARENA_TOKEN`` and serves until the
arena says goodbye. The same object plugs into the referee in-process with :func:`local_seat`, with no gRPC.
Views are the games' own view types (:class:`arena.games.cabanga.CabangaView`,
:class:`arena.games.lama.LamaView`); history arrives through :meth:`Bot.on_events`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

from arena import transport  # noqa: F401  # first: it sets gRPC's I/O before gRPC starts

# isort: split
import grpc
from grpc import aio

from arena import wire
from arena.games.base import Decision, Event, MatchResult, Prompt, View, decision_text
from arena.referee import LocalSeat, MatchInfo, Request
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

log = logging.getLogger("arena.sdk")

PROTOCOL_VERSION = 1
CHANNEL_OPTIONS = [
    ("grpc.enable_retries", 0),
    ("grpc.enable_http_proxy", 0),
    ("grpc.max_receive_message_length", 16 << 20),
]
SAFETY_MARGIN_MS = 2
"""Milliseconds kept in hand when judging whether a request can still be answered in time."""


class Bot:
    """Base class of a Python bot: override the decisions of the game you play.

    Every method gets the seat's complete current view, so a bot may be stateless. The hooks
    ``on_match_start``, ``on_events`` and ``on_match_end`` are there for bots that keep history.
    """

    agent = "arena-python-sdk"

    def play(self, view: Any, choices: Sequence[Any]) -> Any:
        """Cabanga!: return one of ``choices`` (each a card onto a pile, e.g. ``R7:left``)."""
        raise NotImplementedError(f"{type(self).__name__} does not play Cabanga!")

    def throw(self, view: Any, candidates: Sequence[Any]) -> Iterable[Any]:
        """Cabanga!: return the candidate cards to throw (any of them, none by default)."""
        return ()

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        """L.A.M.A.: return one of ``choices``: a card to play, ``DRAW`` or ``QUIT``."""
        raise NotImplementedError(f"{type(self).__name__} does not play L.A.M.A.")

    def on_match_start(self, info: MatchInfo) -> None:
        """Called when a match starts for this bot's seat."""

    def on_events(self, events: Sequence[Event]) -> None:
        """Called with the public events since the previous request, before each decision."""

    def on_clock(self, seconds: float) -> None:
        """Called before each decision with the seconds left to answer it: the request's deadline plus the time
        bank left, less the time the request spent on its way (a search bot budgets from it)."""

    def on_match_end(self, result: MatchResult, events: Sequence[Event]) -> None:
        """Called when a match ends, with its result and the last events."""


def decide(bot: Bot, prompt: Prompt, view: View) -> Decision:
    """Ask ``bot`` for the decision ``prompt`` wants and return it as a decision tuple."""
    if prompt.kind == "throw":
        return tuple(bot.throw(view, prompt.choices))
    if prompt.kind == "play":
        return (bot.play(view, prompt.choices),)
    return (bot.turn(view, prompt.choices),)


class _LocalBotSeat(LocalSeat):
    def __init__(self, name: str, bot: Bot) -> None:
        super().__init__(name, lambda prompt, view: decide(bot, prompt, view))
        self.bot = bot

    async def match_started(self, info: MatchInfo) -> None:
        self.bot.on_match_start(info)

    async def decide(self, request: Request) -> Decision:
        if request.events:
            self.bot.on_events(request.events)
        self.bot.on_clock(request.timeout)
        return await super().decide(request)

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                         result: MatchResult) -> None:
        self.bot.on_match_end(result, events)


def local_seat(bot: Bot, name: str) -> LocalSeat:
    """Return a referee seat that runs ``bot`` in-process (no gRPC): for fast local experiments."""
    return _LocalBotSeat(name, bot)


def _picks(prompt: Prompt, decision: Decision) -> list[int]:
    """Return the indices of ``decision``'s actions among the prompt's choices (actions are interned)."""
    try:
        return [prompt.choices.index(action) for action in decision]
    except ValueError:
        raise ValueError(f"{decision_text(decision)!r} is not among the choices {prompt.choice_texts()}") from None


def _info(start: pb.MatchStart) -> MatchInfo:
    from arena.referee import Clock

    options: dict[str, Any] = {"target": start.target, "rounds": start.rounds or None}
    if start.symbols:
        options["symbols"] = list(start.symbols)
    if start.climb:
        options["climb"] = start.climb
    return MatchInfo(start.match_id, wire.GAME_FROM_PB.get(start.game, ""), start.seat, tuple(start.names),
                     options, Clock(max(start.deadline_ms, 1) / 1000, start.time_bank_ms / 1000),
                     start.max_faults)


def serve(bot: Bot, address: str, token: str, *, agent: str | None = None) -> int:
    """Connect to the arena at ``address``, authenticate with ``token`` and answer until goodbye.

    Returns 0 after a goodbye or when the arena closes the stream, 1 when the stream failed.
    """
    return asyncio.run(_serve(bot, address, token, agent or bot.agent))


async def _serve(bot: Bot, address: str, token: str, agent: str) -> int:
    # One loop, reading inline. A request that waited in the stream while the bot was busy is skipped once
    # its time has run out: its age comes from the arena's clock (sent_time_ms) and the offset between the
    # clocks measured at the Welcome, so no clock synchronisation is needed.
    offset_ms: float | None = None
    async with aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        call = pb_grpc.ArenaStub(channel).Play()
        try:
            await call.write(pb.BotMessage(hello=pb.Hello(
                token=token, protocol_version=PROTOCOL_VERSION, agent=agent)))
            seat = 0
            while True:
                try:
                    message = await call.read()
                except grpc.RpcError as exc:
                    detail = f"{exc.code()}: {exc.details()}" if isinstance(exc, grpc.Call) else repr(exc)
                    print(f"arena: stream failed: {detail}", file=sys.stderr)
                    return 1
                if message is aio.EOF:  # type: ignore[attr-defined]
                    log.info("the arena closed the stream")
                    return 0
                which = message.WhichOneof("body")
                if which == "request":
                    request = message.request
                    age_ms = 0.0
                    if offset_ms is not None and request.sent_time_ms:
                        age_ms = max(0.0, time.time_ns() / 1e6 - offset_ms - request.sent_time_ms)
                        if age_ms > request.timeout_ms - SAFETY_MARGIN_MS:
                            continue  # too late to count: the arena has applied the default already
                    await call.write(pb.BotMessage(answer=_answer(bot, request, seat, age_ms)))
                elif which == "welcome":
                    if message.welcome.arena_time_ms:
                        offset_ms = time.time_ns() / 1e6 - message.welcome.arena_time_ms
                elif which == "match_start":
                    seat = message.match_start.seat
                    bot.on_match_start(_info(message.match_start))
                elif which == "match_end":
                    end = message.match_end
                    bot.on_match_end(MatchResult(tuple(end.totals), tuple(end.places)), _events(end.events))
                elif which == "goodbye":
                    return 0
        finally:
            call.cancel()


def _events(messages: Iterable[pb.Event]) -> list[Event]:
    """Return the events a bot can read; an event of a newer arena than this SDK knows is left out."""
    events = []
    for message in messages:
        try:
            events.append(wire.event_from_proto(message))
        except wire.WireError:
            log.debug("skipped an event this SDK does not know: %s", message)
    return events


CRASH_REASON_CHARS = 1000
"""The longest reason a crash answer carries (the traceback goes to the bot's log whole)."""


def _answer(bot: Bot, request: pb.DecisionRequest, seat: int, age_ms: float = 0.0) -> pb.Answer:
    """Return the bot's answer to ``request``: its picks, or when its code raised, a crash report.

    The traceback goes to stderr (the bot's log); the arena records a crash fault with the exception's type
    and message at once, rather than a timeout, and the bot goes on with its next request.
    """
    try:
        prompt = wire.prompt_from_proto(request, seat)
        view = wire.view_from_proto(request)
        if request.events and type(bot).on_events is not Bot.on_events:  # decoded only for bots that listen
            bot.on_events(_events(request.events))
        if type(bot).on_clock is not Bot.on_clock:
            bot.on_clock(max(0.0, request.timeout_ms - age_ms) / 1000)
        return pb.Answer(request_id=request.request_id, picks=_picks(prompt, decide(bot, prompt, view)))
    except Exception as exc:
        print(f"arena: request {request.request_id} (match {request.match_id}, step {request.step}) failed:",
              file=sys.stderr)
        traceback.print_exc()
        return pb.Answer(request_id=request.request_id,
                         crash=f"{type(exc).__name__}: {exc}"[:CRASH_REASON_CHARS])


def run(bot: Bot) -> None:
    """Serve the arena named by ``ARENA_ADDRESS`` with the token ``ARENA_TOKEN``; exit when it is done."""
    address = os.environ.get("ARENA_ADDRESS")
    token = os.environ.get("ARENA_TOKEN")
    if not address or not token:
        sys.exit("arena: ARENA_ADDRESS and ARENA_TOKEN must be set (the arena sets them for bots it launches)")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    sys.exit(serve(bot, address, token))

