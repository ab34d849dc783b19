"""An author's own pages: ``/me`` lists their submissions with their states and an upload form;
``/me/submission/ID`` shows one: its state and reason, its build and check report, its bot's logs, faults and
matches, each match with a link to the replay from its own seat. A visitor without a session is sent to ``/login``.
"""

from __future__ import annotations

from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from arena.contest import mine
from arena.contest.config import ContestConfig
from arena.contest.pages import scrimmages
from arena.contest.pages.common import (
    FORM_BYTES,
    TooLarge,
    bounded_body,
    config,
    contest,
    escape,
    logged_in,
    not_found_page,
    own_submission,
    page,
    reader,
    replayed,
    same,
    store,
    submissions_table,
    when,
)
from arena.contest.service import SubmitError
from arena.contest.store import State, Submission
from arena.web.data import NotFound, Reader

UPLOAD_OVERHEAD = 64 * 1024
"""What a form upload may add to the archive (the multipart envelope, the CSRF field)."""


def upload_limit(contest_config: ContestConfig) -> int:
    """Return the bound of a form upload's body: the largest archive the contest takes and the form around it."""
    return contest_config.submissions.archive.archive_bytes + UPLOAD_OVERHEAD


def bodies(contest_config: ContestConfig) -> dict[tuple[str, str], int]:
    """Return the bound of each (method, path) of these pages that takes more than a form's fields."""
    return {("POST", "/me/submit"): upload_limit(contest_config)}


async def me(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    rows = store(request).submissions.all(author.name)
    url = str(request.base_url).rstrip("/")
    submissions = config(request).submissions
    body = (f"<h2>Submit a bot</h2><p>A <code>.tar.gz</code> of your bot's folder, with its <code>bot.toml</code>"
            f" at the top (<code>arena submit FOLDER --to {escape(url)}</code> makes and sends it). At most "
            f"{submissions.archive.archive_bytes // 1024 // 1024} MiB, {submissions.per_day} "
            f"submissions a day, {submissions.active} bots in the contest at once.</p>"
            '<form method="post" action="/me/submit" enctype="multipart/form-data">'
            f'<input type="hidden" name="csrf" value="{escape(session.csrf)}">'
            '<input type="file" name="archive" accept=".tar.gz,.tgz,application/gzip"> <button>submit</button>'
            f"</form><h2>Your submissions</h2>{submissions_table(rows)}"
            + scrimmages.section(request, author, session))
    return page(f"Bots of {author.name}", body, author=author, session=session)


async def me_submit(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    try:
        body = await bounded_body(request, upload_limit(config(request)))
    except TooLarge as exc:
        return page("Not submitted", f'<p class="error">{escape(exc)}</p>', author=author, session=session,
                    status=413)
    try:
        form = await replayed(request, body).form(max_files=1, max_fields=2, max_part_size=FORM_BYTES)
    except HTTPException as exc:
        return page("Not submitted", f'<p class="error">not a form upload: {escape(exc.detail)}</p>',
                    author=author, session=session, status=400)
    if not same(str(form.get("csrf") or ""), session.csrf):
        return page("Not submitted", '<p class="error">the form is stale or not from this site: '
                    '<a href="/me">try again</a></p>', author=author, session=session, status=403)
    upload = form.get("archive")
    if not isinstance(upload, UploadFile):
        return page("Not submitted", '<p class="error">choose your bot\'s .tar.gz first</p>', author=author,
                    session=session, status=400)
    data = await upload.read()
    await form.close()
    try:
        submission = contest(request).submit(author, data)
    except SubmitError as exc:
        return page("Not submitted", f'<p class="error">{escape(exc)}</p><p><a href="/me">Back</a></p>',
                    author=author, session=session, status=400)
    return RedirectResponse(f"/me/submission/{submission.id}", status_code=303)


def _matches_html(ladder: Reader, submission: Submission) -> str:
    try:
        matches = ladder.matches(bot=submission.ladder_name)["matches"]
        faults = ladder.bot(submission.ladder_name)["faults"]
    except NotFound:
        return '<p class="muted">No matches yet.</p>'
    rows = ""
    for m in matches:
        seat = next((s["seat"] for s in m["seats"] if s["bot"] == submission.ladder_name), None)
        own = next((s for s in m["seats"] if s["seat"] == seat), None)
        link = (f'<a href="/match/{m["id"]}?seat={seat}">from its seat</a>' if m["replay"] and seat is not None
                else '<span class="muted">shown once its deal set is complete</span>')
        result = f"place {own['place']}, total {own['total']}" if own is not None else ""
        rows += (f"<tr><td>{m['id']}</td><td>{m['deal']}</td><td class=\"left\">{escape(result)}</td>"
                 f"<td>{own['faults'] if own else 0}</td><td class=\"left\">{link}</td></tr>")
    table = ("<table><thead><tr><th>match</th><th>deal</th><th class=\"left\">result</th><th>faults</th>"
             f"<th class=\"left\">replay</th></tr></thead><tbody>{rows}</tbody></table>") if rows else \
        '<p class="muted">No matches yet.</p>'
    later = " (its reason once the deal set is complete)"
    fault_rows = "".join(f"<li>match {f['match']}, step {f['step']}: {escape(f['kind'])}"
                         f"{': ' + escape(f['detail']) if f['detail'] else later}</li>" for f in faults)
    return table + (f"<h3>Faults</h3><ul>{fault_rows}</ul>" if fault_rows else "")


async def submission_page(request: Request) -> Response:
    found = logged_in(request)
    if found is None:
        return RedirectResponse("/login", status_code=303)
    _, session, author = found
    submission = own_submission(request, author, str(request.path_params["id"]))
    if submission is None:
        return not_found_page("no such submission of yours", author, session)
    report = store(request).reports.get(submission.id)
    logs = "".join(f"<h3>{escape(log.name)}</h3>"
                   + (f'<p class="muted">(its first {log.cut} bytes are left out)</p>' if log.cut else "")
                   + f'<pre class="log">{escape(log.text)}</pre>' for log in contest(request).logs(submission))
    facts = (f"<p>Bot <b>{escape(submission.bot)}</b> version {submission.version}, by {escape(submission.author)}: "
             f'<b class="state-{escape(submission.state.value)}" id="state">{escape(submission.state.value)}</b>'
             + (f' <span id="reason">({escape(submission.reason)})</span>' if submission.reason else "")
             + f"; on the leaderboard as <code>{escape(submission.ladder_name)}</code>. Submitted "
             f"{escape(when(submission.created))}, archive <code>{escape(submission.content_hash[:16])}</code>.</p>")
    if submission.state in (State.QUEUED, State.BUILDING, State.CHECKING):
        facts += '<p class="muted">Reload the page to follow it.</p>'
    match_id, texts = mine.last_debug(reader(request), submission)
    debug = ("" if match_id is None else
             f'<h2>Debug text</h2><p class="muted">What your bot wrote with its answers in match {match_id} (the last '
             f"{len(texts)}); nobody else sees it. The whole of it: arena submit --replay {match_id} -o FILE, then "
             "arena replay FILE.</p>" + ('<pre class="log" id="debug">'
                                          + escape("\n".join(f"step {step}: {text}" for step, text in texts))
                                          + "</pre>" if texts else '<p class="muted">None in that match.</p>'))
    body = (facts + "<h2>Matches</h2>" + _matches_html(reader(request), submission) + debug
            + f'<h2>Build and check report</h2><pre class="log" id="report">{escape(report) or "(none yet)"}</pre>'
            + f"<h2>Logs</h2>{logs or '<p class=muted>No logs yet.</p>'}")
    return page(f"Submission {submission.bot} v{submission.version}", body, author=author, session=session)


routes: list[BaseRoute] = [
    Route("/me", me, methods=["GET"]),
    Route("/me/submit", me_submit, methods=["POST"]),
    Route("/me/submission/{id}", submission_page, methods=["GET"]),
]
