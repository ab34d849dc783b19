"""Tiny Duel's data for arena check and arena new."""

from __future__ import annotations

from arena.games.tools import EdgeState, GameTools, PythonTemplate

from .rules import TinyOptions, TinyState


def edge_states() -> list[EdgeState]:
    one = TinyState(TinyOptions(cards=1), 3, 5)
    return [EdgeState("tiny: one card each, 3 seats", "tiny", one, 0, one.options.to_json())]


TOOLS = GameTools(
    edge_states=edge_states,
    variants=[{"cards": 1}, {"cards": 5}],
    python=PythonTemplate(
        base="TinyBot",
        imports="from tinygame.bot import TinyBot\nfrom tinygame.rules import Card, TinyView",
        methods='''    def lay(self, view: TinyView, choices: Sequence[Card]) -> Card:
        """The highest card in hand."""
        return max(choices, key=lambda c: c.value)
'''),
)

