"""The native supervisor's build: built once into a cache folder of the user's own, rebuilt when its source
changes, never taken from a folder someone else could write, and replaced by supervisor.py (saying why) where
there is no compiler. Its behaviour is tested beside supervisor.py's in tests/test_sandbox.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.launch import native
from arena.launch.sandbox import DEFAULT_LIMITS, Isolation, Sandbox

CC = native.compiler()
compiler = pytest.mark.skipif(shutil.which(CC[0]) is None and os.environ.get("CI") != "true",
                              reason=f"no C compiler here ({CC[0]})")


@compiler
def test_a_changed_source_builds_a_new_binary_and_an_unchanged_one_is_reused(tmp_path: Path) -> None:
    source = tmp_path / "supervisor.c"
    shutil.copy(native.SOURCE, source)
    cache = tmp_path / "cache"
    first = native.build(cache, source=source)
    assert first.native, first.why_not
    binary = Path(first.prefix[0])
    assert binary.parent == cache and binary.name.startswith(native.BINARY_PREFIX)
    assert cache.stat().st_mode & 0o777 == 0o700  # made for this user only
    built_at = binary.stat().st_mtime_ns
    assert native.build(cache, source=source) == first and binary.stat().st_mtime_ns == built_at  # not rebuilt
    source.write_text(source.read_text() + "/* changed */\n")
    second = native.build(cache, source=source)
    assert second.native and second.prefix != first.prefix and Path(second.prefix[0]).is_file()
    assert sorted(p.name for p in cache.iterdir()) == sorted([binary.name, Path(second.prefix[0]).name])  # no .tmp
    done = subprocess.run([*second.prefix, "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and "--cgroup CONTROLLER=FOLDER" in done.stdout


def test_a_cache_folder_others_could_write_is_not_used(tmp_path: Path) -> None:
    """The binary runs as the arena's user (root, often): one planted by someone else must never run."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    chosen = native.build(shared)
    assert not chosen.native and "not a folder of this user's only" in chosen.why_not
    assert list(shared.iterdir()) == []
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    assert not native.build(link).native
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 12345, 12345)
        assert not native.build(foreign).native


def test_without_a_compiler_the_python_supervisor_runs_and_the_sandbox_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CC", "no-such-compiler-anywhere -O1")
    assert native.compiler() == ["no-such-compiler-anywhere", "-O1"]
    chosen = native.build(tmp_path / "cache")
    assert chosen == native.python_supervisor("no C compiler: no-such-compiler-anywhere not found")
    sandbox = Sandbox(Isolation.LIMITS, supervisor=chosen)
    assert "Python supervisor (no C compiler: no-such-compiler-anywhere not found)" in sandbox.describe()
    assert sandbox.command(["bot"], DEFAULT_LIMITS, cwd="/")[:4] == list(chosen.prefix)


@compiler
def test_a_source_that_does_not_build_leaves_the_python_supervisor_and_no_half_written_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.c"
    broken.write_text("int main(void) { return }\n")
    failed = native.build(tmp_path / "cache", cc=CC, source=broken)
    assert not failed.native and failed.why_not.startswith("the native supervisor does not build: ")
    assert "\n" not in failed.why_not
    assert list((tmp_path / "cache").iterdir()) == []


@compiler
def test_the_native_supervisor_is_the_default_and_said(tmp_path: Path) -> None:
    chosen = native.default_supervisor()
    assert chosen.native, chosen.why_not
    sandbox = Sandbox(Isolation.LIMITS)
    assert sandbox.supervisor_used() is chosen and "native supervisor" in sandbox.describe()
    assert sandbox.command(["bot"], DEFAULT_LIMITS, cwd="/")[0] == chosen.prefix[0]
    assert Sandbox(Isolation.NONE).command(["bot"], DEFAULT_LIMITS, cwd="/") == ["bot"]


def test_the_supervisors_of_both_twins_are_recognised() -> None:
    """Stale cgroups are those of supervisors that are gone: a live one of either twin keeps its group."""
    assert native.is_supervisor_command(b"/home/u/.cache/arena/arena-supervisor-0123abcd\0--cgroup\0pids=/x\0")
    assert native.is_supervisor_command(b"/usr/bin/python3\0-I\0-S\0/a/arena/launch/supervisor.py\0--cpu\0")
    assert native.is_supervisor_command(b"python\0/old/arena/sandbox.py\0--cgroup\0")
    assert not native.is_supervisor_command(b"python\0bot.py\0arena-supervisor-\0")
