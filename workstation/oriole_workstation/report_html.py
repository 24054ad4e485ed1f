"""``oriole report --format html``: one self-contained page (no network, no script, nothing fetched) that stands
on its own: the leaderboard first, where the numbers come from (provenance) and what the intervals mean, the
charts as small multiples, the whole comparison and every experiment it counts, linked to its animation.

Pure over the rows ``Results`` reads, so it is tested without a database. Stored text (model names, maze names,
configurations) is shown, never obeyed: control characters and bidirectional overrides written out
(``terminal_safe``, which an SVG file needs anyway), then escaped. The same charts, laid out for a paper
column, are what ``oriole report --figures DIR`` writes (``figures``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from html import escape
from pathlib import Path

from oriole.statuses import Ending
from oriole_workstation import charts, drawing, files
from oriole_workstation.analysis import (
    FLAG_TEXT,
    Flag,
    GroupRow,
    IntervalKind,
    PairRow,
    groups,
    pairs,
    success_by_step,
)
from oriole_workstation.charts import Cell, Panel, Sample, Series, Style
from oriole_workstation.display import UNPRICED, dollars, priced_total, terminal_safe
from oriole_workstation.grouping import (
    GroupBy,
    PanelKey,
    SeriesKey,
    agent_text,
    detail_text,
    panel_key,
    panel_title,
    panels_in_order,
    prompt_labels,
    series_key,
    series_order,
)
from oriole_workstation.intervals import DRAWS
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.provenance import Provenance, counted
from oriole_workstation.report import PAIRS_NOTE, origin_of, pair_cells, rate_cell, running_note, spending_notes
from oriole_workstation.results import Filters, Results
from oriole_workstation.rows import ComparedExperiment, Grouped, StepRow

RUN_DEFINITION = (
    "Every run ends in one of four ways: success; agent failure (its action budget used, it gave up or stalled); "
    "censored (stopped by something outside the agent: the wall clock, the execution timeout, a stop, a "
    "deployment limit); error (a provider or the infrastructure failed). The success rate is over the decided "
    "runs (successes and agent failures); the rate over all runs counts censored and errored runs as failures. "
    "A repetition counts once, as its attempt that ended decided (else its latest); running experiments are not "
    "counted."
)
INTERVALS = (
    "Repeated runs on one maze are not independent (an agent that solves a maze tends to solve it again), so "
    "where the runs share mazes (more runs than mazes, at least two mazes) the interval shown first is over "
    f"mazes: the 2.5th to 97.5th percentile of the rate over {DRAWS:,} resamples of the mazes with replacement, "
    "each maze with all its runs (repetitions nested; seeded, so the same data gives the same interval). Where "
    "every maze has the same rate (all successes or all failures), every resample has it too, so the interval "
    "over mazes is instead Wilson's with each maze one trial (flagged w). The "
    "95% Wilson score interval, which treats every run as an independent trial, is beside it, and is the one "
    "shown where no runs share mazes. A rate on fewer than 10 different mazes is flagged: it says little about "
    "other mazes of its family."
)

ENDED = frozenset(Ending)  # every run that ended: what tokens and cost count

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1360px; padding: 0 1rem; color: #222; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ccc; padding-bottom: 0.2rem; }
.meta, figcaption, .note { color: #555; font-size: 0.9rem; }
figcaption { margin-top: 0.3rem; }
table { border-collapse: collapse; font-size: 0.8rem; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.4rem; text-align: left; vertical-align: top; }
thead th { background: #f2f2f2; } tbody th { font-weight: normal; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.wide { overflow-x: auto; } thead th { hyphens: none; }
.detail { display: block; color: #555; font-size: 0.92em; }
.rate { font-weight: 600; } .interval { display: block; color: #555; font-size: 0.92em; white-space: nowrap; }
.none { color: #777; font-style: italic; }
.flag { display: inline-block; margin: 0.15rem 0.2rem 0 0; padding: 0 0.3rem; border: 1px solid #888;
        border-radius: 0.2rem; font-size: 0.85em; color: #333; white-space: nowrap; }
#comparison-table tbody th, #experiments-table tbody th { min-width: 11rem; }
#experiments-table td:nth-child(3) { white-space: nowrap; }  /* a maze's name (perfect-11@0) stays whole */
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


def _no_runs(row: GroupRow) -> str:
    return "" if row.runs else rate_cell(row)


def _panels(rows: Sequence[GroupRow], by: GroupBy, cell: Callable[[GroupRow], Cell]) -> list[Panel]:
    """One panel per family and size (or maze), in the table's order, holding ``cell(row)`` for each series; a
    series with no row in a panel never ran there, and says so."""
    found: dict[PanelKey, dict[SeriesKey, Cell]] = {}
    for r in rows:
        found.setdefault(panel_key(r, by), {})[series_key(r)] = cell(r)
    return [Panel(terminal_safe(panel_title(key)), cells) for key, cells in found.items()]


def _rate(r: GroupRow, by: GroupBy) -> Cell:
    """A group's success rate over its decided runs with its interval as the whisker (over mazes where the runs
    share mazes, else Wilson's) and, behind it, the Wilson interval where the whisker is over mazes."""
    interval = r.interval
    if not r.runs or r.success_rate is None or interval is None:
        return Cell(empty=_no_runs(r))
    wilson = (
        (float(r.success_rate_low), float(r.success_rate_high))
        if interval.kind is IntervalKind.MAZES and r.success_rate_low is not None and r.success_rate_high is not None
        else None
    )
    note = (
        f"{terminal_safe(agent_text(r))} on {terminal_safe(panel_title(panel_key(r, by)))}: {r.successes} "
        f"of {r.runs} decided runs succeeded ({_percent(r.success_rate)}; 95% interval "
        f"{'over mazes' if wilson else 'Wilson'} {_percent(interval.low)}-{_percent(interval.high)}"
        + (f"; Wilson {_percent(wilson[0])}-{_percent(wilson[1])}" if wilson else "")
        + (f"; {r.censored} censored, {r.errors} errors" if r.censored or r.errors else "")
        + ")"
    )
    return Cell(
        float(r.success_rate),
        interval.low,
        interval.high,
        wilson,
        note=note,
        count=f"{r.successes}/{r.runs}",
    )


def sample_panels(
    rows: Sequence[GroupRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    value: Callable[[ComparedExperiment], Decimal | int | None],
    endings: frozenset[str],
    missing: str,
    animations: dict[int, str],
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
            Sample(float(found), note, animations.get(e.experiment_id))
        )

    def cell(r: GroupRow) -> Cell:
        samples = tuple(grouped.get((panel_key(r, by), series_key(r)), ()))
        return Cell(samples=samples, count=f"n={len(samples)}" if samples else "", empty=_no_runs(r) or missing)

    return _panels(rows, by, cell)


def _tokens(experiment: ComparedExperiment) -> int | None:
    """A run's input + output tokens; None for a run without any (a baseline's)."""
    return experiment.tokens or None


def _cost(r: GroupRow) -> Cell:
    """A group's dollars per success (at least that where some runs are unpriced)."""
    cost = r.cost_per_success
    if cost is None:
        return Cell(empty=_no_runs(r) or ("unpriced" if r.unpriced_runs else "no success"))
    least = "at least " if r.unpriced_runs else ""
    return Cell(
        float(cost),
        note=f"{least}${float(cost):.4f} per success" + (f" ({r.unpriced_runs} runs unpriced)" if least else ""),
        count=("≥" if least else "") + f"${float(cost):.3f}",
    )


# --- the charts --------------------------------------------------------------------------------------------


def _where(by: GroupBy) -> str:
    return "one maze" if by is GroupBy.maze else "one maze family and size (its runs pooled over the mazes)"


def figures(
    rows: Sequence[GroupRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    style: Style,
    origin: Provenance,
    animations: dict[int, str] | None = None,
    steps: Sequence[StepRow] = (),
) -> dict[str, drawing.Drawing]:
    """Every chart of the report, by file name: the success rates; path efficiency and actions to the goal of
    the successes; tokens per run and cost per success only where there are tokens and dollars. Each carries
    its provenance: a line at the end of its caption and every item in its SVG metadata."""
    return {
        name: drawing.with_provenance(d, origin.short(), origin.metadata())
        for name, d in _charts(rows, experiments, by, style, animations or {}, steps).items()
    }


def _charts(
    rows: Sequence[GroupRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    style: Style,
    animations: dict[int, str],
    steps: Sequence[StepRow] = (),
) -> dict[str, drawing.Drawing]:
    series = list(series_of(rows).values())
    shared = any(r.maze_band is not None for r in rows)
    found = {
        "success": charts.dots(
            series,
            _panels(rows, by, lambda r: _rate(r, by)),
            charts.rate_axis("success rate over decided runs"),
            style,
            "Success rate per agent",
            f"Each dot is an agent's success rate over its decided runs on {_where(by)}; the whisker is its 95% "
            + (
                "interval over mazes (a bootstrap, repetitions nested; Wilson's with the mazes as trials where "
                "every maze has the same rate, flag w) where the runs share mazes, else its Wilson interval; the "
                "grey band behind a whisker over mazes is the Wilson interval"
                if shared
                else "Wilson interval"
            )
            + "; the numbers at the right are successes/decided runs.",
        ),
    }
    if steps:
        found["success-by-step"] = _success_by_step(series, steps, by, style)
    successes = frozenset({Ending.SUCCESS})
    efficiency = sample_panels(rows, experiments, by, lambda e: e.path_efficiency, successes, "no success", animations)
    found["efficiency"] = charts.distributions(
        series,
        efficiency,
        charts.value_axis([0.0, 1.0], "path efficiency (optimum / path length)", False, charts.format_number),
        style,
        "Path efficiency of the successes",
        "Each marker is one success's path efficiency: the optimum of its goal condition over the length of the path "
        "it walked (1 is a shortest run, nothing is above 1); the thin line is the range and, "
        "from three successes on, the box spans the middle half and the thick line is the median; n counts the "
        "successes.",
    )
    actions = sample_panels(rows, experiments, by, lambda e: e.actions, successes, "no success", animations)
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
    tokens = sample_panels(rows, experiments, by, _tokens, ENDED, "no tokens", animations)
    spending = [s for s in series if any(s.key in p.cells and p.cells[s.key].samples for p in tokens)]
    left_out = "" if len(spending) == len(series) else "; agents without tokens (baselines) are left out"
    if spending:
        found["tokens"] = charts.distributions(
            spending,
            tokens,
            _axis(tokens, "input + output tokens per run"),
            style,
            "Tokens per run",
            "Each marker is one attempt's input + output tokens (every ended run, censored, errored and retried "
            "ones included); the thin line is the range and, from three runs on, "
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
            "Each dot is the cost of every attempt of an agent's runs divided by its successes (USD, from the price "
            "list stored with each experiment; ≥: some runs have no price, so the cost is at least this); the "
            f"number at the right is that cost{left_out}.",
        )
    return found


def _success_by_step(
    series: Sequence[charts.Series], steps: Sequence[StepRow], by: GroupBy, style: Style
) -> drawing.Drawing:
    """Each group's Kaplan-Meier curve (``success_by_step``), one panel per family and size (or maze)."""
    points: dict[PanelKey, dict[SeriesKey, list[StepRow]]] = {}
    for step in steps:
        points.setdefault(panel_key(step, by), {}).setdefault(series_key(step), []).append(step)
    panels = [
        (
            terminal_safe(panel_title(key)),
            {
                s: charts.Curve(
                    tuple((float(r.step), float(r.success_share)) for r in found),
                    tuple(float(r.step) for r in found if r.censored),
                )
                for s, found in drawn.items()
            },
        )
        for key, drawn in points.items()
    ]
    return charts.curves(
        [s for s in series if any(s.key in drawn for _, drawn in panels)],
        panels,
        style,
        "Success by step",
        "Each curve is an agent's Kaplan-Meier estimate of the share of its runs that reached the goal within so "
        "many actions, on " + _where(by) + ". A run censored (the wall clock, a timeout, a stop, a spend cap) or "
        "errored leaves the runs at risk at its step without counting as a failure (a short tick marks it); an "
        "agent failure never reaches the goal. Without censoring a curve ends at the success rate over the decided "
        "runs.",
    )


def write_figures(results: Results, by: GroupBy, filters: Filters, folder: Path) -> list[Path]:
    """Each chart as a standalone SVG sized for a paper column (``charts.COLUMN``), a PNG at 300 dpi beside it
    where Pillow can draw one, and ``captions.md`` with every caption; returns the files written."""
    files.make_folder(folder, files.OutputRefused, "--figures")
    rows = groups(results, filters, by)
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


def figure_html(d: drawing.Drawing, chart_id: str) -> str:
    return (
        f'<figure id="figure-{chart_id}">{drawing.to_svg(d, element_id=chart_id)}'
        f"<figcaption>{escape(d.caption)}</figcaption></figure>"
    )


# --- tables ------------------------------------------------------------------------------------------------


def breakable(text: str) -> str:
    """Stored text shown (``_shown``) with a line-break opportunity after each ``/ . : _ - @``: a long model id
    (``bedrock/us.anthropic.claude-haiku-4-5``) wraps between its parts, never inside a word or a number."""
    return re.sub(r"([/.:_@-])(?=\w)", r"\1<wbr>", _shown(text))


def _agent_cell(agent: str, detail: str) -> str:
    return (
        f'<th scope="row">{breakable(agent)}'
        + (f'<span class="detail">{breakable(detail)}</span>' if detail else "")
        + "</th>"
    )


def _interval_text(interval, kind_shown: bool = True) -> str:
    if interval is None:
        return "-"
    kind = ("maze " if interval.kind is IntervalKind.MAZES else "Wilson ") if kind_shown else ""
    return f"{kind}{_percent(interval.low)}-{_percent(interval.high)}"


def _flags(r: GroupRow) -> str:
    """The group's flags as short labels, each explained in its tooltip (``FLAG_TEXT``)."""
    labels = {
        Flag.FEW_MAZES: "few mazes",
        Flag.UNDECIDED: "censored/errors",
        Flag.UNPRICED: "unpriced",
        Flag.CONFOUND: "confounded",
        Flag.MAZES_AS_TRIALS: "mazes as trials",
    }
    return "".join(f'<span class="flag" title="{escape(FLAG_TEXT[flag])}">{labels[flag]}</span>' for flag in r.flags)


def leaderboard(rows: Sequence[GroupRow], by: GroupBy) -> str:
    """One row per agent (prompt and configuration below its name), one column per family and size (or maze):
    the success rate over the decided runs, successes/runs, its interval (over mazes where the runs share mazes,
    else Wilson's), the rate over all runs where some were censored or errored, and the flags."""
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
            every = (
                f'<span class="interval">all runs {_percent(r.success_rate_all)} '
                f"({_interval_text(r.interval_all, False)}), {r.censored} censored, "
                f"{counted(r.errors, 'error')}</span>"
                if r.censored or r.errors
                else ""
            )
            cells.append(
                f'<td class="number"><span class="rate">{_percent(r.success_rate)}</span> '
                f'<span class="runs">{r.successes}/{r.runs}</span><span class="interval">'
                f"{_interval_text(r.interval)}</span>{every}{_flags(r)}</td>"
            )
        body.append(f"<tr>{_agent_cell(s.agent, s.detail)}{''.join(cells)}</tr>")
    return (
        f'<div class="wide"><table id="leaderboard"><thead><tr><th scope="col">agent</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def notes_list(rows: Sequence[GroupRow], spent: Sequence[str] = ()) -> str:
    """What the flags mean, what else differs between the groups (``confounds``) and what was spent beside the
    groups' rows (``spent``: ``report.spending_notes``, failed attempts and prompts over the context budget), as a
    list; empty when nothing is raised."""
    used = [flag for flag in Flag if any(flag in r.flags for r in rows)]
    confounded = list(dict.fromkeys(note for r in rows for note in r.confounds))
    items = [f"<li><strong>{escape(flag.value)}</strong>: {escape(FLAG_TEXT[flag])}</li>" for flag in used]
    items += [f"<li>{_shown(note)}</li>" for note in confounded]
    items += [f"<li>{_shown(note)}</li>" for note in spent]
    return f'<ul id="notes">{"".join(items)}</ul>' if items else ""


def _cell(value: object) -> str:
    text = _shown(value)
    numeric = (
        isinstance(value, int | float)
        or text.lstrip("$").replace(".", "").replace(",", "").replace("%", "").replace("-", "").isdigit()
    )
    return f'<td class="number">{text}</td>' if numeric else f"<td>{text}</td>"


def _lines(*parts: str) -> str:
    """A cell of several short lines (already escaped), the first one bold."""
    first, *rest = parts
    return f'<span class="rate">{first}</span>' + "".join(f'<span class="interval">{p}</span>' for p in rest)


def _rate_lines(rate, maze_low, maze_high, wilson_low, wilson_high) -> str:
    if rate is None:
        return "-"
    maze = [f"maze {_percent(maze_low)}-{_percent(maze_high)}"] if maze_low is not None else []
    return _lines(_percent(rate), *maze, f"Wilson {_percent(wilson_low)}-{_percent(wilson_high)}")


def comparison_table(rows: Sequence[GroupRow], by: GroupBy) -> str:
    """The whole comparison, narrow enough for a 1,400 px screen: per group its mazes, runs and the count of each
    ending, both rates with both intervals, efficiency (SPL, the medians of the successes), tokens, cost and
    flags, a cell holding a few short lines (the prompt and configuration under the agent)."""
    prompts = prompt_labels(rows)
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "agent",
            "maze" if by is GroupBy.maze else "mazes",
            "decided runs",
            "endings",
            "success (decided runs)",
            "success (all runs)",
            "efficiency",
            "tokens/run",
            "cost",
            "flags",
        )
    )
    body = []
    for r in rows:
        place = _shown(panel_title(panel_key(r, by))) + ("" if by is GroupBy.maze else f" · {r.mazes} mazes")
        cost = (
            "-"
            if not r.all_runs
            else UNPRICED
            if r.cost_usd is None
            else _lines(
                escape(_cost_text(r.cost_per_run, r)) + "/run",
                escape(_cost_text(r.cost_per_success, r)) + "/success",
                "total " + escape(priced_total(r.cost_usd, r.unpriced_runs)),
            )
        )
        cells = [
            place,
            _lines(f"{r.runs} decided", f"of {r.all_runs}" + (f", {r.running} running" if r.running else "")),
            _lines(
                f"{r.successes} success",
                f"{r.agent_failures} agent failure",
                f"{r.censored} censored",
                counted(r.errors, "error"),
                *([f"{r.superseded} run again"] if r.superseded else []),
            ),
            _rate_lines(r.success_rate, r.maze_ci_low, r.maze_ci_high, r.success_rate_low, r.success_rate_high),
            _rate_lines(
                r.success_rate_all,
                r.maze_ci_all_low,
                r.maze_ci_all_high,
                r.success_rate_all_low,
                r.success_rate_all_high,
            ),
            _lines(
                f"SPL {_number(r.spl, 3)} decided",
                f"SPL {_number(r.spl_all, 3)} all runs",
                f"median efficiency {_number(r.median_path_efficiency, 3)}",
                f"median path {_number(r.median_path_length, 0)}, actions {_number(r.median_actions_to_goal, 0)}",
            ),
            _number(r.tokens_per_run, 0),
            cost,
            _flags(r) or "-",
        ]
        agent = _agent_cell(agent_text(r), detail_text(r, prompts))
        body.append(f"<tr>{agent}" + "".join(f'<td class="number">{c}</td>' for c in cells) + "</tr>")
    return f'<table id="comparison-table"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def pairs_table(rows: Sequence[PairRow]) -> str:
    """The paired comparisons (``report.pair_cells``): every two agents of the same mazes over the runs they
    share, the difference with its paired interval over mazes, McNemar's exact p before and after Holm's."""
    headers, cells = pair_cells(rows)
    head = "".join(f'<th scope="col">{escape(h)}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="number">{_shown(c)}</td>' for c in row) + "</tr>" for row in cells)
    return f'<table id="pairs-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _number(value: Decimal | float | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _cost_text(value: Decimal | None, r: GroupRow) -> str:
    if r.cost_usd is None:
        return UNPRICED
    return ("≥" if r.unpriced_runs else "") + dollars(value)


def experiments_table(
    series: dict[SeriesKey, Series], experiments: Sequence[ComparedExperiment], animations: dict[int, str]
) -> str:
    """Every experiment the page counts, each linked to its animation when one was rendered."""
    headers = (
        "experiment",
        "agent",
        "maze",
        "ending",
        "cause",
        "counted",
        "actions",
        "path",
        "optimum",
        "path efficiency",
        "tokens",
        "cost",
    )
    rows = []
    for e in experiments:
        link = animations.get(e.experiment_id)
        ident = f'<a href="{escape(link)}">{e.experiment_id}</a>' if link else str(e.experiment_id)
        s = series.get(series_key(e))
        agent = _agent_cell(s.agent, s.detail) if s else _agent_cell(agent_text(e), "")
        cells = [
            e.maze,
            ending_text(e.ending),
            outcome_text(e.status, e.failure_reason),
            "yes" if e.counted else "no (run again)",
            e.actions,
            e.path_length,
            e.optimal_path_length,
            "-" if e.path_efficiency is None else f"{float(e.path_efficiency):.3f}",
            e.tokens,
            dollars(e.cost_usd),
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
    code (versions, commits, harnesses), model builds, prompts and seeds of the experiments, how many of them and on
    how many mazes, the query."""
    endings, started = origin.endings, origin.started
    prompts = Counter({f"{version} sha256:{digest}": n for (version, digest), n in origin.prompts.items()})
    items = [
        ("generated", f"{origin.generated:%Y-%m-%d %H:%M} UTC by oriole {escape(origin.version)}"),
        ("database", f"<code>{_shown(origin.database or 'not named')}</code>"),
        ("scope", _shown(origin.scope)),
        ("sweeps", _counted(origin.sweeps) or "none (no experiment was started by a sweep)"),
        (
            "experiments",
            f"{origin.experiments}: {counted(origin.runs, 'decided run')} "
            f"({counted(endings['success'], 'success')}), {endings['censored']} censored, "
            f"{counted(endings['error'], 'error')}, {endings['running']} running"
            + (f"; started {started[0]:%Y-%m-%d %H:%M} to {started[1]:%Y-%m-%d %H:%M} UTC" if started else ""),
        ),
        ("mazes", f"{origin.grids} different grid{'s' if origin.grids != 1 else ''}: {_listed(origin.mazes)}"),
        ("code versions", _counted(origin.code_versions)),
        ("commits", _counted(origin.commits)),
        ("harness", _counted(origin.harnesses)),
        ("model builds", _counted(origin.models) or "none (no model called)"),
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


def render(results: Results, by: GroupBy, filters: Filters, animations: dict[int, str] | None = None) -> str:
    """The page over the experiments matching ``filters``, each linked to ``animations[experiment_id]`` when given."""
    rows = groups(results, filters, by)
    return page(
        rows,
        results.compared(filters),
        by,
        filters,
        animations or {},
        database=results.database(),
        steps=success_by_step(results, filters, by),
        paired=pairs(results, filters, by),
        spent=spending_notes(rows),
    )


def page(
    rows: Sequence[GroupRow],
    experiments: Sequence[ComparedExperiment],
    by: GroupBy,
    filters: Filters,
    animations: dict[int, str],
    database: str = "",
    now: datetime | None = None,
    steps: Sequence[StepRow] = (),
    paired: Sequence[PairRow] = (),
    spent: Sequence[str] = (),
) -> str:
    """The whole page. ``rows`` is the comparison as the table groups it (``analysis.groups``),
    ``experiments`` what it counts (``Results.compared``), ``animations`` experiment id -> relative link, ``steps``
    the success-by-step curves (``analysis.success_by_step``), ``paired`` the paired comparisons
    (``analysis.pairs``), ``spent`` the notes on what was spent beside the groups' rows
    (``report.spending_notes``)."""
    read = origin_of(experiments, filters, by, database, now)
    meta = f"{read.scope} · {len(experiments)} experiments · generated {read.generated:%Y-%m-%d %H:%M} UTC"
    origin = f'<section id="provenance"><h2>Provenance</h2>{provenance(read, by)}</section>'
    if not rows:
        body = f"<p>No finished experiments match.</p>{origin}"
    else:
        drawn = figures(rows, experiments, by, charts.PAGE, read, animations, steps)
        distributions = "".join(
            figure_html(drawn[name], name) for name in ("efficiency", "actions", "tokens") if name in drawn
        )
        body = (
            f'<section id="leaderboard-section"><h2>Success rate</h2>{leaderboard(rows, by)}'
            f'<p class="note">Each cell: the success rate over the decided runs and successes/runs, its 95% '
            "interval below (over mazes where the runs share mazes, else Wilson's), the rate over all runs where "
            f"some were censored or errored, and the flags. {escape(RUN_DEFINITION)}</p>"
            f"{notes_list(rows, spent)}"
            f'<p class="note">{escape(running_note(rows))}</p></section>'
            f'{origin}<section id="intervals"><h2>The intervals</h2><p>{escape(INTERVALS)}</p></section>'
            f'<section id="success"><h2>Success rate per agent</h2>{figure_html(drawn["success"], "success")}'
            f"</section>"
            + (
                f'<section id="success-by-step"><h2>Success by step</h2>'
                f"{figure_html(drawn['success-by-step'], 'success-by-step')}</section>"
                if "success-by-step" in drawn
                else ""
            )
            + (
                f'<section id="pairs"><h2>Paired comparisons</h2>{pairs_table(paired)}'
                f'<p class="note">{escape(PAIRS_NOTE)}</p></section>'
                if paired
                else ""
            )
            + f'<section id="distributions"><h2>Efficiency and effort</h2>{distributions}</section>'
            + (
                f'<section id="costs"><h2>Cost</h2>{figure_html(drawn["cost"], "cost")}</section>'
                if "cost" in drawn
                else ""
            )
            + f'<section id="comparison"><h2>Comparison</h2>{comparison_table(rows, by)}'
            f'<p class="note">{escape(running_note(rows))}</p></section>'
            f'<section id="experiments"><h2>Experiments</h2><p class="note">'
            f"{'Each id opens its animation.' if animations else 'Link them with --with-animations.'}"
            f"</p>{experiments_table(series_of(rows), experiments, animations)}</section>"
        )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Oriole report</title>'
        f"<style>{_CSS}</style></head><body><header><h1>Oriole report</h1>"
        f'<p class="meta">{escape(meta)}</p></header>{body}</body></html>\n'
    )
