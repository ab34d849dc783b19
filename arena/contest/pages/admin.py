"""The operator's page (``/admin``), for an author added with ``arena author add --admin``: every author and
submission, disabling a playing bot, revoking an author (which ends their sessions). To anyone else it does not
exist (404).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena.contest.pages.common import (
    FORM_BYTES,
    TooLarge,
    bounded_body,
    contest,
    escape,
    form_of,
    logged_in,
    not_found_page,
    page,
    same,
    store,
    submissions_table,
)
from arena.contest.store import State


async def admin(request: Request) -> Response:
    found = logged_in(request)
    if found is None or not found[2].admin:
        return not_found_page(f"no page {request.url.path!r} here")
    _, session, author = found
    contest_store = store(request)
    csrf = f'<input type="hidden" name="csrf" value="{escape(session.csrf)}">'
    authors = "".join(
        f"<tr><td class=\"left\">{escape(a.name)}</td><td>{'admin' if a.admin else ''}</td>"
        f"<td>{'revoked' if a.revoked else ''}</td><td>"
        + ("" if a.revoked or a.name == author.name else
           f'<form method="post" action="/admin/revoke/{escape(a.name)}">{csrf}<button>revoke</button></form>')
        + "</td></tr>" for a in contest_store.authors.all())
    live = [s for s in contest_store.submissions.all() if s.state is State.PLAYING]
    disable = "".join(f'<li>{escape(s.ladder_name)} <form method="post" action="/admin/disable/{escape(s.id)}" '
                      f'class="inline">{csrf}<button>disable</button></form></li>' for s in live)
    body = (f"<h2>Authors</h2><table><tbody>{authors}</tbody></table><h2>Playing</h2><ul>{disable}</ul>"
            f"<h2>Every submission</h2>{submissions_table(contest_store.submissions.all(), with_author=True)}")
    return page("Admin", body, author=author, session=session)


async def admin_action(request: Request) -> Response:
    found = logged_in(request)
    if found is None or not found[2].admin:
        return not_found_page(f"no page {request.url.path!r} here")
    _, session, author = found
    try:
        fields = form_of(await bounded_body(request, FORM_BYTES))
    except TooLarge as exc:
        return page("Admin", f'<p class="error">{escape(exc)}</p>', status=413)
    if not same(fields.get("csrf"), session.csrf):
        return page("Admin", '<p class="error">the form is stale: <a href="/admin">back</a></p>',
                    author=author, session=session, status=403)
    contest_store = store(request)
    action, target = str(request.path_params["action"]), str(request.path_params["target"])
    if action == "revoke":
        if contest_store.authors.get(target) is None:
            return not_found_page(f"no author {target!r}", author, session)
        contest_store.authors.revoke(target)  # ends their sessions too
    elif action == "disable":
        submission = contest_store.submissions.get(target)
        if submission is None:
            return not_found_page("no such submission", author, session)
        contest(request).disable(submission)
    else:
        return not_found_page(f"no page {request.url.path!r} here", author, session)
    return RedirectResponse("/admin", status_code=303)


routes: list[BaseRoute] = [
    Route("/admin", admin, methods=["GET"]),
    Route("/admin/{action}/{target}", admin_action, methods=["POST"]),
]
