"""A small masked policy for Cabanga! in numpy alone: what train_policy.py trains and bot.py plays.

The policy reads the part of the game's observation (arena.games.cabanga.encoding) that is the same at every seat
count: the hand, the pile tops, the step, the colour played before, the throw's row, the throw candidate and the
candidates taken, so one set of weights plays 3 to 6 seats. An action's logit is the sum of

- a network's: one hidden layer of ReLU units over those values, one output per action;
- a few features of the action itself, worked out from the same values and weighted by weights shared by every
  play: the gap the play leaves in its row (cards the others could throw, C10), the part of it the seat holds,
  whether it repeats the colour played before (C9), the card's penalty symbols, and for a throw candidate its
  symbols. Shared weights learn from every decision, not from each action's own.

The logits of illegal actions are set to -inf before the softmax (the mask).

Plugging in a deep-learning framework: replace this file by a module with the same uses (``logits`` and
``probabilities`` of a batch of inputs, the REINFORCE ``gradient``, ``save`` and ``load``), e.g. a torch.nn.Module
whose weights train_policy.py updates with torch's optimiser and bot.py loads with torch.load.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.games.cabanga import DEFAULT_SYMBOLS
from arena.games.encoding import Encoder

Array = npt.NDArray[np.float32]
FEATURES = 6
"""Action features: gap left, part of it held, colour repeated, the card's symbols, a throw candidate's symbols,
the gap the row had before the play."""

_PLAYS = 144
_CARD = np.arange(_PLAYS) // 2  # a play's card (0..71, card order) and side (0 left, 1 right)
_SIDE = np.arange(_PLAYS) % 2
_ROW = _CARD // 18
_VALUE = _CARD % 18 + 1
_OTHER_PILE = 2 * _ROW + 1 - _SIDE
_SYMBOLS = np.array(DEFAULT_SYMBOLS, dtype=np.float32)


def input_size(encoder: Encoder) -> int:
    """Return how many leading values of an observation the policy reads: every field before the per-seat ones."""
    return encoder.layout["active"]


class Policy:
    """A hidden layer of ReLU units plus weighted action features, and a masked softmax over the actions."""

    def __init__(self, params: dict[str, Array], fields: dict[str, int]) -> None:
        self.params = params
        self.fields = fields  # where the fields the features read start in the input

    @classmethod
    def new(cls, encoder: Encoder, hidden: int, rng: np.random.Generator) -> Policy:
        """Return a policy with small random weights (He initialisation), its outputs at zero (uniform)."""
        inputs = input_size(encoder)
        actions = len(encoder.actions)
        fields = {name: encoder.layout[name] for name in ("hand", "tops", "previous", "candidate")}
        fields["take"] = encoder.take
        return cls({
            "w1": (rng.standard_normal((inputs, hidden)) * np.sqrt(2.0 / inputs)).astype(np.float32),
            "b1": np.zeros(hidden, dtype=np.float32),
            "w2": np.zeros((hidden, actions), dtype=np.float32),
            "b2": np.zeros(actions, dtype=np.float32),
            "theta": np.zeros(FEATURES, dtype=np.float32),
        }, fields)

    @classmethod
    def load(cls, path: Path) -> Policy:
        """Return the policy saved at ``path`` (an .npz file)."""
        with np.load(path) as data:
            params = {name: data[name].astype(np.float32) for name in ("w1", "b1", "w2", "b2", "theta")}
            fields = {name: int(value) for name, value in zip(data["field_names"], data["field_starts"],
                                                               strict=True)}
        return cls(params, fields)

    def save(self, path: Path) -> None:
        """Save the weights and the fields' places to ``path`` (an .npz file)."""
        p = self.params
        np.savez(path, w1=p["w1"], b1=p["b1"], w2=p["w2"], b2=p["b2"], theta=p["theta"],
                 field_names=np.array(list(self.fields)), field_starts=np.array(list(self.fields.values())))

    @property
    def inputs(self) -> int:
        return int(self.params["w1"].shape[0])

    def features(self, x: Array) -> Array:
        """Return the action features of a batch of inputs: shape (batch, actions, FEATURES)."""
        f = self.fields
        n = len(x)
        hand = x[:, f["hand"]:f["hand"] + 72].reshape(n, 4, 18)
        tops = x[:, f["tops"]:f["tops"] + 144].reshape(n, 8, 18).argmax(axis=2) + 1  # each pile's top value
        held = np.concatenate([np.zeros((n, 4, 1), dtype=np.float32), hand.cumsum(axis=2)], axis=2)  # held <= v
        other = tops[:, _OTHER_PILE]  # (n, plays): the top the played card will face
        low = np.minimum(_VALUE, other)
        high = np.maximum(_VALUE, other)
        gap = np.maximum(high - low - 1, 0)
        rows = np.broadcast_to(_ROW, (n, _PLAYS))
        batch = np.arange(n)[:, None]
        mine = np.maximum(held[batch, rows, np.maximum(high - 1, 0)] - held[batch, rows, low], 0)  # held between
        before = np.abs(tops[:, 2 * _ROW] - tops[:, 2 * _ROW + 1]) - 1
        out = np.zeros((n, self.params["w2"].shape[1], FEATURES), dtype=np.float32)
        out[:, :_PLAYS, 0] = gap / 16.0
        out[:, :_PLAYS, 1] = mine / 8.0
        out[:, :_PLAYS, 2] = x[:, f["previous"] + _ROW]
        out[:, :_PLAYS, 3] = _SYMBOLS[_VALUE - 1] / 3.0
        out[:, :_PLAYS, 5] = np.maximum(before, 0) / 16.0
        candidate = x[:, f["candidate"]:f["candidate"] + 72]
        out[:, f["take"], 4] = candidate @ np.tile(_SYMBOLS, 4) / 3.0
        return out

    def logits(self, x: Array, mask: npt.NDArray[np.bool_]) -> tuple[Array, tuple[Array, Array]]:
        """Return the masked logits (-inf where illegal) of a batch of inputs, and what the gradient reuses."""
        hidden = np.maximum(x @ self.params["w1"] + self.params["b1"], 0.0)
        features = self.features(x)
        logits = hidden @ self.params["w2"] + self.params["b2"] + features @ self.params["theta"]
        return np.where(mask, logits, -np.inf).astype(np.float32), (hidden, features)

    def probabilities(self, x: Array, mask: npt.NDArray[np.bool_]) -> tuple[Array, tuple[Array, Array]]:
        """Return the action probabilities of a batch of inputs (zero where illegal), and what the gradient reuses."""
        logits, kept = self.logits(x, mask)
        logits = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True), kept

    def gradient(self, x: Array, mask: npt.NDArray[np.bool_], actions: npt.NDArray[np.int64],
                 weights: Array) -> dict[str, Array]:
        """Return the gradient of mean(weights * log p(action | x)) (REINFORCE: weights are the advantages)."""
        p, (hidden, features) = self.probabilities(x, mask)
        d_logits = -p * weights[:, None]
        d_logits[np.arange(len(actions)), actions] += weights
        d_logits /= len(actions)
        d_hidden = (d_logits @ self.params["w2"].T) * (hidden > 0)
        return {"w1": x.T @ d_hidden, "b1": d_hidden.sum(axis=0), "w2": hidden.T @ d_logits,
                "b2": d_logits.sum(axis=0), "theta": np.einsum("na,naf->f", d_logits, features)}


class Adam:
    """Adam (Kingma and Ba) ascending a policy's objective."""

    def __init__(self, policy: Policy, rate: float, rates: dict[str, float] | None = None) -> None:
        self.policy = policy
        self.rates = {k: (rates or {}).get(k, rate) for k in policy.params}
        self.m = {k: np.zeros_like(v) for k, v in policy.params.items()}
        self.v = {k: np.zeros_like(v) for k, v in policy.params.items()}
        self.t = 0

    def step(self, grads: dict[str, Array]) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            m = self.m[k] / (1 - 0.9 ** self.t)
            v = self.v[k] / (1 - 0.999 ** self.t)
            self.policy.params[k] += (self.rates[k] * m / (np.sqrt(v) + 1e-8)).astype(np.float32)
