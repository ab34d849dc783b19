"""A Python SDK bot with one fault on purpose: python -m tests.bots.sdk_faulty MODE [ARG]

It plays the first choice everywhere and throws nothing, except:
  raise-throw       raises ValueError("boom") in every throw
  slow-throw S      sleeps S seconds in every throw (a timeout on throws only)
  illegal-at-6      at a 6-seat table, names the same throw candidate twice (a malformed answer)
  crash-rounds-1    prints a line to stderr and exits with status 3 when a match has option rounds=1
  ok                no fault at all
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import Any

from arena.games.base import MatchInfo
from arena.sdk import Bot, run


class Faulty(Bot):
    def __init__(self, mode: str, arg: float) -> None:
        self.mode = mode
        self.arg = arg
        self.seats = 0

    def on_match_start(self, info: MatchInfo) -> None:
        self.seats = len(info.names)
        if self.mode == "crash-rounds-1" and info.options.get("rounds") == 1:
            print("sdk_faulty: I cannot play a match of one round", file=sys.stderr, flush=True)
            os._exit(3)

    def play(self, view: Any, choices: Sequence[Any]) -> Any:
        return choices[0]

    def turn(self, view: Any, choices: Sequence[Any]) -> Any:
        return choices[0]

    def throw(self, view: Any, candidates: Sequence[Any]) -> Sequence[Any]:
        if self.mode == "raise-throw":
            raise ValueError("boom")
        if self.mode == "slow-throw":
            time.sleep(self.arg)
        if self.mode == "illegal-at-6" and self.seats == 6:
            return [candidates[0], candidates[0]]
        return ()


if __name__ == "__main__":
    run(Faulty(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.0))
