"""The supervisor every bot runs under, ``supervisor.c``: where its program is, and how it is built.

It is built with the package: ``pip install .`` compiles it (setup.py's build step, :func:`compile_supervisor`)
into the package beside this module (:data:`PACKAGED`), and fails showing the compiler's error. An editable
install (``pip install -e .``) runs the source tree, which may change under it: there the supervisor is built at
first use into a cache folder of the user's own (``$XDG_CACHE_HOME/arena``, else ``~/.cache/arena``), under a name
with a hash of its source, header and compiler command, so a changed source builds a new program and concurrent
arenas never run a half-written one (each builds to a name of its own and renames). ``ARENA_SUPERVISOR`` names
another build of the same source to run instead (CI's build with sanitizers).

Where none can be had (no C compiler, a failed build, a cache folder someone else could write: the program runs as
the arena's user, root included; not Linux), :func:`default_supervisor` says why: ``arena sandbox`` prints it,
``--sandbox strict`` refuses to run, and ``auto`` runs the bots without isolation and says so. There is no second
supervisor.

Standard library only, and nothing of the arena: setup.py loads this file by its path to build the package.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).resolve().with_name("supervisor.c")
"""The supervisor's source, shipped with the package."""
HEADER = SOURCE.with_name("supervisor.h")
"""Its header: the values it shares with the arena, generated from :mod:`arena.launch.supervisor_constants`."""
PROGRAM = "arena-supervisor"
"""The supervisor's file name; a build at first use adds ``-`` and a hash of its source and compiler command."""
PACKAGED = SOURCE.with_name(PROGRAM)
"""Where a (non-editable) install puts the supervisor it built."""
ENVIRONMENT = "ARENA_SUPERVISOR"
"""The environment variable naming another build of the supervisor to run (an absolute path)."""
CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror")
BUILD_TIMEOUT = 120.0
INSTALL_HINT = "install a C compiler (Debian/Ubuntu: apt-get install gcc libc6-dev)"


class BuildError(RuntimeError):
    """The supervisor does not compile here. ``str()`` is one line; :attr:`output` is all the compiler said."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


@dataclass(frozen=True, slots=True)
class Supervisor:
    """The supervisor's program, or why there is none here."""

    program: str | None
    """Its path; ``None`` when it cannot be had here."""
    why_not: str = ""
    """Why there is no supervisor (empty when there is one)."""
    chosen_by: str = ""
    """What named the program when it is not the package's own build (``ARENA_SUPERVISOR``), else empty."""

    @property
    def available(self) -> bool:
        return self.program is not None

    @property
    def prefix(self) -> tuple[str, ...]:
        """Return the command that starts it (its options and the bot follow). Raises :class:`BuildError` when
        there is none."""
        if self.program is None:
            raise BuildError(f"no supervisor: {self.why_not}")
        return (self.program,)

    def describe(self) -> str:
        """Return what to say of it in the sandbox's line: nothing for the package's own build."""
        if self.program is None:
            return f"no supervisor ({self.why_not})"
        return f"supervisor {self.program} (from {self.chosen_by})" if self.chosen_by else ""


def missing(why_not: str) -> Supervisor:
    """Return the answer "no supervisor here, because ``why_not``"."""
    return Supervisor(None, why_not)


def compiler() -> list[str]:
    """Return the C compiler's command: ``CC`` from the environment (it may hold options), else ``cc``."""
    return shlex.split(os.environ.get("CC", "")) or ["cc"]


def compile_supervisor(output: Path, cc: Sequence[str] | None = None, flags: Sequence[str] = CFLAGS,
                       source: Path = SOURCE) -> None:
    """Compile the supervisor from ``source`` (its header beside it) with ``cc`` (:func:`compiler`) and ``flags``
    into ``output``, written whole or not at all (built under a temporary name, then renamed).

    Raises :class:`BuildError`: its message names the compiler's first error, its ``output`` holds all it said.
    """
    cc = compiler() if cc is None else list(cc)
    temporary = output.with_name(f".{output.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    try:
        done = subprocess.run([*cc, *flags, "-o", str(temporary), str(source)], capture_output=True, text=True,
                              timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            said = (done.stderr + done.stdout).strip()
            error = _first_error(said) or f"{cc[0]} exited with status {done.returncode}"
            raise BuildError(f"the supervisor does not build: {error}", said)
        os.chmod(temporary, 0o755)
        os.replace(temporary, output)  # whole or not at all: another arena may be starting the same program
    except FileNotFoundError:
        raise BuildError(f"no C compiler: {cc[0]} not found; {INSTALL_HINT}") from None
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"the supervisor does not build: {exc}") from None
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _first_error(output: str) -> str:
    """Return the line of the compiler's output that says what is wrong: its first error, else its first line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    return next((line for line in lines if "error" in line.lower()), lines[0] if lines else "")


def build(folder: Path | None = None, cc: list[str] | None = None, source: Path = SOURCE) -> Supervisor:
    """Return the supervisor built from ``source`` into ``folder`` (:func:`cache_folder`) with ``cc``
    (:func:`compiler`) unless it is there already; or why it cannot be had. Never raises."""
    cc = compiler() if cc is None else cc
    try:
        folder = cache_folder() if folder is None else folder
        code = source.read_bytes() + b"\0" + source.with_name(HEADER.name).read_bytes()
    except RuntimeError as exc:  # no home folder
        return missing(f"no cache folder to build the supervisor in: {exc}")
    except OSError as exc:
        return missing(f"no supervisor source: {exc.strerror or exc}: {exc.filename}")
    digest = hashlib.sha256(code + b"\0" + " ".join([*cc, *CFLAGS]).encode()).hexdigest()[:16]
    program = folder / f"{PROGRAM}-{digest}"
    unsafe = _unsafe(folder)
    if unsafe:
        return missing(unsafe)
    if not _ours(program):
        try:
            compile_supervisor(program, cc, source=source)
        except BuildError as exc:
            return missing(str(exc))
    return Supervisor(str(program))


def cache_folder() -> Path:
    """Return the arena's cache folder: ``$XDG_CACHE_HOME/arena``, else ``~/.cache/arena``."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "arena"


def _unsafe(folder: Path) -> str:
    """Make ``folder`` if needed; return why a program in it may not be trusted ("" when it may): it must be a
    real folder of the effective user, writable by no one else."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.lstat()
    except OSError as exc:
        return f"no cache folder to build the supervisor in: {exc.strerror or exc}: {folder}"
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return f"cache folder {folder} is not a folder of this user's only: the supervisor is not built there"
    return ""


def _ours(program: Path) -> bool:
    """Whether ``program`` is a built supervisor that only this user could have written."""
    try:
        info = program.lstat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & 0o022


def find_supervisor(environ: Mapping[str, str] | None = None, packaged: Path | None = None,
                    platform: str = sys.platform, folder: Path | None = None) -> Supervisor:
    """Return the supervisor to run: the program ``ARENA_SUPERVISOR`` names in ``environ`` (default: this
    process's), else the package's own build (``packaged``, default :data:`PACKAGED`), else one built now into
    ``folder`` (:func:`cache_folder`, for an editable install); or why there is none. Never raises."""
    environ = os.environ if environ is None else environ
    packaged = PACKAGED if packaged is None else packaged
    named = environ.get(ENVIRONMENT, "")
    if named:
        if not os.path.isabs(named) or not os.path.isfile(named) or not os.access(named, os.X_OK):
            return missing(f"{ENVIRONMENT}={named!r} is not the absolute path of a program")
        return Supervisor(named, chosen_by=ENVIRONMENT)
    if not platform.startswith("linux"):
        return missing(f"the supervisor is for Linux, not {platform}")
    if packaged.is_file() and os.access(packaged, os.X_OK):
        return Supervisor(str(packaged))
    return build(folder)


_default: Supervisor | None = None
_lock = threading.Lock()


def default_supervisor() -> Supervisor:
    """Return this machine's supervisor (:func:`find_supervisor`), found once a process."""
    global _default
    with _lock:
        if _default is None:
            _default = find_supervisor()
        return _default


def is_supervisor_command(cmdline: bytes) -> bool:
    """Whether a process's command line (``/proc/PID/cmdline``) is a supervisor's: this version's, or an older
    arena's (which ran ``python supervisor.py`` or ``python sandbox.py``), whose bots are not stale either."""
    program = os.path.basename(cmdline.split(b"\0", 1)[0])
    if program == PROGRAM.encode() or program.startswith(f"{PROGRAM}-".encode()):
        return True
    return b"supervisor.py\0" in cmdline or b"sandbox.py\0" in cmdline
