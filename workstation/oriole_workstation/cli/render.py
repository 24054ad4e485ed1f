"""``oriole render``: draw one stored run as pictures (PNG, SVG) or animations (GIF, HTML).

The drawing lives in ``oriole_workstation.render`` (free of the CLI library); this command only reads options,
opens the database and writes the files.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation.cli.common import (
    AgentFilter,
    AwsDatabase,
    MazeFilter,
    ModelFilter,
    PromptFilter,
    SweepFilter,
    chosen_experiments,
    experiment_id,
    fail,
    old_spelling,
    renamed_flag,
    selection,
)
from oriole_workstation.display import wrote
from oriole_workstation.render import CONVERSATION_MAX_ACTIONS, WRITERS, Run, write
from oriole_workstation.results import Results
from oriole_workstation.rows import ExperimentRun


def run_to_draw(results: Results, experiment: int, record: ExperimentRun, conversation: bool = True) -> Run:
    """The run to draw (``record``: its ``experiment_run``); for an animation page (``conversation``) with its
    conversation pane when its requests can be rebuilt (an experiment stored before they were recorded gets the
    page without it) and the run is no longer than ``CONVERSATION_MAX_ACTIONS`` (a longer one's page says where
    its conversation is read instead: the pane holds every call, which a run of a million actions cannot fit)."""
    from oriole_workstation import transcript as transcripts

    run = Run.from_record(record)
    if not conversation:
        return run
    if len(run.steps) > CONVERSATION_MAX_ACTIONS:
        return replace(
            run,
            conversation=(
                f"<p>This run took {len(run.steps):,} actions; an animation page holds the conversation of at most "
                f"{CONVERSATION_MAX_ACTIONS:,}. Read it with <code>oriole transcript {experiment}</code>.</p>"
            ),
        )
    try:
        return replace(
            run, conversation=transcripts.conversation_html(transcripts.load(results.store.conn, experiment))
        )
    except transcripts.TranscriptUnavailable:
        return run


def render(
    experiments: Annotated[
        list[int] | None,
        typer.Argument(help="Experiment ids.", metavar="EXPERIMENT", parser=experiment_id, show_default=False),
    ] = None,
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    maze: MazeFilter = None,
    prompt: PromptFilter = None,
    output: Annotated[
        list[Path],
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help=f"File to write (one experiment); its suffix picks the format ({', '.join(WRITERS)}). Repeatable.",
        ),
    ] = [],  # noqa: B006
    animate: Annotated[
        bool,
        typer.Option("--animate", help="Write the animations (GIF and HTML) instead of the pictures (PNG and SVG)."),
    ] = False,
    replay: Annotated[bool, renamed_flag("--replay")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Where files named experiment-N.* go.")] = Path(),
    aws: AwsDatabase = False,
) -> None:
    """Draw runs as pictures or animations.

    PNG and SVG pictures, or with --animate an animated GIF and an HTML page with step controls.

    The runs are the EXPERIMENT ids and those the filters choose (every experiment of --sweep ID, ...; repeat
    a filter for any of its values). Without --output, writes experiment-N.png and experiment-N.svg (--animate:
    .gif and .html) into --dir.
    """
    animate = animate or old_spelling(replay, "--replay", "--animate")
    filters = selection(ids=experiments, sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt)
    results, chosen = chosen_experiments(filters, "draw", aws)
    if output and len(chosen) > 1:
        raise fail(f"{len(chosen)} runs to draw: name the folder with --dir, not files with --output")
    for number in chosen:
        record = results.experiment_run(number)
        if record is None:  # deleted since it was chosen
            raise fail(f"experiment {number} does not exist")
        targets = output or [
            directory / f"experiment-{number}{suffix}"
            for suffix in ((".gif", ".html") if animate else (".png", ".svg"))
        ]
        pages = any(path.suffix == ".html" for path in targets)
        for path in write(run_to_draw(results, number, record, conversation=pages), targets):
            typer.echo(wrote(path))
