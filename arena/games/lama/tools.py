"""L.A.M.A.'s data for the author tools (``arena check``, ``arena new``) and the ratings."""

from __future__ import annotations

from arena.games.lama.rules import DECK, LamaOptions, LamaState
from arena.games.tools import EdgeState, GameTools, PythonTemplate


def edge_states() -> list[EdgeState]:
    """Return the hand-set positions ``arena check`` puts to a bot (built with ``LamaState.arranged``)."""
    edges: list[EdgeState] = []
    # no card fits, and the draw pile is empty: quit is the only choice (L6)
    rest = list(DECK)
    for card in ("L1", "L2", "L1", "L5", "L4"):
        rest.remove(next(c for c in rest if c.text == card))
    must_quit = LamaState.arranged(hands=["L1 L2", "L1 L5"], discard=[*rest, next(c for c in DECK
                                                                                 if c.text == "L4")], draw="")
    edges.append(EdgeState("lama: a seat that must quit (nothing fits, nothing to draw)", "lama", must_quit, 0,
                           must_quit.options.to_json()))
    alone = LamaState.arranged(hands=["L6", "L3 L5", "LL"], discard="L3", active=1, quit=[0, 2])
    edges.append(EdgeState("lama: the last seat in, who may not draw", "lama", alone, 1, alone.options.to_json()))
    one = LamaState.arranged(hands=["L4", "L2 L2"], discard="L4")
    edges.append(EdgeState("lama: the last card in hand", "lama", one, 0, one.options.to_json()))
    climb = LamaState.arranged(hands=["L2 L5 LL", "L1"], discard="L2", options=LamaOptions(climb="any"))
    edges.append(EdgeState("lama: option climb=any", "lama", climb, 0, climb.options.to_json()))
    return edges


TOOLS = GameTools(
    edge_states=edge_states,
    variants=[{"rounds": 1}, {"target": 8}, {"rounds": 1, "climb": "any"}],
    python=PythonTemplate(
        base="LamaBot",
        imports="from arena.games.lama import Card, LamaView, TurnAction\nfrom arena.games.lama.bot import LamaBot",
        methods='''    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        """A card to play, DRAW or QUIT: here the first choice (the lowest legal card, else draw, else quit)."""
        self.debug(f"{choices[0]}: the first choice")  # debug text: shown to you alone, beside this decision
        return choices[0]
'''),
    # measured by benchmarks/draws.py over 3,000 matches a configuration of the bundled bots
    draw_rates={2: 0.009, 3: 0.018, 4: 0.025, 5: 0.034, 6: 0.047},
)
