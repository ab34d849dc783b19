"""A submission's build step, run in the bot jail: the host is never writable by it, and what it builds is
untrusted bytes that the host unpacks with limits.

A submission is a stranger's code from its build step on, so the build runs as a bot does
(:meth:`arena.launch.sandbox.Sandbox.command`: the supervisor, its limits, cgroups, bubblewrap, seccomp, a
host uid of its own), in a jail that shows the submission's folder read-only. Inside, :data:`_WRAPPER` (our
own, run by the arena's interpreter, which the jail shows) copies the submission into a folder of the jail's
scratch (a tmpfs of ``limits.disk_mb``, counted in the build's memory cgroup), runs the build's command there
with its output going to the build log (the wrapper's stderr), kills whatever the command left running, and
writes a status line and a gzip'd tar of the built folder to its real stdout, which no process of the build
ever holds. The host reads that stream (bounded), the log (bounded, its first and last parts kept) and, when the
build succeeded, unpacks the tar into the destination folder under strict rules (:func:`_unpack_result`).

The build never runs outside the jail: without bubblewrap :func:`run_build` refuses (:class:`BuildError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import io
import os
import shutil
import signal
import sys
import tarfile
import time
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.launch.jail import JAIL_PATH
from arena.launch.sandbox import JAIL_SCRATCH, Bind, Isolation, Limits, Sandbox, interpreter_folders
from arena.launch.supervisor_constants import CPU_EXIT_CODE, MIB
from arena.text import visible

MAX_OUTPUT = 64 * 1024
"""The most bytes of a build's log kept by default (its first and last parts)."""
MAX_RESULT = 64 * MIB
"""The largest built folder by default, as the gzip'd tar that leaves the jail."""
MAX_FILES = 20_000
"""The most files and folders a built folder may hold."""
MAX_NAME = 1024
"""The longest path (in bytes) of a file in a built folder; each of its parts is at most 255 bytes."""
STOP_WAIT = 3.0
"""Seconds the supervisor has to stop a build (SIGTERM, SIGKILL, its cgroup) before its group gets SIGKILL."""
_STATUS = b"ARENA-BUILD "
"""How the wrapper's status line on the result stream begins."""


class BuildError(RuntimeError):
    """A build that cannot be run here at all: no jail, or the host cannot start or unpack it."""


class _Refused(Exception):
    """A built folder the host does not take (the author's fault); its message is the result's reason."""


@dataclass(frozen=True, slots=True)
class BuildResult:
    """How a submission's build went.

    ``ok``: it exited 0 and its folder was unpacked into the destination; ``reason``: empty when ok, else one
    line for the author; ``output``: the build's log (stdout and stderr), bounded, with control characters
    escaped; ``seconds``: wall time from start to the end of unpacking.
    """

    ok: bool
    reason: str
    output: str
    seconds: float


# The wrapper runs in the jail under ``python -I -S`` (standard library only), as the jail's user:
#   argv: SOURCE WORK COMMAND...
# It writes to its real stdout one status line, "ARENA-BUILD ok full=0|1", "ARENA-BUILD exit N full=0|1",
# "ARENA-BUILD signal N full=0|1" or "ARENA-BUILD error TEXT", then (after "ok" only) the gzip'd tar of WORK.
_WRAPPER = r"""
import ctypes, os, signal, subprocess, sys, tarfile
source, work, command = sys.argv[1], sys.argv[2], sys.argv[3:]
# the result stream on a descriptor of its own that is not inherited; stdout becomes the log (stderr)
result = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
# not dumpable: no process of the build (same uid) can open /proc/<this>/fd/ and write into the result
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE

def status(text):
    result.write(b"ARENA-BUILD " + text.encode("utf-8", "replace") + b"\n")
    result.flush()

def full():
    st = os.statvfs(work)
    return int(st.f_bavail * st.f_frsize < max(256 * 1024, st.f_blocks * st.f_frsize // 100))

try:
    import shutil
    shutil.copytree(source, work, symlinks=True)
except OSError as exc:
    status("error cannot copy the submission into the build folder: " + (exc.strerror or str(exc)))
    sys.exit(1)
try:
    code = subprocess.run(command, cwd=work, stdin=subprocess.DEVNULL, stdout=2, stderr=2).returncode
except OSError as exc:
    status("error cannot start " + repr(command[0]) + ": " + (exc.strerror or str(exc)))
    sys.exit(1)
# what the build left running (a daemon, a compiler server) is killed: the folder is packed quiet
try:
    os.kill(-1, signal.SIGKILL)
except ProcessLookupError:
    pass  # nothing left
if code != 0:
    status(("exit %d" % code if code > 0 else "signal %d" % -code) + " full=%d" % full())
    sys.exit(1)
status("ok full=%d" % full())
with tarfile.open(fileobj=result, mode="w|gz", format=tarfile.PAX_FORMAT) as tar:
    for folder, folders, files in os.walk(work):
        folders.sort()
        for name in folders + sorted(files):
            path = os.path.join(folder, name)
            tar.inodes.clear()  # a hard link is packed as a file of its own, never as a link
            info = tar.gettarinfo(path, os.path.relpath(path, work))
            if info is None:
                sys.stderr.write("[arena build] left out %r: a socket\n" % os.path.relpath(path, work))
            elif info.isreg():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
result.close()
"""


async def run_build(source: Path, dest: Path, command: Sequence[str], *, sandbox: Sandbox, limits: Limits,
                    timeout: float, binds: Sequence[Bind] = (), env: Mapping[str, str] | None = None,
                    max_output: int = MAX_OUTPUT, max_result: int = MAX_RESULT) -> BuildResult:
    """Run ``command`` on a copy of the folder ``source`` in the bot jail; unpack what it built into ``dest``.

    The build runs in a folder of the jail's scratch that starts as a copy of ``source`` (which it sees
    read-only), with ``limits`` (CPU time, memory, processes, its scratch of ``disk_mb``), no network, for at most
    ``timeout`` seconds of wall time, its standard input ``/dev/null``. It sees the system's runtime, the
    arena's interpreter and ``binds`` (read-only; a toolchain), and has a clean environment: ``PATH`` of the
    system's folders, ``HOME`` and ``TMPDIR`` at its scratch, ``LANG``, then ``env``. Its output (stdout and
    stderr) is kept up to ``max_output`` bytes (the first and last parts); the gzip'd tar of its folder may be
    ``max_result`` bytes at most.

    Returns a :class:`BuildResult`: ok when the command exited 0 and its folder was unpacked into ``dest``
    (the submission's files and what the build made: regular files and folders only, modes 0644 and 0755);
    otherwise ``dest`` does not exist and the reason says why. Raises :class:`ValueError` for an empty
    ``command``, a ``source`` that is not a folder, a ``dest`` that exists or whose parent does not, or limits
    that are not positive; :class:`BuildError` without the jail (a stranger's build never runs unjailed), when
    the build cannot be started, or when the host cannot write ``dest``.
    """
    if sandbox.isolation is not Isolation.JAIL:
        raise BuildError(f"building a submission needs the bot jail (bubblewrap): this machine gives "
                         f"{sandbox.level} ({sandbox.reason or 'no jail'}); install bubblewrap and check it "
                         "with `arena check`")
    if not command:
        raise ValueError("the build command is empty: give the program to run and its arguments")
    if not (timeout > 0 and max_output > 0 and max_result > 0):
        raise ValueError(f"timeout ({timeout!r}), max_output ({max_output!r}) and max_result ({max_result!r}) "
                         "must be positive")
    source = Path(os.path.realpath(source))
    dest = Path(os.path.abspath(dest))
    if not source.is_dir():
        raise ValueError(f"the submission's folder {str(source)!r} is not a folder: give the unpacked submission")
    if dest.exists() or dest.is_symlink():
        raise ValueError(f"the build's destination {str(dest)!r} exists: give a new folder")
    if not dest.parent.is_dir():
        raise ValueError(f"the parent of the build's destination {str(dest)!r} is not a folder: make it first")
    started = time.monotonic()
    work = _work_folder([str(source), *(b.path for b in binds)])
    jail_env = {"PATH": ":".join(JAIL_PATH), "HOME": JAIL_SCRATCH, "TMPDIR": JAIL_SCRATCH, "LANG": "C.UTF-8",
                **(env or {})}
    shown = [Bind(p) for p in interpreter_folders()] + [*binds, Bind(str(source))]
    argv = [sys.executable, "-I", "-S", "-c", _WRAPPER, str(source), work, *command]
    full_command = sandbox.command(argv, limits, cwd=JAIL_SCRATCH, binds=shown, env=jail_env)
    try:
        proc = await asyncio.create_subprocess_exec(
            *full_command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True, cwd="/",
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    except OSError as exc:
        raise BuildError(f"cannot start the build of {str(source)!r}: {exc}") from None
    log = _Log(max_output)
    result = bytearray()
    timed_out = over = False

    async def read_result() -> None:
        nonlocal over
        assert proc.stdout is not None
        limit = 4096  # until the status line has come; then the line and max_result bytes of tar
        while chunk := await proc.stdout.read(1 << 16):
            if over:
                continue  # read on, dropped, until the pipe closes
            result.extend(chunk)
            line_end = result.find(b"\n")
            if line_end >= 0:
                limit = line_end + 1 + max_result
            if len(result) > limit:
                over = True
                del result[:]
                _close_control(proc)  # the supervisor stops the build

    async def read_log() -> None:
        assert proc.stderr is not None
        while chunk := await proc.stderr.read(1 << 16):
            log.add(chunk)

    # the readers are tasks of their own, never cancelled by the timeout: once the build is stopped they read
    # what is left in the pipes (its last words, the supervisor's) up to their end
    readers = [asyncio.create_task(read_result()), asyncio.create_task(read_log())]
    try:
        async with asyncio.timeout(timeout):
            await proc.wait()
            await asyncio.wait(readers)  # the pipes close once nothing of the build is left
    except TimeoutError:
        timed_out = True
    finally:
        await _stop(proc)
        _, pending = await asyncio.wait(readers, timeout=STOP_WAIT)
        for task in pending:
            task.cancel()
    code = proc.returncode
    output = log.text()
    header, _, data = bytes(result).partition(b"\n")
    if timed_out:
        reason = f"the build ran past its {timeout:g} s"
    elif over:
        reason = f"the built folder is over {_size(max_result)} (packed)"
    elif code == CPU_EXIT_CODE:
        reason = f"the build used more than its {limits.cpu_seconds} s of CPU time"
    elif not header.startswith(_STATUS):
        reason = _killed(code, limits) if code is not None and code > 128 else \
            f"the build's jail failed with status {code} (see the log)"
    else:
        reason = _reason(header.removeprefix(_STATUS).decode("utf-8", "replace"), code, limits)
    if not reason:
        try:
            _unpack_result(data, dest, max_bytes=limits.disk_mb * MIB, max_files=MAX_FILES)
        except _Refused as exc:
            reason = str(exc)
        except OSError as exc:
            raise BuildError(f"cannot unpack the build of {str(source)!r} into {str(dest)!r}: {exc}") from None
    return BuildResult(ok=not reason, reason=reason, output=output, seconds=time.monotonic() - started)


def _work_folder(shown: Sequence[str]) -> str:
    """Return the folder of the jail's scratch the build runs in: ``JAIL_SCRATCH/build``, or a name of its own
    when a folder the jail shows lies there (a submission kept below /tmp)."""
    def overlaps(a: str, b: str) -> bool:
        return a == b or a.startswith(b.rstrip("/") + "/") or b.startswith(a.rstrip("/") + "/")

    work = os.path.join(JAIL_SCRATCH, "build")
    while any(overlaps(work, path) for path in shown):
        work = os.path.join(JAIL_SCRATCH, f"build-{uuid.uuid4().hex[:12]}")
    return work


def _reason(status: str, code: int | None, limits: Limits) -> str:
    """Return the reason of a build from the wrapper's status line and the jail's exit ``code`` ("" when it
    built)."""
    word, _, rest = status.partition(" ")
    full = " (its scratch of " + f"{_size(limits.disk_mb * MIB)} was full)" if "full=1" in rest.split() else ""
    number = rest.split()[0] if rest.split() else ""
    if word == "ok":
        return "" if code == 0 else f"the built folder could not be packed (status {code}; see the log){full}"
    if word == "exit" and number.isdigit():
        if int(number) > 128:  # a shell reports a child killed by signal N as 128 + N
            return _killed(int(number), limits) + full
        return f"the build exited with status {number}{full}"
    if word == "signal" and number.isdigit():
        return _killed(128 + int(number), limits) + full
    if word == "error":
        return f"the build did not run: {visible(rest)}"
    return f"the build's jail failed with status {code} (see the log)"


def _killed(code: int, limits: Limits) -> str:
    """Return the reason of a build killed by signal ``code - 128``."""
    signum = code - 128
    try:
        name = signal.Signals(signum).name
    except ValueError:
        return f"the build exited with status {code}"
    hint = {signal.SIGKILL: " (out of memory?)", signal.SIGXFSZ: f" (a file over {_size(limits.disk_mb * MIB)})",
            signal.SIGXCPU: " (out of CPU time)"}.get(signal.Signals(signum), "")
    return f"the build was killed by {name}{hint}"


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n} bytes"


def _close_control(proc: asyncio.subprocess.Process) -> None:
    """Close the supervisor's input: it stops the build (SIGTERM, SIGKILL, every process of its cgroup)."""
    if proc.stdin is not None and not proc.stdin.is_closing():
        proc.stdin.close()


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """Make sure nothing of the build runs: the supervisor stops it, and its process group gets SIGKILL if it
    has not within :data:`STOP_WAIT` seconds, and again at the end for anything left in the group."""
    _close_control(proc)
    try:
        await asyncio.wait_for(proc.wait(), STOP_WAIT)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class _Log:
    """The build's log: its first ``limit // 2`` bytes and its last ones, ``limit`` in all, and how many were
    left out between them."""

    def __init__(self, limit: int) -> None:
        self.head_room = limit // 2
        self.tail_room = limit - self.head_room
        self.head = bytearray()
        self.tail = bytearray()
        self.cut = 0

    def add(self, data: bytes) -> None:
        room = self.head_room - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        self.tail += data
        if len(self.tail) > self.tail_room:
            drop = len(self.tail) - self.tail_room
            del self.tail[:drop]
            self.cut += drop

    def text(self) -> str:
        """Return the log as text: decoded (bad bytes replaced), control characters escaped but for line ends,
        with a line marking what was cut."""
        def clean(data: bytes) -> str:
            text = data.decode("utf-8", "replace").replace("\r\n", "\n").expandtabs(8)
            return visible(text, newline="\n")

        if not self.cut:
            return clean(bytes(self.head + self.tail))
        return f"{clean(bytes(self.head))}\n[... {self.cut} bytes cut ...]\n{clean(bytes(self.tail))}"


class _Bounded(io.RawIOBase):
    """A gzip stream, decompressed, that refuses to give more than ``limit`` bytes: a small archive of zeros
    cannot grow into gigabytes on the host (tarfile would hold a huge pax header in memory)."""

    def __init__(self, data: bytes, limit: int, what: str) -> None:
        self.inner = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        self.limit = limit
        self.given = 0
        self.what = what

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            part = self.inner.read(len(buffer))  # decompresses at most this much
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError: the author's, not ours
            raise _Refused(f"the built folder is not a valid gzip'd tar ({exc})") from None
        self.given += len(part)
        if self.given > self.limit:
            raise _Refused(f"the built folder is over {self.what} unpacked")
        buffer[:len(part)] = part
        return len(part)


def _unpack_result(data: bytes, dest: Path, *, max_bytes: int, max_files: int = MAX_FILES) -> None:
    """Unpack the gzip'd tar ``data`` (untrusted) into the new folder ``dest``.

    Only regular files and folders are taken, at relative paths without ``..`` (each part at most 255 bytes, the
    path :data:`MAX_NAME`), at most ``max_files`` of them holding ``max_bytes`` in all; files get mode 0755 when
    their owner could execute them, else 0644; folders 0755. Raises :class:`_Refused` (its message a reason for
    the author) for anything else, :class:`OSError` when the host cannot write; either way ``dest`` is removed.
    """
    os.mkdir(dest, 0o755)
    try:
        _unpack_into(data, dest, max_bytes=max_bytes, max_files=max_files)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _unpack_into(data: bytes, dest: Path, *, max_bytes: int, max_files: int) -> None:
    limit = _size(max_bytes)
    stream = io.BufferedReader(_Bounded(data, max_bytes + max_files * 4096 + MIB, limit))
    data_filter = getattr(tarfile, "data_filter", None)
    total = count = 0
    name = ""
    try:
        with tarfile.open(fileobj=stream, mode="r|") as tar:
            for member in tar:
                count += 1
                if count > max_files:
                    raise _Refused(f"the built folder holds over {max_files} files and folders")
                name = _checked_name(member)
                if not member.isdir() and (not member.isfile() or member.issparse()):
                    kind = "a link" if member.issym() or member.islnk() else "a special file"
                    to = f" to {visible(member.linkname)!r}" if member.linkname else ""
                    raise _Refused(f"the built folder holds {kind} {visible(name)!r}{to}: only files and folders "
                                   "are kept; copy the file instead")
                if data_filter is not None:  # the standard library's rules too, should ours miss a case
                    try:
                        data_filter(member, str(dest))
                    except tarfile.FilterError as exc:
                        raise _Refused(f"the built folder holds {visible(name)!r}, which is refused: "
                                       f"{visible(str(exc))}") from None
                target = os.path.join(dest, name)
                if member.isdir():
                    _make_folder(target, name)
                    continue
                total += member.size
                if total > max_bytes:
                    raise _Refused(f"the built folder is over {limit} unpacked")
                _make_folder(os.path.dirname(target), name)
                mode = 0o755 if member.mode & 0o100 else 0o644
                try:
                    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
                except FileExistsError:
                    raise _Refused(f"the built folder holds {visible(name)!r} twice") from None
                with os.fdopen(fd, "wb") as out:
                    source = tar.extractfile(member)
                    assert source is not None
                    shutil.copyfileobj(source, out, 1 << 16)
                os.chmod(target, mode)  # the umask may have taken bits away
    except tarfile.TarError as exc:
        raise _Refused(f"the built folder is not a valid tar ({exc})") from None
    except (NotADirectoryError, IsADirectoryError):  # a file where a folder was (or the reverse)
        raise _Refused(f"the built folder holds {visible(name)!r} both as a file and as a folder") from None


def _make_folder(folder: str, name: str) -> None:
    """Make ``folder`` (and its parents) with mode 0755, for member ``name``; raise :class:`_Refused` when a
    file of the archive is in the way."""
    try:
        os.makedirs(folder, 0o755, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _Refused(f"the built folder holds {visible(name)!r} both as a file and as a folder") from None
    os.chmod(folder, 0o755)  # the umask may have taken bits away


def _checked_name(member: tarfile.TarInfo) -> str:
    """Return ``member``'s path, normalized; raise :class:`_Refused` for an absolute one, one with ``..``, a
    part over 255 bytes or a path over :data:`MAX_NAME` bytes."""
    raw = member.name
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if raw.startswith("/") or not parts or ".." in parts or "\0" in raw:
        raise _Refused(f"the built folder holds the path {visible(raw)!r}: only relative paths inside it are kept")
    name = "/".join(parts)
    if len(name.encode("utf-8", "surrogateescape")) > MAX_NAME or any(len(p.encode("utf-8", "surrogateescape"))
                                                                        > 255 for p in parts):
        raise _Refused(f"the built folder holds a path over {MAX_NAME} bytes or with a part over 255: "
                       f"{visible(name[:80])!r}...")
    return name
