"""A bot sees only its own files (issue 18): hostile bots, started from real bot lists into the real jail, try to
read their neighbours' source, files nobody gave them, the arena's own modules, and look at their PATH.

A bot whose folder holds another bot of its list sees there only its program and the files its entry names
(``files``); a bot in a folder of its own sees that folder and nothing of its neighbours; a Python bot imports
``arena.sdk`` but cannot read ``arena/cli.py``, reads the games' rules but none of their bundled bots
(``arena/games/GAME/bots/``), and a bundled bot reads its own folder there and none of the others; its PATH names
only folders of the jail.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import shutil
import sys
from pathlib import Path

import pytest
from adversarial_harness import HOSTILE, Arena, hostile
from hostile import ARENAS_OWN

from arena.games import register, unregister
from arena.launch.botlist import BotSpec, load_bot_list, parse_bot_list
from arena.launch.process import log_file_name
from arena.launch.sandbox import Isolation

pytestmark = pytest.mark.process

JAIL_PATH = {"/usr/local/bin", "/usr/bin", "/bin"}


def needs_jail(arena: Arena) -> None:
    sandbox = arena.pool.sandbox
    if sandbox.isolation is not Isolation.JAIL:
        if os.environ.get("CI") == "true" or sandbox.broken_jail:
            pytest.fail(f"CI, and a machine with bubblewrap, must have the jail: {sandbox.describe()}")
        pytest.skip(f"no bubblewrap jail here: {sandbox.describe()}")


def peeked(arena: Arena, bot: BotSpec, *paths: Path) -> dict[str, str]:
    """Play one match with ``bot`` (a hostile bot in mode ``peek``); return what it found, by what it tried."""
    record = arena.play(bot, deadline=1.0)
    assert record.result is not None and record.faults == [], record.faults
    arena.retire(bot.name)
    found = {}
    for line in (arena.log_dir / log_file_name(bot.name, 0)).read_text().splitlines():
        if line.startswith("peek "):
            what, outcome = line.removeprefix("peek ").split(": ", 1)
            found[what] = outcome
    assert {f"read {p}" for p in paths} <= set(found), found
    return found


def renamed(bot: BotSpec, name: str) -> BotSpec:
    """Return ``bot`` under another name: the suite's arena is shared, and each attacker's log has its own name."""
    return dataclasses.replace(bot, name=name)


def outcome(found: dict[str, str], path: Path) -> str:
    return found[f"read {path}"].split()[0]


@pytest.fixture
def bots(tmp_path: Path) -> Path:
    """Two folders of hostile bots (copies of hostile.py): ``shared`` holds two bots and their data; ``pack`` is a
    package of bots, each in a folder of its own (as the bundled bots are)."""
    shared = tmp_path / "shared"
    (shared / "lib").mkdir(parents=True)
    for name in ("peeker.py", "sibling.py"):
        shutil.copy(HOSTILE, shared / name)
    (shared / "data.bin").write_bytes(b"the peeker's own data")
    (shared / "secret.txt").write_text("nobody listed this")
    (shared / "lib" / "helper.txt").write_text("a listed folder")
    for folder in ("pack", "pack/loner", "pack/other"):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "__init__.py").write_text("")
    for name in ("loner", "other"):
        shutil.copy(HOSTILE, tmp_path / "pack" / name / "bot.py")
    (tmp_path / "pack" / "loner" / "notes.txt").write_text("the loner's notes")
    return tmp_path


def targets(root: Path) -> list[Path]:
    return [root / "shared" / "sibling.py", root / "shared" / "secret.txt", root / "shared" / "data.bin",
            root / "shared" / "lib" / "helper.txt", root / "pack" / "loner" / "notes.txt",
            root / "pack" / "other" / "bot.py"]


def test_a_bot_in_a_shared_folder_reads_only_its_program_and_its_listed_files(arena: Arena, bots: Path) -> None:
    needs_jail(arena)
    paths = targets(bots)
    peek = ", ".join(f'"{p}"' for p in paths)
    (bots / "shared.toml").write_text(
        f'[[bot]]\nname = "peeker"\ncommand = ["{{python}}", "shared/peeker.py", "peek", {peek}]\n'
        'files = ["shared/data.bin", "shared/lib/"]\n\n'
        '[[bot]]\nname = "sibling"\ncommand = ["{python}", "shared/sibling.py", "polite"]\n')
    peeker = load_bot_list(bots / "shared.toml")[0]
    found = peeked(arena, renamed(peeker, "peeker-shared"), *paths)
    assert outcome(found, bots / "shared" / "sibling.py") == "blocked", found  # its sibling's source
    assert outcome(found, bots / "shared" / "secret.txt") == "blocked", found  # a file nobody listed
    assert outcome(found, bots / "shared" / "data.bin") == "read", found  # listed: files = ["shared/data.bin"]
    assert outcome(found, bots / "shared" / "lib" / "helper.txt") == "read", found  # in a listed folder
    assert outcome(found, bots / "pack" / "other" / "bot.py") == "blocked", found


def test_a_bot_in_a_folder_of_its_own_reads_that_folder_and_none_of_its_neighbours(arena: Arena, bots: Path) -> None:
    needs_jail(arena)
    paths = targets(bots)
    peek = ", ".join(f'"{p}"' for p in paths)
    (bots / "pack.toml").write_text(
        f'[[bot]]\nname = "loner"\ncommand = ["{{python}}", "-m", "pack.loner.bot", "peek", {peek}]\n\n'
        '[[bot]]\nname = "other"\ncommand = ["{python}", "-m", "pack.other.bot", "polite"]\n')
    loner = load_bot_list(bots / "pack.toml")[0]
    found = peeked(arena, renamed(loner, "peeker-alone"), *paths)
    assert outcome(found, bots / "pack" / "loner" / "notes.txt") == "read", found  # its own folder
    assert outcome(found, bots / "pack" / "other" / "bot.py") == "blocked", found  # the next bot's, in the package
    assert all(outcome(found, p) == "blocked" for p in paths[:4]), found


def test_a_python_bot_imports_the_sdk_but_reads_none_of_the_arenas_modules(arena: Arena, bots: Path) -> None:
    """Both as the bundled bots run (``-m`` from the project's root, the arena beside them) and as a bot
    elsewhere (a script that imports the installed arena)."""
    needs_jail(arena)
    import arena as package

    modules = [Path(package.__file__ or "").parent / name for name in ("cli.py", "ladder/ladder.py", "ladder/store.py")]
    assert all(m.is_file() for m in modules)
    (bots / "one.toml").write_text('[[bot]]\nname = "x"\ncommand = ["{python}", "shared/peeker.py", "peek"]\n')
    elsewhere = renamed(load_bot_list(bots / "one.toml")[0], "peeker-sdk-elsewhere")
    for bot in (hostile("peeker-sdk", "peek", *map(str, modules)), elsewhere):
        found = peeked(arena, bot)
        assert found["import arena.sdk"].startswith("ok "), found
        package = Path(found["import arena.sdk"].split()[1]).parent.parent
        read = {what: result for what, result in found.items() if what.startswith("read ")}
        expected = {f"read {package / name}" for name in ARENAS_OWN}
        assert all((package / name).is_file() for name in ARENAS_OWN)  # there outside the jail, hidden inside
        assert expected <= set(read), found
        assert all(result.startswith("blocked") for result in read.values()), read


def test_a_jailed_bots_path_names_only_the_jails_folders(arena: Arena, bots: Path) -> None:
    needs_jail(arena)
    found = peeked(arena, hostile("peeker-path", "peek"))
    path = found["PATH"].split(":")
    interpreter = os.path.dirname(os.path.abspath(sys.executable))
    assert set(path) <= {interpreter, *JAIL_PATH}, path
    host_only = [f for f in os.environ.get("PATH", "").split(":") if f and f not in {interpreter, *JAIL_PATH}]
    assert not set(path) & set(host_only), path
    assert all(found[f"PATH folder {folder}"] == "exists" for folder in path), found


GAMES = Path(__file__).resolve().parents[2] / "arena" / "games"


def test_a_python_bot_reads_the_games_but_none_of_their_bundled_bots(arena: Arena) -> None:
    needs_jail(arena)
    bundled = [GAMES / "cabanga" / "bots" / "greedy" / "bot.py", GAMES / "cabanga" / "bots" / "bots.toml",
               GAMES / "cabanga" / "bots", GAMES / "lama" / "bots" / "search" / "bot.py",
               GAMES / "goofspiel" / "bots" / "random"]
    shown = [GAMES / "cabanga" / "rules.py", GAMES / "lama" / "search.py", GAMES / "goofspiel"]
    assert all(p.exists() for p in bundled + shown)
    found = peeked(arena, hostile("peeker-games", "peek", *map(str, bundled + shown)), *bundled, *shown)
    assert all(outcome(found, p) == "blocked" for p in bundled), found
    assert all(outcome(found, p) == "read" for p in shown), found
    assert "bots" not in found[f"read {GAMES / 'goofspiel'}"], found  # the folder is listed without its bots


def test_a_bundled_bot_reads_its_own_folder_and_none_of_the_other_bundled_bots(
        arena: Arena, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bundled bot of a game registered by name (a package of its own, as a game from another distribution
    is), named alone in an author's list (``bundled = ...``): no neighbour keeps the game's ``bots`` folder from
    it, the jail's rule does."""
    needs_jail(arena)
    game = tmp_path / "peekgame"
    for folder in ("", "bots", "bots/peeker", "bots/other"):
        (game / folder).mkdir(exist_ok=True)
        (game / folder / "__init__.py").write_text("")
    (game / "rules.py").write_text("RULES = 1\n")
    shutil.copy(HOSTILE, game / "bots" / "peeker" / "bot.py")
    shutil.copy(HOSTILE, game / "bots" / "other" / "bot.py")
    (game / "bots" / "peeker" / "notes.txt").write_text("the peeker's own notes")
    bots = game / "bots"
    paths = [bots / "peeker" / "notes.txt", game / "rules.py", bots, bots / "other" / "bot.py", bots / "bots.toml",
             GAMES / "cabanga" / "bots" / "greedy" / "bot.py"]
    peek = ", ".join(f'"{p}"' for p in paths)
    (game / "bots" / "bots.toml").write_text(
        f'[[bot]]\nname = "peek-peeker"\ncommand = ["{{python}}", "-m", "peekgame.bots.peeker.bot", "peek", {peek}]\n'
        'cwd = "../.."\n\n'
        '[[bot]]\nname = "peek-other"\ncommand = ["{python}", "-m", "peekgame.bots.other.bot", "polite"]\n'
        'cwd = "../.."\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    register("peekgame", "peekgame")
    try:
        [alone] = parse_bot_list({"bot": [{"bundled": "peek-peeker"}]}, tmp_path)
        assert alone.neighbours == ()
        found = peeked(arena, renamed(alone, "peeker-bundled"), *paths)
    finally:
        unregister("peekgame")
    assert outcome(found, paths[0]) == "read", found  # its own folder
    assert outcome(found, paths[1]) == "read", found  # its game's folder (registered by name)
    # the bots' folder is there as the way to its own, holding only that: not the other bot, not the list (and
    # the bytecode its import wrote there: the test's folder is under /tmp, the jail's scratch)
    listed = set(ast.literal_eval(found[f"read {paths[2]}"].removeprefix("read "))) - {"__pycache__"}
    assert listed == {"__init__.py", "peeker"}, found
    assert {str(p): outcome(found, p) for p in paths[3:]} == {str(p): "blocked" for p in paths[3:]}, found
