"""The viewer's pages (Flask, Jinja2 templates autoescaped): sweeps, experiments, one experiment, a comparison.

Each route reads through the read-only connection (``reader``), builds plain values, and hands them to a template;
the pictures and tables are the report's and the animation's own (``report_html``, ``render``, ``transcript``), so a
page of the viewer and a static page never draw a thing two ways. Whatever a model or a sweep file wrote reaches a
page as text: the templates escape it, the shared renderers escape it, and the Content-Security-Policy lets no
inline script, no style attribute and no other origin run or load (a page fetches only from its own server).
"""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import psycopg
from flask import Flask, Response, abort, render_template, request, url_for
from markupsafe import Markup
from werkzeug.exceptions import HTTPException, SecurityError

from oriole_workstation import charts, render, report_html, transcript
from oriole_workstation.analysis import groups, pairs, success_by_step
from oriole_workstation.display import terminal_safe
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.report import PAIRS_NOTE, GroupBy, origin_of, spending_notes
from oriole_workstation.results import ENDINGS_LISTED, LISTING_ORDER, Filters, Listing
from oriole_workstation.sweep_display import sweep_status
from oriole_workstation.viewer.reader import Reader

ASSETS = Path(__file__).resolve().parents[1] / "assets"
PAGE_SIZE = 100
POLL_SECONDS = 2  # how often a sweep's page asks for its progress while it runs
# Nothing runs or loads but this server's own scripts, styles and the pictures inlined as data: a model's text
# that got past every escape still could not run a script, load a beacon or submit a form elsewhere.
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


class BadRequest(HTTPException):
    """A query parameter the page cannot use: the page says which and why (status 400)."""

    code = 400


def create_app(
    reader: Reader, hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1"), poll_seconds: float = POLL_SECONDS
) -> Flask:
    """The viewer over ``reader``. ``hosts``: the names a request may address it by (any other ``Host`` header
    is refused, so a web page elsewhere cannot reach it by rebinding its own name to this address);
    ``poll_seconds``: how often a running sweep's page asks for its progress."""
    app = Flask(__name__, static_folder=str(ASSETS), static_url_path="/static")
    app.config["TRUSTED_HOSTS"] = [*hosts, *(f"[{h}]" for h in hosts if ":" in h)]
    app.jinja_env.filters.update(shown=_shown, when=_when, money=_money, number=_number, ending=ending_text)
    app.jinja_env.globals.update(outcome=outcome_text, ordering=LISTING_ORDER, endings=ENDINGS_LISTED)

    @app.after_request
    def _secure(response: Response) -> Response:
        response.headers.update(HEADERS)
        if request.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-cache"
        return response

    @app.errorhandler(psycopg.OperationalError)
    def _database_gone(error: psycopg.OperationalError) -> tuple[str, int]:
        said = " ".join(str(error).split())
        return render_template(
            "error.html",
            status=503,
            message=f"the database cannot be reached: {said}; is "
            "it running (and, for the deployed one, is the port forward open)?",
        ), 503

    @app.errorhandler(SecurityError)
    def _foreign_host(error: SecurityError) -> Response:
        """A request that names another host (a page elsewhere whose name was rebound to this address): refused
        before any page is built."""
        return Response(f"400: this viewer answers to {', '.join(hosts)} only\n", 400, mimetype="text/plain")

    @app.errorhandler(HTTPException)
    def _http(error: HTTPException) -> tuple[str, int]:
        status = error.code or 500
        return render_template("error.html", status=status, message=error.description), status

    @app.get("/")
    def index() -> str:
        with reader.results() as results:
            sweeps = results.sweeps()
            recent = results.listing(Listing(limit=20))
        return render_template("index.html", sweeps=sweeps, experiments=recent)

    @app.get("/sweeps/<path:sweep_id>")
    def sweep(sweep_id: str) -> str:
        with reader.results() as results:
            status = sweep_status(sweep_id, results.sweep_plan(sweep_id), results.store.sweep_experiments(sweep_id))
            listed = results.listing(Listing(sweep=sweep_id, limit=1000))
        if not listed and status.planned is None:
            abort(404, f"no sweep {terminal_safe(sweep_id)} in this database")
        return render_template(
            "sweep.html", sweep_id=sweep_id, status=status, experiments=listed, poll_seconds=poll_seconds
        )

    @app.get("/sweeps/<path:sweep_id>/progress")
    def sweep_progress(sweep_id: str) -> Response:
        """The sweep's status and its experiments, as JSON: what its page polls while the sweep runs."""
        with reader.results() as results:
            status = sweep_status(sweep_id, results.sweep_plan(sweep_id), results.store.sweep_experiments(sweep_id))
            listed = results.listing(Listing(sweep=sweep_id, limit=1000))
        body = {
            "status": _plain(dataclasses.asdict(status)),
            "experiments": [
                {
                    "id": e.experiment_id,
                    "agent": terminal_safe(e.agent),
                    "maze": terminal_safe(e.maze),
                    "ending": ending_text(e.ending),
                    "ending_code": e.ending or "running",
                    "outcome": outcome_text(e.status, e.failure_reason),
                    "actions": e.actions,
                    "efficiency": _number(e.path_efficiency, 3),
                    "tokens": _number(e.tokens),
                    "cost": _money(e.cost_usd),
                    "started": _when(e.started_at),
                    "link": url_for("experiment", experiment_id=e.experiment_id),
                }
                for e in listed
            ],
        }
        return Response(json.dumps(body), mimetype="application/json")

    @app.get("/experiments")
    def experiments() -> str:
        chosen = _listing(request.args)
        with reader.results() as results:
            listed = results.listing(chosen)
            choices = results.listing_choices()
        total = listed[0].total if listed else 0
        pages = max(1, math.ceil(total / chosen.limit))
        return render_template(
            "experiments.html",
            experiments=listed,
            choices=choices,
            chosen=chosen,
            args=request.args,
            total=total,
            page=chosen.offset // chosen.limit + 1,
            pages=pages,
            link=_link,
        )

    @app.get("/experiments/<int:experiment_id>")
    def experiment(experiment_id: int) -> str:
        with reader.results() as results:
            detail = results.detail(experiment_id)
            record = results.experiment_run(experiment_id)
            if detail is None or record is None:
                abort(404, f"no experiment {experiment_id} in this database")
            previous, following = results.neighbours(experiment_id, detail.sweep_id)
            turns = transcript.turn_list(results.store.conn, experiment_id)
            try:  # the first turn gives the header and the system prompt; each turn is read when opened
                first: transcript.Transcript | None = transcript.load(results.store.conn, experiment_id, only=1)
            except transcript.TranscriptUnavailable:
                first = None
            run = render.Run.from_record(record)  # its actions stream from the connection, read here
        return render_template(
            "experiment.html",
            detail=detail,
            run=run,
            maze=Markup(render.svg(run, interactive=True)),
            controls=Markup(render.CONTROLS),
            data=Markup("".join(render.animation_data(run))),  # JSON safe inside <script>
            header=Markup(transcript.header_html(first)) if first else None,
            conversation=Markup(
                transcript.outline_html(
                    first, turns, lambda n: url_for("experiment_turn", experiment_id=experiment_id, number=n)
                )
            )
            if first
            else None,
            config=json.dumps(detail.config, indent=2, sort_keys=True),
            previous=previous,
            following=following,
        )

    @app.get("/experiments/<int:experiment_id>/turns/<int:number>")
    def experiment_turn(experiment_id: int, number: int) -> str:
        """One turn of the transcript, as the HTML its ``<details>`` holds (read when a reader opens it)."""
        with reader.results() as results:
            try:
                one = transcript.load(results.store.conn, experiment_id, only=number)
            except transcript.TranscriptUnavailable as error:
                abort(404, str(error))
        if not one.turns:
            abort(404, f"experiment {experiment_id} has no turn {number}")
        return transcript.turn_body(one.turns[0])

    @app.get("/compare")
    def compare() -> str:
        filters, by = _filters(request.args)
        with reader.results() as results:
            rows = groups(results, filters, by)
            experiments = results.compared(filters)
            origin = origin_of(experiments, filters, by, results.database())
            steps = success_by_step(results, filters, by) if rows else []
            paired = pairs(results, filters, by) if rows else []
            spent = spending_notes(rows)
        links = {e.experiment_id: url_for("experiment", experiment_id=e.experiment_id) for e in experiments}
        drawn = report_html.figures(rows, experiments, by, charts.PAGE, origin, links, steps) if rows else {}
        return render_template(
            "compare.html",
            filters=filters,
            by=by,
            args=request.args,
            rows=rows,
            origin=origin,
            leaderboard=Markup(report_html.leaderboard(rows, by)) if rows else None,
            figures=[Markup(report_html.figure_html(d, name)) for name, d in drawn.items()],
            table=Markup(report_html.comparison_table(rows, by)) if rows else None,
            notes=Markup(report_html.notes_list(rows, spent)),
            pairs=Markup(report_html.pairs_table(paired)) if paired else None,
            pairs_note=PAIRS_NOTE,
            experiments=Markup(report_html.experiments_table(report_html.series_of(rows), experiments, links)),
            provenance=Markup(report_html.provenance(origin, by)),
            intervals=report_html.INTERVALS,
            runs=report_html.RUN_DEFINITION,
        )

    return app


# --- query parameters -------------------------------------------------------------------------------------


def _text(args: Any, name: str) -> str | None:
    value = (args.get(name) or "").strip()
    return value or None


def _day(args: Any, name: str, after: bool = False) -> datetime | None:
    """A date (``2026-11-25``) as the start of that day in UTC (``after``: the start of the next day, so that an
    ``until`` date includes its day)."""
    text = _text(args, name)
    if text is None:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise BadRequest(f"{name} must be a date like 2026-11-25, not {terminal_safe(text)!r}") from None
    return datetime.combine(day + timedelta(days=after), time(), UTC)


def _listing(args: Any) -> Listing:
    """The experiment list's filters, order and page from the query string; a value it cannot use is a 400 that
    says which."""
    order = _text(args, "sort") or "id"
    if order not in LISTING_ORDER:
        raise BadRequest(f"sort must be one of {', '.join(LISTING_ORDER)}, not {terminal_safe(order)!r}")
    ending = _text(args, "ending")
    if ending is not None and ending not in ENDINGS_LISTED:
        raise BadRequest(f"ending must be one of {', '.join(ENDINGS_LISTED)}, not {terminal_safe(ending)!r}")
    page = _text(args, "page") or "1"
    if not page.isdigit() or int(page) < 1:
        raise BadRequest(f"page must be a whole number from 1, not {terminal_safe(page)!r}")
    return Listing(
        agent=_text(args, "agent"),
        model=_text(args, "model"),
        maze=_text(args, "maze"),
        ending=ending,
        tag=_text(args, "tag"),
        sweep=_text(args, "sweep"),
        since=_day(args, "since"),
        until=_day(args, "until", after=True),
        search=_text(args, "q"),
        order=order,
        descending=(_text(args, "order") or "desc") != "asc",
        limit=PAGE_SIZE,
        offset=(int(page) - 1) * PAGE_SIZE,
    )


def _values(args: Any, name: str) -> tuple[str, ...]:
    """Every value a query gives a name (``sweep=a&sweep=b``), blanks and repeats dropped."""
    return tuple(dict.fromkeys(v.strip() for v in args.getlist(name) if v.strip()))


def _filters(args: Any) -> tuple[Filters, GroupBy]:
    """The comparison's scope and grouping from the query string: the report's filters, each repeatable (a union
    of its values), and ``id`` for experiments chosen one by one (the experiment list's check boxes)."""
    by = _text(args, "by") or GroupBy.family.value
    if by not in GroupBy.__members__:
        raise BadRequest(f"by must be family or maze, not {terminal_safe(by)!r}")
    ids = _values(args, "id")
    if not all(i.isdigit() for i in ids):
        raise BadRequest(f"id must be experiment numbers, not {terminal_safe(', '.join(ids))!r}")
    filters = Filters(
        ids=tuple(int(i) for i in ids),
        sweeps=_values(args, "sweep"),
        models=_values(args, "model"),
        agents=_values(args, "agent"),
        mazes=_values(args, "maze"),
        prompts=_values(args, "prompt"),
        tags=_values(args, "tag"),
        since=_day(args, "since"),
        until=_day(args, "until", after=True),
    )
    return filters, GroupBy(by)


def _link(args: Any, **changes: object) -> str:
    """The experiment list's URL with ``changes`` to its query (None removes a parameter)."""
    query = {k: v for k, v in args.items() if k not in changes and v}
    query.update({k: str(v) for k, v in changes.items() if v is not None})
    return "/experiments" + (f"?{urlencode(query)}" if query else "")


# --- how values are shown -----------------------------------------------------------------------------------


def _shown(value: object) -> str:
    """Stored text as a page shows it: what a browser would obey or hide written out (the template escapes it)."""
    return terminal_safe("" if value is None else str(value))


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _money(value: Decimal | float | None) -> str:
    return "-" if value is None else f"${float(value):,.4f}"


def _number(value: Decimal | float | int | None, digits: int = 0) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _plain(value: object) -> object:
    """A value as JSON carries it: timestamps as ISO 8601, decimals as numbers."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    return value
