"""Decisions per second of the batched self-play path (arena.train.selfplay) next to the bare rules engine's.

Run: python benchmarks/train.py [--seconds S] [--batch N] [--game G] [--seats K] [--json]

One core, one process, CPU time (``time.process_time``). For each game and seat count, in turns of S/4 seconds
each (so that a busy machine slows both alike), it measures:

- ``engine``: random matches through the game interface exactly as ``benchmarks/engine.py`` plays them
  (``pending()``, ``random_decision``, ``apply()``): decisions a second;
- ``views`` and ``encoded``: the engine's loop again, building every prompted seat's view at each decision, then
  also encoding it (the game's ``encoding``): what any views-only path pays at least, before masks and batching;
- ``batched``: N matches stepped together by :class:`arena.train.selfplay.SelfPlay`, every row's observation and
  mask written into one array, a random legal action per row drawn with numpy from the masks: decisions a second
  (a decision is a prompt answered, as the engine counts them; a Cabanga! throw of k candidates takes k steps).

and prints the batched rate next to the engine's, their ratio (issue 35's target: at least 0.5), and the ratios of
the two floors.
"""

from __future__ import annotations

import argparse
import json
import random
import time

import numpy as np

from arena.games import game_names, get_game
from arena.games.base import Game, random_decision
from arena.games.encoding import encoding_of
from arena.train.selfplay import SelfPlay


class Engine:
    """Random matches through the game interface, as benchmarks/engine.py plays them; with ``views``, building each
    prompted seat's view at each decision (and with ``encode``, its observation too)."""

    def __init__(self, game: Game, seats: int, views: bool = False, encode: bool = False) -> None:
        self.views = views or encode
        self.encoder = encoding_of(game.name).encoder(game.options(), seats) if encode else None
        self.game = game
        self.seats = seats
        self.options = game.options()
        self.rng = random.Random(f"bench/{game.name}/{seats}")
        self.seed = 0
        self.decisions = 0
        self.state = game.new_match(seats, self.seed, self.options)

    def run(self, seconds: float) -> float:
        """Play for about ``seconds`` of CPU time; return the CPU time spent."""
        start = time.process_time()
        deadline = start + seconds
        rng = self.rng
        while True:
            for _ in range(256):
                state = self.state
                if state.over:
                    self.seed += 1
                    state = self.state = self.game.new_match(self.seats, self.seed, self.options)
                prompts = state.pending()
                if self.views:
                    for prompt in prompts:
                        view = state.view(prompt.seat)
                        if self.encoder is not None:
                            self.encoder.encode(view, None, [], [], [])
                state.apply({p.seat: random_decision(p, rng) for p in prompts})
                self.decisions += len(prompts)
            if time.process_time() >= deadline:
                return time.process_time() - start


class Batched:
    """N matches of self-play stepped together, random legal actions drawn from the masks."""

    def __init__(self, game: Game, seats: int, n: int) -> None:
        self.play = SelfPlay(game, seats, n, seed=1)
        self.batch = self.play.reset()
        self.rng = np.random.default_rng(1)
        self.keys = np.zeros(self.batch.masks.shape, dtype=np.uint16)
        self.turns = 0

    def run(self, seconds: float) -> float:
        start = time.process_time()
        deadline = start + seconds
        batch = self.batch
        keys = self.keys
        size = keys.size
        raw = self.rng.bit_generator.random_raw  # 64 random bits a number: four 16-bit keys
        words = (size + 3) // 4
        while True:
            # a uniform legal action per row: a random key 1..65535 per action, 0 where illegal, the largest (ties,
            # about 1 in 65,536 per pair of legal actions, go to the first)
            np.bitwise_or(raw(words).view(np.uint16)[:size].reshape(keys.shape), 1, out=keys)
            keys *= batch.masks
            batch = self.play.step(keys.argmax(axis=1))
            self.turns += len(keys)
            if time.process_time() >= deadline:
                self.batch = batch
                return time.process_time() - start

    @property
    def decisions(self) -> int:
        return self.play.decisions


def bench(game: Game, seats: int, seconds: float, n: int) -> dict[str, object]:
    """Measure the engine and the batch in turns for about ``seconds`` each; return the figures."""
    engine, views, encoded = Engine(game, seats), Engine(game, seats, views=True), Engine(game, seats, encode=True)
    batched = Batched(game, seats, n)
    times = [0.0] * 4
    for _ in range(4):
        sides: list[Engine | Batched] = [engine, views, encoded, batched]
        for i, side in enumerate(sides):
            times[i] += side.run(seconds / 4)
    engine_rate = engine.decisions / times[0]
    batched_rate = batched.decisions / times[3]
    return {
        "game": game.name,
        "seats": seats,
        "batch": n,
        "engine_decisions_per_s": round(engine_rate),
        "batched_decisions_per_s": round(batched_rate),
        "ratio": round(batched_rate / engine_rate, 2),
        "views_ratio": round(views.decisions / times[1] / engine_rate, 2),
        "encoded_ratio": round(encoded.decisions / times[2] / engine_rate, 2),
        "batched_steps_per_s": round(batched.turns / times[3]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=4.0, help="CPU time per configuration and side (default 4)")
    parser.add_argument("--batch", type=int, default=64, help="matches stepped together (default 64)")
    parser.add_argument("--game", choices=game_names(), help="only this game")
    parser.add_argument("--seats", type=int, help="only this seat count")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args()
    if not args.json:
        print(f"{'game':9} {'seats':>5} {'engine dec/s':>13} {'batched dec/s':>14} {'ratio':>6} {'views':>6} "
              f"{'encoded':>8} {'steps/s':>9}")
    for game in map(get_game, game_names()):
        if args.game and game.name != args.game:
            continue
        for seats in range(game.min_seats, game.max_seats + 1):
            if args.seats and seats != args.seats:
                continue
            row = bench(game, seats, args.seconds, args.batch)
            if args.json:
                print(json.dumps(row), flush=True)
            else:
                print(f"{row['game']:9} {row['seats']:>5} {row['engine_decisions_per_s']:>13,} "
                      f"{row['batched_decisions_per_s']:>14,} {row['ratio']:>6} {row['views_ratio']:>6} "
                      f"{row['encoded_ratio']:>8} {row['batched_steps_per_s']:>9,}", flush=True)


if __name__ == "__main__":
    main()
