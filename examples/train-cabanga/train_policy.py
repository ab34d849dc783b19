"""Train a small masked policy for Cabanga! with numpy alone, and save it for the bot in bot/.

Run (from anywhere, with arena installed with its extra: pip install 'arena[train]'):

    python examples/train-cabanga/train_policy.py                 # 16000 matches; writes bot/policy.npz
    python examples/train-cabanga/train_policy.py --matches 3000  # a shorter run

How: REINFORCE with a baseline on arena's batched self-play (arena.train.selfplay). In every match one seat, drawn
at random, is the learner and the others play uniformly random legal actions (as cabanga-random does). Matches are
one round long (option rounds=1: a round is the unit of skill, and a short episode makes the reward less noisy),
at 3 to 6 seats in turn. The learner's reward is its penalty points against the other seats' mean (reward
"points"), normalised per update. The policy is policy.Policy: the seat-count-free part of the observation, one
hidden layer, a masked softmax.

Then it measures the greedy policy against the bundled cabanga-random in whole matches (arena.train.LearnerEnv,
the bots in-process, the learner's seat rotated) and prints its mean score: the ladder's pairwise score, 0.5 for
an equal, 1 for always ahead.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# one thread for numpy's BLAS: the matrices are small, and on a shared machine its threads only wait for each other
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bot"))

from policy import Adam, Policy, input_size  # noqa: E402  # the bot's own module, beside bot.py

from arena.train import LearnerEnv, SelfPlay  # noqa: E402

SEATS = (3, 4, 5, 6)
HIDDEN = 64


def train(matches: int, seed: int = 0, minutes: float | None = None, batch: int = 64, update: int = 2048,
          rate: float = 0.003, selfplay: float = 0.5, log: bool = True) -> Policy:
    """Return a policy trained for ``matches`` one-round matches (or ``minutes``, whichever ends first).

    A share ``selfplay`` of the matches is played by the policy at every seat (each seat learns); in the others one
    seat drawn at random learns and the rest play uniformly random legal actions.
    """
    rng = np.random.default_rng(seed)
    plays = [SelfPlay("cabanga", seats, batch, {"rounds": 1}, reward="points", seed=seed + seats) for seats in SEATS]
    inputs = input_size(plays[0].encoder)
    policy = Policy.new(plays[0].encoder, HIDDEN, rng)
    adam = Adam(policy, rate, {"theta": 0.05})  # the few shared feature weights move further each step
    batches = [play.reset() for play in plays]

    def learners(seats: int) -> np.ndarray:
        """Return which seats of a new match learn (and play the policy)."""
        if rng.random() < selfplay:
            return np.ones(seats, dtype=bool)
        chosen: np.ndarray = np.arange(seats) == rng.integers(0, seats)
        return chosen

    learning = [np.array([learners(play.seats) for _ in range(batch)]) for play in plays]
    # per match and seat: the (input, mask, action) of each of its decisions so far
    trails: list[list[list[list[tuple[np.ndarray, np.ndarray, int]]]]] = [
        [[[] for _ in range(play.seats)] for _ in range(batch)] for play in plays]
    xs: list[np.ndarray] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    advantages: list[float] = []
    done_matches = 0
    scores: list[float] = []  # the learner's pairwise score in the matches against random seats
    start = time.monotonic()
    while done_matches < matches and (minutes is None or time.monotonic() - start < 60 * minutes):
        for k, play in enumerate(plays):
            b = batches[k]
            rows = np.arange(batch)
            mine = learning[k][rows, b.seats]
            noise = rng.random(b.masks.shape, dtype=np.float32)  # the random seats: a uniform legal action
            noise[~b.masks] = -1.0
            chosen = noise.argmax(axis=1)
            if mine.any():
                x = b.observations[mine, :inputs]
                p, _ = policy.probabilities(x, b.masks[mine])
                picks = (p.cumsum(axis=1) < rng.random((len(p), 1))).sum(axis=1).clip(0, p.shape[1] - 1)
                chosen[mine] = picks
                for row, seat, xi, mi, a in zip(np.flatnonzero(mine), b.seats[mine], x, b.masks[mine], picks,
                                                strict=True):
                    trails[k][row][seat].append((xi.copy(), mi.copy(), int(a)))
            b = batches[k] = play.step(chosen)
            for row in np.flatnonzero(b.done):
                rewards = b.rewards[row]
                for seat in np.flatnonzero(learning[k][row]):
                    others = np.delete(rewards, seat)
                    advantage = float(rewards[seat] - others.mean())
                    if not learning[k][row].all():
                        scores.append(float(np.mean(rewards[seat] > others) + 0.5 * np.mean(rewards[seat] == others)))
                    for xi, mi, a in trails[k][row][seat]:
                        xs.append(xi)
                        masks.append(mi)
                        actions.append(a)
                        advantages.append(advantage)
                    trails[k][row][seat] = []
                learning[k][row] = learners(play.seats)
                done_matches += 1
        if len(actions) >= update:
            weights = np.array(advantages, dtype=np.float32)
            weights = (weights - weights.mean()) / (weights.std() + 1e-6)
            adam.step(policy.gradient(np.array(xs), np.array(masks), np.array(actions), weights))
            xs, masks, actions, advantages = [], [], [], []
            if log and adam.t % 20 == 0:
                recent = np.mean(scores[-2000:]) if scores else 0.0
                print(f"{done_matches:7d} matches, {time.monotonic() - start:6.1f} s, update {adam.t}: "
                      f"the learner's score against random seats lately {recent:.3f}", flush=True)
    return policy


def greedy(policy: Policy, observation: dict[str, np.ndarray]) -> int:
    """Return the policy's most likely legal action for one observation."""
    x = observation["observation"][None, :policy.inputs]
    logits, _ = policy.logits(x, observation["action_mask"][None].astype(bool))
    return int(logits.argmax())


def evaluate(policy: Policy, deals: int, seats: int = 4, seed: int = 1, opponent: str = "cabanga-random") -> float:
    """Return the policy's mean pairwise score (0..1) over ``deals`` whole matches against ``opponent`` in-process,
    its seat rotated from match to match."""
    env = LearnerEnv("cabanga", seats, opponent)
    observation, _ = env.reset(seed=seed)
    total = 0.0
    for deal in range(deals):
        if deal:
            observation, _ = env.reset()
        done = False
        reward = 0.0
        while not done:
            observation, reward, done, _, _ = env.step(greedy(policy, observation))
        total += (reward + 1) / 2
    return total / deals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches", type=int, default=16_000, help="one-round training matches (default 16000)")
    parser.add_argument("--minutes", type=float, default=9.0,
                        help="stop training after this long even if fewer matches were played (default 9)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval", type=int, default=400, help="whole matches against cabanga-random (default 400)")
    parser.add_argument("--out", type=Path, default=HERE / "bot" / "policy.npz", help="where to save the weights")
    args = parser.parse_args()
    started = time.monotonic()
    policy = train(args.matches, args.seed, args.minutes)
    trained = time.monotonic() - started
    policy.save(args.out)
    print(f"trained in {trained:.0f} s ({time.process_time():.0f} s of CPU); saved {args.out}")
    if args.eval:
        for opponent in ("cabanga-random", "cabanga-greedy"):
            score = evaluate(policy, args.eval, opponent=opponent)
            print(f"mean score against {opponent} over {args.eval} matches at 4 seats: {score:.3f} (0.5 is equal)")


if __name__ == "__main__":
    main()
