"""L.A.M.A.'s messages on the wire (lama.proto, packed in the game-neutral envelope by arena.protocol)."""

from __future__ import annotations

from arena.games.codec import EventCodec, GameCodec
from arena.games.lama import lama_pb2 as pb
from arena.games.lama.rules import CARDS, DRAW, QUIT, Drew, DrewCard, LamaView, Played, Quit, RoundStarted

_CARD = {c.text: c for c in CARDS}
"""Text form to card: a C-level lookup per card (a KeyError names the bad text)."""


def encode_view(view: LamaView) -> pb.View:
    """Return the message of a seat's view."""
    out = pb.View(seat=view.seat, round=view.round, hand=[c.text for c in view.hand], discard=view.discard.text,
                  discard_size=view.discard_size, draw_size=view.draw_size, hand_sizes=view.hand_sizes,
                  in_round=view.in_round, totals=view.totals)
    if view.active is not None:
        out.active = view.active
    return out


def decode_view(v: pb.View) -> LamaView:
    """Return the view a message holds (decoded at every decision of a bot, so positional and C-level)."""
    return LamaView(v.seat, v.round, v.active if v.HasField("active") else None,
                    tuple(map(_CARD.__getitem__, v.hand)), _CARD[v.discard], v.discard_size, v.draw_size,
                    tuple(v.hand_sizes), tuple(v.in_round), tuple(v.totals))


CODEC = GameCodec(
    game="lama", view=pb.View, encode_view=encode_view, decode_view=decode_view,
    events=[
        EventCodec(RoundStarted, pb.RoundStarted,
                   lambda e: pb.RoundStarted(round=e.round, starter=e.starter, discard=e.discard.text,
                                             hand_size=e.hand_size),
                   lambda m: RoundStarted(m.round, m.starter, _CARD[m.discard], m.hand_size)),
        EventCodec(Played, pb.Played, lambda e: pb.Played(seat=e.seat, card=e.card.text),
                   lambda m: Played(m.seat, _CARD[m.card])),
        EventCodec(Drew, pb.Drew, lambda e: pb.Drew(seat=e.seat), lambda m: Drew(m.seat)),
        EventCodec(Quit, pb.Quit, lambda e: pb.Quit(seat=e.seat), lambda m: Quit(m.seat)),
        EventCodec(DrewCard, pb.DrewCard, lambda e: pb.DrewCard(seat=e.seat, card=e.card.text),
                   lambda m: DrewCard(m.seat, _CARD[m.card])),
    ],
    actions={"turn": [*CARDS, DRAW, QUIT]},
)
"""L.A.M.A.'s codec: what the registry's ``codec`` part gives the protocol."""
