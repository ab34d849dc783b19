"""Tests that say what they cost.

- A test that starts a process or a server is marked ``process`` (pyproject.toml); a fixture that starts one says so
  with :func:`starts_processes`, and every test using it is marked for it (tests/conftest.py, which also fails a test
  that starts one unmarked). ``python -m pytest -m "not process"`` runs the rest, the pure tests.
- A loop over a whole match (or episode) has a step cap (:func:`capped`, :func:`until_over`): a rule that never ends a
  match fails the test at the cap, naming it, instead of hanging the suite. tests/conftest.py also caps every
  test's time (``ARENA_TEST_TIMEOUT``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

from arena.games.base import MatchState

F = TypeVar("F", bound=Callable[..., object])

STARTS_PROCESSES = "arena_starts_processes"
"""The attribute :func:`starts_processes` sets on a fixture's function."""


def starts_processes(fixture: F) -> F:
    """Say that a fixture starts processes or servers (put it under ``@pytest.fixture``): every test that uses it,
    directly or through another fixture, is marked ``process``."""
    setattr(fixture, STARTS_PROCESSES, True)
    return fixture


STEP_CAP = 20_000
"""Far more steps than any match these tests play takes: the longest of 120 random matches of each built-in game at
every seat count took 354 (Cabanga!), 80 (L.A.M.A.), 13 (Goofspiel)."""


def capped(cap: int = STEP_CAP, what: str = "the match") -> Iterator[int]:
    """Yield 0, 1, ... ``cap - 1`` for a loop that breaks when its match ends; raise :class:`AssertionError` when
    the loop asks for more."""
    yield from range(cap)
    raise AssertionError(f"{what} did not end within {cap} steps: a rule that never ends it?")


def until_over(state: MatchState, cap: int = STEP_CAP) -> Iterator[int]:
    """Yield step numbers while ``state`` is not over (``while not state.over``, capped at ``cap`` steps)."""
    for step in capped(cap):
        if state.over:
            return
        yield step
