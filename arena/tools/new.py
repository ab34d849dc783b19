"""``arena new``: a minimal bot and its bot list entry, in Python, JavaScript, C++, Go, Java or Rust, that pass
``arena check``.

The JavaScript, C++, Go, Java and Rust bots are copies of the bundled examples (``bots/js``, ``bots/cpp``,
``bots/go``, ``bots/java``, ``bots/rust``) with the protocol's .proto files beside them, so the new folder stands
on its own:
``proto/arena/v2/arena.proto`` (the envelope) and ``proto/arena/games/<name>/<name>.proto`` (the messages of each
game the bot plays), the layout the examples' ``bot.js``, ``CMakeLists.txt``, ``build.sh`` and ``build.rs`` look
for. The Python bot uses :mod:`arena.sdk`.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

from arena.games import game_packages, get_game
from arena.games.tools import game_tools

LANGUAGES = ("python", "js", "cpp", "go", "java", "rust")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")


class ScaffoldError(ValueError):
    """A bot that cannot be written: a bad name, or a folder that exists already."""


_PYTHON = '''"""{name}: an arena bot for {title} (made by `arena new`; see docs/bot-guide.md of the arena).

Check it:  arena check bots.toml
Play it:   arena match --bots bots.toml --game {game} --seats 4
Debug it:  self.debug(text) in a decision goes with its answer (1 KiB at most), for you alone to read beside
           it: arena match ... --replay m.json, then arena replay m.json --seat N (in a contest: your seat's replay).
"""

from __future__ import annotations

from collections.abc import Sequence

{imports}
from arena.sdk import run


class {cls}({base}):
    agent = "{name} 0.1 (Python)"

{decisions}

if __name__ == "__main__":
    run({cls}())
'''

_COMMANDS = {
    "python": '["{python}", "bot.py"]',
    "js": '["node", "bot.js"]',
    "cpp": '["./build/arena-bot"]',
    "go": '["./build/arena-bot"]',
    "java": '["./build/arena-bot"]',
    "rust": '["./build/arena-bot"]',
}
_BEFORE = {
    "python": "",
    "js": "# First: npm install (in this folder; it needs @grpc/grpc-js, @grpc/proto-loader and protobufjs).\n",
    "cpp": "# First: cmake -S . -B build && cmake --build build (needs libgrpc++-dev protobuf-compiler-grpc, cmake,\n"
           "# g++).\n",
    "go": "# First: sh build.sh (offline; needs golang-go golang-google-grpc-dev golang-google-protobuf-dev\n"
          "# golang-github-golang-protobuf-1-5-dev protoc-gen-go protoc-gen-go-grpc protobuf-compiler).\n",
    "java": "# First: sh build.sh (offline; needs openjdk-17-jdk-headless protobuf-compiler\n"
            "# protobuf-compiler-grpc-java-plugin libgrpc-java libprotobuf-java libnetty-java libperfmark-java\n"
            "# libguava-java). build/arena-bot runs the JVM within the default limits (see build.sh).\n",
    "rust": "# First: sh build.sh (offline; needs rustc cargo librust-h2-dev librust-tokio-dev librust-prost-dev\n"
            "# librust-prost-types-dev librust-prost-build-dev librust-bytes-dev librust-http-dev protobuf-compiler\n"
            "# libprotobuf-dev).\n",
}

_DECODED = re.compile(r"^set\(GAMES ([a-z0-9_ ]+)\)", re.MULTILINE)
"""The line of the C++ example's CMakeLists.txt that names the games whose views the examples decode."""


def decoded_games(bundled: Path) -> tuple[str, ...]:
    """Return the games whose views the C++, Go, Java and Rust examples (``bots/cpp/bot.cc``, ``bots/go/main.go``,
    ``bots/java/Bot.java``, ``bots/rust/src/main.rs``) decode, as the C++ example's CMakeLists.txt names them
    (``set(GAMES ...)``: it compiles their .proto); tests/test_new.py checks that the other three decode the same.
    All four answer any other game's requests from the envelope alone (the first legal choice), so they take every
    game; the game's own .proto is copied beside for the author to decode its views (Go's and Java's ``build.sh``
    and Rust's ``build.rs`` compile every game's .proto they find; for C++ add the game to ``GAMES`` in
    CMakeLists.txt). Raises :class:`ScaffoldError` when the file names none."""
    found = _DECODED.search((bundled / "cpp" / "CMakeLists.txt").read_text(encoding="utf-8"))
    if found is None:
        raise ScaffoldError(f"{str(bundled / 'cpp' / 'CMakeLists.txt')!r} names no games: set(GAMES ...) is missing")
    return tuple(found.group(1).split())


_MANIFEST = {
    "python": ('command = ["bot.py"]\nruntime = "python"\n', ""),
    "js": ('command = ["bot.js"]\nruntime = "node"\n',
           "# A contest's build has no network: run npm install here first, and node_modules goes with the bot.\n"),
    "cpp": ('command = ["build/arena-bot"]\nruntime = "native"\n'
            'build = ["sh", "-c", "cmake -S . -B build && cmake --build build -j2"]\n',
            "# The contest builds it in its jail: delete your own build/ folder before you submit.\n"),
    "go": ('command = ["build/arena-bot"]\nruntime = "native"\nbuild = ["sh", "build.sh"]\n',
           "# The contest builds it in its jail, offline, with Debian's Go packages (build.sh says which): delete\n"
           "# your own build/ folder before you submit.\n"),
    "java": ('command = ["build/arena-bot"]\nruntime = "native"\nbuild = ["sh", "build.sh"]\n',
             "# The contest builds it in its jail, offline, with Debian's Java packages (build.sh says which);\n"
             "# build/arena-bot runs the system's JVM. Delete your own build/ folder before you submit.\n"),
    "rust": ('command = ["build/arena-bot"]\nruntime = "native"\n'
             'build = ["sh", "-c", "sh build.sh && rm -rf build/target build/cargo-home"]\n',
             "# The contest builds it in its jail, offline, with Debian's Rust crates (build.sh says which), and\n"
             "# keeps only the program (the compiled crates are some 180 MB). Delete your own build/ folder before\n"
             "# you submit.\n"),
}
"""What ``bot.toml`` says of a bot in each language: the manifest a contest takes it with (``arena submit``)."""
_BUILT_BY_SCRIPT = {"go": ("main.go", "build.sh"), "java": ("Bot.java", "build.sh"),
                    "rust": ("src/main.rs", "Cargo.toml", "build.rs", "build.sh")}
"""The files ``arena new`` copies of the Go, Java and Rust examples: the program, and the ``build.sh`` that
generates the protocol's code from ``proto/`` (Rust: cargo runs ``build.rs``, which does) and builds it offline from
Debian's packages."""
_IGNORED = {"rust": "build/\nCargo.lock\n"}
"""What a new bot's ``.gitignore`` names besides ``build/``: cargo's record of the crates it found (build.sh
writes it afresh at every build, from the system's crates)."""
CONTEST_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
"""The names a contest takes (a bot name that is not one gets no ``bot.toml``)."""

_OWN_FOLDER = ("# Its jail shows it this folder (read-only) while no other bot of its list lives here; with another\n"
               "# bot here it sees only its program and what its entry names with files = [\"data.bin\", \"lib/\"].\n")


def game_proto(game: str) -> bytes:
    """Return the text of ``game``'s .proto (its view and events): ``<game>.proto`` beside its package's
    ``__init__``. Raises :class:`ScaffoldError` for a game without one."""
    package = game_packages().get(game)
    if package is None:
        raise ScaffoldError(f"unknown game {game!r}")
    try:
        return resources.files(package).joinpath(f"{game}.proto").read_bytes()
    except (OSError, ImportError) as exc:
        raise ScaffoldError(f"game {game!r} has no {game}.proto in its package {package} ({exc})") from None


def _protos(envelope: Path, games: tuple[str, ...]) -> dict[str, bytes]:
    """Return the .proto files a JavaScript, C++ or Go bot needs for ``games``, by their paths in its folder."""
    files = {"proto/arena/v2/arena.proto": envelope.read_bytes()}
    for game in games:
        files[f"proto/arena/games/{game}/{game}.proto"] = game_proto(game)
    return files


def write_bot(folder: Path, name: str, game: str, lang: str, *, bundled: Path, proto: Path) -> list[Path]:
    """Write a new bot called ``name`` for ``game`` in ``lang`` into ``folder`` (created); return its files.

    ``bundled`` is the folder of the bundled example bots, ``proto`` the protocol's envelope ``arena.proto``
    (version 2); the games' .proto files come from their packages (:func:`game_proto`). Raises
    :class:`ScaffoldError` for a bad name or language, a game the C++ example does not play, or a folder that
    exists and is not empty.
    """
    if not NAME.match(name):
        raise ScaffoldError(f"a bot name is a letter then letters, digits, '-' or '_' (64 at most), not {name!r}")
    if lang not in LANGUAGES:
        raise ScaffoldError(f"unknown language {lang!r}; the languages are {', '.join(LANGUAGES)}")
    if folder.exists() and any(folder.iterdir()):
        raise ScaffoldError(f"{str(folder)!r} exists and is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str | bytes] = {}
    if lang == "python":
        cls = "".join(part.capitalize() for part in re.split(r"[-_]", name)) or "MyBot"
        template = game_tools(game).python
        files["bot.py"] = _PYTHON.format(name=name, title=get_game(game).title, game=game, imports=template.imports,
                                         base=template.base, cls=cls, decisions=template.methods)
    elif lang == "js":
        files["bot.js"] = (bundled / "js" / "bot.js").read_bytes()
        package = (bundled / "js" / "package.json").read_text(encoding="utf-8")
        files["package.json"] = package.replace('"arena-js-bot"', f'"{name.lower()}"', 1)
        files.update(_protos(proto, (game,)))  # bot.js loads every game's .proto it finds
    elif lang in _BUILT_BY_SCRIPT:
        for file in _BUILT_BY_SCRIPT[lang]:
            files[file] = (bundled / lang / file).read_bytes()
        # main.go, Bot.java and main.rs use the code of the games' .proto they decode; any other game is played from
        # the envelope
        files.update(_protos(proto, tuple(dict.fromkeys((*decoded_games(bundled), game)))))
        files[".gitignore"] = _IGNORED.get(lang, "build/\n")
        if lang == "rust":  # the package is the bot's (its program stays build/arena-bot)
            cargo = (bundled / "rust" / "Cargo.toml").read_text(encoding="utf-8")
            files["Cargo.toml"] = cargo.replace('name = "arena-bot"\nversion', f'name = "{name.lower()}"\nversion', 1)
    else:
        files["bot.cc"] = (bundled / "cpp" / "bot.cc").read_bytes()
        files["CMakeLists.txt"] = (bundled / "cpp" / "CMakeLists.txt").read_bytes()
        # CMakeLists.txt compiles the games bot.cc decodes; any other game is played from the envelope
        files.update(_protos(proto, tuple(dict.fromkeys((*decoded_games(bundled), game)))))
        files[".gitignore"] = "build/\n"
    files["bots.toml"] = (
        f"# {name}: made by `arena new`. Check it with: arena check bots.toml\n{_BEFORE[lang]}{_OWN_FOLDER}"
        f'[[bot]]\nname = "{name}"\ncommand = {_COMMANDS[lang]}\ncwd = "."\ngames = ["{game}"]\n')
    if CONTEST_NAME.fullmatch(name):
        lines, note = _MANIFEST[lang]
        files["bot.toml"] = (f"# {name} for a contest: arena submit . --to URL (the bot guide: Submitting your bot)\n"
                             f'{note}name = "{name}"\n{lines}games = ["{game}"]\n')
    written = []
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        written.append(path)
    return written
