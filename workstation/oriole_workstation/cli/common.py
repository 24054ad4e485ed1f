"""What every command group shares: the consoles, one way to fail, plain columns, the ``--aws`` option."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from oriole.errors import OrioleError
from oriole_workstation.display import terminal_safe

out = Console()
err = Console(stderr=True)

DATE_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]
# The report's filters, shared by every command that selects experiments the way the report does.
ModelFilter = Annotated[str | None, typer.Option("--model", help="Only this model name (e.g. explorer, qwen2.5:7b).")]
PromptFilter = Annotated[str | None, typer.Option("--prompt", help="Only this prompt version.")]
MazeFilter = Annotated[str | None, typer.Option("--maze", help="Only this maze, or this maze family (e.g. perfect).")]
SinceFilter = Annotated[datetime | None, typer.Option("--since", formats=DATE_FORMATS,
                                                      help="Only experiments started at or after this time.")]
UntilFilter = Annotated[datetime | None, typer.Option("--until", formats=DATE_FORMATS,
                                                      help="Only experiments started before this time.")]
TagFilter = Annotated[str | None, typer.Option("--tag", help="Only experiments whose comment has this word, "
                                                             "e.g. sweep:ladder.")]
AwsParameterStore = Annotated[bool, typer.Option("--aws", help="Use Parameter Store of your AWS account instead.")]
AwsDatabase = Annotated[bool, typer.Option("--aws", help="Read the deployed database (DATABASE_URL).")]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one clear line on stderr (whatever text it quotes, shown, not obeyed); the caller raises the
    returned exit."""
    err.print(f"[bold red]error:[/] {escape(terminal_safe(message))}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def print_json(data: object) -> None:
    """One JSON object on stdout; every character beyond ASCII escaped, so stored text cannot steer the
    terminal."""
    out.print_json(json.dumps(data, default=str), ensure_ascii=True)


def print_columns(headers: tuple[str, ...], rows: list[tuple]) -> None:
    """Plain aligned columns: never truncated, easy to grep and to paste into an issue; stored text in a cell
    is shown, never obeyed (``terminal_safe``)."""
    cells = [tuple(map(str, headers)), *(tuple(terminal_safe(str(value)) for value in row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers) - 1)]
    for row in cells:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=False)) + "  " + row[-1])


def reported(function: Callable) -> Callable:
    """The command, with every error raised on purpose (an ``OrioleError``) reported as one line, exit 2."""
    @functools.wraps(function)
    def command(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except OrioleError as error:
            raise fail(f"{type(error).__name__}: {error}") from None
    return command


class Commands(typer.Typer):
    """A command group whose commands all report errors through ``reported``."""

    def command(self, *args, **kwargs) -> Callable[[Callable], Callable]:
        register = super().command(*args, **kwargs)
        return lambda function: register(reported(function))
