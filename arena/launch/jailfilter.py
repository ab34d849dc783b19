"""The seccomp filter of the bot jail: the system calls a jailed bot may not make.

Built with libseccomp (``pyseccomp``, the PyPI binding over Debian's ``libseccomp2``) in the arena's process,
exported as a BPF program to a file, and handed by the supervisor to bubblewrap (``bwrap --seccomp FD``),
which loads it as the last step before it executes the bot: bubblewrap itself is not filtered, the bot and
everything it starts are, for good (a filter can only be added to, never lifted).

The list follows Flatpak's and Docker's default profiles, keeping what fits a process that plays cards over
one socket: the calls that reach kernel-wide state (keys, modules, kexec, swap, clocks, accounting), that
inspect or change other processes (ptrace and friends), that grow the kernel's attack surface (io_uring,
BPF, userfaultfd, perf) and that rebuild the jail from inside (the mount API, namespaces). Everything else is
allowed. A call by another architecture's numbers (``int 0x80`` on x86-64, the x32 numbers) kills the process:
it is libseccomp's default for a foreign architecture.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import tempfile
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from arena.launch import tempdir

DENIED: dict[str, tuple[str, ...]] = {
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "kernel keyring": ("keyctl", "add_key", "request_key"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
                        "process_madvise"),
    "kernel attack surface": ("perf_event_open", "bpf", "userfaultfd", "lookup_dcookie", "fanotify_init",
                              "open_by_handle_at", "name_to_handle_at", "uselib", "modify_ldt", "iopl", "ioperm",
                              "vm86", "vm86old", "syslog"),
    "mounts": ("mount", "umount", "umount2", "fsopen", "fsmount", "fsconfig", "fspick", "open_tree", "move_mount",
               "mount_setattr", "pivot_root", "chroot"),
    "namespaces": ("unshare", "setns"),
    "the machine": ("kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                    "create_module", "query_module", "get_kernel_syms", "reboot", "swapon", "swapoff", "acct",
                    "quotactl", "quotactl_fd", "nfsservctl", "_sysctl", "sysfs", "ustat", "settimeofday",
                    "stime", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
                    "vhangup"),
    "memory policy": ("mbind", "set_mempolicy", "migrate_pages", "move_pages"),
}
"""The calls the filter refuses (EPERM), by what they would reach."""

NO_SUCH_CALL = ("clone3", "io_uring_setup", "io_uring_enter", "io_uring_register")
"""Refused as if the kernel did not have them (ENOSYS): libraries then fall back to older calls (glibc from
``clone3`` to ``clone``, whose flags the filter can see)."""

NAMESPACE_FLAGS = {
    "CLONE_NEWTIME": 0x00000080, "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000, "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000, "CLONE_NEWNET": 0x40000000,
}
"""``clone`` is refused with any of these flags: a bot may start threads and processes, not namespaces."""

TIOCSTI, TIOCLINUX = 0x5412, 0x541C
"""Terminal ioctls that push input into a terminal (Flatpak refuses them too)."""

PERSONALITY_DEFAULT = 0
"""The one ``personality`` a bot may set (Linux's default); any other (say, READ_IMPLIES_EXEC) is refused."""


class FilterError(RuntimeError):
    """The filter cannot be built here (no libseccomp, or an architecture it does not know)."""


@dataclass(frozen=True, slots=True)
class JailFilter:
    """A built filter: the file holding its BPF program, and how many calls it refuses."""

    path: str
    calls: int

    def describe(self) -> str:
        return f"seccomp filter ({self.calls} system calls refused)"


def denied_calls() -> list[str]:
    """Return every call the filter refuses outright (not counting clone's flags, ioctl and personality)."""
    return sorted({call for calls in DENIED.values() for call in calls} | set(NO_SUCH_CALL))


def syscall_numbers(names: list[str]) -> dict[str, int]:
    """Return this architecture's number of each call in ``names`` that it has (for the probe's tries)."""
    seccomp = _library()
    numbers = {name: _number(seccomp, name) for name in names}
    return {name: number for name, number in numbers.items() if number is not None}


def build(folder: str | None = None, *, without: Collection[str] = ()) -> JailFilter:
    """Build the filter and write its BPF program to a new file (in ``folder``, default the temporary
    folder); return it. ``without``: calls left out of it (for the tests that show each refusal is checked).
    Raises :class:`FilterError`."""
    seccomp = _library()
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        refused = 0
        for name in denied_calls():
            if name in without:
                continue
            number = _number(seccomp, name)
            if number is None:
                continue  # not a call of this architecture
            action = errno.ENOSYS if name in NO_SUCH_CALL else errno.EPERM
            rules.add_rule(seccomp.ERRNO(action), number)
            refused += 1
        for flag in NAMESPACE_FLAGS.values():
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        for request in (TIOCSTI, TIOCLINUX):
            rules.add_rule(seccomp.ERRNO(errno.EPERM), "ioctl",
                           seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "personality",
                       seccomp.Arg(0, seccomp.NE, PERSONALITY_DEFAULT))
        # a new file of a random name (never one that someone else could have put there first), gone with
        # this process
        tempdir.remove_stale("seccomp", folder)
        fd, path = tempfile.mkstemp(prefix=tempdir.prefix("seccomp"), suffix=".bpf", dir=folder)
        atexit.register(_remove, path)
        with os.fdopen(fd, "wb") as file:
            rules.export_bpf(file)
        os.chmod(path, 0o644)
    except (OSError, ValueError, RuntimeError) as exc:
        raise FilterError(f"cannot build the seccomp filter: {exc}") from None
    return JailFilter(path, refused + 3)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.remove(path)


def _number(seccomp: Any, name: str) -> int | None:
    try:
        number = int(seccomp.resolve_syscall(seccomp.Arch.NATIVE, name))
    except (ValueError, OSError):
        return None
    return number if number >= 0 else None


def _library() -> Any:
    """Return the ``pyseccomp`` module (untyped)."""
    try:
        import pyseccomp  # type: ignore[import-untyped]
    except (ImportError, OSError) as exc:
        raise FilterError(f"libseccomp is not available ({exc}): pip install pyseccomp, and the system's "
                          "libseccomp2 (Debian/Ubuntu: apt-get install libseccomp2)") from None
    return pyseccomp
