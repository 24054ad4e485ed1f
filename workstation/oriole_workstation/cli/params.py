"""``oriole params``: the parameter catalog, and its values in Parameter Store."""

from __future__ import annotations

from typing import Annotated

import typer

from oriole import catalog
from oriole_workstation.cli.common import Commands, fail, out, print_columns

app = Commands(help="The parameter catalog.", no_args_is_help=True)


@app.command("list")
def params_list(
    aws: Annotated[bool, typer.Option("--aws", help="Show the values deployed in Parameter Store.")] = False,
) -> None:
    """The parameter catalog and its values.

    Names, defaults (or deployed values), config keys, and when each is read.
    """
    values = {}
    if aws:
        import boto3

        from oriole_workstation import cloud

        values = cloud.parameter_values(boto3.client("ssm"))
    rows = [
        (
            p.name,
            values.get(p.name, "(not deployed)") if aws else p.default,
            p.key if p.overridable else "-",
            p.read_at,
            p.description + (f" Applies only with {p.applies_when}." if p.applies_when else ""),
        )
        for p in catalog.CATALOG
    ]
    rows += [
        (catalog.prompt_name(v), "(shipped)", "promptVersion", "start", "System prompt text")
        for v in catalog.SHIPPED_PROMPT_VERSIONS
    ]
    print_columns(("name", "default", "config key", "read at", "description"), rows)


@app.command("set")
def params_set(
    name: str, value: str, aws: Annotated[bool, typer.Option("--aws", help="Required: set it in your account.")] = False
) -> None:
    """Set a parameter in Parameter Store (--aws).

    The value is checked against the catalog first. Locally, give it to an experiment with --config.
    """
    if not aws:
        raise fail(
            "locally every run seeds Parameter Store from the catalog: override a value for one run "
            "with `oriole run --config KEY=VALUE`, or pass --aws to change the deployed value"
        )
    import boto3

    from oriole_workstation import cloud

    full_name = cloud.set_parameter(boto3.client("ssm"), name, value)
    out.print(f"{full_name} = {value} (new experiments snapshot it when they start)", markup=False, highlight=False)
