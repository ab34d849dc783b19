"""A seat's session: the one owner of a seat's bot process, its own server and socket, and its slot.

Each launched bot reaches the arena through a server and Unix socket of its own; a :class:`BotSession` owns the
seat: the process (:class:`arena.launch.process.BotProcess`), that server and the slot. A remote bot has a slot on
the shared server and no process.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from arena.launch.botlist import BotSpec
from arena.launch.process import STOP_GRACE, BotProcess, LaunchError
from arena.launch.sandbox import Cgroups, Sandbox
from arena.protocol.seats import RemoteSeat
from arena.protocol.server import ArenaServer, ServerError, Slot

STUCK_GRACE = 0.2
"""Seconds a bot that still owes answers (stuck, or spinning) has to leave after Goodbye before it is stopped by
force: it will not read the Goodbye (the others have :data:`arena.launch.process.STOP_GRACE`)."""


class BotSession:
    """One seat holder and everything of it: the bot's process, its own server and socket, its slot.

    A launched bot gets a server of its own (:meth:`arena.protocol.server.ArenaServer.private`) on a Unix socket in
    ``folder``, which only its jail holds; its hello, its connections and its floods stay there. A remote bot
    (one with a token) has a slot on the ``shared`` server and no process. The session is the one owner of
    the seat's life: :meth:`start` waits for whichever comes first of the hello, the process's end and the
    time limit; :meth:`stop` says goodbye, stops the process and then the server.
    """

    def __init__(self, spec: BotSpec, name: str, *, shared: ArenaServer, folder: Path | None,
                 sandbox: Sandbox, log_path: Path | None, group: Cgroups | None = None) -> None:
        self.spec = spec
        self.name = name
        self.remote = spec.remote
        self.server = shared if self.remote else ArenaServer.private()
        self.folder = folder
        self.process: BotProcess | None = None if self.remote else BotProcess(spec, log_path, sandbox=sandbox,
                                                                                group=group)
        self.slot: Slot = shared.add_slot(name, spec.token) if self.remote else self.server.add_slot(name)

    @property
    def ready(self) -> bool:
        """Return whether the seat can play a match as it is: connected, running, owing no answers."""
        running = self.process is None or self.process.alive()
        return self.slot.online and running and not self.slot.owes_answers

    @property
    def stuck(self) -> bool:
        return self.slot.owes_answers or not self.slot.online

    def new_match(self) -> None:
        if self.process is not None:
            self.process.new_match()

    def freeze(self) -> None:
        """Freeze the idle process until its next match (:meth:`BotProcess.freeze`)."""
        if self.process is not None:
            self.process.freeze()

    def note(self, line: str) -> None:
        """Write a marker line into the bot's log (a remote bot has none)."""
        if self.process is not None:
            self.process.note(line)

    def seat(self, name: str) -> RemoteSeat:
        """Return the referee seat of this session, shown as ``name``."""
        self.slot.name = name
        return RemoteSeat(self.slot, self.process.ended if self.process is not None else None)

    async def start(self, timeout: float) -> str:
        """Start the bot and wait for its hello; return why it did not connect ("" when it did).

        Raises :class:`LaunchError` when the process cannot be started.
        """
        if self.process is not None:
            assert self.folder is not None
            self.folder.mkdir(mode=0o700)
            try:
                address = await self.server.start(f"unix:{self.folder / 'arena.sock'}")
            except ServerError as exc:
                raise LaunchError(f"bot {self.name!r}: no socket for it: {exc}") from None  # not the bot's fault
            self.process.start(address, self.slot.token)
        hello = asyncio.ensure_future(self.slot.connected.wait())
        waits: set[asyncio.Future[Any]] = {hello}
        if self.process is not None:
            waits.add(self.process.ended)
        try:
            await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            hello.cancel()
        if self.slot.connected.is_set():
            return ""
        bot = self.spec.name
        if self.process is not None and self.process.ended.done():
            tail = self.process.output_tail()
            said = f"; its output was: {tail}" if tail else ""
            return f"bot {bot!r} {self.process.ended.result()} before connecting{said}"
        if self.remote:
            return (f"remote bot {bot!r} did not connect to {self.server.address} with its token within "
                    f"{timeout:.0f} s")
        return f"bot {bot!r} did not connect within {timeout:.0f} s"

    async def stop(self) -> None:
        """Say goodbye, stop the process (briefly for a stuck one, which will not read it) and its server."""
        stuck = self.stuck
        if self.process is not None:
            self.process.thaw()  # a frozen bot would not read its goodbye
        self.server.remove_slot(self.slot)
        try:
            if self.process is not None:
                await self.process.stop(STUCK_GRACE if stuck else STOP_GRACE)
        finally:
            if not self.remote:
                await self.server.stop(0)
                if self.folder is not None:
                    shutil.rmtree(self.folder, ignore_errors=True)
