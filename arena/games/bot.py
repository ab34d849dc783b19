"""What a Python bot is, in pure terms: the :class:`Bot` base class, which hands each decision to the method
named for its kind. The SDK (:mod:`arena.sdk`) runs it against an arena; each game's folder has a typed
subclass (``arena.games.cabanga.bot.CabangaBot``, ``arena.games.lama.bot.LamaBot``) whose methods say what
the game's decisions take and return.

A bot may attach debug text to an answer with :meth:`Bot.debug`; the SDK takes it with :func:`take_debug` when
it answers. Only the bot's owner (and the arena's operator) ever sees it.
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.games.base import Decision, Event, MatchInfo, MatchResult, Pick, Prompt, View

DEBUG_BYTES = 1024
"""The most debug text one answer carries, in bytes of UTF-8, the cut mark included: the SDK cuts there, and the
arena keeps no more of a decision's."""
DEBUG_CUT = "... [cut: over 1024 bytes]"
"""What ends a debug text the SDK cut."""


class Bot:
    """Base class of a Python bot: one method per decision kind of the game it plays, named for the kind.

    A decision of kind ``k`` calls ``self.k(view, choices)``. For a decision that picks one choice the method
    returns one of ``choices``; for one that picks any subset (a Cabanga! throw) it returns any of them, as an
    iterable. Every method gets the seat's complete current view, so a bot may be stateless. The hooks
    ``on_match_start``, ``on_events``, ``on_clock`` and ``on_match_end`` are there for bots that keep history;
    :meth:`debug` attaches text to the answer being made.
    """

    agent = "arena-python-sdk"
    _debug_parts: list[str] | None = None
    _debug_chars = 0

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

    def debug(self, text: object) -> None:
        """Attach ``text`` to this decision's answer, for the bot's owner to read beside it in the replay.

        Several calls during one decision join, a line each. Text written in ``on_match_start`` goes with the
        match's first answer; text written in ``on_match_end`` is dropped (no answer follows in that match). A
        value that is not a ``str`` is ``str()``'d. An answer carries at most :data:`DEBUG_BYTES` of it: the SDK
        cuts the rest and ends the text with :data:`DEBUG_CUT`. Never raises and never delays the answer: past
        the cap further calls keep nothing.
        """
        chars = self._debug_chars
        if chars > DEBUG_BYTES:
            return  # to be cut anyway: keep no more
        try:
            piece = text if type(text) is str else str(text)
            # a character is a byte or more of UTF-8, so this many characters are enough to fill the cap
            piece = piece[:DEBUG_BYTES + 1 - chars]
        except Exception as exc:  # a __str__ that raises, or returns no str
            piece = f"<debug: str() failed: {type(exc).__name__}>"
        parts = self._debug_parts
        if parts is None:
            self._debug_parts = [piece]
            self._debug_chars = len(piece)
        else:
            parts.append(piece)
            self._debug_chars = chars + 1 + len(piece)


_HOOKS = frozenset(name for name in vars(Bot) if not name.startswith("_")) | {"agent"}
"""Names a decision kind may not have: the base class's own (a game's kinds are checked against it)."""


def take_debug(bot: Bot) -> bytes:
    """Return the debug text ``bot`` wrote since this was last called, as UTF-8 (``b""`` for none), and forget it.

    At most :data:`DEBUG_BYTES`, cut on a character's boundary and ended with :data:`DEBUG_CUT` when longer; a
    character that cannot be encoded (a lone surrogate) becomes ``?``. Never raises.
    """
    parts = bot._debug_parts
    if parts is None:
        return b""
    bot._debug_parts = None
    bot._debug_chars = 0
    try:
        data = "\n".join(parts).encode("utf-8", "replace")
    except Exception:  # not a list of str: the bot set the attribute itself
        return b""
    if len(data) > DEBUG_BYTES:
        cut = DEBUG_CUT.encode()
        data = data[:DEBUG_BYTES - len(cut)].decode("utf-8", "ignore").encode() + cut
    return data


def kind_clashes(kinds: Sequence[str]) -> list[str]:
    """Return the decision kinds that cannot be bot methods: names of :class:`Bot`'s own, or private ones."""
    return [k for k in kinds if k in _HOOKS or k.startswith("_") or not k.isidentifier()]


__all__ = ["DEBUG_BYTES", "DEBUG_CUT", "Bot", "kind_clashes", "take_debug"]
