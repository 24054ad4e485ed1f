"""``oriole report --format markdown|latex``: the leaderboard and the comparison as tables a paper can take.

The cells come from the report's own rows (``analysis.groups``: the comparison SQL and the intervals over mazes
beside it), so the tables say what the terminal and the HTML page say. Each table carries a caption: what a cell
is, which interval it shows, and the provenance of its numbers (``provenance``). Markdown is GitHub's pipe table
with the caption as a paragraph above it; LaTeX is a ``table`` float with a ``tabular`` ruled by booktabs
(``\\toprule``, ``\\midrule``, ``\\bottomrule``), shrunk to the line's width when wider (graphicx's
``\\resizebox``): add ``\\usepackage{booktabs}`` and ``\\usepackage{graphicx}`` to the preamble.

Stored text (agent labels, model and maze names, configurations) is data in both: every character that Markdown or
LaTeX would read as syntax is escaped, and in LaTeX every character beyond ASCII is written out as its code point,
so a table compiles with pdflatex whatever a model is called.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from enum import StrEnum

from oriole_workstation.analysis import WILSON_MARK, GroupRow, IntervalKind, PairRow, groups, pairs
from oriole_workstation.display import terminal_safe
from oriole_workstation.grouping import (
    GroupBy,
    agent_text,
    detail_text,
    panel_key,
    panel_title,
    panels_in_order,
    prompt_labels,
    series_key,
    series_order,
)
from oriole_workstation.provenance import Provenance
from oriole_workstation.report import PAIRS_NOTE, comparison_query, no_runs, origin_of, pair_cells
from oriole_workstation.results import EVERYTHING, Filters, Results


class Markup(StrEnum):
    markdown = "markdown"
    latex = "latex"


@dataclass(frozen=True)
class Table:
    """A table as plain text cells: ``name`` labels it (``tab:oriole-<name>``), ``caption`` says what it shows."""

    name: str
    caption: str
    headers: tuple[str, ...]
    numeric: tuple[bool, ...]  # right-aligned columns
    rows: list[tuple[str, ...]]


def _percent(value: Decimal | float | None) -> str:
    return "-" if value is None else f"{float(value) * 100:.1f}"


def _bounds(low: Decimal | float | None, high: Decimal | float | None) -> str:
    return "-" if low is None or high is None else f"{_percent(low)}\N{EN DASH}{_percent(high)}"


def _number(value: Decimal | None, digits: int) -> str:
    return "-" if value is None else f"{float(value):,.{digits}f}"


def _agent(row: GroupRow, prompts: dict[tuple[str, str], str]) -> str:
    detail = detail_text(row, prompts)
    return terminal_safe(agent_text(row) + (f" ({detail})" if detail else ""))


def interval_of(row: GroupRow) -> tuple[float, float, bool] | None:
    """The interval a leaderboard cell shows (``GroupRow.interval``): the bootstrap over mazes where the report has
    one, else the Wilson interval (``True``: it is Wilson's); None without runs."""
    interval = row.interval if row.runs else None
    return None if interval is None else (interval.low, interval.high, interval.kind is IntervalKind.WILSON)


def _leaderboard_cell(row: GroupRow | None, mark: bool) -> str:
    """``62.5 40.1-81.0 5/8`` (an en dash between the bounds); ``mark``: a Wilson interval among intervals over
    mazes carries the dagger."""
    if row is None or not row.runs:
        return no_runs(row)
    low, high, wilson = interval_of(row) or (None, None, False)
    dagger = WILSON_MARK if wilson and mark else ""
    flags = " ".join(row.flags)
    return f"{_percent(row.success_rate)} {_bounds(low, high)}{dagger} {row.successes}/{row.runs}" + (
        f" {flags}" if flags else ""
    )


def leaderboard(rows: Sequence[GroupRow], by: GroupBy, origin: Provenance) -> Table:
    """One row per agent (with its prompt and compared configuration), one column per maze family and size (or
    maze): the success rate, its 95% interval and successes/runs."""
    prompts = prompt_labels(rows)
    panels = panels_in_order(rows, by)
    found = {(series_key(r), panel_key(r, by)): r for r in rows}
    agents = {series_key(r): _agent(r, prompts) for r in rows}
    kinds = {shown[2] for r in rows if (shown := interval_of(r))}  # True: Wilson's, False: over mazes
    where = "maze" if by is GroupBy.maze else "maze family and size"
    interval = (
        "the bootstrap over mazes (2,000 resamples of the mazes, each with all its runs), as the runs share mazes"
        if kinds == {False}
        else "the Wilson score interval, as no runs share mazes"
        if kinds == {True}
        else "the bootstrap over mazes (2,000 resamples of the mazes, each with all its runs) where the runs share "
        f"mazes, else ({WILSON_MARK}) the Wilson score interval"
    )
    caption = (
        f"Success rate per agent and {where} (%). Each cell: the success rate over the decided runs (successes and "
        "agent failures; censored and errored runs are counted apart), its 95% interval and successes/runs, and "
        f"its flags (m: fewer than 10 mazes; u: over 5% of its runs censored or errored; $: some runs unpriced; c: "
        "confounded, see the comparison; w: every maze the same rate, its interval Wilson's with each maze one "
        f"trial). The interval is {interval}. "
        f"Provenance: {origin.sentence()}."
    )
    return Table(
        "leaderboard",
        caption,
        ("agent", *(terminal_safe(panel_title(p)) for p in panels)),
        (False, *(True for _ in panels)),
        [
            (agents[key], *(_leaderboard_cell(found.get((key, p)), len(kinds) > 1) for p in panels))
            for key in sorted(agents, key=series_order)
        ],
    )


def comparison(rows: Sequence[GroupRow], by: GroupBy, origin: Provenance) -> Table:
    """One row per agent x prompt x maze family and size (or maze) x compared configuration, with n, the counts of
    each ending, both rates with both intervals and what a success cost in actions and efficiency."""
    prompts = prompt_labels(rows)
    place = ("maze",) if by is GroupBy.maze else ("family", "size")
    headers = (
        "agent",
        *place,
        "mazes",
        "n",
        "successes",
        "censored",
        "errors",
        "success (%)",
        "95% CI Wilson",
        "95% CI mazes",
        "all runs (%)",
        "95% CI Wilson, all",
        "95% CI mazes, all",
        "median actions",
        "median efficiency",
        "SPL",
        "SPL, all",
    )
    cells = [
        (
            _agent(r, prompts),
            *(terminal_safe(part) for part in panel_key(r, by)),
            str(r.mazes),
            str(r.runs),
            str(r.successes),
            str(r.censored),
            str(r.errors),
            _percent(r.success_rate),
            _bounds(r.success_rate_low, r.success_rate_high),
            _bounds(r.maze_ci_low, r.maze_ci_high),
            _percent(r.success_rate_all),
            _bounds(r.success_rate_all_low, r.success_rate_all_high),
            _bounds(r.maze_ci_all_low, r.maze_ci_all_high),
            _number(r.median_actions_to_goal, 0),
            _number(r.median_path_efficiency, 3),
            _number(r.spl, 3),
            _number(r.spl_all, 3),
        )
        for r in rows
    ]
    caption = (
        "Comparison per agent and "
        + ("maze" if by is GroupBy.maze else "maze family and size")
        + ". n: the decided runs (successes and agent failures); censored: runs stopped by something outside the "
        "agent (the wall clock, a timeout, a stop); errors: provider or infrastructure failures; each repetition "
        "counts once. success: over the decided runs; all runs: over every run that ended, censored and errored "
        "ones as failures. mazes: the different grids the decided runs were on; 95% CI Wilson: the Wilson score "
        "interval, each run an independent trial; 95% CI mazes: the bootstrap over mazes where the runs share "
        "mazes (at least two mazes, more runs than mazes); median actions and path efficiency (the optimum over "
        "the path walked) over the successes; SPL: success weighted by path length over the decided runs; SPL, "
        "all: over all runs, censored and errored ones scoring 0. "
        + "".join(f"Confound: {note}. " for note in dict.fromkeys(n for r in rows for n in r.confounds))
        + f"Provenance: {origin.sentence()}."
    )
    return Table("comparison", caption, headers, tuple(h not in ("agent", *place) for h in headers), cells)


# --- Markdown --------------------------------------------------------------------------------------------

_MARKDOWN_SYNTAX = re.compile(r"[\\`*_\[\]|~{}<>&]")  # the rest of ASCII's punctuation acts only at a line's start
# HTML entities, which every renderer shows as the character: Python-Markdown has no backslash escape for these
_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;", "~": "&#126;"}


def markdown_text(text: str) -> str:
    """``text`` as literal Markdown: every character a renderer would read as syntax (emphasis, links, code, a
    cell border) escaped with a backslash, as both CommonMark and Python-Markdown allow, and ``<``, ``>``, ``&``
    and ``~`` (strikethrough) as HTML entities (Python-Markdown has no backslash escape for them)."""
    return _MARKDOWN_SYNTAX.sub(lambda m: _ENTITIES.get(m[0]) or "\\" + m[0], terminal_safe(text))


def markdown(table: Table, number: int) -> str:
    align = "".join(f" {'---:' if numeric else ':---'} |" for numeric in table.numeric)
    lines = [
        f"**Table {number}.** {markdown_text(table.caption)}",
        "",
        "|" + "".join(f" {markdown_text(h)} |" for h in table.headers),
        "|" + align,
        *("|" + "".join(f" {markdown_text(cell)} |" for cell in row) for row in table.rows),
    ]
    return "\n".join(lines) + "\n"


# --- LaTeX -----------------------------------------------------------------------------------------------

_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "%": r"\%",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "~": r"\textasciitilde{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    '"': "''",
    "[": "{[}",  # never read as an optional argument after a command
    "]": "{]}",
    WILSON_MARK: r"\textsuperscript{\dag}",
    "\N{MIDDLE DOT}": r"\textperiodcentered{}",
    "\N{EN DASH}": "--",
    "\N{HORIZONTAL ELLIPSIS}": r"\ldots{}",
}


def latex_text(text: str) -> str:
    """``text`` as literal LaTeX: special characters as their commands, and every other character beyond
    ASCII as ``<U+00E9>`` in typewriter type (pdflatex has no glyph for most of them)."""
    return "".join(
        _LATEX.get(c) or (c if " " <= c <= "~" else rf"\texttt{{\textless{{}}U+{ord(c):04X}\textgreater{{}}}}")
        for c in terminal_safe(text)
    )


def latex(table: Table, number: int) -> str:
    columns = "".join("r" if numeric else "l" for numeric in table.numeric)

    def line(cells: Sequence[str]) -> str:
        return " & ".join(latex_text(c) for c in cells) + r" \\"

    return (
        "\n".join(
            [
                r"\begin{table}[htbp]",
                r"\centering",
                r"\small",
                rf"\caption{{{latex_text(table.caption)}}}",
                rf"\label{{tab:oriole-{table.name}}}",
                r"\resizebox{\ifdim\width>\linewidth\linewidth\else\width\fi}{!}{%",  # shrunk to the line, never grown
                rf"\begin{{tabular}}{{{columns}}}",
                r"\toprule",
                line(table.headers),
                r"\midrule",
                *(line(row) for row in table.rows),
                r"\bottomrule",
                r"\end{tabular}}",
                r"\end{table}",
            ]
        )
        + "\n"
    )


WRITERS: dict[Markup, Callable[[Table, int], str]] = {Markup.markdown: markdown, Markup.latex: latex}
PREAMBLE = {
    Markup.markdown: "",
    Markup.latex: "% oriole report --format latex: needs \\usepackage{booktabs} and \\usepackage{graphicx}.\n",
}


def paired(rows: Sequence[PairRow], origin: Provenance) -> Table:
    """Every two agents over the runs they share, as ``oriole report --pairs`` prints them."""
    headers, cells = pair_cells(rows)
    caption = "Paired comparisons of every two agents over the runs they share. " + PAIRS_NOTE
    return Table(
        "pairs",
        f"{caption} Provenance: {origin.sentence()}.",
        headers,
        (False, False, False, *(True for _ in headers[3:])),
        [tuple(str(cell) for cell in row) for row in cells],
    )


def render(
    rows: Sequence[GroupRow],
    by: GroupBy,
    origin: Provenance,
    form: Markup,
    pair_rows: Sequence[PairRow] = (),
    only_pairs: bool = False,
    paired_origin: Provenance | None = None,
) -> str:
    """The leaderboard, the whole comparison and the paired comparisons where two agents share runs (with
    ``only_pairs``, those alone; ``paired_origin``: their provenance, else ``origin``), in ``form``; a line saying
    so when nothing matches."""
    if not rows:
        return "No finished experiments match.\n" if form is Markup.markdown else "% No finished experiments match.\n"
    tables = [] if only_pairs else [leaderboard(rows, by, origin), comparison(rows, by, origin)]
    tables += [paired(pair_rows, paired_origin or origin)] if pair_rows else []
    if not tables:
        line = "No pairs: no two agents share a maze and a seed among the decided runs.\n"
        return line if form is Markup.markdown else f"% {line}"
    return PREAMBLE[form] + "\n".join(WRITERS[form](table, n) for n, table in enumerate(tables, 1))


def render_report(
    results: Results,
    form: Markup,
    by: GroupBy = GroupBy.family,
    filters: Filters = EVERYTHING,
    only_pairs: bool = False,
) -> str:
    """The tables for the experiments matching ``filters``, captioned with where their numbers came from (the
    pairs' caption names their own query)."""
    origin = origin_of(results.compared(filters), filters, by, results.database())
    paired_origin = replace(origin, query=comparison_query(filters, by, "paired_comparison"))
    rows, pair_rows = groups(results, filters, by), pairs(results, filters, by)
    return render(rows, by, origin, form, pair_rows, only_pairs, paired_origin)
