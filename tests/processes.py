"""What the tests ask of a process they started or saw: whether it is gone."""

from __future__ import annotations

from pathlib import Path


def gone(pid: int) -> bool:
    """Return whether process ``pid`` has ended: no longer there, or a zombie waiting for its parent."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
