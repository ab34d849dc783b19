"""``arena serve``: the ladder and its matches in the browser (leaderboard, ratings, head to head, bots, replays).

:mod:`arena.web.data` reads a ladder database read-only, through the ladder's read model
(:mod:`arena.ladder.readmodel`), and leaves its secrets out; :mod:`arena.web.replays`
re-runs a replay into frames; :mod:`arena.web.app` serves the pages and their JSON. What a game needs to be
drawn lives with the game (``arena.games.<name>_web``), found by :mod:`arena.web.games`.
"""
