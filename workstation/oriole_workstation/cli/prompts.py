"""``oriole prompts``: prompt versions, kept locally or in Parameter Store (``--aws``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from oriole import catalog
from oriole_workstation.cli.common import AwsParameterStore, Commands, out, print_columns

app = Commands(help="Prompt versions (local, or Parameter Store with --aws).", no_args_is_help=True)


def prompt_store(aws: bool) -> dict[str, str]:
    """The prompt versions stored now (version -> text): Parameter Store's with ``aws``, else the local ones."""
    from oriole_workstation import prompts

    if aws:
        import boto3

        return prompts.aws_prompts(boto3.client("ssm"))
    return prompts.local_prompts()


@app.command("list")
def prompts_list(aws: AwsParameterStore = False) -> None:
    """Every prompt version with its size and hash.

    The hash is stored on each experiment.
    """
    print_columns(
        ("version", "bytes", "sha256", "first line"),
        [
            (v, len(t.encode()), catalog.prompt_hash(t)[:16], t.strip().splitlines()[0][:60])
            for v, t in sorted(prompt_store(aws).items())
        ],
    )


@app.command("show")
def prompts_show(version: str, aws: AwsParameterStore = False) -> None:
    """Print one prompt version."""
    from oriole_workstation import prompts
    from oriole_workstation.display import terminal_safe

    text = terminal_safe(prompts.get(prompt_store(aws), version), lines=True)
    print(text, end="" if text.endswith("\n") else "\n")


@app.command("put")
def prompts_put(
    version: str,
    file: Annotated[Path, typer.Option("--file", "-f", help="Prompt text file (UTF-8).")],
    aws: AwsParameterStore = False,
) -> None:
    """Store a prompt version.

    Experiments pick it with promptVersion (or `oriole run --prompt`).
    """
    from oriole_workstation import prompts

    text = prompts.read_text(file)
    if aws:
        import boto3

        stored = prompts.put_aws(boto3.client("ssm"), version, text)
    else:
        stored = prompts.put_local(version, text)
    where = "Parameter Store" if aws else "the local prompt folder"
    size, digest = len(text.encode()), catalog.prompt_hash(text)[:16]
    out.print(
        f"prompt {version} {'stored in' if stored else 'is already in'} {where} ({size} bytes, sha256 {digest})",
        markup=False,
        highlight=False,
    )
