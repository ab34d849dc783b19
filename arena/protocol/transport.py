"""How gRPC moves bytes for the arena and the Python SDK: import this module before ``grpc``.

gRPC's C core reads the ``GRPC_EXPERIMENTS`` environment variable when it starts. Its default I/O layer
(EventEngine) reads and writes sockets on threads of its own and hands every completed operation over to the
thread that polls for completions: for a stream that carries one small message each way at a time, as the
arena's streams do, those hand-overs are most of the cost. :data:`GRPC_EXPERIMENTS` turns EventEngine off for
client, server and other endpoints, so the polling thread does the I/O itself. Measured on this project's
2-core machines (``python benchmarks/protocol.py`` prints both), a bare stream round trip takes about a third
less time and CPU on each side.

An operator who sets ``GRPC_EXPERIMENTS`` (even to nothing) keeps their own choice. The arena passes the value
on to the bots it launches, so bots on gRPC's C core (Python, C++, Ruby...) get it too; others ignore it.
"""

from __future__ import annotations

import os

GRPC_EXPERIMENTS = "-event_engine_client,-event_engine_listener,-event_engine_for_all_other_endpoints"
"""gRPC experiments turned off: EventEngine for client and server sockets (see the module's docstring)."""

os.environ.setdefault("GRPC_EXPERIMENTS", GRPC_EXPERIMENTS)


def experiments() -> str:
    """Return the ``GRPC_EXPERIMENTS`` this process runs with (to hand on to launched bots)."""
    return os.environ.get("GRPC_EXPERIMENTS", "")
