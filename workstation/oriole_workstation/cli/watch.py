"""``oriole watch``: the ``oriole ls`` table of one experiment (or of a sweep's experiments), live until it ends."""

from __future__ import annotations

import time
from collections import Counter
from typing import Annotated

import typer
from rich.live import Live

from oriole_workstation.cli.common import (
    AwsDatabase,
    SweepFilter,
    err,
    experiment_id,
    fail,
    number,
    out,
    whole_number,
)
from oriole_workstation.cli.ls import status_table
from oriole_workstation.display import terminal_safe
from oriole_workstation.outcomes import ending_text
from oriole_workstation.results import Results
from oriole_workstation.rows import StatusRow


class Watcher:
    """Polls the status view until what it watches has ended: one experiment closed, or no experiment of the
    sweep running at two polls in a row (a sweep starts the next experiment as one ends)."""

    def __init__(self, results: Results, experiment: int | None, sweep: str | None):
        self.results, self.experiment, self.sweep = results, experiment, sweep
        self.quiet_polls = 0

    def rows(self) -> list[StatusRow]:
        return self.results.status(experiment_id=self.experiment, sweep_id=self.sweep)

    def ended(self, rows: list[StatusRow]) -> bool:
        running = any(r.running for r in rows)
        self.quiet_polls = 0 if running else self.quiet_polls + 1
        return self.quiet_polls >= (1 if self.experiment is not None else 2)


def watch(
    experiment: Annotated[
        int | None, typer.Argument(help="The experiment to watch.", metavar="EXPERIMENT", parser=experiment_id)
    ] = None,
    sweep: SweepFilter = None,
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
    """Watch an experiment (or every experiment of a sweep) live until it ends.

    The table refreshes every --interval seconds; it stops when the experiment is closed, or when no
    experiment of the sweep has been running for two refreshes in a row. A sweep that is planned (its run has
    begun) but has no experiment yet is waited for, at most --wait-start seconds. Ctrl-C stops watching (the
    experiments go on).
    """
    from oriole_workstation.database import open_results

    if (experiment is None) == (sweep is None):
        raise fail("say what to watch: an EXPERIMENT id or --sweep ID")
    results = open_results(aws)
    watcher = Watcher(results, experiment, sweep)
    rows = watcher.rows()
    if not rows and (sweep is None or results.sweep_plan(sweep) is None):
        raise fail(
            f"no experiment {experiment}"
            if sweep is None
            else f"no experiment of sweep {sweep} yet, and it is not planned: start it with `oriole sweep FILE`"
        )
    try:
        if not rows and sweep is not None:  # planned, before its first experiment: wait for it
            err.print(
                f"waiting for the first experiment of sweep {terminal_safe(sweep)} (at most {wait_start} s; "
                "Ctrl-C stops waiting)",
                highlight=False,
                markup=False,
            )
        deadline = time.monotonic() + wait_start
        while not rows:
            if time.monotonic() > deadline:
                raise fail(f"sweep {sweep} started no experiment in {wait_start} s: see `oriole sweep status {sweep}`")
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
    endings = Counter(ending_text(r.ending) for r in rows)
    out.print("ended: " + ", ".join(f"{n} {ending}" for ending, n in sorted(endings.items())), markup=False)
