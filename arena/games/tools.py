"""What the author tools need of a game: its ``tools`` module's ``TOOLS``, a :class:`GameTools`.

``arena check`` puts a bot through the game's option variants and hand-set edge states; ``arena new`` writes a
Python bot from the game's template; the ratings take the game's measured draw rates. Pure, like the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.games import game_part_value
from arena.games.base import MatchState

DEFAULT_DRAW_RATE = 0.05
"""The draw probability given to TrueSkill for a game and seat count without a measured one."""


@dataclass(frozen=True, slots=True)
class EdgeState:
    """A hand-set position and the seat the bot plays in it (``arena check``)."""

    label: str
    game: str
    state: MatchState
    seat: int
    options: Mapping[str, Any] = field(default_factory=dict)
    """The match options the position was set up with (a game's ``Options.to_json()``), as the bot is told."""


@dataclass(frozen=True)
class PythonTemplate:
    """What ``arena new --lang python`` writes for the game: the imports and the bot's decision methods.

    ``base`` is the typed bot base class (``CabangaBot``) and ``imports`` the lines that import it and the types
    the methods name; ``methods`` is the class body, indented four spaces, returning legal answers.
    """

    base: str
    imports: str
    methods: str


@dataclass(frozen=True)
class GameTools:
    """A game's data for the author tools and the ratings."""

    edge_states: Callable[[], Sequence[EdgeState]]
    """The hand-set positions ``arena check`` asks a bot to decide in (states a random deal rarely reaches)."""
    variants: Sequence[Mapping[str, Any]]
    """Option sets ``arena check`` plays one match each of (values as a user would type them)."""
    python: PythonTemplate
    draw_rates: Mapping[int, float] = field(default_factory=dict)
    """By seat count: how often two seats next to each other in a match's final order share their place,
    measured (``benchmarks/draws.py``); TrueSkill's draw probability."""

    def draw_rate(self, seats: int) -> float:
        """Return the draw probability at ``seats`` seats (:data:`DEFAULT_DRAW_RATE` when not measured)."""
        return self.draw_rates.get(seats, DEFAULT_DRAW_RATE)


def game_tools(name: str) -> GameTools:
    """Return the author tools' data of game ``name`` (its folder's ``tools.TOOLS``). Raises :class:`GameError`
    for an unknown game or one without it."""
    return game_part_value(name, "tools", "TOOLS", GameTools)
