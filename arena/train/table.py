"""One match decided seat by seat and candidate by candidate: what every training environment drives.

A :class:`Table` holds a match state (private: nothing public leads to it) and the step being answered. A
step's prompts are answered one *turn* at a time: one turn for a one-of-N prompt, one per candidate for a
subset prompt (:mod:`arena.games.encoding`). The answers are kept until every prompted seat has answered, then
applied together: a sealed simultaneous decision stays sealed, as the referee keeps it.

An action index outside the action space raises :class:`ActionError`; a legal index that is not among the
turn's legal ones is replaced by the prompt's default (DESIGN.md "Faults") and reported as illegal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arena.core.referee import MatchLog
from arena.games.base import Action, Decision, Event, Game, GameError, IllegalDecisionError, Pick, Prompt, View
from arena.games.encoding import Encoder, SubsetStep

REWARDS = ("pairwise", "points")
"""The rewards a match can end with: ``pairwise`` (the ladder's pairwise score, as -1..1) or ``points``."""


class TrainError(ValueError):
    """Bad input to a training environment: an action out of range, a step after the end, a bad argument."""


class ActionError(TrainError):
    """An action that is not an index of the action space, or no action for a seat that must decide."""


class FinishedError(TrainError):
    """A step of an environment whose match is over: reset it first."""


def check_reward(reward: str) -> str:
    """Return ``reward`` when it names a reward (:data:`REWARDS`). Raises :class:`TrainError`."""
    if reward not in REWARDS:
        raise TrainError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
    return reward


def match_rewards(game: Game, places: Sequence[int], totals: Sequence[int], reward: str) -> list[float]:
    """Return each seat's reward for a finished match.

    ``pairwise``: the ladder's pairwise score (a seat ahead of another scores 1, a shared place 1/2) averaged over
    the other seats and stretched to -1..1: (seats it beat - seats that beat it) / (seats - 1). ``points``: the
    seat's final total, negated where lower totals win, so that more is better either way.
    """
    seats = len(places)
    if reward == "points":
        better = game.scoring.better(1, 0)  # higher wins
        return [float(t) if better else -float(t) for t in totals]
    return [sum((p < o) - (p > o) for o in places) / (seats - 1) for p in places]


class Table:
    """One match of ``game`` at ``seats`` seats, answered turn by turn with action indices of ``encoder``.

    With ``tell=True`` it keeps each seat's events (:meth:`news`) for in-process bots.
    """

    def __init__(self, game: Game, options: Any, seats: int, encoder: Encoder, *, tell: bool = False) -> None:
        self.game = game
        self.options = options
        self.seats = seats
        self.encoder = encoder
        self._tell = tell
        self._state: Any = None
        self._log: MatchLog | None = None
        self._prompts: dict[int, Prompt] = {}
        self._answers: dict[int, Decision] = {}  # per prompted seat that has answered all its turns
        self._done: dict[int, int] = {}  # per seat deciding a subset: the candidates decided
        self._taken: dict[int, list[Action]] = {}  # per seat deciding a subset: the candidates taken
        self._waiting: list[int] = []  # prompted seats with a turn to answer, in seat order
        self._legal: dict[int, list[int]] = {}  # per prompted seat: its legal indices, once asked for
        self._views: dict[int, View] = {}  # per seat: its view of this step, once asked for
        self.decisions = 0
        """Prompts answered since the table was made (a referee's decisions: one per prompted seat and step)."""

    def start(self, seed: int) -> None:
        """Deal a new match from ``seed``."""
        self._state = self.game.new_match(self.seats, seed, self.options)
        self._log = MatchLog(self._state) if self._tell else None
        self._begin()

    @property
    def over(self) -> bool:
        """Return whether the match has ended (or none has started)."""
        return self._state is None or self._state.over

    def deciders(self) -> list[int]:
        """Return the seats with a turn to answer now, in seat order (empty once the match is over)."""
        return self._waiting

    def prompt(self, seat: int) -> Prompt:
        """Return the prompt ``seat`` is answering."""
        return self._prompts[seat]

    def view(self, seat: int) -> View:
        """Return what ``seat`` may see now."""
        view: View = self._state.view(seat)
        return view

    def subset_step(self, seat: int) -> SubsetStep | None:
        """Return the candidate ``seat`` decides now in a subset decision, ``None`` for any other turn."""
        prompt = self._prompts.get(seat)
        if prompt is None or prompt.pick is Pick.ONE or seat not in self._waiting:
            return None
        return SubsetStep(prompt.choices[self._done.get(seat, 0)], tuple(self._taken.get(seat, ())))

    def encode(self, seat: int, ones: list[int], at: list[int], values: list[float]) -> None:
        """Append ``seat``'s observation now: its view, and the candidate when it decides one
        (:meth:`arena.games.encoding.Encoder.encode`)."""
        view = self._views.get(seat)
        if view is None:  # a view holds for the whole step: a subset decision's candidates share it
            view = self._views[seat] = self._state.view(seat)
        self.encoder.encode(view, self.subset_step(seat), ones, at, values)

    def next_turn(self, ones: list[int], at: list[int], values: list[float], legal: list[int]) -> int:
        """Append the observation of the first seat with a turn (as :meth:`encode`) and its legal actions (as
        :meth:`legal`); return that seat. The batch's fast path: one call a row."""
        seat = self._waiting[0]
        prompt = self._prompts[seat]
        view = self._views.get(seat)
        if view is None:
            view = self._views[seat] = self._state.view(seat)
        subset = None
        if prompt.pick is not Pick.ONE:
            subset = SubsetStep(prompt.choices[self._done.get(seat, 0)], tuple(self._taken.get(seat, ())))
        self.encoder.encode(view, subset, ones, at, values)
        mine = self._legal.get(seat)
        if mine is None:
            mine = self._legal[seat] = self.encoder.legal(prompt)
        legal.extend(mine)
        return seat

    def legal(self, seat: int) -> list[int]:
        """Return the legal action indices of ``seat``'s turn (empty when it has none)."""
        if seat not in self._waiting:
            return []
        legal = self._legal.get(seat)
        if legal is None:
            legal = self._legal[seat] = self.encoder.legal(self._prompts[seat])
        return legal

    def answer(self, seat: int, action: Any) -> bool:
        """Answer ``seat``'s turn with action index ``action``; apply the step once every seat has answered.

        Returns True when ``action`` was not legal and the prompt's default was applied instead. Raises
        :class:`ActionError` for an action outside the action space and :class:`TrainError` for a seat that has
        no turn.
        """
        index = self.check_index(action)
        if seat not in self._waiting:
            raise TrainError(f"seat {seat} has no decision to make now")
        return self.answer_index(seat, index)

    def answer_index(self, seat: int, index: int) -> bool:
        """:meth:`answer` for a checked ``index`` and a ``seat`` that has a turn (the batch's fast path)."""
        prompt = self._prompts[seat]
        illegal = False
        if prompt.pick is Pick.ONE:
            legal = self.legal(seat)
            if index in legal:
                self._answers[seat] = (prompt.choices[legal.index(index)],)
            else:
                illegal = True
                self._answers[seat] = prompt.default
        else:
            done = self._done.get(seat, 0)
            candidate = prompt.choices[done]
            taken = self._taken.setdefault(seat, [])
            encoder = self.encoder
            if index == encoder.take:
                taken.append(candidate)
            elif index != encoder.skip:
                illegal = True
                if candidate in prompt.default:
                    taken.append(candidate)
            self._done[seat] = done + 1
            if done + 1 < len(prompt.choices):
                return illegal
            self._answers[seat] = tuple(taken)
        waiting = self._waiting
        waiting.remove(seat)
        if not waiting:
            self._apply()
        return illegal

    def answer_whole(self, seat: int, decision: Decision) -> bool:
        """Answer all of ``seat``'s prompt at once (an in-process bot's decision); apply the step once every seat
        has answered. A decision that is not legal is replaced by the prompt's default: returns True then."""
        prompt = self._prompts.get(seat) if seat in self._waiting else None
        if prompt is None:
            raise TrainError(f"seat {seat} has no decision to make now")
        illegal = False
        try:
            prompt.check(decision)
        except IllegalDecisionError:
            illegal = True
            decision = prompt.default
        self._answers[seat] = tuple(decision)
        self._waiting.remove(seat)
        if not self._waiting:
            self._apply()
        return illegal

    def check_index(self, action: Any) -> int:
        """Return ``action`` as an index of the action space. Raises :class:`ActionError` for anything else."""
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = action.reshape(()).item()
        if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
            raise ActionError(f"an action is an integer index 0..{len(self.encoder.actions) - 1}, got {action!r}")
        index = int(action)
        if not 0 <= index < len(self.encoder.actions):
            raise ActionError(f"action {index!r} is out of range: the action space has "
                              f"{len(self.encoder.actions)} actions, 0..{len(self.encoder.actions) - 1}")
        return index

    def result(self) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Return the finished match's (places, totals). Raises :class:`TrainError` while it runs."""
        result = None if self._state is None else self._state.result
        if result is None:
            raise TrainError("the match is not over")
        return result.places, result.totals

    def rewards(self, reward: str) -> list[float]:
        """Return each seat's reward (:func:`match_rewards`) for the finished match."""
        places, totals = self.result()
        return match_rewards(self.game, places, totals, reward)

    def news(self, seat: int) -> tuple[Event, ...]:
        """Return the events ``seat`` has not been told yet (public, and its own private ones), oldest first."""
        if self._log is None:
            raise GameError("this table does not keep events (made with tell=False)")
        return self._log.since_last(seat)

    def _begin(self) -> None:
        """Set up the turns of the pending step (a subset prompt without candidates is answered at once)."""
        while True:
            prompts = self._state.pending()
            self._prompts = {p.seat: p for p in prompts}
            self._answers = {p.seat: () for p in prompts if not p.choices}  # only a subset prompt has none
            self._waiting = [p.seat for p in prompts if p.choices]
            self._done = {}
            self._taken = {}
            self._legal = {}
            self._views = {}
            if self._waiting or not prompts:
                return
            self._apply(begin=False)

    def _apply(self, begin: bool = True) -> None:
        answers = self._answers
        self.decisions += len(answers)
        if self._log is not None:
            self._log.apply(answers)
        else:
            self._state.apply(answers)
        if begin:
            self._begin()
