"""The ``arena`` command line: parse, call the library, print. Nothing here knows a rule of a game."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import csv
import dataclasses
import faulthandler
import io
import json
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from arena.contest import commands as contest_commands
from arena.contest import finals_commands
from arena.core import replay as replay_format
from arena.core.referee import Clock, Fault, MatchRecord, random_seat, referee_match
from arena.games import BOT_LIST, ENVIRONMENT, bot_list, default_game, game_folder, get_game, register_text
from arena.games import game_names as registered_games
from arena.games.base import Event, Game, GameError, Options
from arena.ladder.board import Board, BoardLine, build_board
from arena.ladder.cluster import ClusterError
from arena.ladder.estimate import Evidence, SequentialTest, Verdict, mean_score_interval
from arena.ladder.ladder import Ladder, LadderConfig, LadderError, Progress, Timing
from arena.ladder.setup import open_ladder
from arena.ladder.store import Store, StoreError
from arena.ladder.workers import QUEUED, WAITING, WorkerExecutor
from arena.launch import tempdir
from arena.launch.botlist import BotListError, BotSpec, bundled_aliases, bundled_folder, load_bot_list, merge_bot_lists
from arena.launch.jail import shared_folders
from arena.launch.process import LaunchError, machine_sandbox
from arena.launch.runner import latency_summary, new_match_id, run_match, seat_names
from arena.launch.sandbox import Mode, Sandbox, SandboxError
from arena.protocol.server import ServerError
from arena.text import CONTINUATION, visible
from arena.tools import gamecheck
from arena.tools.check import ask_again, check_bot
from arena.tools.new import LANGUAGES, ScaffoldError, write_bot

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay")
"""Seat names of the built-in random players in ``arena demo``."""


class CommandError(click.ClickException):
    """A command's one-line failure (exit status 1). Its message may quote a bot (a crash, the end of its
    output), so it is shown with control characters escaped and the lines after the first indented."""

    def format_message(self) -> str:
        return visible(self.message, newline=CONTINUATION)


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
    return lambda event: None if event.quiet else click.echo(event.describe(names))


def print_header(record_like: dict[str, Any], title: str, as_json: bool) -> None:
    """Print what is about to be played: game, seats, seed and options."""
    if as_json:
        click.echo(json.dumps({"event": "match", **record_like}, separators=(",", ":")))
        return
    defaults = get_game(record_like["game"]).options().to_json()
    opts = ", ".join(f"{k} {v}" for k, v in record_like["options"].items()
                     if v is not None and (k == "target" or v != defaults.get(k)))
    seats = ", ".join(f"{i}: {visible(str(n))}" for i, n in enumerate(record_like["names"]))
    click.echo(f"{title}, {len(record_like['names'])} seats, seed {record_like['seed']} ({opts})")
    click.echo(f"seats: {seats}")
    if record_like.get("match_id"):
        click.echo(f"match id: {visible(str(record_like['match_id']))} (what each bot was told; its log names the "
                   "match by it, and a decision by the seat's request number, as `arena replay --seat` does)")
    if "sandbox" in record_like:
        click.echo(record_like["sandbox"])


def fault_line(fault: Fault, names: Sequence[str]) -> str:
    """Return the line of one fault: its seat, step and kind, and its detail with the bot's text escaped."""
    return f"fault: {visible(names[fault.seat])} at step {fault.step}: {fault.kind.value} ({visible(fault.detail)})"


def print_faults(record: MatchRecord, as_json: bool) -> None:
    """Print the faults of a match and the seats benched for them (nothing when there were none)."""
    for fault in record.faults:
        if as_json:
            click.echo(json.dumps({"event": "fault", **fault.to_json()}, separators=(",", ":")))
        else:
            click.echo(fault_line(fault, record.names))
    for seat in sorted(record.benched):
        if as_json:
            click.echo(json.dumps({"event": "benched", "seat": seat}, separators=(",", ":")))
        else:
            click.echo(f"benched: {visible(record.names[seat])} was played by the defaults after too many faults "
                       "and is placed last for ratings")


class GameName(click.ParamType):  # type: ignore[type-arg]
    """A registered game's name, looked up when the command runs (games registered by ARENA_GAMES included)."""

    name = "game"

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(registered_games()) + "]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        name = str(value).lower()
        try:
            get_game(name)
        except GameError as exc:
            self.fail(str(exc), param, ctx)
        return name


GAME_CHOICE = GameName()


class GameOption(click.Option):
    """``--game``, whose help names the default game of this run's registry (``ARENA_GAMES`` included)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        if record is None:
            return None
        return record[0], record[1].replace("{default}", default_game())


# Options shared by the commands, declared once so that their names, defaults and help agree.
game_option = click.option(
    "--game", "game_name", type=GAME_CHOICE, default=None, cls=GameOption,
    help="The game to play. Default: the one game every bot of --bots plays (the games of its entries), asked "
         "for when that is not one game; without --bots, the first registered game, {default}.")
options_option = click.option(
    "-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
    help="A game option, repeatable: `arena games` lists each game's options and their defaults.")


class RenamedOption(click.Option):
    """An option that a release renamed: its old name (``old``) still works, hidden from ``--help``, and says on
    stderr that it is now the new one."""

    def __init__(self, *args: Any, old: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.old = old

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        parser.add_option(obj=self, opts=[self.old], dest=f"{self.name}__old", action="store", nargs=self.nargs)

    def consume_value(self, ctx: click.Context, opts: Mapping[str, Any]) -> tuple[Any, ParameterSource]:
        old = f"{self.name}__old"
        if old in opts and self.name not in opts:
            click.echo(f"note: {self.old} is now called {self.opts[0]}; the old name goes in a later release", err=True)
            opts = {**opts, str(self.name): opts[old]}
        return super().consume_value(ctx, opts)


# --throw-window-ms before 0.2 (a Cabanga! word for what every game's sealed window is): kept, hidden, for one release
sealed_window_option = click.option(
    "--sealed-window-ms", "sealed_window_ms", cls=RenamedOption, old="--throw-window-ms",
    type=click.FloatRange(min=0.0), default=0.0, show_default=True,
    help="Hold every sealed window (a step at which several seats decide at once, unseen by each other) this many "
         "milliseconds, whether or not a seat is asked in it, so the time between requests does not tell who was "
         "asked; 0: no hold. Seats asked that answer later than this still lengthen the window.")


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
    """Referee, protocol and ladder for card-game bot contests: Cabanga!, L.A.M.A. and every registered game.

    Start with `arena demo` to watch a match between built-in random players. More games plug in as packages
    (docs/adding-a-game.md): installed ones register themselves; ARENA_GAMES=name=package,... names others.
    """
    try:
        register_text(os.environ.get(ENVIRONMENT, ""))
    except GameError as exc:
        raise click.UsageError(str(exc)) from None


@main.command("games")
@click.argument("game_name", required=False, type=GAME_CHOICE, metavar="[GAME]")
@click.option("--check", is_flag=True,
              help="Run the checks every game must pass on GAME, or on every registered game: seat counts, legal "
                   "defaults, random playouts, determinism, views and hiding (G2), codec, its recorded match. "
                   "Exits with 1 naming each check that fails.")
@click.option("--record", is_flag=True,
              help=f"Record GAME's match for the golden check into its folder ({gamecheck.GOLDEN}): a seeded match "
                   "between random players, its events included. Record again only when the rules change on "
                   "purpose.")
@click.option("--seats", type=int, default=None, help="With --record: the seats (default: the game's fewest).")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="With --record: the match's seed.")
@options_option
def list_games(game_name: str | None, check: bool, record: bool, seats: int | None, seed: int,
               options: tuple[str, ...]) -> None:
    """List the registered games (or GAME): name, seats, decision kinds and options with their defaults.

    With --check, run on them the checks every game must pass, built in or plug-in (docs/adding-a-game.md); -o
    sets the options they play with. With --record, record GAME's match for the golden check.
    """
    if record:
        record_golden(game_name, seats, seed, options)
        return
    if check:
        check_games([game_name] if game_name else registered_games(), options)
        return
    if seats is not None or options:
        raise click.UsageError("--seats and -o go with --check or --record")
    for name in [game_name] if game_name else registered_games():
        try:
            game = get_game(name)
        except GameError as exc:
            click.echo(f"{name}: cannot be loaded: {visible(str(exc))}")
            continue
        option_texts = ", ".join(f"{k}={v}" for k, v in game.options().to_json().items())
        click.echo(f"{name}: {game.title}, {game.min_seats}-{game.max_seats} seats; decisions: "
                   f"{', '.join(game.kinds)}; options: {option_texts or 'none'}")


def check_games(names: Sequence[str], options: Sequence[str]) -> None:
    """Run :func:`arena.tools.gamecheck.check_game` on each game and print every outcome; exit 1 when one fails."""
    failing: list[str] = []
    for name in names:
        try:
            game = get_game(name)
            opts = game_options(game, options)
        except GameError as exc:
            click.echo(f"{name}: cannot be loaded: {visible(str(exc))}")
            failing.append(f"{name} (cannot be loaded)")
            continue
        click.echo(f"{name}: {game.title}, {game.min_seats}-{game.max_seats} seats")
        outcomes = gamecheck.check_game(game, options=opts)
        for outcome in outcomes:
            click.echo("  " + visible(outcome.line()))
        failed = [o.check for o in outcomes if o.status is gamecheck.Status.FAILED]
        if failed:
            failing.append(f"{name} ({', '.join(failed)})")
    if failing:
        raise CommandError(f"checks fail: {'; '.join(failing)}")
    click.echo(f"PASS: every check of {len(names)} game{'s' if len(names) != 1 else ''}")


def record_golden(game_name: str | None, seats: int | None, seed: int, options: Sequence[str]) -> None:
    """Write GAME's recorded match (:func:`arena.tools.gamecheck.record_golden`) into its folder."""
    if game_name is None:
        raise click.UsageError("--record needs a GAME")
    game = get_game(game_name)
    seats = game.min_seats if seats is None else seats
    if not game.min_seats <= seats <= game.max_seats:
        raise click.BadParameter(f"{game.title} is played by {game.min_seats} to {game.max_seats} seats, not {seats}",
                                 param_hint="--seats")
    folder = game_folder(game.name)
    if folder is None:
        raise CommandError(f"cannot find the folder of game {game.name!r} to record its match in")
    data = gamecheck.record_golden(game, seats, seed, game_options(game, options))
    path = folder / gamecheck.GOLDEN
    try:
        replay_format.write(path, data)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc}") from None
    click.echo(f"recorded {len(data['steps'])} steps and {len(data['events'])} events of {game.title} ({seats} "
               f"seats, seed {seed}) to {path}")


@main.command("demo")
@game_option
@click.option("--seats", type=int, default=4, show_default=True,
              help="Number of seats (the game's range: `arena games` lists them).")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Match seed; the same seed prints the same match. Default: a random seed, printed.")
@options_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def demo(game_name: str | None, seats: int, seed: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Run one in-process match between built-in random players and print it.

    Every event of the match is printed (turns, throws, draws, round scores), then the final places.
    """
    game = get_game((game_name or default_game()).lower())
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
    record = asyncio.run(referee_match(game, players, seed, opts, on_event=event_printer(names, as_json)))
    print_faults(record, as_json)


sandbox_option = click.option(
    "--sandbox", "sandbox_mode", type=click.Choice([m.value for m in Mode]), default=Mode.AUTO.value,
    show_default=True, help="Bot isolation: auto (the strongest this machine gives, said at start), strict "
                            "(refuse to run without the bubblewrap jail and cgroups), limits (resource limits "
                            "only, no jail).")


def pick_sandbox(mode: str) -> Sandbox:
    """Return the sandbox for ``--sandbox mode``; exit 1 for strict where it cannot be had."""
    try:
        sandbox = machine_sandbox(mode)
    except SandboxError as exc:
        raise CommandError(str(exc)) from None
    if sandbox.warning():
        click.echo(visible(sandbox.warning()), err=True)
    return sandbox


def default_bot_list(game: Game) -> Path:
    """Return the list of ``game``'s bundled example bots (``bots/bots.toml`` in the game's folder)."""
    path = bot_list(game.name)
    if path is None:
        raise click.UsageError(f"{game.title} ships no bundled bots (no {BOT_LIST} in its folder); give a bot list "
                               "with --bots")
    return path


def game_and_bots(game_name: str | None, options: Sequence[str], bots_paths: Sequence[Path]
                  ) -> tuple[Game, Options, list[BotSpec]]:
    """Return the game, its options and the bots of the lists ``bots_paths`` (``--bots`` given once or more,
    merged; the bundled list when none); usage errors.

    The game is ``game_name`` (``--game``); without it, the one game the lists' bots all play
    (:func:`settled_game`), or with no list the default game (:func:`arena.games.default_game`)."""
    try:
        if game_name is None and bots_paths:
            bots = merge_bot_lists([(str(path), load_bot_list(path)) for path in bots_paths])
            game = get_game(settled_game(bots, bots_paths, registered_games()))
            return game, game_options(game, options), bots
        game = get_game((game_name or default_game()).lower())
        opts = game_options(game, options)
        paths = list(bots_paths) or [default_bot_list(game)]
        return game, opts, merge_bot_lists([(str(path), load_bot_list(path)) for path in paths])
    except BotListError as exc:
        raise click.UsageError(str(exc)) from None


def settled_game(bots: Sequence[BotSpec], bots_paths: Sequence[Path], names: Sequence[str]) -> str:
    """Return the one game of the registered ``names`` that every bot of ``bots`` (of the lists ``bots_paths``)
    plays, a bot whose entry names no ``games`` playing any. Raises :class:`click.UsageError` asking for
    ``--game``, naming the games, when that is not one game and more than one is registered."""
    common = [name for name in names if all(bot.plays(name) for bot in bots)]
    if len(common) == 1:
        return common[0]
    if len(names) == 1:
        return names[0]
    lists = ", ".join(str(path) for path in bots_paths)
    if not common:
        why = f"no game is played by every bot of {lists}"
    elif not any(bot.games for bot in bots):
        why = f"the bots of {lists} do not say which game they play (the games key of an entry)"
    elif len(common) == len(names):
        why = f"every bot of {lists} plays every game"
    else:
        why = f"every bot of {lists} plays {', '.join(common)}"
    raise click.UsageError(f"give --game: {why}; the games are {', '.join(names)}")


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
            click.echo(f"latency: {visible(name)}: {len(record.latencies[seat])} decisions, "
                       f"median {median * 1000:.2f} ms, p99 {p99 * 1000:.2f} ms")


_play_alias = copy.copy(demo)
_play_alias.hidden = True  # the command's name before 0.2: "play" now names a Cabanga! decision only
main.add_command(_play_alias, "play")


@main.command()
@game_option
@click.option("--bots", "bots_paths", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="Bot list (TOML); give it more than once to merge lists (bot names must differ). Default: the "
                   "bundled example bots of the game.")
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
@sandbox_option
@sealed_window_option
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def match(game_name: str | None, bots_paths: tuple[Path, ...], seats: int | None, seed: int | None,
          options: tuple[str, ...], deadline: float, time_bank: float, max_faults: int,
          replay_path: Path | None, log_dir: Path | None, listen: str | None, sandbox_mode: str,
          sealed_window_ms: float,
          as_json: bool) -> None:
    """Play one match between bot processes over gRPC and print it, with faults and latencies.

    Each seat's bot is started from the bot list with ARENA_ADDRESS and ARENA_TOKEN in its environment,
    plays over one gRPC stream, and is stopped when the match ends: every run starts new processes, so none
    has played the deal before, whatever the seed. A bot listed with a token instead of a command is remote:
    the arena waits for it to connect to --listen HOST:PORT with that token; it is a process the arena does
    not own, so it may remember a seed it played in an earlier run.
    """
    game, opts, bots = game_and_bots(game_name, options, bots_paths)
    seated = pick_bots(bots, seats, game)
    for bot in dict.fromkeys(seated):
        if not bot.plays(game.name):
            click.echo(f"warning: bot {visible(bot.name)!r} says it plays {', '.join(bot.games)}, not "
                       f"{game.name}", err=True)
    remote = [b.name for b in seated if b.remote]
    if remote and listen is None:
        raise click.UsageError(f"bot {remote[0]!r} is remote (it has a token): give --listen HOST:PORT, the "
                               "address it connects to")
    if remote:
        click.echo(f"waiting for the remote bots {', '.join(remote)} to connect to {listen} with their tokens",
                   err=True)
    sandbox = pick_sandbox(sandbox_mode)
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    names = [visible(n) for n in seat_names(seated)]
    match_id = new_match_id(game)
    print_header({"game": game.name, "seed": seed, "names": names, "options": opts.to_json(),
                  "sandbox": sandbox.describe(), "match_id": match_id}, game.title, as_json)
    try:
        record = asyncio.run(run_match(
            game, seated, seed, opts, clock=Clock(deadline, time_bank), max_faults=max_faults,
            address=listen, log_dir=log_dir, on_event=event_printer(names, as_json), sandbox=sandbox,
            sealed_window=sealed_window_ms / 1000, match_id=match_id))
    except (LaunchError, ServerError) as exc:
        raise CommandError(str(exc)) from None
    print_faults(record, as_json)
    print_latencies(record, as_json)
    if replay_path is not None:
        try:
            replay_format.write(replay_path, replay_format.from_record(record))
        except OSError as exc:
            raise CommandError(f"cannot write the replay {str(replay_path)!r}: {exc}") from None
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
            raise CommandError(str(exc)) from None
        finally:
            store.close()
    try:
        return replay_format.read(Path(source))
    except replay_format.ReplayError as exc:
        raise CommandError(str(exc)) from None


def open_store(path: Path, *, readonly: bool = False) -> Store:
    """Open a ladder database, turning any problem into a one-line error."""
    try:
        return Store(path, readonly=readonly)
    except StoreError as exc:
        raise CommandError(str(exc)) from None


@main.command(name="replay")
@click.argument("source")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Read match SOURCE (a match id) from this ladder database instead of a replay file.")
@click.option("--seat", type=click.IntRange(min=0), default=None,
              help="Show the match as this seat met it: its view, what it was told, its choices, its pick, its "
                   "latency and its faults at each of its decisions; nothing it did not see.")
@click.option("--step", type=click.IntRange(min=0), default=None,
              help="With --seat: only the seat's first decision at or after this step.")
@click.option("--bot", "bot_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="With --seat: ask this bot (a bot list; the first bot, or --name) the seat's requests again, "
                   "in order, and show where its answers differ from the replay's.")
@click.option("--name", "bot_name", default=None, help="The bot of the --bot list to ask.")
@click.option("--deadline", type=click.FloatRange(min=0.001), default=1.0, show_default=True,
              help="With --bot: seconds allowed per decision.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object a line instead of text.")
def replay_command(source: str, db_path: Path | None, seat: int | None, step: int | None, bot_path: Path | None,
                   bot_name: str | None, deadline: float, as_json: bool) -> None:
    """Show a replay again and check that re-running it gives the same events.

    SOURCE is a replay file written by `arena match --replay`, or with --db a match id of a ladder database.
    Exits with status 1 when the re-run differs from the stored events. With --seat N it shows that seat's
    decisions instead (its own hand, never another's, nor the seed); with --bot it also asks a bot again.
    """
    data = load_replay(source, db_path)
    if replay_format.is_seat_replay(data):
        show_seat_replay(source, data, seat, step, bot_path, as_json)
        return
    if seat is None:
        if step is not None or bot_path is not None:
            raise click.UsageError("--step and --bot need --seat")
        show_whole_replay(source, data, as_json)
        return
    try:
        names = [str(n) for n in data["names"]]
        decisions = [d.to_json(names) for d in replay_format.seat_decisions(data, seat)]
    except replay_format.ReplayError as exc:
        raise CommandError(f"replay {source!r}: {exc}") from None
    show_seat(data, seat, decisions, step, as_json)
    if bot_path is not None:
        ask_bot_again(bot_path, bot_name, data, seat, deadline, step, as_json)


def show_seat_replay(source: str, data: dict[str, Any], seat: int | None, step: int | None,
                     bot_path: Path | None, as_json: bool) -> None:
    """Print one seat's replay (``arena submit --replay`` writes them): its decisions as the seat met them. It
    holds no seed, so it is shown, not re-run."""
    own = data.get("seat")
    if not isinstance(own, int) or not isinstance(data.get("decisions"), list):
        raise CommandError(f"{source!r} is not a readable seat's replay (no seat or decisions)")
    if seat is not None and seat != own:
        raise CommandError(f"{source!r} is the replay of seat {own} alone: it holds nothing of seat {seat}")
    if bot_path is not None:
        raise click.UsageError("--bot asks a bot a whole replay's requests again; a seat's replay holds no seed")
    show_seat(data, own, [d for d in data["decisions"] if isinstance(d, dict)], step, as_json)
    for line in data.get("after") or []:
        if not as_json:
            click.echo(f"  told: {visible(str(line))}")
    if not as_json:
        click.echo("a seat's replay: shown, not re-run (it holds no seed nor the other seats' hands)")


def show_seat(data: Mapping[str, Any], seat: int, decisions: list[dict[str, Any]], step: int | None,
              as_json: bool) -> None:
    """Print ``seat``'s decisions (:meth:`arena.core.replay.SeatDecision.to_json` with names), from ``step`` on
    (then only the first)."""
    if step is not None:
        decisions = [d for d in decisions if int(d.get("step", -1)) >= step][:1]
        if not decisions:
            raise CommandError(f"seat {seat} has no decision at or after step {step}")
    names = [visible(str(n)) for n in data["names"]]
    game = get_game(str(data["game"]))
    if as_json:
        click.echo(json.dumps({"event": "seat", "game": game.name, "seat": seat, "names": names,
                               "options": data.get("options")}, separators=(",", ":")))
    else:
        match = f"; match id {visible(str(data['match_id']))}" if data.get("match_id") else ""
        click.echo(f"{game.title}, {len(names)} seats, as seen by seat {seat} ({names[seat]}); "
                   f"{len(decisions)} decision{'s' if len(decisions) != 1 else ''}{match}")
    for decision in decisions:
        if as_json:
            shown = {k: v for k, v in decision.items() if k != "told"}
            click.echo(json.dumps({"event": "decision", **shown}, separators=(",", ":")))
            continue
        # step: the referee's count of every step; request: the seat's own count, the one its log names
        request = decision.get("request")
        sent = f"request {request}" if request is not None else "not sent"
        choices = " ".join(str(c) for c in decision.get("choices") or []) or "(nothing)"
        click.echo(f"\nstep {decision.get('step')}, {sent}: {visible(str(decision.get('kind')))}, pick "
                   f"{visible(str(decision.get('pick')))} of: {visible(choices)}")
        for line in decision.get("told") or []:
            click.echo(f"  told: {visible(str(line))}")
        view = ", ".join(f"{k} {_short(v)}" for k, v in (decision.get("view") or {}).items())
        click.echo(f"  view: {visible(view)}")
        latency = decision.get("latency_ms")
        took = f" in {latency:.2f} ms" if isinstance(latency, (int, float)) else " (not asked)"
        answer = visible(str(decision.get("decision")))
        click.echo(f"  answer: {answer}{took}")
        if decision.get("debug"):
            click.echo(f"  debug: {visible(str(decision['debug']), newline=CONTINUATION)}")
        fault = decision.get("fault")
        if isinstance(fault, dict):
            click.echo(f"  fault: {visible(str(fault.get('kind')))} ({visible(str(fault.get('detail')))}); the "
                       f"default {answer} was applied")


def _short(value: Any) -> str:
    """Return a view's value in one short line: lists (nested ones too) in brackets, items space separated."""
    if isinstance(value, list):
        return "[" + " ".join(_short(v) for v in value) + "]"
    return str(value)


def ask_bot_again(bot_path: Path, bot_name: str | None, data: dict[str, Any], seat: int, deadline: float,
                  step: int | None, as_json: bool) -> None:
    """Ask a bot the seat's requests again and print where its answers differ; exit 1 if any do."""
    spec = one_bot(bot_path, bot_name)
    try:
        answers = asyncio.run(ask_again(spec, data, seat, clock=Clock(deadline)))
    except (LaunchError, ServerError) as exc:
        raise CommandError(str(exc)) from None
    if step is not None:
        answers = [a for a in answers if a[0] >= step][:1]
    differ = [(s, was, now) for s, was, now in answers if was != now]
    for s, was, now in differ:
        if as_json:
            click.echo(json.dumps({"event": "differs", "step": s, "replay": was, "now": now}, separators=(",", ":")))
        else:
            click.echo(f"step {s}: the replay has {visible(was)}, {visible(spec.name)} now answers {visible(now)}")
    summary = f"{visible(spec.name)} answers {len(answers) - len(differ)} of {len(answers)} requests as in the replay"
    if as_json:
        click.echo(json.dumps({"event": "asked_again", "bot": spec.name, "requests": len(answers),
                               "differ": len(differ)}, separators=(",", ":")))
    else:
        click.echo(summary)
    if differ:
        sys.exit(1)


def one_bot(path: Path, name: str | None) -> BotSpec:
    """Return the bot called ``name`` of the bot list at ``path`` (the only or first one without a name)."""
    try:
        bots = load_bot_list(path)
    except BotListError as exc:
        raise click.UsageError(str(exc)) from None
    if name is None:
        if len(bots) > 1:
            raise click.UsageError(f"{str(path)!r} lists {len(bots)} bots; say which with --name "
                                   f"({', '.join(b.name for b in bots)})")
        return bots[0]
    for bot in bots:
        if bot.name == name:
            return bot
    raise click.UsageError(f"{str(path)!r} has no bot {name!r}; it lists {', '.join(b.name for b in bots)}")


def show_whole_replay(source: str, data: dict[str, Any], as_json: bool) -> None:
    """Print a whole replay (events and faults) and exit 1 unless re-running it gives the stored events."""
    try:
        events, difference = replay_format.verify(data)
    except GameError as exc:
        raise CommandError(f"replay {source!r} does not re-run: {exc}") from None
    game = get_game(data["game"])
    names = [visible(str(n)) for n in data["names"]]
    print_header({"game": game.name, "seed": data["seed"], "names": names, "options": data["options"],
                  "match_id": data.get("match_id", "")}, game.title, as_json)
    show = event_printer(names, as_json)
    for event in events:
        show(event)
    for fault in data.get("faults", []):
        f = Fault.from_json(fault)
        if as_json:
            click.echo(json.dumps({"event": "fault", **f.to_json()}, separators=(",", ":")))
        else:
            click.echo(fault_line(f, names))
    if data.get("events") is None:
        click.echo("the replay stores no events; nothing to compare", err=True)
        return
    if difference is not None:
        click.echo(f"replay {difference}", err=True)
        sys.exit(1)
    if not as_json:
        click.echo(f"replay verified: re-running it gives the same {len(events)} events")


@main.command()
@click.argument("bots_path", metavar="BOTS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", "bot_name", default=None, help="The bot of the list to check (needed if it lists several).")
@click.option("--game", "game_names", type=GAME_CHOICE, multiple=True,
              help="A game the bot plays, repeatable. Default: the bot list entry's games, else both.")
@click.option("--deadline", type=click.FloatRange(min=0.001), default=1.0, show_default=True,
              help="Seconds allowed per decision (the ladder's default is 1).")
@click.option("--max-faults", type=click.IntRange(min=1), default=3, show_default=True,
              help="Faults in one match after which the bot is played by the defaults.")
@click.option("--rounds", type=click.IntRange(min=1), default=2, show_default=True,
              help="Rounds of each seat-count match (the option variants are played as they are).")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Seed of the deals.")
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the bot's output here. Default: a private folder, removed afterwards.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def check(bots_path: Path, bot_name: str | None, game_names: tuple[str, ...], deadline: float, max_faults: int,
          rounds: int, seed: int, log_dir: Path | None, as_json: bool) -> None:
    """Check a bot before the ladder does: every game, seat count, option variant and edge state.

    BOTS is a bot list (TOML); the bot is started exactly as the ladder starts it (same launcher and
    sandbox). It plays whole matches at every seat count against random players, the option variants
    (rounds, target, symbols, climb), and hand-set edge states: a throw with several candidates, the last card
    in hand, a L.A.M.A. seat that must quit, the last seat in that may not draw. The report gives, per
    decision kind, the latency against the deadline, and every timeout, crash (with the end of the bot's
    output), malformed or illegal answer with the request that caused it. Exit status 1 when anything failed.
    """
    spec = one_bot(bots_path, bot_name)
    if spec.remote:
        raise click.UsageError(f"bot {spec.name!r} is remote (it has a token): arena check starts the bots it checks")
    declared = game_names or spec.games or tuple(registered_games())
    try:
        games = [get_game(n.lower()) for n in dict.fromkeys(declared)]
    except GameError as exc:
        raise click.UsageError(f"bot {spec.name!r}: {exc}") from None
    progress = (lambda label: None) if as_json else (lambda label: click.echo(f"checking: {label}", err=True))
    if not as_json:
        for warning in shared_folders([spec]):
            click.echo(f"warning: {visible(warning)}", err=True)
    try:
        report = asyncio.run(check_bot(spec, games, clock=Clock(deadline), max_faults=max_faults, seed=seed,
                                       rounds=rounds, log_dir=log_dir, on_run=progress))
    except ServerError as exc:
        raise CommandError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1))
    else:
        for line in report.lines():
            click.echo(line)
    if not report.passed:
        sys.exit(1)


@main.command()
@click.argument("name")
@game_option
@click.option("--lang", type=click.Choice(LANGUAGES), default="python", show_default=True,
              help="The bot's language.")
@click.option("--dir", "parent", type=click.Path(file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="Where to create the bot's folder NAME.")
def new(name: str, game_name: str | None, lang: str, parent: Path) -> None:
    """Write a minimal bot NAME (a folder) and its bot list entry, ready for `arena check`.

    Python bots use the arena's SDK; JavaScript, C++, Go, Java and Rust bots are the bundled examples with the
    protocol's .proto files beside them, in proto/: the envelope and the games' (JavaScript: npm install first;
    C++: build with CMake first; Go, Java and Rust: sh build.sh first, offline with Debian's packages; as
    bots.toml says).
    """
    import arena.v2

    folder = parent / name
    try:
        files = write_bot(folder, name, (game_name or default_game()).lower(), lang, bundled=bundled_folder(),
                          proto=Path(arena.v2.__file__).resolve().parent / "arena.proto")
    except (ScaffoldError, OSError) as exc:
        raise CommandError(str(exc)) from None
    for path in files:
        click.echo(f"wrote {path}")
    first = {"python": "", "js": f"cd {folder} && npm install && cd - && ",
             "cpp": f"cmake -S {folder} -B {folder / 'build'} && cmake --build {folder / 'build'} && ",
             "go": f"sh {folder / 'build.sh'} && ", "java": f"sh {folder / 'build.sh'} && ",
             "rust": f"sh {folder / 'build.sh'} && "}[lang]
    click.echo(f"next: {first}arena check {folder / 'bots.toml'}")


DEFAULT_LADDER_MATCHES = 24
"""The budget of `arena ladder` run with no bot list and no budget: a short demonstration."""


def format_board(board: Board) -> str:
    """Return the leaderboard as an aligned text table, then one line per pair of neighbours."""
    header = ("rank", "ranks", "bot", "estimate", "95% interval", "matches", "decided", "TS mu", "TS sigma",
              "raw wins", "raw points", "faults", "lat p50 ms", "lat p99 ms")
    body = []
    for line in board.lines:
        r, fit = line.raw, line.fit
        ranks = fit.ranks if fit else "did not start" if r.bot in board.not_started else "-"
        body.append((str(line.rank), ranks, r.bot, f"{fit.strength:.2f}" if fit else "-",
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
    lines += [f"did not start: {name}: {why.splitlines()[0][:300]}" for name, why in sorted(board.not_started.items())]
    return "\n".join(visible(line) for line in lines)


def print_board(board: Board, fmt: str, *, sandbox: str | None = None) -> None:
    """Print the leaderboard as text, JSON (an object a line) or CSV; ``sandbox`` (the isolation level the
    ladder ran under) is a field of every JSON and CSV row of a bot when given."""
    extra = {"sandbox": sandbox} if sandbox is not None else {}
    rows = [line.to_json() | extra for line in board.lines]
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(row))
        for pair in board.pairs:
            click.echo(json.dumps({"pair": pair.to_json()}))
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(list(rows[0]) if rows else [*BoardLine.__dataclass_fields__, *extra])
        for row in rows:
            writer.writerow(row.values())
        click.echo(out.getvalue(), nl=False)
    else:
        click.echo(format_board(board))


class ProgressPrinter:
    """Prints the ladder's live progress line on stderr: in place on a terminal, every 10 s otherwise."""

    def __init__(self, where: Callable[[], str] | None = None) -> None:
        self.tty = sys.stderr.isatty()
        self.last = 0.0
        self.shown = False
        self.where = where
        """Says where the matches are played (a cluster's nodes and tables), at the end of the line."""

    def __call__(self, progress: Progress) -> None:
        planned = f"/{progress.planned}" if progress.planned is not None else ""
        eta = progress.eta_seconds
        eta_text = f", ETA {_duration(eta)}" if eta is not None else ""
        pairs = f", {progress.open_pairs} pairs open" if progress.open_pairs is not None else ""
        where = f", {self.where()}" if self.where is not None else ""
        line = (f"matches {progress.done}{planned}, {progress.rate_per_hour:.0f}/h{eta_text}{pairs}, "
                f"leader {progress.leader} ({progress.leader_rating:.2f}){where}")
        now = time.monotonic()
        if self.tty:
            click.echo(f"\r\x1b[K{line}", nl=False, err=True)
            self.shown = True
        elif now - self.last >= 10 or progress.done == progress.planned:
            click.echo(line, err=True)
            self.last = now

    def note(self, text: str) -> None:
        """Print a note on its own line (below the progress line on a terminal). A note may quote a bot (why it
        did not start, the end of its output): its control characters are escaped, its lines after the first
        indented."""
        if self.shown:
            click.echo("\r\x1b[K", nl=False, err=True)
            self.shown = False
        click.echo(visible(text, newline=CONTINUATION), err=True)

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
@click.option("--bots", "bots_paths", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="Bot list (TOML), or several (given once each, merged). Default: the bundled example bots of "
                   "the game, for "
                   f"{DEFAULT_LADDER_MATCHES} matches unless a budget is given.")
@game_option
@click.option("--seats", type=int, default=4, show_default=True, help="Seats per match.")
@click.option("--matches", type=click.IntRange(min=1), default=None,
              help="Stop when the database holds this many matches (a rerun resumes towards the same total).")
@click.option("--hours", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Ask for no new match after this many hours of this run; the matches already asked for (those "
                   f"playing and up to {QUEUED + WAITING} queued behind each table's) are played.")
@click.option("--tables", type=click.IntRange(min=1), default=None, show_default="cores",
              help="Matches played at once; with --cluster, across the cluster (default: its CPUs).")
@click.option("--workers", type=click.IntRange(min=1), default=None, show_default="cores, at most --tables",
              help="Processes that play this machine's tables, each serving its tables' bots on an event loop of "
                   "its own (one loop for every table makes each table wait for the others' turns); each keeps "
                   "its own warm bot processes within its share of --memory-budget. 1 plays every table in the "
                   "ladder's own process. This process stays the only scheduler and writer.")
@click.option("--cluster", "cluster", metavar="ADDRESS", default=None,
              help="Play on a Ray cluster: ray://HOST:PORT, or auto for the one started on this machine "
                   "(pip install 'arena[cluster]'). This process stays the only scheduler and writer; each "
                   "node's tables are one Ray actor there, with its own bot processes. Every node needs arena and "
                   "the bots at the paths of the bot list (a shared folder, or the same checkout), or "
                   "--cluster-ship.")
@click.option("--cluster-ship", "ship", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=None, help="With --cluster: a folder holding every bot of the list, which Ray copies to "
                                 "each node (its .git, __pycache__, node_modules and *.db left out); the bots "
                                 "start from the copy.")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Ladder seed: the same ladder seed gives the same match seeds. For tests and benchmarks "
                   "with bots you trust only: a bot that knows the seed works out every deal. Default: the seed "
                   "the database holds, or for a new ladder a secret random one, kept in the database and never "
                   "shown.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=Path("arena.db"),
              show_default=True, help="The ladder database (SQLite); a rerun with it resumes the ladder.")
@options_option
@clock_options
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for each bot process's output: DIR/BOT-K.log for process K of bot BOT (on a cluster, "
                   "DIR/node-N/BOT-K.log on the N-th node's tables). Default: discarded.")
@sandbox_option
@sealed_window_option
@click.option("--memory-budget", "memory_budget_mb", type=click.IntRange(min=64), default=None, metavar="MB",
              help="Memory the warm bot processes of this machine may hold, shared by its tables; the least "
                   "recently used idle ones are stopped beyond it. Default: half of the machine's memory (or of "
                   "the arena's cgroup limit). More keeps more processes warm in a big field.")
@click.option("--until-decided", is_flag=True,
              help="Stop when the sequential test has decided every pair of neighbours (or at the budget).")
@decision_options
@click.option("--tau", type=click.FloatRange(min=0.0), default=0.0, show_default=True,
              help="TrueSkill's dynamics factor: 0 for programs that do not change; more (e.g. 0.083) for bots "
                   "that learn between matches. A database rated with another tau is rated again.")
def ladder(bots_paths: tuple[Path, ...], game_name: str | None, seats: int, matches: int | None, hours: float | None,
           tables: int | None, workers: int | None, cluster: str | None, ship: Path | None, seed: int | None,
           db_path: Path, options: tuple[str, ...], deadline: float, time_bank: float, max_faults: int,
           log_dir: Path | None,
           sandbox_mode: str, sealed_window_ms: float, memory_budget_mb: int | None, until_decided: bool, zone: float,
           alpha: float, beta: float, tau: float) -> None:
    """Run a TrueSkill ladder between bot processes and store everything in a SQLite database.

    Matches are played in deal sets: one seed once per rotation of the seats, so every bot of the set gets
    every hand; each rotation by other processes of the bots, since no process ever plays a deal twice.
    Without --matches or --hours it runs until Ctrl-C (the bundled bots: a short default), or with
    --until-decided until every pair of neighbours is decided. Stop it any way you like, kill -9 included:
    the same command resumes where it stood. The leaderboard is printed at the end; `arena leaderboard`
    shows it at any time.
    """
    if workers is not None and cluster is not None:
        raise CommandError("--workers is for this machine's tables; on a cluster each node's tables are one Ray "
                           "actor of their own")
    game, opts, bots = game_and_bots(game_name, options, bots_paths)
    if matches is None and hours is None and not bots_paths and not until_decided:
        matches = DEFAULT_LADDER_MATCHES
    test = SequentialTest(zone, alpha, beta)
    _run_ladder(game, opts, bots, seats, matches, hours, tables, seed, db_path, Clock(deadline, time_bank),
                max_faults, log_dir, test if until_decided else None, None, tau, sandbox_mode,
                sealed_window_ms / 1000, cluster, ship,
                memory_budget=memory_budget_mb * 1024 * 1024 if memory_budget_mb is not None else None,
                workers=workers)


def _run_ladder(game: Game, opts: Options, bots: list[BotSpec], seats: int, matches: int | None,
                hours: float | None, tables: int | None, seed: int | None, db_path: Path, clock: Clock,
                max_faults: int, log_dir: Path | None, test: SequentialTest | None,
                pairs: tuple[tuple[str, str], ...] | None, tau: float, sandbox_mode: str, sealed_window: float,
                cluster: str | None = None, ship: Path | None = None, heading: str = "",
                memory_budget: int | None = None, workers: int | None = None) -> Board:
    """Run a ladder (``arena ladder``, ``arena compare``), here or on a Ray cluster; print its board, return it.

    ``heading`` is the first line said (default: the ladder's own, with its share of table time outside matches
    at the end, which only a ladder's operator needs)."""
    # on a cluster each node picks its own sandbox for the mode (and says which)
    sandbox = pick_sandbox(sandbox_mode) if cluster is None else None
    config = LadderConfig(game, opts, seats, seed or 0, bots, matches=matches, hours=hours, tables=tables or 1,
                          clock=clock, max_faults=max_faults, log_dir=log_dir, sandbox=sandbox,
                          sealed_window=sealed_window, until_decided=test, pairs=pairs, memory_budget=memory_budget,
                          workers=workers)
    try:
        config.check()
    except LadderError as exc:
        raise CommandError(str(exc)) from None
    for warning in shared_folders(bots):
        click.echo(f"warning: {visible(warning)}", err=True)
    store = open_store(db_path)
    progress = ProgressPrinter()
    try:
        try:
            opened = open_ladder(config, store, seed=seed, tables=tables, tau=tau, cluster=cluster, ship=ship,
                                 sandbox_mode=sandbox_mode, on_progress=progress, on_note=progress.note)
        except (LadderError, StoreError) as exc:
            raise CommandError(str(exc)) from None
        runner = opened.ladder
        if opened.cluster is not None:
            progress.where = opened.cluster.describe
        before = runner.count
        limits = ([f"until decided ({test.describe()})"] if test is not None else []) + \
            ([f"until {matches} matches are stored"] if matches is not None else []) + \
            ([f"for {_duration(hours * 3600)}"] if hours is not None else [])
        budget = " or ".join(limits) or "until stopped (Ctrl-C)"
        place = f"{tables or 'a table per CPU'}{' tables' if tables else ''}" if cluster else f"{config.tables} tables"
        if isinstance(runner.executor, WorkerExecutor):
            place += f" in {runner.executor.workers} worker processes"
        place += f" on the Ray cluster at {cluster}" if cluster else ""
        click.echo(heading or f"ladder: {game.title}, {seats} seats, {len(bots)} bots, {place}, database "
                   f"{db_path} ({before} matches stored), {budget}", err=True)
        if sandbox is not None:
            click.echo(sandbox.describe(), err=True)
        if seed is not None and not heading:
            click.echo(f"note: --seed {seed} is a fixed ladder seed: a bot that knows it (or guesses it) works out "
                       "every deal; leave --seed out for bots you do not trust (a secret seed is drawn)", err=True)
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
        except (LadderError, StoreError, ServerError, ClusterError) as exc:
            progress.finish()
            raise CommandError(str(exc)) from None
        played = runner.count - before
        if played and heading:
            click.echo(f"{played} matches played in {timing.wall:.1f} s", err=True)
        elif played:
            click.echo(f"{played} matches played in {timing.wall:.1f} s; {timing.outside_share:.1%} of table "
                       "time outside matches", err=True)
        if test is not None:
            verdicts = runner.verdicts()
            still = sum(1 for _, v in verdicts if not v.decided)
            click.echo("every pair decided" if not still else f"{still} of {len(verdicts)} pairs still open "
                       "(the budget ran out)", err=True)
        board = dataclasses.replace(build_board(store, test), not_started=dict(runner.not_started))
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
@click.option("--bots", "bots_paths", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="Bot list (TOML) naming FIRST and SECOND, or several (given once each, merged); the other "
                   "bots fill the seats the game needs. Default: the bundled example bots of the game.")
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
@sandbox_option
def compare(first: str, second: str, bots_paths: tuple[Path, ...], game_name: str | None, seats: int | None,
            matches: int, tables: int, db_path: Path | None, options: tuple[str, ...], deadline: float,
            time_bank: float, max_faults: int, zone: float, alpha: float, beta: float, log_dir: Path | None,
            sandbox_mode: str) -> None:
    """Play FIRST against SECOND on shared deals until a sequential test decides which is better.

    Every deal set seats both bots, and the other bots of the list when the game needs more seats, with
    the seats rotated so that each gets every hand. The test (an SPRT on the per-deal-set scores, as
    fastchess and fishtest do for game pairs) stops when one bot is better, or when they are equal within
    the indifference zone; it ends with "FIRST is better", "SECOND is better" or "no difference".
    """
    game, opts, bots = game_and_bots(game_name, options, bots_paths)
    names = [b.name for b in bots]
    renamed = bundled_aliases()
    for name in (first, second):
        if name not in names and renamed.get(name) in names:  # an old name of a bundled bot, for one release
            click.echo(f"note: {name} is now called {renamed[name]} (the old name works for one release)", err=True)
    first, second = (renamed[n] if n not in names and renamed.get(n) in names else n for n in (first, second))
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
            db_path = stack.enter_context(tempdir.folder("compare")) / "compare.db"
        others = f", with {', '.join(b.name for b in chosen[2:])}" if count > 2 else ""
        heading = (f"compare: {first} against {second} at {game.title}, {count} seats{others}, on shared deals "
                   f"until the test decides ({test.describe()}) or {matches} matches are played")
        _run_ladder(game, opts, chosen, count, matches, None, tables, None, db_path, Clock(deadline, time_bank),
                    max_faults, log_dir, test, ((first, second),), 0.0, sandbox_mode, 0.0, heading=visible(heading))
        store = open_store(db_path, readonly=True)
        try:
            paired = Evidence.of(store.results()).paired(first, second)
        finally:
            store.close()
    verdict = test.verdict(paired)
    mean = sum(paired) / len(paired) if paired else 0.5
    interval = mean_score_interval(paired)
    within = f", 95% interval {interval[0]:.3f}-{interval[1]:.3f}" if interval is not None else ""
    summary = f"{len(paired)} shared deal sets, mean score of {first} against {second} {mean:.3f}{within}"
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
            raise CommandError(f"{str(db_path)!r} holds no ladder yet")
        sandbox = "+".join(store.sandbox_levels()) or "unknown"
        board = build_board(store, SequentialTest(zone, alpha, beta))
        if fmt is None:
            click.echo(f"{identity.describe()}; {board.matches} matches; bots sandboxed: {sandbox}")
        print_board(board, fmt or "text", sandbox=sandbox)
    finally:
        store.close()


@main.command()
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The ladder database to show, read-only (a ladder may be writing it). Default: arena.db, "
                   "unless --replay is given.")
@click.option("--replay", "replay_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also show this replay file (written by `arena match --replay`).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, show_default="a free port",
              help="Port to listen on.")
def serve(db_path: Path | None, replay_path: Path | None, host: str, port: int) -> None:
    """Show a ladder and its matches in the browser, live, with a replay viewer.

    Pages: the leaderboard, ratings over time, head to head, each bot (its matches, faults and decision
    latency), and every match replayed step by step, from above or from one seat. New matches appear while
    a ladder runs, without a reload. The database is only read; no seed and no replay of an unfinished deal
    set is shown. Prints the address, then serves until Ctrl-C.
    """
    from arena.web.app import Site
    from arena.web.app import serve as serve_site
    from arena.web.data import Reader
    from arena.web.replays import viewer_data

    if db_path is None and replay_path is None:
        db_path = Path("arena.db")
    reader = None
    replay_data = None
    if replay_path is not None:
        replay_data = load_replay(str(replay_path), None)
        try:
            viewer_data(replay_data, None)
        except GameError as exc:
            raise CommandError(f"replay {str(replay_path)!r} does not re-run: {exc}") from None
    if db_path is not None:
        try:
            reader = Reader(db_path)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    # the operator's own server: the bots' debug text is shown (a contest's public pages never show it)
    site = Site(reader, replay_data, replay_path.name if replay_path is not None else "", debug=True)
    try:
        serve_site(site, host, port, lambda url: click.echo(f"serving {url} (Ctrl-C stops)"))
    except OSError as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc}") from None


@main.command(name="sandbox")
@sandbox_option
def sandbox_command(sandbox_mode: str) -> None:
    """Print the isolation bots get on this machine: strict (bubblewrap jail and cgroups), jail,
    limits+cgroups, limits or none, and why it is not more. Exits with 1 when --sandbox cannot be had."""
    click.echo(pick_sandbox(sandbox_mode).describe())


main.add_command(contest_commands.contest)
main.add_command(contest_commands.author)
main.add_command(contest_commands.submit)
main.add_command(finals_commands.finals)


def run() -> None:
    """Entry point that never shows a traceback for a bad input."""
    # a crash in native code (gRPC's, at the end of a long run) prints every thread's Python stack to stderr, so
    # an operator's log says where it happened instead of a bare exit status of -11
    faulthandler.enable()
    try:
        main()
    except GameError as exc:
        click.echo(f"error: {visible(str(exc))}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    run()
