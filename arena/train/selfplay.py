"""Self-play in a batch: N matches stepped together in-process, their observations as one array.

Every row of a batch is one match's current turn (as an AEC environment would select it): the seat to decide,
its observation and its mask. :meth:`SelfPlay.step` takes one action per row, answers each match's turn and
returns the next batch; a match that ended in that step reports its rewards in its row and is dealt again at once,
so every row always has a turn. One policy plays every seat (or the caller picks, row by row, by ``seats``).

Numpy only (no PettingZoo, no Gymnasium): the fast path for training (``python benchmarks/train.py`` prints its
rate next to the rules engine's). Observations, masks and rewards are those of the PettingZoo environments
(:mod:`arena.train.aec`).

Two ways to the same batches. A game whose encoding has a fast path (a
:class:`arena.games.encoding.StateEncoder`: Cabanga!, L.A.M.A., Goofspiel) is encoded straight from its match
states, a step's seats at once, as integers that the whole batch expands with a few numpy operations; any other
game, and any with ``views=True``, through each seat's view and the game's :class:`arena.games.encoding.Encoder`,
one :class:`arena.train.table.Table` per match. Both draw the same deals, ask the same turns in the same order and
make the same bytes (``tests/test_train_fast.py`` compares them).
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from arena.games.base import Decision, Game, MatchState, Pick, Prompt
from arena.games.encoding import Encoder, Row, StateEncoder, Values, encoding_of
from arena.train.spaces import setup
from arena.train.table import ActionError, Table, TrainError, check_reward, match_rewards

_T = TypeVar("_T")

COLLECT_EVERY = 4
"""A batch's steps between two collections of the youngest generation (:func:`_collector_paused`)."""


@dataclass
class Batch:
    """One turn of every match of a :class:`SelfPlay`, row by row.

    The arrays are the batch's own and are overwritten by its next step: copy what must be kept.
    """

    observations: npt.NDArray[np.float32]
    """Shape (N, observation size): each row's observation (the deciding seat's view)."""
    masks: npt.NDArray[np.bool_]
    """Shape (N, actions): each row's legal actions."""
    seats: npt.NDArray[np.int64]
    """Shape (N,): the seat deciding in each row."""
    done: npt.NDArray[np.bool_]
    """Shape (N,): the row's match ended with the previous step (its turn is a new match's first)."""
    rewards: npt.NDArray[np.float32]
    """Shape (N, seats): each seat's reward of the match that ended (zero where ``done`` is false)."""
    illegal: npt.NDArray[np.bool_]
    """Shape (N,): the previous step's action in this row was not legal; the default was applied."""


class SelfPlay:
    """``n`` matches of ``game`` at ``seats`` seats, played together by actions given row by row.

    ``options`` and ``reward`` as :class:`arena.train.aec.ArenaAEC`'s; ``seed`` seeds the deals (the same seed
    and actions, the same batches). ``views=True`` encodes every row from the seat's view even where the game has a
    fast path (the same batches, slower: the reference the fast path is checked against). Raises
    :class:`arena.games.base.GameError` for an unknown game, a seat count it refuses or bad options.
    """

    def __init__(self, game: str | Game, seats: int, n: int, options: Mapping[str, Any] | None = None, *,
                 reward: str = "pairwise", seed: int = 0, views: bool = False) -> None:
        self._game, self._options, self.encoder = setup(game, seats, options)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise TrainError(f"n must be a number of matches >= 1, got {n!r}")
        self._reward = check_reward(reward)
        self.n = n
        self.seats = seats
        encoder: Encoder = self.encoder
        self.size = encoder.size
        self.actions = len(encoder.actions)
        self._deals = random.Random(seed)
        fast = None if views else encoding_of(self._game.name).state_encoder(encoder)
        self._matches: _Matches = (_ViewMatches(self._game, self._options, seats, encoder, n) if fast is None
                                   else _StateMatches(self._game, self._options, seats, fast, n))
        self._batch = Batch(
            observations=np.zeros((n, self.size), dtype=np.float32),
            masks=np.zeros((n, self.actions), dtype=np.bool_),
            seats=np.zeros(n, dtype=np.int64),
            done=np.zeros(n, dtype=np.bool_),
            rewards=np.zeros((n, seats), dtype=np.float32),
            illegal=np.zeros(n, dtype=np.bool_),
        )
        self._started = False
        self._steps = 0
        self.collect_every = COLLECT_EVERY
        """Steps between two collections of the collector's youngest generation (see :func:`_collector_paused`)."""

    @property
    def decisions(self) -> int:
        """Return the decisions answered so far (prompts, as a referee counts them), over every match."""
        return self._matches.decisions

    @property
    def fast(self) -> bool:
        """Return whether the rows are encoded from the match states (the game's fast path), not from views."""
        return isinstance(self._matches, _StateMatches)

    def reset(self) -> Batch:
        """Deal a new match in every row and return the first batch."""
        batch = self._batch
        batch.done[:] = False
        batch.rewards[:] = 0.0
        batch.illegal[:] = False
        _collector_paused(True, self._matches.reset, self._deals, batch)
        self._started = True
        return batch

    def step(self, actions: npt.ArrayLike) -> Batch:
        """Answer every row's turn with its action (an index per row) and return the next batch.

        An action outside a row's mask is replaced by the game's default and flagged in ``illegal``; actions that
        are not N indices of the action space raise :class:`arena.train.table.ActionError` before anything is
        applied.
        """
        if not self._started:
            raise TrainError("reset() needs to be called before step")
        chosen = np.asarray(actions)
        if chosen.shape != (self.n,) or chosen.dtype.kind not in "iu":
            raise ActionError(f"actions must be {self.n} integer indices, one per row, got shape {chosen.shape} "
                              f"of {chosen.dtype}")
        indices = chosen.tolist()
        if chosen.astype(np.uint64).max() >= self.actions:  # a negative index wraps past the range too
            bad = next(a for a in indices if not 0 <= a < self.actions)
            raise ActionError(f"action {bad!r} is out of range: the action space has {self.actions} actions, "
                              f"0..{self.actions - 1}")
        batch = self._batch
        self._steps += 1
        ended = _collector_paused(self._steps % self.collect_every == 0, self._matches.step, indices, self._deals,
                                  batch)
        batch.done[:] = False
        batch.rewards[:] = 0.0
        for row, places, totals in ended:
            batch.done[row] = True
            batch.rewards[row] = match_rewards(self._game, places, totals, self._reward)
        return batch


class _Matches:
    """The matches of a batch, stepped one way or the other (:class:`_StateMatches`, :class:`_ViewMatches`)."""

    @property
    def decisions(self) -> int:
        """Return the prompts answered so far, over every match."""
        raise NotImplementedError

    def reset(self, deals: random.Random, batch: Batch) -> None:
        """Deal a new match in every row (seeds drawn from ``deals`` in row order) and write the first batch."""
        raise NotImplementedError

    def step(self, actions: list[int], deals: random.Random,
             batch: Batch) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        """Answer every row's turn (actions checked to be in range), deal a new match where one ended (a seed from
        ``deals``, in row order), write the next turns and ``batch.illegal``; return (row, places, totals) per match
        that ended."""
        raise NotImplementedError


class _Lane:
    """One match of :class:`_StateMatches`: its state, the prompts of its pending step, and the turn being asked.

    ``asked`` are the step's prompts that have choices, in seat order, with their ``rows``; prompt ``k`` is being
    answered, by ``seat``, shown as ``word`` and ``values``. A one-of-N prompt is one turn (``one``; ``solo`` when
    it is the step's only prompt, which the batch answers and applies inline); a subset
    prompt's ``candidates`` are asked one after the other (``done`` of them so far, ``taken`` those taken, ``base``
    the word without the candidate: the seat's row, the subset mask and the taken bits).
    """

    __slots__ = ("answers", "asked", "base", "candidates", "done", "k", "memo", "one", "rows", "seat", "solo",
                 "state", "taken", "values", "word")

    state: MatchState
    asked: Sequence[Prompt]
    rows: list[Row]
    answers: dict[int, Decision]
    k: int
    seat: int
    one: bool
    solo: bool
    word: int
    values: Values
    memo: Any
    candidates: Sequence[Any]
    done: int
    taken: list[Any]
    base: int


class _Bits(dict[Any, int]):
    """A subset decision's candidate -> its bits in a row (:meth:`StateEncoder.subset_flags` or
    :meth:`StateEncoder.taken_flags`), asked of the encoder once per candidate: a dict lookup where a candidate step
    would otherwise call a method. Bounded by the game's actions (candidates are actions)."""

    def __init__(self, flags: Callable[[Any], int]) -> None:
        super().__init__()
        self.flags = flags

    def __missing__(self, candidate: Any) -> int:
        bits = self[candidate] = self.flags(candidate)
        return bits


class _StateMatches(_Matches):
    """The fast path: rows made by the game's :class:`StateEncoder` from the match states, a step's seats at once.

    Written for speed (a step of the rules costs a few microseconds, and this runs beside every one): every turn
    is answered inline in :meth:`step`, and so are the common set-ups of the next one (the step's only prompt,
    one-of-N, as every L.A.M.A. turn and Cabanga! play; the next seat of a simultaneous one-of-N step, as a
    Goofspiel trick; a subset prompt's next candidate, as a Cabanga! throw); a new step is set up by
    :meth:`_begin`. An encoder that follows the matches (:attr:`StateEncoder.follows`) keeps a memo per lane and is
    told the decisions applied since it last made the lane's rows. The decisions are legal by construction (an
    action inside the row's mask, else the prompt's default), so they are applied with
    :meth:`arena.games.base.MatchState.apply_trusted`, unchecked. A step whose prompts are empty is the match's end
    (``pending()`` is empty once the match is over).
    """

    def __init__(self, game: Game, options: Any, seats: int, fast: StateEncoder, n: int) -> None:
        self.game = game
        self.options = options
        self.seats = seats
        self.fast = fast
        self.skip, self.take = fast.encoder.skip, fast.encoder.take
        self.subset_bits = _Bits(fast.subset_flags)
        self.taken_bits = _Bits(fast.taken_flags)
        self.lanes = [_Lane() for _ in range(n)]
        for lane in self.lanes:
            lane.memo = fast.memo()
        self.answered = 0

    @property
    def decisions(self) -> int:
        return self.answered

    def reset(self, deals: random.Random, batch: Batch) -> None:
        for lane in self.lanes:
            self._deal(lane, deals.getrandbits(63))
        lanes = self.lanes
        self._write([lane.word for lane in lanes], [lane.values for lane in lanes], [lane.seat for lane in lanes],
                    batch)
        batch.illegal[:] = False

    def step(self, actions: list[int], deals: random.Random,
             batch: Batch) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        fast = self.fast
        choices = fast.choices
        rows_of = fast.rows
        follows = fast.follows
        rows_after = fast.rows_after
        one = Pick.ONE
        size = fast.size
        take, skip = self.take, self.skip
        subset_bits, taken_bits = self.subset_bits, self.taken_bits
        ended: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = []
        illegal: list[int] = []
        decisions = 0
        applied: dict[int, Decision]  # the step applied in a lane
        for row, (lane, action) in enumerate(zip(self.lanes, actions, strict=True)):
            if lane.solo:  # the one prompt of its step, one-of-N: the common turn, answered and applied inline
                state = lane.state
                if lane.word >> size + action & 1:
                    applied = {lane.seat: (choices[action],)}
                else:
                    applied = {lane.seat: lane.asked[0][4]}  # the prompt's default
                    illegal.append(row)
                state.apply_trusted(applied)
                decisions += 1
                prompts = state.pending()
            elif lane.one:  # a one-of-N prompt of a step with others
                asked = lane.asked
                k = lane.k
                if lane.word >> size + action & 1:
                    lane.answers[lane.seat] = (choices[action],)
                else:
                    lane.answers[lane.seat] = asked[k][4]
                    illegal.append(row)
                k += 1
                if k < len(asked):  # the step's next seat
                    if asked[k][2] is one:  # a one-of-N too: inline
                        lane.k = k
                        lane.seat = asked[k][0]
                        lane.word, lane.values = lane.rows[k]
                    else:
                        self._ask(lane, k)
                    continue
            else:  # a subset prompt's candidate
                done = lane.done
                candidate = lane.candidates[done]
                if action == take:
                    lane.taken.append(candidate)
                    lane.base |= taken_bits[candidate]
                elif action != skip:  # neither: the default's choice, flagged
                    illegal.append(row)
                    if candidate in lane.asked[lane.k][4]:  # the default keeps what it takes
                        lane.taken.append(candidate)
                        lane.base |= taken_bits[candidate]
                done += 1
                if done < len(lane.candidates):  # the next candidate
                    lane.done = done
                    lane.word = lane.base | subset_bits[lane.candidates[done]]
                    continue
                lane.answers[lane.seat] = tuple(lane.taken)
                k = lane.k + 1
                if k < len(lane.asked):  # the step's next seat
                    self._ask(lane, k)
                    continue
            if not lane.solo:  # the step's last seat answered: the step applied
                state = lane.state
                applied = lane.answers
                decisions += len(applied)
                state.apply_trusted(applied)
                prompts = state.pending()
                if lane.one and len(prompts) > 1 and prompts[0][2] is one and all(map(_choices, prompts)):
                    # another simultaneous step, its first seat one-of-N (the next Goofspiel trick): set up inline
                    lane.answers = {}
                    lane.asked = prompts
                    rows = lane.rows = (rows_after(state, prompts, lane.memo, applied) if follows
                                        else rows_of(state, prompts))
                    lane.k = 0
                    lane.seat = prompts[0][0]
                    lane.word, lane.values = rows[0]
                    continue
            # the match's next step, or its end
            if len(prompts) == 1 and prompts[0][2] is one:  # a step of one one-of-N turn (a play): set up inline
                lane.asked = prompts
                (lane.word, lane.values), = (rows_after(state, prompts, lane.memo, applied) if follows
                                             else rows_of(state, prompts))
                lane.seat = prompts[0][0]
                lane.one = lane.solo = True
            elif prompts:
                self._begin(lane, prompts, applied)
            else:
                ended.append((row, *self._result(lane)))
                self._deal(lane, deals.getrandbits(63))
        self.answered += decisions
        lanes = self.lanes
        self._write(list(map(_word, lanes)), list(map(_values, lanes)), list(map(_seat, lanes)), batch)
        flags = batch.illegal
        flags[:] = False
        if illegal:
            flags[illegal] = True
        return ended

    def _write(self, words: list[int], values: list[Values], seats: list[int], batch: Batch) -> None:
        batch.seats[:] = seats
        self.fast.write(words, values, batch.seats, batch.observations, batch.masks)

    def _deal(self, lane: _Lane, seed: int) -> None:
        lane.state = state = self.game.new_match(self.seats, seed, self.options)
        self._begin(lane, state.pending(), None)

    def _begin(self, lane: _Lane, prompts: Sequence[Prompt], applied: Mapping[int, Decision] | None) -> None:
        """Set up the turns of the step whose ``prompts`` are pending (a subset prompt without candidates is
        answered at once) and ask the first. ``applied``: the step applied since the lane's rows were last made
        (``None`` for a new match), for an encoder that follows the match."""
        state = lane.state
        lane.answers = {}
        if not all(map(_choices, prompts)):
            while True:
                asked = tuple(p for p in prompts if p.choices)
                lane.answers = {p.seat: () for p in prompts if not p.choices}
                if asked:
                    break
                self.answered += len(prompts)
                state.apply_trusted(lane.answers)
                applied = None  # more than one step since the rows were made
                prompts = state.pending()
            prompts = asked
        lane.asked = prompts
        fast = self.fast
        lane.rows = fast.rows_after(state, prompts, lane.memo, applied) if fast.follows else fast.rows(state, prompts)
        self._ask(lane, 0)

    def _ask(self, lane: _Lane, k: int) -> None:
        """Ask the step's prompt ``k`` (its first candidate, for a subset prompt)."""
        prompt = lane.asked[k]
        lane.k = k
        lane.seat = prompt[0]
        word, lane.values = lane.rows[k]
        if prompt[2] is Pick.ONE:
            lane.one = True
            lane.solo = len(lane.asked) == 1 and not lane.answers
            lane.word = word
            return
        lane.one = lane.solo = False
        lane.candidates = prompt[3]
        lane.done = 0
        lane.taken = []
        lane.base = word | self.fast.subset_mask
        lane.word = lane.base | self.subset_bits[prompt[3][0]]

    def _result(self, lane: _Lane) -> tuple[tuple[int, ...], tuple[int, ...]]:
        result = lane.state.result
        assert result is not None, "a match with no prompt pending must be over"
        return result.places, result.totals


_choices = itemgetter(3)  # a prompt's choices
_word = attrgetter("word")
_values = attrgetter("values")
_seat = attrgetter("seat")


class _ViewMatches(_Matches):
    """The views path: one :class:`Table` per match, each row encoded from the deciding seat's view."""

    def __init__(self, game: Game, options: Any, seats: int, encoder: Encoder, n: int) -> None:
        self.n = n
        self.size = encoder.size
        self.actions = len(encoder.actions)
        self.tables = [Table(game, options, seats, encoder) for _ in range(n)]

    @property
    def decisions(self) -> int:
        return sum(table.decisions for table in self.tables)

    def reset(self, deals: random.Random, batch: Batch) -> None:
        for table in self.tables:
            table.start(deals.getrandbits(63))
        batch.illegal[:] = False
        self._fill(batch)

    def step(self, actions: list[int], deals: random.Random,
             batch: Batch) -> list[tuple[int, tuple[int, ...], tuple[int, ...]]]:
        seats = batch.seats.tolist()
        illegal = batch.illegal
        ended = []
        for i, (table, action) in enumerate(zip(self.tables, actions, strict=True)):
            illegal[i] = table.answer_index(seats[i], action)
            if table.over:
                ended.append((i, *table.result()))
                table.start(deals.getrandbits(63))
        self._fill(batch)
        return ended

    def _fill(self, batch: Batch) -> None:
        """Write every row's observation, mask and deciding seat."""
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        legal: list[int] = []
        seats: list[int] = []
        ends = []  # per row: where its entries of ones, at and legal end
        for table in self.tables:
            seats.append(table.next_turn(ones, at, values, legal))
            ends.append((len(ones), len(at), len(legal)))
        # each row's positions are the row's own: shift them to the row's place in the flat arrays
        counts = np.diff(np.array([(0, 0, 0), *ends]), axis=0)
        rows = np.arange(self.n)
        observations = batch.observations.reshape(-1)
        observations[:] = 0.0
        observations[np.repeat(rows * self.size, counts[:, 0]) + ones] = 1.0
        observations[np.repeat(rows * self.size, counts[:, 1]) + at] = values
        masks = batch.masks.reshape(-1)
        masks[:] = False
        masks[np.repeat(rows * self.actions, counts[:, 2]) + legal] = True
        batch.seats[:] = seats


def _collector_paused(collect: bool, step: Callable[..., _T], *args: Any) -> _T:
    """Return ``step(*args)`` (one step of the batch) with Python's cycle collector paused, then, with ``collect``,
    collect the youngest generation.

    A step makes thousands of small objects (prompts, events, rows) while every match's history stays alive, so the
    collector would run several times a step and walk all of it: measured, that cost as much as the rules. Nothing a
    step makes forms a cycle (reference counts free it all). After every :data:`COLLECT_EVERY`-th step, one
    collection of the youngest generation walks what the steps left (a few thousand objects, mostly still in the
    cache): left to its thresholds instead, the collector runs rarely, since a match dealt again frees thousands of
    objects and so holds its count down, and then walks tens of thousands of objects that have long left the cache
    (measured: 2-4 % of a step's time more). After every step, it would walk each match's pending prompt every time
    (a Cabanga! play's prompt holds a tuple of some twenty plays), where every 4th walks most of them once: 3 % less
    time a decision; every 16th lets the count pass the threshold and the collector walk the older generations.
    It collects only when the collector was enabled, and changes none of its settings.
    """
    if not gc.isenabled():
        return step(*args)
    gc.disable()
    try:
        return step(*args)
    finally:
        gc.enable()
        if collect:
            gc.collect(0)
