"""The bundled L.A.M.A. example bots (``bots.toml``), each in a folder of its own (``NAME/bot.py``, run as
``python -m arena.games.lama.bots.NAME.bot``): runnable programs that speak only the public protocol (via
arena.sdk). A jail shows no bot this folder, only a bundled bot its own folder in it."""
