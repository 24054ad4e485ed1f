"""Every ``--help`` is written for a terminal: within 80 columns (and 100, 120), paragraphs re-wrapped rather than
broken into orphan words, every option shown with the value it takes and what it does, no markup, no Python type
and no internal name; a group's commands each summed up whole in its first sentence."""

from __future__ import annotations

import re

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from oriole_workstation.cli import app

INTERNAL = re.compile(
    r"PlanSweep|StartRepetition|CheckRepetition|SummarizeSweep|\bmoto\b|``|<(str|int|float|bool|path|list)"
)


def commands(command=None, path=()):
    command = command or get_command(app)
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from commands(sub, (*path, name))


PATHS = [path for path, _ in commands()]


def helped(path: tuple[str, ...], columns: int) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": str(columns)})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "oriole" for p in PATHS])
@pytest.mark.parametrize("columns", [80, 100, 120])
def test_help_fits_the_terminal_and_says_nothing_internal(path, columns):
    text = helped(path, columns)
    assert max(map(len, text.splitlines())) <= columns
    assert not INTERNAL.search(text), INTERNAL.search(text)
    listed = text.partition("\nCommands:\n")[2].splitlines()
    assert not [line for line in listed if line.endswith("...")], "a command's summary is cut"


@pytest.mark.parametrize("path", [p for p, c in commands() if not hasattr(c, "commands")])
def test_every_option_of_a_command_is_shown_with_what_it_does(path):
    command = dict(commands())[path]
    text = helped(path, 80)
    for param in command.params:
        if param.param_type_name == "option" and not param.hidden:
            assert max(param.opts, key=len) in text, param.opts
            assert param.help, f"{' '.join(path)} {param.opts}: no help"


def test_oriole_sweep_help_is_the_run_with_every_option():
    text = helped(("sweep",), 80)
    for option in ("--dry-run", "--retry-failed", "--no-server-check", "--pause-after N", "--seed-from ID"):
        assert option in text
    assert "oriole sweep status ID" in text
