"""What a bot's jail shows of the machine (issue 18): the bot list's ``files`` key, the bots that share a folder
(and the warning ``arena check`` and ``arena ladder`` give for them), the binds of the jail, and the SDK's files.

These look at the binds only; tests/adversarial/test_sibling_files.py runs hostile bots in the real jail.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.games import BOT_LIST, game_names, get_game
from arena.launch.botlist import BotListError, BotSpec, bundled_bots, load_bot_list, parse_bot_list
from arena.launch.jail import JAIL_PATH, SDK_FILES, bundled_bot_folders, jail_binds, jail_path, shared_folders
from arena.tools.check import check_bot

# a Python bot's jail shows the arena a clean interpreter imports: finding it starts one (once, jail.py)
pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
GAMES = ROOT / "arena" / "games"
RANDOM_BOT = GAMES / "cabanga" / "bots" / "random" / "bot.py"


def entry(**keys: Any) -> dict[str, Any]:
    return {"bot": [{"name": "b", "command": ["{python}", "bot.py"], **keys}]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "bot.py").write_text("")
    (tmp_path / "data.bin").write_bytes(b"weights")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("")
    return tmp_path


def test_files_are_paths_under_the_bots_working_directory(folder: Path) -> None:
    [bot] = parse_bot_list(entry(files=["data.bin", "lib/", "lib/helper.py", "data.bin"]), folder)
    assert bot.files == (folder / "data.bin", folder / "lib", folder / "lib" / "helper.py")
    assert {folder / "data.bin", folder / "lib"} <= {Path(b.path) for b in jail_binds(bot)}


@pytest.mark.parametrize(("files", "message"), [
    ("data.bin", "files must be a list of paths relative to its cwd, got 'data.bin'"),
    (["data.bin", 3], "files must be a list of paths relative to its cwd"),
    ([""], "files must be a list of paths relative to its cwd"),
    (["/etc/passwd"], "files entry '/etc/passwd' must be relative to the bot's cwd"),
    (["~/notes"], "files entry '~/notes' must be relative to the bot's cwd"),
    (["../.."], "files entry '../..' leads out of the bot's cwd"),
    (["lib/../../x"], "files entry 'lib/../../x' leads out of the bot's cwd"),
    (["."], "files entry '.' is the bot's whole cwd"),
    (["lib/.."], "files entry 'lib/..' is the bot's whole cwd"),
    (["weights.bin"], "files entry 'weights.bin' does not exist"),
    (["data.bin/"], "files entry 'data.bin/' is not a folder"),
])
def test_bad_files_are_one_line_errors(folder: Path, files: object, message: str) -> None:
    with pytest.raises(BotListError, match=re.escape(f"bot 'b': {message}")) as error:
        parse_bot_list(entry(files=files), folder, "bots.toml")
    assert "\n" not in str(error.value) and str(error.value).startswith("bots.toml: ")


def test_a_link_out_of_the_working_directory_is_refused(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (folder / "out").symlink_to(elsewhere)
    with pytest.raises(BotListError, match="files entry 'out' leads out of the bot's cwd"):
        parse_bot_list(entry(files=["out"]), folder)


def test_a_remote_bot_has_no_files(folder: Path) -> None:
    with pytest.raises(BotListError, match="a bot with a token is remote: it has no command, cwd, limits or files"):
        parse_bot_list({"bot": [{"name": "far", "token": "t" * 20, "files": ["data.bin"]}]}, folder)


def write_list(path: Path, bots: dict[str, list[str]]) -> Path:
    path.write_text("".join(f'[[bot]]\nname = "{name}"\ncommand = {command!r}\n\n'.replace("'", '"')
                            for name, command in bots.items()))
    return path


def binds(bot: BotSpec) -> set[Path]:
    return {Path(b.path) for b in jail_binds(bot)}


def test_two_bots_in_one_folder_see_only_their_programs_and_are_warned_about(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    for name in ("a.py", "b.py", "data.bin"):
        (tmp_path / "bots" / name).write_text("")
    path = write_list(tmp_path / "bots.toml", {"a": ["{python}", "bots/a.py"], "b": ["{python}", "bots/b.py"]})
    a, b = load_bot_list(path)
    assert tmp_path / "bots" / "a.py" in binds(a) and tmp_path / "bots" not in binds(a)
    assert not {p for p in binds(a) if p.is_relative_to(tmp_path)} - {tmp_path / "bots" / "a.py"}
    [warning] = shared_folders([a, b])
    assert warning.startswith(f"bots 'a' and 'b' share the folder {str(tmp_path / 'bots')!r}")
    assert "give each bot a folder of its own" in warning and "`files = [...]`" in warning
    assert shared_folders([a]) == [warning]  # arena check checks one bot of its list
    assert "\n" not in warning


def test_a_bot_in_a_folder_of_its_own_sees_that_folder_and_no_warning(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / "pack" / name).mkdir(parents=True)
        for file in ("__init__.py", "bot.py"):
            (tmp_path / "pack" / name / file).write_text("")
    (tmp_path / "pack" / "__init__.py").write_text("")
    path = write_list(tmp_path / "bots.toml", {n: ["{python}", "-m", f"pack.{n}.bot"] for n in ("a", "b")})
    a, b = load_bot_list(path)
    assert {p for p in binds(a) if p.is_relative_to(tmp_path)} == {tmp_path / "pack" / "a",
                                                                   tmp_path / "pack" / "__init__.py"}
    assert shared_folders([a, b]) == []


def test_bots_running_one_program_share_nothing_but_it(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("")
    path = write_list(tmp_path / "bots.toml", {"fast": ["{python}", "bot.py", "--fast"],
                                               "slow": ["{python}", "bot.py", "--slow"]})
    bots = load_bot_list(path)
    assert shared_folders(bots) == [] and tmp_path in binds(bots[0])


def test_the_bundled_bots_have_folders_of_their_own() -> None:
    """Each bundled bot, in its game's folder (arena/games/GAME/bots/NAME/), sees of all the games' bundled bots
    its own folder and the package's __init__.py: alone in an author's list as much as in its game's list."""
    assert sorted(Path(f) for f in bundled_bot_folders()) == [GAMES / g / "bots" for g in game_names()]
    for game in game_names():
        bots = load_bot_list(GAMES / game / BOT_LIST)
        assert shared_folders(bots) == []
        for bot in bots:
            alone = parse_bot_list({"bot": [{"bundled": bot.name}]}, ROOT)[0]  # no neighbour to keep it out of bots/
            # the folder the command runs (the house levels keep their first folders: easy is greedy/, ...)
            module = bot.command[bot.command.index("-m") + 1]
            folder = GAMES / game / "bots" / module.split(".")[-2]
            assert (folder / "bot.py").is_file()
            for spec in (bot, alone):
                own = {p for p in binds(spec) if any(p.is_relative_to(GAMES / g / "bots") for g in game_names())}
                assert own == {GAMES / game / "bots" / "__init__.py", folder}, own
                assert not {ROOT, ROOT / "arena", GAMES, GAMES / game} & binds(spec)


def test_a_python_bot_sees_the_games_but_none_of_their_bundled_bots(tmp_path: Path) -> None:
    """The SDK's ``games`` folder is shown without any game's ``bots`` folder: a stranger's Python bot reads the
    rules, codecs and search toolkits of every game, and no bundled bot's code or list."""
    (tmp_path / "bot.py").write_text("")
    [bot] = parse_bot_list(entry(), tmp_path)
    shown = binds(bot)
    assert {GAMES / "__init__.py", GAMES / "cabanga" / "rules.py", GAMES / "lama" / "search.py",
            GAMES / "goofspiel" / "codec.py"} <= shown, shown
    assert not [p for p in shown if any(p.is_relative_to(GAMES / g / "bots") or GAMES / g / "bots" in p.parents
                                        for g in game_names())], shown
    assert not {GAMES, *(GAMES / g for g in game_names())} & shown  # each shown entry by entry, not whole


def test_the_interpreters_folders_show_no_other_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot inside the folder of the interpreter it runs under (as the bundled bots are, installed into its
    site-packages) is left out of that folder: everything else in it is shown, one entry at a time."""
    tool = tmp_path / "tool"
    (tool / "bin").mkdir(parents=True)
    (tool / "bin" / "runner").write_text("#!/bin/sh\n")
    (tool / "bin" / "runner").chmod(0o755)
    monkeypatch.setenv("PATH", str(tool / "bin"))
    site = tool / "lib" / "site-packages"
    for folder in ("grpc", "bots/a", "bots/b"):
        (site / folder).mkdir(parents=True)
        (site / folder / "bot.py").write_text("")
    (site / "bots" / "link").symlink_to(site / "bots" / "b")
    (tool / "lib" / "to-b").symlink_to(site / "bots" / "b")
    path = write_list(tmp_path / "bots.toml", {n: ["runner", f"tool/lib/site-packages/bots/{n}/bot.py"]
                                               for n in ("a", "b")})
    a, _ = load_bot_list(path)
    shown = binds(a)
    assert {tool / "bin", site / "grpc", site / "bots" / "a"} <= shown and tool not in shown, shown
    assert not [p for p in shown if p.is_relative_to(site / "bots" / "b") or p.name in ("link", "to-b")], shown
    assert jail_path(a).split(":")[0] == str(tool / "bin")


def test_a_python_bot_sees_the_sdk_and_none_of_the_arenas_own_modules() -> None:
    import arena

    package = Path(arena.__file__ or "").resolve().parent
    bot = BotSpec("g", ("{python}", "-m", "arena.games.cabanga.bots.greedy.bot"), ROOT)
    shown = binds(bot)
    assert {package / "sdk", package / "games" / "cabanga" / "rules.py", package / "v2",
            package / "protocol" / "codec.py"} <= shown
    assert package / "protocol" / "server.py" not in shown and package / "protocol" not in shown
    outside = [p for p in shown if p == package or ((p.is_relative_to(package) and not sdk_file(p.relative_to(package)))
               and not p.is_relative_to(package / "games" / "cabanga" / "bots" / "greedy")
               and p != package / "games" / "cabanga" / "bots" / "__init__.py")]  # its own folder, and its package
    assert not outside, outside


def sdk_file(relative: Path) -> bool:
    """Return whether ``relative`` (to the arena package) is one of SDK_FILES, inside one, or its compiled form,
    and not of the games' bundled bots (games/*/bots)."""
    if relative.parent.name == "__pycache__":
        relative = relative.parent.parent / (relative.name.split(".")[0] + ".py")
    if len(relative.parts) >= 3 and relative.parts[0] == "games" and relative.parts[2] == "bots":
        return False
    return any(relative == Path(name) or relative.is_relative_to(name) for name in SDK_FILES)


def test_sdk_files_hold_everything_the_sdk_and_the_bundled_bots_import() -> None:
    """The SDK imports only SDK_FILES; each bundled bot imports those, its own folder and its package's
    __init__.py: nothing of another bot's folder (the search bots share code through arena.games.GAME.search)."""
    bundled = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts) for p in GAMES.glob("*/bots/*/bot.py"))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import arena.sdk\n"
            "def loaded(): return {m.__file__ for n, m in list(sys.modules.items()) if n.split('.')[0] == 'arena'}\n"
            "print('sdk', *loaded())\n"
            "for name in sys.argv[2:]:\n"
            "    before = loaded(); __import__(name); print(name, *(loaded() - before))\n")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(ROOT), *bundled], capture_output=True, text=True,
                          timeout=60, check=True)
    package = ROOT / "arena"
    lines = [line.split() for line in done.stdout.splitlines()]
    assert [line[0] for line in lines] == ["sdk", *bundled]
    sdk = [Path(f).relative_to(package) for f in lines[0][1:]]
    assert sdk and all(sdk_file(p) for p in sdk), sdk
    for name, *files in lines[1:]:
        own = ROOT.joinpath(*name.split(".")[:-1])  # arena/games/GAME/bots/NAME
        mine = {own / "__init__.py", own / "bot.py", own.parent / "__init__.py"}
        outside = [f for f in map(Path, files) if f not in mine and not sdk_file(f.relative_to(package))]
        assert not outside, (name, outside)
    assert len(bundled) == len(bundled_bots()) >= 10  # every bundled list's bot, each in a folder of its own


def test_a_jailed_bots_path_is_its_interpreters_folder_and_the_systems() -> None:
    bot = BotSpec("g", ("{python}", "-m", "arena.games.cabanga.bots.greedy.bot"), ROOT)
    assert jail_path(bot).split(":") == [os.path.dirname(os.path.abspath(sys.executable)), *JAIL_PATH]
    cpp = BotSpec("cpp", ("./build/arena-bot",), ROOT / "bots" / "cpp")
    build = ROOT / "bots" / "cpp" / "build" / "arena-bot"
    assert jail_path(cpp).split(":")[0] == (str(build.parent) if build.is_file() else "/usr/local/bin")


def shared_folder(tmp_path: Path, names: tuple[str, ...] = ("a", "b")) -> Path:
    """A list of real bots (copies of the random bot) in one folder."""
    (tmp_path / "shared").mkdir()
    for name in names:
        shutil.copy(RANDOM_BOT, tmp_path / "shared" / f"{name}.py")
    return write_list(tmp_path / "bots.toml", {n: ["{python}", f"shared/{n}.py"] for n in names})


def test_arena_check_warns_of_a_shared_folder(tmp_path: Path) -> None:
    path = shared_folder(tmp_path)
    (tmp_path / "shared" / "a.py").write_text("raise SystemExit(3)\n")  # fails at once: the check is short
    a = load_bot_list(path)[0]
    report = asyncio.run(check_bot(a, [get_game("cabanga")], rounds=1))
    assert not report.passed
    assert [w.split(",")[0] for w in report.warnings] == [f"bots 'a' and 'b' share the folder "
                                                          f"{str(tmp_path / 'shared')!r}"]
    assert report.to_json()["warnings"] == report.warnings
    result = CliRunner().invoke(main, ["check", str(path), "--name", "a", "--game", "cabanga", "--rounds", "1"])
    assert result.exit_code == 1
    assert f"warning: {report.warnings[0]}" in result.output


def test_arena_ladder_warns_of_a_shared_folder(tmp_path: Path) -> None:
    path = shared_folder(tmp_path, ("a", "b", "c"))
    result = CliRunner().invoke(main, ["ladder", "--bots", str(path), "--game", "cabanga", "--seats", "3",
                                       "--matches", "1", "--tables", "1", "--db", str(tmp_path / "l.db"),
                                       "-o", "rounds=1"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("warning: ")]
    assert len(lines) == 1 and f"bots 'a', 'b' and 'c' share the folder {str(tmp_path / 'shared')!r}" in lines[0]
