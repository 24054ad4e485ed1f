"""``oriole report --format html``: one self-contained page (no network, no script, nothing fetched) that stands
on its own: the leaderboard first, where the numbers come from (provenance) and what the intervals mean, the
charts as small multiples, the whole comparison and every experiment it counts, linked to its replay.

Pure over the rows ``Results`` reads, so it is tested without a database. Stored text (model names, maze names,
configurations) is shown, never obeyed: control characters and bidirectional overrides written out
(``terminal_safe``, which an SVG file needs anyway), then escaped. The same charts, laid out for a paper
column, are what ``oriole report --figures DIR`` writes (``figures``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from html import escape
from pathlib import Path

from oriole.statuses import Ending, ExperimentStatus
from oriole_workstation import charts, drawing, files
from oriole_workstation.charts import Cell, Panel, Sample, Series, Style
from oriole_workstation.display import terminal_safe
from oriole_workstation.intervals import DRAWS
from oriole_workstation.provenance import Provenance, counted
from oriole_workstation.report import (
    GroupBy,
    PanelKey,
    SeriesKey,
    agent_text,
    comparison_rows,
    detail_text,
    origin_of,
    panel_key,
    panel_title,
    panels_in_order,
    prompt_labels,
    rate_cell,
    running_note,
    series_key,
    series_order,
    table_cells,
)
from oriole_workstation.results import Filters, Results
from oriole_workstation.rows import (
    RUN_ENDINGS,
    ComparedExperiment,
    ComparisonRow,
    Grouped,
)

RUN_DEFINITION = (
    "Runs are the experiments that ended on the agent's merits: a success, a limit reached, or an "
    "ending the agent caused (such as stalling). Infrastructure and provider failures are errors and "
    "enter no rate; running experiments are not counted."
)
INTERVALS = (
    "Each success rate has a 95% Wilson score interval, which treats every run as an independent trial. "
    "Repeated runs on one maze are not independent (an agent that solves a maze tends to solve it again), "
    "so where the runs share mazes (more runs than mazes, at least two mazes) the maze interval is added: "
    f"the 2.5th to 97.5th percentile of the rate over {DRAWS:,} resamples of the mazes with replacement, "
    "each maze with all its runs (seeded, so the same data gives the same interval). An interval that "
    "rests on one maze says nothing about other mazes of its family."
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1240px; padding: 0 1rem; color: #222; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
.meta, figcaption, .note { color: #555; font-size: 0.9rem; }
figcaption { margin-top: 0.3rem; }
table { border-collapse: collapse; font-size: 0.8rem; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.4rem; text-align: left; vertical-align: top; }
thead th { background: #f2f2f2; } tbody th { font-weight: normal; }
td.number { text-align: right; font-variant-numeric: tabular-nums; } td { overflow-wrap: anywhere; }
.wide { overflow-x: auto; } thead th { overflow-wrap: anywhere; }
.detail { display: block; color: #555; font-size: 0.92em; overflow-wrap: anywhere; }
.rate { font-weight: 600; } .interval { display: block; color: #555; font-size: 0.92em; white-space: nowrap; }
.none { color: #777; font-style: italic; }
#comparison-table tbody th, #experiments-table tbody th { min-width: 11rem; }
#leaderboard { width: auto; min-width: 50%; } .runs { color: #555; white-space: nowrap; }
dl.provenance { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; font-size: 0.9rem; }
dl.provenance dt { font-weight: 600; } dl.provenance dd { margin: 0; overflow-wrap: anywhere; }
code, pre { font-size: 0.85rem; } pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f5f5f5;
                                         padding: 0.5rem; }
figure { margin: 1rem 0; } svg.chart { max-width: 100%; height: auto; display: block; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } figure { break-inside: avoid; } }
"""


def _shown(value: object) -> str:
    """Stored text as the page shows it: control characters written out, then escaped."""
    return escape(terminal_safe(str(value)))


# --- series and panels -----------------------------------------------------------------------------------


def series_of(rows: Sequence[Grouped]) -> dict[SeriesKey, Series]:
    """One series per model x prompt x compared configuration, labelled with only what tells them apart, in
    the order of agent, prompt and configuration."""
    prompts = prompt_labels(rows)
    found = {series_key(r): r for r in rows}
    return {
        key: Series(key, terminal_safe(agent_text(found[key])), terminal_safe(detail_text(found[key], prompts)), n)
        for n, key in enumerate(sorted(found, key=series_order))
    }


def _percent(value: Decimal | float | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def _no_runs(row: ComparisonRow) -> str:
    return "" if row.runs else rate_cell(row)


def _panels(rows: Sequence[ComparisonRow], by: GroupBy, cell: Callable[[ComparisonRow], Cell]) -> list[Panel]:
    """One panel per family and size (or maze), in the table's order, holding ``cell(row)`` for each series; a
    series with no row in a panel never ran there, and says so."""
    found: dict[PanelKey, dict[SeriesKey, Cell]] = {}
    for r in rows:
        found.setdefault(panel_key(r, by), {})[series_key(r)] = cell(r)
    return [Panel(terminal_safe(panel_title(key)), cells) for key, cells in found.items()]


def _rate(r: ComparisonRow, by: GroupBy) -> Cell:
    """A group's success rate with its Wilson interval and, where the runs share mazes, the maze interval."""
    if not r.runs or r.success_rate is None or r.success_rate_low is None or r.success_rate_high is None:
        return Cell(empty=_no_runs(r))  # a group with runs has all three
    band = r.maze_band
    note = (
        f"{terminal_safe(agent_text(r))} on {terminal_safe(panel_title(panel_key(r, by)))}: {r.successes} "
        f"of {r.runs} runs succeeded ({_percent(r.success_rate)}; 95% Wilson interval "
        f"{_percent(r.success_rate_low)}-{_percent(r.success_rate_high)}"
        + (f"; maze interval {_percent(band[0])}-{_percent(band[1])}" if band else "")
        + ")"
    )
    return Cell(
        float(r.success_rate),
        float(r.success_rate_low),
        float(r.success_rate_high),
        None if band is None else (float(band[0]), float(band[1])),
        note=note,
        count=f"{r.successes}/{r.runs}",
    )


def sample_panels(
    rows: Sequence[ComparisonRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    value: Callable[[ComparedExperiment], Decimal | int | None],
    endings: frozenset[str],
    missing: str,
    replays: dict[int, str],
) -> list[Panel]:
    """The experiments with one of ``endings`` that have a ``value``, split as the table is; a series says
    "no runs" where it has none and ``missing`` where it has runs but no sample."""
    grouped: dict[tuple[PanelKey, SeriesKey], list[Sample]] = {}
    for e in experiments:
        if e.ending not in endings or (found := value(e)) is None:
            continue
        note = (
            f"experiment {e.experiment_id} · {terminal_safe(e.maze)} · {e.actions} actions"
            + (f" · efficiency {float(e.path_efficiency):.3f}" if e.path_efficiency is not None else "")
            + f" · {e.tokens:,} tokens"
        )
        grouped.setdefault((panel_key(e, by), series_key(e)), []).append(
            Sample(float(found), note, replays.get(e.experiment_id))
        )

    def cell(r: ComparisonRow) -> Cell:
        samples = tuple(grouped.get((panel_key(r, by), series_key(r)), ()))
        return Cell(samples=samples, count=f"n={len(samples)}" if samples else "", empty=_no_runs(r) or missing)

    return _panels(rows, by, cell)


def _tokens(experiment: ComparedExperiment) -> int | None:
    """A run's input + output tokens; None for a run without any (a baseline's)."""
    return experiment.tokens or None


def _cost(r: ComparisonRow) -> Cell:
    """A group's dollars per success."""
    cost = r.cost_per_success
    if cost is None:
        return Cell(empty=_no_runs(r) or "no success")
    return Cell(float(cost), note=f"${float(cost):.4f} per success", count=f"${float(cost):.3f}")


# --- the charts --------------------------------------------------------------------------------------------


def _where(by: GroupBy) -> str:
    return "one maze" if by is GroupBy.maze else "one maze family and size (its runs pooled over the mazes)"


def figures(
    rows: Sequence[ComparisonRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    style: Style,
    origin: Provenance,
    replays: dict[int, str] | None = None,
) -> dict[str, drawing.Drawing]:
    """Every chart of the report, by file name: the success rates; path efficiency and actions to the goal of
    the successes; tokens per run and cost per success only where there are tokens and dollars. Each carries
    its provenance: a line at the end of its caption and every item in its SVG metadata."""
    return {
        name: drawing.with_provenance(d, origin.short(), origin.metadata())
        for name, d in _charts(rows, experiments, by, style, replays or {}).items()
    }


def _charts(
    rows: Sequence[ComparisonRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    style: Style,
    replays: dict[int, str],
) -> dict[str, drawing.Drawing]:
    series = list(series_of(rows).values())
    shared = any(r.maze_band is not None for r in rows)
    found = {
        "success": charts.dots(
            series,
            _panels(rows, by, lambda r: _rate(r, by)),
            charts.rate_axis("success rate"),
            style,
            "Success rate per agent",
            f"Each dot is an agent's success rate on {_where(by)}; the whisker is its 95% Wilson interval"
            + ("; the grey band, where the runs share mazes, the 95% bootstrap interval over mazes" if shared else "")
            + "; the numbers at the right are successes/runs.",
        ),
    }
    successes = frozenset({Ending.SUCCESS})
    efficiency = sample_panels(rows, experiments, by, lambda e: e.path_efficiency, successes, "no success", replays)
    found["efficiency"] = charts.distributions(
        series,
        efficiency,
        charts.value_axis([0.0, 1.0], "path efficiency (shortest path / moves)", False, charts.format_number),
        style,
        "Path efficiency of the successes",
        "Each marker is one success's path efficiency (1 is the shortest path); the thin line is the range and, "
        "from three successes on, the box spans the middle half and the thick line is the median; n counts the "
        "successes.",
    )
    actions = sample_panels(rows, experiments, by, lambda e: e.actions, successes, "no success", replays)
    found["actions"] = charts.distributions(
        series,
        actions,
        _axis(actions, "actions to the goal"),
        style,
        "Actions to the goal of the successes",
        "Each marker is the number of actions one success took to reach the goal; the thin line is the range and, "
        "from three successes on, the box spans the middle half and the thick line is the median; n counts the "
        "successes.",
    )
    tokens = sample_panels(rows, experiments, by, _tokens, RUN_ENDINGS, "no tokens", replays)
    spending = [s for s in series if any(s.key in p.cells and p.cells[s.key].samples for p in tokens)]
    left_out = "" if len(spending) == len(series) else "; agents without tokens (baselines) are left out"
    if spending:
        found["tokens"] = charts.distributions(
            spending,
            tokens,
            _axis(tokens, "input + output tokens per run"),
            style,
            "Tokens per run",
            "Each marker is one run's input + output tokens; the thin line is the range and, from three runs on, "
            f"the box spans the middle half and the thick line is the median; n counts the runs{left_out}.",
        )
    costs = [float(r.cost_per_success) for r in rows if r.cost_per_success]
    if spending and costs:
        found["cost"] = charts.dots(
            spending,
            _panels(rows, by, _cost),
            charts.value_axis(costs, "USD per success", False, lambda v: f"${v:g}"),
            style,
            "Cost per success",
            "Each dot is the cost of an agent's runs divided by its successes (USD, from the price list stored "
            f"with each experiment); the number at the right is that cost{left_out}.",
        )
    return found


def write_figures(results: Results, by: GroupBy, filters: Filters, folder: Path) -> list[Path]:
    """Each chart as a standalone SVG sized for a paper column (``charts.COLUMN``), a PNG at 300 dpi beside it
    where Pillow can draw one, and ``captions.md`` with every caption; returns the files written."""
    files.make_folder(folder, files.OutputRefused, "--figures")
    rows = comparison_rows(results, by, filters)
    if not rows:
        return []
    written, captions = [], []
    experiments = results.compared(filters)
    origin = origin_of(experiments, filters, by, results.database())
    for name, d in figures(rows, experiments, by, charts.COLUMN, origin).items():
        (folder / f"{name}.svg").write_text(drawing.to_svg(d) + "\n", encoding="utf-8")
        written.append(folder / f"{name}.svg")
        if drawing.png_possible():
            (folder / f"{name}.png").write_bytes(drawing.to_png(d))
            written.append(folder / f"{name}.png")
        captions.append(f"- `{name}.svg`: {d.title}. {d.caption}")
    (folder / "captions.md").write_text("\n".join(captions) + "\n", encoding="utf-8")
    return [*written, folder / "captions.md"]


def _axis(panels: Sequence[Panel], title: str) -> charts.Axis:
    """A count's axis over every panel's samples: on a log scale when they span 20 times or more."""
    values = [s.value for p in panels for c in p.cells.values() for s in c.samples]
    wide = bool(values) and max(values) / max(min(values), 1) >= 20
    return charts.value_axis(values, title, wide, charts.format_number)


def _figure(d: drawing.Drawing, chart_id: str) -> str:
    return (
        f'<figure id="figure-{chart_id}">{drawing.to_svg(d, element_id=chart_id)}'
        f"<figcaption>{escape(d.caption)}</figcaption></figure>"
    )


# --- tables ------------------------------------------------------------------------------------------------


def _agent_cell(agent: str, detail: str) -> str:
    return (
        f'<th scope="row">{_shown(agent)}'
        + (f'<span class="detail">{_shown(detail)}</span>' if detail else "")
        + "</th>"
    )


def leaderboard(rows: Sequence[ComparisonRow], by: GroupBy) -> str:
    """One row per agent (prompt and configuration below its name), one column per family and size (or maze):
    the success rate, its Wilson interval, the maze interval where there is one, and successes/runs."""
    series = series_of(rows)
    panels = panels_in_order(rows, by)
    found = {(series_key(r), panel_key(r, by)): r for r in rows}
    head = "".join(f'<th scope="col">{_shown(panel_title(p))}</th>' for p in panels)
    body = []
    for key, s in series.items():
        cells = []
        for p in panels:
            r = found.get((key, p))
            if r is None or not r.runs:
                cells.append(f'<td class="none">{escape(rate_cell(r))}</td>')
                continue
            band = r.maze_band
            maze = f'<span class="interval">maze {_percent(band[0])}-{_percent(band[1])}</span>' if band else ""
            cells.append(
                f'<td class="number"><span class="rate">{_percent(r.success_rate)}</span> '
                f'<span class="runs">{r.successes}/{r.runs}</span><span class="interval">'
                f"{_percent(r.success_rate_low)}-{_percent(r.success_rate_high)}</span>{maze}</td>"
            )
        body.append(f"<tr>{_agent_cell(s.agent, s.detail)}{''.join(cells)}</tr>")
    return (
        f'<div class="wide"><table id="leaderboard"><thead><tr><th scope="col">agent</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def _cell(value: object) -> str:
    text = _shown(value)
    numeric = (
        isinstance(value, int | float)
        or text.lstrip("$").replace(".", "").replace(",", "").replace("%", "").replace("-", "").isdigit()
    )
    return f'<td class="number">{text}</td>' if numeric else f"<td>{text}</td>"


def comparison_table(rows: Sequence[ComparisonRow], by: GroupBy) -> str:
    """The whole comparison, narrow enough for a 1,400 px screen: the configuration on a second line under the
    agent instead of a column of its own."""
    headers, cells = table_cells(rows, by)
    config = headers.index("config")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for i, h in enumerate(headers) if i != config)
    body = "".join(
        f"<tr>{_agent_cell(str(row[0]), '' if row[config] == '-' else str(row[config]))}"
        + "".join(_cell(v) for i, v in enumerate(row) if i not in (0, config))
        + "</tr>"
        for row in cells
    )
    return f'<table id="comparison-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def experiments_table(
    series: dict[SeriesKey, Series], experiments: Sequence[ComparedExperiment], replays: dict[int, str]
) -> str:
    """Every experiment the page counts, each linked to its replay when one was rendered."""
    headers = ("experiment", "agent", "maze", "ending", "status", "actions", "path efficiency", "tokens", "cost")
    rows = []
    for e in experiments:
        link = replays.get(e.experiment_id)
        ident = f'<a href="{escape(link)}">{e.experiment_id}</a>' if link else str(e.experiment_id)
        s = series.get(series_key(e))
        agent = _agent_cell(s.agent, s.detail) if s else _agent_cell(agent_text(e), "")
        cells = [
            e.maze,
            e.ending or ExperimentStatus.RUNNING,
            e.status,
            e.actions,
            "-" if e.path_efficiency is None else f"{float(e.path_efficiency):.3f}",
            e.tokens,
            f"${float(e.cost_usd):.4f}",
        ]
        rows.append(f'<tr><td class="number">{ident}</td>{agent}' + "".join(_cell(c) for c in cells) + "</tr>")
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    return f'<table id="experiments-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


# --- provenance --------------------------------------------------------------------------------------------


def _counted(counter: Counter, noun: str = "experiment") -> str:
    return ", ".join(
        f"<code>{_shown(value)}</code> ({counted(n, noun)})"
        for value, n in sorted(counter.items(), key=lambda item: str(item[0]))
    )


def _listed(values: Sequence[object], shown: int = 12) -> str:
    """A few values inline; more in a closed list, so a thousand seeds do not bury the page."""
    text = ", ".join(_shown(v) for v in values)
    if len(values) <= shown:
        return text
    return (
        f"<details><summary>{len(values)} values, {_shown(values[0])} to {_shown(values[-1])}</summary>{text}</details>"
    )


def provenance(origin: Provenance, by: GroupBy) -> str:
    """Where the page's numbers come from: when and by which code it was made, the database, the scope, the
    code (versions, commits, harnesses), prompts and seeds of the experiments, how many of them and on how many
    mazes, the query."""
    endings, started = origin.endings, origin.started
    prompts = Counter({f"{version} sha256:{digest}": n for (version, digest), n in origin.prompts.items()})
    items = [
        ("generated", f"{origin.generated:%Y-%m-%d %H:%M} UTC by oriole {escape(origin.version)}"),
        ("database", f"<code>{_shown(origin.database or 'not named')}</code>"),
        ("scope", _shown(origin.scope)),
        ("sweeps", _counted(origin.sweeps) or "none (no experiment was started by a sweep)"),
        (
            "experiments",
            f"{origin.experiments}: {counted(origin.runs, 'run')} "
            f"({counted(endings['success'], 'success')}), {counted(endings['error'], 'error')}, "
            f"{endings['running']} running"
            + (f"; started {started[0]:%Y-%m-%d %H:%M} to {started[1]:%Y-%m-%d %H:%M} UTC" if started else ""),
        ),
        ("mazes", f"{origin.grids} different grid{'s' if origin.grids != 1 else ''}: {_listed(origin.mazes)}"),
        ("code versions", _counted(origin.code_versions)),
        ("commits", _counted(origin.commits)),
        ("harness", _counted(origin.harnesses)),
        ("prompts", _counted(prompts)),
        ("seeds", _listed(origin.seeds) or "none"),
        (
            "query",
            f"<code>{escape(origin.query)}</code>"
            + (" (the maze interval: <code>oriole_workstation/intervals.py</code>)" if by is GroupBy.family else ""),
        ),
    ]
    return (
        '<dl class="provenance">'
        + "".join(f"<dt>{escape(term)}</dt><dd>{value}</dd>" for term, value in items)
        + "</dl>"
    )


# --- the page ----------------------------------------------------------------------------------------------


def render(results: Results, by: GroupBy, filters: Filters, replays: dict[int, str] | None = None) -> str:
    """The page over the experiments matching ``filters``, each linked to ``replays[experiment_id]`` when given."""
    return page(
        comparison_rows(results, by, filters),
        results.compared(filters),
        by,
        filters,
        replays or {},
        database=results.database(),
    )


def page(
    rows: Sequence[ComparisonRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    filters: Filters,
    replays: dict[int, str],
    database: str = "",
    now: datetime | None = None,
) -> str:
    """The whole page. ``rows`` is the comparison as the table groups it (``report.comparison_rows``),
    ``experiments`` what it counts (``Results.compared``), ``replays`` experiment id -> relative link."""
    read = origin_of(experiments, filters, by, database, now)
    meta = f"{read.scope} · {len(experiments)} experiments · generated {read.generated:%Y-%m-%d %H:%M} UTC"
    origin = f'<section id="provenance"><h2>Provenance</h2>{provenance(read, by)}</section>'
    if not rows:
        body = f"<p>No finished experiments match.</p>{origin}"
    else:
        drawn = figures(rows, experiments, by, charts.PAGE, read, replays)
        distributions = "".join(
            _figure(drawn[name], name) for name in ("efficiency", "actions", "tokens") if name in drawn
        )
        body = (
            f'<section id="leaderboard-section"><h2>Success rate</h2>{leaderboard(rows, by)}'
            f'<p class="note">Each cell: the success rate and successes/runs, its 95% Wilson interval below, '
            f"and the maze interval where the runs share mazes. {escape(RUN_DEFINITION)}</p>"
            f'<p class="note">{escape(running_note(rows))}</p></section>'
            f'{origin}<section id="intervals"><h2>The intervals</h2><p>{escape(INTERVALS)}</p></section>'
            f'<section id="success"><h2>Success rate per agent</h2>{_figure(drawn["success"], "success")}'
            f'</section><section id="distributions"><h2>Efficiency and effort</h2>{distributions}</section>'
            + (
                f'<section id="costs"><h2>Cost</h2>{_figure(drawn["cost"], "cost")}</section>'
                if "cost" in drawn
                else ""
            )
            + f'<section id="comparison"><h2>Comparison</h2>{comparison_table(rows, by)}'
            f'<p class="note">{escape(running_note(rows))}</p></section>'
            f'<section id="experiments"><h2>Experiments</h2><p class="note">'
            f"{'Each id opens its replay.' if replays else 'Render replays with --with-replays to link them.'}"
            f"</p>{experiments_table(series_of(rows), experiments, replays)}</section>"
        )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Oriole report</title>'
        f"<style>{_CSS}</style></head><body><header><h1>Oriole report</h1>"
        f'<p class="meta">{escape(meta)}</p></header>{body}</body></html>\n'
    )
