"""The author tools: ``arena check`` (:mod:`.check`), ``arena new`` (:mod:`.new`); ``arena replay`` reads the
replay format of :mod:`arena.core.replay`."""
