"""Which supervisor runs the bots: the native one (``supervisor.c``, built here once) or ``supervisor.py``.

A Python supervisor is an interpreter per bot process (about 8.5 MiB of private memory, half a Python bot's);
its native twin, ``supervisor.c``, does the same in a few hundred KiB. It is built with the machine's C
compiler (``CC``, else ``cc``) on first use into a cache folder of the user's own (``$XDG_CACHE_HOME/arena``,
else ``~/.cache/arena``), under a name with a hash of its source and compiler, so a changed source builds a
new binary and concurrent arenas never run a half-written one (each builds to a name of its own and renames).
Where there is no compiler, the build fails, or the cache folder could be changed by someone else (the binary
runs as the arena's user, root included), the arena uses ``python -I -S supervisor.py`` and says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.launch import supervisor as supervisor_module

SUPERVISOR = os.path.abspath(supervisor_module.__file__)
"""The Python supervisor's script, which the arena runs by its path (``python -I -S SUPERVISOR ...``)."""
SOURCE = Path(SUPERVISOR).with_name("supervisor.c")
"""The native supervisor's source, shipped with the package."""
BINARY_PREFIX = "arena-supervisor-"
"""The native supervisor's file name, followed by a hash of its source and compiler command."""
CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror")
BUILD_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class Supervisor:
    """The supervisor of every bot process: the command that starts it (its options and the bot follow)."""

    prefix: tuple[str, ...]
    native: bool
    why_not: str = ""
    """Why the native supervisor is not used (empty when it is)."""

    def describe(self) -> str:
        """Return ``native supervisor``, or ``Python supervisor (why not the native one)``."""
        if self.native:
            return "native supervisor"
        return f"Python supervisor ({self.why_not})" if self.why_not else "Python supervisor"


def python_supervisor(why_not: str = "") -> Supervisor:
    """Return the Python supervisor (``why_not``: why the native one is not used)."""
    return Supervisor((sys.executable, "-I", "-S", SUPERVISOR), native=False, why_not=why_not)


def cache_folder() -> Path:
    """Return the arena's cache folder: ``$XDG_CACHE_HOME/arena``, else ``~/.cache/arena``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "arena"


def compiler() -> list[str]:
    """Return the C compiler's command: ``CC`` from the environment (it may hold options), else ``cc``."""
    return shlex.split(os.environ.get("CC", "")) or ["cc"]


def build(folder: Path | None = None, cc: list[str] | None = None, source: Path = SOURCE) -> Supervisor:
    """Return the native supervisor, built into ``folder`` (:func:`cache_folder`) with ``cc`` (:func:`compiler`)
    unless it is there already; or the Python supervisor and why, when it cannot be had. Never raises."""
    cc = compiler() if cc is None else cc
    try:
        folder = cache_folder() if folder is None else folder
        code = source.read_bytes()
    except RuntimeError as exc:  # no home folder
        return python_supervisor(f"no cache folder for the native supervisor: {exc}")
    except OSError as exc:
        return python_supervisor(f"no native supervisor source: {exc.strerror or exc}")
    digest = hashlib.sha256(code + b"\0" + " ".join([*cc, *CFLAGS]).encode()).hexdigest()[:16]
    binary = folder / f"{BINARY_PREFIX}{digest}"
    unsafe = _unsafe(folder)
    if unsafe:
        return python_supervisor(unsafe)
    if _ours(binary):
        return Supervisor((str(binary),), native=True)
    temporary = folder / f".{binary.name}.{os.getpid()}-{threading.get_ident()}.tmp"
    try:
        done = subprocess.run([*cc, *CFLAGS, "-o", str(temporary), str(source)], capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            lines = (done.stderr or done.stdout).strip().splitlines()
            return python_supervisor(f"the native supervisor does not build: {lines[0] if lines else done.returncode}")
        os.chmod(temporary, 0o755)
        os.replace(temporary, binary)  # whole or not at all: another arena may be starting the same binary
    except FileNotFoundError:
        return python_supervisor(f"no C compiler: {cc[0]} not found")
    except (OSError, subprocess.SubprocessError) as exc:
        return python_supervisor(f"the native supervisor does not build: {exc}")
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()
    return Supervisor((str(binary),), native=True)


def _unsafe(folder: Path) -> str:
    """Make ``folder`` if needed; return why a binary in it may not be trusted ("" when it may): it must be a
    real folder of the effective user, writable by no one else."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        return f"no cache folder for the native supervisor: {exc.strerror or exc}: {folder}"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return f"cache folder {folder} is not a folder of this user's only: the native supervisor is not used"
    return ""


def _ours(binary: Path) -> bool:
    """Whether ``binary`` is a built supervisor that only this user could have written."""
    try:
        info = binary.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


_default: Supervisor | None = None
_lock = threading.Lock()


def default_supervisor() -> Supervisor:
    """Return this machine's supervisor: the native one when it builds, else the Python one (once a process)."""
    global _default
    with _lock:
        if _default is None:
            _default = build() if sys.platform.startswith("linux") else python_supervisor(
                f"the native supervisor is for Linux, not {sys.platform}")
        return _default


def is_supervisor_command(cmdline: bytes) -> bool:
    """Whether a process's command line (``/proc/PID/cmdline``) is a supervisor's: the native one, this
    version's Python one, or an older arena's (which ran it as ``sandbox.py``)."""
    program = os.path.basename(cmdline.split(b"\0", 1)[0])
    if program.startswith(BINARY_PREFIX.encode()):
        return True
    return b"supervisor.py\0" in cmdline or b"sandbox.py\0" in cmdline
