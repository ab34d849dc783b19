"""Cabanga!'s data for the author tools (``arena check``, ``arena new``) and the ratings."""

from __future__ import annotations

from arena.games.cabanga.rules import CabangaState, PlayCard
from arena.games.tools import EdgeState, GameTools, PythonTemplate


def edge_states() -> list[EdgeState]:
    """Return the hand-set positions ``arena check`` puts to a bot (built with ``CabangaState.arranged``)."""
    edges: list[EdgeState] = []
    # bob (seat 1) may throw three cards once alice plays R9 onto the right pile (R 1|9, C10)
    throw3 = CabangaState.arranged([["R9", "B2"], ["R4", "R5", "R6", "B1"], ["P7", "Y9"]])
    throw3.apply({0: (PlayCard.parse("R9:right"),)})
    edges.append(EdgeState("cabanga: a throw with three candidates", "cabanga", throw3, 1,
                           throw3.options.to_json()))
    # a throw that would empty the thrower's hand (C14), at six seats, the bot last
    empties = CabangaState.arranged([["R9", "B2"], ["P7"], ["Y9"], ["B9"], ["P9"], ["R5"]])
    empties.apply({0: (PlayCard.parse("R9:right"),)})
    edges.append(EdgeState("cabanga: a throw of the last card in hand, 6 seats", "cabanga", empties, 5,
                           empties.options.to_json()))
    last = CabangaState.arranged([["R9", "B2"], ["B7"], ["P7", "Y9"]], active=1)
    edges.append(EdgeState("cabanga: a play of the last card in hand", "cabanga", last, 1, last.options.to_json()))
    return edges


TOOLS = GameTools(
    edge_states=edge_states,
    variants=[{"rounds": 1}, {"target": 5}, {"rounds": 1, "symbols": ",".join(["3"] * 18)}],
    python=PythonTemplate(
        base="CabangaBot",
        imports="from arena.games.cabanga import CabangaView, Card, PlayCard\n"
                "from arena.games.cabanga.bot import CabangaBot",
        methods='''    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        """One of the legal plays (a card onto the left or right pile of its row): here the first."""
        self.debug(f"{choices[0]}: the first legal play")  # debug text: shown to you alone, beside this decision
        return choices[0]

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        """Any of the cards that may be thrown (strictly between the two tops of the row just played)."""
        self.debug(f"throw all {len(candidates)}")
        return candidates
'''),
    # measured by benchmarks/draws.py over 3,000 matches a configuration of the bundled bots
    draw_rates={3: 0.028, 4: 0.044, 5: 0.065, 6: 0.086},
)
