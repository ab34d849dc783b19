"""How fast the search toolkit plays: clones per second and playout steps per second, per game.

Run: python benchmarks/search.py [--seconds S] [--seats N]

One core, one process, CPU time (``time.process_time``). For each game: positions from seeded greedy matches
(every 7th step), then (1) ``MatchState.clone`` of those positions, (2) ``sample_world`` from the seat to play's
view and knowledge, (3) playouts: a clone of a sampled world played on by the greedy rollout policy with ``simulate`` to
the end of its round, counting the engine steps applied; for Cabanga!, also (4) the search bot's own playouts on
ints (``playout``: pack the world, play a first play, the round on). Target (issue 21): 20,000 Cabanga! playout
steps a second.

Then the inner loop of a search, in rollouts a second, where a rollout is one sampled world played out (sample a
world, play a first play, the round on by every seat's plan): (5) the medium bot's loop (``sample_world`` into a
``CabangaState``, ``pack``, ``playout``) and (6) the hard bot's (``WorldSampler.sample`` into a packed world,
``RolloutPlan.run``: row masks, no card, event or prompt a step, a pile drawn from without shuffling), and their ratio,
measured interleaved in one run (the median of three each). Target (issue 36): the hard bot's loop at least 3
times the medium bot's. Last (7) the same loop with the tracking plan in the rollouts (``SeatPolicy(track=True)``,
what ``cabanga-hard --tracking-rollouts`` plays).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from arena.games.cabanga import CABANGA
from arena.games.cabanga import search as cabanga_search
from arena.games.lama import LAMA
from arena.games.lama import search as lama_search
from arena.games.search import simulate


def rate(work: Callable[[], int], seconds: float) -> float:
    """Return how many units ``work`` (which returns the units it did) does per CPU second."""
    done = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        done += work()
    return done / (time.process_time() - start)


def bench(name: str, game: Any, tools: Any, seats: int, seconds: float) -> None:
    """Print the figures of one game."""
    rng = random.Random(f"bench/search/{name}")
    states: list[Any] = []
    seed = 0
    while len(states) < 40:
        state = game.new_match(seats, seed)
        step = 0
        while not state.over and len(states) < 40:
            if step % 7 == 3:
                states.append(state.clone())
            state.apply({p.seat: tools.greedy_policy(state, p) for p in state.pending()})
            step += 1
        seed += 1
    states = [s for s in states if not s.over]
    views = []
    for state in states:
        seat = state.pending()[0].seat
        views.append((state.view(seat), tools.knowledge_from(state, seat)))

    def clones() -> int:
        for state in states:
            state.clone()
        return len(states)

    def samples() -> int:
        for view, knowledge in views:
            tools.sample_world(view, knowledge, rng)
        return len(views)

    worlds = [tools.sample_world(view, knowledge, rng) for view, knowledge in views]

    def steps() -> int:
        total = 0
        for world in worlds:
            total += simulate(world.clone(random.Random(7)), tools.greedy_policy, rounds=1).steps
        return total

    print(f"{name:8} {seats} seats: {rate(clones, seconds):9,.0f} clones/s  {rate(samples, seconds):8,.0f} "
          f"sampled worlds/s  {rate(steps, seconds):8,.0f} playout steps/s (clone + simulate, greedy policy)")
    if hasattr(tools, "playout"):
        packed = [(tools.pack(world), world.pending()[0].choices[0]) for world in worlds
                  if world.pending()[0].kind == "play"]

        def fast() -> int:
            total = 0
            for pack, play in packed:
                total += tools.playout(pack, play, random.Random(7))[0] + 1
            return total

        print(f"{'':8} {seats} seats: {rate(fast, seconds):8,.0f} playout steps/s on ints (pack + playout, what "
              "the search bot plays)")
    if hasattr(tools, "WorldSampler"):
        firsts = [(view, knowledge, state.pending()[0].choices[0]) for (view, knowledge), state in zip(views, states,
                                                                                                      strict=True)
                  if view.step == "play"]
        samplers = [(tools.WorldSampler(view, knowledge), (tools._INT_OF[play.card], play.side.value == "right"))
                    for view, knowledge, play in firsts]
        cache = tools.PlanCache(game.options({}).symbols)
        greedy = [tools.SeatPolicy()] * seats

        def medium_loop() -> int:
            for view, knowledge, play in firsts:
                tools.playout(tools.pack(tools.sample_world(view, knowledge, rng)), play, rng)
            return len(firsts)

        plan = tools.RolloutPlan(greedy, cache)

        def hard_loop() -> int:
            for sampler, first in samplers:
                plan.run(sampler.sample(rng), first, rng)
            return len(samplers)

        olds, news = [], []
        for _ in range(3):  # interleaved, the median of three each: a shared machine's load drifts
            olds.append(rate(medium_loop, seconds / 2))
            news.append(rate(hard_loop, seconds / 2))
        old, new = sorted(olds)[1], sorted(news)[1]
        print(f"{'':8} {seats} seats: {old:8,.0f} rollouts/s, the medium bot's loop (sample_world + pack + playout)")
        print(f"{'':8} {seats} seats: {new:8,.0f} rollouts/s, the hard bot's loop (WorldSampler.sample + rollout): "
              f"{new / old:.1f} times the medium bot's")
        tracking = tools.RolloutPlan([tools.SeatPolicy(track=True)] * seats, cache)

        def tracking_loop() -> int:
            for sampler, first in samplers:
                tracking.run(sampler.sample(rng), first, rng)
            return len(samplers)

        print(f"{'':8} {seats} seats: {rate(tracking_loop, seconds):8,.0f} rollouts/s, the same with the tracking "
              "plan in the rollouts (cabanga-hard --tracking-rollouts)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per measurement (default 2)")
    parser.add_argument("--seats", type=int, default=4, help="seats per match (default 4)")
    args = parser.parse_args()
    bench("cabanga", CABANGA, cabanga_search, args.seats, args.seconds)
    bench("lama", LAMA, lama_search, args.seats, args.seconds)


if __name__ == "__main__":
    main()
