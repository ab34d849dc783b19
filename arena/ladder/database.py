"""The SQLite shell both of arena's stores stand on: the ladder's (:mod:`arena.ladder.store`) and the contest's
(:mod:`arena.contest.store`).

One way to open a file, written once:

- **Is this file ours, and of which version**: a file is a store's when its header's ``application_id`` is the
  store's (:attr:`Schema.application_id`); its ``user_version`` is its schema version. A file from before this
  shell (``application_id`` 0) is recognised by the store's own old check (:attr:`Schema.legacy`). A file of
  something else, or of a newer arena, is refused with a message saying so, before anything is written to it:
  it is left exactly as it was.
- **Migrations**: an ordered list (:attr:`Schema.migrations`), migration N bringing version N - 1 to N. A
  writer that opens an older file runs the missing ones, and marks the header, in one transaction: all of
  them or none. A new file is version 0 and runs them all, so a new file and an upgraded one are made by the
  same statements. A reader reads any version up to its own and changes nothing.
- **One open path**: a writer puts the file in WAL mode (readers read while it writes) with ``synchronous =
  NORMAL`` (durable at each commit in WAL mode); a store whose writer must be alone (the ladder:
  :attr:`Schema.exclusive`) holds an exclusive ``flock`` on the file until it closes or its process dies; a
  reader opens the file read-only (SQLite ``mode=ro``) and never waits for that lock.
- **One transaction helper** (:meth:`Database.transaction`): the body is stored whole or not at all, and
  SQLite's failures become the store's error (:attr:`Schema.error`) naming the file.

The store modules, the only ones that hold SQL: this one, :mod:`arena.ladder.store` (the ladder's writes and its
own reads), :mod:`arena.ladder.readmodel` (what the pages and the benchmarks read of a ladder) and
:mod:`arena.contest.store`. This module is in ``ladder/`` because the contest builds on the ladder (so both may
import it) and SQL stays within the store modules of ``ladder/`` and ``contest/``; it imports nothing of
arena's.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

_REFUSED_BY_THE_SYSTEM = {3, 8, 10, 14}
"""SQLite's primary result codes for a write the system refused (PERM, READONLY, IOERR, CANTOPEN): a message
about one names what to check."""


def _no_legacy(db: sqlite3.Connection, tables: set[str]) -> int | None:
    return None


@dataclass(frozen=True, slots=True)
class Migration:
    """One step of a schema: what brings a database of version ``version - 1`` to ``version``.

    ``apply`` is SQL (statements run one by one, inside the upgrade's transaction) or a function of the
    connection (for a step that must look before it changes, say a column that an old file may already have).
    """

    version: int
    apply: str | Callable[[sqlite3.Connection], None]

    def run(self, db: sqlite3.Connection) -> None:
        if callable(self.apply):
            self.apply(db)
            return
        for statement in statements(self.apply):
            db.execute(statement)


@dataclass(frozen=True, slots=True)
class Schema:
    """What one store's file is: its mark, its migrations, its words and its error.

    ``noun`` names what the file holds in messages ("ladder", "contest"); ``fix`` is what a message about a file
    that cannot be used tells the user to do. ``legacy`` tells the version of a file written before this shell
    (it has no ``application_id``): ``None`` when it is not the store's, a version otherwise; it may raise
    :class:`ValueError` for a file of the store's whose version is unreadable. ``exclusive``: one writer at a
    time (others are refused at once). ``busy_timeout``: the seconds a write waits for another connection's.
    """

    noun: str
    application_id: int
    migrations: tuple[Migration, ...]
    error: type[Exception]
    fix: str
    legacy: Callable[[sqlite3.Connection, set[str]], int | None] = _no_legacy
    exclusive: bool = False
    foreign_keys: bool = False
    busy_timeout: float = 30.0

    def __post_init__(self) -> None:
        numbers = [m.version for m in self.migrations]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(f"the migrations of the {self.noun} schema must be numbered 1, 2, ... in order, "
                             f"not {numbers}")

    @property
    def version(self) -> int:
        """The version this arena writes: that of the last migration."""
        return len(self.migrations)


def statements(script: str) -> list[str]:
    """Return the SQL statements of ``script``, each ending with its semicolon (semicolons in comments and strings
    do not end one; text after the last statement is left out).

    Run one by one: ``executescript`` would commit the transaction they belong to first.
    """
    found: list[str] = []
    pending = ""
    for piece in script.split(";")[:-1]:
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip() != ";":
                found.append(pending.strip())
            pending = ""
    return found


class Database:
    """An open store file: its connection (:attr:`db`), its version, its transactions."""

    def __init__(self, path: str | Path, schema: Schema, *, readonly: bool = False, shared: bool = False) -> None:
        """Open the file at ``path`` for ``schema``'s store, creating it (unless ``readonly``) when it is missing
        or empty, and upgrading it (unless ``readonly``) when it is older.

        ``shared``: the connection may be used by the threads of this process, one transaction at a time.
        Raises ``schema.error`` for a folder, a missing file or folder, a file that is not an SQLite database or
        is another's, a file of a newer arena, a file another writer holds (``exclusive``), and a file this
        process cannot read or write.
        """
        self.path = Path(path)
        self.schema = schema
        self.readonly = readonly
        self.version = 0
        """The schema version of the file: after :meth:`__init__`, this arena's for a writer; a reader's may be
        older."""
        self._lock = threading.RLock()  # one transaction at a time on a shared connection
        self._lock_fd: int | None = None
        fail, where, noun = schema.error, self.where, schema.noun
        if readonly and not self.path.is_file():
            if self.path.is_dir():
                raise fail(f"database {where} is a folder; give the {noun} database a file's path")
            raise fail(f"database {where} does not exist")
        if self.path.is_dir():
            raise fail(f"database {where} is a folder; give the {noun} database a file's path")
        if not readonly and not self.path.parent.is_dir():
            raise fail(f"cannot create database {where}: its folder does not exist; create it first")
        try:
            if readonly:
                uri = f"file:{urllib.parse.quote(str(self.path))}?mode=ro"
                self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=schema.busy_timeout,
                                          check_same_thread=not shared)
            else:
                self.db = sqlite3.connect(self.path, isolation_level=None, timeout=schema.busy_timeout,
                                          check_same_thread=not shared)
        except sqlite3.Error as exc:
            may = "read" if readonly else "read and write"
            raise fail(f"cannot open database {where}: {exc}; check that this user may {may} it and its "
                       "folder") from None
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    @property
    def where(self) -> str:
        """The file's path as messages show it."""
        return repr(str(self.path))

    def _open(self) -> None:
        schema, db = self.schema, self.db
        fail, where = schema.error, self.where
        if schema.exclusive and not self.readonly:
            self._flock()
        try:
            db.execute(f"PRAGMA busy_timeout = {int(schema.busy_timeout * 1000)}")
            if schema.foreign_keys:
                db.execute("PRAGMA foreign_keys = ON")
            with self._snapshot():
                version, tables, marked = self._check()  # reads only: a file of something else is left as it was
        except sqlite3.DatabaseError as exc:
            raise fail(f"{where} is not a usable arena database: {exc}; {schema.fix}") from None
        if self.readonly:
            if not tables:
                raise fail(f"{where} holds no {schema.noun} yet")
            self.version = version
            return
        try:
            mode = str(db.execute("PRAGMA journal_mode = WAL").fetchone()[0])
            if mode.lower() != "wal":
                raise fail(f"cannot put {where} in WAL mode (it stays {mode!r}); check that this user may write "
                           "it and its folder")
            db.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise fail(self._failure(exc, write=True)) from None
        if version < schema.version or not marked:  # older, or from before the shell (its header unmarked)
            with self.transaction() as db:
                version, _, marked = self._check()  # again under the write lock: another process may have done it
                if version < schema.version or not marked:
                    for migration in schema.migrations[version:]:
                        migration.run(db)
                    db.execute(f"PRAGMA application_id = {schema.application_id}")
                    db.execute(f"PRAGMA user_version = {schema.version}")
        self.version = schema.version

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        # the checks read the header and the tables in one read transaction: one state of a file being upgraded
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            with contextlib.suppress(sqlite3.Error):
                self.db.execute("ROLLBACK")

    def _check(self) -> tuple[int, set[str], bool]:
        """Return the file's schema version, its tables and whether its header bears the store's mark. Raises the
        schema's error for a file that is not the store's, or is newer than this arena."""
        schema, db = self.schema, self.db
        fail, where = schema.error, self.where
        mark = int(db.execute("PRAGMA application_id").fetchone()[0])
        tables = {str(name) for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        legacy: int | None = None
        if mark == schema.application_id:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        elif mark == 0 and not tables:
            version = 0  # a new file
        else:
            if mark == 0:
                try:
                    legacy = schema.legacy(db, tables)
                except ValueError:
                    raise fail(f"{where} has no readable {schema.noun} schema version; it is damaged: restore a "
                               f"backup or {schema.fix}") from None
            if legacy is None:
                shown = ", ".join(sorted(tables)[:5]) or "none"
                raise fail(f"{where} is an SQLite database of something else (tables {shown}), not an arena "
                           f"{schema.noun}; {schema.fix}")
            version = legacy
        if version > schema.version:
            raise fail(f"{where} was written by a newer arena ({schema.noun} schema {version}, this arena knows "
                       f"up to {schema.version}); upgrade arena to use it")
        return version, tables, mark == schema.application_id

    def _flock(self) -> None:
        # flock, not fcntl: SQLite's own locks are fcntl locks on the same file, and the two never interact on
        # a local file system. The descriptor stays open until close(), after SQLite's own connection closes
        # (closing any descriptor of the file earlier would drop SQLite's fcntl locks).
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise self.schema.error(f"database {self.where} is in use by another {self.schema.noun}; wait for it "
                                    f"to end, or {self.schema.fix}") from None
        self._lock_fd = fd

    def _failure(self, exc: sqlite3.Error, *, write: bool) -> str:
        if not write:
            return f"cannot read {self.where}: {exc}"
        hint = ""
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _REFUSED_BY_THE_SYSTEM and not self.readonly:
            hint = "; check that this user may write the file, its -wal and -shm companions and its folder"
        return f"cannot write to {self.where}: {exc}{hint}"

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """Run the body as one transaction on the connection it yields: all of it is stored, or none of it.

        A write transaction holds the write lock from its start (``BEGIN IMMEDIATE``: two writers queue rather
        than fail halfway); a read one sees one state of the file throughout. SQLite's failures (a busy file past
        the timeout, a full disk, a broken file, a closed store) become the schema's error; any failure rolls the
        whole body back.
        """
        fail, db = self.schema.error, self.db
        with self._lock:
            try:
                db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as exc:
                raise fail(self._failure(exc, write=write)) from None
            try:
                yield db
            except BaseException as exc:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise fail(self._failure(exc, write=write)) from None
                raise
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise fail(self._failure(exc, write=write)) from None

    def close(self) -> None:
        """Close the connection and let go of the writer's lock (twice is harmless; further transactions raise
        the schema's error)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self.db.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
