"""arena.protocol.transport: the gRPC settings are in place before gRPC starts, and yield to the operator's own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.protocol import transport

SHOW = "import os, arena.sdk, arena.protocol.server, grpc; print(repr(os.environ.get('GRPC_EXPERIMENTS')))"


@pytest.mark.parametrize(("given", "expected"), [
    (None, transport.GRPC_EXPERIMENTS),
    ("", ""),  # set to nothing: gRPC's own defaults
    ("-event_engine_client", "-event_engine_client"),
])
@pytest.mark.process
def test_the_arena_sets_grpc_experiments_unless_the_operator_did(given: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    if given is not None:
        env["GRPC_EXPERIMENTS"] = given
    out = subprocess.run([sys.executable, "-c", SHOW], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == repr(expected)
    assert "experiment" not in out.stderr.lower()  # gRPC knows every name we turn off


def test_grpc_is_imported_after_the_settings_in_every_module_that_uses_it() -> None:
    """The C core reads GRPC_EXPERIMENTS once: a module importing grpc before arena.protocol.transport would miss it."""
    from pathlib import Path

    root = Path(transport.__file__).parent.parent  # the arena package, every subpackage included
    checked = 0
    for path in sorted(root.rglob("*.py")):
        if path.parent.name == "v2" or "_pb2" in path.name:  # generated: imported after the settings by its users
            continue
        text = path.read_text(encoding="utf-8")
        if "\nimport grpc" not in text and "\nfrom grpc" not in text:
            continue
        first_grpc = min(i for i in (text.find("\nimport grpc"), text.find("\nfrom grpc")) if i >= 0)
        first_settings = min(i for i in (text.find("from arena.protocol import transport"), len(text)) if i >= 0)
        assert first_settings < first_grpc, path.relative_to(root)
        checked += 1
    assert checked >= 1  # the server (the SDK speaks the stream by arena.protocol.http2)


@pytest.mark.process
def test_a_python_bot_does_not_load_grpcs_library() -> None:
    """The SDK speaks the stream by arena.protocol.http2 alone: gRPC's C core would cost every bot process 13 ms at
    its start and some 10 MiB."""
    code = ("import sys, arena.games.cabanga.bots.random.bot, arena.games.lama.bot\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'grpc'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
