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


def test_every_command_honours_aws_region_which_boto3_alone_ignores(monkeypatch, tmp_path):
    """The docs say `export AWS_REGION=...`; boto3 reads AWS_DEFAULT_REGION only. Any command adopts AWS_REGION,
    which wins over AWS_DEFAULT_REGION as in the AWS CLI, so a Bedrock run or an --aws command finds its region."""
    import boto3
    from typer.testing import CliRunner

    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))  # no profile's region in the way
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_REGION", "eu-west-2")
    assert boto3.Session().region_name == "us-east-1"  # boto3 alone: AWS_REGION ignored
    result = CliRunner().invoke(app, ["params", "list"])
    assert result.exit_code == 0, result.output
    assert boto3.Session().region_name == "eu-west-2"
