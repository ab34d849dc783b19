"""What one supervisor costs: its memory while it supervises a sleeping bot, and its start-to-end time.

    python benchmarks/supervisor.py [--starts 50]

For the supervisor (arena/launch/supervisor.c: this machine's, or the build ARENA_SUPERVISOR names), with rlimits
only (no cgroups, no jail: the supervisor's own cost):

  private dirty   the supervisor's private dirty memory (Private_Dirty of /proc/PID/smaps_rollup), KiB: what
                  each bot process adds that no other process shares
  pss             its proportional set size (Pss), KiB: private memory plus its share of shared pages
  start           mean wall time of ``supervisor -- /bin/true`` over ``--starts`` runs, ms: start, fork, exec,
                  reap, clear up, exit

A field of 100 bot processes runs 100 supervisors: multiply.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's supervisor, not an installed one

from arena.launch import native


def rollup(pid: int) -> dict[str, int]:
    """Return the fields of /proc/PID/smaps_rollup in KiB."""
    fields: dict[str, int] = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1])
    return fields


def memory(supervisor: native.Supervisor) -> dict[str, int]:
    """Return the smaps_rollup of a supervisor whose bot sleeps (read once it has settled)."""
    proc = subprocess.Popen([*supervisor.prefix, "--", "sleep", "30"], stdin=subprocess.PIPE)
    try:
        time.sleep(0.5)  # started, forked the bot, waiting in its loop
        return rollup(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the supervisor stops its bot
        proc.wait(timeout=10)


def start_ms(supervisor: native.Supervisor, starts: int) -> list[float]:
    """Return the wall times of ``starts`` runs of ``supervisor -- /bin/true``, ms."""
    times = []
    for _ in range(starts):
        began = time.perf_counter()
        proc = subprocess.Popen([*supervisor.prefix, "--", "/bin/true"], stdin=subprocess.PIPE)
        proc.wait(timeout=30)  # its input stays open until the bot has ended
        times.append((time.perf_counter() - began) * 1000)
        assert proc.stdin is not None
        proc.stdin.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--starts", type=int, default=50, help="runs of `supervisor -- /bin/true` each")
    args = parser.parse_args()
    supervisor = native.default_supervisor()
    if not supervisor.available:
        sys.exit(f"no supervisor here: {supervisor.why_not}")
    print(f"{'private dirty KiB':>18} {'pss KiB':>9} {'rss KiB':>9} {'start ms (mean, min, max)':>27}")
    used = memory(supervisor)
    times = start_ms(supervisor, args.starts)
    print(f"{used['Private_Dirty']:>18} {used['Pss']:>9} {used['Rss']:>9} "
          f"{statistics.mean(times):>11.1f} {min(times):>7.1f} {max(times):>7.1f}")


if __name__ == "__main__":
    main()
