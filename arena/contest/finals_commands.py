"""The finals' commands: ``arena contest finals CONFIG`` (the operator closes the submissions now and so starts the
finals) and ``arena finals verify EXPORT`` (anyone checks a finished finals' export), registered by
:mod:`arena.cli` and :mod:`arena.contest.commands`."""

from __future__ import annotations

import time
from pathlib import Path

import click

from arena.text import CONTINUATION, visible


class FinalsCommandError(click.ClickException):
    """A finals command that cannot do what was asked; the message says why and what to do."""

    def format_message(self) -> str:
        return visible(self.message, newline=CONTINUATION)


def start_finals(config_path: Path) -> None:
    """Close the contest's submissions now (``arena contest finals CONFIG``) and say what follows."""
    from arena.contest.config import ConfigError, load_config
    from arena.contest.finals import FinalsError, close_now, when
    from arena.contest.service import ContestError, house_bots
    from arena.contest.store import ContestStore, ContestStoreError

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise FinalsCommandError(str(exc)) from None
    if config.finals is None:
        raise FinalsCommandError(f"{str(config_path)!r} has no [finals] section: add one with top and budget "
                                 "(docs/finals.md)")
    config.data.mkdir(parents=True, exist_ok=True)
    try:
        store = ContestStore(config.contest_db)
    except ContestStoreError as exc:
        raise FinalsCommandError(str(exc)) from None
    try:
        house = house_bots(config) if config.finals.house else []
        closed, finalists, already = close_now(config, store, house, time.time())
    except (FinalsError, ContestError) as exc:
        raise FinalsCommandError(str(exc)) from None
    finally:
        store.close()
    said = "were closed" if already else "are closed"
    click.echo(f"the submissions {said} at {when(closed)}; {len(finalists)} finalists as they stand:", err=True)
    for finalist in finalists:
        click.echo(visible(f"  {finalist.bot} ({finalist.chosen})"))
    click.echo(f"a running contest starts its finals within seconds (once the submissions made before are "
               f"checked), a stopped one when it starts: arena contest {config_path}", err=True)


@click.group("finals")
def finals() -> None:
    """A contest's finals: verify the export of finished finals (docs/finals.md)."""


@finals.command("verify")
@click.argument("export_path", metavar="EXPORT", type=click.Path(dir_okay=False, path_type=Path))
def verify(export_path: Path) -> None:
    """Check the export of finished finals with nothing but arena: the seed hashes to the commitment published at
    their start, every deal follows from the seed, every match re-runs to its stored result, no deal set lacks a
    match, every cut follows the rule, and the board follows from the matches.

    EXPORT is the file the contest publishes at the end (finals-export.json.gz, or /api/finals/export). Exit status
    1 naming the first match that does not re-run (or the first check that fails).
    """
    from arena.ladder.finals_export import ExportError, read
    from arena.ladder.finals_export import verify as check

    try:
        data = read(export_path)
    except ExportError as exc:
        raise FinalsCommandError(str(exc)) from None
    found = check(data)
    for line in found.passed:
        click.echo(visible(f"ok: {line}"))
    if not found.ok:
        for problem in found.problems:
            click.echo(visible(f"FAILED: {problem}"))
        raise SystemExit(1)
    click.echo(f"verified: {export_path} holds up ({len(data['matches'])} matches re-run)")
