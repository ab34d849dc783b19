"""Text that comes from a bot, made safe to store and to show: one cap for its length, one escape for its
characters.

A bot chooses its crash reason, its output, its agent string, and (through a malformed answer) part of a
fault's detail. Printed raw to a terminal, its control sequences would set the window title, clear the
screen, write the clipboard (OSC 52) or draw a line that looks like the arena's own; stored raw, a detail
could be as long as a message may be. :func:`capped` bounds a fault's detail where the fault is made;
:func:`visible` is applied by every command that prints a bot's text.
"""

from __future__ import annotations

DETAIL_CHARS = 1000
"""The most characters a fault's detail holds, the mark that it was cut included."""

CONTINUATION = "\n    "
"""What a kept line break of a bot's multi-line text is shown as: its next line indented, so that no line of
the bot's can pass for one of the arena's."""


def capped(text: str, limit: int = DETAIL_CHARS) -> str:
    """Return ``text`` if it has at most ``limit`` characters; else its start and a mark saying how long it
    was, ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    mark = f"... [cut: {len(text)} characters]"
    return text[:max(0, limit - len(mark))] + mark


def visible(text: str, *, newline: str | None = None) -> str:
    """Return ``text`` with every character that is not printable written as its Python escape.

    ESC becomes ``\\x1b``, CR ``\\r``, DEL ``\\x7f``, a C1 control ``\\x9b``, a bidi override ``\\u202e``, a
    line separator ``\\u2028``; printable text, backslashes included, is unchanged. A line break is escaped
    too (``\\n``), unless ``newline`` is given: then each line break is shown as ``newline``, for a
    multi-line text shown on purpose (say :data:`CONTINUATION`, which indents the lines after the first).
    """
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable():
            out.append(char)
        elif char == "\n" and newline is not None:
            out.append(newline)
        else:
            out.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(out)
