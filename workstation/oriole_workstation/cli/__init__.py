"""The ``oriole`` command: one module per command (or command group), named after it, composed here.

Everything the commands raise on purpose is an ``OrioleError``; ``main`` turns each into one line on
stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

import oriole
from oriole.errors import OrioleError
from oriole.text import unstorable
from oriole_workstation.cli import (
    check,
    db,
    doctor,
    experiments,
    export,
    ls,
    mazes,
    params,
    prices,
    prompts,
    render,
    replay,
    report,
    rerun,
    run,
    status,
    sweep,
    transcript,
    view,
    watch,
)
from oriole_workstation.cli.common import Commands, OneLineErrors, adopt_aws_region, err
from oriole_workstation.display import terminal_safe

app = Commands(
    cls=OneLineErrors,
    help="Run LLM maze experiments locally through the real state machine, or on AWS.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(asked: bool) -> None:
    if asked:
        typer.echo(f"oriole {oriole.__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit.", is_eager=True, callback=_print_version)
    ] = False,
) -> None:
    """Run LLM maze experiments locally through the real state machine, or on AWS."""
    adopt_aws_region()


app.command()(run.run)
app.command()(status.status)
app.command()(doctor.doctor)
app.command()(check.check)
app.command()(report.report)
app.command()(render.render)
app.command()(transcript.transcript)
app.command()(replay.replay)
app.command()(rerun.rerun)
app.command("export")(export.export_command)
app.command()(ls.ls)
app.command()(watch.watch)
app.command()(view.view)
app.add_typer(prompts.app, name="prompts")
app.add_typer(mazes.app, name="mazes")
app.add_typer(db.app, name="db")
app.add_typer(params.app, name="params")
app.add_typer(prices.app, name="prices")
app.add_typer(experiments.app, name="experiments")
app.add_typer(sweep.app, name="sweep")


def main() -> None:
    """The ``oriole`` command. An argument that is not text (bytes that are not UTF-8 reach Python as lone
    surrogates) is refused before any command sees it: no database or terminal could take it."""
    try:
        for number, argument in enumerate(sys.argv[1:], 1):
            if problem := unstorable(argument):
                raise OrioleError(f"argument {number} {problem}: is it UTF-8 text?")
        app()
    except OrioleError as error:
        err.print(
            f"[bold red]{type(error).__name__}:[/] {escape(terminal_safe(str(error)))}", highlight=False, soft_wrap=True
        )
        sys.exit(2)
