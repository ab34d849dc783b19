"""What a Python bot is, in pure terms: the :class:`Bot` base class, which hands each decision to the method
named for its kind. The SDK (:mod:`arena.sdk`) runs it against an arena; each game's folder has a typed
subclass (``arena.games.cabanga.bot.CabangaBot``, ``arena.games.lama.bot.LamaBot``) whose methods say what
the game's decisions take and return.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.base import Decision, Event, MatchInfo, MatchResult, Pick, Prompt, View


class Bot:
    """Base class of a Python bot: one method per decision kind of the game it plays, named for the kind.

    A decision of kind ``k`` calls ``self.k(view, choices)``. For a decision that picks one choice the method
    returns one of ``choices``; for one that picks any subset (a Cabanga! throw) it returns any of them, as an
    iterable. Every method gets the seat's complete current view, so a bot may be stateless. The hooks
    ``on_match_start``, ``on_events``, ``on_clock`` and ``on_match_end`` are there for bots that keep history.
    """

    agent = "arena-python-sdk"

    def decide(self, prompt: Prompt, view: View) -> Decision:
        """Return this bot's decision for ``prompt``: its method named for the prompt's kind, asked."""
        method = getattr(type(self), prompt.kind, None)
        if method is None or prompt.kind.startswith("_") or prompt.kind in _HOOKS:
            raise NotImplementedError(f"{type(self).__name__} has no method {prompt.kind!r}: it does not play "
                                      f"{getattr(view, 'game', 'this game')!r}")
        answer = method(self, view, prompt.choices)
        return tuple(answer) if prompt.pick is Pick.SUBSET else (answer,)

    def on_match_start(self, info: MatchInfo) -> None:
        """Called when a match starts for this bot's seat."""

    def on_events(self, events: Sequence[Event]) -> None:
        """Called with the events since the previous request, before each decision."""

    def on_clock(self, seconds: float) -> None:
        """Called before each decision with the seconds left to answer it: the request's deadline plus the time
        bank left, less the time the request spent on its way (a search bot budgets from it)."""

    def on_match_end(self, result: MatchResult, events: Sequence[Event]) -> None:
        """Called when a match ends, with its result and the last events."""


_HOOKS = frozenset(name for name in vars(Bot) if not name.startswith("_")) | {"agent"}
"""Names a decision kind may not have: the base class's own (a game's kinds are checked against it)."""


def kind_clashes(kinds: Sequence[str]) -> list[str]:
    """Return the decision kinds that cannot be bot methods: names of :class:`Bot`'s own, or private ones."""
    return [k for k in kinds if k in _HOOKS or k.startswith("_") or not k.isidentifier()]


__all__ = ["Bot", "kind_clashes"]
