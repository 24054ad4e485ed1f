"""``oriole report --format markdown|latex``: the leaderboard and the comparison as tables a paper can take.

The cells come from the report's own rows (``report.comparison_rows``: the comparison SQL and the maze interval
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
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from oriole_workstation.display import terminal_safe
from oriole_workstation.provenance import Provenance
from oriole_workstation.report import (
    GroupBy,
    agent_text,
    comparison_rows,
    detail_text,
    origin_of,
    panel_key,
    panel_title,
    panels_in_order,
    prompt_labels,
    series_key,
    series_order,
)
from oriole_workstation.results import EVERYTHING, Filters, Results
from oriole_workstation.rows import ComparisonRow


class Markup(StrEnum):
    markdown = "markdown"
    latex = "latex"


WILSON_MARK = "\N{DAGGER}"  # a leaderboard cell whose interval is Wilson's (its runs do not share mazes)


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


def _agent(row: ComparisonRow, prompts: dict[tuple[str, str], str]) -> str:
    detail = detail_text(row, prompts)
    return terminal_safe(agent_text(row) + (f" ({detail})" if detail else ""))


def interval_of(row: ComparisonRow) -> tuple[float, float, bool] | None:
    """The interval a leaderboard cell shows: the bootstrap over mazes where the report has one, else the Wilson
    interval (``True``: it is Wilson's); None without runs."""
    if not row.runs or row.success_rate_low is None or row.success_rate_high is None:
        return None
    if (band := row.maze_band) is not None:
        return band[0], band[1], False
    return float(row.success_rate_low), float(row.success_rate_high), True


def _leaderboard_cell(row: ComparisonRow | None, mark: bool) -> str:
    """``62.5 40.1-81.0 5/8`` (an en dash between the bounds); ``mark``: a Wilson interval among intervals over
    mazes carries the dagger."""
    if row is None or not row.runs:
        errors = row.errors if row is not None else 0
        return "no runs" + (f" ({errors} error{'s' * (errors != 1)})" if errors else "")
    low, high, wilson = interval_of(row) or (None, None, False)
    dagger = WILSON_MARK if wilson and mark else ""
    return f"{_percent(row.success_rate)} {_bounds(low, high)}{dagger} {row.successes}/{row.runs}"


def leaderboard(rows: Sequence[ComparisonRow], by: GroupBy, origin: Provenance) -> Table:
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
        f"Success rate per agent and {where} (%). Each cell: the success rate over runs (successes and agent "
        f"failures; censored runs and errors are not runs), its 95% interval and successes/runs. "
        f"The interval is {interval}. Provenance: {origin.sentence()}."
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


def comparison(rows: Sequence[ComparisonRow], by: GroupBy, origin: Provenance) -> Table:
    """One row per agent x prompt x maze family and size (or maze) x compared configuration, with n, the
    successes, the rate with both intervals and what a success cost in actions and efficiency."""
    prompts = prompt_labels(rows)
    place = ("maze",) if by is GroupBy.maze else ("family", "size")
    headers = (
        "agent",
        *place,
        "mazes",
        "n",
        "successes",
        "success (%)",
        "95% CI Wilson",
        "95% CI mazes",
        "median actions",
        "median efficiency",
        "censored",
        "errors",
    )
    cells = [
        (
            _agent(r, prompts),
            *(terminal_safe(part) for part in panel_key(r, by)),
            str(r.mazes),
            str(r.runs),
            str(r.successes),
            _percent(r.success_rate),
            _bounds(r.success_rate_low, r.success_rate_high),
            _bounds(*(r.maze_band or (None, None))),
            _number(r.median_actions_to_goal, 0),
            _number(r.median_path_efficiency, 3),
            str(r.censored),
            str(r.errors),
        )
        for r in rows
    ]
    caption = (
        "Comparison per agent and "
        + ("maze" if by is GroupBy.maze else "maze family and size")
        + ". n: runs (successes and agent failures; censored runs, stopped by something outside the agent, and "
        "errors are counted apart, running experiments not at all); "
        "mazes: the different grids the runs were on; 95% CI Wilson: the Wilson score interval, each run an "
        "independent trial; 95% CI mazes: the bootstrap over mazes where the runs share mazes (at least two mazes, "
        "more runs than mazes); median actions and path efficiency (shortest path / moves) over the successes. "
        f"Provenance: {origin.sentence()}."
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


def render(rows: Sequence[ComparisonRow], by: GroupBy, origin: Provenance, form: Markup) -> str:
    """The leaderboard, then the whole comparison, in ``form``; a line saying so when nothing matches."""
    if not rows:
        return "No finished experiments match.\n" if form is Markup.markdown else "% No finished experiments match.\n"
    tables = [leaderboard(rows, by, origin), comparison(rows, by, origin)]
    return PREAMBLE[form] + "\n".join(WRITERS[form](table, n) for n, table in enumerate(tables, 1))


def render_report(results: Results, form: Markup, by: GroupBy = GroupBy.family, filters: Filters = EVERYTHING) -> str:
    """The tables for the experiments matching ``filters``, captioned with where their numbers came from."""
    origin = origin_of(results.compared(filters), filters, by, results.database())
    return render(comparison_rows(results, by, filters), by, origin, form)
