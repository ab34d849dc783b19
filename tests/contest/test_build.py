"""A submission's build in the bot jail (arena.contest.build): what it builds comes back, and nothing else does.

The builds run in the real jail (bubblewrap, the supervisor, cgroups where the machine has them). Without the
jail these tests skip, except with CI=true, where a missing jail is a failure. Each hostile build carries a mark
in its command line, and its test checks, through /proc, that no process of it is left.
"""

from __future__ import annotations

import asyncio
import gzip
import io
import os
import socket
import stat
import sys
import tarfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.contest.build import BuildError, BuildResult, _Refused, _unpack_result, run_build
from arena.launch.procs import processes_naming
from arena.launch.sandbox import Isolation, Limits, Sandbox, detect_sandbox
from arena.launch.supervisor_constants import MIB

MACHINE = detect_sandbox()
CI = os.environ.get("CI") == "true"
LIMITS = Limits(memory_mb=512, cpu_seconds=20, disk_mb=16, processes=32, open_files=64)
"""Small limits, so that each hostile build ends fast."""


@pytest.fixture
def jail() -> Sandbox:
    """Return the machine's jail; skip without bubblewrap (fail with CI=true, or where it is installed but
    its jail fails its self-check)."""
    if MACHINE.isolation is not Isolation.JAIL:
        if CI or MACHINE.broken_jail:
            pytest.fail(f"no bubblewrap jail here, and builds need it: {MACHINE.describe()}")
        pytest.skip(f"no bubblewrap jail here: {MACHINE.reason}")
    return MACHINE


@pytest.fixture
def mark() -> Iterator[str]:
    """Return a mark for a build's command line; after the test, no process holding it may be left."""
    text = f"arena-build-test-{os.getpid()}-{time.monotonic_ns()}"
    yield text
    assert gone(text), f"processes of the build outlived it: {processes_naming(text)}"


def gone(mark: str, within: float = 5.0) -> bool:
    """Return whether every process whose command line holds ``mark`` is gone (waiting ``within`` seconds)."""
    deadline = time.monotonic() + within
    while processes_naming(mark) and time.monotonic() < deadline:
        time.sleep(0.02)
    return processes_naming(mark) == []


def submission(tmp_path: Path) -> Path:
    """Return a small submission folder: a file, an executable script, a subfolder."""
    source = tmp_path / "src"
    (source / "lib").mkdir(parents=True)
    (source / "bot.py").write_text("print('bot')\n")
    (source / "run.sh").write_text("#!/bin/sh\necho run\n")
    (source / "run.sh").chmod(0o755)
    (source / "lib" / "util.txt").write_text("util\n")
    return source


def snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Return every path below ``folder`` with its mode and content (empty for a folder)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        mode = path.lstat().st_mode
        found[str(path.relative_to(folder))] = (mode, path.read_bytes() if stat.S_ISREG(mode) else b"")
    return found


def build(source: Path, dest: Path, command: Sequence[str], jail: Sandbox, *, limits: Limits = LIMITS,
          timeout: float = 20.0, watch: Callable[[], Awaitable[None]] | None = None, **options: Any) -> BuildResult:
    """Run the build (and ``watch`` beside it, cancelled when the build ends); return its result."""
    async def go() -> BuildResult:
        watcher = asyncio.create_task(watch()) if watch is not None else None
        try:
            return await run_build(source, dest, command, sandbox=jail, limits=limits, timeout=timeout, **options)
        finally:
            if watcher is not None:
                watcher.cancel()

    return asyncio.run(go())


def sh(script: str, mark: str = "build") -> list[str]:
    """Return the command that runs ``script`` with ``sh`` (``mark`` as its $0: in its command line)."""
    return ["sh", "-c", script, mark]


# ------------------------------------------------------------------------------------------- building


@pytest.mark.process
def test_a_build_makes_files_that_come_back_with_the_submission(jail: Sandbox, tmp_path: Path) -> None:
    source = submission(tmp_path)
    before = snapshot(source)
    dest = tmp_path / "built"
    script = ("set -e; echo compiling; echo warning >&2; printf '#!/bin/sh\\necho hi\\n' > bot; chmod 700 bot; "
              "mkdir -p out/deep; echo data > out/deep/file.txt; ln out/deep/file.txt hard.txt; "
              "echo changed > bot.py")
    result = build(source, dest, sh(script), jail)
    assert result.ok, (result.reason, result.output)
    assert result.reason == "" and result.seconds > 0
    assert "compiling" in result.output and "warning" in result.output
    assert (dest / "bot").read_text() == "#!/bin/sh\necho hi\n"
    assert stat.S_IMODE((dest / "bot").stat().st_mode) == 0o755  # executable, and readable by the bots' uids
    assert stat.S_IMODE((dest / "lib" / "util.txt").stat().st_mode) == 0o644
    assert stat.S_IMODE((dest / "run.sh").stat().st_mode) == 0o755
    assert (dest / "out" / "deep" / "file.txt").read_text() == "data\n"
    assert (dest / "hard.txt").read_text() == "data\n"  # a hard link comes back as a file of its own
    assert (dest / "bot.py").read_text() == "changed\n"  # the build changed its copy
    assert snapshot(source) == before  # never the submission itself


@pytest.mark.process
def test_the_builds_stdout_goes_to_the_log_and_cannot_corrupt_the_result(jail: Sandbox, tmp_path: Path) -> None:
    source = submission(tmp_path)
    dest = tmp_path / "built"
    # what might pass for the wrapper's status line and a tar, and 300 KB of more, on the build's stdout
    script = ("printf 'ARENA-BUILD ok full=0\\n'; head -c 300000 /dev/urandom | base64; echo made > made.txt; "
              "echo last-line")
    result = build(source, dest, sh(script), jail, max_output=4096)
    assert result.ok, (result.reason, result.output)
    assert sorted(p.name for p in dest.iterdir()) == ["bot.py", "lib", "made.txt", "run.sh"]
    assert result.output.startswith("ARENA-BUILD ok")
    assert result.output.rstrip().endswith("last-line")


@pytest.mark.process
def test_a_failing_build_says_its_status_and_leaves_no_folder(jail: Sandbox, tmp_path: Path) -> None:
    dest = tmp_path / "built"
    result = build(submission(tmp_path), dest, sh("echo 'bot.cpp:1: error: expected ;' >&2; exit 3"), jail)
    assert not result.ok
    assert result.reason == "the build exited with status 3"
    assert "error: expected ;" in result.output
    assert not dest.exists()


@pytest.mark.process
def test_a_missing_program_is_said(jail: Sandbox, tmp_path: Path) -> None:
    dest = tmp_path / "built"
    result = build(submission(tmp_path), dest, ["no-such-compiler", "-O2"], jail)
    assert not result.ok
    assert "cannot start 'no-such-compiler'" in result.reason
    assert not dest.exists()


@pytest.mark.process
def test_the_log_escapes_terminal_control_characters(jail: Sandbox, tmp_path: Path) -> None:
    result = build(submission(tmp_path), tmp_path / "built", sh("printf '\\033]0;title\\007red\\033[31m\\n'"),
                   jail)
    assert result.ok, result.reason
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]0;title" in result.output


# ------------------------------------------------------------------------------------------- hostile builds


@pytest.mark.process
def test_an_endless_build_is_killed_at_its_timeout(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    dest = tmp_path / "built"
    seen: list[int] = []

    async def watch() -> None:
        while True:
            seen.append(len(processes_naming(mark)))
            await asyncio.sleep(0.1)

    result = build(submission(tmp_path), dest, sh("echo started; while :; do :; done", mark), jail, timeout=2,
                   watch=watch)
    assert not result.ok
    assert result.reason == "the build ran past its 2 s"
    assert "started" in result.output
    assert max(seen) > 0, "the build was never seen running"
    assert not dest.exists()
    assert gone(mark)


@pytest.mark.process
def test_a_build_over_its_cpu_time_is_killed(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    result = build(submission(tmp_path), tmp_path / "built", sh("while :; do :; done", mark), jail,
                   limits=Limits(memory_mb=512, cpu_seconds=1, disk_mb=16, processes=32), timeout=15)
    assert not result.ok
    assert result.reason == "the build used more than its 1 s of CPU time"
    assert not (tmp_path / "built").exists()


@pytest.mark.process
def test_a_fork_bomb_is_held_by_the_process_limit_and_killed(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    seen: list[int] = []

    async def watch() -> None:
        while True:
            seen.append(len(processes_naming(mark)))
            await asyncio.sleep(0.05)

    # children that spin, and a parent that forks again whenever the process limit lets it (until the timeout)
    code = ("import os, time\n"
            "while True:\n"
            "    try:\n"
            "        if os.fork() == 0:\n"
            "            while True: pass\n"
            "    except OSError:\n"
            "        time.sleep(0.02)\n")
    result = build(submission(tmp_path), tmp_path / "built", [sys.executable, "-c", code, mark], jail, timeout=2,
                   watch=watch)
    assert not result.ok
    assert result.reason == "the build ran past its 2 s"
    assert max(seen) > 10, "the bomb never spread"
    if jail.cgroups is not None:
        # the supervisor (outside the build's group) and everything in the group, at most `processes`
        assert max(seen) <= LIMITS.processes + 1, seen
    assert not (tmp_path / "built").exists()
    assert gone(mark)


@pytest.mark.process
@pytest.mark.parametrize("then", ["exit 1", "exit 0"])
def test_a_build_that_fills_its_disk_fills_only_its_scratch(jail: Sandbox, tmp_path: Path, mark: str,
                                                            then: str) -> None:
    dest = tmp_path / "built"
    script = f"head -c 200000000 /dev/zero > big; echo wrote $(wc -c < big) >&2; {then}"
    result = build(submission(tmp_path), dest, sh(script, mark), jail)
    assert "No space left on device" in result.output or "File too large" in result.output, result.output
    if then == "exit 1":
        assert not result.ok
        assert result.reason == "the build exited with status 1 (its scratch of 16 MiB was full)"
        assert not dest.exists()
    else:  # it may keep the 16 MiB it wrote, and no more
        assert result.ok, result.reason
        assert 0 < (dest / "big").stat().st_size <= LIMITS.disk_mb * MIB
        assert sum(p.stat().st_size for p in dest.rglob("*") if p.is_file()) <= LIMITS.disk_mb * MIB


@pytest.mark.process
def test_a_build_cannot_write_to_its_submission_or_the_host(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    source = submission(tmp_path)
    before = snapshot(source)
    outside = [tmp_path / "outside.txt", Path("/tmp") / f"{mark}.txt", Path("/var/tmp") / f"{mark}.txt",
               Path.home() / f"{mark}.txt", Path("/etc") / f"{mark}.txt"]
    tries = [f"echo x > {source}/bot.py", f"echo x > {source}/new.txt", f"rm -f {source}/run.sh",
             f"chmod 777 {source}", *(f"echo x > {path}" for path in outside)]
    script = "; ".join(f"if {t} 2>/dev/null; then echo 'done: {t}'; else echo 'blocked: {t}'; fi" for t in tries)
    result = build(source, tmp_path / "built", sh(script, mark), jail)
    assert result.ok, result.reason
    assert snapshot(source) == before
    assert [path for path in outside if path.exists()] == []
    # inside the jail the submission's folder is read-only
    assert result.output.count("blocked: ") >= 4, result.output
    assert not (tmp_path / "built" / "new.txt").exists()


@pytest.mark.process
def test_a_build_has_no_network(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        code = ("import socket, sys\n"
                "s = socket.socket(); s.settimeout(2)\n"
                f"sys.exit(7 if s.connect_ex(('127.0.0.1', {port})) == 0 else 0)\n")
        result = build(submission(tmp_path), tmp_path / "built", [sys.executable, "-c", code, mark], jail)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody came
    assert result.ok, (result.reason, result.output)


@pytest.mark.process
@pytest.mark.parametrize("link", ["/etc/passwd", "lib/util.txt"])
def test_a_built_folder_with_a_link_is_refused(jail: Sandbox, tmp_path: Path, link: str) -> None:
    dest = tmp_path / "built"
    result = build(submission(tmp_path), dest, ["ln", "-s", link, "passwd"], jail)
    assert not result.ok
    assert result.reason.startswith(f"the built folder holds a link 'passwd' to {link!r}"), result.reason
    assert not dest.exists()


@pytest.mark.process
def test_a_flood_of_output_is_bounded(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    script = "head -c 100000000 /dev/zero | tr '\\0' x >&2; echo made > made.txt; echo the-end >&2"
    result = build(submission(tmp_path), tmp_path / "built", sh(script, mark), jail, max_output=8192)
    assert result.ok, result.reason
    assert len(result.output) < 8192 + 100
    assert "bytes cut ...]" in result.output
    assert result.output.startswith("xxxx") and result.output.rstrip().endswith("the-end")
    assert (tmp_path / "built" / "made.txt").read_text() == "made\n"


@pytest.mark.process
def test_a_built_folder_over_the_result_limit_is_refused(jail: Sandbox, tmp_path: Path, mark: str) -> None:
    dest = tmp_path / "built"
    result = build(submission(tmp_path), dest, sh("head -c 3000000 /dev/urandom > blob", mark), jail,
                   max_result=1 * MIB)
    assert not result.ok
    assert result.reason == "the built folder is over 1 MiB (packed)"
    assert not dest.exists()


# ------------------------------------------------------------------------------------------- no jail, no build


def test_without_the_jail_nothing_is_built(tmp_path: Path) -> None:
    dest = tmp_path / "built"
    with pytest.raises(BuildError, match="needs the bot jail"):
        build(submission(tmp_path), dest, sh("touch /tmp/never"), Sandbox(Isolation.LIMITS, reason="test"))
    assert not dest.exists()


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    sandbox = Sandbox(Isolation.JAIL)
    with pytest.raises(ValueError, match="command is empty"):
        build(submission(tmp_path), tmp_path / "built", [], sandbox)
    (tmp_path / "taken").mkdir()
    with pytest.raises(ValueError, match="exists: give a new folder"):
        build(tmp_path / "src", tmp_path / "taken", ["true"], sandbox)
    with pytest.raises(ValueError, match="is not a folder"):
        build(tmp_path / "nowhere", tmp_path / "built", ["true"], sandbox)


# ------------------------------------------------------------------------------------------- unpacking


def tar_of(*members: tuple[tarfile.TarInfo, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(raw.getvalue())


def member(name: str, kind: bytes = tarfile.REGTYPE, *, mode: int = 0o644, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.mode, info.linkname = kind, mode, link
    return info


def test_unpacking_keeps_files_and_folders_with_plain_modes(tmp_path: Path) -> None:
    data = tar_of((member("d", tarfile.DIRTYPE, mode=0o700), b""), (member("d/a", mode=0o4777), b"a"),
                  (member("./b", mode=0o600), b"b"), (member("c/e/f"), b"f"))
    _unpack_result(data, tmp_path / "out", max_bytes=MIB)
    out = tmp_path / "out"
    assert (out / "d" / "a").read_bytes() == b"a" and (out / "b").read_bytes() == b"b"
    assert (out / "c" / "e" / "f").read_bytes() == b"f"
    assert stat.S_IMODE((out / "d" / "a").stat().st_mode) == 0o755  # no setuid, no write for others
    assert stat.S_IMODE((out / "b").stat().st_mode) == 0o644
    assert stat.S_IMODE((out / "d").stat().st_mode) == 0o755


@pytest.mark.parametrize(("members", "reason"), [
    ([(member("/etc/x"), b"x")], "only relative paths"),
    ([(member("../x"), b"x")], "only relative paths"),
    ([(member("a/../../x"), b"x")], "only relative paths"),
    ([(member("l", tarfile.SYMTYPE, link="/etc/passwd"), b"")], "a link 'l' to '/etc/passwd'"),
    ([(member("a"), b"a"), (member("h", tarfile.LNKTYPE, link="a"), b"")], "a link 'h'"),
    ([(member("dev", tarfile.CHRTYPE), b"")], "a special file 'dev'"),
    ([(member("fifo", tarfile.FIFOTYPE), b"")], "a special file 'fifo'"),
    ([(member("a"), b"a"), (member("a"), b"b")], "holds 'a' twice"),
    ([(member("a"), b"a"), (member("a/b"), b"b")], "both as a file and as a folder"),
    ([(member(f"f{i}"), b"") for i in range(12)], "over 10 files"),
    ([(member("big"), b"x" * (MIB + 1))], "over 1 MiB unpacked"),
    ([(member("x" * 300), b"")], "a part over 255"),
])
def test_unpacking_refuses_what_is_not_a_plain_folder(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]],
                                                      reason: str) -> None:
    with pytest.raises(_Refused, match=reason.replace("(", r"\(")):
        _unpack_result(tar_of(*members), tmp_path / "out", max_bytes=MIB, max_files=10)
    assert not (tmp_path / "out").exists()


def test_unpacking_stops_a_gzip_bomb_early(tmp_path: Path) -> None:
    # a pax header of 64 MiB (tarfile would read it whole into memory), packed into some 64 KiB
    header = member("pax", tarfile.XHDTYPE)
    header.size = 64 * MIB
    bomb = gzip.compress(header.tobuf(tarfile.USTAR_FORMAT) + bytes(64 * MIB), compresslevel=9)
    assert len(bomb) < MIB
    with pytest.raises(_Refused, match="over 1 MiB unpacked"):
        _unpack_result(bomb, tmp_path / "out", max_bytes=MIB, max_files=10)
    with pytest.raises(_Refused, match="not a valid"):
        _unpack_result(b"not gzip at all", tmp_path / "out", max_bytes=MIB)
    assert not (tmp_path / "out").exists()
