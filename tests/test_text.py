"""A bot's text as the arena stores and shows it: escaped (:func:`visible`) and capped (:func:`capped`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.core.referee import Fault, FaultKind, SeatFault
from arena.text import CONTINUATION, DETAIL_CHARS, capped, visible

PRINTABLE_ASCII = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E))


@pytest.mark.parametrize(("raw", "shown"), [
    ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),  # OSC 0: the window title
    ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),  # OSC 52: the clipboard
    ("\x1b[2J", "\\x1b[2J"),  # CSI 2J: clear the screen
    ("\x9b2J", "\\x9b2J"),  # the same CSI as one C1 character
    ("x\rall bots passed", "x\\rall bots passed"),  # a carriage return to draw over a line
    ("a\x7fb\x00c", "a\\x7fb\\x00c"),
    ("\u202eevil\u202c \u2066x\u2069", "\\u202eevil\\u202c \\u2066x\\u2069"),  # bidi overrides and isolates
    ("one\u2028two\x85three", "one\\u2028two\\x85three"),  # line breaks other than \n
    ("tab\there", "tab\\there"),
    ("lone \udc80 surrogate", "lone \\udc80 surrogate"),
    ("naïve café, 7♥, 日本", "naïve café, 7♥, 日本"),  # printable text is left alone
    ("a\\x1b", "a\\x1b"),  # a backslash is printable: unchanged
])
def test_visible_writes_every_unprintable_character_as_its_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_visible_escapes_a_line_break_unless_told_how_to_show_it() -> None:
    assert visible("first\nsecond") == "first\\nsecond"
    assert visible("first\n\x1b[2Jsecond", newline=CONTINUATION) == "first\n    \\x1b[2Jsecond"


@given(st.text())
def test_visible_text_has_no_control_character(text: str) -> None:
    assert visible(text).isprintable()


@given(st.text())
def test_a_kept_line_break_always_starts_an_indented_line(text: str) -> None:
    shown = visible(text, newline=CONTINUATION)
    assert shown.replace("\n", "").isprintable()
    assert all(line.startswith("    ") for line in shown.split("\n")[1:])


@given(PRINTABLE_ASCII)
def test_visible_is_the_identity_on_printable_ascii(text: str) -> None:
    assert visible(text) == text
    assert visible(text, newline=CONTINUATION) == text


@given(st.text(max_size=3 * DETAIL_CHARS))
def test_capped_keeps_the_start_and_never_passes_the_limit(text: str) -> None:
    cut = capped(text)
    assert len(cut) <= DETAIL_CHARS
    if len(text) <= DETAIL_CHARS:
        assert cut == text
    else:
        assert cut.endswith(f"... [cut: {len(text)} characters]")
        assert text.startswith(cut[:DETAIL_CHARS - 40])


def test_every_fault_detail_is_capped_where_the_fault_is_made_and_where_it_is_read_back() -> None:
    long = "pick [" + ", ".join(["7"] * 20_000) + "] is out of range for 9 choices"
    assert len(SeatFault(FaultKind.MALFORMED, long).detail) == DETAIL_CHARS
    assert SeatFault(FaultKind.MALFORMED, long).detail == capped(long)
    stored = Fault.from_json({"seat": 0, "step": 3, "kind": "malformed", "detail": long})  # an older replay's
    assert stored.detail == capped(long)
    assert Fault(0, 3, FaultKind.MALFORMED, "short") == Fault(0, 3, FaultKind.MALFORMED, "short")
