"""``oriole ls``: the ``experiment_status`` view as a table (``oriole watch`` shows the same table live).

A running experiment with no action for its ``staleAfterMinutes`` (catalog, default 5) is marked stale: its
process or execution may be gone (``oriole doctor`` says) or its model very slow.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from oriole_workstation.cli.common import AwsDatabase, out, print_json, whole_number
from oriole_workstation.display import terminal_safe

SweepOption = Annotated[str | None, typer.Option("--sweep", help="Only the experiments of this sweep (its id).")]


def _ago(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return "-"
    seconds = max((now - moment).total_seconds(), 0)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    return f"{seconds / 60:.0f} min ago" if seconds < 5400 else f"{seconds / 3600:.1f} h ago"


def status_table(rows: list[dict], now: datetime | None = None) -> Table:
    """Running experiments first; a stale one is marked, bold, in the status column."""
    now = now or datetime.now(UTC)
    table = Table(box=None, header_style="bold", pad_edge=False)
    for header, right in (("experiment", True), ("agent", False), ("maze", False), ("status", False),
                          ("turn", True), ("actions", True), ("progress", True), ("last action", True),
                          ("tokens", True), ("cost", True), ("sweep", False)):
        table.add_column(header, justify="right" if right else "left", no_wrap=True)
    for r in rows:
        state = Text("STALE " + r["status"], style="bold yellow") if r["stale"] else _shown(
            r["status"] if r["ending"] is None or r["status"] == "succeeded" else f"{r['status']} ({r['ending']})")
        table.add_row(str(r["experiment_id"]), _shown(f"{r['llm_provider']}/{r['model_name']}"), _shown(r["maze"]),
                      state, str(r["turn"]), f"{r['actions']:,}/{r['max_actions']:,}",
                      "-" if r["progress_percent"] is None else f"{float(r['progress_percent']):.1f}%",
                      _ago(r["last_action_at"], now), f"{r['input_tokens'] + r['output_tokens']:,}",
                      f"${float(r['cost_usd']):.4f}", _shown(r["sweep_id"] or "-"))
    return table


def _shown(text: str) -> Text:
    """Stored text in a cell: never markup (a Text), never obeyed (``terminal_safe``)."""
    return Text(terminal_safe(text))


def ls(
    running: Annotated[bool, typer.Option("--running", help="Only running experiments.")] = False,
    sweep: SweepOption = None,
    limit: Annotated[int, typer.Option(help="At most this many rows (0: all).", metavar="N",
                                       parser=whole_number(0, 1_000_000))] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    aws: AwsDatabase = False,
) -> None:
    """List experiments with their progress: running ones first, stale ones marked, then the newest.

    Stale: running with no action for staleAfterMinutes (catalog, default 5).
    """
    from oriole_workstation.database import open_results

    rows = open_results(aws).status(sweep_id=sweep, running=running, limit=limit or None)
    if as_json:
        print_json(rows)
        return
    if not rows:
        out.print("no experiment" + (" running" if running else "") + (f" in sweep {sweep}" if sweep else ""),
                  markup=False)
        return
    out.print(status_table(rows))
    stale = sum(r["stale"] for r in rows)
    if stale:
        out.print(f"\n{stale} stale: running with no action for their staleAfterMinutes; `oriole doctor` tells "
                  "whether anything still runs them.", markup=False)
