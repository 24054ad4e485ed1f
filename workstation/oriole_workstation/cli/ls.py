"""``oriole ls``: the ``experiment_status`` view as a table (``oriole watch`` shows the same table live).

A running experiment with no action for its ``staleAfterMinutes`` (catalog, default 5) is marked stale: its
process or execution may be gone (``oriole doctor`` says) or its model very slow.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.text import Text

from oriole.statuses import Ending
from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SinceFilter,
    SweepFilter,
    TagFilter,
    UntilFilter,
    opened,
    out,
    print_json,
    selection,
    terminal_width,
    whole_number,
)
from oriole_workstation.display import Cells, Drop, Shorten, columns, dollars, fit_columns, short_maze, terminal_safe
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.rows import StatusRow

WIDE_ONLY = {"turn", "budget", "sweep"}  # the columns `oriole ls --wide` adds
# How a terminal too narrow for the table gets it (display.fit_columns): the time of the last action left out, then
# the agent, the maze and the status shortened (each to 12 characters at the narrowest). The id and the counts
# (actions, tokens, cost) are never cut.
FIT = (Drop("last action"), Shorten("agent", 12, middle=True), Shorten("maze", 12), Shorten("status", 12))
STALE = "STALE "


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "-"
    seconds = max((now - moment).total_seconds(), 0)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    return f"{seconds / 60:.0f} min ago" if seconds < 5400 else f"{seconds / 3600:.1f} h ago"


def status_cells(rows: list[StatusRow], now: datetime, wide: bool = False) -> tuple[Cells, list[Cells]]:
    """The table's headers and cells, whole (stored text shown, never obeyed): running experiments first, a stale
    one marked in its status; ``wide`` adds the turn, the share of the action budget used and the sweep."""
    headers: Cells = (
        "experiment" if wide else "id",
        "agent",
        "maze",
        "status",
        "turn",
        "actions",
        "budget",
        "last action",
        "tokens",
        "cost",
        "sweep",
    )
    cells = []
    for r in rows:
        outcome = outcome_text(r.status, r.failure_reason)
        wide_ending = wide and r.ending not in (None, Ending.SUCCESS)
        cells.append(
            (
                str(r.experiment_id),
                r.agent,  # a sweep file's label first
                r.maze,
                (STALE if r.stale else "") + (f"{outcome} ({ending_text(r.ending)})" if wide_ending else outcome),
                str(r.turn),
                f"{r.actions:,}/{r.max_actions:,}",
                "-" if r.progress_percent is None else f"{float(r.progress_percent):.1f}%",
                _ago(r.last_action_at, now),
                f"{r.input_tokens + r.output_tokens:,}",
                dollars(r.cost_usd),
                r.sweep_id or "-",
            )
        )
    shown = [i for i, header in enumerate(headers) if wide or header not in WIDE_ONLY]
    return tuple(headers[i] for i in shown), [tuple(terminal_safe(row[i]) for i in shown) for row in cells]


def status_table(
    rows: list[StatusRow], now: datetime | None = None, wide: bool = False, width: int | None = None
) -> Text:
    """The table as it is shown: in ``width`` columns by the rule of ``FIT`` (a seeded maze first
    keeps its family-size and the seed's first digits), or whole (``width`` None: a pipe, or ``wide``); its
    headers bold and a stale experiment's mark bold yellow on a terminal."""
    headers, cells = status_cells(rows, now or datetime.now(UTC), wide)
    if width is not None and not wide:
        maze = headers.index("maze")
        cells = [(*row[:maze], short_maze(row[maze]), *row[maze + 1 :]) for row in cells]
        headers, cells = fit_columns(headers, cells, width, FIT)
    text = Text(columns(headers, cells).rstrip("\n"))
    text.stylize("bold", 0, text.plain.index("\n") if "\n" in text.plain else len(text.plain))
    text.highlight_words([STALE.strip()], "bold yellow")
    return text


def ls(
    running: Annotated[bool, typer.Option("--running", help="Only running experiments.")] = False,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    tag: TagFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    limit: Annotated[
        int, typer.Option(help="At most this many rows (0: all).", metavar="N", parser=whole_number(0, 1_000_000))
    ] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    wide: Annotated[
        bool,
        typer.Option(
            "--wide",
            help="Every column (the turn, the share of the action budget used, the sweep) and whole names, however "
            "wide.",
        ),
    ] = False,
    aws: AwsDatabase = False,
) -> None:
    """List experiments with their progress.

    Running ones first (a stale one marked: running with no action for staleAfterMinutes, by default 5), then
    the newest. Narrow terminals get the narrow table (see --wide); a pipe gets whole cells. The filters are the
    report's: repeat one for any of its values; a value that matches no experiment is refused (exit status 2).
    """
    filters = selection(
        sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt, tag=tag, since=since, until=until
    )
    rows = opened(filters, aws).status(filters, running=running, limit=limit or None)
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print(
            "no experiment" + (" running" if running else "") + (f": {filters.describe()}" if filters.chosen else ""),
            markup=False,
            highlight=False,
        )
        return
    out.print(status_table(rows, wide=wide, width=terminal_width()), soft_wrap=True)
    stale = sum(bool(r.stale) for r in rows)
    if stale:
        out.print(
            f"\n{stale} stale: running with no action for their staleAfterMinutes; `oriole doctor` tells "
            "whether anything still runs them.",
            markup=False,
        )
