"""Tiny Duel: a game defined outside arena, the test that a game plugs in by its folder and its registration
alone. tests/test_game_plugin.py copies this folder as the package ``tinygame``, generates its messages' code
there (tiny_pb2) and registers it as ``tiny``."""

from .rules import TINY as GAME  # noqa: F401  # the registry reads it
