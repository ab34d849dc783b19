"""A ladder in which a hostile bot sits: run as an operator would (`arena ladder`), it completes every match of
its budget, charges the faults to the hostile bot only, and ranks it last.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from arena.store import Store

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).resolve().parent / "hostile.py"
MATCHES = 8


def test_a_hostile_bot_in_a_ladder_ends_last_and_the_other_matches_all_complete(tmp_path: Path) -> None:
    bots = tmp_path / "bots.toml"
    entries = [("greedy", '"-m", "bots.cabanga_greedy"'), ("tidy", '"-m", "bots.cabanga_tidy"'),
               ("random", '"-m", "bots.cabanga_random"'), ("hostile", f'"{HOSTILE}", "silent"')]
    bots.write_text("".join(f'[[bot]]\nname = "{name}"\ncommand = ["{{python}}", {args}]\ncwd = "{ROOT}"\n\n'
                            for name, args in entries))
    db = tmp_path / "ladder.db"
    result = subprocess.run(
        [sys.executable, "-c", "from arena.cli import run; run()", "ladder", "--bots", str(bots), "--seats", "3",
         "--matches", str(MATCHES), "--tables", "1", "--seed", "11", "--db", str(db), "-o", "rounds=1",
         "--deadline", "0.2", "--max-faults", "2"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    store = Store(db, readonly=True)
    try:
        assert store.match_count() == MATCHES
        rows = store.leaderboard()
        faults = store.db.execute(
            "SELECT DISTINCT b.name, f.kind FROM faults f JOIN seats s ON s.match_id = f.match_id "
            "AND s.seat = f.seat JOIN bots b ON b.id = s.bot_id").fetchall()
        benched = store.db.execute(
            "SELECT count(*), sum(s.benched) FROM seats s JOIN bots b ON b.id = s.bot_id "
            "WHERE b.name = 'hostile'").fetchone()
    finally:
        store.close()
    assert rows[-1].bot == "hostile", [(r.bot, r.conservative) for r in rows]
    assert [r.faults for r in rows[:-1]] == [0, 0, 0]
    assert faults == [("hostile", "timeout")]
    played, times_benched = benched
    assert played >= 3 and times_benched == played  # benched in every match it sat in
