"""The API under ``/api/contest/`` that ``arena submit`` calls: an author's submissions, one with its report, its
logs, and a new one, with the author's token in an ``Authorization: Bearer`` header. Answers are JSON, errors
``{"error": message}``, never cached.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from arena.contest.config import ContestConfig
from arena.contest.pages.common import TooLarge, bounded_body, client, config, contest, own_submission, store
from arena.contest.service import SubmitError
from arena.contest.store import Author, Submission

API_CALLS_PER_MINUTE = 120
"""API calls with a token a client address may make a minute."""

AuthorHandler = Callable[[Request, Author], Awaitable[Response]]
"""An API call's handler: the request and the author its token names."""


def bodies(contest_config: ContestConfig) -> dict[tuple[str, str], int]:
    """Return the bound of each (method, path) of the API that takes more than a form's fields: an upload."""
    return {("POST", "/api/contest/submissions"): contest_config.submissions.archive.archive_bytes}


def submission_json(submission: Submission) -> dict[str, Any]:
    """Return what an author (and the API) is told of their ``submission``."""
    return {"id": submission.id, "bot": submission.bot, "version": submission.version,
            "state": submission.state.value, "reason": submission.reason, "ladder_name": submission.ladder_name,
            "created": submission.created, "updated": submission.updated}


def api_error(status: int, message: str) -> JSONResponse:
    """Return the API's answer of an error: ``{"error": message}`` with ``status``."""
    return JSONResponse({"error": message}, status_code=status, headers={"Cache-Control": "no-store"})


def with_token(fn: AuthorHandler) -> Callable[[Request], Awaitable[Response]]:
    """Return the endpoint that calls ``fn`` with the author of the request's bearer token, after the client's rate
    limit; a request without a token, or with one that is not the contest's, is answered 401."""
    async def endpoint(request: Request) -> Response:
        contest_store = store(request)
        if not contest_store.limits.allow("api", client(request), API_CALLS_PER_MINUTE, 60):
            return api_error(429, "too many calls from your address; wait a minute")
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return api_error(401, "no token: send it as 'Authorization: Bearer TOKEN' (arena submit reads it "
                                  "from ARENA_TOKEN or --token-file)")
        author = contest_store.authors.for_token(token.strip())
        if author is None:
            return api_error(401, "that token is not one of this contest's (or it was revoked)")
        return await fn(request, author)
    return endpoint


async def api_submit(request: Request, author: Author) -> Response:
    limit = config(request).submissions.archive.archive_bytes
    try:
        data = await bounded_body(request, limit)
    except TooLarge:
        return api_error(413, f"the archive is over {limit} bytes, the most this contest takes")
    try:
        submission = contest(request).submit(author, data)
    except SubmitError as exc:
        return api_error(400, str(exc))
    return JSONResponse({**submission_json(submission), "url": f"/me/submission/{submission.id}"},
                        status_code=201)


async def api_list(request: Request, author: Author) -> Response:
    return JSONResponse({"author": author.name,
                         "submissions": [submission_json(s) for s in store(request).submissions.all(author.name)]})


async def api_one(request: Request, author: Author) -> Response:
    submission = own_submission(request, author, str(request.path_params["id"]))
    if submission is None:
        return api_error(404, "no such submission of yours")
    return JSONResponse({**submission_json(submission), "report": store(request).reports.get(submission.id)})


async def api_logs(request: Request, author: Author) -> Response:
    submission = own_submission(request, author, str(request.path_params["id"]))
    if submission is None:
        return api_error(404, "no such submission of yours")
    return JSONResponse({"logs": [{"name": log.name, "text": log.text, "cut": log.cut}
                                  for log in contest(request).logs(submission)]})


routes: list[BaseRoute] = [
    Route("/api/contest/submissions", with_token(api_submit), methods=["POST"]),
    Route("/api/contest/submissions", with_token(api_list), methods=["GET"]),
    Route("/api/contest/submissions/{id}", with_token(api_one), methods=["GET"]),
    Route("/api/contest/submissions/{id}/logs", with_token(api_logs), methods=["GET"]),
]
