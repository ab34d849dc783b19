"""The bot guide's in-process snippet runs as it is written (a guide whose example fails is worse than none)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "bot-guide.md"


def test_the_guides_in_process_snippet_plays_a_match() -> None:
    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("**In-process, without gRPC.**"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), str(GUIDE), "exec"), {"__name__": "guide"})
    places, faults = out.getvalue().strip().split(" ", 1)[0], out.getvalue()
    assert places.startswith("(") and faults.strip().endswith("[]"), out.getvalue()


def test_the_guides_debugging_list_names_a_remote_bot_and_two_bundled_ones(tmp_path: Path) -> None:
    import tomllib

    from arena.launch.botlist import parse_bot_list

    text = GUIDE.read_text(encoding="utf-8")
    section = text[text.index("**Under a debugger.**"):]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block is not None
    mine, greedy, tidy = parse_bot_list(tomllib.loads(block.group(1)), tmp_path)
    assert mine.remote and not greedy.remote and (greedy.name, tidy.name) == ("cabanga-greedy", "cabanga-tidy")
