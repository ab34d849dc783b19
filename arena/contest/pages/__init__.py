"""The contest's web pages and API, one module per concern; :func:`arena.contest.web.contest_app` assembles them
before ``arena serve``'s pages (which a contest serves too).

Everyone sees the public pages as ``arena serve`` shows them (the leaderboard, the matches, replays of complete
deal sets from above), except that a fault's reason, which may quote the bot's own words, is its author's.

- :mod:`.sessions`: logging in with a token, logging out, registering where the contest takes registrations.
- :mod:`.authors`: an author's own pages (``/me``, an upload, ``/me/submission/ID``).
- :mod:`.admin`: the operator's page (``/admin``): every submission, disabling a bot, revoking an author.
- :mod:`.api`: the API under ``/api/contest/`` that ``arena submit`` calls, with a bearer token.
- :mod:`.scrimmages`: an author's scrimmages (unrated matches of their own), by page and by API.
- :mod:`.common`: what they share: the page chrome, the session and its CSRF token, bounded bodies, the
  security headers, and the accessors of the application's state.

Every handler is a module-level ``async`` function of the request, which reads what it needs from the
application's state (``request.app.state``: ``contest``, ``store``, ``config``, ``reader``) through
:mod:`.common`'s accessors. Each module exposes ``routes: list[BaseRoute]``; one whose routes take a body over
:data:`.common.FORM_BYTES` also exposes ``bodies(config)``, the bound of each such (method, path), which
:func:`arena.contest.web.body_bounds` gathers. A new module of pages is one file with its ``routes`` and one line in
:data:`arena.contest.web.PAGES`.

Every page and call checks that its author may see what it asks for; a submission that is not theirs is "not
found", as one that does not exist (its id is 128 random bits). Logins and uploads are rate-limited by the client's
address (the socket's, or behind a configured proxy the one it reports), every request body bounded before it is
read (:mod:`arena.web.limits`), and every value shown is escaped.
"""
