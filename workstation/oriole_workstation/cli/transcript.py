"""``oriole transcript``: each turn of an experiment as the model saw it (``oriole_workstation.transcript``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole_workstation import files
from oriole_workstation.cli.common import AwsDatabase, err, experiment_id, fail, opened, selection
from oriole_workstation.display import wrote
from oriole_workstation.files import OutputRefused


def transcript(
    experiment: Annotated[int, typer.Argument(help="Experiment id.", metavar="EXPERIMENT", parser=experiment_id)],
    form: Annotated[str, typer.Option("--format", help="html, text or jsonl.")] = "text",
    file: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write to this file instead of printing.")
    ] = None,
    aws: AwsDatabase = False,
) -> None:
    """Each turn of an experiment as the model saw it.

    The system prompt (version and hash, once), the context, the earlier turns
    the memory carried, every tool call with its arguments and result, the text and reasoning returned, tokens,
    latency, retries and trims per call, and the compaction summaries. jsonl holds, per call, the request body the
    provider was sent (rebuilt from what is stored) and its answer as it came back."""
    from oriole_workstation import transcript as transcripts

    if form not in transcripts.FORMATS:
        raise fail(f"--format must be one of {', '.join(transcripts.FORMATS)}; got {form!r}")
    content = transcripts.render(
        transcripts.load(opened(selection(ids=[experiment]), aws).store.conn, experiment), form
    )
    if file is None:
        typer.echo(content, nl=False)
        return
    files.write_text(file, content, OutputRefused)
    err.print(wrote(file), highlight=False, markup=False)
