"""``oriole export``: the experiments a report selects, as Parquet, JSON Lines or CSV files and a data dictionary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

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
    selection,
)
from oriole_workstation.display import wrote
from oriole_workstation.export import DICTIONARY, Format, export
from oriole_workstation.results import Filters, Results


def export_command(
    output: Annotated[
        Format,
        typer.Option(
            "--format",
            help="parquet (needs pip install 'oriole[analysis]'), jsonl or csv; or inspect: Inspect AI "
            "evaluation logs (needs pip install 'oriole[inspect]').",
        ),
    ],
    folder: Annotated[Path, typer.Option("--output", "-o", metavar="DIR", help="The folder to write the files into.")],
    sweep: SweepFilter = None,
    model: ModelFilter = None,
    agent: AgentFilter = None,
    prompt: PromptFilter = None,
    maze: MazeFilter = None,
    since: SinceFilter = None,
    until: UntilFilter = None,
    tag: TagFilter = None,
    aws: AwsDatabase = False,
) -> None:
    """Write experiments, turns, actions and model calls to files.

    One file per table (the experiments with the result columns), for the experiments the filters select, and a
    data dictionary (DATA_DICTIONARY.md).

    Types are kept: integers, UTC timestamps, JSON as its text. Every file comes from one snapshot of the
    database, so they agree even while experiments run. The filters are the report's: repeat one for any of its
    values; a value that matches no experiment is refused (exit status 2).

    --format inspect writes Inspect AI evaluation logs instead (open them with `inspect view --log-dir FOLDER`):
    one log per agent of a sweep, one sample per ended experiment (the maze its id, the repetition its epoch)
    with the messages as the model saw them, pictures included, each call's request and answer, the scores
    (success, spl, efficiency, ending), the model usage, and the configuration and provenance as metadata.
    """
    filters = selection(
        sweep=sweep, model=model, agent=agent, maze=maze, prompt=prompt, tag=tag, since=since, until=until
    )
    if output is Format.inspect:
        from oriole_workstation import inspect_logs

        inspect_logs.require_inspect()  # before the database is opened
        _inspect_logs(opened(filters, aws), filters, folder)
        return
    counts = export(opened(filters, aws), filters, output, folder)
    for table, rows in counts.items():
        out.print(wrote(folder / f"{table}.{output.value}", f" ({rows:,} rows)"), markup=False, highlight=False)
    out.print(wrote(folder / DICTIONARY), markup=False, highlight=False)


def _inspect_logs(results: Results, filters: Filters, folder: Path) -> None:
    from oriole_workstation import files, inspect_logs
    from oriole_workstation.report import GroupBy, origin_of

    files.make_folder(folder, files.OutputRefused, "--output")
    with results.snapshot():
        experiments = results.compared(filters)
        origin = origin_of(experiments, filters, GroupBy.family, results.database())
        written = inspect_logs.write(results, experiments, origin, folder)
    for path in written:
        out.print(wrote(path), markup=False, highlight=False)
    if not written:
        out.print("no ended experiment matches: no log written", markup=False, highlight=False)
