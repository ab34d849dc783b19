"""A Ray cluster of nodes on this machine, for the cluster's tests and benchmarks (``tests/test_cluster.py``,
``benchmarks/cluster.py``).

Every node is a ``ray start --block`` process in a process group of its own, with one CPU, in a network
namespace that holds only a loopback (:mod:`arena.launch.netns`): Ray would otherwise put some of its processes on the
machine's network address. Stopping the cluster kills every node's group, then every process that left it
(Ray's workers start sessions of their own), then removes the cluster's folder. Token authentication is off
unless the environment says otherwise: Ray turns it on for a cluster started where ``~/.ray/auth_token``
exists (any local ``ray.init()`` writes one), and then only drivers that read the same token get in.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.launch import netns
from arena.launch.procs import descendants, processes_naming

DRIVER_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 for a driver: it connects on loopback. Nodes refuse to join a cluster with it."""


class LocalClusterError(RuntimeError):
    """The local cluster did not come up."""


def free_port() -> int:
    """Return a TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalCluster:
    """A Ray head and worker nodes on this machine, each a `ray start --block` process group."""

    folder: Path
    """Ray's temp folder: its sockets live there, and a Unix socket path must be short."""
    logs: Path
    """Where each node's standard error goes (``node-N.err``)."""
    env: dict[str, str]
    prefix: list[str]
    """Runs a program in the cluster's network namespace (loopback only): every node and every driver; empty
    when this process runs in it already."""
    port: int = field(default_factory=free_port)
    nodes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    head_cpus: int = 1
    """CPUs the head node says it has (every other node: one), so a node can hold more than one table."""

    @property
    def driver_env(self) -> dict[str, str]:
        """The environment of a process that connects to the cluster (the ladder): loopback only, as Ray
        otherwise replaces 127.0.0.1 by this machine's address on the network."""
        return {**self.env, DRIVER_ONLY: "0"}

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, head: bool) -> subprocess.Popen[bytes]:
        where = ["--head", f"--port={self.port}", f"--temp-dir={self.folder}", "--include-dashboard=false"] if head \
            else [f"--address={self.address}"]
        node = subprocess.Popen(
            [*self.prefix, sys.executable, "-m", "ray.scripts.scripts", "start", *where,
             f"--num-cpus={self.head_cpus if head else 1}",
             "--node-ip-address=127.0.0.1", "--disable-usage-stats", "--block"],
            env=self.env, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=open(self.logs / f"node-{len(self.nodes)}.err", "wb"))  # noqa: SIM115 (closed with the node)
        self.nodes.append(node)
        return node

    def wait_for_nodes(self, count: int, timeout: float = 90) -> None:
        """Wait until the cluster has ``count`` nodes alive (asked by a child process: Ray is not imported
        here). Raises :class:`LocalClusterError` with the nodes' last words when it does not in time."""
        end = time.monotonic() + timeout
        script = ("import ray, sys; ray.init(address=sys.argv[1], logging_level='ERROR'); "
                  "print(sum(1 for n in ray.nodes() if n['Alive']))")
        said = ""
        while time.monotonic() < end:
            result = subprocess.run([*self.prefix, sys.executable, "-c", script, self.address], env=self.driver_env,
                                    capture_output=True, text=True, timeout=60)
            if result.returncode == 0 and result.stdout.strip().splitlines()[-1:] == [str(count)]:
                return
            said = result.stderr[-1500:]
            time.sleep(1)
        said += "".join(path.read_text(errors="replace")[-1500:] for path in sorted(self.logs.glob("node-*.err")))
        raise LocalClusterError(f"the cluster did not reach {count} nodes: {said}")

    def kill(self, node: subprocess.Popen[bytes]) -> None:
        """Kill a node at once: its process group, and every process below it (Ray's workers, a node's actor
        among them, start sessions of their own, so the group alone would leave them playing for a while)."""
        below = descendants(node.pid)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(node.pid, signal.SIGKILL)
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        node.wait()

    def stop(self) -> None:
        """Kill every node, then any Ray process of this cluster that left its node's group (Ray's workers
        start sessions of their own): every process naming the cluster's folder."""
        for node in reversed(self.nodes):
            self.kill(node)
        end = time.monotonic() + 15
        while time.monotonic() < end:
            left = [pid for pid in processes_naming(str(self.folder)) if pid != os.getpid()]
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)


def remove_until_gone(folder: Path) -> None:
    """Remove ``folder``: a dying Ray process may still make its session folders, so until it stays gone."""
    end = time.monotonic() + 10
    while time.monotonic() < end:
        shutil.rmtree(folder, ignore_errors=True)
        time.sleep(1)
        if not folder.exists():
            break


@contextlib.contextmanager
def local_cluster(nodes: int, logs: Path, env: Mapping[str, str], *, namespace: bool = True,
                  head_cpus: int = 1) -> Iterator[LocalCluster]:
    """Start a head (with ``head_cpus`` CPUs) and ``nodes - 1`` more nodes, each with one CPU, and wait for them;
    yield the cluster; then stop it (every process of it) and remove its folder.

    ``env`` is the nodes' environment. With ``namespace`` the cluster runs in a loopback-only network
    namespace of its own (root), and its drivers must run through :attr:`LocalCluster.prefix`; without it,
    the caller runs in one already. Raises :class:`LocalClusterError` when a node does not come up, and
    :class:`arena.launch.netns.NetnsError` when no namespace can be made.
    """
    folder = Path(tempfile.mkdtemp(prefix="arena-ray-"))
    node_env = {"RAY_AUTH_MODE": "disabled", **{k: v for k, v in env.items() if k != DRIVER_ONLY}}
    with contextlib.ExitStack() as stack:
        stack.callback(remove_until_gone, folder)
        prefix = stack.enter_context(netns.loopback_only("arena-ray")) if namespace else []
        cluster = LocalCluster(folder, logs, node_env, prefix, head_cpus=head_cpus)
        stack.callback(cluster.stop)
        for index in range(nodes):
            cluster.start(head=index == 0)  # the head first: a node joins a running cluster
            cluster.wait_for_nodes(index + 1)
        yield cluster
