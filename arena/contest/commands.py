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


@click.command("contest")
@click.argument("words", metavar="[finals] CONFIG", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--example", is_flag=True, help="Print an example configuration and exit.")
@click.option("--cluster", "cluster", metavar="ADDRESS", default=None,
              help="Play the matches on a Ray cluster: ray://HOST:PORT, or auto for the one started on this machine "
                   "(pip install 'arena[cluster]'). Submissions are built and checked here; every node must see the "
                   "contest's data folder at the same path (a shared folder) and run the strict jail (as root). A "
                   "node that does not is refused, with the reason.")
def contest(words: tuple[Path, ...], example: bool, cluster: str | None) -> None:
    """Run a contest: a ladder that takes submissions while it runs, with its web pages and submission API.

    CONFIG (TOML) names the game, its seats and options, the bots' limits, the house bots, the submission limits,
    the runtimes a submission may name, and where it listens (127.0.0.1:8080 unless told). It plays the ladder
    until stopped (Ctrl-C); the same command resumes it, with every accepted submission and stored match.
    Authors get tokens with `arena author add`, submit with `arena submit` or on the web page, and see their own
    bots' states, reports, logs and seat replays there.

    `arena contest finals CONFIG` closes the submissions now and so starts the finals of CONFIG's [finals] section
    (docs/finals.md), in the running contest within seconds, or when it starts.
    """
    if example:
        click.echo(EXAMPLE, nl=False)
        return
    if len(words) == 2 and str(words[0]) == "finals":
        from arena.contest.finals_commands import start_finals

        start_finals(words[1])
        return
    if len(words) != 1:
        raise click.UsageError("give the contest's configuration file (arena contest --example prints one), or "
                               "arena contest finals CONFIG to start its finals")
    config_path = words[0]
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


def _call(url: str, token: str, *, data: bytes | None = None, timeout: float = 60) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    if data is not None:
        headers["Content-Type"] = "application/gzip"
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
@click.option("--wait", is_flag=True, help="After submitting, follow it until it plays or is rejected.")
def submit(folder: Path | None, url: str, token_file: Path | None, status: bool, wait: bool) -> None:
    """Submit the bot in FOLDER to a contest, or list your submissions (--status).

    FOLDER holds the bot and its manifest, bot.toml (name, command, games, runtime, and an optional build
    command). It is packed (regular files and folders only; no links) and sent with your token; the contest
    builds it and runs arena check on it in its jail, then it plays. Exit status 1 when it is rejected (--wait).
    """
    base = _base(url)
    token = _token(token_file)
    if status:
        answer = _call(f"{base}/api/contest/submissions", token)
        rows = answer.get("submissions", [])
        click.echo(f"{visible(str(answer.get('author')))}: {len(rows)} submissions")
        for row in rows:
            click.echo("  " + _describe(row))
        return
    if folder is None:
        raise click.UsageError("give the bot's FOLDER, or --status")
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
