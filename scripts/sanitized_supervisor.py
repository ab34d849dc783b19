"""Build the bots' supervisor with AddressSanitizer and UndefinedBehaviorSanitizer, for .ci/run's second run of its
specification (tests/test_sandbox.py) against it.

Run: python scripts/sanitized_supervisor.py DIR

Writes DIR/arena-supervisor-sanitized, compiled from arena/launch/supervisor.c with the package's flags
(arena/launch/native.py) plus the sanitizers, and prints its path: give it to the tests as ARENA_SUPERVISOR. The
first error a sanitizer finds stops the supervisor, and its report goes to a file in DIR/reports/ (the place is
built into the program: the tests run the supervisor in a bare environment, and a bot's stderr is its log). Any
file there after the tests is a failure: .ci/run lists them and fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parent.parent
SANITIZERS = ("-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-g")
OPTIONS = """\
/* The sanitizers' settings, built into the program (scripts/sanitized_supervisor.py). */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void) { return "log_path=%(reports)s/asan:halt_on_error=1:detect_leaks=1"; }
const char *__ubsan_default_options(void) { return "log_path=%(reports)s/ubsan:halt_on_error=1:print_stacktrace=1"; }
"""


def native() -> ModuleType:
    """Return arena/launch/native.py, loaded by its path (standard library only)."""
    spec = importlib.util.spec_from_file_location("arena_native", ROOT / "arena" / "launch" / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build(folder: pathlib.Path) -> pathlib.Path:
    """Build the sanitized supervisor into ``folder``; return its path. Raises native.BuildError."""
    build = native()
    reports = folder / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    reports.chmod(0o1777)  # a bot's child reports too, after it has dropped to the bot's uid
    options = folder / "sanitizer_options.c"
    options.write_text(OPTIONS % {"reports": reports.resolve()}, encoding="ascii")
    program = folder / f"{build.PROGRAM}-sanitized"
    # the options' file is a second source, compiled and linked with the supervisor's
    build.compile_supervisor(program, flags=(*build.CFLAGS, *SANITIZERS, str(options)))
    return program


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=pathlib.Path, help="where to write the program (and its reports, below)")
    args = parser.parse_args()
    try:
        print(build(args.folder.resolve()))
    except RuntimeError as exc:  # native.BuildError
        sys.exit(f"{exc}\n{getattr(exc, 'output', '')}")


if __name__ == "__main__":
    main()
