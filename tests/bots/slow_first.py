"""A L.A.M.A. test bot (Python SDK) that sleeps through its first decision, then answers at once.

Prints to stderr, on exit, how many decisions it was asked to make: the SDK must skip the requests whose
time ran out while it slept, so it is asked fewer times than the arena sent requests.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Sequence

from arena.games.lama import Card, LamaView, TurnAction
from arena.sdk import Bot, run

SLEEP = float(sys.argv[1])


class SlowFirst(Bot):
    def __init__(self) -> None:
        self.asked = 0
        atexit.register(lambda: print(f"asked {self.asked}", file=sys.stderr, flush=True))

    def turn(self, view: LamaView, choices: Sequence[Card | TurnAction]) -> Card | TurnAction:
        self.asked += 1
        if self.asked == 1:
            time.sleep(SLEEP)
        return choices[0]


if __name__ == "__main__":
    run(SlowFirst())
