"""The finals in a real `arena contest` (issue 34): real bot processes in the strict jail, from the deadline to an
export that `arena finals verify` checks. The logic is tried with fakes in test_finals.py; this is the one run end
to end."""

from __future__ import annotations

import datetime
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.ladder.finals import commitment
from tests.contest.harness import Contest, call, need_jail


@pytest.mark.process
def test_a_real_contest_closes_at_its_deadline_plays_its_finals_and_publishes_an_export_that_verifies(
        tmp_path: Path) -> None:
    need_jail()
    (tmp_path / "house.toml").write_text("".join(f'[[bot]]\nbundled = "cabanga-{name}"\n\n'
                                                 for name in ("easy", "tidy", "random")))
    deadline = datetime.datetime.now(datetime.UTC).replace(microsecond=0) + datetime.timedelta(seconds=12)
    config = tmp_path / "contest.toml"
    config.write_text('game = "cabanga"\nseats = 3\noptions = { rounds = 1 }\nlisten = "127.0.0.1:0"\n'
                      'baseline = "house.toml"\ndata = "data"\n'
                      f"[finals]\ndeadline = {deadline.isoformat().replace('+00:00', 'Z')}\ntop = 1\n"
                      "budget = { matches = 6 }\nhouse = true\n")
    contest = Contest(config)
    try:
        status, before = call(f"{contest.url}/api/finals")
        assert status == 200 and before["phase"] == "season"
        ends = time.monotonic() + 150
        while (found := call(f"{contest.url}/api/finals")[1])["phase"] != "finished":
            assert time.monotonic() < ends, found
            if found["phase"] == "finals":
                assert "outcome" not in found and len(found["commitment"]) == 64
            time.sleep(0.5)
        _, season = call(f"{contest.url}/api/summary")
        with urllib.request.urlopen(f"{contest.url}/api/finals/export", timeout=30) as response:
            data = response.read()
        _, again = call(f"{contest.url}/api/summary")
        assert again == season  # the season's board stays as it was
    finally:
        contest.kill()
    assert commitment(int(found["outcome"]["seed"])) == found["commitment"]
    assert found["outcome"]["matches"] == 6 and len(found["finalists"]) == 3
    export = tmp_path / "finals-export.json.gz"
    export.write_bytes(data)
    ran = CliRunner().invoke(main, ["finals", "verify", str(export)])
    assert ran.exit_code == 0, ran.output
    assert (tmp_path / "data" / "finals-export.json.gz").read_bytes() == export.read_bytes()
