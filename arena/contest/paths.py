"""What an author is told of the contest's folders: paths relative to their upload, never the host's.

A refusal, a rejection's reason and a build or check report may quote a path (a manifest error names its file,
tarfile's filter its destination, a compiler the file it failed on). Before any of them is stored or sent, the
contest passes it through :func:`for_author`: a path inside the author's own upload (the unpacked archive, its
built folder) becomes relative to it, and any other path of the contest's data folder becomes a plain label.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

UPLOAD = "your upload"
"""How a path of the author's own upload reads where it cannot be made relative (the folder itself)."""


def _forms(path: Path) -> list[str]:
    """Return the ways ``path`` may be written in a message: as given, absolute, and with links resolved."""
    forms = {str(path), os.path.abspath(path)}
    with contextlib.suppress(OSError):
        forms.add(str(path.resolve()))
    return [f.rstrip("/") for f in forms if f not in ("", "/")]


def _replacement(inside: str, alone: str) -> Callable[[re.Match[str]], str]:
    """Return what a matched path becomes: ``inside`` where a slash and more follow it, else ``alone``."""
    return lambda match: inside if match.group(1) else alone


def for_author(text: str, uploads: Iterable[Path], data: Path) -> str:
    """Return ``text`` with the host's paths taken out: each path under one of ``uploads`` (the folders that hold
    the author's files: the unpacked archive, the built bot) made relative to it (the folder itself: "your
    upload"), any other under the contest's folder ``data`` shown as ``<contest>/...``."""
    replacements: list[tuple[str, str]] = []
    for folder in uploads:
        replacements += [(form, "") for form in _forms(folder)]
    replacements += [(form, "<contest>") for form in _forms(data)]
    # the longest first: an upload lies inside the data folder
    for path, label in sorted(replacements, key=lambda item: -len(item[0])):
        # the whole path only (not /data/bots/ab inside /data/bots/abc), with the slash after it if any
        pattern = re.compile(re.escape(path) + r"(/+|(?![\w.-]))")
        text = pattern.sub(_replacement(label + "/", label) if label else _replacement("", UPLOAD), text)
    return text
