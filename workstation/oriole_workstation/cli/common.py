"""What every command group shares: the consoles, one way to fail, plain columns, the ``--aws`` option."""

from __future__ import annotations

import difflib
import errno
import functools
import json
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, is_dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import psycopg
import typer
from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console
from rich.markup import escape
from typer import _click as click
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandFunctionType

from oriole.errors import OrioleError
from oriole.text import ascii_float, ascii_int
from oriole_workstation.display import terminal_safe

if TYPE_CHECKING:
    from oriole_workstation.results import Filters, Results

out = Console(soft_wrap=True)  # a line is never broken by rich: a pipe gets it whole, a terminal wraps it itself
err = Console(stderr=True, soft_wrap=True)


def terminal_width() -> int | None:
    """The columns of the terminal stdout shows (``COLUMNS`` when set, as a shell sets it), or None when stdout is a
    pipe or a file: then nothing is cut to a width, wrapped or padded."""
    if not out.is_terminal:
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else shutil.get_terminal_size().columns


DATE_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S"]
# The filters every command that selects experiments shares (``results.Filters``): repeat one for any of several.
ModelFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--model", metavar="NAME", help="Only this model name (e.g. explorer, qwen2.5:7b).", show_default=False
    ),
]
AgentFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--agent",
        metavar="NAME",
        help="Only this agent: its label in the sweep file, or provider/model.",
        show_default=False,
    ),
]
PromptFilter = Annotated[
    list[str] | None, typer.Option("--prompt", metavar="VERSION", help="Only this prompt version.", show_default=False)
]
MazeFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--maze", metavar="NAME", help="Only this maze, or this maze family (e.g. perfect).", show_default=False
    ),
]
SinceFilter = Annotated[
    datetime | None,
    typer.Option("--since", formats=DATE_FORMATS, help="Only experiments started at or after this time."),
]
UntilFilter = Annotated[
    datetime | None, typer.Option("--until", formats=DATE_FORMATS, help="Only experiments started before this time.")
]
TagFilter = Annotated[
    list[str] | None,
    typer.Option(
        "--tag",
        metavar="WORD",
        help="Only experiments whose comment has this word, e.g. baseline.",
        show_default=False,
    ),
]
SweepFilter = Annotated[
    list[str] | None,
    typer.Option("--sweep", metavar="ID", help="Only the experiments of this sweep (its id).", show_default=False),
]
FILTERS_HELP = "Repeat a filter for any of its values (--sweep a --sweep b); different filters must all hold."
MAX_EXPERIMENT_ID = 2**63 - 1  # experiments.id is a bigint


def whole_number(low: int, high: int) -> Callable[[str | int], int]:
    """A typer ``parser``: a whole number in ASCII digits from ``low`` to ``high``; anything else (``3.0``,
    ``1_000``, Arabic-Indic or fullwidth digits, a number out of range) is refused with the range."""

    def parse(text: str | int) -> int:  # typer passes the default through the parser too
        value = ascii_int(str(text).strip(), len(str(high)) + 1)
        if value is None or not low <= value <= high:
            raise typer.BadParameter(f"expects a whole number from {low:,} to {high:,}; got {text!r:.60}")
        return value

    return parse


def number(low: float, high: float) -> Callable[[str | float], float]:
    """A typer ``parser``: a finite number in ASCII from ``low`` to ``high`` (never ``nan`` or ``inf``)."""

    def parse(text: str | float) -> float:
        value = ascii_float(str(text).strip())
        if value is None or not low <= value <= high:  # NaN fails every comparison
            raise typer.BadParameter(f"expects a number from {low:g} to {high:g}; got {text!r:.60}")
        return value + 0.0  # -0 is 0, and reads so

    return parse


def experiment_id(text: str | int) -> int:
    return whole_number(1, MAX_EXPERIMENT_ID)(text)


AwsParameterStore = Annotated[bool, typer.Option("--aws", help="Use Parameter Store of your AWS account instead.")]
AwsDatabase = Annotated[bool, typer.Option("--aws", help="Read the deployed database (DATABASE_URL).")]


def renamed_flag(old: str) -> Any:
    """A flag's old spelling, kept hidden (out of help and the reference) so that a command typed before the rename
    still runs; ``old_spelling`` says what it is called now."""
    return typer.Option(old, hidden=True)


def old_spelling(used: bool, old: str, new: str) -> bool:
    """Whether a flag's hidden old spelling (``renamed_flag``) was given; if so, a note on stderr names the new one."""
    if used:
        err.print(f"note: {old} is now {new}; the old spelling still works for now", highlight=False, markup=False)
    return used


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one clear line on stderr (whatever text it quotes, shown, not obeyed); the caller raises the
    returned exit."""
    err.print(f"[bold red]error:[/] {escape(terminal_safe(message))}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def selection(
    ids: Sequence[int] | None = None,
    sweep: Sequence[str] | None = None,
    model: Sequence[str] | None = None,
    agent: Sequence[str] | None = None,
    maze: Sequence[str] | None = None,
    prompt: Sequence[str] | None = None,
    tag: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Filters:
    """The command line's filters (each a repeatable option, None when not given) as ``Filters``, repeats
    dropped."""
    from oriole_workstation.results import Filters

    def values(given: Sequence[Any] | None) -> tuple[Any, ...]:
        return tuple(dict.fromkeys(given or ()))

    return Filters(
        values(ids),
        values(sweep),
        values(model),
        values(agent),
        values(maze),
        values(prompt),
        values(tag),
        since,
        until,
    )


def check_filters(results: Results, filters: Filters) -> None:
    """Refuse, in one line and exit status 2, every value a filter names that matches no experiment (a typo must
    not read as an empty result), each with the closest values that exist."""
    from oriole_workstation.results import FILTER_KINDS

    problems = []
    for kind, value in results.unmatched(filters):
        known = results.known_values(kind, value)
        if kind == "ids":
            problems.append(f"no experiment {value}" + (f" (nearest: {', '.join(known)})" if known else " (none yet)"))
            continue
        problems.append(f"{FILTER_KINDS[kind]} {value} matches no experiment ({closest(value, known)})")
    if problems:
        raise fail("; ".join(problems))


def closest(value: str, known: Sequence[str], shown: int = 5) -> str:
    """``closest: a, b`` (the known values most like ``value``), else ``known: a, b, ... (12 in all)``, else
    ``none yet``."""
    if not known:
        return "none yet"
    by_folded = {text.casefold(): text for text in known}
    near = difflib.get_close_matches(value.casefold(), list(by_folded), n=3, cutoff=0.5)
    if near:
        return "closest: " + ", ".join(by_folded[text] for text in near)
    listed = sorted(known)
    more = f", ... ({len(listed)} in all)" if len(listed) > shown else ""
    return "known: " + ", ".join(listed[:shown]) + more


def opened(filters: Filters, aws: bool) -> Results:
    """The database, once the filters are checked: a value that matches nothing, or filters that together
    match nothing, are refused (no filter: every experiment)."""
    from oriole_workstation.database import open_results

    results = open_results(aws)
    if filters.chosen:
        check_filters(results, filters)
        if not results.chosen(filters):
            raise fail(f"no experiment is all of: {filters.describe()} (each alone matches some)")
    return results


def chosen_experiments(filters: Filters, verb: str, aws: bool) -> tuple[Results, list[int]]:
    """The database and the experiments a command acts on (EXPERIMENT ids and the filters), checked as ``opened``
    checks them; no filter at all is refused too (``verb`` says what the command does to them)."""
    if not filters.chosen:
        raise fail(f"say what to {verb}: EXPERIMENT ids, --sweep ID or other filters")
    results = opened(filters, aws)
    return results, results.chosen(filters)


def print_json(data: object) -> None:
    """One JSON object on stdout; every character beyond ASCII escaped, so stored text cannot steer the
    terminal."""
    out.print_json(json.dumps(data, default=json_value), ensure_ascii=True)


def json_value(value: object) -> object:
    """What JSON has no type for: a typed row as its columns (``oriole_workstation.rows``), a number as a number
    (``Decimal``), a moment in ISO 8601, anything else as text."""
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def print_columns(headers: tuple[str, ...], rows: list[tuple]) -> None:
    """Plain aligned columns: never truncated, easy to grep and to paste into an issue; stored text in a cell
    is shown, never obeyed (``terminal_safe``)."""
    cells = [tuple(map(str, headers)), *(tuple(terminal_safe(str(value)) for value in row) for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers) - 1)]
    for row in cells:
        print("  ".join(value.ljust(width) for value, width in zip(row, widths, strict=False)) + "  " + row[-1])


Command = TypeVar("Command", bound=Callable[..., Any])


def adopt_aws_region() -> None:
    """Honour ``AWS_REGION``, as the docs and every message here ask for it: boto3 reads only ``AWS_DEFAULT_REGION``
    (boto/boto3#3620), so ``export AWS_REGION=us-east-1`` alone left a Bedrock run or an ``--aws`` command without a
    region. Where both are set, ``AWS_REGION`` wins, as in the AWS CLI and the other SDKs (and in Lambda, which sets
    both the same)."""
    if region := os.environ.get("AWS_REGION"):
        os.environ["AWS_DEFAULT_REGION"] = region


def reported(function: Command) -> Command:
    """The command, with every error raised on purpose (an ``OrioleError``), every file the system refuses (a
    folder or a device where a file is written, a missing folder, no permission), every AWS call that fails
    (no credentials, no region, access denied) and a database that goes away under it (``oriole db stop``, a
    restart, a dropped connection) reported as one line, exit 2."""

    @functools.wraps(function)
    def command(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except OrioleError as error:
            raise fail(f"{type(error).__name__}: {error}") from None
        except (BotoCoreError, ClientError) as error:
            raise fail(f"AWS: {error} (check AWS_PROFILE, AWS_REGION and your credentials)") from None
        except psycopg.OperationalError as error:
            said = str(error).strip().splitlines()[0] if str(error).strip() else "no reason given"
            raise fail(
                f"the database connection was lost ({type(error).__name__}: {said}): run the command again once "
                "the database is back (the embedded one starts again by itself; a sweep resumes where it stopped)"
            ) from None
        except OSError as error:
            if error.errno == errno.EPIPE:  # the reader of stdout left (| head): nothing to say
                raise
            where = f"{error.filename}: " if error.filename else ""
            raise fail(f"{where}{error.strerror or error}") from None

    return cast(Command, command)  # functools.wraps: the function's own name, signature and help


class OneLineErrors(TyperGroup):
    """The ``oriole`` group: a command line click refuses (an unknown option, a bad value, a missing argument) is
    one line on stderr and exit status 2, like every other refusal, instead of a usage box."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except click.exceptions.NoArgsIsHelpError as error:  # the help is shown: nothing to add
            sys.exit(error.exit_code)
        except click.exceptions.ClickException as error:
            command = getattr(getattr(error, "ctx", None), "command_path", None)
            hint = f" (see `{command} --help`)" if command else ""
            fail(error.format_message() + hint, error.exit_code)
            sys.exit(error.exit_code)
        except typer.Abort:
            fail("aborted", 130)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


class TerminalHelp(TyperCommand):
    """A command whose ``--help`` is written for a terminal: its text re-wrapped to the terminal's width paragraph by
    paragraph, each argument by its name (``FILE``; ``[EXPERIMENT]...`` when it may be left out or repeated), each
    option with the value it takes (``--maze NAME``, ``--by [family|maze]``; a flag alone), its default, and
    nothing Python calls it (no ``<str>`` or ``<list[int]>``)."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [self.options_metavar or "", *(_argument_name(p) for p in self.get_params(ctx) if _is_argument(p))]

    def help_records(self, ctx: click.Context) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """The arguments that say something, and every option: (as named, what it does), as help shows them (the
        docs' CLI reference shows the same)."""
        params: list[Any] = [p for p in self.get_params(ctx) if not getattr(p, "hidden", False)]  # typer's, with help
        arguments = [(_argument_name(p), p.help or "") for p in params if _is_argument(p) and p.help]
        return arguments, [_option_record(p) for p in params if not _is_argument(p)]

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for title, records in zip(("Arguments", "Options"), self.help_records(ctx), strict=True):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


def _is_argument(param: Any) -> bool:
    return bool(param.param_type_name == "argument")


def _argument_name(param: Any) -> str:
    name = (param.metavar or param.name or "").upper()
    name = name if param.required else f"[{name}]"
    return name + ("..." if param.nargs != 1 else "")


def _option_record(param: Any) -> tuple[str, str]:
    """``-o, --output FILE`` and its help with its default (a flag is its name alone, its ``--no-`` twin unsaid)."""
    names = ", ".join(sorted(param.opts, key=len))
    if not param.is_flag:
        names += " " + (param.metavar or _value_name(param))
    shown = _plain(param.default) if param.default is not None else None
    if param.is_flag or shown in (None, [], ()) or callable(shown) or not param.show_default:
        return names, param.help or ""
    return (
        names,
        f"{param.help or ''}  [default: {', '.join(map(str, shown)) if isinstance(shown, list | tuple) else shown}]",
    )


def _value_name(param: Any) -> str:
    """What an option without a metavar takes, as help names it: its choices (``[family|maze]``), ``TIME`` for a
    moment, else the last word of its name (``--ollama-url URL``, ``--timeout-seconds SECONDS``)."""
    kind = param.type_descriptor
    if kind.is_choice:
        return "[" + "|".join(str(_plain(choice)) for choice in kind.choices or ()) + "]"
    if kind.is_datetime:
        return "TIME"
    return str(max(param.opts, key=len)).rsplit("-", 1)[-1].upper()


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


class Commands(typer.Typer):
    """A command group whose commands all report errors through ``reported`` and write their help for a terminal
    (``TerminalHelp``)."""

    def __init__(self, **kwargs: Any):
        super().__init__(**{"rich_markup_mode": None, **kwargs})

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[CommandFunctionType], CommandFunctionType]:
        register = super().command(name, cls=TerminalHelp, **kwargs)
        return lambda function: register(reported(function))
