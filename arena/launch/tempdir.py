"""The arena's own files in the temporary folder, named after the process that made them.

Every folder or file the arena keeps in the temporary folder (sockets, bots' logs without ``--log-dir``, the
jail's filter, an unjailed bot's scratch) is called ``arena-<kind>-<pid>-<random>``. An arena stopped by
SIGKILL cannot clear up after itself; the next one, at its first file of the same kind, removes those whose
process is gone, so nothing is left for longer than the next start.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


def alive(pid: int) -> bool:
    """Return whether process ``pid`` exists (another user's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def prefix(kind: str) -> str:
    """Return the name every file of ``kind`` made by this process starts with."""
    return f"arena-{kind}-{os.getpid()}-"


def remove_stale(kind: str, folder: str | None = None) -> int:
    """Remove the files and folders of ``kind`` whose process is gone; return how many."""
    removed = 0
    start = f"arena-{kind}-"
    with contextlib.suppress(OSError):
        for entry in Path(folder or tempfile.gettempdir()).iterdir():
            if not entry.name.startswith(start):
                continue
            pid = entry.name.removeprefix(start).split("-")[0]
            if not pid.isdigit() or alive(int(pid)):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    entry.unlink()
            removed += 1
    return removed


_swept: set[str] = set()
"""The kinds whose stale files this process has removed: once each, at its first folder of the kind (an unjailed
bot's scratch is made at every start, and the temporary folder need not be read each time)."""


def new_folder(kind: str) -> Path:
    """Return a new private folder of ``kind`` in the temporary folder (stale ones of ``kind`` removed first,
    once a process)."""
    if kind not in _swept:
        remove_stale(kind)
        _swept.add(kind)
    return Path(tempfile.mkdtemp(prefix=prefix(kind)))


@contextlib.contextmanager
def folder(kind: str) -> Iterator[Path]:
    """A new private folder of ``kind`` for the body of the ``with``, removed after it."""
    path = new_folder(kind)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
