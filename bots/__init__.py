"""Example bots, each in a folder of its own (``bots/NAME/bot.py``, run as ``python -m bots.NAME.bot``): a runnable
program that speaks only the public protocol (via arena.sdk)."""
