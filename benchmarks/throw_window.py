"""The timing channel of the Cabanga! throw, with and without --sealed-window-ms.

Run: python benchmarks/sealed_window.py [--matches N] [--window-ms W ...] [--json]

Plays N whole 4-seat Cabanga! matches (default 60) between bundled bot processes (cabanga-random, which
throws, and cabanga-greedy, cabanga-tidy, cabanga-thrower), once per throw window W in milliseconds (default
0, 1, 2 and 5), and measures what a seat that is not asked to throw can see: the time from a play's answer
to the next player's request, as the arena sends it (``sent_time_ms`` carries the same clock at millisecond
grain). It splits those gaps by whether the play opened a throw window (a gap left in the row) in which
some seat was asked, or in which nobody was, and prints the median and 90th percentile of each. Without a
window the two differ by the throw's round trip: a seat learns that someone held a card to throw. With a
window longer than the bots' throw answers they are the same, and the difference left is what a seat can
still tell. Also prints matches per second, the price of the window.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from arena.core.deals import DealKey
from arena.core.referee import Clock, MatchInfo, Request, Seat, referee_match
from arena.games import BOT_LIST, get_game
from arena.games.base import Decision, Event, MatchResult
from arena.launch.botlist import load_bot_list
from arena.launch.pool import ProcessPool
from arena.launch.runner import serving

ROOT = Path(__file__).resolve().parent.parent


class TimedSeat:
    """A seat that notes (when asked, when answered, kind) of every request it is sent."""

    def __init__(self, seat: Seat, log: list[tuple[float, float, int, str]], index: int) -> None:
        self.seat = seat
        self.name = seat.name
        self.log = log
        self.index = index

    async def match_started(self, info: MatchInfo) -> None:
        await self.seat.match_started(info)

    async def decide(self, request: Request) -> Decision:
        asked = time.perf_counter()
        try:
            return await self.seat.decide(request)
        finally:
            self.log.append((asked, time.perf_counter(), self.index, request.prompt.kind))

    async def match_over(self, match_id: str, seat: int, events: tuple[Event, ...], result: MatchResult) -> None:
        await self.seat.match_over(match_id, seat, events, result)


def split_gaps(log: list[tuple[float, float, int, str]], windows: list[bool]) -> tuple[list[float], list[float],
                                                                                      list[float]]:
    """Return the gaps from each play's answer to the next play's request: after a window in which some seat
    was asked, after a window in which none was, and after a play that opened no window."""
    asked: list[float] = []
    silent: list[float] = []
    none: list[float] = []
    plays = [entry for entry in log if entry[3] == "play"]
    throws = sorted(entry[0] for entry in log if entry[3] == "throw")
    for (_, answered, _, _), (next_asked, _, _, _), window in zip(plays, plays[1:], windows, strict=False):
        gap = next_asked - answered
        if any(answered <= t <= next_asked for t in throws):
            asked.append(gap)
        elif window:
            silent.append(gap)
        else:
            none.append(gap)
    return asked, silent, none


async def run(matches: int, window_ms: float) -> dict[str, Any]:
    game = get_game("cabanga")
    bots = load_bot_list(ROOT / "arena" / "games" / "cabanga" / BOT_LIST)[:4]
    asked: list[float] = []
    silent: list[float] = []
    none: list[float] = []
    async with serving() as server:
        pool = ProcessPool(server)
        try:
            began = time.perf_counter()
            for seed in range(matches):
                seats = await pool.seat(bots, deal=DealKey(game.name, seed))
                log: list[tuple[float, float, int, str]] = []
                windows: list[bool] = []
                timed = [TimedSeat(s, log, i) for i, s in enumerate(seats)]
                record = await referee_match(game, timed, seed, game.options({"rounds": 1}),
                                          clock=Clock(1.0), sealed_window=window_ms / 1000)
                # which plays opened a window: replayed from the record, the state says (a public fact)
                state = game.new_match(4, seed, game.options({"rounds": 1}))
                for step in record.steps:
                    prompts = state.pending()
                    play = prompts[0].kind == "play"
                    state.apply({p.seat: p.parse(step[p.seat]) for p in prompts})
                    if play:
                        windows.append(state.opens_window())
                a, s, n = split_gaps(log, windows)
                asked += a
                silent += s
                none += n
            elapsed = time.perf_counter() - began
        finally:
            await pool.close()

    def ms(values: list[float], q: float) -> float:
        if not values:
            return 0.0
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)

    return {"window_ms": window_ms, "matches": matches, "matches_per_s": round(matches / elapsed, 2),
            "asked": len(asked), "asked_p50_ms": ms(asked, 0.5), "asked_p90_ms": ms(asked, 0.9),
            "silent": len(silent), "silent_p50_ms": ms(silent, 0.5), "silent_p90_ms": ms(silent, 0.9),
            "no_window": len(none), "no_window_p50_ms": round(statistics.median(none) * 1000, 3) if none else 0.0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=60, help="matches per window (default 60)")
    parser.add_argument("--window-ms", type=float, action="append", help="a throw window (default 0, 1, 2, 5)")
    parser.add_argument("--json", action="store_true", help="one JSON object a line")
    args = parser.parse_args(argv)
    for window in args.window_ms or [0.0, 1.0, 2.0, 5.0]:
        figures = asyncio.run(run(args.matches, window))
        if args.json:
            print(json.dumps(figures), flush=True)
            continue
        print(f"throw window {window:g} ms: {figures['matches_per_s']} matches/s; play answer to next request: "
              f"after a window with a seat asked {figures['asked_p50_ms']} ms median, {figures['asked_p90_ms']} "
              f"p90 ({figures['asked']}); after a window nobody was asked in {figures['silent_p50_ms']} ms, "
              f"{figures['silent_p90_ms']} p90 ({figures['silent']}); no window {figures['no_window_p50_ms']} ms "
              f"({figures['no_window']})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
