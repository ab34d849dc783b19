"""Goofspiel's data for the author tools (``arena check``, ``arena new``) and the ratings."""

from __future__ import annotations

from arena.games.goofspiel.rules import GoofspielOptions, GoofspielState, Ties
from arena.games.tools import EdgeState, GameTools, PythonTemplate


def edge_states() -> list[EdgeState]:
    """Return the hand-set positions ``arena check`` puts to a bot (built with ``GoofspielState.arranged``)."""
    edges: list[EdgeState] = []
    last = GoofspielState.arranged(hands=["4", "9"], prizes="", prize="7", taken=["1 2 3 13", "5 6 8 9 10 11 12"])
    edges.append(EdgeState("goofspiel: the last trick, one card in hand, 2 seats", "goofspiel", last, 1,
                           last.options.to_json()))
    carry = GoofspielOptions(ties=Ties.CARRY)
    pot = GoofspielState.arranged(hands=["2 5 9", "1 5 13", "3 7 8"], prizes="4 12", prize="6", pot="10 11",
                                  taken=["2 13", "1 5 9", "3 7 8"], options=carry)
    edges.append(EdgeState("goofspiel: a pot of two tied prizes (ties=carry)", "goofspiel", pot, 2,
                           pot.options.to_json()))
    small = GoofspielOptions(cards=5)
    six = GoofspielState.arranged(hands=["1 2 3 4 5"] * 6, prizes="2 5 1 3", prize="4", options=small)
    edges.append(EdgeState("goofspiel: the first trick at 6 seats (cards=5)", "goofspiel", six, 5,
                           six.options.to_json()))
    later = GoofspielState.arranged(hands=["1 2 3", "1 2 3"], prizes="3 1", prize="2", totals=[5, 1], round=2,
                                    options=GoofspielOptions(cards=3, rounds=2))
    edges.append(EdgeState("goofspiel: the first trick of the last round, totals kept (cards=3, rounds=2)",
                           "goofspiel", later, 0, later.options.to_json()))
    return edges


TOOLS = GameTools(
    edge_states=edge_states,
    variants=[{"rounds": 1}, {"cards": 5}, {"ties": "carry"}, {"cards": 3, "rounds": 3, "ties": "carry"}],
    python=PythonTemplate(
        base="GoofspielBot",
        imports="from arena.games.goofspiel import Card, GoofspielView\n"
                "from arena.games.goofspiel.bot import GoofspielBot",
        methods='''    def bid(self, view: GoofspielView, choices: Sequence[Card]) -> Card:
        """One card of the hand (choices, lowest first) to bid for view.prize: here the nearest to its value."""
        target = view.prize.value if view.prize is not None else 0
        card = min(choices, key=lambda card: (abs(card.value - target), card.value))
        self.debug(f"{card}: the nearest to the prize, {target}")  # debug text: shown to you alone, beside it
        return card
'''),
    # measured by benchmarks/draws.py --game goofspiel over 3,000 matches a seat count of the bundled bots: the
    # share of neighbouring places of two different bots that were shared (distinct_neighbours). Ties are
    # common here (equal bids discard the prize); copies of one bot, which tie by construction, are not counted
    draw_rates={2: 0.167, 3: 0.217, 4: 0.306, 5: 0.396, 6: 0.451},
)
