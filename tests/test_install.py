"""A plain `pip install .` (not editable) into a fresh virtual environment ships everything the default
`arena ladder` needs: the bundled bots and their lists (issue 11), and the bots' supervisor, compiled by the
install (issue 37).

The environment sees the packages of the environment running the tests (grpcio, protobuf, pip, setuptools),
after its own, so that nothing is downloaded (it also passes in a fresh venv of a bare interpreter); the test
checks that arena and the bots it runs come from the new environment, not from this source tree.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent


def test_a_plain_install_runs_the_default_ladder(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "*.db*", "node_modules", "__pycache__", "*.egg-info", "build", ".*_cache"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    # the new environment sees the packages of the one running the tests (a venv, or the system's), listed
    # after its own: --system-site-packages would give the base interpreter's, which in a fresh venv lack them
    own = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    outer = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    (Path(own) / "outer-environment.pth").write_text("\n".join(sorted(outer)) + "\n")
    # no other supervisor named, and a cache folder of its own: the one the install built must be the one that runs
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ARENA_SUPERVISOR")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                              "--disable-pip-version-check", str(source)],
                             capture_output=True, text=True, timeout=300, env=env)
    assert install.returncode == 0, install.stdout + install.stderr
    shutil.rmtree(source)  # nothing may come from the source tree any more
    work = tmp_path / "elsewhere"
    work.mkdir()
    # the games' bundled bot lists (in their folders, arena/games/GAME/bots/) and the other languages' examples,
    # and the supervisor the install compiled, which is the one that runs
    code = ("import arena, bots; from arena.games import bot_list, game_names; from arena.launch import native\n"
            "supervisor = native.default_supervisor()\n"
            "assert supervisor.program == str(native.PACKAGED) and native.SOURCE.is_file(), supervisor\n"
            "print(arena.__file__, bots.__file__, supervisor.program, *(bot_list(game) for game in game_names()))")
    where = subprocess.run([str(python), "-c", code], cwd=work, capture_output=True, text=True, timeout=60, env=env)
    assert where.returncode == 0, where.stderr
    assert len(where.stdout.split()) == 6 and all(line.startswith(str(venv)) for line in where.stdout.split()), \
        where.stdout
    # limits: a jail shows a bot its interpreter's own folders, and the packages this environment borrows
    # (grpcio...) lie outside them; what is tested here is that the bots and their lists are installed
    ladder = subprocess.run([str(venv / "bin" / "arena"), "ladder", "--matches", "4", "--tables", "1",
                             "--sandbox", "limits"], cwd=work,
                            capture_output=True, text=True, timeout=300, env=env)
    assert ladder.returncode == 0, ladder.stdout + ladder.stderr
    assert "cabanga-easy" in ladder.stdout and "4 matches played" in ladder.stderr
    assert (work / "arena.db").is_file()
    assert not (tmp_path / "cache" / "arena").exists()  # nothing was built at first use
    sandbox = subprocess.run([str(venv / "bin" / "arena"), "sandbox", "--sandbox", "limits"], cwd=work,
                             capture_output=True, text=True, timeout=60, env=env)
    assert sandbox.returncode == 0 and sandbox.stdout.startswith("bot sandbox: limits"), sandbox
    # a built-in game's recorded match ships with it: the checks re-run it
    checked = subprocess.run([str(venv / "bin" / "arena"), "games", "--check", "goofspiel"], cwd=work,
                             capture_output=True, text=True, timeout=120, env=env)
    assert checked.returncode == 0 and "ok       golden: golden.json: " in checked.stdout, checked
    # arena new copies the bundled examples and the .proto: shipped too
    for lang in ("js", "cpp", "go", "java", "rust"):
        made = subprocess.run([str(venv / "bin" / "arena"), "new", f"my-{lang}", "--lang", lang], cwd=work,
                              capture_output=True, text=True, timeout=60, env=env)
        assert made.returncode == 0, made.stdout + made.stderr
    assert (work / "my-js" / "proto" / "arena" / "v2" / "arena.proto").is_file()
    assert (work / "my-js" / "bot.js").is_file()
    assert (work / "my-cpp" / "bot.cc").is_file() and (work / "my-cpp" / "CMakeLists.txt").is_file()
    assert (work / "my-go" / "main.go").is_file() and (work / "my-go" / "build.sh").is_file()
    assert (work / "my-java" / "Bot.java").is_file() and (work / "my-java" / "build.sh").is_file()
    rust = work / "my-rust"
    assert all((rust / name).is_file() for name in ("src/main.rs", "Cargo.toml", "build.rs", "build.sh"))
    assert 'name = "my-rust"' in (rust / "Cargo.toml").read_text()
