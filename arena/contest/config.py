"""A contest's configuration: one TOML file, every key optional but the game, with safe defaults.

An example with every key and its default (``arena contest --example`` prints it)::

    game = "cabanga"                   # the game the contest plays (arena games lists them); required
    seats = 4                          # seats at every table (default: the game's fewest)
    options = { rounds = 2 }           # the game's options, as `arena ladder -o` takes them
    # seed = 7                         # none: a secret seed is drawn, kept in the database and never shown;
    # public_seed = true               # a fixed seed lets every bot compute every deal: tests and benchmarks only
    deadline = 1.0                     # seconds a decision
    time_bank = 0.0                    # seconds a seat may overrun over a match
    max_faults = 3                     # faults after which a seat is benched for the match
    tables = 1                         # matches played at once
    data = "contest-data"              # the contest's folder (databases, submissions, logs); relative: to this file
    baseline = ""                      # a bot list of the house bots; "": the game's bundled bots
    listen = "127.0.0.1:8080"          # host:port; put it behind a TLS reverse proxy to open it to others
    behind_proxy = false               # true: take the client's address from the proxy's X-Forwarded-For, and
                                       # send cookies Secure only; false: the socket's address, whatever it says
    proxies = ["127.0.0.1", "::1"]     # behind_proxy: the proxies' own addresses (X-Forwarded-For from no other)
    open_registration = false          # true: anyone may make an author (and so a token) on the web page

    [limits]                           # what every submitted bot may use (arena.launch.sandbox.Limits)
    memory_mb = 1024

    [build_limits]                     # what a build step may use; each key unset: as [limits], but disk_mb
    memory_mb = 2048                   # at least 256 (a first Go build needs some 110 MB of scratch)
    cpu_seconds = 600                  # a compiler may need more than the bot it builds

    [submissions]
    per_day = 10                       # submissions an author may make in 24 hours
    uploads_per_hour = 30              # uploads an author may try in an hour, refused ones too
    active = 2                         # an author's bots playing at once (a new version replaces its old one)
    archive_mb = 8                     # the uploaded archive, compressed
    unpacked_mb = 64                   # its files, unpacked (and the built folder)
    files = 2000                       # files and folders in it
    build_seconds = 300                # wall time of the build step
    check_rounds = 1                   # rounds of each match of the check (arena check --rounds)
    check_seconds = 900                # wall time of the check: a bot slow at every decision holds no one up longer

    [scrimmages]                       # authors' unrated matches on demand, against opponents they choose
    enabled = true
    matches = 100                      # what a request plays when it names no number
    max_matches = 1000                 # the most one request may ask for
    matches_per_hour = 1000            # the matches an author may ask for in an hour (one scrimmage at a time)
    share = 0.25                       # the scrimmages' tables, as a share of the ladder's (at least one)

    [finals]                           # the contest's end (docs/finals.md); no section: no finals
    deadline = 2026-12-31T18:00:00Z    # when uploads, new versions and scrimmages close and the finals start
                                       # (a date and time with its zone; left out: arena contest finals starts them)
    top = 3                            # the places the finals decide
    budget = { matches = 3000, hours = 12 }  # the most they play (either or both), rounded up to whole deal sets
    house = false                      # whether the house bots are finalists too
    cut = { every = 10, margin = 1 }   # optional: after every 10 deal sets, the finalists whose whole rank range
                                       # lies below place top + margin leave
    zone = 0.03                        # the sequential test of each top pair (arena ladder --until-decided's)
    alpha = 0.05
    beta = 0.05

    [runtimes.python]                  # what a manifest's runtime names: the program put before its command
    program = ["{python}"]             # the arena's interpreter; pure-Python packages vendored in the folder work
    [runtimes.native]
    program = []                       # the bot's own program: a static binary, or built by its build step

An operator adds runtimes, for example a venv built with numpy (``program = ["/srv/ml/bin/python"]``) or Node
(``program = ["node"]``); ``show`` lists folders the build step may read besides the system's (a toolchain).
"""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.contest.archive import ArchiveLimits
from arena.core.referee import DEFAULT_CLOCK, Clock
from arena.games import get_game
from arena.games.base import Game, GameError, Options
from arena.ladder.estimate import SequentialTest
from arena.ladder.finals import Cut, FinalsRuleError
from arena.launch.sandbox import DEFAULT_LIMITS, Limits, LimitsError

MIB = 1024 * 1024
DEFAULT_PORT = 8080
DEFAULT_PROXIES = ("127.0.0.1", "::1")
"""The proxy a contest behind one trusts by default: one on this machine."""
BUILD_DISK_MB = 256
"""The least scratch a build step gets unless ``[build_limits]`` says otherwise: a first Go build (Debian's
gRPC compiled from source) needs some 110 MB, more than a bot's default ``disk_mb``."""


class ConfigError(ValueError):
    """A contest configuration that cannot be read or does not describe a contest."""


@dataclass(frozen=True, slots=True)
class Runtime:
    """What a manifest's ``runtime`` names: the program put before the bot's command, and for the build step the
    folders it may read besides the system's."""

    name: str
    program: tuple[str, ...]
    show: tuple[Path, ...] = ()

    def missing(self) -> str:
        """Return why this runtime cannot run here ("" when it can): its program is not on this machine."""
        if not self.program or self.program[0] == "{python}":
            return ""
        found = shutil.which(self.program[0])
        return "" if found else f"runtime {self.name!r}: its program {self.program[0]!r} is not on this machine"


DEFAULT_RUNTIMES = {"python": Runtime("python", ("{python}",)), "native": Runtime("native", ())}


@dataclass(frozen=True, slots=True)
class SubmissionRules:
    """What one author may submit, and how long a submission may build and be checked."""

    per_day: int = 10
    uploads_per_hour: int = 30
    active: int = 2
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)
    build_seconds: float = 300.0
    check_rounds: int = 1
    check_seconds: float = 900.0


@dataclass(frozen=True, slots=True)
class ScrimmageRules:
    """What authors may ask of scrimmages (unrated matches against opponents they choose), and what the contest
    gives them: :attr:`tables` of their own beside the ladder's."""

    enabled: bool = True
    matches: int = 100
    max_matches: int = 1000
    matches_per_hour: int = 1000
    share: float = 0.25

    def tables(self, ladder_tables: int) -> int:
        """Return the scrimmages' tables beside ``ladder_tables`` of the ladder: their share, at least one."""
        return max(1, round(ladder_tables * self.share))


@dataclass(frozen=True, slots=True)
class FinalsRules:
    """The contest's finals (``[finals]``, docs/finals.md): when submissions close, the places decided, the budget,
    whether the house bots play, the optional cut and the sequential test of each top pair."""

    deadline: float | None = None
    """When submissions close and the finals start (seconds since the epoch); ``None``: by hand only."""
    top: int = 3
    matches: int | None = None
    hours: float | None = None
    house: bool = False
    cut: Cut | None = None
    test: SequentialTest = field(default_factory=SequentialTest)

    def budget(self) -> str:
        """Return the budget as a person reads it: "3000 matches or 12 hours"."""
        parts = ([f"{self.matches} matches"] if self.matches is not None else []) + (
            [f"{self.hours:g} hours"] if self.hours is not None else [])
        return " or ".join(parts)


@dataclass(frozen=True, slots=True)
class ContestConfig:
    """Everything a contest needs (see the module's docstring for the file it is read from)."""

    game: Game
    options: Options
    seats: int
    data: Path
    seed: int | None = None
    """The ladder's seed when the configuration fixes one (``public_seed``: tests and benchmarks); ``None``: a
    secret one, drawn when the contest is made and kept in its ladder database."""
    clock: Clock = DEFAULT_CLOCK
    max_faults: int = 3
    tables: int = 1
    baseline: Path | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    behind_proxy: bool = False
    proxies: tuple[str, ...] = DEFAULT_PROXIES
    """Behind a proxy: the addresses whose ``X-Forwarded-For`` is believed (uvicorn's ``forwarded_allow_ips``)."""
    open_registration: bool = False
    limits: Limits = DEFAULT_LIMITS
    build_limits: Limits = DEFAULT_LIMITS
    """What a submission's build step may use: :attr:`limits` with at least :data:`BUILD_DISK_MB` of scratch, and
    the keys of ``[build_limits]`` changed."""
    submissions: SubmissionRules = field(default_factory=SubmissionRules)
    scrimmages: ScrimmageRules = field(default_factory=ScrimmageRules)
    runtimes: Mapping[str, Runtime] = field(default_factory=lambda: dict(DEFAULT_RUNTIMES))
    finals: FinalsRules | None = None
    """The contest's finals (``[finals]``); ``None``: it has none."""

    @property
    def contest_db(self) -> Path:
        """The contest's own database: authors, submissions, rate limits."""
        return self.data / "contest.db"

    @property
    def ladder_db(self) -> Path:
        """The ladder's database: bots, matches, ratings (what ``arena serve`` shows)."""
        return self.data / "ladder.db"

    @property
    def finals_db(self) -> Path:
        """The finals' ladder database: a new ladder beside the season's (which stays as it was)."""
        return self.data / "finals.db"

    @property
    def finals_export(self) -> Path:
        """The export of the finished finals: every match, the seed, the board (``arena finals verify``)."""
        return self.data / "finals-export.json.gz"

    @property
    def archives(self) -> Path:
        """Where each accepted archive is kept, by content hash."""
        return self.data / "archives"

    @property
    def bots(self) -> Path:
        """Where each submission's folder lives once unpacked and built (``bots/ID``)."""
        return self.data / "bots"

    @property
    def work(self) -> Path:
        """Scratch of the pipeline: a submission being unpacked or built (emptied when the contest starts)."""
        return self.data / "work"

    @property
    def logs(self) -> Path:
        """The bots' logs (the ladder's ``log_dir``) and the checks' logs (``logs/check-ID``)."""
        return self.data / "logs"


_KEYS = {"game", "seats", "options", "seed", "public_seed", "deadline", "time_bank", "max_faults", "tables", "data",
         "baseline", "listen", "behind_proxy", "proxies", "open_registration", "limits", "build_limits",
         "submissions", "scrimmages", "runtimes", "finals"}
_FINALS_KEYS = {"deadline", "top", "budget", "house", "cut", "zone", "alpha", "beta"}
_SCRIMMAGE_KEYS = {"enabled", "matches", "max_matches", "matches_per_hour", "share"}
_SUBMISSION_KEYS = {"per_day", "uploads_per_hour", "active", "archive_mb", "unpacked_mb", "files", "build_seconds",
                    "check_rounds", "check_seconds"}


def load_config(path: Path) -> ContestConfig:
    """Read the contest configuration at ``path``; relative paths in it start at its folder.

    Raises :class:`ConfigError` naming the file and what is wrong.
    """
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read the contest configuration {str(path)!r}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{str(path)!r} is not a TOML file: {exc}") from None
    try:
        return parse_config(raw, path.resolve().parent)
    except ConfigError as exc:
        raise ConfigError(f"{str(path)!r}: {exc}") from None


def _get(raw: Mapping[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = raw.get(key, default)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # TOML's true is a Python int too: a number must not be taken from it
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ConfigError(f"{key} must be {_kind_name(kind)}, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "a whole number", float: "a number", str: "a string", bool: "true or false", dict: "a table",
             list: "a list"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _positive(raw: Mapping[str, Any], key: str, default: int | float, whole: bool = True) -> Any:
    value = _get(raw, key, int if whole else (int, float), default)
    if value <= 0:
        raise ConfigError(f"{key} must be positive, got {value!r}")
    return value


def parse_config(raw: Mapping[str, Any], base: Path) -> ContestConfig:
    """Return the contest configuration of the parsed TOML ``raw``; relative paths start at ``base``.

    Raises :class:`ConfigError`.
    """
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} (the keys: {', '.join(sorted(_KEYS))})")
    if "game" not in raw:
        raise ConfigError('a contest names its game, for example game = "cabanga" (arena games lists them)')
    try:
        game = get_game(_get(raw, "game", str, "").lower())
        options_raw = _get(raw, "options", dict, {})
        options = game.options({str(k): str(v).lower() if isinstance(v, bool) else str(v)
                                for k, v in options_raw.items()})
    except GameError as exc:
        raise ConfigError(str(exc)) from None
    seats = _positive(raw, "seats", game.min_seats)
    if not game.min_seats <= seats <= game.max_seats:
        raise ConfigError(f"{game.title} is played by {game.min_seats} to {game.max_seats} seats, not {seats}")
    try:
        clock = Clock(float(_positive(raw, "deadline", 1.0, whole=False)),
                      float(_get(raw, "time_bank", (int, float), 0.0)))
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    data = base / _get(raw, "data", str, "contest-data")
    baseline_text = _get(raw, "baseline", str, "")
    host, port = _listen(_get(raw, "listen", str, f"127.0.0.1:{DEFAULT_PORT}"))
    try:
        limits = DEFAULT_LIMITS.updated(_get(raw, "limits", dict, {}))
    except LimitsError as exc:
        raise ConfigError(f"limits: {exc}") from None
    try:
        build_limits = limits.updated({"disk_mb": max(limits.disk_mb, BUILD_DISK_MB),
                                       **_get(raw, "build_limits", dict, {})})
    except LimitsError as exc:
        raise ConfigError(f"build_limits: {exc}") from None
    return ContestConfig(
        game=game, options=options, seats=seats, data=data, seed=_seed(raw), clock=clock,
        max_faults=_positive(raw, "max_faults", 3), tables=_positive(raw, "tables", 1),
        baseline=base / baseline_text if baseline_text else None, host=host, port=port,
        behind_proxy=_get(raw, "behind_proxy", bool, False), proxies=_proxies(raw),
        open_registration=_get(raw, "open_registration", bool, False), limits=limits, build_limits=build_limits,
        submissions=_submissions(_get(raw, "submissions", dict, {})),
        scrimmages=_scrimmages(_get(raw, "scrimmages", dict, {})),
        runtimes=_runtimes(_get(raw, "runtimes", dict, {}), base),
        finals=_finals(_get(raw, "finals", dict, {})) if "finals" in raw else None)


def _seed(raw: Mapping[str, Any]) -> int | None:
    """Return the fixed seed of the configuration ``raw``, or ``None`` (a secret one is drawn).

    A contest runs strangers' bots, and the arena's code is open to them (their jail shows it): with a seed they
    know, a bot computes every deal, every opponent's hand included. So a seed is taken only with
    ``public_seed = true``, which says that it is known (tests and benchmarks)."""
    public = _get(raw, "public_seed", bool, False)
    if "seed" not in raw:
        if public:
            raise ConfigError("public_seed = true names no seed: add seed = N, or leave both out (a secret seed is "
                              "drawn)")
        return None
    seed = _get(raw, "seed", int, 0)
    if seed < 0:
        raise ConfigError(f"seed must be a whole number of 0 or more, got {seed!r}")
    if not public:
        raise ConfigError(f"seed = {seed} would let every submitted bot compute every deal (the arena's code is "
                          "open to it): leave seed out, and the contest draws a secret seed and keeps it in its "
                          "database; a fixed seed is for tests and benchmarks, with public_seed = true")
    return int(seed)


def _proxies(raw: Mapping[str, Any]) -> tuple[str, ...]:
    proxies = _get(raw, "proxies", list, list(DEFAULT_PROXIES))
    for address in proxies:
        if not isinstance(address, str) or not _is_address(address):
            raise ConfigError(f"proxies must list the proxies' IP addresses (or networks, like 10.0.0.0/8), "
                              f"got {address!r}")
    if not proxies:
        raise ConfigError("proxies is empty: behind a proxy, name its address (default: 127.0.0.1 and ::1)")
    return tuple(proxies)


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return True


def _listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"listen must be HOST:PORT, for example 127.0.0.1:8080, got {text!r}")
    return host.strip("[]"), int(port)


def _submissions(raw: Mapping[str, Any]) -> SubmissionRules:
    unknown = sorted(set(raw) - _SUBMISSION_KEYS)
    if unknown:
        raise ConfigError(f"submissions: unknown key {unknown[0]!r} (the keys: {', '.join(sorted(_SUBMISSION_KEYS))})")
    try:
        archive = ArchiveLimits(archive_bytes=_positive(raw, "archive_mb", 8) * MIB,
                                files=_positive(raw, "files", 2000),
                                unpacked_bytes=_positive(raw, "unpacked_mb", 64) * MIB,
                                file_bytes=_positive(raw, "unpacked_mb", 64) * MIB)
    except ValueError as exc:
        raise ConfigError(f"submissions: {exc}") from None
    except ConfigError as exc:
        raise ConfigError(f"submissions: {exc}") from None
    return SubmissionRules(per_day=_positive(raw, "per_day", 10),
                           uploads_per_hour=_positive(raw, "uploads_per_hour", 30),
                           active=_positive(raw, "active", 2), archive=archive,
                           build_seconds=float(_positive(raw, "build_seconds", 300, whole=False)),
                           check_rounds=_positive(raw, "check_rounds", 1),
                           check_seconds=float(_positive(raw, "check_seconds", 900, whole=False)))


def _finals(raw: Mapping[str, Any]) -> FinalsRules:
    """Return the finals of ``[finals]``. Raises :class:`ConfigError`; a deadline in the past is refused when the
    contest starts (:mod:`arena.contest.finals`), not here: once the finals ran, the same file is read again."""
    unknown = sorted(set(raw) - _FINALS_KEYS)
    if unknown:
        raise ConfigError(f"finals: unknown key {unknown[0]!r} (the keys: {', '.join(sorted(_FINALS_KEYS))})")
    deadline = raw.get("deadline")
    if deadline is not None and (not isinstance(deadline, datetime.datetime) or deadline.tzinfo is None):
        raise ConfigError(f"finals: deadline must be a date and time with its zone, like 2026-12-31T18:00:00Z "
                          f"(TOML, no quotes), got {deadline!r}")
    budget = _get(raw, "budget", dict, {})
    extra = sorted(set(budget) - {"matches", "hours"})
    if extra or not budget:
        raise ConfigError("finals: budget names the most the finals may play, matches or hours or both, like "
                          f"budget = {{ matches = 3000, hours = 12 }}, got {budget!r}")
    cut_raw = _get(raw, "cut", dict, {})
    try:
        if sorted(set(cut_raw) - {"every", "margin"}):
            raise ConfigError(f"cut takes every and margin, like cut = {{ every = 10, margin = 1 }}, got {cut_raw!r}")
        cut = Cut(_positive(cut_raw, "every", 1), _get(cut_raw, "margin", int, 1)) if cut_raw else None
        zone, alpha, beta = (float(_get(raw, key, (int, float), default))
                             for key, default in (("zone", 0.03), ("alpha", 0.05), ("beta", 0.05)))
        test = SequentialTest(zone, alpha, beta)
    except (FinalsRuleError, ValueError) as exc:  # ConfigError is one
        raise ConfigError(f"finals: {exc}") from None
    try:
        matches = _positive(budget, "matches", 1) if "matches" in budget else None
        hours = float(_positive(budget, "hours", 1.0, whole=False)) if "hours" in budget else None
    except ConfigError as exc:
        raise ConfigError(f"finals: budget: {exc}") from None
    return FinalsRules(deadline=deadline.timestamp() if deadline is not None else None,
                       top=_positive(raw, "top", 3), matches=matches, hours=hours,
                       house=_get(raw, "house", bool, False), cut=cut, test=test)


def _scrimmages(raw: Mapping[str, Any]) -> ScrimmageRules:
    unknown = sorted(set(raw) - _SCRIMMAGE_KEYS)
    if unknown:
        raise ConfigError(f"scrimmages: unknown key {unknown[0]!r} (the keys: {', '.join(sorted(_SCRIMMAGE_KEYS))})")
    try:
        rules = ScrimmageRules(enabled=_get(raw, "enabled", bool, True), matches=_positive(raw, "matches", 100),
                               max_matches=_positive(raw, "max_matches", 1000),
                               matches_per_hour=_positive(raw, "matches_per_hour", 1000),
                               share=float(_positive(raw, "share", 0.25, whole=False)))
    except ConfigError as exc:
        raise ConfigError(f"scrimmages: {exc}") from None
    if rules.matches > rules.max_matches:
        raise ConfigError(f"scrimmages: matches ({rules.matches}) is more than max_matches ({rules.max_matches})")
    if rules.max_matches > rules.matches_per_hour:
        raise ConfigError(f"scrimmages: max_matches ({rules.max_matches}) is more than an author may ask for in an "
                          f"hour (matches_per_hour = {rules.matches_per_hour}): no request that big could run")
    if rules.share > 1:
        raise ConfigError(f"scrimmages: share is of the ladder's tables, at most 1, not {rules.share!r}")
    return rules


def _runtimes(raw: Mapping[str, Any], base: Path) -> dict[str, Runtime]:
    found = dict(DEFAULT_RUNTIMES) if not raw else {}
    for name, entry in raw.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"runtimes.{name} must be a table with program = [...], got {entry!r}")
        extra = sorted(set(entry) - {"program", "show"})
        if extra:
            raise ConfigError(f"runtimes.{name}: unknown key {extra[0]!r} (the keys: program, show)")
        program = entry.get("program")
        if not isinstance(program, list) or not all(isinstance(p, str) and p for p in program):
            raise ConfigError(f"runtimes.{name}: program must be a list of strings (empty for the bot's own program),"
                              f" got {program!r}")
        show = entry.get("show", [])
        if not isinstance(show, list) or not all(isinstance(p, str) and p for p in show):
            raise ConfigError(f"runtimes.{name}: show must be a list of folders, got {show!r}")
        found[name] = Runtime(name, tuple(program), tuple(base / p for p in show))
    return found
