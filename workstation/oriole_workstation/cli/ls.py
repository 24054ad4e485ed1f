"""``oriole ls``: the ``experiment_status`` view as a table (``oriole watch`` shows the same table live).

A running experiment with no action for its ``staleAfterMinutes`` (catalog, default 5) is marked stale: its
process or execution may be gone (``oriole doctor`` says) or its model very slow.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
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
    whole_number,
)
from oriole_workstation.display import TERMINAL_COLUMNS, short_maze, shorten, terminal_safe
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.rows import StatusRow

WIDE_ONLY = {"turn", "progress", "sweep"}  # the columns `oriole ls --wide` adds
AGENT_WIDTH = 24
WIDE_COLUMNS = 1000  # --wide: whole cells, as wide as they are (a pager or a wide terminal shows them)


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "-"
    seconds = max((now - moment).total_seconds(), 0)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    return f"{seconds / 60:.0f} min ago" if seconds < 5400 else f"{seconds / 3600:.1f} h ago"


def status_table(rows: list[StatusRow], now: datetime | None = None, wide: bool = False) -> Table:
    """Running experiments first; a stale one is marked, bold, in the status column. It fits
    ``TERMINAL_COLUMNS``: the turn, the progress to the goal and the sweep are in the ``wide`` view."""
    now = now or datetime.now(UTC)
    table = Table(box=None, header_style="bold", pad_edge=False)
    columns = [
        ("experiment", True),
        ("agent", False),
        ("maze", False),
        ("status", False),
        ("turn", True),
        ("actions", True),
        ("progress", True),
        ("last action", True),
        ("tokens", True),
        ("cost", True),
        ("sweep", False),
    ]
    shown = [i for i, (header, _) in enumerate(columns) if wide or header not in WIDE_ONLY]
    for i in shown:
        header, right = columns[i]
        table.add_column(header if wide or i else "id", justify="right" if right else "left", no_wrap=True)
    for r in rows:
        outcome = outcome_text(r.status, r.failure_reason)
        wide_ending = wide and r.ending not in (None, Ending.SUCCESS)
        state = (
            Text("STALE " + outcome, style="bold yellow")
            if r.stale
            else _shown(f"{outcome} ({ending_text(r.ending)})" if wide_ending else outcome)
        )
        agent = r.agent  # a sweep file's label first
        cells = (
            str(r.experiment_id),
            _shown(agent if wide else shorten(agent, AGENT_WIDTH)),
            _shown(r.maze if wide else short_maze(r.maze)),
            state,
            str(r.turn),
            f"{r.actions:,}/{r.max_actions:,}",
            "-" if r.progress_percent is None else f"{float(r.progress_percent):.1f}%",
            _ago(r.last_action_at, now),
            f"{r.input_tokens + r.output_tokens:,}",
            f"${float(r.cost_usd):.4f}",
            _shown(r.sweep_id or "-"),
        )
        table.add_row(*(cells[i] for i in shown))
    return table


def _shown(text: str) -> Text:
    """Stored text in a cell: never markup (a Text), never obeyed (``terminal_safe``)."""
    return Text(terminal_safe(text))


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
            "--wide", help="Every column (the turn, the progress to the goal, the sweep) and whole names, however wide."
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
    piped = Console(width=WIDE_COLUMNS if wide else TERMINAL_COLUMNS)  # not a terminal: rich would assume 80
    (piped if wide or not out.is_terminal else out).print(status_table(rows, wide=wide))
    stale = sum(bool(r.stale) for r in rows)
    if stale:
        out.print(
            f"\n{stale} stale: running with no action for their staleAfterMinutes; `oriole doctor` tells "
            "whether anything still runs them.",
            markup=False,
        )
