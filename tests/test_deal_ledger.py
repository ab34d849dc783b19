"""The deal ledger alone (arena/core/deals.py): which process of a bot may take a seat at a deal.

Unit tests in milliseconds, for mutation testing (scripts/mutation.py deals); tests/test_deals.py checks the
same guarantee end to end with real bot processes, in minutes.
"""

from __future__ import annotations

from arena.core.deals import DealKey, DealLedger

DEAL = DealKey("cabanga", 5)


def test_a_fresh_ledger_seats_every_bot_in_its_first_process() -> None:
    ledger = DealLedger()
    assert ledger.lane("a", DEAL, []) == ("a", 0)
    assert not ledger.seen(("a", 0), DEAL)


def test_a_process_that_played_a_deal_is_passed_over_for_it_and_so_is_one_taken_at_this_match() -> None:
    ledger = DealLedger()
    ledger.played([("a", 0), ("b", 0)], DEAL)
    assert ledger.seen(("a", 0), DEAL) and ledger.seen(("b", 0), DEAL)
    assert ledger.lane("a", DEAL, []) == ("a", 1)
    assert ledger.lane("a", DEAL, [("a", 1)]) == ("a", 2)
    assert ledger.lane("a", DEAL, [("a", 1), ("a", 2)]) == ("a", 3)
    # the lowest free lane, not the next after the highest: lane 2 played the deal, lane 1 did not
    ledger.played([("a", 2)], DEAL)
    assert ledger.lane("a", DEAL, []) == ("a", 1)
    assert ledger.lane("a", DEAL, [("a", 1)]) == ("a", 3)


def test_a_process_may_play_other_deals_and_other_bots_lanes_are_their_own() -> None:
    ledger = DealLedger()
    ledger.played([("a", 0)], DEAL)
    for other in (DealKey("cabanga", 6), DealKey("lama", 5)):  # another seed, or the same seed of another game
        assert not ledger.seen(("a", 0), other)
        assert ledger.lane("a", other, []) == ("a", 0)
    assert ledger.lane("b", DEAL, []) == ("b", 0)  # bot b's lane 0 has not played it
    assert ledger.lane("b", DEAL, [("a", 0)]) == ("b", 0)  # a's lane taken says nothing of b's


def test_a_process_remembers_every_deal_it_played() -> None:
    ledger = DealLedger()
    deals = [DealKey("cabanga", seed) for seed in range(3)]
    for deal in deals:
        ledger.played([("a", 0)], deal)
    assert all(ledger.seen(("a", 0), deal) for deal in deals)
    assert all(ledger.lane("a", deal, []) == ("a", 1) for deal in deals)


def test_forgetting_a_stopped_process_frees_its_lane_for_every_deal_and_only_its_lane() -> None:
    ledger = DealLedger()
    other = DealKey("cabanga", 6)
    ledger.played([("a", 0), ("a", 1), ("b", 0)], DEAL)
    ledger.played([("a", 0)], other)
    ledger.forget(("a", 0))
    assert not ledger.seen(("a", 0), DEAL) and not ledger.seen(("a", 0), other)
    assert ledger.seen(("a", 1), DEAL) and ledger.seen(("b", 0), DEAL)
    assert ledger.lane("a", DEAL, []) == ("a", 0)
    ledger.forget(("c", 0))  # a lane that never played: nothing to forget
    ledger.forget(("a", 0))
    assert ledger.lane("c", DEAL, []) == ("c", 0)


def test_a_probe_sees_its_ledgers_plays_and_keeps_its_own() -> None:
    """Planning ahead (ProcessPool.prepare) plays matches on a probe: the ledger itself learns nothing of them, and
    a probe costs nothing however much the ledger has seen (it was a deep copy, growing with every match)."""
    ledger = DealLedger()
    other = DealKey("cabanga", 99)
    ledger.played([("a", 0)], DEAL)
    probe = ledger.probe()
    assert probe.seen(("a", 0), DEAL) and probe.lane("a", DEAL, []) == ("a", 1)
    probe.played([("a", 1)], DEAL)
    probe.played([("a", 0)], other)
    assert probe.lane("a", DEAL, []) == ("a", 2) and probe.seen(("a", 0), other)
    assert not ledger.seen(("a", 1), DEAL) and not ledger.seen(("a", 0), other)
    assert ledger.lane("a", DEAL, []) == ("a", 1)
