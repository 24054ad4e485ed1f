"""``oriole render``: draw one stored run as pictures (PNG, SVG) or replays (GIF, HTML).

The drawing lives in ``oriole_workstation.render`` (free of the CLI library); this command only reads options,
opens the database and writes the files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation.cli.common import AwsDatabase, chosen_experiments, experiment_id, fail
from oriole_workstation.display import wrote
from oriole_workstation.render import WRITERS, Run, write
from oriole_workstation.results import Results
from oriole_workstation.rows import ExperimentRun


def replay_run(results: Results, experiment: int, record: ExperimentRun) -> Run:
    """The run to draw (``record``: its ``experiment_run``), with its conversation pane when its requests can be
    rebuilt (an experiment stored before they were recorded gets the page without it)."""
    from oriole_workstation import transcript as transcripts

    try:
        conversation = transcripts.conversation_html(transcripts.load(results.store.conn, experiment))
    except transcripts.TranscriptUnavailable:
        conversation = None
    return Run.from_record(record, conversation)


def render(
    experiment: Annotated[
        int | None, typer.Argument(help="Experiment id.", metavar="EXPERIMENT", parser=experiment_id)
    ] = None,
    sweep: Annotated[
        str | None,
        typer.Option("--sweep", metavar="ID", help="Draw every experiment of this sweep instead, into --dir."),
    ] = None,
    output: Annotated[
        list[Path],
        typer.Option(
            "--output", "-o", help=f"File to write; its suffix picks the format ({', '.join(WRITERS)}). Repeatable."
        ),
    ] = [],  # noqa: B006
    replay: Annotated[
        bool, typer.Option("--replay", help="Write the replays (GIF and HTML) instead of the pictures (PNG and SVG).")
    ] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Where files named experiment-N.* go.")] = Path(),
    aws: AwsDatabase = False,
) -> None:
    """Draw a run (or every run of a sweep): PNG and SVG pictures, or with --replay an animated GIF and an HTML
    page with step controls.

    Without --output, writes experiment-N.png and experiment-N.svg (--replay: .gif and .html) into --dir.
    """
    if sweep is not None and output:
        raise fail("--sweep draws many runs: name the folder with --dir, not files with --output")
    results, chosen = chosen_experiments(experiment, sweep, "draw", aws)
    for number in chosen:
        record = results.experiment_run(number)
        if record is None:
            raise fail(f"experiment {number} does not exist")
        targets = output or [
            directory / f"experiment-{number}{suffix}" for suffix in ((".gif", ".html") if replay else (".png", ".svg"))
        ]
        for path in write(replay_run(results, number, record), targets):
            typer.echo(wrote(path))
