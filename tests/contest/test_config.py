"""The contest's configuration file: defaults, relative paths, and a clear error for each mistake."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from arena.contest.commands import EXAMPLE
from arena.contest.config import BUILD_DISK_MB, DEFAULT_RUNTIMES, ConfigError, load_config

MIB = 1024 * 1024


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "contest.toml"
    path.write_text(text)
    return path


def test_a_config_of_only_a_game_has_safe_defaults_and_paths_beside_it(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'game = "cabanga"\n'))
    assert config.game.name == "cabanga" and config.seats == config.game.min_seats
    assert (config.host, config.port) == ("127.0.0.1", 8080)  # loopback unless told otherwise
    assert not config.open_registration and not config.behind_proxy
    assert config.data == tmp_path / "contest-data" and config.contest_db == tmp_path / "contest-data/contest.db"
    assert set(config.runtimes) == set(DEFAULT_RUNTIMES) and config.baseline is None


def test_the_example_reads_as_it_says(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, EXAMPLE))
    assert (config.game.name, config.seats, config.options.to_json()["rounds"]) == ("cabanga", 4, 2)
    assert config.submissions.archive.archive_bytes == 8 * MIB and config.submissions.per_day == 10
    assert config.runtimes["python"].program == ("{python}",) and config.runtimes["native"].program == ()
    # a build may use more than the bot it builds; what it does not name is the bots' own
    assert (config.limits.memory_mb, config.build_limits.memory_mb,
            config.build_limits.cpu_seconds) == (1024, 2048, 600)
    assert config.build_limits.processes == config.limits.processes


def test_build_limits_default_to_the_bots_limits_with_room_for_a_compiler(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'game = "cabanga"\n[limits]\nmemory_mb = 300\n'))
    assert config.build_limits == dataclasses.replace(config.limits, disk_mb=BUILD_DISK_MB)
    assert config.limits.memory_mb == 300 and config.limits.disk_mb < BUILD_DISK_MB
    config = load_config(write(tmp_path, 'game = "cabanga"\n[limits]\ndisk_mb = 512\n'
                                         '[build_limits]\ncpu_seconds = 9\n'))
    assert (config.build_limits.disk_mb, config.build_limits.cpu_seconds) == (512, 9)
    config = load_config(write(tmp_path, 'game = "cabanga"\n[build_limits]\ndisk_mb = 32\n'))
    assert config.build_limits.disk_mb == 32  # what the operator says


def test_declared_runtimes_are_the_only_ones(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'game = "lama"\n[runtimes.node]\nprogram = ["node"]\n'
                                         '[runtimes.ml]\nprogram = ["/srv/ml/bin/python"]\nshow = ["tools"]\n'))
    assert set(config.runtimes) == {"node", "ml"}
    assert config.runtimes["ml"].show == (tmp_path / "tools",)
    assert "is not on this machine" in config.runtimes["ml"].missing()


@pytest.mark.parametrize(("text", "error"), [
    ("", "a contest names its game"),
    ('game = "chess"', "chess"),
    ('game = "cabanga"\nseats = 9', "3 to 6 seats, not 9"),
    ('game = "cabanga"\nsteats = 4', "unknown key 'steats'"),
    ('game = "cabanga"\nlisten = "8080"', "listen must be HOST:PORT"),
    ('game = "cabanga"\nseed = true', "seed must be a whole number"),
    ('game = "cabanga"\ndeadline = 0', "deadline must be positive"),
    ('game = "cabanga"\n[limits]\nmemory = 1', "unknown limit 'memory'"),
    ('game = "cabanga"\n[build_limits]\nmemory = 1', "build_limits: unknown limit 'memory'"),
    ('game = "cabanga"\n[submissions]\nper_week = 1', "submissions: unknown key 'per_week'"),
    ('game = "cabanga"\n[runtimes.python]\nprogram = "python3"', "program must be a list"),
    ('game = "cabanga"\noptions = { rounds = 0 }', "rounds"),
    ("game = ", "is not a TOML file"),
])
def test_each_mistake_is_named(tmp_path: Path, text: str, error: str) -> None:
    with pytest.raises(ConfigError, match=r"contest\.toml") as caught:
        load_config(write(tmp_path, text + "\n"))
    assert error in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the contest configuration"):
        load_config(tmp_path / "none.toml")
