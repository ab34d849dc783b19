"""The adversarial suite's one arena (see adversarial_harness.py), shared by its tests.

The bots get the strongest isolation the machine gives; ARENA_TEST_SANDBOX=limits runs the suite without the
jail (as on a machine without bubblewrap).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest
from adversarial_harness import Arena, start_time
from costs import starts_processes

from arena.launch.pool import ProcessPool
from arena.launch.runner import serving
from arena.launch.sandbox import choose_sandbox


@pytest.fixture(scope="session")
@starts_processes
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    log_dir = tmp_path_factory.mktemp("bot-logs")
    with asyncio.Runner() as runner:
        context = serving()
        server = runner.run(context.__aenter__())
        forced = os.environ.get("ARENA_TEST_SANDBOX")
        pool = ProcessPool(server, log_dir=log_dir, keep=3, sandbox=choose_sandbox(forced) if forced else None)
        arena = Arena(runner, server, pool, log_dir)
        try:
            yield arena
        finally:
            runner.run(pool.close())
            runner.run(context.__aexit__(None, None, None))
    # no bot process survives: its pid is gone, or now names a process that started later (a reused pid)
    survivors = {pid for pid, started in arena.pids.items() if start_time(pid) == started}
    assert not survivors, f"bot processes outlived the arena: {sorted(survivors)}"
