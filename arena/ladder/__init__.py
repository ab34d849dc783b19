"""The ladder: the ladder itself (:mod:`.ladder`), the pure scheduler, the rating system, the order-free estimate,
the store (SQLite, the ladder the only writer; :mod:`.store`, on the SQLite shell :mod:`.database` that the
contest's store stands on too), the read model of the pages (:mod:`.readmodel`), the board, and the executors that
play its matches, local or on a Ray cluster (:mod:`.executor`, :mod:`.cluster`, :mod:`.localcluster`)."""
