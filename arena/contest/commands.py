"""The contest's commands: ``arena contest`` (the operator's service), ``arena author`` (the operator's authors)
and ``arena submit`` (an author's upload and status), registered on the ``arena`` command by :mod:`arena.cli`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import click

from arena.text import CONTINUATION, visible

EXAMPLE = '''# arena contest: one file configures a contest (every key but game has a default)
game = "cabanga"
seats = 4
options = { rounds = 2 }
deadline = 1.0
tables = 1
data = "contest-data"          # databases, submissions and logs, beside this file
listen = "127.0.0.1:8080"      # behind a TLS reverse proxy to open it to others (then behind_proxy = true)
behind_proxy = false           # true: the client's address is the one the proxy reports, cookies HTTPS only
proxies = ["127.0.0.1", "::1"] # behind_proxy: the proxy's own addresses; X-Forwarded-For from no other
open_registration = false
# No seed, on purpose: the contest draws a secret one, keeps it in its database and never shows it, and every
# deal's seed is a keyed hash under it. A fixed seed (seed = N with public_seed = true) lets every submitted bot
# compute every deal, opponents' hands included: for tests and benchmarks only.

[limits]                       # what every submitted bot may use
memory_mb = 1024

[build_limits]                 # what a build step may use (each key unset: as [limits])
memory_mb = 2048
cpu_seconds = 600

[submissions]
per_day = 10
active = 2
archive_mb = 8
build_seconds = 300

[scrimmages]                   # authors' unrated matches against opponents they choose, on tables of their own
enabled = true
matches = 100                  # a request that names no number
max_matches = 1000             # the most one request asks for
matches_per_hour = 1000        # an author's matches an hour (and one scrimmage at a time)
share = 0.25                   # their tables: this share of the ladder's, at least one

# [finals]                     # the contest's end: docs/finals.md (arena contest finals CONFIG starts them by hand)
# deadline = 2026-12-31T18:00:00Z
# top = 3
# budget = { matches = 3000, hours = 12 }

[runtimes.python]
program = ["{python}"]
[runtimes.native]
program = []
'''

DEFAULT_CONFIG = Path("contest.toml")
FINAL = ("playing", "rejected", "retired")
WAIT_POLL = 1.0
"""Seconds between two looks at a submission's state (--wait); the API takes 120 calls a minute."""


class ContestCommandError(click.ClickException):
    """A contest command that cannot do what was asked; the message says why and what to do."""

    def format_message(self) -> str:
        return visible(self.message, newline=CONTINUATION)


def _config(path: Path) -> Any:
    from arena.contest.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise ContestCommandError(str(exc)) from None


config_option = click.option(
    "--contest", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_CONFIG,
    show_default=True, help="The contest's configuration file (arena contest --example prints one).")


class ContestGroup(click.Group):
    """``arena contest CONFIG`` runs a contest (its ``run`` command); ``arena contest COMMAND ...`` does one of its
    other jobs."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        elif not args:
            args = ["run"]
        return super().parse_args(ctx, args)


@click.group("contest", cls=ContestGroup)
def contest() -> None:
    """Run a contest (arena contest CONFIG), or do one of its other jobs.

    \b
    arena contest CONFIG            run it: the ladder that takes submissions, its pages and API
    arena contest --example         print an example configuration
    arena contest export --to DIR   write every complete deal set's results and replays
    arena contest finals CONFIG     close the submissions now: the contest's finals start (docs/finals.md)
    """


@contest.command("run")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option("--example", is_flag=True, help="Print an example configuration and exit.")
@click.option("--cluster", "cluster", metavar="ADDRESS", default=None,
              help="Play the matches on a Ray cluster: ray://HOST:PORT, or auto for the one started on this machine "
                   "(pip install 'arena[cluster]'). Submissions are built and checked here; every node must see the "
                   "contest's data folder at the same path (a shared folder) and run the strict jail (as root). A "
                   "node that does not is refused, with the reason.")
def run_contest(config_path: Path | None, example: bool, cluster: str | None) -> None:
    """Run a contest: a ladder that takes submissions while it runs, with its web pages and submission API.

    CONFIG (TOML) names the game, its seats and options, the bots' limits, the house bots, the submission limits,
    the runtimes a submission may name, and where it listens (127.0.0.1:8080 unless told). It plays the ladder
    until stopped (Ctrl-C); the same command resumes it, with every accepted submission and stored match.
    Authors get tokens with `arena author add`, submit with `arena submit` or on the web page, and see their own
    bots' states, reports, logs and seat replays there.
    """
    if example:
        click.echo(EXAMPLE, nl=False)
        return
    if config_path is None:
        raise click.UsageError("give the contest's configuration file (arena contest --example prints one)")
    config = _config(config_path)
    from arena.contest.service import Contest, ContestError
    from arena.contest.store import ContestStore, ContestStoreError
    from arena.contest.web import serve_contest
    from arena.ladder.cluster import ClusterError
    from arena.ladder.ladder import LadderError
    from arena.ladder.store import StoreError
    from arena.launch.process import machine_sandbox, raise_open_files
    from arena.launch.sandbox import SandboxError

    raise_open_files()
    # a long-lived service: what its parts log (a refused stream, a pipeline error) goes to stderr with the time
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s contest: %(name)s: %(message)s"))
    logging.getLogger("arena").addHandler(handler)
    try:
        sandbox = machine_sandbox("strict" if os.geteuid() == 0 else "auto")
    except SandboxError as exc:
        raise ContestCommandError(f"a contest runs strangers' bots: {exc}") from None
    click.echo(visible(sandbox.describe()), err=True)
    config.data.mkdir(parents=True, exist_ok=True)
    try:
        store = ContestStore(config.contest_db)
    except ContestStoreError as exc:
        raise ContestCommandError(str(exc)) from None

    def note(text: str) -> None:
        click.echo(f"contest: {visible(text)}", err=True)

    try:
        running = Contest(config, store, sandbox=sandbox, cluster=cluster, on_note=note)
    except (ContestError, LadderError, StoreError) as exc:
        store.close()
        raise ContestCommandError(str(exc)) from None
    if running.resumed:
        note(f"{len(running.resumed)} submissions a stop left mid-way are taken up again")
    if not store.authors.all():
        note(f"no authors yet: add one with arena author add NAME --contest {config_path}")

    def ready(url: str) -> None:
        click.echo(f"contest of {config.game.title} at {config.seats} seats: {url} (Ctrl-C stops it)", err=True)

    def stopping(signal_name: str) -> None:
        note(f"{signal_name}: stopping (the matches under way are played again at the next start)")

    try:
        asyncio.run(serve_contest(running, ready, stopping))
        note("stopped; the same command resumes it")
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        note("stopped at once; the same command resumes it")
    except OSError as exc:
        raise ContestCommandError(f"cannot listen on {config.host}:{config.port}: {exc.strerror or exc}") from None
    except (LadderError, StoreError, ClusterError) as exc:
        raise ContestCommandError(str(exc)) from None
    finally:
        running.close()
        store.close()


@contest.command("export")
@click.option("--to", "dest", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The folder to write (made if missing; files of an earlier export are replaced).")
@config_option
def contest_export(dest: Path, config_path: Path) -> None:
    """Write every complete deal set of the contest's ladder as files: results.jsonl (a match a line) and
    replays/MATCH.json, which arena replay re-runs and verifies. It only reads the database, so it runs beside
    the contest. Debug text, each author's own, is left out; docs/contest-api.md has the format."""
    config = _config(config_path)
    from arena.contest.export import export_ladder
    from arena.ladder.store import Store, StoreError

    try:
        store = Store(config.ladder_db, readonly=True)
    except StoreError as exc:
        raise ContestCommandError(str(exc)) from None
    try:
        done = export_ladder(store, dest)
    except OSError as exc:
        raise ContestCommandError(f"cannot write the export into {str(dest)!r}: {exc.strerror or exc}") from None
    except StoreError as exc:
        raise ContestCommandError(str(exc)) from None
    finally:
        store.close()
    later = f"; {done.incomplete} deal sets not complete yet are left out" if done.incomplete else ""
    click.echo(f"wrote {done.matches} matches of {done.deal_sets} deal sets into {dest}{later}")


@contest.command("finals")
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False, path_type=Path))
def contest_finals(config_path: Path) -> None:
    """Close the submissions of CONFIG's contest now, and so start its finals ([finals] in CONFIG, docs/finals.md).

    Uploads, new versions, finalist marks and scrimmages are refused from now on; a running contest starts its
    finals within seconds, once the submissions made before are checked, a stopped one when it starts. Refused
    with the reason when CONFIG has no [finals] or its top is larger than the field.
    """
    from arena.contest.finals_commands import start_finals

    start_finals(config_path)


@click.group("author")
def author() -> None:
    """The contest's authors: add one (its token is printed once), list, revoke, rotate a token, restore."""


def _store(config_path: Path) -> Any:
    from arena.contest.store import ContestStore, ContestStoreError

    config = _config(config_path)
    config.data.mkdir(parents=True, exist_ok=True)
    try:
        return ContestStore(config.contest_db)
    except ContestStoreError as exc:
        raise ContestCommandError(str(exc)) from None


def _print_token(name: str, token: str) -> None:
    click.echo(token)
    click.echo(f"that is {name}'s token, shown this once (only its hash is kept): give it to them privately; they "
               "log in with it and `arena submit` reads it from ARENA_TOKEN or --token-file", err=True)


@author.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True, help="This author may see every submission, disable bots, revoke authors.")
@config_option
def author_add(name: str, admin: bool, config_path: Path) -> None:
    """Add author NAME and print their token (once)."""
    from arena.contest.store import AuthorError

    store = _store(config_path)
    try:
        _print_token(name, store.authors.add(name, admin=admin))
    except AuthorError as exc:
        raise ContestCommandError(str(exc)) from None
    finally:
        store.close()


@author.command("list")
@config_option
def author_list(config_path: Path) -> None:
    """List the authors, their submissions and whether they are revoked."""
    store = _store(config_path)
    try:
        for a in store.authors.all():
            count = len(store.submissions.all(a.name))
            flags = ", ".join(f for f in ("admin" if a.admin else "", "revoked" if a.revoked else "") if f)
            click.echo(f"{visible(a.name)}: {count} submissions" + (f" ({flags})" if flags else ""))
    finally:
        store.close()


def _author_change(name: str, config_path: Path, action: str) -> None:
    from arena.contest.store import AuthorError

    store = _store(config_path)
    try:
        if store.authors.get(name) is None:
            raise ContestCommandError(f"no author {name!r} in this contest (arena author list names them)")
        if action == "revoke":
            store.authors.revoke(name)
            click.echo(f"{name}'s token no longer works; their bots and matches stay", err=True)
        elif action == "rotate":
            _print_token(name, store.authors.rotate_token(name))
        else:
            _print_token(name, store.authors.restore(name))
    except AuthorError as exc:
        raise ContestCommandError(str(exc)) from None
    finally:
        store.close()


@author.command("revoke")
@click.argument("name")
@config_option
def author_revoke(name: str, config_path: Path) -> None:
    """Revoke NAME's token at once (a running contest logs them out at their next page)."""
    _author_change(name, config_path, "revoke")


@author.command("rotate")
@click.argument("name")
@config_option
def author_rotate(name: str, config_path: Path) -> None:
    """Give NAME a new token (printed once); the old one stops working."""
    _author_change(name, config_path, "rotate")


@author.command("restore")
@click.argument("name")
@config_option
def author_restore(name: str, config_path: Path) -> None:
    """Undo a revoke: NAME gets a new token (printed once)."""
    _author_change(name, config_path, "restore")


# ------------------------------------------------------------------------------------------------ submit


def _token(token_file: Path | None) -> str:
    if token_file is not None:
        try:
            token = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ContestCommandError(f"cannot read the token file {str(token_file)!r}: {exc.strerror}") from None
    else:
        token = os.environ.get("ARENA_TOKEN", "").strip()
    if not token:
        raise ContestCommandError("no token: set ARENA_TOKEN, or give --token-file FILE (a token is never taken "
                                  "on the command line, where other users of the machine could read it)")
    return token


def _call(url: str, token: str, *, data: bytes | None = None, body: dict[str, Any] | None = None,
          timeout: float = 60) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/gzip"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read(4 << 20))
            return answer
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read(1 << 16)).get("error", exc.reason)
        except (ValueError, AttributeError):
            message = exc.reason
        raise ContestCommandError(f"the contest says ({exc.code}): {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ContestCommandError(f"cannot reach the contest at {url}: {reason}") from None


def _base(url: str) -> str:
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise click.BadParameter(f"the contest's address, like https://contest.example.org, not {url!r}",
                                 param_hint="--to")
    if parsed.scheme == "http" and parsed.hostname not in ("127.0.0.1", "localhost", "::1"):
        click.echo("warning: http:// sends your token unencrypted; a contest open to others is behind https://",
                   err=True)
    return url.rstrip("/")


def _describe(s: dict[str, Any]) -> str:
    reason = f" ({s['reason']})" if s.get("reason") else ""
    return visible(f"{s['bot']} v{s['version']}: {s['state']}{reason}  [id {s['id']}]")


@click.command("submit")
@click.argument("folder", type=click.Path(file_okay=False, exists=True, path_type=Path), required=False)
@click.option("--to", "url", required=True, help="The contest's address, for example https://contest.example.org.")
@click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="A file holding your token. Default: the ARENA_TOKEN environment variable.")
@click.option("--status", is_flag=True, help="List your submissions and their states instead of submitting.")
@click.option("--wait", is_flag=True, help="Follow what you asked for (a submission, a scrimmage) until it ends.")
@click.option("--scrimmage", "scrimmage", metavar="VERSION", default=None,
              help="Ask for a scrimmage: unrated matches of your VERSION (BOT for its newest, BOT:vN, or a "
                   "submission id) against the --against opponents, on deals of its own.")
@click.option("--against", multiple=True, metavar="OPPONENT",
              help="A scrimmage's opponent, repeatable: house:NAME (a house bot), AUTHOR:BOT (another author's "
                   "current version, if they take part), or YOU:BOT:vN (one of your versions).")
@click.option("--matches", "matches", type=click.IntRange(min=0), is_flag=False, flag_value=0, default=None,
              metavar="[N]", help="With --scrimmage: how many matches (default: the contest's, rounded up to whole "
                                  "deal sets). Alone: list your ladder matches, newest first.")
@click.option("--version", "version", default=None, metavar="VERSION",
              help="With --matches: only this version's (BOT or BOT:vN).")
@click.option("--before", type=click.IntRange(min=1), default=None, metavar="MATCH",
              help="With --matches: the page of matches before this match id (each page says the next).")
@click.option("--scrimmages", "list_scrimmages", is_flag=True, help="List your scrimmages and their states.")
@click.option("--result", "result_of", metavar="SCRIMMAGE", default=None,
              help="Show a scrimmage's result: the verdict with its interval, the score against each opponent, "
                   "the faults.")
@click.option("--replay", "replay_of", metavar="MATCH", default=None,
              help="Write a match's replay as your seat met it (-o FILE): a ladder match id, or SCRIMMAGE:N for "
                   "match N of a scrimmage; arena replay FILE reads it.")
@click.option("--logs", "logs_of", metavar="VERSION", default=None,
              help="Write your version's build and check report and its logs into a folder (-o DIR).")
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="The file (--replay) or folder (--logs) to write.")
@click.option("--opponent", type=click.Choice(["yes", "no"]), default=None,
              help="Whether other authors may choose your bots as scrimmage opponents (yes unless you say no).")
@click.option("--finalist", "finalist", metavar="SUBMISSION", default=None,
              help="Mark one of your validated submissions (its id) as your finalist: the version that plays the "
                   "contest's finals (else your latest validated one); open until the finals' deadline.")
@click.option("--json", "as_json", is_flag=True, help="Print the contest's answer as JSON.")
def submit(folder: Path | None, url: str, token_file: Path | None, status: bool, wait: bool, scrimmage: str | None,
           against: tuple[str, ...], matches: int | None, version: str | None, before: int | None,
           list_scrimmages: bool, result_of: str | None, replay_of: str | None, logs_of: str | None,
           output: Path | None, opponent: str | None, finalist: str | None, as_json: bool) -> None:
    """Submit the bot in FOLDER to a contest; or, with your token, ask for a scrimmage and read your data.

    FOLDER holds the bot and its manifest, bot.toml (name, command, games, runtime, and an optional build
    command). It is packed (regular files and folders only; no links) and sent with your token; the contest
    builds it and runs arena check on it in its jail, then it plays. Exit status 1 when it is rejected (--wait).

    \b
    Without FOLDER, one of:
      --status                 your submissions and their states
      --scrimmage VERSION --against OPPONENT [--matches N] [--wait]
                               unrated matches against opponents you choose; the result is yours alone
      --scrimmages             your scrimmages; --result ID shows one's verdict
      --matches [--version V]  your ladder matches (complete deal sets), newest first; --before ID pages
      --replay MATCH -o FILE   a match as your seat met it (MATCH: a ladder match id or SCRIMMAGE:N)
      --logs VERSION -o DIR    your version's report and logs
      --opponent yes|no        whether others may choose your bots as scrimmage opponents
      --finalist SUBMISSION    the version of yours that plays the finals (docs/finals.md)
    """
    base = _base(url)
    asked = [name for name, given in (("FOLDER", folder is not None), ("--status", status),
                                      ("--scrimmage", scrimmage is not None), ("--scrimmages", list_scrimmages),
                                      ("--result", result_of is not None), ("--replay", replay_of is not None),
                                      ("--logs", logs_of is not None), ("--opponent", opponent is not None),
                                      ("--finalist", finalist is not None),
                                      ("--matches", matches is not None and scrimmage is None)) if given]
    if len(asked) > 1:
        raise click.UsageError(f"{' and '.join(asked)} ask for different things: one at a time")
    if against and scrimmage is None:
        raise click.UsageError("--against names a scrimmage's opponents: give --scrimmage VERSION too")
    if (replay_of is not None or logs_of is not None) and output is None:
        raise click.UsageError(f"{'--replay' if replay_of is not None else '--logs'} writes files: give -o "
                               f"{'FILE' if replay_of is not None else 'DIR'}")
    token = _token(token_file)
    if finalist is not None:
        answer = _call(f"{base}/api/contest/finalist", token, body={"submission": finalist})
        click.echo(visible(f"your finalist: {answer.get('finalist')}"))
        return
    if status:
        answer = _call(f"{base}/api/contest/submissions", token)
        rows = answer.get("submissions", [])
        click.echo(f"{visible(str(answer.get('author')))}: {len(rows)} submissions")
        for row in rows:
            click.echo("  " + _describe(row))
        return
    if scrimmage is not None:
        _scrimmage(base, token, scrimmage, against, matches, wait, as_json)
        return
    if list_scrimmages:
        answer = _call(f"{base}/api/contest/scrimmages", token)
        if as_json:
            click.echo(json.dumps(answer, indent=1))
            return
        for row in answer.get("scrimmages", []):
            click.echo(_scrimmage_line(row))
        return
    if result_of is not None:
        answer = _call(f"{base}/api/contest/scrimmages/{urllib.parse.quote(result_of, safe='')}", token)
        click.echo(json.dumps(answer, indent=1) if as_json else _result_text(answer))
        return
    if matches is not None:
        query = urllib.parse.urlencode({k: v for k, v in (("version", version), ("before", before)) if v is not None})
        answer = _call(f"{base}/api/contest/matches" + (f"?{query}" if query else ""), token)
        if as_json:
            click.echo(json.dumps(answer, indent=1))
            return
        for row in answer.get("matches", []):
            click.echo(_match_line(row))
        if answer.get("next") is not None:
            click.echo(f"more: --matches --before {answer['next']}", err=True)
        return
    if replay_of is not None:
        assert output is not None
        _replay(base, token, replay_of, output)
        return
    if logs_of is not None:
        assert output is not None
        _logs(base, token, logs_of, output)
        return
    if opponent is not None:
        answer = _call(f"{base}/api/contest/settings", token, body={"scrimmage_opponent": opponent == "yes"})
        said = "may" if answer.get("scrimmage_opponent") else "may not"
        click.echo(f"other authors {said} choose your bots as scrimmage opponents")
        return
    if folder is None:
        raise click.UsageError("give the bot's FOLDER, or one of --status, --scrimmage, --scrimmages, --result, "
                               "--matches, --replay, --logs, --opponent (see --help)")
    _upload(base, token, folder, wait)


def _upload(base: str, token: str, folder: Path, wait: bool) -> None:
    from arena.contest.archive import ArchiveError, pack
    from arena.contest.manifest import ManifestError, read_manifest

    try:
        read_manifest(folder)  # refused here, with its fix, before anything is sent
        data = pack(folder)
    except (ArchiveError, ManifestError) as exc:
        raise ContestCommandError(str(exc)) from None
    answer = _call(f"{base}/api/contest/submissions", token, data=data)
    click.echo(f"submitted {_describe(answer)}")
    click.echo(f"follow it at {base}{answer.get('url', '')} or with arena submit --status --to {base}", err=True)
    if not wait:
        return
    state = answer["state"]
    while state not in FINAL:
        time.sleep(WAIT_POLL)
        answer = _call(f"{base}/api/contest/submissions/{answer['id']}", token)
        if answer["state"] != state:
            state = answer["state"]
            click.echo(_describe(answer))
    if state == "rejected":
        report = str(answer.get("report") or "")
        if report:
            click.echo("its report ends with:", err=True)
            for line in report.splitlines()[-30:]:
                click.echo(f"  {visible(line)}", err=True)
        sys.exit(1)


def _scrimmage(base: str, token: str, version: str, against: tuple[str, ...], matches: int | None, wait: bool,
               as_json: bool) -> None:
    body: dict[str, Any] = {"version": version, "against": list(against)}
    if matches:
        body["matches"] = matches
    answer = _call(f"{base}/api/contest/scrimmages", token, body=body)
    click.echo(f"asked for {_scrimmage_line(answer)}", err=as_json)
    if not wait:
        if as_json:
            click.echo(json.dumps(answer, indent=1))
        return
    shown = -1
    while answer["state"] not in ("done", "failed"):
        time.sleep(WAIT_POLL * 2)
        answer = _call(f"{base}/api/contest/scrimmages/{answer['id']}", token)
        if answer["played"] != shown and not as_json:
            shown = answer["played"]
            click.echo(f"  {answer['state']}: {shown} of {answer['matches']} matches", err=True)
    answer = _call(f"{base}/api/contest/scrimmages/{answer['id']}", token)
    click.echo(json.dumps(answer, indent=1) if as_json else _result_text(answer))
    if answer["state"] == "failed":
        sys.exit(1)


def _scrimmage_line(row: dict[str, Any]) -> str:
    reason = f" ({row['reason']})" if row.get("reason") else ""
    return visible(f"scrimmage {row['id']}: {row['version']} against {', '.join(row['opponents'])}, "
                   f"{row['played']} of {row['matches']} matches, {row['state']}{reason}")


def _interval(low_high: list[float] | None) -> str:
    return f", 95% interval {low_high[0]:.3f}-{low_high[1]:.3f}" if low_high else ""


def _result_text(answer: dict[str, Any]) -> str:
    lines = [_scrimmage_line(answer)]
    result = answer.get("result")
    if result:
        mean = "" if result["mean"] is None else f"mean score {result['mean']:.3f}{_interval(result['interval'])}, "
        lines.append(f"{result['verdict']} ({mean}{result['deal_sets']} deal sets, {result['matches']} matches)")
        for row in result["opponents"]:
            score = "no deal set yet" if row["mean"] is None else \
                f"{row['mean']:.3f}{_interval(row['interval'])} over {row['deal_sets']} deal sets"
            lines.append(visible(f"  against {row['bot']}: {score}: {row['verdict']}"))
        for fault in result["faults"]:
            detail = f": {fault['detail']}" if "detail" in fault else ""
            lines.append(visible(f"  fault in match {fault['match']}, step {fault['step']}, {fault['bot']}: "
                                 f"{fault['kind']}{detail}"))
    return "\n".join(lines)


def _match_line(row: dict[str, Any]) -> str:
    seats = ", ".join(f"{bot} {place}." for bot, place in zip(row["bots"], row["places"], strict=False))
    faults = f"; {len(row['faults'])} faults" if row.get("faults") else ""
    return visible(f"match {row['id']} (deal set {row['deal']}, rotation {row['rotation']}), your seats "
                   f"{row['seats']}: {seats}{faults}")


def _replay(base: str, token: str, which: str, output: Path) -> None:
    scrimmage, sep, number = which.partition(":")
    if sep:
        if not number.isdigit():
            raise click.BadParameter(f"a scrimmage's match is SCRIMMAGE:N, not {which!r}", param_hint="--replay")
        url = f"{base}/api/contest/scrimmages/{urllib.parse.quote(scrimmage, safe='')}/replay/{number}"
    elif which.isdigit():
        url = f"{base}/api/contest/matches/{which}/replay"
    else:
        raise click.BadParameter(f"a ladder match id or SCRIMMAGE:N, not {which!r}", param_hint="--replay")
    replays = _call(url, token).get("replays", [])
    from arena.core import replay as replay_format

    for index, data in enumerate(replays):
        path = output if index == 0 else output.with_name(f"{output.stem}-seat{data['seat']}{output.suffix}")
        replay_format.write(path, data)
        click.echo(f"wrote {path}: seat {data['seat']} (arena replay {path})")


def _logs(base: str, token: str, version: str, output: Path) -> None:
    mine = _call(f"{base}/api/contest/submissions", token).get("submissions", [])
    bot, _, number = version.partition(":v")
    chosen = [s for s in mine
              if s["id"] == version or (s["bot"] == bot and (not number or str(s["version"]) == number))]
    if not chosen:
        yours = ", ".join(sorted({f"{s['bot']}:v{s['version']}" for s in mine})) or "none"
        raise ContestCommandError(f"you have no version {version!r} (yours: {yours})")
    submission = max(chosen, key=lambda s: int(s["version"]))
    output.mkdir(parents=True, exist_ok=True)
    detail = _call(f"{base}/api/contest/submissions/{submission['id']}", token)
    (output / "report.txt").write_text(str(detail.get("report") or ""), encoding="utf-8")
    logs = _call(f"{base}/api/contest/submissions/{submission['id']}/logs", token).get("logs", [])
    written = ["report.txt"]
    for log in logs:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(log["name"]))[:120] or "log"
        (output / name).write_text(str(log["text"]), encoding="utf-8")
        written.append(name)
    click.echo(f"wrote {len(written)} files of {submission['bot']} v{submission['version']} into {output}: "
               f"{', '.join(written)}")
