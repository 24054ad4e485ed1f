"""``oriole watch``: the ``oriole ls`` table of some experiments (by id, or a sweep's, or any the filters choose), live
until they end."""

from __future__ import annotations

import time
from collections import Counter
from typing import Annotated

import typer
from rich.live import Live

from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SweepFilter,
    check_filters,
    err,
    experiment_id,
    fail,
    number,
    out,
    selection,
    terminal_width,
    whole_number,
)
from oriole_workstation.cli.ls import status_table
from oriole_workstation.display import terminal_safe
from oriole_workstation.outcomes import ending_text
from oriole_workstation.results import Filters, Results
from oriole_workstation.rows import StatusRow


class Watcher:
    """Polls the status view until what it watches has ended: every experiment named by its id closed, or, for
    filters that new experiments may join (a sweep starts the next experiment as one ends), no experiment
    running at two polls in a row."""

    def __init__(self, results: Results, filters: Filters):
        self.results, self.filters = results, filters
        self.quiet_polls = 0

    def rows(self) -> list[StatusRow]:
        return self.results.status(self.filters)

    def ended(self, rows: list[StatusRow]) -> bool:
        running = any(r.running for r in rows)
        self.quiet_polls = 0 if running else self.quiet_polls + 1
        return self.quiet_polls >= (1 if self.filters.fixed else 2)


def watch(
    experiments: Annotated[
        list[int] | None,
        typer.Argument(
            help="The experiments to watch.", metavar="EXPERIMENT", parser=experiment_id, show_default=False
        ),
    ] = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    interval: Annotated[
        float, typer.Option(help="Seconds between refreshes.", metavar="SECONDS", parser=number(0.01, 3600))
    ] = 2.0,
    wait_start: Annotated[
        int,
        typer.Option(
            help="How long to wait for a planned sweep's first experiment.",
            metavar="SECONDS",
            parser=whole_number(0, 86_400),
        ),
    ] = 600,
    aws: AwsDatabase = False,
) -> None:
    """Watch experiments live until they end.

    By id, every experiment of a sweep, or any the filters choose.

    The table refreshes every --interval seconds; it stops when the experiments named by id are closed, or
    when none of those the filters choose has been running for two refreshes in a row. A sweep that is
    planned (`oriole sweep` has begun) but has no experiment yet is waited for, at most --wait-start seconds.
    Ctrl-C stops watching (the experiments go on). Repeat a filter for any of its values; a value that
    matches no experiment (nor a planned sweep) is refused, exit status 2.
    """
    from oriole_workstation.database import open_results

    filters = selection(ids=experiments, sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt)
    if not filters.chosen:
        raise fail("say what to watch: EXPERIMENT ids, --sweep ID or other filters")
    results = open_results(aws)
    check_filters(results, filters)
    watcher = Watcher(results, filters)
    rows = watcher.rows()
    planned = [s for s in filters.sweeps if results.sweep_plan(s) is not None]
    if not rows and not planned:
        raise fail(f"no experiment is all of: {filters.describe()} (each alone matches some)")
    try:
        if not rows:  # planned, before its first experiment: wait for it
            err.print(
                f"waiting for the first experiment of sweep {terminal_safe(' or '.join(planned))} (at most "
                f"{wait_start} s; Ctrl-C stops waiting)",
                highlight=False,
                markup=False,
            )
        deadline = time.monotonic() + wait_start
        while not rows:
            if time.monotonic() > deadline:
                raise fail(
                    f"sweep {' or '.join(planned)} started no experiment in {wait_start} s: see "
                    f"`oriole sweep status {planned[0]}`"
                )
            time.sleep(interval)
            rows = watcher.rows()
        if out.is_terminal:
            with Live(status_table(rows, width=terminal_width()), console=out, refresh_per_second=4) as live:
                while not watcher.ended(rows):
                    time.sleep(interval)
                    rows = watcher.rows()
                    live.update(status_table(rows, width=terminal_width()))  # the terminal may have been resized
        else:  # a pipe gets the last table once and whole, as `oriole ls` prints it (a live one is cut to 80 columns)
            while not watcher.ended(rows):
                time.sleep(interval)
                rows = watcher.rows()
            out.print(status_table(rows, width=terminal_width()), soft_wrap=True)
    except KeyboardInterrupt:
        err.print("stopped watching; the experiments go on")
        raise typer.Exit(130) from None
    endings = Counter(ending_text(r.ending) for r in rows)
    out.print("ended: " + ", ".join(f"{n} {ending}" for ending, n in sorted(endings.items())), markup=False)
