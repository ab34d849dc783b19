"""A test bot that misbehaves on purpose, speaking the raw protocol: python misbehave.py MODE [ARG]

Modes (ARG is a number):
  ok                answer every request with its default picks
  sleep S           sleep S seconds before every answer (answers are still the defaults)
  sleep-at-step S K sleep S seconds before answering its request of step K (its K+1-th of the match)
  silent            connect and say hello, then never answer
  exit-after N      answer N requests, then exit with status 3 (a crash)
  hangup-after N    answer N requests, then close the stream but keep running (a disconnect)
  garbage           answer with a pick index that is out of range (a malformed answer)
  wrong-id          answer with a request id that was never sent
  bad-debug         answer with the default picks and debug bytes that are not UTF-8
"""

from __future__ import annotations

import os
import queue
import sys
import time
from collections.abc import Iterator

import grpc

from arena.v2 import arena_pb2 as pb
from arena.v2 import arena_pb2_grpc as pb_grpc


def main() -> None:
    mode = sys.argv[1]
    arg = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    sleep_step = int(sys.argv[3]) if len(sys.argv) > 3 else -1
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()
    outbox.put(pb.BotMessage(hello=pb.Hello(token=os.environ["ARENA_TOKEN"], protocol_version=2,
                                            agent=f"misbehave {mode}")))

    def outgoing() -> Iterator[pb.BotMessage]:
        while (message := outbox.get()) is not None:
            yield message

    channel = grpc.insecure_channel(os.environ["ARENA_ADDRESS"])
    call = pb_grpc.ArenaStub(channel).Play(outgoing())
    answered = 0
    for message in call:
        if message.WhichOneof("body") == "goodbye":
            break
        if message.WhichOneof("body") != "request":
            continue
        request = message.request
        if mode == "silent":
            continue
        if mode == "exit-after" and answered >= arg:
            os._exit(3)
        if mode == "hangup-after" and answered >= arg:
            call.cancel()
            time.sleep(60)
            return
        if mode == "sleep":
            time.sleep(arg)
        if mode == "sleep-at-step" and request.step == sleep_step:
            time.sleep(arg)
        picks = list(request.default_picks)
        request_id = request.request_id
        if mode == "garbage":
            picks = [len(request.choices) + 7]
        elif mode == "wrong-id":
            request_id += 1000
        debug = b"step %d: \xff\xfe not UTF-8 \xc3" % request.step if mode == "bad-debug" else b""
        outbox.put(pb.BotMessage(answer=pb.Answer(request_id=request_id, picks=picks, debug=debug)))
        answered += 1
    outbox.put(None)


if __name__ == "__main__":
    main()
