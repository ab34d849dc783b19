"""What the arena and its supervisor (``supervisor.c``) both know: the one source of these values.

The supervisor is a C program; its header ``supervisor.h`` is generated from this module by
``python scripts/gen_supervisor_h.py`` and committed, and tests/test_native.py fails when the two differ. Change a
value here, regenerate, rebuild (``pip install .``, or the next start of an editable install): never by hand in
the header.

Standard library only, and nothing but values: setup.py and the generator read it without the package.
"""

from __future__ import annotations

MIB = 1 << 20

# ------------------------------------------------------------------------------------------ exit statuses
CPU_EXIT_CODE = 152
"""The supervisor's exit status when it killed the bot for spending more CPU in a match than allowed: 128 +
SIGXCPU (24 on Linux), as a shell shows a process that SIGXCPU ended."""
START_FAILED_EXIT_CODE = 126
"""The supervisor's exit status when it could not start the bot: its cgroup, its stage or the fork failed (a line
on stderr says which)."""
RUN_FAILED_EXIT_CODE = 127
"""The exit status of the bot's process when its command could not be run: the jail's set-up, the uid drop, a
limit or the exec failed (a line on stderr says which)."""
USAGE_EXIT_CODE = 2
"""The supervisor's exit status for a bad command line."""

# ------------------------------------------------------------------------------------------------- timing
STOP_GRACE = 0.5
"""Seconds between the SIGTERM and the SIGKILL with which the supervisor stops a bot."""
CPU_POLL = 0.25
"""Seconds between two looks at the bot's CPU time."""

# ------------------------------------------------------------------------------------------ names and uids
JAIL_SOCKET = "/run/arena/arena.sock"
"""Where a jailed bot finds its own socket to the arena."""
CGROUP_PREFIX = "arena-bot-"
"""Name of a bot process's cgroup, followed by the pid of the supervisor that made it."""
STAGE_PREFIX = "arena-jail-"
"""The supervisor's empty folder in /tmp where its bot's child stages what the jail shows (``--drop-uid``),
followed by the supervisor's pid."""
HOST_UID_BASE = 2_100_000_000
"""Where the arena runs as root, a jailed bot process runs as host uid ``HOST_UID_BASE + its supervisor's pid``
(and the same gid): a uid of its own, owning nothing, that no other process of the machine has. The range
reserved is ``HOST_UID_BASE`` to ``HOST_UID_BASE + HOST_UID_SPAN - 1``."""
HOST_UID_SPAN = 1 << 22
"""Linux's largest ``pid_max``: every live supervisor's pid gives a different uid."""

# ------------------------------------------------------------------------------ a bot's default limits
# (arena.launch.sandbox.Limits, and the supervisor's defaults for an option not given)
DEFAULT_MEMORY_MB = 1024
DEFAULT_CPU_SECONDS = 300
DEFAULT_OPEN_FILES = 256
DEFAULT_DISK_MB = 64
DEFAULT_PROCESSES = 128

# ------------------------------------------------------------------------------------ the jail's command
BWRAP_OPTIONS: dict[str, int] = {
    "--uid": 1, "--gid": 1, "--cap-drop": 1, "--hostname": 1, "--proc": 1, "--dev": 1, "--size": 1, "--perms": 1,
    "--tmpfs": 1, "--dir": 1, "--chdir": 1, "--remount-ro": 1, "--seccomp": 1,
    "--symlink": 2, "--setenv": 2, "--ro-bind": 2,
    "--unshare-all": 0, "--unshare-user": 0, "--disable-userns": 0, "--new-session": 0, "--die-with-parent": 0,
    "--clearenv": 0, "--unshare-ipc": 0, "--unshare-pid": 0, "--unshare-net": 0, "--unshare-uts": 0,
    "--unshare-cgroup": 0,
}
"""The bubblewrap options the arena writes (:func:`arena.launch.sandbox.jail_arguments`; tests/test_jail_proof.py
takes one namespace away with ``--unshare-uts``), each with how many values it takes. The supervisor reads the jail's
command by this list (it stages the ``--ro-bind`` sources) and refuses any other option, whose values it could not
tell from the next option."""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/")
"""Prefixes of the ``--ro-bind`` sources the supervisor passes to bubblewrap as they are: the system's runtime,
which any uid may read. Every other source is staged (bound by the supervisor, still root, where the bot's uid can
reach it)."""
