"""A small masked policy for Cabanga! in numpy alone: what train_policy.py trains and bot.py plays.

The policy reads the part of the game's observation (arena.games.cabanga.encoding) that is the same at every seat
count: the hand, the pile tops, the step, the colour played before, the throw's row, the throw candidate and the
candidates taken. So one set of weights plays 3 to 6 seats. A hidden layer of ReLU units, then one logit per
action; the logits of illegal actions are set to -inf before the softmax (the mask).

Plugging in a deep-learning framework: replace this file by a module with the same three uses (``logits`` for a
batch of inputs, ``gradient`` of the REINFORCE objective, ``save``/``load``), e.g. a torch.nn.Module whose
weights train_policy.py updates with torch's optimiser and bot.py loads with torch.load; nothing else changes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from arena.games.encoding import Encoder

Array = npt.NDArray[np.float32]


def input_size(encoder: Encoder) -> int:
    """Return how many leading values of an observation the policy reads: every field before the per-seat ones."""
    return encoder.layout["active"]


class Policy:
    """One hidden layer of ReLU units and a masked softmax over the actions."""

    def __init__(self, params: dict[str, Array]) -> None:
        self.params = params

    @classmethod
    def new(cls, inputs: int, hidden: int, actions: int, rng: np.random.Generator) -> Policy:
        """Return a policy with small random weights (He initialisation), its output layer at zero (uniform)."""
        return cls({
            "w1": (rng.standard_normal((inputs, hidden)) * np.sqrt(2.0 / inputs)).astype(np.float32),
            "b1": np.zeros(hidden, dtype=np.float32),
            "w2": np.zeros((hidden, actions), dtype=np.float32),
            "b2": np.zeros(actions, dtype=np.float32),
        })

    @classmethod
    def load(cls, path: Path) -> Policy:
        """Return the policy saved at ``path`` (an .npz file)."""
        with np.load(path) as data:
            return cls({name: data[name].astype(np.float32) for name in ("w1", "b1", "w2", "b2")})

    def save(self, path: Path) -> None:
        """Save the weights to ``path`` (an .npz file)."""
        p = self.params
        np.savez(path, w1=p["w1"], b1=p["b1"], w2=p["w2"], b2=p["b2"])

    @property
    def inputs(self) -> int:
        return int(self.params["w1"].shape[0])

    def logits(self, x: Array, mask: npt.NDArray[np.bool_]) -> tuple[Array, Array]:
        """Return the masked logits (-inf where illegal) of a batch of inputs, and the hidden layer's output."""
        hidden = np.maximum(x @ self.params["w1"] + self.params["b1"], 0.0)
        logits = hidden @ self.params["w2"] + self.params["b2"]
        return np.where(mask, logits, -np.inf).astype(np.float32), hidden

    def probabilities(self, x: Array, mask: npt.NDArray[np.bool_]) -> tuple[Array, Array]:
        """Return the action probabilities of a batch of inputs (zero where illegal), and the hidden output."""
        logits, hidden = self.logits(x, mask)
        logits = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True), hidden

    def gradient(self, x: Array, mask: npt.NDArray[np.bool_], actions: npt.NDArray[np.int64],
                 weights: Array) -> dict[str, Array]:
        """Return the gradient of mean(weights * log p(action | x)) (REINFORCE: weights are the advantages)."""
        p, hidden = self.probabilities(x, mask)
        d_logits = -p * weights[:, None]
        d_logits[np.arange(len(actions)), actions] += weights
        d_logits /= len(actions)
        d_hidden = (d_logits @ self.params["w2"].T) * (hidden > 0)
        return {"w1": x.T @ d_hidden, "b1": d_hidden.sum(axis=0),
                "w2": hidden.T @ d_logits, "b2": d_logits.sum(axis=0)}


class Adam:
    """Adam (Kingma and Ba) ascending a policy's objective."""

    def __init__(self, policy: Policy, rate: float) -> None:
        self.policy = policy
        self.rate = rate
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
            self.policy.params[k] += (self.rate * m / (np.sqrt(v) + 1e-8)).astype(np.float32)
