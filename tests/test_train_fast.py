"""The batch's fast path (arena.games.encoding.StateEncoder): observations and masks made from the match state must
be, byte for byte, what the game's encoder makes from the seat's view (what the PettingZoo environments expose),
at every decision of random matches of every built-in game and seat count, and the fast batch must step exactly as
the views batch does. Only that equality keeps the fast path to the seat's view (G2)."""

from __future__ import annotations

import gc
import os
import random
from typing import Any

import numpy as np
import pytest

from arena.games import get_game
from arena.games.base import MatchState, Pick, random_decision
from arena.games.cabanga.encoding import CabangaStateEncoder
from arena.games.encoding import Encoder, StateEncoder, SubsetStep, encoding_of

try:
    import gymnasium  # noqa: F401
except ImportError as exc:  # the training extra: CI installs it, so there a missing one fails
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the training extra is not installed ({exc.name}): pip install -e '.[train]'", allow_module_level=True)

from arena.train import SelfPlay

BUILTIN = [("cabanga", s) for s in range(3, 7)] + [("lama", s) for s in range(2, 7)] + \
          [("goofspiel", s) for s in range(2, 7)]
VARIANTS = [("cabanga", 4, {"rounds": 1, "target": 40}), ("lama", 3, {"climb": "any", "target": 20}),
            ("goofspiel", 3, {"cards": 5, "ties": "carry", "rounds": 3}), ("goofspiel", 2, {"cards": 3})]


def encoders(game: str, seats: int, options: dict[str, Any]) -> tuple[Any, Encoder, StateEncoder]:
    rules = get_game(game)
    checked = rules.options(options)
    encoder = encoding_of(game).encoder(checked, seats)
    fast = encoding_of(game).state_encoder(encoder)
    assert fast is not None, f"{game} has no fast path"
    return checked, encoder, fast


def check_state(state: MatchState, encoder: Encoder, fast: StateEncoder, rng: random.Random) -> int:
    """Compare the fast rows of every prompted seat of ``state`` with the encoder's observation of its view (every
    candidate of a subset prompt, with a random set taken before it); return the observations compared."""
    asked = [p for p in state.pending() if p.choices]
    rows = fast.rows(state, asked)
    assert len(rows) == len(asked)
    compared = 0
    for prompt, row in zip(asked, rows, strict=True):
        view = state.view(prompt.seat)
        steps: list[SubsetStep | None] = [None]
        if prompt.pick is Pick.SUBSET:
            steps = []
            for k, candidate in enumerate(prompt.choices):
                steps.append(SubsetStep(candidate, tuple(c for c in prompt.choices[:k] if rng.random() < 0.5)))
        for subset in steps:
            observation, mask = fast.observation(row, prompt.seat, subset)
            expected = encoder.observation(view, subset)
            assert observation.tobytes() == expected.tobytes(), (
                f"seat {prompt.seat}, {subset}:\nfast:\n{encoder.text(observation)}\nviews:\n{encoder.text(expected)}")
            assert np.flatnonzero(mask).tolist() == sorted(encoder.legal(prompt)), prompt
            compared += 1
    return compared


def play(state: MatchState, rng: random.Random) -> None:
    state.apply({p.seat: random_decision(p, rng) for p in state.pending()})


@pytest.mark.parametrize(("game", "seats", "options"), [(g, s, {}) for g, s in BUILTIN] + VARIANTS)
def test_the_state_encoder_makes_the_encoders_observation_of_the_view_at_every_decision(
        game: str, seats: int, options: dict[str, Any]) -> None:
    """Every decision of whole random matches (every seat of a simultaneous step, every candidate of a throw)."""
    checked, encoder, fast = encoders(game, seats, options)
    rules = get_game(game)
    rng = random.Random(f"fast/{game}/{seats}/{sorted(options.items())}")
    compared = matches = 0
    while compared < 400 or matches < 2:
        state = rules.new_match(seats, rng.getrandbits(32), checked)
        matches += 1
        while not state.over:
            compared += check_state(state, encoder, fast, rng)
            play(state, rng)
    assert compared >= 400


@pytest.mark.parametrize("game", ["cabanga", "lama", "goofspiel"])
def test_the_state_encoder_agrees_beyond_small_numbers_and_clips_as_the_encoder_does(game: str) -> None:
    """Totals far past the target (and past 255, where the batch reads values another way) are scaled and clipped
    as the encoder scales them."""
    checked, encoder, fast = encoders(game, 3, {})
    rng = random.Random(game)
    state = get_game(game).new_match(3, 7, checked)
    for _ in range(5):
        play(state, rng)
    rows = []
    for totals in ([0, 300, 70000], [1, 17, 255], [256, 2, 5]):
        state._totals[:] = totals  # type: ignore[attr-defined]
        assert state.totals == tuple(totals)
        assert check_state(state, encoder, fast, rng) >= 1
        asked = [p for p in state.pending() if p.choices][:1]
        rows.append((fast.rows(state, asked)[0], asked[0].seat))
    # a batch whose rows mix small values (bytes) and large ones (a list) writes each as it writes it alone
    observations = np.zeros((3, fast.size), dtype=np.float32)
    masks = np.zeros((3, fast.actions), dtype=np.bool_)
    fast.write([r[0][0] for r in rows], [r[0][1] for r in rows], np.array([r[1] for r in rows]), observations, masks)
    assert [type(r[0][1]) for r in rows] == [list, bytes, list]
    for i, (row, seat) in enumerate(rows):
        alone, mask = fast.observation(row, seat)
        assert observations[i].tobytes() == alone.tobytes() and masks[i].tobytes() == mask.tobytes()


def follow(fast: StateEncoder, game: str, seats: int, options: dict[str, Any], decisions: int,
           seed: str) -> tuple[str | None, dict[str, int]]:
    """Play random matches for ``decisions`` decisions, following each with :meth:`StateEncoder.rows_after` (one
    memo a match, the decisions applied since the last call) beside :meth:`StateEncoder.rows`; return the first
    disagreement (or ``None``) and how often each kind of Cabanga! step was followed."""
    rules = get_game(game)
    checked = rules.options(options)
    rng = random.Random(seed)
    kinds = dict.fromkeys(["play", "play then draw", "throw", "throw that threw", "new round", "new match"], 0)
    done = 0
    while done < decisions:
        state = rules.new_match(seats, rng.getrandbits(32), checked)
        memo = fast.memo()
        applied: dict[int, Any] | None = None
        kind = "new match"
        while not state.over:
            asked = [p for p in state.pending() if p.choices]
            where = f"after a {kind}, decision {done}, seats {[p.seat for p in asked]}"
            try:
                rows = fast.rows_after(state, asked, memo, applied)
            except Exception as exc:  # a memo that lost track of the state may fail anywhere
                return f"{where}: {exc!r}", kinds
            expected = fast.rows(state, asked)
            kinds[kind] += 1
            if [(w, bytes(v) if isinstance(v, bytearray) else v) for w, v in rows] != expected:
                return where, kinds
            done += len(asked)
            hands = getattr(state, "_hands", None)
            sizes = [len(h) for h in hands] if hands is not None else []
            step = asked[0].kind
            applied = {p.seat: random_decision(p, rng) for p in state.pending()}
            state.apply(applied)
            if state.over:
                break
            if hands is not None and getattr(state, "_hands", None) is not hands:
                kind = "new round"
            elif step == "play":
                seat = asked[0].seat
                kind = "play" if len(state._hands[seat]) == sizes[seat] - 1 else "play then draw"  # type: ignore[attr-defined]
            else:
                kind = "throw that threw" if any(applied.values()) else "throw"
    return None, kinds


@pytest.mark.parametrize(("game", "seats", "options"), [("cabanga", s, {}) for s in range(3, 7)]
                         + [("cabanga", 4, {"rounds": 1, "target": 40}), ("cabanga", 3, {"target": 400})])
def test_c9_c10_c12_c13_c14_a_following_state_encoder_makes_the_rows_of_rows_after_every_kind_of_step(
        game: str, seats: int, options: dict[str, Any]) -> None:
    """rows_after (the batch's way: the memo updated from the step just applied) equals rows (checked against the
    views above, and so to the seat's view, G2) at every decision: after a play (C9: the previous colour; C10: a
    throw opened or not), a play whose seat drew (C13), a throw that threw (C12) or not, a new round (C14), and
    totals past 255 (the memo's numbers kept as a list)."""
    _, _, fast = encoders(game, seats, options)
    assert fast.follows
    problem, kinds = follow(fast, game, seats, options, 3000, f"follow/{game}/{seats}/{sorted(options.items())}")
    assert problem is None, problem
    rounds = "rounds" not in options
    assert all(n >= 1 for kind, n in kinds.items() if rounds or kind != "new round"), kinds
    assert kinds["play"] >= 100 and kinds["throw that threw"] >= 50, kinds


class _StaleTops(CabangaStateEncoder):
    def _played(self, state: Any, memo: Any, play: Any) -> None:
        tops = memo.tops
        super()._played(state, memo, play)
        memo.tops = tops  # planted: the pile's new top forgotten


class _NoDraws(CabangaStateEncoder):
    def _drawn(self, state: Any, memo: Any, seat: int) -> None:
        pass  # planted: a draw not followed


class _StaleThrowers(CabangaStateEncoder):
    def _thrown(self, state: Any, memo: Any, decisions: Any) -> None:
        super()._thrown(state, memo, {})  # planted: the seats that threw keep their old hands


class _StaleRounds(CabangaStateEncoder):
    def rows_after(self, state: Any, prompts: Any, memo: Any, decisions: Any) -> Any:
        if memo.hands is not None:
            memo.hands = state._hands  # planted: a new round taken for the same one
        return super().rows_after(state, prompts, memo, decisions)


@pytest.mark.parametrize("planted", [_StaleTops, _NoDraws, _StaleThrowers, _StaleRounds])
def test_a_mistake_planted_in_one_kind_of_update_is_caught(planted: type[CabangaStateEncoder]) -> None:
    """The check above fails when any one kind of update is wrong: a play's top, a draw, a throw's hands, a new
    round."""
    encoder = encoding_of("cabanga").encoder(get_game("cabanga").options(), 4)
    problem, _ = follow(planted(encoder), "cabanga", 4, {}, 3000, "planted")
    assert problem is not None, f"{planted.__name__}'s mistake went unnoticed"


def test_a_state_encoder_that_does_not_follow_answers_rows_after_with_rows() -> None:
    """L.A.M.A. and Goofspiel keep no memo: rows_after is rows (the batch asks rows directly)."""
    for game in ("lama", "goofspiel"):
        _, _, fast = encoders(game, 3, {})
        assert not fast.follows and fast.memo() is None
        state = get_game(game).new_match(3, 1, get_game(game).options())
        asked = [p for p in state.pending() if p.choices]
        assert fast.rows_after(state, asked, None, None) == fast.rows(state, asked)


@pytest.mark.parametrize(("game", "seats", "options"), [("cabanga", 3, {"rounds": 1}), ("cabanga", 6, {"rounds": 1}),
                                                        ("lama", 2, {"rounds": 2}), ("lama", 5, {"rounds": 1}),
                                                        ("goofspiel", 4, {"cards": 6}), ("goofspiel", 2, {})])
def test_the_fast_batch_steps_exactly_as_the_views_batch(game: str, seats: int, options: dict[str, Any]) -> None:
    """The same seed and actions (a legal one mostly, any index of the action space at times: the flagged default),
    the same batches byte for byte: observations, masks, deciding seats, rewards, ends and flags."""
    fast = SelfPlay(game, seats, 6, options, seed=5)
    slow = SelfPlay(game, seats, 6, options, seed=5, views=True)
    assert fast.fast and not slow.fast
    a, b = fast.reset(), slow.reset()
    rng = np.random.default_rng(1)
    ended = flagged = 0
    for _ in range(1500):
        for name in ("observations", "masks", "seats", "done", "rewards", "illegal"):
            assert getattr(a, name).tobytes() == getattr(b, name).tobytes(), name
        assert fast.decisions == slow.decisions
        noise = rng.random(a.masks.shape) + a.masks
        actions = noise.argmax(axis=1)
        wild = rng.random(len(actions)) < 0.1
        actions[wild] = rng.integers(0, fast.actions, int(wild.sum()))
        a, b = fast.step(actions), slow.step(actions.copy())
        ended += int(a.done.sum())
        flagged += int(a.illegal.sum())
    assert ended >= 6 and flagged >= 50 and fast.decisions > 1500


@pytest.mark.parametrize(("game", "seats"), [("cabanga", 3), ("cabanga", 5), ("lama", 2), ("lama", 4),
                                             ("goofspiel", 3)])
def test_g2_the_fast_rows_stay_byte_for_byte_when_another_seats_hidden_cards_change(game: str, seats: int) -> None:
    """The hiding test of tests/test_train.py, on the rows the state encoder reads from the state itself: another
    seat's hand swapped against a hidden pile (or the prizes face down reordered), the deciding seat's row is the
    same. The changes are real: the zones are not what they were."""
    from test_train import perturb

    checked_options, _, fast = encoders(game, seats, {})
    rules = get_game(game)
    rng = random.Random(f"fast-hide/{game}/{seats}")
    checked = matches = 0
    while checked < 12 and matches < 40:
        state = rules.new_match(seats, rng.getrandbits(32), checked_options)
        matches += 1
        while not state.over:
            asked = [p for p in state.pending() if p.choices]
            seat = asked[0].seat
            before = fast.rows(state, asked)[0]
            zones = state.zones()
            if rng.random() < 0.3 and perturb(state, seat, rng):
                assert state.zones() != zones
                assert fast.rows(state, asked)[0] == before, f"seat {seat}'s row tells another seat's hidden cards"
                checked += 1
            play(state, rng)
    assert checked >= 10


def test_a_step_pauses_the_collector_and_then_collects_only_the_youngest_generation_leaving_its_settings() -> None:
    """The batch keeps the cycle collector off during a step and then, every ``collect_every`` steps (4 by default),
    runs one collection of generation 0 instead of waiting for the thresholds; it changes no setting of the
    collector, and a collector the caller disabled stays off, with no collection."""
    play = SelfPlay("cabanga", 4, 4, seed=2)
    batch = play.reset()
    assert play.collect_every == 4
    seen: list[tuple[str, int, bool]] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        seen.append((phase, info["generation"], gc.isenabled()))

    threshold = gc.get_threshold()
    was = gc.isenabled()
    gc.set_threshold(10**9, *threshold[1:])  # no collection by the thresholds: every one seen is the batch's
    gc.enable()
    gc.callbacks.append(watch)
    try:
        rng = np.random.default_rng(0)
        young = []
        for _ in range(8):
            seen.clear()
            batch = play.step((rng.random(batch.masks.shape) + batch.masks).argmax(axis=1))
            young.append(seen == [("start", 0, True), ("stop", 0, True)])
        assert young == [False, False, False, True] * 2
        assert gc.isenabled() and gc.get_threshold() == (10**9, *threshold[1:])
        play.collect_every = 1
        seen.clear()
        for _ in range(5):
            batch = play.step((rng.random(batch.masks.shape) + batch.masks).argmax(axis=1))
        assert seen == [("start", 0, True), ("stop", 0, True)] * 5
        seen.clear()
        gc.disable()
        for _ in range(5):
            batch = play.step((rng.random(batch.masks.shape) + batch.masks).argmax(axis=1))
        assert not gc.isenabled() and seen == []
    finally:
        gc.callbacks.remove(watch)
        gc.set_threshold(*threshold)
        if was:
            gc.enable()
        else:
            gc.disable()
