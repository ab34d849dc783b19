"""Any registered game as a PettingZoo Parallel environment: the seats of a simultaneous decision act together.

Agents are ``seat_0`` .. ``seat_{N-1}``; every step takes one action per agent that must decide (its mask is not
empty) and ignores the others' (a seat with nothing to decide gets a no-op step). A one-of-N decision is one step;
a subset decision (the Cabanga! throw) one step per candidate, the seats deciding together candidate by candidate,
and a seat with fewer candidates than another waiting out the rest with no-op steps. The game applies a sealed
decision once every seat's answer is in.

A seat's observation is remade only when it is to decide, at the start and at the end (:mod:`arena.train.spaces`):
a no-op step returns its previous observation with an empty mask. How many steps a sealed window takes is the
host's knowledge, like the order of an AEC environment: a policy that counted its no-op steps could tell that a
window was open. The reward comes at the end of the match; then every agent is terminated and ``agents`` empties.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pettingzoo import ParallelEnv

from arena.games.base import Game
from arena.train.spaces import Observation, SeatedEnv, observe, waiting
from arena.train.table import ActionError, FinishedError, TrainError


class ArenaParallel(SeatedEnv, ParallelEnv):  # type: ignore[misc]  # PettingZoo has no type information
    """A match of ``game`` at ``seats`` seats as a PettingZoo Parallel environment (:mod:`arena.train.parallel`).

    Arguments as :class:`arena.train.aec.ArenaAEC`'s.
    """

    metadata: dict[str, Any]

    def __init__(self, game: str | Game, seats: int, options: Mapping[str, Any] | None = None, *,
                 reward: str = "pairwise", render_mode: str | None = None) -> None:
        self._seat_up(game, seats, options, reward, render_mode)
        self.agents: list[str] = []

    def reset(self, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, Observation], dict[str, dict[str, Any]]]:
        """Deal a new match (from ``seed`` when given) and return every agent's observation and info."""
        self._seeds.reseed(seed)
        table = self._table
        table.start(self._seeds.next())
        self.agents = self.possible_agents[:]
        self._observations = {agent: waiting(observe(table, seat)) for seat, agent in enumerate(self.agents)}
        self._started = True
        self._refresh()
        return dict(self._observations), {agent: {"illegal_action": False} for agent in self.agents}

    def step(self, actions: Mapping[str, Any]) -> tuple[dict[str, Observation], dict[str, float],
                                                         dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        """Answer the turn of every agent that must decide with its action in ``actions``.

        An action outside an agent's mask is replaced by the game's default, flagged in its info
        (``illegal_action``). Raises :class:`arena.train.table.ActionError`, before anything is applied, for a
        deciding agent without an action or with one outside the action space, and :class:`FinishedError` once
        the match is over.
        """
        if not self._started:
            raise TrainError("reset() needs to be called before step")
        if not self.agents:
            raise FinishedError("step() called after all agents are terminated or truncated: call reset() first")
        table = self._table
        deciders = list(table.deciders())
        for seat in deciders:
            agent = self.possible_agents[seat]
            if agent not in actions or actions[agent] is None:
                raise ActionError(f"{agent} must decide this step: give it an action (its mask is not empty)")
            table.check_index(actions[agent])
        infos: dict[str, dict[str, Any]] = {agent: {"illegal_action": False} for agent in self.agents}
        for seat in deciders:
            agent = self.possible_agents[seat]
            infos[agent] = {"illegal_action": table.answer(seat, actions[agent])}
            self._observations[agent] = waiting(self._observations[agent])
        rewards = dict.fromkeys(self.agents, 0.0)
        if table.over:
            for seat, (agent, reward) in enumerate(zip(self.possible_agents, table.rewards(self._reward),
                                                       strict=True)):
                rewards[agent] = reward
                self._observations[agent] = waiting(observe(table, seat))
            done = dict.fromkeys(self.agents, True)
            observations = dict(self._observations)
            self.agents = []
            return observations, rewards, done, dict.fromkeys(done, False), infos
        self._refresh()
        running = dict.fromkeys(self.agents, False)
        return dict(self._observations), rewards, running, dict(running), infos

    def _refresh(self) -> None:
        for seat in self._table.deciders():
            self._observations[self.possible_agents[seat]] = observe(self._table, seat)

    def render(self) -> str | None:
        """Return the deciding agents' observations in text form (``render_mode="ansi"``)."""
        if self.render_mode is None or not self._started:
            return None
        parts = []
        for seat in self._table.deciders():
            agent = self.possible_agents[seat]
            observation = self._observations[agent]
            parts.append(f"{agent}:\n{self._encoder.text(observation['observation'])}\n"
                         f"legal: {self._encoder.mask_text(observation['action_mask'])}")
        return "\n".join(parts)

    def close(self) -> None:
        return None
