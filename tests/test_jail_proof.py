"""`strict` is proved, not assumed: take away one protection of the jail, and the start-up probe names what no
longer holds. Each case runs the real probe (a jail through the supervisor, as a bot) with one thing removed:
the uid drop, a namespace, the whole filter, or one call of the filter.

Layers that another layer covers are not load-bearing alone, and are not listed: `--cap-drop ALL` and the
read-only `/dev` (uid 65534 in its namespace has no capability and cannot write bubblewrap's `/dev` anyway),
`--disable-userns` (the filter refuses `unshare` and namespace clones too).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from arena.launch import jailfilter
from arena.launch.sandbox import Sandbox, detect_sandbox, probe_command, run_probe

pytestmark = pytest.mark.process

MACHINE = detect_sandbox()
CI = os.environ.get("CI") == "true"
NUMBERS = jailfilter.syscall_numbers([*jailfilter.denied_calls(), "ptrace", "clone", "personality"])
strict = pytest.mark.skipif(MACHINE.level != "strict" and not (CI and os.geteuid() == 0) and not MACHINE.broken_jail,
                            reason=f"no strict sandbox here: {MACHINE.describe()}")


def without(command: Sequence[str], *tokens: str) -> list[str]:
    """Return ``command`` without the first run of ``tokens`` (an option and its value)."""
    for i in range(len(command) - len(tokens) + 1):
        if tuple(command[i:i + len(tokens)]) == tokens:
            return [*command[:i], *command[i + len(tokens):]]
    raise AssertionError(f"{tokens} not in the command")


@strict
def test_the_whole_jail_passes_its_probe() -> None:
    assert MACHINE.level == "strict", MACHINE.describe()
    assert run_probe(probe_command(MACHINE, NUMBERS), own_uids=MACHINE.drop_uid) == ""


@strict
@pytest.mark.parametrize(("removed", "named"), [
    (("--unshare-all",), "own processes only"),
    (("--seccomp",), "seccomp filter on"),
], ids=["namespaces", "filter"])
def test_a_jail_without_one_protection_fails_its_probe(removed: tuple[str, ...], named: str) -> None:
    command = probe_command(MACHINE, NUMBERS)
    if removed == ("--seccomp",):
        command = without(command, "--seccomp", str(MACHINE.seccomp))
    else:  # the UTS namespace stays, which the jail's hostname needs: the PID namespace goes
        at = command.index("--unshare-all")
        command = [*command[:at], "--unshare-uts", *command[at + 1:]]
    failure = run_probe(command, own_uids=MACHINE.drop_uid)
    # said by the probe in the jail: a supervisor refusing the command names the probe's code in its own message
    assert failure.startswith("jail fails: ") and named in failure, failure


@strict
@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop is the root arena's")
def test_a_jail_of_a_root_arena_without_the_uid_drop_fails_its_probe() -> None:
    failure = run_probe(without(probe_command(MACHINE, NUMBERS), "--drop-uid"), own_uids=True)
    # from inside, the kernel lets host root's jail open the global sysctls; from outside, it is host uid 0
    assert failure.startswith("jail fails: /proc/sys read-only") or "host" in failure, failure


@strict
# (userfaultfd is not among them: where vm.unprivileged_userfaultfd is 0, the kernel refuses it with EPERM by
# itself, and the probe, which sees only the refusal, cannot tell the filter's from the kernel's)
@pytest.mark.parametrize("call", ["keyctl", "io_uring_setup", "ptrace", "mount", "unshare", "bpf", "perf_event_open",
                                  "process_vm_readv", "clone3"])
def test_a_filter_without_one_of_its_calls_fails_the_probe_naming_it(call: str) -> None:
    built = jailfilter.build(without=[call])
    try:
        jail = Sandbox(MACHINE.isolation, MACHINE.cgroups, bwrap=MACHINE.bwrap, seccomp=built.path,
                       drop_uid=MACHINE.drop_uid)
        failure = run_probe(probe_command(jail, NUMBERS), own_uids=MACHINE.drop_uid)
    finally:
        os.remove(built.path)
    named = "ptrace refused" if call == "ptrace" else f"{call}() refused"
    assert named in failure, failure
    assert failure.count("refused") == 1, failure  # that call, and nothing else
