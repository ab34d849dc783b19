"""A private network namespace holding only a loopback, for local clusters in tests and benchmarks.

Ray picks the machine's own network address for some of its processes (its runtime-environment agent, its
client server) even when every node is started with ``--node-ip-address=127.0.0.1``. Run inside a network
namespace of its own, a local cluster has no address but loopback to pick, so none of its traffic can reach
anything but 127.0.0.1. Making one takes root and iproute2 (``ip netns``), as in CI.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator


class NetnsError(RuntimeError):
    """No private network namespace can be made here (not root, or no ``ip``)."""


def available() -> str:
    """Return why a private network namespace cannot be made here, or "" when it can."""
    if os.geteuid() != 0:
        return "making a network namespace takes root"
    if shutil.which("ip") is None:
        return "iproute2's ip command is missing (apt-get install iproute2)"
    if shutil.which("nsenter") is None:
        return "util-linux's nsenter command is missing (apt-get install util-linux)"
    return ""


@contextlib.contextmanager
def loopback_only(prefix: str = "arena") -> Iterator[list[str]]:
    """Make a network namespace with only a loopback (up); yield the command prefix that runs a program in it.

    The namespace is deleted on leaving, which ends nothing: stop the processes started in it first. Raises
    :class:`NetnsError` where it cannot be made.
    """
    why = available()
    if why:
        raise NetnsError(why)
    name = f"{prefix}-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        subprocess.run(["ip", "netns", "add", name], check=True, capture_output=True, text=True)
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True,
                       capture_output=True, text=True)
    except subprocess.CalledProcessError as exc:
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            subprocess.run(["ip", "netns", "delete", name], capture_output=True)
        raise NetnsError(f"cannot make network namespace {name}: {exc.stderr.strip()}") from None
    try:
        # nsenter, not `ip netns exec`: that also remounts /sys, which hides the cgroup hierarchies, so the bots of
        # a cluster's tables would lose the cgroups (and the strict jail) they have outside the namespace
        yield ["nsenter", f"--net=/run/netns/{name}", "--"]
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)
