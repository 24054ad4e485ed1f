"""``oriole report``: the comparison view as a terminal table, CSV, JSON or an HTML page.

The numbers all come from SQL (``compare_experiments``, migrations/views/compare_experiments.sql); this module
only filters, formats and prints them, so the report and a researcher's own query always agree. The HTML page
(``report_html``) adds charts drawn from the same rows and the experiments they count.
"""

from __future__ import annotations

import csv
import io
import json
import textwrap
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any

from oriole_workstation import provenance
from oriole_workstation.display import (
    TERMINAL_COLUMNS,
    Shorten,
    columns,
    csv_safe,
    fit_columns,
    short_maze,
    shorten,
    table_width,
    terminal_safe,
)
from oriole_workstation.intervals import maze_interval
from oriole_workstation.provenance import Provenance
from oriole_workstation.results import EVERYTHING, Filters, Results
from oriole_workstation.rows import (
    ComparedExperiment,
    ComparisonRow,
    FailedSpend,
    Grouped,
    PooledComparisonRow,
    agent_name,
)


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    html = "html"
    markdown = "markdown"
    latex = "latex"


class GroupBy(StrEnum):
    family = "family"
    maze = "maze"


def _plain(value: object) -> object:
    """A database value as JSON and CSV want it: numbers as numbers, JSON as JSON."""
    if isinstance(value, Decimal):
        return float(value)
    return value


def as_json(rows: Sequence[ComparisonRow]) -> str:
    return json.dumps([{k: _plain(v) for k, v in asdict(row).items()} for row in rows], indent=2) + "\n"


def as_csv(rows: Sequence[ComparisonRow]) -> str:
    """Every column of the comparison, one row per group; ``config`` as a JSON object; a text cell is shown, never
    obeyed, by a terminal or a spreadsheet (``csv_safe``)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(asdict(rows[0])))  # RFC 4180 CRLF: a CR in a cell gets quoted
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: csv_safe(json.dumps(v, sort_keys=True) if isinstance(v, dict) else v) for k, v in asdict(row).items()}
        )
    return buffer.getvalue()


def config_text(config: dict[str, Any]) -> str:
    return " ".join(f"{k}={json.dumps(v)}" for k, v in sorted(config.items())) or "-"


def _percent(value: Decimal | float | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def _interval(low: Decimal | float | None, high: Decimal | float | None) -> str:
    return "-" if low is None else f"{_percent(low)}-{_percent(high)}"


def _number(value: Decimal | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _dollars(value: Decimal | None) -> str:
    return "-" if value is None else f"${float(value):.4f}"


def prompt_labels(rows: Sequence[Grouped]) -> dict[tuple[str, str], str]:
    """Each (prompt version, hash) as shown: the version, with the hash's first characters when one version
    was stored with two texts."""
    hashes: dict[str, set[str]] = {}
    for row in rows:
        hashes.setdefault(row.prompt_version, set()).add(row.prompt_hash)
    return {
        (version, h): version + (f"@{h[:8]}" if len(known) > 1 else "")
        for version, known in hashes.items()
        for h in known
    }


def table_cells(
    rows: Sequence[ComparisonRow], by: GroupBy = GroupBy.family
) -> tuple[tuple[str, ...], list[tuple[object, ...]]]:
    """The comparison's headers and one tuple of cells per group, as the terminal and the HTML page show them."""
    prompts = prompt_labels(rows)
    headers = (
        "agent",
        "prompt",
        "maze" if by is GroupBy.maze else "family",
        "size",
        "mazes",
        "config",
        "runs",
        "success",
        "95% CI",
        "maze CI",
        "median actions",
        "median efficiency",
        "tokens/run",
        "cost/run",
        "cost/success",
        "errors",
    )
    return headers, [
        (
            agent_text(r),
            prompts[r.prompt_version, r.prompt_hash],
            panel_key(r, by)[0],
            r.maze_size,
            r.mazes,
            config_text(r.config),
            r.runs,
            _percent(r.success_rate),
            _interval(r.success_rate_low, r.success_rate_high),
            _interval(*(r.maze_band or (None, None))),
            _number(r.median_actions_to_goal, 0),
            _number(r.median_path_efficiency, 3),
            _number(r.tokens_per_run, 0),
            _dollars(r.cost_per_run),
            _dollars(r.cost_per_success),
            r.errors,
        )
        for r in rows
    ]


MIN_SHRUNK = 12  # the narrowest an agent name is shortened to
PIVOT_AGENT_WIDTH = 36  # the narrow leaderboard: an agent's name at most this wide, its prompt and config after it


def narrow_cells(
    rows: Sequence[ComparisonRow], by: GroupBy = GroupBy.family, width: int | None = TERMINAL_COLUMNS
) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[str]]:
    """The comparison as a terminal shows it by default, in ``width`` columns (None: a pipe, nothing cut): the
    agent, the mazes, the runs, the success rate with its 95% interval, tokens and cost per run, errors; the prompt
    when the rows hold several; the compared configuration as a letter with a legend below the table (``config A:
    temperature=0.2``); the median actions to the goal and path efficiency where they still fit. The agent name is
    shortened only if the table would not fit otherwise (``display.fit_columns``). ``--wide`` gives
    ``table_cells``."""
    prompts = prompt_labels(rows)
    several = len(prompts) > 1
    legend = config_legend(rows)
    headers = (
        "agent",
        *(("prompt",) if several else ()),
        "maze" if by is GroupBy.maze else "mazes",
        *(("config",) if legend else ()),
        "runs",
        "success (95% CI)",
        "tokens",
        "cost/run",
        "errors",
    )
    cells = [
        (
            agent_text(r),
            *((prompts[r.prompt_version, r.prompt_hash],) if several else ()),
            short_maze(panel_key(r, by)[0]) if by is GroupBy.maze else f"{r.maze_family} {r.maze_size}",
            *((legend.get(config_text(r.config), "-"),) if legend else ()),
            r.runs,
            _rate_with_interval(r),
            _number(r.tokens_per_run, 0),
            _dollars(r.cost_per_run),
            r.errors,
        )
        for r in rows
    ]
    notes = legend_notes(legend, width)
    for header, values in (
        ("actions", [_number(r.median_actions_to_goal, 0) for r in rows]),
        ("efficiency", [_number(r.median_path_efficiency, 3) for r in rows]),
    ):
        wider = (*headers[:-3], header, *headers[-3:])  # before tokens/run, cost/run and errors
        cells_wider = [(*row[:-3], value, *row[-3:]) for row, value in zip(cells, values, strict=True)]
        if width is not None and table_width(wider, _shown(cells_wider)) > width:
            break
        headers, cells = wider, cells_wider
    return (*fit_columns(headers, _shown(cells), width, [Shorten("agent", MIN_SHRUNK, middle=True)]), notes)


def config_legend(rows: Sequence[ComparisonRow]) -> dict[str, str]:
    """Each compared configuration of the rows (``config_text``) and the letter a narrow table names it by."""
    return {
        text: chr(ord("A") + i) if i < 26 else str(i + 1)
        for i, text in enumerate(dict.fromkeys(config_text(r.config) for r in rows if r.config))
    }


def legend_notes(legend: dict[str, str], width: int | None = TERMINAL_COLUMNS) -> list[str]:
    """``config A: temperature=0.2``: a line per letter, below the table (cut to ``width``; None: whole)."""
    notes = [terminal_safe(f"config {key}: {text}") for text, key in legend.items()]
    return notes if width is None else [shorten(note, width) for note in notes]


def _shown(rows: Sequence[tuple[object, ...]]) -> list[tuple[str, ...]]:
    """The cells as a table shows them: text, never obeyed (``terminal_safe``)."""
    return [tuple(terminal_safe(str(v)) for v in row) for row in rows]


def _rate_with_interval(row: ComparisonRow) -> str:
    """``80.0% (49.0-94.3)``: the success rate and its 95% Wilson interval, in percent."""
    if row.success_rate is None or row.success_rate_low is None or row.success_rate_high is None:
        return "-"
    low, high = (f"{float(bound) * 100:.1f}" for bound in (row.success_rate_low, row.success_rate_high))
    return f"{_percent(row.success_rate)} ({low}-{high})"


def agent_text(row: Grouped) -> str:
    """The agent as every table, page and figure names it: its sweep-file label, else ``provider/model``."""
    return agent_name(row.agent_label, row.llm_provider, row.model_name)


def detail_text(row: Grouped, prompts: dict[tuple[str, str], str]) -> str:
    """What sets a group apart besides its agent: its prompt (when the rows hold several) and its compared
    configuration; empty when nothing does."""
    parts = [prompts[row.prompt_version, row.prompt_hash]] if len(prompts) > 1 else []
    if row.compared:
        parts.append(config_text(row.compared))
    return " · ".join(parts)


SeriesKey = tuple[str, str, str, str, str, str]  # provider, model, label, prompt version and hash, config as JSON
PanelKey = tuple[str, ...]  # (family, size), or (maze,)


def series_key(row: Grouped) -> SeriesKey:
    """A series (an agent with its prompt and compared configuration): what every chart draws as one row."""
    return (
        row.llm_provider,
        row.model_name,
        row.agent_label or "",
        row.prompt_version,
        row.prompt_hash,
        json.dumps(row.compared, sort_keys=True),
    )


def series_order(key: SeriesKey) -> tuple[object, ...]:
    """Series sorted by agent, prompt, then configuration, numbers by value (maxMoves 400 before 1500)."""
    config = json.loads(key[5])
    return (
        *key[:5],
        tuple(
            (k, (0, v, "") if isinstance(v, int | float) else (1, 0, json.dumps(v))) for k, v in sorted(config.items())
        ),
    )


def panel_key(row: Grouped, by: GroupBy) -> PanelKey:
    """The panel (a column of the leaderboard) a row or an experiment belongs to: its family and size, or its
    maze (a comparison by maze, and every experiment, names one)."""
    return (str(row.maze),) if by is GroupBy.maze else (row.maze_family, row.maze_size)


def panel_title(key: PanelKey) -> str:
    return " ".join(key)


def panels_in_order(rows: Sequence[Grouped], by: GroupBy) -> list[PanelKey]:
    """The panels in the comparison's order (family, then size, then maze)."""
    return list(dict.fromkeys(panel_key(r, by) for r in rows))


def rate_cell(row: ComparisonRow | None, narrow: bool = False) -> str:
    """A leaderboard cell: the success rate, its 95% Wilson interval and successes/runs (``narrow``: the
    interval's bounds without their percent signs); "no runs" without runs (an agent whose experiments all
    failed for other reasons has no rate, not 0%)."""
    if row is None or not row.runs:
        errors = row.errors if row else 0
        return "no runs" + (f" ({errors} error{'s' if errors > 1 else ''})" if errors else "")
    rate = (
        _rate_with_interval(row)
        if narrow
        else f"{_percent(row.success_rate)} ({_interval(row.success_rate_low, row.success_rate_high)})"
    )
    return f"{rate} {row.successes}/{row.runs}"


def pivot_cells(
    rows: Sequence[ComparisonRow],
    by: GroupBy = GroupBy.family,
    legend: dict[str, str] | None = None,
    agent_width: int | None = PIVOT_AGENT_WIDTH,
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The leaderboard: one row per agent (with its prompt and configuration), one column per maze family and
    size (or maze), each cell a ``rate_cell``. With a ``legend`` (``config_legend``) the table is the narrow
    one: configurations named by their letter, narrow cells, agents shortened to ``agent_width`` (None: whole)."""
    prompts = prompt_labels(rows)
    panels = panels_in_order(rows, by)
    found: dict[SeriesKey, dict[PanelKey, ComparisonRow]] = {}
    labels: dict[SeriesKey, str] = {}
    for r in rows:
        key = series_key(r)
        found.setdefault(key, {})[panel_key(r, by)] = r
        if legend is None:
            agent, detail = agent_text(r), detail_text(r, prompts)
        else:
            agent = terminal_safe(agent_text(r))
            agent = agent if agent_width is None else shorten(agent, agent_width)
            parts = [prompts[r.prompt_version, r.prompt_hash]] if len(prompts) > 1 else []
            detail = " · ".join([*parts, *([f"config {legend[config_text(r.config)]}"] if r.config else [])])
        labels[key] = agent + (f" · {detail}" if detail else "")
    narrow = legend is not None
    return (
        ("agent", *map(panel_title, panels)),
        [
            (labels[key], *(rate_cell(found[key].get(p), narrow) for p in panels))
            for key in sorted(found, key=series_order)
        ],
    )


def fit_pivot(
    headers: tuple[str, ...], rows: list[tuple[str, ...]], width: int | None
) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """The leaderboard in tables at most ``width`` wide (None: one table): the panels dealt, in order, into as few
    tables as hold them beside the agent column, which each table repeats (the agent shortened to fit one panel
    beside it, at the narrowest)."""
    if width is not None:
        widest = max((len(row[i]) for row in (headers, *rows) for i in range(1, len(headers))), default=0)
        headers, rows = fit_columns(
            headers, _shown(rows), width, [Shorten("agent", max(MIN_SHRUNK, width - 2 - widest), middle=True)]
        )
    shown = [headers, *(tuple(terminal_safe(v) for v in row) for row in rows)]
    widths = [max(len(row[i]) for row in shown) for i in range(len(headers))]
    tables: list[list[int]] = [[]]
    used = widths[0]
    for i in range(1, len(headers)):
        if tables[-1] and width is not None and used + 2 + widths[i] > width:
            tables.append([])
            used = widths[0]
        tables[-1].append(i)
        used += 2 + widths[i]
    return [
        ((headers[0], *(headers[i] for i in chosen)), [(row[0], *(row[i] for i in chosen)) for row in shown[1:]])
        for chosen in tables
    ]


def as_pivot(
    rows: Sequence[ComparisonRow],
    by: GroupBy = GroupBy.family,
    wide: bool = False,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The leaderboard for a terminal, with what its intervals are: in ``width`` columns (configurations named by
    a letter, the panels in as many tables as they need; None: one table, as wide as it is), or whole with
    ``wide``."""
    if not rows:
        return "no finished experiments match\n"
    if wide:
        text = columns(*pivot_cells(rows, by))
    else:
        legend = config_legend(rows)
        tables = fit_pivot(*pivot_cells(rows, by, legend, None if width is None else PIVOT_AGENT_WIDTH), width)
        text = "\n".join(columns(*table) for table in tables) + "".join(
            line + "\n" for line in legend_notes(legend, width)
        )
    note = running_note(rows)
    return text + "success rate (95% Wilson interval) successes/runs\n" + (note + "\n" if note else "")


def sql_literal(value: object) -> str:
    """A value as an SQL literal, for showing a query (standard_conforming_strings: only quotes double); a list
    as an ARRAY of its values."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return f"ARRAY[{', '.join(map(sql_literal, value))}]"
    if isinstance(value, datetime):
        return f"'{value.isoformat(sep=' ')}'::timestamptz"
    return "'" + str(value).replace("'", "''") + "'"


def comparison_query(filters: Filters, by: GroupBy) -> str:
    """The query behind the comparison, with the filters written in: what a researcher runs to check a number."""
    chosen = [f"{name} => {sql_literal(value)}" for name, value in filters.arguments().items() if value is not None]
    arguments = [f"experiments => ARRAY(SELECT id FROM chosen_experiments({', '.join(chosen)}))"] if chosen else []
    arguments.append(f"by_maze => {sql_literal(by is GroupBy.maze)}")
    return f"SELECT * FROM compare_experiments({', '.join(arguments)});"


def scope_text(filters: Filters, by: GroupBy) -> str:
    """The filters and the grouping in words: ``sweep ladder; one row per maze family and size``."""
    return filters.describe() + "; one row per " + ("maze" if by is GroupBy.maze else "maze family and size")


def origin_of(
    experiments: Sequence[ComparedExperiment],
    filters: Filters,
    by: GroupBy,
    database: str,
    now: datetime | None = None,
) -> Provenance:
    """The provenance of a report over ``experiments`` (``Results.compared``) made ``now``."""
    return provenance.read(
        experiments, scope_text(filters, by), comparison_query(filters, by), database, now or datetime.now(UTC)
    )


def running_note(rows: Sequence[ComparisonRow]) -> str:
    running = sum(r.running for r in rows)
    return f"({running} experiment(s) still running are not counted)" if running else ""


def as_table(
    rows: Sequence[ComparisonRow],
    by: GroupBy = GroupBy.family,
    wide: bool = False,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The comparison for a terminal: one line per model x prompt x maze family (or maze) x config, in ``width``
    columns (None: a pipe, nothing cut; ``wide``: every column)."""
    if not rows:
        return "no finished experiments match\n"
    if wide:
        text = columns(*table_cells(rows, by))
    else:
        headers, cells, notes = narrow_cells(rows, by, width)
        text = columns(headers, cells) + "".join(note + "\n" for note in notes)
    note = running_note(rows)
    return text + (note + "\n" if note else "")


def with_maze_intervals(rows: Sequence[ComparisonRow], by_maze: Sequence[ComparisonRow]) -> list[PooledComparisonRow]:
    """Each group's rows with ``maze_ci_low``/``maze_ci_high``: the bootstrap over mazes (``intervals``), from
    the same comparison per maze, where the runs share mazes (more runs than mazes) and there are at least two
    mazes to resample (one maze says nothing about other mazes); None elsewhere."""
    per_group: dict[tuple[object, ...], list[tuple[int, int]]] = {}
    for row in by_maze:
        per_group.setdefault(_group_key(row), []).append((row.runs, row.successes))
    out = []
    for row in rows:
        shared = row.runs > row.mazes >= 2
        interval = maze_interval(per_group.get(_group_key(row), [])) if shared else None
        low, high = (round(interval[0], 4), round(interval[1], 4)) if interval else (None, None)
        out.append(PooledComparisonRow(**vars(row), maze_ci_low=low, maze_ci_high=high))
    return out


def _group_key(row: ComparisonRow) -> tuple[object, ...]:
    return (*series_key(row), row.maze_family, row.maze_size)


def comparison_rows(results: Results, by: GroupBy, filters: Filters) -> Sequence[ComparisonRow]:
    """The comparison as every format reports it: grouped by family and size (or maze), with the maze
    bootstrap beside the Wilson interval."""
    rows = results.comparison(filters, by_maze=by is GroupBy.maze)
    return rows if by is GroupBy.maze else with_maze_intervals(rows, results.comparison(filters, by_maze=True))


def render_report(
    results: Results,
    output: Format = Format.table,
    by: GroupBy = GroupBy.family,
    filters: Filters = EVERYTHING,
    pivot: bool = False,
    wide: bool = False,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The comparison over the experiments matching ``filters``, as a table (with ``pivot``, the leaderboard) in
    ``width`` columns (None: a pipe, nothing cut), CSV or JSON (the HTML page is ``report_html.render`` and the
    Markdown and LaTeX tables are ``paper_tables.render_report``; both build on this module)."""
    rows = comparison_rows(results, by, filters)
    if output is Format.csv:
        return as_csv(rows)
    if output is Format.json:
        return as_json(rows)
    table = as_pivot(rows, by, wide, width) if pivot else as_table(rows, by, wide, width)
    notes = [failed_spend_note(results.failed_spend(filters)), over_budget_note(*results.over_budget(filters))]
    lines = [line for note in notes if note for line in (textwrap.wrap(note, width) if width else [note])]
    return table + "".join(line + "\n" for line in lines)


def over_budget_note(calls: int, runs: int) -> str:
    """A warning below a table when servers counted prompts over the context budget (``transcript`` shows which)."""
    if not calls:
        return ""
    return (
        f"{calls} model call(s) in {runs} run(s) had a prompt the server counted over the context budget: a server "
        "may cut such a prompt silently, so what the model saw may not be what is stored (oriole transcript shows "
        "them)"
    )


def failed_spend_note(spend: FailedSpend) -> str:
    """``spent on failed attempts: ...`` below a table, where any was: the calls a server answered in turns that
    then failed (retried, or ending the run in an error) are billed, and each run's tokens and cost count them."""
    if not spend.attempts:
        return ""
    return (
        f"spent on failed attempts: {spend.tokens:,} tokens, {_dollars(spend.cost_usd)} in {spend.calls} call(s) of "
        f"{spend.attempts} attempt(s) in {spend.runs} run(s); in their runs' tokens and cost"
    )
