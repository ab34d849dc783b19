"""Cabanga!'s messages on the wire (cabanga.proto, packed in the game-neutral envelope by arena.protocol)."""

from __future__ import annotations

from collections.abc import Iterable

from arena.games.cabanga import cabanga_pb2 as pb
from arena.games.cabanga.rules import (
    DECK,
    NUMBER_CARDS,
    CabangaView,
    Card,
    Colour,
    Drew,
    PenaltyCards,
    PlayCard,
    Played,
    Reshuffled,
    RoundStarted,
    Side,
    Threw,
    ThrowsClosed,
)
from arena.games.codec import CodecError, EventCodec, GameCodec

_CARD = {c.text: c for c in DECK}
"""Text form to card: a C-level lookup per card (a KeyError names the bad text)."""
_COLOUR: dict[str, Colour | None] = {"": None, **{c.value: c for c in Colour}}
"""Colour by its text form; the empty text (an unset field) is none."""


def _texts(values: Iterable[Card]) -> list[str]:
    return [v.text for v in values]


def _cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(map(_CARD.__getitem__, texts))


def _pair(cards: tuple[Card, ...]) -> tuple[Card, Card]:
    if len(cards) != 2:
        raise CodecError(f"expected two row tops, got {len(cards)}")
    return cards[0], cards[1]


def encode_view(view: CabangaView) -> pb.View:
    """Return the message of a seat's view."""
    out = pb.View(seat=view.seat, round=view.round, active=view.active, step=view.step or "",
                  hand=_texts(view.hand), tops=_texts(view.tops), hand_sizes=view.hand_sizes,
                  penalty_size=view.penalty_size, set_aside_size=view.set_aside_size, totals=view.totals)
    if view.previous_colour is not None:
        out.previous_colour = view.previous_colour.value
    if view.throw_row is not None:
        out.throw_row = view.throw_row.value
    if view.throw_tops is not None:
        out.throw_tops.extend(_texts(view.throw_tops))
    return out


def decode_view(v: pb.View) -> CabangaView:
    """Return the view a message holds (decoded at every decision of a bot, so positional and C-level)."""
    card = _CARD.__getitem__
    throw_tops = v.throw_tops
    return CabangaView(
        v.seat, v.round, v.active, v.step or None, tuple(map(card, v.hand)), tuple(map(card, v.tops)),
        _COLOUR[v.previous_colour], _COLOUR[v.throw_row], _pair(tuple(map(card, throw_tops))) if throw_tops else None,
        tuple(v.hand_sizes), v.penalty_size, v.set_aside_size, tuple(v.totals))


CODEC = GameCodec(
    game="cabanga", view=pb.View, encode_view=encode_view, decode_view=decode_view,
    events=[
        EventCodec(RoundStarted, pb.RoundStarted,
                   lambda e: pb.RoundStarted(round=e.round, starter=e.starter, tops=_texts(e.tops),
                                             hand_size=e.hand_size),
                   lambda m: RoundStarted(m.round, m.starter, _cards(m.tops), m.hand_size)),
        EventCodec(Played, pb.Played,
                   lambda e: pb.Played(seat=e.seat, card=e.card.text, side=e.side.value, penalty=e.penalty,
                                       row_tops=_texts(e.row_tops)),
                   lambda m: Played(m.seat, _CARD[m.card], Side(m.side), m.penalty, _pair(_cards(m.row_tops)))),
        EventCodec(Threw, pb.Threw, lambda e: pb.Threw(seat=e.seat, cards=_texts(e.cards)),
                   lambda m: Threw(m.seat, _cards(m.cards))),
        EventCodec(Reshuffled, pb.Reshuffled, lambda e: pb.Reshuffled(count=e.count), lambda m: Reshuffled(m.count)),
        EventCodec(Drew, pb.Drew, lambda e: pb.Drew(seat=e.seat, count=e.count, owed=e.owed),
                   lambda m: Drew(m.seat, m.count, m.owed)),
        EventCodec(ThrowsClosed, pb.ThrowsClosed, lambda e: pb.ThrowsClosed(seat=e.seat),
                   lambda m: ThrowsClosed(m.seat)),
        EventCodec(PenaltyCards, pb.PenaltyCards, lambda e: pb.PenaltyCards(seat=e.seat, cards=_texts(e.cards)),
                   lambda m: PenaltyCards(m.seat, _cards(m.cards))),
    ],
    actions={
        "play": [PlayCard.parse(f"{c.text}:{side.value}") for c in NUMBER_CARDS for side in Side],  # interned
        "throw": NUMBER_CARDS,
    },
)
"""Cabanga!'s codec: what the registry's ``codec`` part gives the protocol."""
