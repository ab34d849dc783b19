"""Any registered game as a PettingZoo AEC environment: one agent acts at a time.

Agents are ``seat_0`` .. ``seat_{N-1}``. The agent selected is a seat that must decide: a one-of-N decision is one
step, a subset decision (the Cabanga! throw) one step per candidate, and the seats of a sealed simultaneous
decision are asked one by one, none seeing another's choice until all are in (the step is applied then). Who is
selected is the host's knowledge, as whom it asks is the referee's: a policy reads only its own observation.

The reward comes at the end of the match (:func:`arena.train.table.match_rewards`); then every agent is
terminated and steps once more with ``None``, as PettingZoo's API has it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pettingzoo import AECEnv

from arena.games.base import Game
from arena.train.spaces import Observation, SeatedEnv, observe, waiting
from arena.train.table import FinishedError, TrainError


class ArenaAEC(SeatedEnv, AECEnv):  # type: ignore[misc]  # PettingZoo has no type information
    """A match of ``game`` at ``seats`` seats as a PettingZoo AEC environment (:mod:`arena.train.aec`).

    ``options`` are the game's match options (as ``arena match -o`` takes them); ``reward`` is ``pairwise`` (the
    default) or ``points``. Raises :class:`arena.games.base.GameError` for an unknown game, a seat count it
    refuses or bad options, and :class:`arena.games.encoding.EncodingError` for a game without an encoding.
    """

    metadata: dict[str, Any]
    agent_selection: str
    agents: list[str]

    def __init__(self, game: str | Game, seats: int, options: Mapping[str, Any] | None = None, *,
                 reward: str = "pairwise", render_mode: str | None = None) -> None:
        super().__init__()
        self._seat_up(game, seats, options, reward, render_mode, is_parallelizable=True)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new match (from ``seed`` when given: the same seed, the same matches)."""
        self._seeds.reseed(seed)
        table = self._table
        table.start(self._seeds.next())
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {"illegal_action": False} for agent in self.agents}
        self._observations = {agent: waiting(observe(table, self._seat[agent])) for agent in self.agents}
        self._started = True
        self._select()

    def observe(self, agent: str) -> Observation:
        """Return ``agent``'s observation: as of its current decision, or its last one (mask empty)."""
        if not self._started:
            raise TrainError("reset() needs to be called before observe")
        return self._observations[agent]

    def step(self, action: Any) -> None:
        """Answer the selected agent's turn with ``action`` (an index; ``None`` once it is terminated).

        An action outside the mask is replaced by the game's default decision, flagged in the agent's info
        (``illegal_action``); one outside the action space raises :class:`arena.train.table.ActionError`.
        Raises :class:`FinishedError` after every agent has stepped out of a finished match.
        """
        if not self._started:
            raise TrainError("reset() needs to be called before step")
        if not self.agents:
            raise FinishedError("step() called after all agents are terminated or truncated: call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        table = self._table
        illegal = table.answer(self._seat[agent], action)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.infos[agent] = {"illegal_action": illegal}
        self._observations[agent] = waiting(self._observations[agent])
        if table.over:
            for agent_name, reward in zip(self.possible_agents, table.rewards(self._reward), strict=True):
                self.rewards[agent_name] = reward
                self.terminations[agent_name] = True
                self._observations[agent_name] = waiting(observe(table, self._seat[agent_name]))
            self._accumulate_rewards()
            self.agent_selection = self.agents[0]
            return
        self._select()

    def _select(self) -> None:
        seat = self._table.deciders()[0]
        self.agent_selection = self.possible_agents[seat]
        self._observations[self.agent_selection] = observe(self._table, seat)

    def render(self) -> str | None:
        """Return the selected agent's observation in text form (``render_mode="ansi"``)."""
        if self.render_mode is None or not self._started:
            return None
        observation = self._observations[self.agent_selection]
        return (f"{self.agent_selection}:\n{self._encoder.text(observation['observation'])}\n"
                f"legal: {self._encoder.mask_text(observation['action_mask'])}")

    def close(self) -> None:
        return None
