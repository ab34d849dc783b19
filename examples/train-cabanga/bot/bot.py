"""cabanga-trained: a Cabanga! bot that plays a policy trained with arena's training environments (../train_policy.py).

It encodes its view as the training did (the game's encoding, arena.games.cabanga.encoding), masks the illegal
actions and plays the policy's most likely one; a throw is decided candidate by candidate, as in training. Its
weights are policy.npz beside this file; numpy and arena are all it needs (no training extra at play time).

Check it:  arena check bots.toml --name cabanga-trained
Play it:   arena compare cabanga-trained cabanga-random --bots bots.toml
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from policy import Policy  # beside this file: `python bot.py` puts this folder first on the path

from arena.games.base import MatchInfo
from arena.games.cabanga import CABANGA, CabangaView, Card, PlayCard
from arena.games.cabanga.bot import CabangaBot
from arena.games.cabanga.encoding import ENCODING, CabangaEncoder
from arena.games.encoding import SubsetStep
from arena.sdk import run

WEIGHTS = Path(__file__).resolve().parent / "policy.npz"


class TrainedCabanga(CabangaBot):
    """Plays the trained policy greedily: its most likely legal action."""

    agent = "cabanga-trained 0.1 (numpy)"

    def __init__(self, weights: Path = WEIGHTS) -> None:
        self.policy = Policy.load(weights)
        self.options: Any = CABANGA.options()
        self.encoders: dict[int, CabangaEncoder] = {}

    def on_match_start(self, info: MatchInfo) -> None:
        self.options = CABANGA.options(info.options)
        self.encoders = {}

    def encoder(self, view: CabangaView) -> CabangaEncoder:
        seats = len(view.hand_sizes)
        if seats not in self.encoders:
            self.encoders[seats] = ENCODING.encoder(self.options, seats)
        return self.encoders[seats]

    def best(self, view: CabangaView, legal: list[int], subset: SubsetStep | None = None) -> int:
        """Return the policy's most likely action among ``legal`` (indices of the action space)."""
        encoder = self.encoder(view)
        x = encoder.observation(view, subset)[None, :self.policy.inputs]
        mask = np.zeros((1, len(encoder.actions)), dtype=bool)
        mask[0, legal] = True
        logits, _ = self.policy.logits(x, mask)
        return int(logits.argmax())

    def play(self, view: CabangaView, choices: Sequence[PlayCard]) -> PlayCard:
        encoder = self.encoder(view)
        legal = [encoder.index(play) for play in choices]
        return choices[legal.index(self.best(view, legal))]

    def throw(self, view: CabangaView, candidates: Sequence[Card]) -> Sequence[Card]:
        encoder = self.encoder(view)
        taken: list[Card] = []
        for card in candidates:  # one binary choice per candidate, in the prompt's order, as in training
            if self.best(view, [encoder.skip, encoder.take], SubsetStep(card, tuple(taken))) == encoder.take:
                taken.append(card)
        return taken


if __name__ == "__main__":
    run(TrainedCabanga())
