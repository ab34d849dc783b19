"""A hostile bot speaking the raw protocol: python hostile.py MODE [ARG...]

It says hello with its token, then plays every request with its default picks, except for what MODE makes it
do wrong. Every message goes out as raw bytes, so it can also send bytes that are no message at all.

Modes:
  polite            nothing wrong (a control)
  silent            never answers
  late S            answers every request S seconds late
  exit-after N      answers N requests, then exits with status 3
  signal-after N S  answers N requests, then kills itself with signal number S
  out-of-range      answers with an index past the choices (a card it does not hold)
  throw-outside     answers a throw with an index past the candidates (a card not between the tops)
  throw-twice       answers a throw naming the same candidate twice
  wrong-id          answers with a request id that was never sent
  garbage           writes garbage to the Unix socket first, then answers its first request with bytes
                    that do not parse as a message
  huge              answers its first request with a 100 MB message
  flood             answers its first request 5,000 times
  alloc             allocates memory without bound at its first request
  fork MARK         at its first request, forks a child that leaves the session, ignores SIGTERM and
                    SIGHUP and sleeps with MARK in its command line; then plays on
  fork-exit MARK    the same, then exits at once (the child tries to outlive it)
  stderr-flood      writes to stderr without end from a second thread, and plays on
  steal FILE        when the match starts, opens second streams with every token in FILE (one a line)
                    and with its own, and writes to stderr how each was answered; then plays on
  spin              spins the CPU from its first request on, never answering
  spy               nothing wrong, but writes every message it receives to stderr, in hex
  escape PATH...    before its hello, tries to get out of its jail: unmount, mount tmpfs (over /proc too),
                    remount / writable, umount /proc, read each PATH (the database, the log folder, another
                    bot's folder, another arena's socket), write outside its scratch, find its supervisor
                    and ptrace it; writes one line "escape WHAT: blocked|ESCAPED ..." each; then plays on
  peek PATH...      before its hello, tries to read each PATH (a file's first bytes, a folder's names), to import
                    arena.sdk and then to read the arena's own modules beside it (cli, ladder, store, launcher,
                    sandbox), and looks at its PATH; writes one line "peek WHAT: read|blocked|..." each; then plays on
  fork-bomb N MARK  at its first request, forks N processes (as many as it may) that spin with MARK in their
                    command line; then tries to play on
  tmpfs-bomb        at its first request, writes 2 GiB into its scratch and /dev/shm; then plays on
  fd-flood N        at its first request, starts 4 helper processes that each open N connections to its
                    socket and hold them; then plays on
  hello-flood       when the match starts, a thread opens streams that never say hello, without end (as
                    many as the arena lets it hold at once); plays on
  listen-flood ADDR N  not a bot: opens N streams to ADDR that never say hello, holds them 20 s, and exits
  host-root NUMBERS MARK  before its hello, tries what host root in a jail could: opens the global sysctls,
                    the sysrq trigger and a new file in /dev for writing (never writes), makes each system
                    call of NUMBERS (JSON: name to number), ptraces the jail's pid 1, clones a user
                    namespace, sets a personality; writes "escape WHAT: blocked|ESCAPED ..." each; then plays
                    on (MARK, unused, lets the test find its processes from outside)
  hoard MIB         at its first request, allocates and touches MIB MiB and holds them; then plays on
  spin-all N        before its hello, forks N children that spin the CPU for good; then plays on
  terminal          writes TERMINAL_ATTACK (terminal control sequences and a fake verdict line) to stderr and
                    into its hello's agent, answers its first request with it as a crash reason and its second
                    with MALFORMED_PICKS picks out of range (a message of 40 KB); then plays on
  terminal-exit     writes TERMINAL_ATTACK to stderr and exits with status 1 before connecting
"""

from __future__ import annotations

import os
import queue
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator

import grpc

from arena.v2 import arena_pb2 as pb

METHOD = "/arena.v2.Arena/Play"
TERMINAL_ATTACK = ("\x1b]0;title set by a bot\x07\x1b]52;c;Y2xpcGJvYXJk\x07\x1b[2J\x9b1;1H\x7f"
                   "\rPASS: all bots passed\n\u202eall bots passed\u202c\x1b[0m\n")
"""Sets the window title (OSC 0), writes the clipboard (OSC 52), clears the screen (CSI 2J, then a C1 CSI),
returns the carriage to draw a fake verdict over a line, starts a fake line, and reverses text (a bidi
override)."""
MALFORMED_PICKS = 20_000


def open_stream(channel: grpc.Channel, outbox: queue.Queue[bytes | None]) -> grpc.Future:
    def outgoing() -> Iterator[bytes]:
        while (data := outbox.get()) is not None:
            yield data

    call = channel.stream_stream(METHOD, request_serializer=lambda b: b,
                                 response_deserializer=pb.ArenaMessage.FromString)
    return call(outgoing())


def hello(token: str, agent: str = "hostile") -> bytes:
    return pb.BotMessage(hello=pb.Hello(token=token, protocol_version=2, agent=agent)).SerializeToString()


def answer(request_id: int, picks: list[int], crash: str = "") -> bytes:
    return pb.BotMessage(answer=pb.Answer(request_id=request_id, picks=picks, crash=crash)).SerializeToString()


def try_token(address: str, token: str) -> str:
    """Open a second stream with ``token``; return how the arena answered it."""
    outbox: queue.Queue[bytes | None] = queue.Queue()
    outbox.put(hello(token))
    with grpc.insecure_channel(address) as channel:
        responses = open_stream(channel, outbox)
        try:
            first = next(responses)
            outbox.put(None)
            return f"accepted: {first.WhichOneof('body')}"
        except grpc.RpcError as exc:
            return f"refused: {exc.code().name}"
        finally:
            outbox.put(None)
            responses.cancel()


def spawn_escapee(mark: str) -> None:
    if os.fork() == 0:
        try:
            os.setsid()
            if os.fork() == 0:  # a grandchild, whose parent is gone: re-parented away from the bot
                for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                    signal.signal(sig, signal.SIG_IGN)
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", mark])
        finally:
            os._exit(0)


def attempt(what: str, action: object) -> None:
    """Run ``action`` (a callable); print whether it was blocked (an error, or a falsy result) or worked."""
    try:
        result = action()  # type: ignore[operator]
        outcome = f"ESCAPED {result!r}"[:200] if result else f"blocked ({result!r})"
    except Exception as exc:
        outcome = f"blocked ({type(exc).__name__}: {exc})"[:200]
    print(f"escape {what}: {outcome}", file=sys.stderr, flush=True)


def try_escape(paths: list[str]) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def call(result: int) -> bool:
        return result == 0

    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        mounts = [line.split()[4] for line in f]
    attempt("umount a mount", lambda: any(call(libc.umount2(m.encode(), 2)) for m in mounts if m != "/"))
    attempt("mount tmpfs", lambda: call(libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=2g")))
    attempt("mount tmpfs over /proc", lambda: call(libc.mount(b"none", b"/proc", b"tmpfs", 0, None)))
    attempt("remount / writable", lambda: call(libc.mount(None, b"/", None, 0x20 | 0x1000, None)))  # REMOUNT|BIND
    attempt("umount /proc", lambda: call(libc.umount2(b"/proc", 2)))
    attempt("unshare a user namespace", lambda: call(libc.unshare(0x10000000)))
    for path in paths:
        attempt(f"read {path}", lambda path=path: os.path.exists(path) and (
            os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(64)))  # noqa: SIM115
    for path in ("/x", "/usr/x", os.path.dirname(os.path.abspath(__file__)) + "/x"):
        attempt(f"write {path}", lambda path=path: open(path, "w").write("x"))  # noqa: SIM115
    supervisors = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read()
                if b"arena-supervisor" in command:
                    supervisors.append(int(entry))
    attempt("find the supervisor", lambda: supervisors)
    attempt("ptrace the supervisor", lambda: supervisors and call(libc.ptrace(16, supervisors[0], None, None)))
    attempt("ptrace the parent", lambda: os.getppid() > 1 and call(libc.ptrace(16, os.getppid(), None, None)))


def try_host_root(numbers: dict[str, int]) -> None:
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def opened(path: str) -> bool:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # never written
        return True

    # (not kernel.pid_max: Linux 6.14 and later keep one per PID namespace, the jail's own)
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/modprobe",
                 "/proc/sys/fs/file-max", "/proc/sysrq-trigger", "/dev/arena-x", "/dev/shm/../arena-x"):
        attempt(f"open {path} for writing", lambda path=path: opened(path))

    def call(name: str, *args: int) -> str:
        result = libc.syscall(ctypes.c_long(numbers[name]), *[ctypes.c_long(a) for a in args])
        if result == 0 and name == "clone":
            os._exit(0)  # the child of a clone that was let through
        return "" if result == -1 else f"returned {result}"

    attempt("ptrace pid 1", lambda: call("ptrace", 16, 1, 0, 0))  # PTRACE_ATTACH
    attempt("clone a user namespace", lambda: call("clone", 0x10000000 | 17, 0, 0, 0, 0))
    attempt("personality READ_IMPLIES_EXEC", lambda: call("personality", 0x0400000))
    for name in sorted(numbers):
        if name not in ("ptrace", "clone", "personality"):
            # harmless arguments: a call that is let through fails on them (EFAULT, EINVAL) or does nothing,
            # and says so with an error other than the filter's
            def tried(name: str = name) -> str:
                if libc.syscall(ctypes.c_long(numbers[name]), *[ctypes.c_long(0)] * 5) == 0:
                    return "returned 0"
                code = ctypes.get_errno()
                return "" if code in (1, 38) else f"failed with {os.strerror(code)}, not by the filter"
            attempt(f"{name}()", tried)


def hold_memory(mib: int) -> list[bytearray]:
    held = []
    for _ in range(mib):
        block = bytearray(1 << 20)
        block[::4096] = b"x" * len(block[::4096])
        held.append(block)
    print(f"hoard: {os.getpid()} holds {mib} MiB", file=sys.stderr, flush=True)
    return held


def spin_all(count: int) -> None:
    for _ in range(count):
        if os.fork() == 0:
            while True:
                pass


def peek(paths: list[str]) -> None:
    def say(what: str, outcome: str) -> None:
        print(f"peek {what}: {outcome}"[:300], file=sys.stderr, flush=True)

    def read(path: str) -> None:
        try:
            found = os.listdir(path) if os.path.isdir(path) else open(path, "rb").read(64)  # noqa: SIM115
            say(f"read {path}", f"read {found!r}")
        except OSError as exc:
            say(f"read {path}", f"blocked ({type(exc).__name__}: {exc})")

    for path in paths:
        read(path)
    try:
        import arena.sdk

        say("import arena.sdk", f"ok {arena.sdk.__file__}")
        package = os.path.dirname(os.path.dirname(arena.sdk.__file__))  # the arena package
        for name in ARENAS_OWN:
            read(os.path.join(package, name))
    except Exception as exc:
        say("import arena.sdk", f"failed ({type(exc).__name__}: {exc})")
    say("PATH", os.environ.get("PATH", ""))
    for folder in os.environ.get("PATH", "").split(":"):
        say(f"PATH folder {folder}", "exists" if os.path.isdir(folder) else "missing")


ARENAS_OWN = ("cli.py", "ladder/store.py", "launch/sandbox.py", "launch/pool.py", "protocol/server.py",
              "core/referee.py")
"""Modules of the arena a jailed Python bot must not see beside the SDK (paths in the arena package)."""


def fork_bomb(count: int, mark: str) -> None:
    for _ in range(count):
        try:
            if os.fork() == 0:
                os.execv(sys.executable, [sys.executable, "-c", "while True: pass", mark])
        except OSError as exc:
            print(f"fork-bomb stopped: {exc}", file=sys.stderr, flush=True)
            return


def fill_tmpfs() -> None:
    block = b"x" * (1 << 20)
    for folder in (os.environ.get("TMPDIR", "/tmp"), "/dev/shm"):
        written = 0
        try:
            with open(os.path.join(folder, "hoard"), "wb") as f:
                for _ in range(1024):
                    f.write(block)
                    written += 1
        except OSError as exc:
            print(f"tmpfs-bomb in {folder} stopped at {written} MiB: {exc}", file=sys.stderr, flush=True)


def flood_connections(address: str, count: int) -> None:
    path = address.removeprefix("unix:")
    for _ in range(4):
        if os.fork() == 0:
            held = []
            for _ in range(count):
                try:
                    s = socket.socket(socket.AF_UNIX)
                    s.connect(path)
                    held.append(s)
                except OSError:
                    break
            print(f"fd-flood helper holds {len(held)} connections", file=sys.stderr, flush=True)
            time.sleep(120)
            os._exit(0)


def flood_hellos(address: str, count: int | None, hold: float = 0.0) -> None:
    """Open streams that never say hello; keep ``count`` of them (forever when None), then hold them."""
    channels = []
    calls = []
    opened = 0
    while count is None or opened < count:
        # a connection of its own for every few streams (a connection carries at most 4 at once)
        channel = grpc.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
        channels.append(channel)
        for _ in range(3):
            outbox: queue.Queue[bytes | None] = queue.Queue()
            calls.append(open_stream(channel, outbox))
            opened += 1
        if count is None:
            time.sleep(0.01)
            if len(channels) > 50:  # refused streams end: drop the oldest channels, open new ones
                channels.pop(0).close()
    time.sleep(hold)


def flood_stderr() -> None:
    line = b"x" * 1023 + b"\n"
    while True:
        os.write(2, line * 64)


def main() -> None:
    mode = sys.argv[1]
    args = sys.argv[2:]
    if mode == "listen-flood":
        flood_hellos(args[0], int(args[1]), hold=20.0)
        return
    if mode == "escape":
        try_escape(args)
    if mode == "host-root":
        import json

        try_host_root(json.loads(args[0]))
    if mode == "spin-all":
        spin_all(int(args[0]))
    held: list[bytearray] = []
    if mode.startswith("terminal"):
        print(f"starting{TERMINAL_ATTACK}", file=sys.stderr, flush=True)
        if mode == "terminal-exit":
            sys.exit(1)
    if mode == "peek":
        peek(args)
    address = os.environ["ARENA_ADDRESS"]
    token = os.environ["ARENA_TOKEN"]
    if mode == "garbage" and address.startswith("unix:"):
        for size in (7, 1000, 100_000):
            with socket.socket(socket.AF_UNIX) as raw:
                raw.connect(address.removeprefix("unix:"))
                raw.sendall(os.urandom(size))
    huge = b"\x12" + _varint(100_000_000) + bytes(100_000_000) if mode == "huge" else b""
    if mode == "stderr-flood":
        threading.Thread(target=flood_stderr, daemon=True).start()
    outbox: queue.Queue[bytes | None] = queue.Queue()
    outbox.put(hello(token, TERMINAL_ATTACK if mode == "terminal" else "hostile"))
    channel = grpc.insecure_channel(address)
    answered = 0
    try:
        for message in open_stream(channel, outbox):
            body = message.WhichOneof("body")
            if mode == "spy":
                print(f"received {message.SerializeToString().hex()}", file=sys.stderr, flush=True)
            if body == "goodbye":
                break
            if body == "match_start" and mode == "hello-flood" and answered == 0:
                threading.Thread(target=flood_hellos, args=(address, None), daemon=True).start()
            if body == "match_start" and mode == "steal":
                with open(args[0], encoding="utf-8") as f:
                    tokens = [line.strip() for line in f if line.strip()]
                for i, other in enumerate([*tokens, token, "", "not-a-token"]):
                    print(f"steal {i}: {try_token(address, other)}", file=sys.stderr, flush=True)
            if body != "request":
                continue
            request = message.request
            picks = list(request.default_picks)
            request_id = request.request_id
            n = len(request.choices)
            throw = request.kind == "throw"
            if mode == "silent":
                continue
            if mode == "spin":
                while True:
                    pass
            if mode == "exit-after" and answered >= int(args[0]):
                os._exit(3)
            if mode == "signal-after" and answered >= int(args[0]):
                os.kill(os.getpid(), int(args[1]))
                time.sleep(5)
            if mode == "late":
                time.sleep(float(args[0]))
            if mode == "alloc":
                hoard = []
                while True:
                    hoard.append(bytearray(16 << 20))
            if mode == "hoard" and answered == 0:
                held.extend(hold_memory(int(args[0])))
            if mode == "fork-bomb" and answered == 0:
                fork_bomb(int(args[0]), args[1])
            if mode == "tmpfs-bomb" and answered == 0:
                fill_tmpfs()
            if mode == "fd-flood" and answered == 0:
                flood_connections(address, int(args[0]))
            if mode in ("fork", "fork-exit") and answered == 0:
                spawn_escapee(args[0])
                if mode == "fork-exit":
                    os._exit(0)
            if mode == "out-of-range" and not throw:
                picks = [n + 7]
            elif mode == "throw-outside" and throw:
                picks = [n]
            elif mode == "throw-twice" and throw and n:
                picks = [0, 0]
            elif mode == "wrong-id":
                request_id += 1000
            elif mode == "terminal" and answered == 1:
                picks = [n + 1000] * MALFORMED_PICKS
            data = answer(request_id, picks, TERMINAL_ATTACK if mode == "terminal" and answered == 0 else "")
            if mode == "garbage" and answered == 0:
                data = b"\x12\xff\xff\xff\xff\x0f" + os.urandom(64)
            elif mode == "huge" and answered == 0:
                data = huge
            if mode == "flood" and answered == 0:
                for _ in range(5000):
                    outbox.put(data)
            outbox.put(data)
            answered += 1
    except grpc.RpcError as exc:
        print(f"stream failed: {exc.code().name}: {exc.details()}", file=sys.stderr, flush=True)
        if mode == "flood":
            # stay until the arena stops us: exiting here would race the arena's own verdict on the flood
            # (a crash could be recorded before the malformed stream it closed)
            time.sleep(600)
    finally:
        outbox.put(None)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


if __name__ == "__main__":
    main()
