"""Conformance checks over every game: the library's own (arena/tools/gamecheck.py, what `arena games --check` runs
on any game), here at a larger budget than the command's.

Random playouts at every seat count: at every step every card is in exactly one place, the default of every prompt
is legal, no view holds another seat's hand, the order of a pile or the seed, and a seat's view follows from what it
holds and was told (G2); totals add up and places follow the game's scoring; the same seed and decisions give the
identical event sequence (G1); every view, prompt and event survives the codec; the recorded match re-runs.
"""

from __future__ import annotations

import pytest

from arena.games import all_games
from arena.games.base import Game
from arena.tools import gamecheck

BUDGET = gamecheck.Budget(playouts=100, deep_every=10, determinism=10, deals=400)
"""Per game and seat count: 100 random matches, 10 of them checked at every step (the costly part), 10 played
twice, 400 deals looked at for the views check."""


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.name)
def test_g1_g2_every_game_passes_the_librarys_checks_at_a_larger_budget(game: Game) -> None:
    outcomes = gamecheck.check_game(game, BUDGET)
    assert [o.check for o in outcomes] == list(gamecheck.CHECKS)
    assert [o.line() for o in outcomes if o.status is not gamecheck.Status.OK] == []


def test_design_rules_core_does_no_io() -> None:
    """STYLE.md 1: arena/games imports no grpc, asyncio, subprocess, click, sqlite3 or generated code (its bundled
    example bots, each game's ``bots`` folder, are programs that use the SDK, not the core)."""
    import ast
    import pathlib

    import arena.games

    banned = {"grpc", "asyncio", "subprocess", "click", "sqlite3", "socket", "os", "io", "arena.v2"}
    root = pathlib.Path(arena.games.__file__).parent
    files = sorted(f for f in root.rglob("*.py") if "bots" not in f.relative_to(root).parts)
    assert len(files) >= 4 and any(f.name == "rules.py" for f in files)
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not any(name == b or name.startswith(b + ".") for b in banned), f"{path.name} imports {name}"
                if name.startswith("arena"):
                    assert name.startswith("arena.games"), f"{path.name} imports {name} from outside the core"
