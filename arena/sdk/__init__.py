"""What a Python bot imports: the :class:`Bot` base class and :func:`run`.

A bot has one method per decision kind of its game, named for the kind; each game's folder has a typed base
class that lists them::

    from arena.games.cabanga.bot import CabangaBot
    from arena.sdk import run

    class Lowest(CabangaBot):
        def play(self, view, choices):      # one PlayCard among the legal choices
            return choices[0]
        def throw(self, view, candidates):  # any of the candidate cards (default: none)
            return candidates

    if __name__ == "__main__":
        run(Lowest())

``run`` connects to the arena named by ``ARENA_ADDRESS`` with the token ``ARENA_TOKEN`` and serves until the
arena says goodbye. The same object plugs into the referee in-process with :func:`local_seat`, with no gRPC.
Views are the game's own view types (:class:`arena.games.cabanga.CabangaView`, ...); history arrives through
:meth:`Bot.on_events`; ``self.debug(text)`` during a decision attaches text to its answer, which only the bot's
owner sees (:meth:`Bot.debug`). Importing this module loads neither the referee nor any game: the game of a
match is loaded when the match starts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
import traceback
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from google.protobuf.any_pb2 import Any as AnyMessage

from arena.games import ENVIRONMENT, get_game, register_text
from arena.games.base import Clock, Decision, Event, GameError, MatchInfo, MatchResult, Prompt, decision_text
from arena.games.bot import Bot, take_debug
from arena.games.codec import GameCodec
from arena.protocol import codec, http2
from arena.v2 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.core.referee import LocalSeat

__all__ = ["Bot", "local_seat", "run", "serve"]

log = logging.getLogger("arena.sdk")

PROTOCOL_VERSION = codec.PROTOCOL_VERSION
MAX_RECEIVE_BYTES = 16 << 20
"""The largest message the SDK reads from the arena (a match's end with all its events is the largest)."""
SAFETY_MARGIN_MS = 2
"""Milliseconds kept in hand when judging whether a request can still be answered in time."""


def local_seat(bot: Bot, name: str) -> LocalSeat:
    """Return a referee seat that runs ``bot`` in-process (no gRPC): for fast local experiments.

    The seat's ``last_debug`` is the debug text of the bot's latest decision (as the arena would read it).
    """
    from arena.core.referee import Explained, LocalSeat, Request, SeatFault

    class _LocalBotSeat(LocalSeat):
        last_debug = ""

        async def match_started(self, info: MatchInfo) -> None:
            take_debug(bot)  # what the last match's end wrote is no answer's
            bot.on_match_start(info)

        async def decide(self, request: Request) -> Decision:
            try:
                if request.events:
                    bot.on_events(request.events)
                bot.on_clock(request.timeout)
                decision = await super().decide(request)
            except SeatFault as fault:
                self.last_debug = fault.debug = codec.debug_text(take_debug(bot))
                raise
            # the referee records it as it records a remote bot's (Explained)
            self.last_debug = codec.debug_text(take_debug(bot))
            return Explained(decision, self.last_debug) if self.last_debug else decision

        async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...],
                             result: MatchResult) -> None:
            bot.on_match_end(result, events)

    seat = _LocalBotSeat(name, bot.decide)
    seat.bot = bot  # type: ignore[attr-defined]
    return seat


def _picks(prompt: Prompt, decision: Decision) -> list[int]:
    """Return the indices of ``decision``'s actions among the prompt's choices (actions are interned)."""
    try:
        return [prompt.choices.index(action) for action in decision]
    except ValueError:
        raise ValueError(f"{decision_text(decision)!r} is not among the choices {prompt.choice_texts()}") from None


def _info(start: pb.MatchStart) -> MatchInfo:
    """Return what a MatchStart says, the options read back by the game (as text when the game refuses them)."""
    options: dict[str, Any] = dict(start.options)
    try:
        options = get_game(start.game).options(options).to_json()
    except GameError as exc:
        log.warning("match %s: options %s: %s", start.match_id, options, exc)
    return MatchInfo(start.match_id, start.game, start.seat, tuple(start.names), options,
                     Clock(max(start.deadline_ms, 1) / 1000, start.time_bank_ms / 1000), start.max_faults)


def serve(bot: Bot, address: str, token: str, *, agent: str | None = None) -> int:
    """Connect to the arena at ``address``, authenticate with ``token`` and answer until goodbye.

    Returns 0 after a goodbye or when the arena closes the stream, 1 when the stream failed.
    """
    return asyncio.run(_serve(bot, address, token, agent or bot.agent))


async def _serve(bot: Bot, address: str, token: str, agent: str) -> int:
    # One loop, reading inline, on the arena's stream (gRPC's Arena.Play over HTTP/2, spoken by
    # arena.protocol.http2 on this loop: gRPC's own client would hand every message over from a thread of its
    # own). A request that waited in the stream while the bot was busy is skipped once its time has run out: its
    # age comes from the arena's clock (sent_time_ms) and the offset between the clocks measured at the Welcome,
    # so no clock synchronisation is needed.
    offset_ms: float | None = None
    try:
        call = await http2.connect(address, codec.PLAY_PATH, decode=pb.ArenaMessage.FromString,
                                   encode=pb.BotMessage.SerializeToString, max_message=MAX_RECEIVE_BYTES,
                                   agent=f"arena-sdk ({agent})")
    except http2.CallFailed as exc:
        print(f"arena: stream failed: {exc}", file=sys.stderr)
        return 1
    try:
        await call.write(pb.BotMessage(hello=pb.Hello(token=token, protocol_version=PROTOCOL_VERSION, agent=agent)))
        seat = 0
        game_codec: GameCodec | str = "no match has started"  # the match's game's codec, or why there is none
        while True:
            message = await call.read()
            if message is http2.EOF:
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
                await call.write(pb.BotMessage(answer=_answer(bot, request, seat, game_codec, age_ms)))
            elif which == "welcome":
                if message.welcome.arena_time_ms:
                    offset_ms = time.time_ns() / 1e6 - message.welcome.arena_time_ms
            elif which == "match_start":
                seat = message.match_start.seat
                take_debug(bot)  # what the last match's end wrote is no answer's
                try:
                    game_codec = codec.codec_for(message.match_start.game)
                except codec.WireError as exc:  # every request of the match is answered with this crash
                    game_codec = f"this bot cannot play {message.match_start.game!r}: {exc}"
                    print(f"arena: {game_codec}", file=sys.stderr)
                bot.on_match_start(_info(message.match_start))
            elif which == "match_end":
                end = message.match_end
                events = _events(end.events, game_codec) if isinstance(game_codec, GameCodec) else []
                bot.on_match_end(MatchResult(tuple(end.totals), tuple(end.places)), events)
            elif which == "goodbye":
                return 0
    except (http2.CallFailed, http2.StreamGone, http2.MessageRefused) as exc:
        print(f"arena: stream failed: {exc}", file=sys.stderr)
        return 1
    finally:
        call.close()


def _events(messages: Iterable[AnyMessage], game_codec: GameCodec) -> list[Event]:
    """Return the events a bot can read; an event of a newer arena than this SDK knows is left out."""
    events = []
    for message in messages:
        try:
            events.append(codec.event_from_proto(message, game_codec))
        except codec.WireError:
            log.debug("skipped an event this SDK does not know: %s", message)
    return events


CRASH_REASON_CHARS = 1000
"""The longest reason a crash answer carries (the traceback goes to the bot's log whole)."""


def _answer(bot: Bot, request: pb.DecisionRequest, seat: int, game_codec: GameCodec | str,
            age_ms: float = 0.0) -> pb.Answer:
    """Return the bot's answer to ``request``: its picks, or when its code raised, a crash report; with the
    debug text the bot wrote since its previous answer, either way.

    The traceback goes to stderr (the bot's log); the arena records a crash fault with the exception's type
    and message at once, rather than a timeout, and the bot goes on with its next request.
    """
    try:
        if isinstance(game_codec, str):
            raise RuntimeError(game_codec)
        prompt = codec.prompt_from_proto(request, seat, game_codec)
        view = codec.view_from_proto(request, game_codec)
        if request.events and type(bot).on_events is not Bot.on_events:  # decoded only for bots that listen
            bot.on_events(_events(request.events, game_codec))
        if type(bot).on_clock is not Bot.on_clock:
            bot.on_clock(max(0.0, request.timeout_ms - age_ms) / 1000)
        picks = _picks(prompt, bot.decide(prompt, view))
        return pb.Answer(request_id=request.request_id, picks=picks, debug=take_debug(bot))
    except Exception as exc:
        print(f"arena: match {request.match_id}, request {request.step} (id {request.request_id}) failed:",
              file=sys.stderr)
        traceback.print_exc()
        return pb.Answer(request_id=request.request_id,
                         crash=f"{type(exc).__name__}: {exc}"[:CRASH_REASON_CHARS], debug=take_debug(bot))


def run(bot: Bot) -> None:
    """Serve the arena named by ``ARENA_ADDRESS`` with the token ``ARENA_TOKEN``; exit when it is done."""
    address = os.environ.get("ARENA_ADDRESS")
    token = os.environ.get("ARENA_TOKEN")
    if not address or not token:
        sys.exit("arena: ARENA_ADDRESS and ARENA_TOKEN must be set (the arena sets them for bots it launches)")
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        register_text(os.environ.get(ENVIRONMENT, ""))
    except GameError as exc:
        sys.exit(f"arena: {exc}")
    sys.exit(serve(bot, address, token))

