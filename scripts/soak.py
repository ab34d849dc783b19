"""Run a part of the test suite again and again under a parallel CPU load, and report every run: flaky tests
show up here, not in an author's CI.

    python scripts/soak.py                                  # tests/adversarial, 20 runs, a burner per core
    python scripts/soak.py --runs 5 --burners 4 tests/test_server.py

Each burner is a process that spins at the same priority as the tests, in a process group of its own, killed
(with the group) when the runs end or the script is interrupted. Each run is a fresh ``python -m pytest -q``;
the report gives each run's result, time and failed tests (a failed run's whole output is kept in ``--keep``),
then how often each test failed. Exit status 1 when any run failed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error).*?) in [\d.]+s", re.MULTILINE)
BURN = "while True:\n    pass\n"


def burners(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", BURN], start_new_session=True) for _ in range(count)]


def stop(processes: list[subprocess.Popen[bytes]]) -> None:
    for process in processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tests", nargs="*", default=["tests/adversarial"], help="what pytest runs (default: "
                        "tests/adversarial)")
    parser.add_argument("--runs", type=int, default=20, help="runs of the tests (default: 20)")
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1,
                        help="CPU-spinning processes beside the tests (default: one per core)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds a run may take (default: 1800)")
    parser.add_argument("--keep", type=Path, default=Path("soak-failures"),
                        help="folder for the whole output of each failed run (default: soak-failures)")
    args = parser.parse_args()
    if args.runs < 1 or args.burners < 0:
        parser.error("--runs must be at least 1 and --burners at least 0")
    failures: Counter[str] = Counter()
    failed_runs = 0
    load = burners(args.burners)
    print(f"soak: {' '.join(args.tests)}, {args.runs} runs beside {args.burners} CPU burners "
          f"({os.cpu_count()} cores)", flush=True)
    try:
        for run in range(1, args.runs + 1):
            start = time.monotonic()
            try:
                done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args.tests],
                                      cwd=ROOT, capture_output=True, text=True, timeout=args.timeout,
                                      start_new_session=True)
                output, code = done.stdout + done.stderr, done.returncode
            except subprocess.TimeoutExpired as exc:
                partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
                output, code = f"{partial}\nrun timed out after {args.timeout:g} s", -1
            seconds = time.monotonic() - start
            summary = SUMMARY.findall(output)
            failed = FAILED.findall(output)
            failures.update(failed)
            failed_runs += code != 0
            print(f"run {run:2}: {'ok    ' if code == 0 else 'FAILED'} {seconds:6.0f} s  "
                  f"{summary[-1] if summary else f'exit {code}'}", flush=True)
            for name in failed:
                print(f"         failed: {name}", flush=True)
            if code != 0:
                args.keep.mkdir(parents=True, exist_ok=True)
                kept = args.keep / f"run-{run}.txt"
                kept.write_text(output)
                print(f"         its output: {kept}", flush=True)
    finally:
        stop(load)
    print(f"soak: {args.runs - failed_runs} of {args.runs} runs green")
    for name, count in failures.most_common():
        print(f"  {count:2} x {name}")
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main())
