"""The contest's configuration file: defaults, relative paths, and a clear error for each mistake."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from arena.contest.commands import EXAMPLE
from arena.contest.config import BUILD_DISK_MB, DEFAULT_RUNTIMES, ConfigError, load_config
from arena.contest.web import contest_server_options

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


def test_a_contest_has_a_secret_seed_unless_a_public_one_is_asked_for(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, 'game = "cabanga"\n')).seed is None  # drawn when the contest is made
    assert load_config(write(tmp_path, 'game = "cabanga"\nseed = 7\npublic_seed = true\n')).seed == 7
    assert "seed" not in [line.split("=")[0].strip() for line in EXAMPLE.splitlines()]


def test_behind_a_proxy_only_its_addresses_are_believed(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'game = "cabanga"\n'))
    assert config.proxies == ("127.0.0.1", "::1")
    assert contest_server_options(config)["proxy_headers"] is False  # the socket's address, whatever is claimed
    config = load_config(write(tmp_path, 'game = "cabanga"\nbehind_proxy = true\nproxies = ["10.0.0.0/8"]\n'))
    assert config.behind_proxy and config.proxies == ("10.0.0.0/8",)
    options = contest_server_options(config)
    assert options["proxy_headers"] is True and options["forwarded_allow_ips"] == ["10.0.0.0/8"]


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
    ('game = "cabanga"\nseed = true\npublic_seed = true', "seed must be a whole number"),
    ('game = "cabanga"\nseed = 1', "would let every submitted bot compute every deal"),
    ('game = "cabanga"\npublic_seed = true', "public_seed = true names no seed"),
    ('game = "cabanga"\nproxies = ["proxy.example.org"]', "proxies must list the proxies' IP addresses"),
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
