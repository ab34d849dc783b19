"""bot.toml: good manifests read to the values they say, bad ones are refused with a message naming the key, and
to_toml writes what parse_manifest reads back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.contest.manifest import (
    COMMAND_ITEM_CHARS,
    EXAMPLE,
    GAME,
    MANIFEST_BYTES,
    NAME,
    Manifest,
    ManifestError,
    parse_manifest,
    read_manifest,
)

BASE = {"name": '"my-bot"', "command": '["bot.py"]', "games": '["cabanga"]', "runtime": '"python"'}


def toml(**changes: str | None) -> str:
    """Return the smallest good bot.toml with ``changes``: a key's TOML value, or None to leave the key out."""
    values: dict[str, str | None] = {**BASE, **changes}
    return "".join(f"{key} = {value}\n" for key, value in values.items() if value is not None)


SMALLEST = Manifest(name="my-bot", command=("bot.py",), games=("cabanga",), runtime="python")

GOOD: dict[str, tuple[str, Manifest]] = {
    "smallest": (toml(), SMALLEST),
    "example-constant": (EXAMPLE, SMALLEST),
    "everything": (
        toml(build='["make", "-j2"]', description='"plays the lowest card that wins"', games='["cabanga", "lama"]'),
        Manifest(name="my-bot", command=("bot.py",), games=("cabanga", "lama"), runtime="python",
                 build=("make", "-j2"), description="plays the lowest card that wins")),
    "dot-slash-program": (toml(command='["./bot", "--seed", "7"]'),
                          Manifest("my-bot", ("./bot", "--seed", "7"), ("cabanga",), "python")),
    "program-in-subfolder": (toml(command='["build/bot"]'), Manifest("my-bot", ("build/bot",), ("cabanga",), "python")),
    "runtime-option-first": (toml(command='["-m", "mybot"]'),
                             Manifest("my-bot", ("-m", "mybot"), ("cabanga",), "python")),
    "empty-argument-after-program": (toml(command='["bot.py", ""]'),
                                     Manifest("my-bot", ("bot.py", ""), ("cabanga",), "python")),
    "name-of-32": (toml(name='"' + "a" * 32 + '"'), Manifest("a" * 32, ("bot.py",), ("cabanga",), "python")),
    "name-digit-first": (toml(name='"9lives_x-y"'), Manifest("9lives_x-y", ("bot.py",), ("cabanga",), "python")),
    "game-with-underscore-first": (toml(games='["_x"]'), Manifest("my-bot", ("bot.py",), ("_x",), "python")),
    "item-of-256": (toml(command='["' + "b" * 256 + '"]'), Manifest("my-bot", ("b" * 256,), ("cabanga",), "python")),
    "command-of-32": (toml(command="[" + ", ".join(['"a"'] * 32) + "]"),
                      Manifest("my-bot", ("a",) * 32, ("cabanga",), "python")),
    "description-of-500": (toml(description='"' + "d" * 500 + '"'),
                           Manifest("my-bot", ("bot.py",), ("cabanga",), "python", description="d" * 500)),
    "dots-in-names-are-not-dot-dot": (toml(command='["..bot", "a..b/c"]'),
                                      Manifest("my-bot", ("..bot", "a..b/c"), ("cabanga",), "python")),
}


@pytest.mark.parametrize("case", sorted(GOOD))
def test_a_good_manifest_reads_to_its_values(case: str) -> None:
    text, expected = GOOD[case]
    assert parse_manifest(text) == expected


BAD: dict[str, tuple[str, str]] = {
    "not-toml": ("name = ", r"bot.toml is not valid TOML .*a complete one looks like:\nname = \"my-bot\""),
    "missing-name": (toml(name=None), r"bot.toml misses 'name', for example name = \"my-bot\""),
    "missing-command": (toml(command=None), r"misses 'command', for example command = \[\"bot.py\"\]"),
    "missing-games": (toml(games=None), r"misses 'games', for example games = \[\"cabanga\"\]"),
    "missing-runtime": (toml(runtime=None), r"misses 'runtime', for example runtime = \"python\""),
    "unknown-key": (toml(version='"1"'), r"unknown keys 'version': the known ones are name, command, games, runtime, "
                                         r"build, description"),
    "unknown-keys": (toml(zeta="1", alpha="2"), r"unknown keys 'alpha', 'zeta'"),
    "unknown-table": (toml() + "[extra]\nx = 1\n", r"unknown keys 'extra'"),
    "name-upper": (toml(name='"MyBot"'), r"'name' is 'MyBot', which is not a valid name"),
    "name-dash-first": (toml(name='"-bot"'), r"'name' is '-bot', which is not a valid name"),
    "name-empty": (toml(name='""'), r"'name' is '', which is not a valid name"),
    "name-33": (toml(name='"' + "a" * 33 + '"'), r"'name' is 'a{33}', which is not a valid name"),
    "name-space": (toml(name='"my bot"'), r"'name' is 'my bot'"),
    "name-newline": (toml(name='"bot\\n"'), r"'name' is 'bot\\n'"),
    "name-int": (toml(name="7"), r"'name' must be a string, .*; got 7 \(an integer\)"),
    "runtime-bad": (toml(runtime='"Python3.11"'), r"'runtime' is 'Python3.11', which is not a valid name"),
    "runtime-list": (toml(runtime='["python"]'), r"'runtime' must be a string.*\(a list\)"),
    "command-string": (toml(command='"bot.py"'), r"'command' must be a list of strings, for example command = "
                                                 r"\[\"bot.py\"\]; got 'bot.py' \(a string\)"),
    "command-empty": (toml(command="[]"), r"'command' must have 1 to 32 items, not 0"),
    "command-33": (toml(command="[" + ", ".join(['"a"'] * 33) + "]"), r"'command' must have 1 to 32 items, not 33"),
    "command-int-item": (toml(command='["bot.py", 3]'), r"'command' must hold strings.*got 3 \(an integer\)"),
    "command-bool-item": (toml(command='[true]'), r"got True \(a boolean\)"),
    "command-long-item": (toml(command='["' + "b" * (COMMAND_ITEM_CHARS + 1) + '"]'), r"longer than 256 characters"),
    "command-nul": (toml(command='["bot\\u0000.py"]'), r"'command' item 'bot\\x00.py' has a NUL"),
    "command-absolute-interpreter": (toml(command='["/usr/bin/python3", "bot.py"]'),
                                     r"'command' item '/usr/bin/python3' is an absolute path"),
    "command-absolute-argument": (toml(command='["bot.py", "/etc/passwd"]'), r"item '/etc/passwd' is an absolute"),
    "command-dot-dot": (toml(command='["../other/bot.py"]'), r"item '../other/bot.py' has a '..' part"),
    "command-dot-dot-inside": (toml(command='["lib/../../x"]'), r"item 'lib/../../x' has a '..' part"),
    "command-dot-dot-alone": (toml(command='["bot.py", ".."]'), r"item '..' has a '..' part"),
    "command-empty-program": (toml(command='["", "bot.py"]'), r"'command' starts with an empty string"),
    "games-string": (toml(games='"cabanga"'), r"'games' must be a list of game names.*\(a string\)"),
    "games-empty": (toml(games="[]"), r"'games' is empty"),
    "games-bad-name": (toml(games='["Cabanga!"]'), r"'games' names 'Cabanga!', which is not a game name"),
    "games-too-long": (toml(games='["' + "g" * 33 + '"]'), r"'games' names 'g{33}', which is not a game name"),
    "games-twice": (toml(games='["lama", "lama"]'), r"'games' names 'lama' twice"),
    "games-int": (toml(games="[1]"), r"'games' must hold strings.*got 1 \(an integer\)"),
    "build-empty": (toml(build="[]"), r"'build' must have 1 to 32 items, not 0; leave it out for no build"),
    "build-string": (toml(build='"make"'), r"'build' must be a list of strings, for example build = \[\"make\"\]"),
    "build-absolute": (toml(build='["/bin/sh", "build.sh"]'), r"'build' item '/bin/sh' is an absolute path"),
    "description-long": (toml(description='"' + "d" * 501 + '"'), r"'description' has 501 characters, more than 500"),
    "description-list": (toml(description='["x"]'), r"'description' must be a string"),
    "description-date": (toml(description="2024-01-01"), r"'description' must be a string.*\(a date or time\)"),
    "lone-surrogate": (toml(description='"\ud800"'), r"bot.toml is not valid Unicode text"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_manifest_is_refused_with_a_message_naming_it(case: str) -> None:
    text, message = BAD[case]
    with pytest.raises(ManifestError, match=message) as refused:
        parse_manifest(text)
    assert str(refused.value)[0].islower() or str(refused.value).startswith("'")


# -- to_toml -------------------------------------------------------------------------------------------------------

names = st.from_regex(NAME, fullmatch=True)
text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=COMMAND_ITEM_CHARS)
items = text.filter(lambda item: not item.startswith("/") and ".." not in item.split("/"))
commands = st.lists(items, min_size=1, max_size=32).filter(lambda command: command[0] != "").map(tuple)
manifests = st.builds(
    Manifest, name=names, command=commands, games=st.lists(st.from_regex(GAME, fullmatch=True), min_size=1,
                                                           max_size=4, unique=True).map(tuple),
    runtime=names, build=st.none() | commands, description=st.text(st.characters(codec="utf-8"), max_size=500))


@given(manifests)
def test_to_toml_reads_back_to_the_same_manifest(manifest: Manifest) -> None:
    assert parse_manifest(manifest.to_toml()) == manifest


@pytest.mark.parametrize("manifest", [
    SMALLEST,
    Manifest("x", ('say "hi"', "back\\slash", "tab\tnew\nline", "\x7f\x01", "ü€😀"), ("lama",), "node",
             build=("make",), description='"quoted"\r\n'),
    Manifest("x", ("bot.py",), ("cabanga",), "python", build=None, description=""),
])
def test_to_toml_escapes_what_toml_cannot_hold_raw(manifest: Manifest) -> None:
    assert parse_manifest(manifest.to_toml()) == manifest


def test_to_toml_leaves_out_the_optional_keys_when_unset() -> None:
    assert SMALLEST.to_toml() == EXAMPLE


# -- read_manifest -------------------------------------------------------------------------------------------------


def test_read_manifest_reads_the_folders_bot_toml(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(toml(description='"héllo"'), encoding="utf-8")
    assert read_manifest(tmp_path) == Manifest("my-bot", ("bot.py",), ("cabanga",), "python", description="héllo")


def test_read_manifest_without_bot_toml_shows_an_example(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"no bot.toml in .*: a submission's folder needs one, for example:\n"
                                            r"name = \"my-bot\"\ncommand"):
        read_manifest(tmp_path)


def test_read_manifest_refuses_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.toml").write_text(toml())
    (tmp_path / "bot.toml").symlink_to(tmp_path / "real.toml")
    with pytest.raises(ManifestError, match=r"bot.toml' is a symbolic link"):
        read_manifest(tmp_path)


def test_read_manifest_refuses_a_folder_named_bot_toml(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").mkdir()
    with pytest.raises(ManifestError, match=r"bot.toml' is not a regular file"):
        read_manifest(tmp_path)


def test_read_manifest_refuses_a_fifo(tmp_path: Path) -> None:
    # a reader that opened a FIFO would block forever
    os.mkfifo(tmp_path / "bot.toml")
    with pytest.raises(ManifestError, match=r"is not a regular file"):
        read_manifest(tmp_path)


def test_read_manifest_takes_64_kib_and_not_a_byte_more(tmp_path: Path) -> None:
    padded = toml() + "#" * (MANIFEST_BYTES - len(toml()) - 1) + "\n"
    assert len(padded.encode()) == MANIFEST_BYTES
    (tmp_path / "bot.toml").write_text(padded)
    assert read_manifest(tmp_path) == SMALLEST
    (tmp_path / "bot.toml").write_text(padded + "\n")
    with pytest.raises(ManifestError, match=r"is bigger than 64 KiB"):
        read_manifest(tmp_path)


def test_read_manifest_refuses_what_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_bytes(toml(description='"caf\xe9"').encode("latin-1"))
    with pytest.raises(ManifestError, match=r"is not UTF-8 text"):
        read_manifest(tmp_path)


def test_read_manifest_names_the_file_in_parse_errors(tmp_path: Path) -> None:
    (tmp_path / "bot.toml").write_text(toml(name='"Bad Name"'))
    with pytest.raises(ManifestError, match=r"bot.toml': 'name' is 'Bad Name'"):
        read_manifest(tmp_path)
