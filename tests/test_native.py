"""The supervisor's program: its constants from one source, where it is found, how it is built (with the package,
or at first use in an editable install: once into a cache folder of the user's own, again when its source changes,
never taken from a folder someone else could write), and what the arena says and does where it cannot be had.
Its behaviour is specified by tests/test_sandbox.py."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from arena.launch import native, supervisor_constants
from arena.launch.sandbox import DEFAULT_LIMITS, Isolation, Sandbox, SandboxError

ROOT = Path(__file__).resolve().parent.parent
CC = native.compiler()
CI = os.environ.get("CI") == "true"
compiler = pytest.mark.skipif(shutil.which(CC[0]) is None and not CI, reason=f"no C compiler here ({CC[0]})")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_supervisor_h", ROOT / "scripts" / "gen_supervisor_h.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------------------ one source


def test_the_committed_header_is_generated_from_the_constants() -> None:
    """supervisor.h is scripts/gen_supervisor_h.py's output for supervisor_constants.py, byte for byte: a constant
    changed on one side only fails here."""
    generator = _generator()
    assert native.HEADER.read_text(encoding="ascii") == generator.header_text(), \
        "arena/launch/supervisor.h drifted from arena/launch/supervisor_constants.py; run " \
        "python scripts/gen_supervisor_h.py"
    text = generator.header_text()
    for name in ("CPU_EXIT_CODE", "CGROUP_PREFIX", "HOST_UID_BASE", "DEFAULT_MEMORY_MB", "BWRAP_OPTIONS",
                 "SYSTEM_FOLDERS"):
        assert f" {name}" in text, name
    assert f"#define HOST_UID_BASE {supervisor_constants.HOST_UID_BASE}\n" in text
    assert '#define JAIL_SOCKET "/run/arena/arena.sock"\n' in text


def test_the_drift_test_would_see_a_changed_constant(tmp_path: Path) -> None:
    """The generator reads the values, not a copy of them: a changed constant changes the header."""
    generator = _generator()
    changed = tmp_path / "constants.py"
    changed.write_text(Path(supervisor_constants.__file__).read_text().replace("DEFAULT_PROCESSES = 128",
                                                                              "DEFAULT_PROCESSES = 129"))
    text = generator.header_text(generator.load_constants(changed))
    assert "#define DEFAULT_PROCESSES 129\n" in text and text != native.HEADER.read_text(encoding="ascii")
    with pytest.raises(ValueError, match="does not fit a C int"):
        generator.definitions("BIG", 1 << 40)


def test_the_supervisor_source_defines_none_of_the_shared_values_itself() -> None:
    """supervisor.c takes them from its header only: a #define there of a name of the constants would be a second
    source."""
    shared = {name for name in vars(supervisor_constants) if name.isupper()}
    source = native.SOURCE.read_text(encoding="utf-8")
    defined = {line.split()[1] for line in source.splitlines() if line.startswith("#define ")}
    assert '#include "supervisor.h"' in source and not defined & shared, sorted(defined & shared)


@pytest.mark.parametrize("module", ["arena/launch/native.py", "arena/launch/supervisor_constants.py"])
def test_what_the_build_loads_by_path_imports_the_standard_library_only(module: str) -> None:
    """setup.py and the generator load these files by their paths while the package's dependencies are not
    installed: they import nothing else."""
    imported: set[str] = set()
    for node in ast.walk(ast.parse((ROOT / module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module is not None
            imported.add(node.module.split(".")[0])
    assert imported - {"__future__"} <= sys.stdlib_module_names, sorted(imported - sys.stdlib_module_names)


# ------------------------------------------------------------------------------------------ where it is


def test_the_package_build_is_preferred_and_arena_supervisor_names_another(tmp_path: Path) -> None:
    packaged = tmp_path / "arena-supervisor"
    packaged.write_text("#!/bin/sh\n")
    packaged.chmod(0o755)
    assert native.find_supervisor({}, packaged, "linux") == native.Supervisor(str(packaged))
    other = tmp_path / "arena-supervisor-sanitized"
    shutil.copy(packaged, other)
    chosen = native.find_supervisor({native.ENVIRONMENT: str(other)}, packaged, "linux")
    assert chosen == native.Supervisor(str(other), chosen_by="ARENA_SUPERVISOR") and chosen.prefix == (str(other),)
    assert f"supervisor {other} (from ARENA_SUPERVISOR)" in Sandbox(Isolation.LIMITS, supervisor=chosen).describe()
    for wrong in ("arena-supervisor", str(tmp_path / "none"), str(tmp_path)):
        refused = native.find_supervisor({native.ENVIRONMENT: wrong}, packaged, "linux")
        assert not refused.available and "is not the absolute path of a program" in refused.why_not
    darwin = native.find_supervisor({}, packaged, "darwin")
    assert not darwin.available and darwin.why_not == "the supervisor is for Linux, not darwin"


@pytest.mark.process
@compiler
def test_without_the_package_build_it_is_built_at_first_use_and_again_when_its_source_changes(
        tmp_path: Path) -> None:
    """An editable install has no build step: the source tree is compiled into the cache, and a changed source (or
    header) builds a new program; an unchanged one is reused."""
    for name in ("supervisor.c", "supervisor.h"):
        shutil.copy(native.SOURCE.with_name(name), tmp_path / name)
    source = tmp_path / "supervisor.c"
    cache = tmp_path / "cache"
    first = native.find_supervisor({}, tmp_path / "not-installed", "linux", folder=cache)
    assert first == native.build(cache)  # the default source: the package's own
    first = native.build(cache, source=source)
    assert first.available, first.why_not
    program = Path(first.prefix[0])
    assert program.parent == cache and program.name.startswith(f"{native.PROGRAM}-")
    assert cache.stat().st_mode & 0o777 == 0o700  # made for this user only
    built_at = program.stat().st_mtime_ns
    assert native.build(cache, source=source) == first and program.stat().st_mtime_ns == built_at  # not rebuilt
    (tmp_path / "supervisor.h").write_text((tmp_path / "supervisor.h").read_text() + "/* changed */\n")
    second = native.build(cache, source=source)
    assert second.available and second.prefix != first.prefix and Path(second.prefix[0]).is_file()
    assert sorted(p.name for p in cache.iterdir()) == sorted([program.name, Path(second.prefix[0]).name])  # no .tmp
    done = subprocess.run([*second.prefix, "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0 and "--cgroup CONTROLLER=FOLDER" in done.stdout


def test_a_cache_folder_others_could_write_is_not_used(tmp_path: Path) -> None:
    """The program runs as the arena's user (root, often): one planted by someone else must never run."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    chosen = native.build(shared)
    assert not chosen.available and "not a folder of this user's only" in chosen.why_not
    assert list(shared.iterdir()) == []
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    assert not native.build(link).available
    if os.geteuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 12345, 12345)
        assert not native.build(foreign).available


@pytest.mark.process
@compiler
def test_a_source_that_does_not_build_names_the_compilers_error_and_leaves_no_half_written_file(
        tmp_path: Path) -> None:
    broken = tmp_path / "supervisor.c"
    broken.write_text('#include "supervisor.h"\nint main(void) { return }\n')
    (tmp_path / "supervisor.h").write_text("")
    failed = native.build(tmp_path / "cache", cc=CC, source=broken)
    assert not failed.available and failed.why_not.startswith("the supervisor does not build: ")
    assert "error" in failed.why_not and "\n" not in failed.why_not  # the compiler's error line, not its first
    assert list((tmp_path / "cache").iterdir()) == []
    with pytest.raises(native.BuildError) as error:
        native.compile_supervisor(tmp_path / "out", CC, source=broken)
    assert "return }" in error.value.output and not (tmp_path / "out").exists()  # all the compiler said


# ------------------------------------------------------------------------------------------ where there is none


@pytest.mark.process
def test_without_a_compiler_there_is_no_isolation_and_the_arena_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No second supervisor: auto gives no isolation, says so and why (loudly at the start of a match), strict
    refuses."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.launch import sandbox as sandbox_module
    from arena.launch.sandbox import choose_sandbox

    monkeypatch.setenv("CC", "no-such-compiler-anywhere -O1")
    assert native.compiler() == ["no-such-compiler-anywhere", "-O1"]
    chosen = native.find_supervisor({}, tmp_path / "not-installed", "linux", folder=tmp_path / "cache")
    why = ("no C compiler: no-such-compiler-anywhere not found; install a C compiler (Debian/Ubuntu: apt-get "
           "install gcc libc6-dev)")
    assert chosen == native.missing(why)
    with pytest.raises(native.BuildError, match="no supervisor: no C compiler"):
        _ = chosen.prefix
    monkeypatch.setattr(native, "_default", chosen)
    monkeypatch.setattr(sandbox_module, "_detected", None)
    machine = sandbox_module.detect_sandbox()
    assert machine.isolation is Isolation.NONE and machine.reason == f"no supervisor: {why}"
    assert machine.describe() == f"bot sandbox: none: no isolation (no supervisor: {why})"
    assert machine.command(["bot", "x"], DEFAULT_LIMITS, cwd="/") == ["bot", "x"]
    assert choose_sandbox("auto") is machine and choose_sandbox("limits") is machine
    with pytest.raises(SandboxError, match="this machine gives none: no supervisor: no C compiler"):
        choose_sandbox("strict")
    assert machine.warning().startswith("warning: bots run without isolation: no supervisor (no C compiler")
    result = CliRunner().invoke(main, ["sandbox"])
    assert result.exit_code == 0 and result.stdout == machine.describe() + "\n"
    assert "warning: bots run without isolation" in result.stderr
    result = CliRunner().invoke(main, ["sandbox", "--sandbox", "strict"])
    assert result.exit_code == 1 and "no supervisor: no C compiler" in result.stderr


@pytest.mark.process
def test_an_editable_install_without_a_compiler_says_so_from_the_command_line(tmp_path: Path) -> None:
    """The first use in a process of its own, as a user meets it: `arena sandbox` names the missing compiler."""
    env = {**os.environ, "CC": "no-such-compiler-anywhere", "XDG_CACHE_HOME": str(tmp_path)}
    env.pop(native.ENVIRONMENT, None)
    code = ("import sys; from arena.launch import native\n"
            "native.PACKAGED = native.PACKAGED.with_name('not-installed')  # as in an editable install\n"
            "from arena.cli import run; sys.argv = ['arena', 'sandbox']; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("bot sandbox: none: no isolation (no supervisor: no C compiler: "
                                  "no-such-compiler-anywhere not found"), done.stdout


def test_supervisors_are_recognised_by_their_command_line() -> None:
    """Stale cgroups are those of supervisors that are gone: a live one keeps its group, an older arena's too."""
    assert native.is_supervisor_command(b"/venv/lib/python3.11/site-packages/arena/launch/arena-supervisor\0--cpu\0")
    assert native.is_supervisor_command(b"/home/u/.cache/arena/arena-supervisor-0123abcd\0--cgroup\0pids=/x\0")
    assert native.is_supervisor_command(b"/usr/bin/python3\0-I\0-S\0/a/arena/launch/supervisor.py\0--cpu\0")
    assert native.is_supervisor_command(b"python\0/old/arena/sandbox.py\0--cgroup\0")
    assert not native.is_supervisor_command(b"python\0bot.py\0arena-supervisor-\0")
    assert not native.is_supervisor_command(b"/bin/arena-supervisors\0")
