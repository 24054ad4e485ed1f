"""``oriole report`` and ``oriole render``: the commands over stored results.

The logic lives in ``report`` and ``render`` (free of the CLI library); these functions only read options,
open the database and print.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation.cli.common import AwsDatabase, fail
from oriole_workstation.render import WRITERS, Run, write
from oriole_workstation.report import Format, GroupBy, render_report

DATE_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]


def report(
    model: Annotated[str | None, typer.Option(help="Only this model name (e.g. explorer, qwen2.5:7b).")] = None,
    prompt: Annotated[str | None, typer.Option(help="Only this prompt version.")] = None,
    maze: Annotated[str | None, typer.Option(help="Only this maze, or this maze family (e.g. perfect).")] = None,
    since: Annotated[datetime | None, typer.Option(formats=DATE_FORMATS,
                                                   help="Only experiments started at or after this time.")] = None,
    until: Annotated[datetime | None, typer.Option(formats=DATE_FORMATS,
                                                   help="Only experiments started before this time.")] = None,
    tag: Annotated[str | None, typer.Option(help="Only experiments whose comment has this word, e.g. sweep:ladder.")]
    = None,
    by: Annotated[GroupBy, typer.Option(help="One row per maze family, or per maze.")] = GroupBy.family,
    output: Annotated[Format, typer.Option("--format", help="table, csv or json.")] = Format.table,
    aws: AwsDatabase = False,
) -> None:
    """Compare models, prompts and settings, as a table, CSV or JSON.

    Per group: success rate with its 95% Wilson interval, median actions to the goal, median path
    efficiency, tokens and cost per run and per success. Runs are the experiments that ended on the agent's
    merits (succeeded or timed out); failed and aborted ones are counted under errors. Each row is one model
    x prompt x maze family (or maze with --by maze) x the configuration values that differ among the
    compared experiments.
    """
    from oriole_workstation.database import open_results

    text = render_report(open_results(aws), output, by, model=model, prompt=prompt, maze=maze, since=since,
                         until=until, tag=tag)
    typer.echo(text, nl=False)


def render(
    experiment: Annotated[int, typer.Argument(help="Experiment id.")],
    output: Annotated[list[Path], typer.Option("--output", "-o", help="File to write; its suffix picks the format "
                                               f"({', '.join(WRITERS)}). Repeatable.")] = [],  # noqa: B006
    replay: Annotated[bool, typer.Option("--replay", help="Write the replays (GIF and HTML) instead of the "
                                                          "pictures (PNG and SVG).")] = False,
    directory: Annotated[Path, typer.Option("--dir", help="Where files named experiment-N.* go.")] = Path(),
    aws: AwsDatabase = False,
) -> None:
    """Draw a run: PNG and SVG pictures, or with --replay an animated GIF and an HTML page with step controls.

    Without --output, writes experiment-N.png and experiment-N.svg (--replay: .gif and .html) into --dir.
    """
    from oriole_workstation.database import open_results

    record = open_results(aws).experiment_run(experiment)
    if record is None:
        raise fail(f"experiment {experiment} does not exist")
    targets = output or [directory / f"experiment-{experiment}{suffix}"
                         for suffix in ((".gif", ".html") if replay else (".png", ".svg"))]
    for path in write(Run.from_record(record), targets):
        typer.echo(f"wrote {path}")
