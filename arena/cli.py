"""The ``arena`` command line: parse, call the library, print. Nothing here knows a rule of a game."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from arena.board import Board, BoardLine, build_board
from arena.estimate import Evidence, SequentialTest, Verdict
from arena.games import GAMES, get_game
from arena.games.base import Event, Game, GameError, Options
from arena.ladder import Ladder, LadderConfig, LadderError, Progress, Timing
from arena.launcher import BotListError, BotSpec, LaunchError, load_bot_list
from arena.ratings import TrueSkillSystem
from arena.referee import Clock, Fault, MatchRecord, play_match, random_seat, replay
from arena.runner import latency_summary, run_match, seat_names
from arena.server import ServerError
from arena.store import Store, StoreError

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay")
"""Seat names of the built-in random players in ``arena play``."""


def parse_option_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """Return ``KEY=VALUE`` words as a dict. Raises :class:`click.BadParameter` for a word without ``=``."""
    raw: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        raw[key.strip()] = value.strip()
    return raw


def game_options(game: Game, pairs: Sequence[str]) -> Options:
    """Return ``game``'s validated options from ``KEY=VALUE`` words; bad ones become a usage error."""
    try:
        return game.options(parse_option_pairs(pairs))
    except GameError as exc:
        raise click.BadParameter(str(exc), param_hint="--option") from None


def event_printer(names: Sequence[str], as_json: bool) -> Callable[[Event], None]:
    """Return a function printing one event: a JSON object a line, or one readable line."""
    if as_json:
        return lambda event: click.echo(json.dumps(event.to_json(), separators=(",", ":")))
    return lambda event: click.echo(event.describe(names))


def print_header(record_like: dict[str, Any], title: str, as_json: bool) -> None:
    """Print what is about to be played: game, seats, seed and options."""
    if as_json:
        click.echo(json.dumps({"event": "match", **record_like}, separators=(",", ":")))
        return
    defaults = get_game(record_like["game"]).options().to_json()
    opts = ", ".join(f"{k} {v}" for k, v in record_like["options"].items()
                     if v is not None and (k == "target" or v != defaults.get(k)))
    seats = ", ".join(f"{i}: {n}" for i, n in enumerate(record_like["names"]))
    click.echo(f"{title}, {len(record_like['names'])} seats, seed {record_like['seed']} ({opts})")
    click.echo(f"seats: {seats}")


def print_faults(record: MatchRecord, as_json: bool) -> None:
    """Print the faults of a match and the seats benched for them (nothing when there were none)."""
    for fault in record.faults:
        if as_json:
            click.echo(json.dumps({"event": "fault", **fault.to_json()}, separators=(",", ":")))
        else:
            click.echo(f"fault: {record.names[fault.seat]} at step {fault.step}: "
                       f"{fault.kind.value} ({fault.detail})")
    for seat in sorted(record.benched):
        if as_json:
            click.echo(json.dumps({"event": "benched", "seat": seat}, separators=(",", ":")))
        else:
            click.echo(f"benched: {record.names[seat]} was played by the defaults after too many faults "
                       "and is placed last for ratings")


GAME_CHOICE = click.Choice(sorted(GAMES), case_sensitive=False)

# Options shared by the commands, declared once so that their names, defaults and help agree.
game_option = click.option("--game", "game_name", type=GAME_CHOICE, default="cabanga", show_default=True,
                           help="The game to play.")
options_option = click.option(
    "-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
    help="A game option, repeatable: target=N, rounds=N, and for Cabanga! symbols=18 numbers.")


def decision_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --zone, --alpha and --beta (the sequential test that decides a pair of bots) to ``command``."""
    default = SequentialTest()
    for option in reversed([
        click.option("--zone", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True), default=default.zone,
                     show_default=True, help="Indifference zone: two bots whose mean score against each other "
                     "is within 0.5 +- zone may be called equal."),
        click.option("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True),
                     default=default.alpha, show_default=True,
                     help="Per pair: the chance of calling one of two equal bots better."),
        click.option("--beta", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True), default=default.beta,
                     show_default=True, help="Per pair: the chance of missing a difference as wide as the zone."),
    ]):
        command = option(command)
    return command


def clock_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --deadline, --time-bank and --max-faults (the referee's clock and fault limit) to ``command``."""
    for option in reversed([
        click.option("--deadline", type=click.FloatRange(min=0.001), default=1.0, show_default=True,
                     help="Seconds allowed per decision."),
        click.option("--time-bank", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
                     help="Extra seconds per seat per match, spent by decisions that overrun the deadline."),
        click.option("--max-faults", type=click.IntRange(min=1), default=3, show_default=True,
                     help="Faults in one match after which a seat is played by the defaults and placed last."),
    ]):
        command = option(command)
    return command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Referee, protocol and ladder for Cabanga! and L.A.M.A. bot contests.

    Start with `arena play` to watch a match between built-in random players.
    """


@main.command()
@game_option
@click.option("--seats", type=int, default=4, show_default=True,
              help="Number of seats (Cabanga! 3-6, L.A.M.A. 2-6).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Match seed; the same seed prints the same match. Default: a random seed, printed.")
@options_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def play(game_name: str, seats: int, seed: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Play one in-process match between built-in random players and print it.

    Every turn, throw, draw and round score is printed, then the final places.
    """
    game = get_game(game_name.lower())
    opts = game_options(game, options)
    if not game.min_seats <= seats <= game.max_seats:
        raise click.BadParameter(
            f"{game.title} is played by {game.min_seats} to {game.max_seats} seats, not {seats}",
            param_hint="--seats")
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    names = list(NAMES[:seats])
    print_header({"game": game.name, "seed": seed, "names": names, "options": opts.to_json()},
                 game.title, as_json)
    players = [random_seat(name, f"arena-play/{seed}/{i}") for i, name in enumerate(names)]
    record = asyncio.run(play_match(game, players, seed, opts, on_event=event_printer(names, as_json)))
    print_faults(record, as_json)


BUNDLED_BOTS = Path(__file__).resolve().parent.parent / "bots"


def default_bot_list(game: Game) -> Path:
    """Return the bundled example bot list for ``game`` (bots/GAME.toml in the source tree)."""
    path = BUNDLED_BOTS / f"{game.name}.toml"
    if not path.is_file():
        raise click.UsageError(f"no bundled bot list at {path}; give one with --bots")
    return path


def game_and_bots(game_name: str, options: Sequence[str], bots_path: Path | None
                  ) -> tuple[Game, Options, list[BotSpec]]:
    """Return the game, its options and the bot list (the bundled one unless ``bots_path``); usage errors."""
    game = get_game(game_name.lower())
    opts = game_options(game, options)
    try:
        return game, opts, load_bot_list(bots_path or default_bot_list(game))
    except BotListError as exc:
        raise click.UsageError(str(exc)) from None


def pick_bots(bots: list[BotSpec], seats: int | None, game: Game) -> list[BotSpec]:
    """Return the bots in seat order: the list as it is, or cycled over ``seats`` seats."""
    count = seats if seats is not None else len(bots)
    if not game.min_seats <= count <= game.max_seats:
        raise click.UsageError(
            f"{game.title} is played by {game.min_seats} to {game.max_seats} seats; "
            f"{'--seats is' if seats is not None else f'the bot list names {len(bots)} bots, so'} {count}")
    return [bots[i % len(bots)] for i in range(count)]


def print_latencies(record: MatchRecord, as_json: bool) -> None:
    """Print every seat's decision latency: median and p99 in milliseconds."""
    for seat, name in enumerate(record.names):
        median, p99 = latency_summary(record.latencies[seat])
        if as_json:
            click.echo(json.dumps({"event": "latency", "seat": seat, "name": name,
                                   "decisions": len(record.latencies[seat]),
                                   "median_ms": round(median * 1000, 3), "p99_ms": round(p99 * 1000, 3)}))
        else:
            click.echo(f"latency: {name}: {len(record.latencies[seat])} decisions, "
                       f"median {median * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms")


def write_replay(path: Path, record: MatchRecord) -> None:
    """Write the replay of ``record`` to ``path`` as JSON (written whole, then renamed into place)."""
    data = record.replay_json()
    data["events"] = [e.to_json() for e in record.events]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


@main.command()
@game_option
@click.option("--bots", "bots_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Bot list (TOML). Default: the bundled example bots of the game.")
@click.option("--seats", type=int, default=None,
              help="Number of seats; the bot list is cycled to fill them. Default: one seat per bot.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Match seed. Default: a random seed, printed.")
@options_option
@clock_options
@click.option("--replay", "replay_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the replay (game, options, seed, names, every decision and fault) to this file.")
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for each bot's output (stdout and stderr). Default: discarded.")
@click.option("--listen", default=None, metavar="HOST:PORT",
              help="Listen on TCP too (for remote bots). Default: a private Unix socket only.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def match(game_name: str, bots_path: Path | None, seats: int | None, seed: int | None,
          options: tuple[str, ...], deadline: float, time_bank: float, max_faults: int,
          replay_path: Path | None, log_dir: Path | None, listen: str | None, as_json: bool) -> None:
    """Play one match between bot processes over gRPC and print it, with faults and latencies.

    Each seat's bot is started from the bot list with ARENA_ADDRESS and ARENA_TOKEN in its environment,
    plays over one gRPC stream, and is stopped when the match ends. A bot listed with a token instead of a
    command is remote: the arena waits for it to connect to --listen HOST:PORT with that token.
    """
    game, opts, bots = game_and_bots(game_name, options, bots_path)
    seated = pick_bots(bots, seats, game)
    remote = [b.name for b in seated if b.remote]
    if remote and listen is None:
        raise click.UsageError(f"bot {remote[0]!r} is remote (it has a token): give --listen HOST:PORT, the "
                               "address it connects to")
    if remote:
        click.echo(f"waiting for the remote bots {', '.join(remote)} to connect to {listen} with their tokens",
                   err=True)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    names = seat_names(seated)
    print_header({"game": game.name, "seed": seed, "names": names, "options": opts.to_json()},
                 game.title, as_json)
    try:
        record = asyncio.run(run_match(
            game, seated, seed, opts, clock=Clock(deadline, time_bank), max_faults=max_faults,
            address=listen, log_dir=log_dir, on_event=event_printer(names, as_json)))
    except (LaunchError, ServerError) as exc:
        raise click.ClickException(str(exc)) from None
    print_faults(record, as_json)
    print_latencies(record, as_json)
    if replay_path is not None:
        write_replay(replay_path, record)
        if not as_json:
            click.echo(f"replay written to {replay_path}")


def load_replay(source: str, db_path: Path | None) -> dict[str, Any]:
    """Return the replay named by ``source``: a file, or a match id in the database at ``db_path``."""
    if db_path is not None:
        try:
            match_id = int(source)
        except ValueError:
            raise click.UsageError(f"with --db, SOURCE is a match id, not {source!r}") from None
        store = open_store(db_path, readonly=True)
        try:
            return store.replay(match_id)
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
        finally:
            store.close()
    path = Path(source)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise click.ClickException(f"replay file {source!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise click.ClickException(f"cannot read replay {source!r}: {exc}") from None
    if not isinstance(data, dict) or "game" not in data:
        raise click.ClickException(f"{source!r} is not an arena replay")
    return data


def open_store(path: Path, *, readonly: bool = False) -> Store:
    """Open a ladder database, turning any problem into a one-line error."""
    try:
        return Store(path, readonly=readonly)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None


@main.command(name="replay")
@click.argument("source")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read match SOURCE (a match id) from this ladder database instead of a replay file.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def replay_command(source: str, db_path: Path | None, as_json: bool) -> None:
    """Show a replay again and check that re-running it gives the same events.

    SOURCE is a replay file written by `arena match --replay`, or with --db a match id of a ladder database.
    Exits with status 1 when the re-run differs from the stored events.
    """
    data = load_replay(source, db_path)
    try:
        _, events = replay(data)
    except GameError as exc:
        raise click.ClickException(f"replay {source!r} does not re-run: {exc}") from None
    game = get_game(data["game"])
    names = [str(n) for n in data["names"]]
    print_header({"game": game.name, "seed": data["seed"], "names": names, "options": data["options"]},
                 game.title, as_json)
    show = event_printer(names, as_json)
    for event in events:
        show(event)
    for fault in data.get("faults", []):
        f = Fault.from_json(fault)
        if as_json:
            click.echo(json.dumps({"event": "fault", **f.to_json()}, separators=(",", ":")))
        else:
            click.echo(f"fault: {names[f.seat]} at step {f.step}: {f.kind.value} ({f.detail})")
    stored = data.get("events")
    if stored is None:
        click.echo("the replay stores no events; nothing to compare", err=True)
        return
    fresh = [e.to_json() for e in events]
    if fresh != stored:
        first = next((i for i, (a, b) in enumerate(zip(fresh, stored, strict=False)) if a != b),
                     min(len(fresh), len(stored)))
        click.echo(f"replay differs from the stored events at event {first} "
                   f"({len(fresh)} re-run, {len(stored)} stored)", err=True)
        sys.exit(1)
    if not as_json:
        click.echo(f"replay verified: re-running it gives the same {len(fresh)} events")


DEFAULT_LADDER_MATCHES = 24
"""The budget of `arena ladder` run with no bot list and no budget: a short demonstration."""


def format_board(board: Board) -> str:
    """Return the leaderboard as an aligned text table, then one line per pair of neighbours."""
    header = ("rank", "ranks", "bot", "estimate", "95% interval", "matches", "decided", "TS mu", "TS sigma",
              "raw wins", "raw points", "faults", "lat p50 ms", "lat p99 ms")
    body = []
    for line in board.lines:
        r, fit = line.raw, line.fit
        body.append((str(line.rank), fit.ranks if fit else "-", r.bot, f"{fit.strength:.2f}" if fit else "-",
                     f"{fit.low:.2f}..{fit.high:.2f}" if fit else "-", str(r.matches),
                     "yes" if line.decided else "no", f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.wins:g}",
                     f"{r.mean_points:.1f}", str(r.faults), f"{r.median_ms:.2f}", f"{r.p99_ms:.2f}"))
    widths = [max(len(row[i]) for row in (header, *body)) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) if i == 2 else cell.rjust(w)
                       for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
             for row in (header, *body)]
    if board.pairs:
        lines.append(f"neighbours ({board.open_pairs} of {len(board.pairs)} pairs open):")
        lines += [f"  {pair.describe()}" for pair in board.pairs]
    return "\n".join(lines)


def print_board(board: Board, fmt: str) -> None:
    """Print the leaderboard as text, JSON (an object a line) or CSV."""
    rows = [line.to_json() for line in board.lines]
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(row))
        for pair in board.pairs:
            click.echo(json.dumps({"pair": pair.to_json()}))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(rows[0]) if rows else list(BoardLine.__dataclass_fields__))
        for row in rows:
            writer.writerow(row.values())
        click.echo(out.getvalue(), nl=False)
    else:
        click.echo(format_board(board))


class ProgressPrinter:
    """Prints the ladder's live progress line on stderr: in place on a terminal, every 10 s otherwise."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False

    def __call__(self, progress: Progress) -> None:
        planned = f"/{progress.planned}" if progress.planned is not None else ""
        eta = progress.eta_seconds
        eta_text = f", ETA {_duration(eta)}" if eta is not None else ""
        pairs = f", {progress.open_pairs} pairs open" if progress.open_pairs is not None else ""
        line = (f"matches {progress.done}{planned}, {progress.rate_per_hour:.0f}/h{eta_text}{pairs}, "
                f"leader {progress.leader} ({progress.leader_rating:.2f})")
        now = time.monotonic()
        if self.tty:
            click.echo(f"\r\x1b[K{line}", nl=False, err=True)
            self.shown = True
        elif now - self.last >= 10 or progress.done == progress.planned:
            click.echo(line, err=True)
            self.last = now

    def note(self, text: str) -> None:
        """Print a note on its own line (below the progress line on a terminal)."""
        if self.shown:
            click.echo("\r\x1b[K", nl=False, err=True)
            self.shown = False
        click.echo(text, err=True)

    def finish(self) -> None:
        if self.shown:
            click.echo("", err=True)
            self.shown = False


def _duration(seconds: float) -> str:
    whole = int(seconds)
    if whole >= 3600:
        return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
    return f"{whole // 60}m{whole % 60:02d}s"


@main.command()
@click.option("--bots", "bots_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Bot list (TOML). Default: the bundled example bots of the game, for "
                   f"{DEFAULT_LADDER_MATCHES} matches unless a budget is given.")
@game_option
@click.option("--seats", type=int, default=4, show_default=True, help="Seats per match.")
@click.option("--matches", type=click.IntRange(min=1), default=None,
              help="Stop when the database holds this many matches (a rerun resumes towards the same total).")
@click.option("--hours", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Start no new match after this many hours of this run (matches being played finish).")
@click.option("--tables", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="cores",
              help="Matches played at once.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Ladder seed: the same ladder seed gives the same match seeds. Default: the seed the "
                   "database holds, or for a new ladder a secret random one (a known seed would let a bot "
                   "work out every deal).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("arena.db"),
              show_default=True, help="The ladder database (SQLite); a rerun with it resumes the ladder.")
@options_option
@clock_options
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for each bot process's output. Default: discarded.")
@click.option("--until-decided", is_flag=True,
              help="Stop when the sequential test has decided every pair of neighbours (or at the budget).")
@decision_options
@click.option("--tau", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="TrueSkill's dynamics factor: 0 for programs that do not change; more (e.g. 0.083) for bots "
                   "that learn between matches. A database rated with another tau is rated again.")
def ladder(bots_path: Path | None, game_name: str, seats: int, matches: int | None, hours: float | None,
           tables: int, seed: int | None, db_path: Path, options: tuple[str, ...], deadline: float, time_bank: float,
           max_faults: int, log_dir: Path | None, until_decided: bool, zone: float, alpha: float, beta: float,
           tau: float) -> None:
    """Run a TrueSkill ladder between bot processes and store everything in a SQLite database.

    Matches are played in deal sets: one seed once per rotation of the seats, so every bot of the set gets
    every hand. Without --matches or --hours it runs until Ctrl-C (the bundled bots: a short default), or
    with --until-decided until every pair of neighbours is decided. Stop it any way you like, kill -9
    included: the same command resumes where it stood. The leaderboard is printed at the end; `arena
    leaderboard` shows it at any time.
    """
    game, opts, bots = game_and_bots(game_name, options, bots_path)
    if matches is None and hours is None and bots_path is None and not until_decided:
        matches = DEFAULT_LADDER_MATCHES
    test = SequentialTest(zone, alpha, beta)
    _run_ladder(game, opts, bots, seats, matches, hours, tables, seed, db_path, Clock(deadline, time_bank),
                max_faults, log_dir, test if until_decided else None, None, tau)


def _run_ladder(game: Game, opts: Options, bots: list[BotSpec], seats: int, matches: int | None,
                hours: float | None, tables: int, seed: int | None, db_path: Path, clock: Clock, max_faults: int,
                log_dir: Path | None, test: SequentialTest | None, pairs: tuple[tuple[str, str], ...] | None,
                tau: float) -> Board:
    """Run a ladder (``arena ladder``, ``arena compare``), print its board and return it."""
    hide = tuple(Path(f"{db_path}{suffix}").resolve() for suffix in ("", "-wal", "-shm", "-journal"))
    config = LadderConfig(game, opts, seats, seed or 0, bots, matches=matches, hours=hours, tables=tables,
                          clock=clock, max_faults=max_faults, log_dir=log_dir, hide=hide, until_decided=test,
                          pairs=pairs)
    try:
        config.check()
    except LadderError as exc:
        raise click.ClickException(str(exc)) from None
    store = open_store(db_path)
    if seed is None:
        try:
            held = store.identity()
        except StoreError as exc:
            store.close()
            raise click.ClickException(str(exc)) from None
        config.seed = held.seed if held is not None else random.SystemRandom().randrange(2**62)
    progress = ProgressPrinter()
    try:
        try:
            runner = Ladder(config, store, on_progress=progress, on_note=progress.note,
                            rating_system=TrueSkillSystem.for_game(game.name, seats, tau=tau))
        except (LadderError, StoreError) as exc:
            raise click.ClickException(str(exc)) from None
        before = runner.count
        limits = ([f"until decided ({test.describe()})"] if test is not None else []) + \
            ([f"until {matches} matches are stored"] if matches is not None else []) + \
            ([f"for {_duration(hours * 3600)}"] if hours is not None else [])
        budget = " or ".join(limits) or "until stopped (Ctrl-C)"
        click.echo(f"ladder: {game.title}, {seats} seats, {len(bots)} bots, {tables} tables, database "
                   f"{db_path} ({before} matches stored), {budget}", err=True)
        if runner.done and matches is not None and before >= matches:
            click.echo(f"the database already holds {before} matches; nothing to play "
                       "(raise --matches to play more)", err=True)
        elif runner.done:
            click.echo("every pair is already decided; nothing to play", err=True)
        try:
            timing = asyncio.run(_run_until_signal(runner))
            progress.finish()
        except KeyboardInterrupt:
            progress.finish()
            click.echo(f"interrupted: {runner.count} matches stored; the same command resumes", err=True)
            timing = runner.timing
        except (LadderError, StoreError, ServerError) as exc:
            progress.finish()
            raise click.ClickException(str(exc)) from None
        played = runner.count - before
        if played:
            click.echo(f"{played} matches played in {timing.wall:.1f} s; {timing.outside_share:.1%} of table "
                       "time outside matches", err=True)
        if test is not None:
            verdicts = runner.verdicts()
            still = sum(1 for _, v in verdicts if not v.decided)
            click.echo("every pair decided" if not still else f"{still} of {len(verdicts)} pairs still open "
                       "(the budget ran out)", err=True)
        board = build_board(store, test)
        print_board(board, "text")
        return board
    finally:
        store.close()


async def _run_until_signal(runner: Ladder) -> Timing:
    """Run the ladder; SIGTERM stops it like Ctrl-C (nothing finished is lost)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    if task is not None:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await runner.run()
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None


@main.command()
@click.argument("first")
@click.argument("second")
@click.option("--bots", "bots_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Bot list (TOML) naming FIRST and SECOND; its other bots fill the seats the game needs. "
                   "Default: the bundled example bots of the game.")
@game_option
@click.option("--seats", type=int, default=None,
              help="Seats per match. Default: the fewest the game is played by (fillers take the extra seats).")
@click.option("--matches", type=click.IntRange(min=1), default=4000, show_default=True,
              help="Give up (no verdict) when the database holds this many matches.")
@click.option("--tables", type=click.IntRange(min=1), default=os.cpu_count() or 1, show_default="cores",
              help="Matches played at once.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Keep the matches in this database (a rerun resumes). Default: a temporary one.")
@options_option
@clock_options
@decision_options
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for each bot process's output. Default: discarded.")
def compare(first: str, second: str, bots_path: Path | None, game_name: str, seats: int | None, matches: int,
            tables: int, db_path: Path | None, options: tuple[str, ...], deadline: float, time_bank: float,
            max_faults: int, zone: float, alpha: float, beta: float, log_dir: Path | None) -> None:
    """Play FIRST against SECOND on shared deals until a sequential test decides which is better.

    Every deal set seats both bots, and the other bots of the list when the game needs more seats, with
    the seats rotated so that each gets every hand. The test (an SPRT on the per-deal-set scores, as
    fastchess and fishtest do for game pairs) stops when one bot is better, or when they are equal within
    the indifference zone; it ends with "FIRST is better", "SECOND is better" or "no difference".
    """
    game, opts, bots = game_and_bots(game_name, options, bots_path)
    names = [b.name for b in bots]
    for name in (first, second):
        if name not in names:
            raise click.UsageError(f"bot {name!r} is not in the bot list ({', '.join(names)})")
    if first == second:
        raise click.UsageError("compare two different bots")
    count = seats if seats is not None else game.min_seats
    if not game.min_seats <= count <= game.max_seats:
        raise click.UsageError(f"{game.title} is played by {game.min_seats} to {game.max_seats} seats, not {count}")
    fillers = [b for b in bots if b.name not in (first, second)]
    if 2 + len(fillers) < count:
        raise click.UsageError(f"{count} seats need {count - 2} other bots in the list to fill them; it has "
                               f"{len(fillers)}")
    chosen = [b for b in bots if b.name in (first, second)] + fillers[:count - 2]
    test = SequentialTest(zone, alpha, beta)
    with contextlib.ExitStack() as stack:
        if db_path is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-compare-"))
            db_path = Path(folder) / "compare.db"
        _run_ladder(game, opts, chosen, count, matches, None, tables, None, db_path, Clock(deadline, time_bank),
                    max_faults, log_dir, test, ((first, second),), 0.0)
        store = open_store(db_path, readonly=True)
        try:
            paired = Evidence.of(store.results()).paired(first, second)
        finally:
            store.close()
    verdict = test.verdict(paired)
    mean = sum(paired) / len(paired) if paired else 0.5
    summary = f"{len(paired)} shared deal sets, mean score of {first} against {second} {mean:.3f}"
    if verdict is Verdict.FIRST:
        click.echo(f"{first} is better ({summary})")
    elif verdict is Verdict.SECOND:
        click.echo(f"{second} is better ({summary})")
    elif verdict is Verdict.EQUAL:
        click.echo(f"no difference within the zone of {zone:g} ({summary})")
    else:
        click.echo(f"undecided: the budget of {matches} matches ran out ({summary})")


@main.command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("arena.db"),
              show_default=True, help="The ladder database.")
@click.option("--json", "fmt", flag_value="json", help="One JSON object a line (then one per pair of neighbours).")
@click.option("--csv", "fmt", flag_value="csv", help="CSV with a header line.")
@decision_options
def leaderboard(db_path: Path, fmt: str | None, zone: float, alpha: float, beta: float) -> None:
    """Print the leaderboard of a ladder database, also while the ladder runs.

    Bots are ranked by a batch fit over every stored match (Bradley-Terry on the pairwise results of each
    match, on TrueSkill's scale): the same matches give the same board whatever order they were played in.
    The 95% interval and the rank range ("1-2": not separated from a neighbour) come from a bootstrap over
    deal sets; "decided" says the sequential test has decided the bot's neighbour pairs. TS mu and sigma
    are the online TrueSkill rating; raw wins and raw points are plain counts and averages over whoever the
    bot met (not adjusted for opponents). Latency is the median and p99 decision time.
    """
    store = open_store(db_path, readonly=True)
    try:
        identity = store.identity()
        if identity is None:
            raise click.ClickException(f"{str(db_path)!r} holds no ladder yet")
        board = build_board(store, SequentialTest(zone, alpha, beta))
        if fmt is None:
            click.echo(f"{identity.describe()}; {board.matches} matches")
        print_board(board, fmt or "text")
    finally:
        store.close()


def run() -> None:
    """Entry point that never shows a traceback for a bad input."""
    try:
        main()
    except GameError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
