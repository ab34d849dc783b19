"""The submission archive: pack makes the same bytes from the same folder and refuses what unpack would; unpack
accepts a bot folder and refuses every hostile archive, leaving nothing behind."""

from __future__ import annotations

import gzip
import io
import os
import stat
import tarfile
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.contest.archive import (
    DEFAULT_LIMITS,
    ArchiveError,
    ArchiveLimits,
    MiB,
    Unpacked,
    content_hash,
    pack,
    unpack,
)

Member = tuple[tarfile.TarInfo, bytes | None]


def entry(name: str, content: bytes | None = b"x", kind: bytes = tarfile.REGTYPE, mode: int = 0o644,
          linkname: str = "", pax: dict[str, str] | None = None) -> Member:
    """Return a tar member ``name``: a regular file of ``content`` unless ``kind`` says otherwise."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.linkname = linkname
    info.size = len(content) if content is not None and kind == tarfile.REGTYPE else 0
    if pax:
        info.pax_headers = pax
    return info, content if kind == tarfile.REGTYPE else None


def folder_entry(name: str) -> Member:
    """Return a folder member ``name``."""
    return entry(name, None, tarfile.DIRTYPE, 0o755)


def targz(*members: Member, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """Return a gzip'd tar of ``members``, written as given: no name is cleaned up on the way."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=fmt) as tar:
        for info, content in members:
            tar.addfile(info, io.BytesIO(content) if content is not None else None)
    return gzip.compress(raw.getvalue(), mtime=0)


def make_folder(root: Path, files: dict[str, bytes], executable: tuple[str, ...] = ()) -> Path:
    """Write ``files`` (relative name to content) under ``root`` and return it; names in ``executable`` get 0o755."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        path.chmod(0o755 if name in executable else 0o644)
    return root


def tree(root: Path) -> dict[str, bytes | None]:
    """Return everything under ``root``: a file's relative name to its content, a folder's to None."""
    return {path.relative_to(root).as_posix(): (path.read_bytes() if path.is_file() else None)
            for path in sorted(root.rglob("*"))}


BOT = {"bot.py": b"print('hello')\n", "lib/util.py": b"X = 1\n", "data/weights.bin": bytes(range(256)) * 40}


# -- pack and unpack together --------------------------------------------------------------------------------------


def test_round_trip_keeps_content_folders_and_exec_bit(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", BOT, executable=("bot.py",))
    (source / "empty").mkdir()
    done = unpack(pack(source), tmp_path / "out", DEFAULT_LIMITS)
    assert done == Unpacked(files=3, bytes=sum(len(content) for content in BOT.values()))
    assert tree(tmp_path / "out") == tree(source)
    assert stat.S_IMODE((tmp_path / "out" / "bot.py").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "out" / "lib" / "util.py").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "out" / "empty").stat().st_mode) == 0o755


names = st.text(st.characters(codec="utf-8", exclude_characters="/\\\x00", exclude_categories=("Cc", "Cf", "Cs")),
                min_size=1, max_size=12).filter(
    lambda name: name not in (".", "..", "__pycache__", ".git"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(st.lists(names, min_size=1, max_size=3).map("/".join), st.binary(max_size=300),
                             min_size=1, max_size=8))
def test_round_trip_of_any_small_folder(tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes]) -> None:
    # a name that is also another's folder ('a' and 'a/b') cannot be a folder on disk: keep the first
    kept: dict[str, bytes] = {}
    for name, content in files.items():
        parts = name.split("/")
        prefixes = {"/".join(parts[:depth]) for depth in range(1, len(parts))}
        if not prefixes & kept.keys() and not any(other.startswith(f"{name}/") for other in kept):
            kept[name] = content
    base = tmp_path_factory.mktemp("round")
    source = make_folder(base / "bot", kept)
    unpack(pack(source), base / "out", DEFAULT_LIMITS)
    assert tree(base / "out") == tree(source)


# -- pack ----------------------------------------------------------------------------------------------------------


def test_pack_is_deterministic(tmp_path: Path) -> None:
    first = make_folder(tmp_path / "one", BOT, executable=("bot.py",))
    # the same content written in another order, at another time, with other modes that mean the same
    second = make_folder(tmp_path / "two", dict(reversed(BOT.items())), executable=("bot.py",))
    (second / "bot.py").chmod(0o700)
    os.utime(second / "lib" / "util.py", (1_000_000, 1_000_000))
    assert pack(first) == pack(first)
    assert pack(first) == pack(second)
    assert content_hash(pack(first)) == content_hash(pack(second))


def test_pack_differs_when_content_or_exec_bit_differs(tmp_path: Path) -> None:
    base = pack(make_folder(tmp_path / "one", BOT))
    assert pack(make_folder(tmp_path / "two", {**BOT, "bot.py": b"print('bye')\n"})) != base
    assert pack(make_folder(tmp_path / "three", BOT, executable=("bot.py",))) != base


def test_pack_writes_clean_headers(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", BOT, executable=("bot.py",))
    data = pack(source)
    assert data[4:8] == b"\x00\x00\x00\x00", "the gzip header's time is 0"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        members = tar.getmembers()
    assert [member.name for member in members] == ["bot.py", "data", "data/weights.bin", "lib", "lib/util.py"]
    for member in members:
        assert (member.mtime, member.uid, member.gid, member.uname, member.gname) == (0, 0, 0, "", "")
    assert {member.name: member.mode for member in members} == {
        "bot.py": 0o755, "data": 0o755, "data/weights.bin": 0o644, "lib": 0o755, "lib/util.py": 0o644}


def test_pack_leaves_out_pycache_and_git(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", {**BOT, "__pycache__/bot.pyc": b"\x00", ".git/HEAD": b"ref",
                                            "lib/__pycache__/util.pyc": b"\x00"})
    unpack(pack(source), tmp_path / "out", DEFAULT_LIMITS)
    assert sorted(tree(tmp_path / "out")) == ["bot.py", "data", "data/weights.bin", "lib", "lib/util.py"]


def test_pack_refuses_a_symlink(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", BOT)
    (source / "lib" / "secret").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError, match=r"'lib/secret' .* is a symbolic link"):
        pack(source)


def test_pack_refuses_a_symlinked_folder(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", BOT)
    (source / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(ArchiveError, match=r"'elsewhere' .* is a symbolic link"):
        pack(source)


def test_pack_refuses_a_fifo(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", BOT)
    os.mkfifo(source / "pipe")
    with pytest.raises(ArchiveError, match=r"'pipe' .* is a FIFO"):
        pack(source)


def test_pack_refuses_a_name_unpack_would_refuse(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", {**BOT, "a\\b.py": b""})
    with pytest.raises(ArchiveError, match=r"backslash"):
        pack(source)


@pytest.mark.parametrize(("limits", "message"), [
    (ArchiveLimits(files=4), r"more than 4 files and folders \(limit files\)"),
    (ArchiveLimits(file_bytes=1000), r"'data/weights.bin' has 10240 bytes, more than 1000 bytes \(limit file_bytes\)"),
    (ArchiveLimits(unpacked_bytes=10260), r"'lib/util.py' brings the files' total past 10260 bytes"),
])
def test_pack_refuses_a_folder_past_the_limits(tmp_path: Path, limits: ArchiveLimits, message: str) -> None:
    source = make_folder(tmp_path / "bot", BOT)
    with pytest.raises(ArchiveError, match=message):
        pack(source, limits)


def test_pack_refuses_an_archive_past_archive_bytes(tmp_path: Path) -> None:
    source = make_folder(tmp_path / "bot", {"bot.py": b"", "noise.bin": os.urandom(64 * 1024)})
    with pytest.raises(ArchiveError, match=r"bigger than 32 KiB compressed \(limit archive_bytes\)"):
        pack(source, ArchiveLimits(archive_bytes=32 * 1024))


def test_pack_refuses_a_folder_without_files(tmp_path: Path) -> None:
    (tmp_path / "bot" / "lib").mkdir(parents=True)
    with pytest.raises(ArchiveError, match=r"holds no files"):
        pack(tmp_path / "bot")


def test_pack_refuses_what_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    with pytest.raises(ArchiveError, match=r"it is not a folder"):
        pack(tmp_path / "bot.py")


# -- unpack: what it accepts ---------------------------------------------------------------------------------------


def test_unpack_accepts_dot_slash_names_as_tar_c_folder_dot_writes_them(tmp_path: Path) -> None:
    data = targz(folder_entry("."), entry("./bot.py", b"run"), folder_entry("./lib"), entry("./lib/a.py", b"a"))
    assert unpack(data, tmp_path / "out", DEFAULT_LIMITS) == Unpacked(files=2, bytes=4)
    assert tree(tmp_path / "out") == {"bot.py": b"run", "lib": None, "lib/a.py": b"a"}


def test_unpack_makes_the_folders_a_file_needs(tmp_path: Path) -> None:
    unpack(targz(entry("a/b/c.py", b"c"), folder_entry("a")), tmp_path / "out", DEFAULT_LIMITS)
    assert tree(tmp_path / "out") == {"a": None, "a/b": None, "a/b/c.py": b"c"}


def test_unpack_into_an_existing_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    unpack(targz(entry("bot.py")), tmp_path / "out", DEFAULT_LIMITS)
    assert tree(tmp_path / "out") == {"bot.py": b"x"}


def test_unpack_writes_plain_modes_only(tmp_path: Path) -> None:
    data = targz(entry("setuid", mode=0o4777), entry("world", mode=0o666), entry("group-x", mode=0o610),
                 entry("none", mode=0o000), folder_entry("d"), entry("d/f"))
    unpack(data, tmp_path / "out", DEFAULT_LIMITS)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in (tmp_path / "out").rglob("*")}
    assert modes == {"setuid": 0o755, "world": 0o644, "group-x": 0o755, "none": 0o644, "d": 0o755, "f": 0o644}


# -- unpack: what it refuses ---------------------------------------------------------------------------------------

HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "dot-dot": (lambda: targz(entry("../x")), r"archive entry '../x' leaves its folder"),
    "absolute": (lambda: targz(entry("/etc/x")), r"archive entry '/etc/x' has an absolute name"),
    "dot-dot-inside": (lambda: targz(entry("a/../../x")), r"'a/../../x' leaves its folder"),
    "dot-dot-staying-inside": (lambda: targz(entry("a/../b")), r"'a/../b' has a '\.\.' part"),
    "dot-dot-after-dot": (lambda: targz(entry("./../x")), r"'./../x' leaves its folder"),
    "backslash": (lambda: targz(entry("..\\x")), r"'..\\\\x' has a backslash"),
    "nul-in-pax-name": (lambda: targz(entry("a", pax={"path": "a\x00b"})), r"'a\\x00b' has a NUL"),
    "empty-part": (lambda: targz(entry("a//b")), r"'a//b' has an empty part"),
    "newline-in-name": (lambda: targz(entry("bot.py\nreport: passed")), r"has a control character .*U\+000A"),
    "escape-in-name": (lambda: targz(entry("lib/\x1b[2Jx.py")), r"has a control character .*U\+001B"),
    "c1-control-in-name": (lambda: targz(entry("a\x9bb")), r"has a control character .*U\+009B"),
    "right-to-left-override": (lambda: targz(entry("bot\u202eyp.exe")), r"has a control character .*U\+202E"),
    "long-name": (lambda: targz(entry("a/" * 600)), r"has a name longer than 1024 bytes"),
    "symlink": (lambda: targz(entry("link", kind=tarfile.SYMTYPE, linkname="/etc/passwd")),
                r"'link' is a symbolic link"),
    "relative-symlink": (lambda: targz(entry("bot.py"), entry("link", kind=tarfile.SYMTYPE, linkname="bot.py")),
                         r"'link' is a symbolic link"),
    "hardlink": (lambda: targz(entry("bot.py"), entry("link", kind=tarfile.LNKTYPE, linkname="bot.py")),
                 r"'link' is a hard link"),
    "hardlink-outside": (lambda: targz(entry("link", kind=tarfile.LNKTYPE, linkname="/etc/shadow")),
                         r"'link' is a hard link"),
    "char-device": (lambda: targz(entry("null", kind=tarfile.CHRTYPE)), r"'null' is a character device"),
    "block-device": (lambda: targz(entry("sda", kind=tarfile.BLKTYPE)), r"'sda' is a block device"),
    "fifo": (lambda: targz(entry("pipe", kind=tarfile.FIFOTYPE)), r"'pipe' is a FIFO"),
    "duplicate-file": (lambda: targz(entry("bot.py", b"good"), entry("bot.py", b"evil")),
                       r"'bot.py' appears twice"),
    "duplicate-after-dot": (lambda: targz(entry("bot.py"), entry("./bot.py")), r"'bot.py' appears twice"),
    "duplicate-folder": (lambda: targz(folder_entry("lib"), folder_entry("lib"), entry("bot.py")),
                         r"'lib' appears twice"),
    "folder-over-file": (lambda: targz(entry("lib"), folder_entry("lib")), r"'lib' appears twice"),
    "file-under-file": (lambda: targz(entry("lib"), entry("lib/x.py")), r"'lib/x.py' is under 'lib', which is a file"),
    "file-over-folder": (lambda: targz(entry("lib/x.py"), entry("lib")),
                         r"'lib' is a file, but earlier entries are under it"),
    "no-files": (lambda: targz(folder_entry("lib")), r"the archive holds no files"),
    "nothing": (lambda: targz(), r"the archive holds no files"),
    "dot-as-file": (lambda: targz(entry(".")), r"'\.' is a file with no name"),
    "not-gzip": (lambda: b"PK\x03\x04 a zip file", r"not a gzip'd tar .* tar -czf"),
    "plain-tar": (lambda: gzip.decompress(targz(entry("bot.py"))), r"looks like a plain tar"),
    "gzip-of-not-tar": (lambda: gzip.compress(b"hello " * 200), r"not a valid gzip'd tar"),
    "empty-gzip": (lambda: gzip.compress(b""), r"not a valid gzip'd tar"),
    "truncated": (lambda: targz(entry("bot.py", os.urandom(4000)))[:-100], r"not a valid gzip'd tar"),
    "bad-crc": (lambda: (lambda data: data[:-8] + bytes([data[-8] ^ 1]) + data[-7:])(targz(entry("bot.py"))),
                r"not a valid gzip'd tar"),
    "garbage-after-gzip": (lambda: targz(entry("bot.py")) + b"trailing", r"not a valid gzip'd tar"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_unpack_refuses_and_leaves_nothing(tmp_path: Path, case: str) -> None:
    make, message = HOSTILE[case]
    with pytest.raises(ArchiveError, match=message):
        unpack(make(), tmp_path / "out", DEFAULT_LIMITS)
    assert not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_a_bad_entry_after_good_ones_removes_the_good_ones(tmp_path: Path) -> None:
    data = targz(entry("bot.py", b"good"), folder_entry("lib"), entry("lib/a.py"), entry("../escape"))
    with pytest.raises(ArchiveError, match=r"'../escape' leaves its folder"):
        unpack(data, tmp_path / "out", DEFAULT_LIMITS)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape").exists()


def test_a_refused_archive_leaves_an_existing_empty_folder_empty(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(ArchiveError, match=r"is a symbolic link"):
        unpack(targz(entry("bot.py"), entry("link", kind=tarfile.SYMTYPE, linkname="bot.py")), tmp_path / "out",
               DEFAULT_LIMITS)
    assert list((tmp_path / "out").iterdir()) == []


def test_unpack_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.py").write_text("old")
    with pytest.raises(ArchiveError, match=r"it is not empty"):
        unpack(targz(entry("bot.py")), tmp_path / "out", DEFAULT_LIMITS)
    assert (tmp_path / "out" / "old.py").read_text() == "old"


def test_unpack_refuses_a_symlink_as_dest(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "real", target_is_directory=True)
    with pytest.raises(ArchiveError, match=r"not a folder"):
        unpack(targz(entry("bot.py")), tmp_path / "out", DEFAULT_LIMITS)
    assert list((tmp_path / "real").iterdir()) == []


@pytest.mark.parametrize(("limits", "message"), [
    (ArchiveLimits(files=3), r"more than 3 files and folders \(limit files\), the first past it 'd'"),
    (ArchiveLimits(file_bytes=199), r"file 'c' has 200 bytes, more than 199 bytes \(limit file_bytes\)"),
    (ArchiveLimits(unpacked_bytes=350), r"file 'c' brings the files' total past 350 bytes"),
])
def test_unpack_refuses_an_archive_past_the_limits(tmp_path: Path, limits: ArchiveLimits, message: str) -> None:
    data = targz(entry("a", bytes(100)), entry("b", bytes(100)), entry("c", bytes(200)), entry("d", bytes(10)))
    with pytest.raises(ArchiveError, match=message):
        unpack(data, tmp_path / "out", limits)
    assert not (tmp_path / "out").exists()


def test_unpack_refuses_data_past_archive_bytes_before_reading_it(tmp_path: Path) -> None:
    data = targz(entry("bot.py", os.urandom(5000)))
    with pytest.raises(ArchiveError, match=rf"has {len(data)} bytes, more than 4 KiB \(limit archive_bytes\)"):
        unpack(data, tmp_path / "out", ArchiveLimits(archive_bytes=4096))
    assert not (tmp_path / "out").exists()


# -- unpack: gzip bombs --------------------------------------------------------------------------------------------

BOMB_BYTES = 200 * MiB
BOMB_LIMITS = ArchiveLimits(files=10, unpacked_bytes=1 * MiB, file_bytes=1 * MiB)


def _gzip_stream(*parts: bytes | int) -> bytes:
    """Return a gzip stream of ``parts``: bytes as they are, an int as that many zero bytes (made a MiB at a time,
    so a 200 MiB bomb never sits in memory here either)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    out: list[bytes] = []
    zeros = bytes(MiB)
    for part in parts:
        if isinstance(part, bytes):
            out.append(compressor.compress(part))
            continue
        for start in range(0, part, MiB):
            out.append(compressor.compress(zeros[:min(MiB, part - start)]))
    out.append(compressor.flush())
    return b"".join(out)


def _header(name: str, size: int) -> bytes:
    """Return the 512-byte tar header of a regular file ``name`` of ``size`` bytes."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(tarfile.USTAR_FORMAT)


@pytest.fixture(scope="module")
def honest_bomb() -> bytes:
    """A real tar of one 200 MiB file of zeros, gzip'd (a few hundred KB)."""
    return _gzip_stream(_header("zeros", BOMB_BYTES), BOMB_BYTES, bytes(1024))


@pytest.fixture(scope="module")
def lying_bomb() -> bytes:
    """A tar whose only header says 10 bytes, followed (after the end blocks) by 200 MiB of zeros."""
    return _gzip_stream(_header("bot.py", 10), b"print(1)\n\n".ljust(512, b"\x00"), BOMB_BYTES)


@pytest.fixture(scope="module")
def padded_bomb() -> bytes:
    """A small bot, then 200 MiB of non-zero garbage after the tar's end inside the same gzip stream."""
    return _gzip_stream(_header("bot.py", 10), b"print(1)\n\n".ljust(512, b"\x00"), bytes(1024),
                        b"\xff" * BOMB_BYTES)


def _unpack_bounded(data: bytes, dest: Path) -> int:
    """Unpack ``data`` with :data:`BOMB_LIMITS`, expecting an :class:`ArchiveError`; return the most memory Python
    held meanwhile."""
    tracemalloc.start()
    try:
        with pytest.raises(ArchiveError):
            unpack(data, dest, BOMB_LIMITS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


@pytest.mark.parametrize("bomb", ["honest_bomb", "lying_bomb", "padded_bomb"])
def test_a_gzip_bomb_fails_with_bounded_memory_and_disk(tmp_path: Path, bomb: str,
                                                        request: pytest.FixtureRequest) -> None:
    data = request.getfixturevalue(bomb)
    assert len(data) < DEFAULT_LIMITS.archive_bytes, "the bomb passes the size check: only decompression stops it"
    peak = _unpack_bounded(data, tmp_path / "out")
    assert peak < 8 * MiB, f"unpack held {peak} bytes for a {BOMB_BYTES // MiB} MiB bomb"
    assert not (tmp_path / "out").exists()


def test_the_honest_bomb_is_refused_by_its_header(tmp_path: Path, honest_bomb: bytes) -> None:
    with pytest.raises(ArchiveError, match=r"file 'zeros' has 209715200 bytes, more than 1 MiB"):
        unpack(honest_bomb, tmp_path / "out", BOMB_LIMITS)


def test_the_lying_bomb_is_refused_by_the_decompression_counter(tmp_path: Path, lying_bomb: bytes) -> None:
    with pytest.raises(ArchiveError, match=r"decompresses to more than"):
        unpack(lying_bomb, tmp_path / "out", BOMB_LIMITS)


def test_the_padded_bomb_is_refused_by_the_decompression_counter(tmp_path: Path, padded_bomb: bytes) -> None:
    with pytest.raises(ArchiveError, match=r"decompresses to more than"):
        unpack(padded_bomb, tmp_path / "out", BOMB_LIMITS)


# -- limits and hashes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [{"files": 0}, {"archive_bytes": -1}, {"file_bytes": True}, {"unpacked_bytes": 1.5}])
def test_limits_must_be_positive_whole_numbers(bad: dict[str, object]) -> None:
    name = next(iter(bad))
    with pytest.raises(ArchiveError, match=rf"archive limit {name!r} must be a positive whole number"):
        ArchiveLimits(**bad)  # type: ignore[arg-type]


def test_content_hash_is_the_sha256_of_the_bytes() -> None:
    assert content_hash(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert content_hash(b"a") != content_hash(b"b")


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_refusal_reads_lower_case(tmp_path: Path, case: str) -> None:
    make, _ = HOSTILE[case]
    with pytest.raises(ArchiveError) as refused:
        unpack(make(), tmp_path / "out", DEFAULT_LIMITS)
    assert str(refused.value)[0].islower()
