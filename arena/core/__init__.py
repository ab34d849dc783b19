"""The match engine: the referee (:mod:`.referee`), the replay format (:mod:`.replay`) and the deal ledger that
keeps any process from playing a deal twice (:mod:`.deals`). Builds on :mod:`arena.games` only: no I/O of its own
beyond asyncio's waiting."""
