"""``oriole ls`` and ``oriole watch``: the ``experiment_status`` view as a table, once or live until the end.

A running experiment with no action for its ``staleAfterMinutes`` (catalog, default 5) is marked stale: its
process or execution may be gone (``oriole doctor`` says) or its model very slow.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table
from rich.text import Text

from oriole.progress import AGENT_ENDING, SUCCESS_ENDING
from oriole_workstation.cli.common import (
    AwsDatabase,
    SweepFilter,
    err,
    experiment_id,
    fail,
    number,
    out,
    print_json,
    whole_number,
)
from oriole_workstation.display import TERMINAL_COLUMNS, short_maze, shorten, terminal_safe
from oriole_workstation.outcomes import ending_text, outcome_text
from oriole_workstation.results import Results

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


def status_table(rows: list[dict], now: datetime | None = None, wide: bool = False) -> Table:
    """Running experiments first; a stale one is marked, bold, in the status column. It fits
    ``TERMINAL_COLUMNS``: the turn, the progress to the goal and the sweep are in the ``wide`` view."""
    now = now or datetime.now(UTC)
    table = Table(box=None, header_style="bold", pad_edge=False)
    columns = [("experiment", True), ("agent", False), ("maze", False), ("status", False), ("turn", True),
               ("actions", True), ("progress", True), ("last action", True), ("tokens", True), ("cost", True),
               ("sweep", False)]
    shown = [i for i, (header, _) in enumerate(columns) if wide or header not in WIDE_ONLY]
    for i in shown:
        header, right = columns[i]
        table.add_column(header if wide or i else "id", justify="right" if right else "left", no_wrap=True)
    for r in rows:
        outcome = outcome_text(r["status"], r["failure_reason"])
        wide_ending = wide and r["ending"] not in (None, SUCCESS_ENDING, AGENT_ENDING)
        state = Text("STALE " + outcome, style="bold yellow") if r["stale"] else _shown(
            f"{outcome} ({ending_text(r['ending'])})" if wide_ending else outcome)
        agent = r["agent_label"] or f"{r['llm_provider']}/{r['model_name']}"  # a sweep file's label first
        cells = (str(r["experiment_id"]), _shown(agent if wide else shorten(agent, AGENT_WIDTH)),
                 _shown(r["maze"] if wide else short_maze(r["maze"])), state, str(r["turn"]),
                 f"{r['actions']:,}/{r['max_actions']:,}",
                 "-" if r["progress_percent"] is None else f"{float(r['progress_percent']):.1f}%",
                 _ago(r["last_action_at"], now), f"{r['input_tokens'] + r['output_tokens']:,}",
                 f"${float(r['cost_usd']):.4f}", _shown(r["sweep_id"] or "-"))
        table.add_row(*(cells[i] for i in shown))
    return table


def _shown(text: str) -> Text:
    """Stored text in a cell: never markup (a Text), never obeyed (``terminal_safe``)."""
    return Text(terminal_safe(text))


def ls(
    running: Annotated[bool, typer.Option("--running", help="Only running experiments.")] = False,
    sweep: SweepFilter = None,
    limit: Annotated[int, typer.Option(help="At most this many rows (0: all).", metavar="N",
                                       parser=whole_number(0, 1_000_000))] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="Every column (the turn, the progress to the goal, the "
                                                      "sweep) and whole names, however wide.")] = False,
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
    piped = Console(width=WIDE_COLUMNS if wide else TERMINAL_COLUMNS)  # not a terminal: rich would assume 80
    (piped if wide or not out.is_terminal else out).print(status_table(rows, wide=wide))
    stale = sum(r["stale"] for r in rows)
    if stale:
        out.print(f"\n{stale} stale: running with no action for their staleAfterMinutes; `oriole doctor` tells "
                  "whether anything still runs them.", markup=False)


class Watcher:
    """Polls the status view until what it watches has ended: one experiment closed, or no experiment of the
    sweep running at two polls in a row (a sweep starts the next experiment as one ends)."""

    def __init__(self, results: Results, experiment: int | None, sweep: str | None):
        self.results, self.experiment, self.sweep = results, experiment, sweep
        self.quiet_polls = 0

    def rows(self) -> list[dict]:
        return self.results.status(experiment_id=self.experiment, sweep_id=self.sweep)

    def ended(self, rows: list[dict]) -> bool:
        running = any(r["status"] == "running" for r in rows)
        self.quiet_polls = 0 if running else self.quiet_polls + 1
        return self.quiet_polls >= (1 if self.experiment is not None else 2)


def watch(
    experiment: Annotated[int | None, typer.Argument(help="The experiment to watch.", metavar="EXPERIMENT",
                                                     parser=experiment_id)] = None,
    sweep: SweepFilter = None,
    interval: Annotated[float, typer.Option(help="Seconds between refreshes.", metavar="SECONDS",
                                            parser=number(0.01, 3600))] = 2.0,
    aws: AwsDatabase = False,
) -> None:
    """Watch an experiment (or every experiment of a sweep) live until it ends.

    The table refreshes every --interval seconds; it stops when the experiment is closed, or when no
    experiment of the sweep has been running for two refreshes in a row. Watching a sweep before its first
    experiment has started waits for it. Ctrl-C stops watching (the
    experiments go on).
    """
    from oriole_workstation.database import open_results

    if (experiment is None) == (sweep is None):
        raise fail("say what to watch: an EXPERIMENT id or --sweep ID")
    watcher = Watcher(open_results(aws), experiment, sweep)
    rows = watcher.rows()
    if not rows and sweep is None:
        raise fail(f"no experiment {experiment}")
    try:
        if not rows:  # started before the sweep's first experiment: wait for it
            err.print(f"waiting for the first experiment of sweep {terminal_safe(sweep)} (Ctrl-C stops waiting)",
                      highlight=False, markup=False)
        while not rows:
            time.sleep(interval)
            rows = watcher.rows()
        with Live(status_table(rows), console=out, refresh_per_second=4) as live:
            while not watcher.ended(rows):
                time.sleep(interval)
                rows = watcher.rows()
                live.update(status_table(rows))
    except KeyboardInterrupt:
        err.print("stopped watching; the experiments go on")
        raise typer.Exit(130) from None
    endings = Counter(ending_text(r["ending"]) for r in rows)
    out.print("ended: " + ", ".join(f"{n} {ending}" for ending, n in sorted(endings.items())), markup=False)
