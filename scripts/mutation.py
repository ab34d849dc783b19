"""Mutation testing of the core, module by module: how many planted bugs the tests that cover a module catch.

Runs mutmut (``pip install mutmut``; 3.x) once per module, each in a scratch copy of the repository, with only
the tests that cover that module, and prints the kill rate per module and every surviving mutant::

    python scripts/mutation.py                      # every module of CORE, one after the other
    python scripts/mutation.py estimate scheduler   # some of them
    python scripts/mutation.py --budget 900 --jobs 2 referee

A mutant is *killed* when a test fails (or times out) with it, *survived* when every selected test passes,
*no tests* when no selected test reaches the mutated function (a survivor too: no test would see the bug).
A module whose run hits ``--budget`` is reported with the mutants it checked and marked partial. Reviewed
survivors, with the test that now kills them or the reason they are equivalent, are in docs/mutation.md.
The scratch copy is left in ``--work`` so that ``mutmut show NAME`` there prints a survivor's diff.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CORE: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (module, the tests that cover it)
    "cabanga": ("arena/games/cabanga/rules.py", ("tests/games/test_cabanga.py", "tests/games/test_cabanga_exact.py",
                                                 "tests/games/test_conformance.py")),
    "lama": ("arena/games/lama/rules.py", ("tests/games/test_lama.py", "tests/games/test_lama_exact.py",
                                           "tests/games/test_conformance.py")),
    "base": ("arena/games/base.py", ("tests/games",)),
    "referee": ("arena/core/referee.py", ("tests/test_referee.py", "tests/test_referee_exact.py",
                                          "tests/test_hiding.py::test_g2_matches_that_"
                                          "differ_only_in_hidden_cards_send_the_other_seats_the_same_messages")),
    "deals": ("arena/core/deals.py", ("tests/test_deal_ledger.py",
                                      "tests/test_deals.py::test_the_ledger_gives_each_rotation_its_own_process")),
    "scheduler": ("arena/ladder/scheduler.py", ("tests/test_scheduler.py",)),
    "ratings": ("arena/ladder/ratings.py", ("tests/test_ratings.py",)),
    "estimate": ("arena/ladder/estimate.py", ("tests/test_estimate.py", "tests/test_compare.py")),
    "store": ("arena/ladder/store.py", ("tests/test_store.py",)),
    "wire": ("arena/protocol/codec.py", ("tests/test_wire.py",)),
}

KILLED = {"killed", "timeout", "segfault"}
LINE = re.compile(r"^\s*(?P<name>\S+): (?P<status>.+)$")


@dataclass
class Figures:
    module: str
    statuses: Counter[str]
    survivors: list[str]
    partial: bool
    seconds: float

    @property
    def checked(self) -> int:
        return sum(n for status, n in self.statuses.items() if status != "not checked")

    @property
    def killed(self) -> int:
        return sum(n for status, n in self.statuses.items() if status in KILLED)

    def line(self) -> str:
        rate = f"{self.killed / self.checked:6.1%}" if self.checked else "   n/a"
        total = sum(self.statuses.values())
        note = " (partial: the budget ran out)" if self.partial else ""
        return (f"{self.module:28} {rate} killed  {self.killed}/{self.checked} checked of {total}"
                f"  {self.seconds:5.0f} s{note}")


def scratch_copy(work: Path, name: str, module: str, tests: tuple[str, ...], extra: list[str]) -> Path:
    """Copy what the tests need into ``work/name`` and configure mutmut there for ``module`` alone."""
    where = work / name
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for part in ("arena", "tests", "bots", "pyproject.toml", "README.md", "docs"):
        source = ROOT / part
        if source.is_dir():
            shutil.copytree(source, where / part, ignore=shutil.ignore_patterns("__pycache__", "*.db"))
        elif source.exists():
            shutil.copy2(source, where / part)
    pyproject = (where / "pyproject.toml").read_text()
    pyproject = re.sub(r"(?ms)^\[tool\.mutmut\].*?(?=^\[|\Z)", "", pyproject)

    def toml_list(items: tuple[str, ...] | list[str]) -> str:
        return "[" + ", ".join(f'"{item}"' for item in items) + "]"

    pyproject += (f"\n[tool.mutmut]\nsource_paths = [\"arena/\"]\nonly_mutate = {toml_list([module])}\n"
                  f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
                  f"pytest_add_cli_args = {toml_list(['-q', '-x', '-p', 'no:cacheprovider', *extra])}\n"
                  "use_git_change_detection = false\n")
    (where / "pyproject.toml").write_text(pyproject)
    return where


def run_module(work: Path, name: str, budget: float, jobs: int, extra: list[str]) -> Figures:
    module, tests = CORE[name]
    where = scratch_copy(work, name, module, tests, extra)
    # mutmut puts its mutants first on the path itself; a PYTHONPATH (even to the mutants) hides its trampolines
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"} | {"CI": "true"}
    start = time.monotonic()
    partial = False
    with open(where / "mutmut.log", "w") as log:
        process = subprocess.Popen(["mutmut", "run", "--max-children", str(jobs)], cwd=where, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            partial = True
            os.killpg(process.pid, 15)
            process.wait()
    seconds = time.monotonic() - start
    listing = subprocess.run(["mutmut", "results", "--all", "true"], cwd=where, env=env, capture_output=True,
                             text=True).stdout
    statuses: Counter[str] = Counter()
    survivors = []
    for text in listing.splitlines():
        match = LINE.match(text)
        if not match or "__mutmut_" not in match["name"]:
            continue
        status = match["status"].strip()
        statuses[status] += 1
        if status in ("survived", "no tests"):
            survivors.append(f"{match['name']}: {status}")
    return Figures(module, statuses, survivors, partial or bool(statuses["not checked"]), seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", metavar="MODULE",
                        help=f"some of {', '.join(CORE)} (default: all)")
    parser.add_argument("--budget", type=float, default=1800, help="seconds per module (default 1800)")
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (default 1)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/arena-mutation"), help="scratch folder")
    parser.add_argument("--pytest", action="append", default=[], help="one more pytest argument")
    args = parser.parse_args()
    unknown = [name for name in args.modules if name not in CORE]
    if unknown:
        parser.error(f"unknown modules {unknown}: choose among {', '.join(CORE)}")
    if shutil.which("mutmut") is None:
        print("mutmut is not installed: pip install mutmut", file=sys.stderr)
        return 2
    figures = []
    for name in args.modules or list(CORE):
        result = run_module(args.work, name, args.budget, args.jobs, args.pytest)
        figures.append(result)
        print(result.line(), flush=True)
    print()
    for result in figures:
        if result.survivors:
            print(f"survivors in {result.module} (mutmut show NAME in {args.work}):")
            for survivor in result.survivors:
                print(f"  {survivor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
