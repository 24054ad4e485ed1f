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

from oriole_workstation import provenance
from oriole_workstation.analysis import (
    FLAG_TEXT,
    INTERVAL_NOTES,
    WILSON_MARK,
    Flag,
    GroupRow,
    Interval,
    IntervalKind,
    PairRow,
    Spend,
    groups,
    pairs,
    total_spend,
)
from oriole_workstation.display import (
    TERMINAL_COLUMNS,
    UNPRICED,
    Drop,
    Shorten,
    columns,
    csv_safe,
    fit_columns,
    priced_total,
    short_maze,
    shorten,
    table_width,
    terminal_safe,
)
from oriole_workstation.grouping import (
    GroupBy,
    PanelKey,
    SeriesKey,
    agent_text,
    config_text,
    detail_text,
    panel_key,
    panel_title,
    panels_in_order,
    prompt_labels,
    series_key,
    series_order,
)
from oriole_workstation.provenance import Provenance
from oriole_workstation.results import EVERYTHING, Filters, Results
from oriole_workstation.rows import ComparedExperiment, ComparisonRow


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"
    html = "html"
    markdown = "markdown"
    latex = "latex"


def _plain(value: object) -> object:
    """A database value as JSON and CSV want it: numbers as numbers, JSON as JSON."""
    if isinstance(value, Decimal):
        return float(value)
    return value


def as_json(rows: Sequence[ComparisonRow | PairRow]) -> str:
    """Every column of every group, numbers as numbers (``confounds`` a list)."""
    return json.dumps([{k: _plain(v) for k, v in asdict(row).items()} for row in rows], indent=2) + "\n"


def as_csv(rows: Sequence[ComparisonRow | PairRow]) -> str:
    """Every column of the comparison, one row per group; ``config`` as a JSON object, ``confounds`` as a JSON list;
    a text cell is shown, never obeyed, by a terminal or a spreadsheet (``csv_safe``)."""
    if not rows:
        return ""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(asdict(rows[0])))  # RFC 4180 CRLF: a CR in a cell gets quoted
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {
                k: csv_safe(json.dumps(v, sort_keys=True) if isinstance(v, dict | list | tuple) else v)
                for k, v in asdict(row).items()
            }
        )
    return buffer.getvalue()


def _percent(value: Decimal | float | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def _interval(low: Decimal | float | None, high: Decimal | float | None) -> str:
    return "-" if low is None else f"{_percent(low)}-{_percent(high)}"


def _number(value: Decimal | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _dollars(value: Decimal | None) -> str:
    return "-" if value is None else f"${float(value):.4f}"


def _rate(value: Decimal | float | None, interval: Interval | None, mark: bool) -> str:
    """``80.0% (49.0-94.3)``: a rate and its 95% interval in percent; ``mark``: a Wilson interval among intervals
    over mazes carries a dagger."""
    if value is None or interval is None:
        return "-"
    dagger = WILSON_MARK if mark and interval.kind is IntervalKind.WILSON else ""
    return f"{_percent(value)} ({interval.low * 100:.1f}-{interval.high * 100:.1f}){dagger}"


def _mixed(rows: Sequence[GroupRow]) -> bool:
    """Whether the rows show both kinds of interval (then a Wilson one is marked)."""
    return len({i.kind for r in rows for i in (r.interval, r.interval_all) if i is not None}) > 1


def table_cells(rows: Sequence[GroupRow], by: GroupBy = GroupBy.family) -> tuple[tuple[str, ...], list[tuple]]:
    """Every column of the comparison, as ``--wide`` and the HTML page show it: both rates, each with its interval
    over mazes and its Wilson interval, the counts of each ending, the medians over successes, SPL, tokens and
    cost, and the flags (``analysis.Flag``)."""
    prompts = prompt_labels(rows)
    headers = (
        "agent",
        "prompt",
        "maze" if by is GroupBy.maze else "family",
        "size",
        "mazes",
        "config",
        "runs",
        "successes",
        "agent failures",
        "censored",
        "errors",
        "success",
        "maze CI",
        "Wilson CI",
        "all runs",
        "success (all runs)",
        "maze CI (all runs)",
        "Wilson CI (all runs)",
        "median actions",
        "median path",
        "median efficiency",
        "SPL",
        "SPL (all runs)",
        "tokens/run",
        "cost/run",
        "cost/success",
        "cost",
        "notes",
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
            r.successes,
            r.agent_failures,
            r.censored,
            r.errors,
            _percent(r.success_rate),
            _interval(r.maze_ci_low, r.maze_ci_high),
            _interval(r.success_rate_low, r.success_rate_high),
            r.all_runs,
            _percent(r.success_rate_all),
            _interval(r.maze_ci_all_low, r.maze_ci_all_high),
            _interval(r.success_rate_all_low, r.success_rate_all_high),
            _number(r.median_actions_to_goal, 0),
            _number(r.median_path_length, 0),
            _number(r.median_path_efficiency, 3),
            _number(r.spl, 3),
            _number(r.spl_all, 3),
            _number(r.tokens_per_run, 0),
            _cost(r.cost_per_run, r),
            _cost(r.cost_per_success, r),
            priced_total(r.cost_usd, r.unpriced_runs),
            " ".join(r.flags) or "-",
        )
        for r in rows
    ]


def _cost(value: Decimal | None, row: GroupRow) -> str:
    """A cost per run or success: ``unpriced`` where no run has a price, ``>=$0.0100`` where some do not."""
    if row.cost_usd is None:
        return UNPRICED if row.unpriced_runs else "-"
    return ("≥" if row.unpriced_runs else "") + _dollars(value)


MIN_SHRUNK = 8  # the narrowest an agent name is shortened to
PIVOT_AGENT_WIDTH = 36  # the narrow leaderboard: an agent's name at most this wide, its prompt and config after it


def narrow_cells(
    rows: Sequence[GroupRow], by: GroupBy = GroupBy.family, width: int | None = TERMINAL_COLUMNS
) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[str]]:
    """The comparison as a terminal shows it by default, in ``width`` columns (None: a pipe, nothing cut): the
    agent, the mazes, the decided runs and the success rate over them with its interval (over mazes where the runs
    share mazes, else Wilson's); where any run was censored or errored, the rate over all runs with its interval
    and those counts; the flags; the prompt when the rows hold several; the compared configuration as a letter
    with a legend below the table (``config A: temperature=0.2``). SPL (over the decided runs, and over all runs
    where any was censored or errored), cost and tokens per run and the medians of the successes follow where they
    still fit. The agent name is shortened only if the table would not fit
    otherwise (``display.fit_columns``). ``--wide`` gives ``table_cells``."""
    prompts = prompt_labels(rows)
    several = len(prompts) > 1
    legend = config_legend(rows)
    undecided = any(r.censored or r.errors for r in rows)
    flagged = any(r.flags for r in rows)
    mark = _mixed(rows)
    panels = [short_maze(panel_key(r, by)[0]) if by is GroupBy.maze else f"{r.maze_family} {r.maze_size}" for r in rows]
    required: list[tuple[str, Sequence[object]]] = [("agent", [agent_text(r) for r in rows])]
    if several:
        required.append(("prompt", [prompts[r.prompt_version, r.prompt_hash] for r in rows]))
    required.append(("maze" if by is GroupBy.maze else "mazes", panels))
    if legend:
        required.append(("config", [legend.get(config_text(r.config), "-") for r in rows]))
    required += [
        ("runs", [r.runs for r in rows]),
        ("success (95% CI)", [_rate(r.success_rate, r.interval, mark) for r in rows]),
    ]
    if undecided:
        required += [
            ("all runs (95% CI)", [_rate(r.success_rate_all, r.interval_all, mark) for r in rows]),
            ("c/e", [f"{r.censored}/{r.errors}" for r in rows]),
        ]
    spl: list[tuple[str, Sequence[object]]] = [("SPL", [_number(r.spl, 3) for r in rows])]
    if undecided:  # over all runs beside it, as the rates are
        spl.append(("SPL all", [_number(r.spl_all, 3) for r in rows]))
    optional: list[tuple[str, Sequence[object]]] = [
        *spl,
        ("cost/run", [_cost(r.cost_per_run, r) for r in rows]),
        ("tokens", [_number(r.tokens_per_run, 0) for r in rows]),
        ("actions", [_number(r.median_actions_to_goal, 0) for r in rows]),
        ("efficiency", [_number(r.median_path_efficiency, 3) for r in rows]),
    ]
    last: list[tuple[str, Sequence[object]]] = [("flags", ["".join(r.flags) for r in rows])] if flagged else []
    chosen = required
    for column in optional:
        wider = [*chosen, column]
        headers, cells = _as_table([*wider, *last])
        if width is not None and table_width(headers, _shown(cells)) > width:
            break
        chosen = wider
    headers, cells = _as_table([*chosen, *last])
    return (
        *fit_columns(headers, _shown(cells), width, [Shorten("agent", MIN_SHRUNK, middle=True)]),
        legend_notes(legend, width),
    )


def _as_table(named: list[tuple[str, Sequence[object]]]) -> tuple[tuple[str, ...], list[tuple[object, ...]]]:
    """Columns given as (header, cells) as a table's headers and rows."""
    return tuple(h for h, _ in named), list(zip(*(cells for _, cells in named), strict=True))


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


def rate_cell(row: GroupRow | None, mark: bool = False) -> str:
    """A leaderboard cell: the success rate over the decided runs, its 95% interval (over mazes where the runs
    share mazes, else Wilson's: ``mark`` puts a dagger on it among intervals over mazes), successes/runs and the
    flags; "no runs" without decided runs (an agent whose experiments all ended censored or in errors has no
    rate, not 0%)."""
    if row is None or not row.runs:
        return no_runs(row)
    flags = " ".join(row.flags)
    return f"{_rate(row.success_rate, row.interval, mark)} {row.successes}/{row.runs}" + (f" {flags}" if flags else "")


def no_runs(row: ComparisonRow | None) -> str:
    """``no runs``, with how many ended censored or in errors where some did: a group without decided runs has no
    rate, not 0%."""
    parts = [] if row is None else [f"{row.censored} censored"] * bool(row.censored)
    if row is not None and row.errors:
        parts.append(f"{row.errors} error{'s' if row.errors != 1 else ''}")
    return "no runs" + (f" ({', '.join(parts)})" if parts else "")


def pivot_cells(
    rows: Sequence[GroupRow],
    by: GroupBy = GroupBy.family,
    legend: dict[str, str] | None = None,
    agent_width: int | None = PIVOT_AGENT_WIDTH,
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The leaderboard: one row per agent (with its prompt and configuration), one column per maze family and
    size (or maze), each cell a ``rate_cell``. With a ``legend`` (``config_legend``) the table is the narrow
    one: configurations named by their letter, agents shortened to ``agent_width`` (None: whole)."""
    prompts = prompt_labels(rows)
    panels = panels_in_order(rows, by)
    found: dict[SeriesKey, dict[PanelKey, GroupRow]] = {}
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
    mark = _mixed(rows)
    return (
        ("agent", *map(panel_title, panels)),
        [
            (labels[key], *(rate_cell(found[key].get(p), mark) for p in panels))
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
    rows: Sequence[GroupRow],
    by: GroupBy = GroupBy.family,
    wide: bool = False,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The leaderboard for a terminal, with what its cells and intervals are: in ``width`` columns (configurations
    named by a letter, the panels in as many tables as they need; None: one table, as wide as it is), or whole with
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
    lines = ["success rate over the decided runs (95% interval) successes/runs", *footnotes(rows, False, width)]
    return text + "\n" + "".join(line + "\n" for line in lines)


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


def comparison_query(filters: Filters, by: GroupBy, function: str = "compare_experiments") -> str:
    """The query behind the comparison (or the paired comparisons, ``paired_comparison``), with the filters written
    in: what a researcher runs to check a number."""
    chosen = [f"{name} => {sql_literal(value)}" for name, value in filters.arguments().items() if value is not None]
    arguments = [f"experiments => ARRAY(SELECT id FROM chosen_experiments({', '.join(chosen)}))"] if chosen else []
    arguments.append(f"by_maze => {sql_literal(by is GroupBy.maze)}")
    return f"SELECT * FROM {function}({', '.join(arguments)});"


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


def footnotes(rows: Sequence[GroupRow], columns_shown: bool = True, width: int | None = TERMINAL_COLUMNS) -> list[str]:
    """What a terminal table's intervals, flags and groups mean, below it: the intervals shown, each flag used,
    the table's columns for the runs that were censored or errored (``columns_shown``), the confounds, the
    experiments still running; wrapped to ``width`` (None: a pipe, a line per note)."""
    kinds = {i.kind for r in rows for i in (r.interval, r.interval_all) if i is not None}
    lines = [INTERVAL_NOTES[frozenset(kinds)]] if kinds else []
    used = {flag for r in rows for flag in r.flags}
    lines += [f"{flag.value}: {FLAG_TEXT[flag]}" for flag in Flag if flag in used]
    if columns_shown and any(r.censored or r.errors for r in rows):
        lines.append("all runs: censored and errored runs count as failures; c/e: runs censored / ended in an error")
    lines += [f"confound: {note}" for note in dict.fromkeys(note for r in rows for note in r.confounds)]
    if not any(r.censored or r.errors for r in rows) and any(r.runs for r in rows):
        lines.append("no run was censored or ended in an error: the rate over all runs is the same")
    lines.append(running_note(rows))
    shown = [terminal_safe(line) for line in lines if line]
    if width is None:
        return shown
    return [wrapped for line in shown for wrapped in textwrap.wrap(line, width, subsequent_indent="  ")]


def as_table(
    rows: Sequence[GroupRow],
    by: GroupBy = GroupBy.family,
    wide: bool = False,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The comparison for a terminal: one line per agent x prompt x maze family (or maze) x config, in ``width``
    columns (None: a pipe, nothing cut; ``wide``: every column), and what its intervals and flags mean below it."""
    if not rows:
        return "no finished experiments match\n"
    if wide:
        text = columns(*table_cells(rows, by))
    else:
        headers, cells, notes = narrow_cells(rows, by, width)
        text = columns(headers, cells) + "".join(note + "\n" for note in notes)
    return text + "\n" + "".join(line + "\n" for line in footnotes(rows, width=width))


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
    rows = groups(results, filters, by)
    if output is Format.csv:
        return as_csv(rows)
    if output is Format.json:
        return as_json(rows)
    table = as_pivot(rows, by, wide, width) if pivot else as_table(rows, by, wide, width)
    lines = [line for note in spending_notes(rows) for line in (textwrap.wrap(note, width) if width else [note])]
    return table + "".join(line + "\n" for line in lines)


def spending_notes(rows: Sequence[GroupRow]) -> list[str]:
    """What the groups' experiments spent that a table's columns do not show, as the notes a table and the HTML page
    end with (each group's share is in its JSON and CSV row): failed attempts' spend, prompts the server counted
    over the context budget."""
    spent = total_spend(rows)
    notes = [failed_spend_note(spent), over_budget_note(spent.over_budget_calls, spent.over_budget_runs)]
    return [note for note in notes if note]


def over_budget_note(calls: int, runs: int) -> str:
    """A warning below a table when servers counted prompts over the context budget (``transcript`` shows which)."""
    if not calls:
        return ""
    return (
        f"{calls} model call(s) in {runs} run(s) had a prompt the server counted over the context budget: a server "
        "may cut such a prompt silently, so what the model saw may not be what is stored (oriole transcript shows "
        "them)"
    )


def failed_spend_note(spend: Spend) -> str:
    """``spent on failed attempts: ...`` below a table, where any was: the calls a server answered in turns that
    then failed (retried, or ending the run in an error) are billed, and each run's tokens and cost count them."""
    if not spend.failed_attempts:
        return ""
    cost = priced_total(spend.failed_cost_usd, spend.failed_unpriced_runs)
    return (
        f"spent on failed attempts: {spend.failed_tokens:,} tokens, {cost} in {spend.failed_calls} call(s) of "
        f"{spend.failed_attempts} attempt(s) in {spend.failed_runs} run(s); in their runs' tokens and cost"
    )


def pair_cells(rows: Sequence[PairRow]) -> tuple[tuple[str, ...], list[tuple[object, ...]]]:
    """The paired comparisons as a terminal shows them: the family and size (or maze), the two agents (with their
    prompt and compared configuration where those differ), the shared runs and mazes, each agent's rate over them,
    the difference with its paired bootstrap interval over mazes, and the exact McNemar p-value before and after
    Holm's correction."""
    headers = ("mazes", "a", "b", "pairs", "a %", "b %", "a-b (95% CI)", "McNemar", "Holm")
    return headers, [
        (
            short_maze(r.maze) if r.maze else f"{r.maze_family} {r.maze_size}",
            _pair_agent(r.a_name, r.a_prompt_version, r.a_config, rows),
            _pair_agent(r.b_name, r.b_prompt_version, r.b_config, rows),
            f"{r.pairs} on {r.mazes}",
            _percent(r.a_success_rate).rstrip("%"),
            _percent(r.b_success_rate).rstrip("%"),
            _difference(r),
            _p_value(r.mcnemar_p),
            _p_value(r.holm_p),
        )
        for r in rows
    ]


def _pair_agent(name: str, prompt: str, config: dict, rows: Sequence[PairRow]) -> str:
    several = len({p for r in rows for p in (r.a_prompt_version, r.b_prompt_version)}) > 1
    return " ".join(
        part for part in (name, f"[{prompt}]" if several else "", config_text(config) if config else "") if part
    )


def _difference(row: PairRow) -> str:
    """``+12.5 (+3.1, +21.9)``: the difference in percentage points and its interval over mazes (``-`` on one
    maze)."""
    band = (
        "-"
        if row.difference_low is None or row.difference_high is None
        else f"{row.difference_low * 100:+.1f}, {row.difference_high * 100:+.1f}"
    )
    return f"{float(row.difference) * 100:+.1f} ({band})"


def _p_value(value: Decimal | float) -> str:
    return "<0.0001" if float(value) < 0.0001 else f"{float(value):.4f}"


PAIRS_NOTE = (
    "pairs: runs two agents share (the same maze and seed; a sweep gives every agent the same seed for the same maze "
    "and repetition), both decided, on so many mazes. a %, b %: each one's success rate over those pairs. a-b: the "
    "difference in percentage points, its 95% interval a paired bootstrap over mazes (the pairs of a maze drawn "
    "together; - on one maze). McNemar: the p-value of the exact McNemar test on the pairs only one agent solved; "
    "Holm: that p-value corrected for every pair of agents of the same mazes (Holm's step-down)."
)


# How a terminal too narrow for the paired comparisons gets them (``display.fit_columns``): the agents' names
# shortened in their middle (their model is at the end) to 20, the uncorrected McNemar p-value left out (Holm's is
# the one to read when agents are many; with two, they are equal), then the mazes in their middle (the size is at
# the end) to 12, the names to the narrowest and the mazes to 8. The counts, the rates and the difference with its
# interval are never cut.
PAIRS_FIT: tuple[Shorten | Drop, ...] = (
    Shorten("a", 20, middle=True),
    Shorten("b", 20, middle=True),
    Drop("McNemar"),
    Shorten("mazes", 12, middle=True),
    Shorten("a", MIN_SHRUNK, middle=True),
    Shorten("b", MIN_SHRUNK, middle=True),
    Shorten("mazes", MIN_SHRUNK, middle=True),
)


def render_pairs(
    results: Results,
    output: Format = Format.table,
    by: GroupBy = GroupBy.family,
    filters: Filters = EVERYTHING,
    width: int | None = TERMINAL_COLUMNS,
) -> str:
    """The paired comparisons (``oriole report --pairs``) as a table in ``width`` columns (None: a pipe, every cell
    whole and the note on one line), CSV or JSON (the HTML page shows them too)."""
    rows = pairs(results, filters, by)
    if output is Format.csv:
        return as_csv(rows)
    if output is Format.json:
        return as_json(rows)
    if not rows:
        return "no pairs: no two agents share a maze and a seed among the decided runs\n"
    headers, cells = pair_cells(rows)
    table = columns(*fit_columns(headers, _shown(cells), width, PAIRS_FIT))
    return table + "\n" + "\n".join(textwrap.wrap(PAIRS_NOTE, width) if width else [PAIRS_NOTE]) + "\n"
