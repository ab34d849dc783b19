"""Tiny Duel's bundled example bots (``bots.toml``), each in a folder of its own, as a game from another package
ships them: ``arena match --game tiny`` plays them when given no bot list."""
