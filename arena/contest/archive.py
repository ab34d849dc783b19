"""A submission's bot folder as a gzip'd tar archive: :func:`pack` on the author's machine, :func:`unpack` in the
contest service.

The archive comes from a stranger, so :func:`unpack` trusts nothing in it: it holds only regular files and folders
under relative names that stay inside the destination, each name once, within :class:`ArchiveLimits`; the gzip
stream is decompressed through a counter that stops at the limits, whatever the tar headers claim; files are written
by this module (never by ``tarfile.extract``) with modes 0o644 or 0o755 and the service's own ownership. On any
error nothing half-unpacked is left behind.

:func:`pack` applies the same rules to the author's folder before upload, so an author learns of a symlink or an
oversized file at home rather than from a refused submission, and makes the same bytes from the same content, so
that :func:`content_hash` identifies a submission's content.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import posixpath
import shutil
import stat
import tarfile
import unicodedata
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer, WriteableBuffer

MiB = 1024 * 1024

SKIPPED_FOLDERS = frozenset({"__pycache__", ".git"})
"""Folders :func:`pack` leaves out: Python's byte-code caches (rebuilt on the contest's side and different on every
machine, which would break :func:`pack`'s same content, same bytes) and git's history (not the bot, and often
bigger than it)."""

NAME_BYTES = 1024
"""The longest member name (in UTF-8 bytes) either side accepts: far beyond a bot folder's needs, and it bounds the
tar overhead per member that the decompression budget allows for."""

COMPONENT_BYTES = 255
"""The longest part of a name between slashes: Linux file systems' own limit (NAME_MAX)."""

_MEMBER_OVERHEAD = 4096
"""Tar bytes per member besides its content that the decompression budget allows: a 512-byte header, up to 511
bytes of padding, and a PAX or GNU long-name header for a name of up to :data:`NAME_BYTES` bytes."""

_TAIL_OVERHEAD = 64 * 1024
"""Tar bytes after the last member that the budget allows: the end-of-archive blocks and the padding of the last
record (10 KiB with tar's defaults), with room to spare."""

_CHUNK = 64 * 1024


class ArchiveError(ValueError):
    """An archive, a folder or a limit that breaks a rule; the message names it and says what would be accepted."""


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """The most an archive may hold: ``archive_bytes`` compressed, ``files`` entries (regular files and folders),
    ``unpacked_bytes`` of file content in all, and ``file_bytes`` in one file."""

    archive_bytes: int = 8 * MiB
    files: int = 2000
    unpacked_bytes: int = 64 * MiB
    file_bytes: int = 32 * MiB

    def __post_init__(self) -> None:
        """Check every limit is a positive int. Raises :class:`ArchiveError` naming the first that is not."""
        for field in fields(self):
            value = getattr(self, field.name)
            # bool is an int subclass, but True as a limit is a mistake, not a 1
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ArchiveError(f"archive limit {field.name!r} must be a positive whole number, not {value!r}")

    def decompressed_bytes(self) -> int:
        """Return the most decompressed bytes an archive within these limits can need: the content plus the tar
        overhead of ``files`` members and the archive's end."""
        return self.unpacked_bytes + (self.files + 1) * _MEMBER_OVERHEAD + _TAIL_OVERHEAD


DEFAULT_LIMITS = ArchiveLimits()
"""The contest's limits unless it sets its own: frozen, so one instance serves every caller."""


@dataclass(frozen=True, slots=True)
class Unpacked:
    """What :func:`unpack` wrote: the number of regular ``files`` and their total size in ``bytes``."""

    files: int
    bytes: int


def _size(count: int) -> str:
    """Return ``count`` bytes for a message: in MiB or KiB when it is a whole number of them."""
    for unit, name in ((MiB, "MiB"), (1024, "KiB")):
        if count >= unit and count % unit == 0:
            return f"{count // unit} {name}"
    return f"{count} bytes"


def _name_parts(name: str, what: str) -> tuple[str, ...]:
    """Return the parts of the slash-separated relative ``name`` without ``.`` parts (``./bot.py`` is ``bot.py``;
    ``.`` alone is the empty tuple, the top folder itself). ``what`` says where the name comes from in messages.

    Raises :class:`ArchiveError` for an empty name, one with a NUL or a backslash, one that is not UTF-8, an absolute
    name, one with an empty or a ``..`` part, or one longer than :data:`NAME_BYTES` or with a part longer than
    :data:`COMPONENT_BYTES`.
    """
    if not name:
        raise ArchiveError(f"{what} has an empty name: every entry needs a relative name like 'bot.py'")
    if "\x00" in name:
        raise ArchiveError(f"{what} {name!r} has a NUL character in its name")
    hidden = next((c for c in name if unicodedata.category(c) in ("Cc", "Cf")), None)
    if hidden is not None:
        # a control character (a newline, an escape) or an invisible format one (a right-to-left override) in a
        # name makes a log, a terminal or a page show another name than the file's: rename the file
        raise ArchiveError(f"{what} {name!r} has a control character in its name (U+{ord(hidden):04X}): rename it "
                           "with visible characters")
    if "\\" in name:
        # a backslash is a separator on Windows: refuse it rather than guess what the author meant
        raise ArchiveError(f"{what} {name!r} has a backslash in its name: use '/' between folders, and rename files "
                           "with a backslash")
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        raise ArchiveError(f"{what} {name!r} has a name that is not valid UTF-8: rename it") from None
    if name.startswith("/"):
        raise ArchiveError(f"{what} {name!r} has an absolute name: names must be relative to the bot's folder")
    if len(encoded) > NAME_BYTES:
        raise ArchiveError(f"{what} {name!r} has a name longer than {NAME_BYTES} bytes")
    parts = name.split("/")
    if ".." in parts:
        if posixpath.normpath(name).split("/")[0] == "..":
            raise ArchiveError(f"{what} {name!r} leaves its folder: names must not have '..' parts")
        raise ArchiveError(f"{what} {name!r} has a '..' part: write the name without it")
    if "" in parts:
        # tarfile strips a folder's trailing slash, so an empty part is 'a//b' or a file named 'a/'
        raise ArchiveError(f"{what} {name!r} has an empty part between slashes: write names like 'lib/util.py'")
    for part in parts:
        if len(part.encode("utf-8")) > COMPONENT_BYTES:
            raise ArchiveError(f"{what} {name!r} has a part longer than {COMPONENT_BYTES} bytes: {part!r}")
    kept = tuple(part for part in parts if part != ".")
    # the rules above already keep the name inside; this is the last word, whatever they missed
    joined = posixpath.normpath("/".join(kept)) if kept else "."
    if joined.startswith(("/", "../")) or joined == "..":
        raise ArchiveError(f"{what} {name!r} leaves its folder")
    return kept


# -- pack ----------------------------------------------------------------------------------------------------------


class _CappedBuffer(io.BytesIO):
    """An in-memory file that refuses to grow past ``cap`` bytes: the compressed archive, checked as it is made."""

    def __init__(self, cap: int, folder: Path) -> None:
        super().__init__()
        self._cap = cap
        self._folder = folder

    def write(self, buffer: ReadableBuffer, /) -> int:
        """Append ``buffer`` and return its length. Raises :class:`ArchiveError` once the archive is too big."""
        written = super().write(buffer)
        if self.tell() > self._cap:
            raise ArchiveError(f"the archive of {str(self._folder)!r} is bigger than {_size(self._cap)} compressed "
                               "(limit archive_bytes): leave out large files the bot does not need")
        return written


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def _kind(mode: int) -> str:
    """Return what a file of stat mode ``mode`` that is neither a regular file nor a folder is, for a message."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return f"a special file (mode {mode:o})"


def _walk(folder: Path, prefix: str) -> Iterator[tuple[str, Path, os.stat_result]]:
    """Yield ``(name, path, lstat)`` for the regular files and folders under ``folder``, in sorted order, a folder
    before its content, names relative to the top folder (``prefix`` is the name of ``folder``, ``""`` at the top),
    leaving out :data:`SKIPPED_FOLDERS`. Raises :class:`ArchiveError` for anything else (symlinks, devices, FIFOs,
    sockets)."""
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        name = f"{prefix}{entry.name}"
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            if entry.name in SKIPPED_FOLDERS:
                continue
            yield name, Path(entry.path), info
            yield from _walk(Path(entry.path), f"{name}/")
        elif stat.S_ISREG(info.st_mode):
            yield name, Path(entry.path), info
        else:
            # a symlink could point anywhere on the author's machine and means nothing in the contest's jail
            raise ArchiveError(f"{name!r} in {str(folder)!r} is {_kind(info.st_mode)}: an archive holds only regular "
                               "files and folders; remove it, or copy what a link points to in its place")


def _tarinfo(name: str, size: int, mode: int, kind: bytes) -> tarfile.TarInfo:
    """Return a header with nothing of the author's machine in it: no time, no owner, one of two modes."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.mode = mode
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def pack(folder: Path, limits: ArchiveLimits = DEFAULT_LIMITS) -> bytes:
    """Return a gzip'd tar of ``folder``'s regular files and folders, ready to upload.

    Names are relative to ``folder`` (``bot.py``, ``lib/util.py``; no ``./``), in sorted order; every header has
    time 0, owner 0 with empty owner names, and mode 0o755 for folders and for files with any execute bit, 0o644 for
    other files; the gzip header has time 0 and no file name. So the same content gives the same bytes.
    ``__pycache__`` and ``.git`` folders are left out (:data:`SKIPPED_FOLDERS`).

    Raises :class:`ArchiveError` when ``folder`` is not a folder, holds no files, holds a symlink, a device, a FIFO
    or a socket, a name :func:`unpack` would refuse, or more than ``limits`` allow (entries, one file's size, the
    total, the compressed size), so that the author learns it before uploading.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ArchiveError(f"cannot pack {str(folder)!r}: it is not a folder")
    entries: list[tuple[str, Path, os.stat_result]] = []
    total = 0
    for name, path, info in _walk(folder, ""):
        _name_parts(name, "file")
        entries.append((name, path, info))
        if len(entries) > limits.files:
            raise ArchiveError(f"{str(folder)!r} holds more than {limits.files} files and folders (limit files): "
                               "leave out what the bot does not need")
        if stat.S_ISREG(info.st_mode):
            _check_file_size(name, info.st_size, total, limits)
            total += info.st_size
    if not any(stat.S_ISREG(info.st_mode) for _, _, info in entries):
        raise ArchiveError(f"{str(folder)!r} holds no files: nothing to pack")
    out = _CappedBuffer(limits.archive_bytes, folder)
    total = 0
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, compresslevel=9, mtime=0) as compressed, \
            tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        for name, path, info in entries:
            if stat.S_ISDIR(info.st_mode):
                tar.addfile(_tarinfo(name, 0, 0o755, tarfile.DIRTYPE))
                continue
            # O_NOFOLLOW: a file swapped for a symlink since the walk is refused, not followed
            handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with open(handle, "rb") as source:
                now = os.fstat(source.fileno())
                if not stat.S_ISREG(now.st_mode):
                    raise ArchiveError(f"{name!r} in {str(folder)!r} changed into {_kind(now.st_mode)} while packing")
                # the size now, not at the walk, is what goes into the header and is checked
                _check_file_size(name, now.st_size, total, limits)
                total += now.st_size
                mode = 0o755 if now.st_mode & 0o111 else 0o644
                try:
                    tar.addfile(_tarinfo(name, now.st_size, mode, tarfile.REGTYPE), source)
                except OSError as exc:
                    # tarfile copies exactly the header's size and fails if the file shrank meanwhile
                    raise ArchiveError(f"{name!r} in {str(folder)!r} changed while packing ({exc}): "
                                       "pack it again") from None
    return out.getvalue()


def _check_file_size(name: str, size: int, total: int, limits: ArchiveLimits) -> None:
    """Check one file of ``size`` bytes after ``total`` bytes of others. Raises :class:`ArchiveError` when it is
    bigger than ``limits.file_bytes`` or brings the total past ``limits.unpacked_bytes``."""
    if size > limits.file_bytes:
        raise ArchiveError(f"file {name!r} has {size} bytes, more than {_size(limits.file_bytes)} (limit file_bytes): "
                           "leave it out or make it smaller")
    if total + size > limits.unpacked_bytes:
        raise ArchiveError(f"file {name!r} brings the files' total past {_size(limits.unpacked_bytes)} (limit "
                           "unpacked_bytes): leave out what the bot does not need")


def content_hash(data: bytes) -> str:
    """Return the SHA-256 of the archive bytes ``data``, in hex: with :func:`pack`'s same content, same bytes, it
    identifies a submission's content."""
    return hashlib.sha256(data).hexdigest()


# -- unpack --------------------------------------------------------------------------------------------------------


class _Readable(Protocol):
    """A binary stream to read from (a ``GzipFile``, a tar member)."""

    def read(self, size: int, /) -> bytes:
        """Return up to ``size`` bytes, b"" at the end."""
        ...


class _CappedReader(io.RawIOBase):
    """A read-only stream over ``source`` that raises :class:`ArchiveError` once more than ``cap`` bytes came
    through: the bound on decompression, since a gzip bomb's tar headers may say anything."""

    def __init__(self, source: _Readable, cap: int) -> None:
        super().__init__()
        self._source = source
        self._cap = cap
        self.count = 0

    def readable(self) -> bool:
        """Return True: this stream is for reading."""
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        """Read up to ``len(buffer)`` bytes into ``buffer`` and return how many (0 at the end). Raises
        :class:`ArchiveError` once the stream passes the cap."""
        view = memoryview(buffer).cast("B")
        # asking for at most one more byte than the cap allows keeps memory bounded even for a huge buffer
        chunk = self._source.read(min(len(view), self._cap - self.count + 1))
        self.count += len(chunk)
        if self.count > self._cap:
            raise ArchiveError(f"the archive decompresses to more than {_size(self._cap)}, more than its limits allow "
                               "(unpacked_bytes of content plus tar headers): it is not a bot folder")
        view[:len(chunk)] = chunk
        return len(chunk)


_MEMBER_KINDS = {tarfile.SYMTYPE: "a symbolic link", tarfile.LNKTYPE: "a hard link",
                 tarfile.CHRTYPE: "a character device", tarfile.BLKTYPE: "a block device", tarfile.FIFOTYPE: "a FIFO",
                 tarfile.CONTTYPE: "a contiguous file", tarfile.GNUTYPE_SPARSE: "a sparse file"}


class _Writer:
    """Writes under one open folder by file descriptors (``dir_fd``, ``O_NOFOLLOW``), so no symlink, whoever made
    it, can send a write outside."""

    def __init__(self, root: Path) -> None:
        self._root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def close(self) -> None:
        """Close the top folder's descriptor."""
        os.close(self._root)

    def _folder(self, parts: tuple[str, ...]) -> int:
        """Return a new descriptor of the folder ``parts`` under the top, made (mode 0o755) where missing."""
        current = os.dup(self._root)
        try:
            for part in parts:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=current)
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=current)
                os.close(current)
                current = inner
                # mkdir's mode passes through the umask; the jail's bot user needs 0o755 whatever it is
                os.fchmod(current, 0o755)
        except BaseException:
            os.close(current)
            raise
        return current

    def folder(self, parts: tuple[str, ...]) -> None:
        """Make the folder ``parts`` and the folders above it, each mode 0o755."""
        os.close(self._folder(parts))

    def file(self, parts: tuple[str, ...], mode: int, source: _Readable, size: int) -> None:
        """Write ``size`` bytes of ``source`` to a new file ``parts`` of mode ``mode``. Raises
        :class:`ArchiveError` when ``source`` ends early, :class:`OSError` when the file exists or cannot be
        written."""
        parent = self._folder(parts[:-1])
        try:
            handle = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=parent)
        finally:
            os.close(parent)
        with open(handle, "wb") as target:
            left = size
            while left > 0:
                chunk = source.read(min(left, _CHUNK))
                if not chunk:
                    raise ArchiveError(f"archive entry {'/'.join(parts)!r} ends before its {size} bytes")
                target.write(chunk)
                left -= len(chunk)
            os.fchmod(target.fileno(), mode)


def unpack(data: bytes, dest: Path, limits: ArchiveLimits) -> Unpacked:
    """Unpack the gzip'd tar ``data`` into the new folder ``dest`` and return how many files and bytes it wrote.

    ``dest`` must not exist (it is made, with its parents) or be an empty folder. Only gzip'd tars are accepted,
    not plain ones. Files get mode 0o755 when any execute bit is set in the archive, else 0o644; folders 0o755;
    the owner is whoever runs this.

    Raises :class:`ArchiveError`, after removing everything it wrote (``dest`` itself when it made it), when
    ``data`` is longer than ``limits.archive_bytes``, is not a gzip'd tar or is damaged, decompresses to more than
    the limits allow, holds no files, more than ``limits.files`` entries, a file bigger than ``limits.file_bytes``
    or more than ``limits.unpacked_bytes`` in all, an entry that is not a regular file or a folder (links, devices,
    FIFOs, ...), a name that is empty, absolute, has a ``..`` part, a NUL or a backslash, or would land outside
    ``dest``, a name twice, or a name under a file's name (or a file's name with entries under it). Raises
    :class:`OSError` when ``dest`` cannot be written.
    """
    dest = Path(dest)
    if len(data) > limits.archive_bytes:
        raise ArchiveError(f"the archive has {len(data)} bytes, more than {_size(limits.archive_bytes)} (limit "
                           "archive_bytes): leave out large files the bot does not need")
    if not data.startswith(b"\x1f\x8b"):
        plain = len(data) >= 262 and data[257:262] == b"ustar"
        hint = "it looks like a plain tar: compress it with gzip (tar -czf)" if plain else \
            "make one with arena.contest.archive.pack or tar -czf"
        raise ArchiveError(f"the archive is not a gzip'd tar (it starts with {data[:4]!r}, not gzip's 1f 8b): {hint}")
    made = _make_dest(dest)
    try:
        return _extract(data, dest, limits)
    except BaseException:
        # nothing half-unpacked may be left for a later step to mistake for a submission
        if made:
            shutil.rmtree(dest)
        else:
            for child in dest.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        raise


def _make_dest(dest: Path) -> bool:
    """Make the folder ``dest`` (and its parents) and return True, or return False when it is an empty folder
    already. Raises :class:`ArchiveError` when it is anything else."""
    try:
        info = dest.lstat()
    except FileNotFoundError:
        dest.mkdir(parents=True, mode=0o755)
        return True
    if not stat.S_ISDIR(info.st_mode):
        raise ArchiveError(f"cannot unpack into {str(dest)!r}: it exists and is not a folder")
    if any(dest.iterdir()):
        raise ArchiveError(f"cannot unpack into {str(dest)!r}: it is not empty; unpack into a new folder")
    return False


def _extract(data: bytes, dest: Path, limits: ArchiveLimits) -> Unpacked:
    """Write the members of the gzip'd tar ``data`` under the existing, empty ``dest`` and return the count and
    total size of its files. Raises :class:`ArchiveError` for any broken rule (see :func:`unpack`)."""
    files: set[str] = set()
    folders: set[str] = set()  # named in the archive
    above: set[str] = set()  # above some entry (made for it, named or not)
    members = 0
    total = 0
    writer = _Writer(dest)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb") as compressed:
            stream = _CappedReader(compressed, limits.decompressed_bytes())
            # stream mode ("r|"): tarfile reads forwards only, never seeks, so every byte passes the counter
            with tarfile.open(fileobj=stream, mode="r|", encoding="utf-8") as tar:
                for member in tar:
                    parts = _name_parts(member.name, "archive entry")
                    if not parts:
                        if member.isdir():
                            continue  # '.', the top folder itself, as tar -C folder . writes it
                        raise ArchiveError(f"archive entry {member.name!r} is a file with no name")
                    name = "/".join(parts)
                    members += 1
                    if members > limits.files:
                        raise ArchiveError(f"the archive holds more than {limits.files} files and folders (limit "
                                           f"files), the first past it {name!r}")
                    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE):
                        kind = _MEMBER_KINDS.get(member.type, f"of tar type {member.type!r}")
                        raise ArchiveError(f"archive entry {name!r} is {kind}: an archive may hold only regular "
                                           "files and folders")
                    _check_place(name, parts, files, folders)
                    _check_filter(member, dest)
                    for depth in range(1, len(parts)):
                        above.add("/".join(parts[:depth]))
                    if member.isdir():
                        folders.add(name)
                        above.add(name)
                        writer.folder(parts)
                        continue
                    if name in above:
                        raise ArchiveError(f"archive entry {name!r} is a file, but earlier entries are under it as "
                                           "a folder")
                    _check_file_size(name, member.size, total, limits)
                    source = tar.extractfile(member)
                    assert source is not None, "a regular member always has content"
                    writer.file(parts, 0o755 if member.mode & 0o111 else 0o644, source, member.size)
                    files.add(name)
                    total += member.size
            # read to the end of the gzip stream, through the counter: that checks its CRC and length, and data
            # hidden after the tar's end counts against the budget
            while stream.read(_CHUNK):
                pass
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveError(f"the archive is not a valid gzip'd tar ({exc or type(exc).__name__}): make it again "
                           "with arena.contest.archive.pack or tar -czf") from None
    finally:
        writer.close()
    if not files:
        raise ArchiveError("the archive holds no files: a submission needs at least the bot's program")
    return Unpacked(files=len(files), bytes=total)


def _check_place(name: str, parts: tuple[str, ...], files: set[str], folders: set[str]) -> None:
    """Check ``name`` is new and not under a file among the entries so far. Raises :class:`ArchiveError`."""
    if name in files or name in folders:
        raise ArchiveError(f"archive entry {name!r} appears twice: each name may appear once")
    for depth in range(1, len(parts)):
        prefix = "/".join(parts[:depth])
        if prefix in files:
            raise ArchiveError(f"archive entry {name!r} is under {prefix!r}, which is a file")


def _check_filter(member: tarfile.TarInfo, dest: Path) -> None:
    """Run tarfile's own ``data`` filter (Python 3.11.4 and later) on ``member`` as a second opinion on this
    module's rules. Raises :class:`ArchiveError` when it refuses the member."""
    data_filter = getattr(tarfile, "data_filter", None)
    if data_filter is None:
        return
    try:
        data_filter(member, str(dest))
    except tarfile.TarError as exc:
        raise ArchiveError(f"archive entry {member.name!r} is refused by tarfile's data filter: {exc}") from None
