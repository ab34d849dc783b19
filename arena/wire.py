"""The only module that turns game values into protobuf messages and back.

Cards and actions travel as their text forms; views and events as the typed messages of
``proto/arena/v1/arena.proto``. Every ``*_from_proto`` function raises :class:`WireError` for a message that
does not describe a valid value, so a bad message from the network can never reach the rules core unchecked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from arena.games import cabanga, lama
from arena.games.base import (
    Action,
    Decision,
    DecisionKind,
    Event,
    GameError,
    MatchOver,
    MatchResult,
    Pick,
    Prompt,
    RoundScored,
    View,
)
from arena.referee import FaultKind, MatchInfo, Request, SeatFaulted
from arena.v1 import arena_pb2 as pb

T = TypeVar("T")


class WireError(ValueError):
    """A protobuf message that does not describe a valid game value."""


GAME_TO_PB = {"cabanga": pb.GAME_CABANGA, "lama": pb.GAME_LAMA}
GAME_FROM_PB = {v: k for k, v in GAME_TO_PB.items()}
KIND_TO_PB = {
    "play": pb.DECISION_KIND_PLAY,
    "throw": pb.DECISION_KIND_THROW,
    "turn": pb.DECISION_KIND_TURN,
}
KIND_FROM_PB = {v: k for k, v in KIND_TO_PB.items()}
PICK_TO_PB = {Pick.ONE: pb.PICK_ONE, Pick.SUBSET: pb.PICK_SUBSET}
PICK_FROM_PB = {v: k for k, v in PICK_TO_PB.items()}


def _texts(values: Iterable[Action]) -> list[str]:
    return [v.text for v in values]


# ------------------------------------------------------------------------------------------ arena side


def match_start(info: MatchInfo) -> pb.MatchStart:
    """Return the MatchStart message telling a seat about its new match."""
    options = info.options
    return pb.MatchStart(
        match_id=info.match_id,
        game=GAME_TO_PB[info.game],
        seat=info.seat,
        names=info.names,
        target=int(options.get("target") or 0),
        rounds=int(options.get("rounds") or 0),
        symbols=list(options.get("symbols") or ()),
        climb=str(options.get("climb") or ""),
        deadline_ms=round(info.clock.deadline * 1000),
        time_bank_ms=round(info.clock.bank * 1000),
        max_faults=info.max_faults,
    )


def request_bytes(request: Request) -> bytes:
    """Return the serialized ArenaMessage asking a seat to decide, still without its id and send time.

    A serialized message followed by another is the two merged (repeated fields appended), as protobuf
    defines it. So the request is its own fields and view, then one piece per event that every seat shares and
    :data:`event_pieces` encodes once, and last the connection's :func:`request_stamp`.
    """
    prompt = request.prompt
    message = pb.ArenaMessage()
    out = message.request
    out.match_id = request.match_id
    out.step = request.step
    out.kind = KIND_TO_PB[prompt.kind]
    out.pick = PICK_TO_PB[prompt.pick]
    out.choices.extend(_texts(prompt.choices))
    out.default_picks.extend(prompt.choices.index(a) for a in prompt.default)
    out.timeout_ms = max(1, int(request.timeout * 1000))
    view = request.view
    if isinstance(view, cabanga.CabangaView):
        _fill_cabanga_view(out.cabanga, view)
    elif isinstance(view, lama.LamaView):
        _fill_lama_view(out.lama, view)
    else:
        raise TypeError(f"no wire form for view {type(view).__name__}")
    head = message.SerializeToString()
    if not request.events:
        return head
    return b"".join([head, *map(event_pieces.piece, request.events)])


def request_stamp(request_id: int, sent_time_ms: int) -> bytes:
    """Return the piece that ends a serialized request: its id and the arena's clock when it was sent."""
    return pb.ArenaMessage(request=pb.DecisionRequest(request_id=request_id, sent_time_ms=sent_time_ms)
                           ).SerializeToString()


def decision_request(request: Request) -> pb.DecisionRequest:
    """Return the DecisionRequest for a referee request, as a bot receives it (without id and send time)."""
    return pb.ArenaMessage.FromString(request_bytes(request)).request


class EventPieces:
    """Serialized request pieces holding one event each, by event, for the most recent ``size`` events.

    Every seat is sent every public event, so each is encoded once rather than once per seat. Events are
    immutable and found by identity (the piece holds its event, so an id is never reused while cached).
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._pieces: dict[int, tuple[Event, bytes]] = {}

    def piece(self, event: Event) -> bytes:
        """Return the serialized ArenaMessage whose request holds ``event`` and nothing else."""
        hit = self._pieces.get(id(event))
        if hit is not None and hit[0] is event:
            return hit[1]
        if len(self._pieces) >= self._size:
            self._pieces.clear()
        piece = pb.ArenaMessage(request=pb.DecisionRequest(events=[event_to_proto(event)])).SerializeToString()
        self._pieces[id(event)] = (event, piece)
        return piece


event_pieces = EventPieces()
"""The arena's one cache of event pieces (shared by its tables: they run on one event loop)."""


def decision_from_picks(prompt: Prompt, picks: Sequence[int]) -> Decision:
    """Return the decision that ``picks`` (indices into the prompt's choices) stand for.

    Raises :class:`WireError` for an index out of range, a repeated index, or a count that the prompt's
    pick does not allow. Legality beyond that is the referee's to check.
    """
    n = len(prompt.choices)
    if any(not 0 <= i < n for i in picks):
        raise WireError(f"pick {list(picks)!r} is out of range for {n} choices")
    if len(set(picks)) != len(picks):
        raise WireError(f"picks {list(picks)!r} repeat a choice")
    if prompt.pick is Pick.ONE and len(picks) != 1:
        raise WireError(f"expected exactly one pick, got {len(picks)}")
    return tuple(prompt.choices[i] for i in picks)


def match_end(match_id: str, events: Iterable[Event], result: MatchResult) -> pb.MatchEnd:
    """Return the MatchEnd message: final totals and places plus the events the seat has not seen."""
    return pb.MatchEnd(match_id=match_id, totals=result.totals, places=result.places,
                       events=[event_to_proto(e) for e in events])


def _fill_cabanga_view(out: pb.CabangaView, view: cabanga.CabangaView) -> None:
    out.seat, out.round, out.active = view.seat, view.round, view.active
    if view.step is not None:
        out.step = KIND_TO_PB[view.step]
    out.hand.extend(_texts(view.hand))
    out.tops.extend(_texts(view.tops))
    if view.previous_colour is not None:
        out.previous_colour = view.previous_colour.value
    if view.throw_row is not None:
        out.throw_row = view.throw_row.value
    if view.throw_tops is not None:
        out.throw_tops.extend(_texts(view.throw_tops))
    out.hand_sizes.extend(view.hand_sizes)
    out.penalty_size, out.set_aside_size = view.penalty_size, view.set_aside_size
    out.totals.extend(view.totals)


def _fill_lama_view(out: pb.LamaView, view: lama.LamaView) -> None:
    out.seat, out.round = view.seat, view.round
    if view.active is not None:
        out.active = view.active
    out.hand.extend(_texts(view.hand))
    out.discard, out.discard_size, out.draw_size = view.discard.text, view.discard_size, view.draw_size
    out.hand_sizes.extend(view.hand_sizes)
    out.in_round.extend(view.in_round)
    out.totals.extend(view.totals)


_EVENT_TO_PB: dict[type, Callable[[Any], pb.Event]] = {
    cabanga.RoundStarted: lambda e: pb.Event(cabanga_round_started=pb.CabangaRoundStarted(
        round=e.round, starter=e.starter, tops=_texts(e.tops), hand_size=e.hand_size)),
    cabanga.Played: lambda e: pb.Event(cabanga_played=pb.CabangaPlayed(
        seat=e.seat, card=e.card.text, side=e.side.value, penalty=e.penalty, row_tops=_texts(e.row_tops))),
    cabanga.Threw: lambda e: pb.Event(cabanga_threw=pb.CabangaThrew(seat=e.seat, cards=_texts(e.cards))),
    cabanga.Reshuffled: lambda e: pb.Event(cabanga_reshuffled=pb.CabangaReshuffled(count=e.count)),
    cabanga.Drew: lambda e: pb.Event(cabanga_drew=pb.CabangaDrew(seat=e.seat, count=e.count, owed=e.owed)),
    cabanga.ThrowsClosed: lambda e: pb.Event(cabanga_throws_closed=pb.CabangaThrowsClosed(seat=e.seat)),
    cabanga.PenaltyCards: lambda e: pb.Event(cabanga_penalty_cards=pb.CabangaPenaltyCards(
        seat=e.seat, cards=_texts(e.cards))),
    lama.RoundStarted: lambda e: pb.Event(lama_round_started=pb.LamaRoundStarted(
        round=e.round, starter=e.starter, discard=e.discard.text, hand_size=e.hand_size)),
    lama.Played: lambda e: pb.Event(lama_played=pb.LamaPlayed(seat=e.seat, card=e.card.text)),
    lama.Drew: lambda e: pb.Event(lama_drew=pb.LamaDrew(seat=e.seat)),
    lama.Quit: lambda e: pb.Event(lama_quit=pb.LamaQuit(seat=e.seat)),
    lama.DrewCard: lambda e: pb.Event(lama_drew_card=pb.LamaDrewCard(seat=e.seat, card=e.card.text)),
    SeatFaulted: lambda e: pb.Event(seat_faulted=pb.SeatFaulted(seat=e.seat, kind=e.fault.value)),
    RoundScored: lambda e: pb.Event(round_scored=pb.RoundScored(
        round=e.round, points=e.points, totals=e.totals)),
    MatchOver: lambda e: pb.Event(match_over=pb.MatchOver(totals=e.totals, places=e.places)),
}


def event_to_proto(event: Event) -> pb.Event:
    """Return the wire form of a public event."""
    return _EVENT_TO_PB[type(event)](event)


# -------------------------------------------------------------------------------------------- bot side


def _guard(what: str, build: Callable[[], T]) -> T:
    try:
        return build()
    except (GameError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise WireError(f"bad {what}: {exc}") from None


# Text form to card, for decoding: a C-level lookup per card (a KeyError names the bad text).
_CABANGA_CARD = {c.text: c for c in cabanga.DECK}
_LAMA_CARD = {c.text: c for c in lama.CARDS}


def _ccards(texts: Iterable[str]) -> tuple[cabanga.Card, ...]:
    return tuple(map(_CABANGA_CARD.__getitem__, texts))


def _lcards(texts: Iterable[str]) -> tuple[lama.Card, ...]:
    return tuple(map(_LAMA_CARD.__getitem__, texts))


_COLOUR: dict[str, cabanga.Colour | None] = {"": None, **{c.value: c for c in cabanga.Colour}}
"""Colour by its text form; the empty text (an unset field) is none."""


def _pair(cards: tuple[cabanga.Card, ...]) -> tuple[cabanga.Card, cabanga.Card]:
    if len(cards) != 2:
        raise WireError(f"expected two row tops, got {len(cards)}")
    return cards[0], cards[1]


def view_from_proto(request: pb.DecisionRequest) -> View:
    """Return the game view a DecisionRequest carries. Raises :class:`WireError`.

    Decoded at every decision of a bot, so written for speed: positional arguments, and C-level lookups.
    """
    which = request.WhichOneof("view")
    try:
        if which == "cabanga":
            v = request.cabanga
            card = _CABANGA_CARD.__getitem__
            throw_tops = v.throw_tops
            return cabanga.CabangaView(
                v.seat, v.round, v.active, KIND_FROM_PB.get(v.step), tuple(map(card, v.hand)),
                tuple(map(card, v.tops)), _COLOUR[v.previous_colour], _COLOUR[v.throw_row],
                _pair(tuple(map(card, throw_tops))) if throw_tops else None, tuple(v.hand_sizes), v.penalty_size,
                v.set_aside_size, tuple(v.totals))
        if which == "lama":
            lv = request.lama
            return lama.LamaView(
                lv.seat, lv.round, lv.active if lv.HasField("active") else None,
                tuple(map(_LAMA_CARD.__getitem__, lv.hand)), _LAMA_CARD[lv.discard], lv.discard_size, lv.draw_size,
                tuple(lv.hand_sizes), tuple(lv.in_round), tuple(lv.totals))
    except (GameError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise WireError(f"bad {'Cabanga!' if which == 'cabanga' else 'L.A.M.A.'} view: {exc}") from None
    raise WireError("the request carries no view")


_LAMA_ACTIONS: tuple[Action, ...] = (*lama.CARDS, lama.DRAW, lama.QUIT)
_ACTIONS: dict[tuple[str, DecisionKind], dict[str, Action]] = {
    ("cabanga", "play"): {p.text: p for c in cabanga.NUMBER_CARDS for p in
                                     (cabanga.PlayCard(c, cabanga.Side.LEFT), cabanga.PlayCard(c, cabanga.Side.RIGHT))},
    ("cabanga", "throw"): {c.text: c for c in cabanga.NUMBER_CARDS},
    ("lama", "turn"): {a.text: a for a in _LAMA_ACTIONS},
}
"""Every action by its text form, per game and decision kind."""


def prompt_from_proto(request: pb.DecisionRequest, seat: int) -> Prompt:
    """Return the prompt a DecisionRequest carries, its choices parsed into actions. Raises :class:`WireError`."""
    kind = KIND_FROM_PB.get(request.kind)
    pick = PICK_FROM_PB.get(request.pick)
    game = request.WhichOneof("view")
    actions = _ACTIONS.get((game or "", kind)) if kind is not None else None
    if actions is None or pick is None or kind is None:
        raise WireError(f"unknown decision: game {game!r}, kind {request.kind}, pick {request.pick}")
    try:
        choices: tuple[Action, ...] = tuple(map(actions.__getitem__, request.choices))
    except KeyError as exc:
        raise WireError(f"bad choices: no such {kind} choice {exc}") from None
    try:
        default = tuple(map(choices.__getitem__, request.default_picks))
    except IndexError:
        raise WireError(f"bad default: picks {list(request.default_picks)} for {len(choices)} choices") from None
    return Prompt(seat, kind, pick, choices, default)


_EVENT_FROM_PB: dict[str, Callable[[Any], Event]] = {
    "cabanga_round_started": lambda m: cabanga.RoundStarted(m.round, m.starter, _ccards(m.tops), m.hand_size),
    "cabanga_played": lambda m: cabanga.Played(m.seat, _CABANGA_CARD[m.card], cabanga.Side(m.side),
                                               m.penalty, _pair(_ccards(m.row_tops))),
    "cabanga_threw": lambda m: cabanga.Threw(m.seat, _ccards(m.cards)),
    "cabanga_reshuffled": lambda m: cabanga.Reshuffled(m.count),
    "cabanga_drew": lambda m: cabanga.Drew(m.seat, m.count, m.owed),
    "cabanga_throws_closed": lambda m: cabanga.ThrowsClosed(m.seat),
    "cabanga_penalty_cards": lambda m: cabanga.PenaltyCards(m.seat, _ccards(m.cards)),
    "lama_round_started": lambda m: lama.RoundStarted(m.round, m.starter, _LAMA_CARD[m.discard],
                                                      m.hand_size),
    "lama_played": lambda m: lama.Played(m.seat, _LAMA_CARD[m.card]),
    "lama_drew": lambda m: lama.Drew(m.seat),
    "lama_quit": lambda m: lama.Quit(m.seat),
    "lama_drew_card": lambda m: lama.DrewCard(m.seat, _LAMA_CARD[m.card]),
    "seat_faulted": lambda m: SeatFaulted(m.seat, FaultKind(m.kind)),
    "round_scored": lambda m: RoundScored(m.round, tuple(m.points), tuple(m.totals)),
    "match_over": lambda m: MatchOver(tuple(m.totals), tuple(m.places)),
}


def event_from_proto(message: pb.Event) -> Event:
    """Return the game event a wire event stands for. Raises :class:`WireError`."""
    which = message.WhichOneof("body")
    if which is None:
        raise WireError("empty event")
    return _guard(f"{which} event", lambda: _EVENT_FROM_PB[which](getattr(message, which)))
