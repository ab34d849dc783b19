"""Goofspiel's messages on the wire (goofspiel.proto, packed in the game-neutral envelope by arena.protocol)."""

from __future__ import annotations

from collections.abc import Iterable

from arena.games.codec import CodecError, EventCodec, GameCodec
from arena.games.goofspiel import goofspiel_pb2 as pb
from arena.games.goofspiel.rules import CARDS, BidsRevealed, Card, GoofspielView, PrizeTurned, RoundStarted

_CARD = {c.text: c for c in CARDS}
"""Text form to card: a C-level lookup per card (a KeyError names the bad text)."""


def _texts(cards: Iterable[Card]) -> list[str]:
    return [c.text for c in cards]


def _cards(texts: Iterable[str]) -> tuple[Card, ...]:
    return tuple(map(_CARD.__getitem__, texts))


def encode_view(view: GoofspielView) -> pb.View:
    """Return the message of a seat's view (its bids flat: trick by trick, each trick's by seat)."""
    tricks = len(view.bids[0]) if view.bids else 0
    return pb.View(seat=view.seat, round=view.round, trick=view.trick,
                   prize="" if view.prize is None else view.prize.text, pot=view.pot, hand=_texts(view.hand),
                   to_come=_texts(view.to_come), bids=[view.bids[s][t].text for t in range(tricks)
                                                       for s in range(len(view.bids))],
                   totals=view.totals)


def decode_view(v: pb.View) -> GoofspielView:
    """Return the view a message holds (decoded at every decision of a bot, so positional and C-level).

    Raises :class:`CodecError` when the bids do not fill whole tricks of every seat."""
    seats = len(v.totals)
    bids = _cards(v.bids)
    if not seats or len(bids) % seats:
        raise CodecError(f"{len(bids)} bids do not make whole tricks of {seats} seats")
    return GoofspielView(v.seat, v.round, v.trick, _CARD[v.prize] if v.prize else None, v.pot, _cards(v.hand),
                         _cards(v.to_come), tuple(bids[s::seats] for s in range(seats)), tuple(v.totals))


def _encode_bids(e: BidsRevealed) -> pb.BidsRevealed:
    out = pb.BidsRevealed(trick=e.trick, bids=_texts(e.bids), won=e.won)
    if e.winner is not None:
        out.winner = e.winner
    return out


CODEC = GameCodec(
    game="goofspiel", view=pb.View, encode_view=encode_view, decode_view=decode_view,
    events=[
        EventCodec(RoundStarted, pb.RoundStarted, lambda e: pb.RoundStarted(round=e.round, cards=e.cards),
                   lambda m: RoundStarted(m.round, m.cards)),
        EventCodec(PrizeTurned, pb.PrizeTurned, lambda e: pb.PrizeTurned(trick=e.trick, prize=e.prize.text, pot=e.pot),
                   lambda m: PrizeTurned(m.trick, _CARD[m.prize], m.pot)),
        EventCodec(BidsRevealed, pb.BidsRevealed, _encode_bids,
                   lambda m: BidsRevealed(m.trick, _cards(m.bids), m.winner if m.HasField("winner") else None,
                                          m.won)),
    ],
    actions={"bid": CARDS},
)
"""Goofspiel's codec: what the registry's ``codec`` part gives the protocol."""
