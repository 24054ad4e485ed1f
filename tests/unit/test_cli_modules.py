"""One CLI module per command, named after it: ``oriole <command>`` lives in ``oriole_workstation/cli/<command>.py``
(a group's subcommands in its group's module), so the file to open is the command's name."""

from __future__ import annotations

from pathlib import Path

import oriole_workstation.cli as cli
from oriole_workstation.cli import app

MODULES = Path(cli.__file__).parent
SHARED = {"__init__", "common"}  # the composition, and what every command shares


def test_each_command_lives_in_the_module_named_after_it():
    commands = {info.name or info.callback.__name__: info.callback for info in app.registered_commands}
    groups = {info.name: info.typer_instance for info in app.registered_groups}
    for name, callback in commands.items():
        assert callback.__module__ == f"oriole_workstation.cli.{name}", name
    for name, group in groups.items():
        for info in group.registered_commands:
            assert info.callback.__module__ == f"oriole_workstation.cli.{name}", f"{name} {info.name}"
    modules = {path.stem for path in MODULES.glob("*.py")} - SHARED
    assert modules == set(commands) | set(groups)
    assert set(commands) >= {"run", "status", "doctor", "report", "render", "export", "ls", "watch", "check"}
    assert set(groups) == {"prompts", "mazes", "db", "params", "prices", "experiments", "sweep"}
