"""``oriole check --aws``: after a deploy, one command that runs the deployed system through its own functions
and roles and prints one line per check, with the fix for each failure (``oriole_workstation.check``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from oriole_workstation.cli.common import err, fail, out, print_json
from oriole_workstation.display import terminal_safe

if TYPE_CHECKING:
    from oriole_workstation.check import Check, DeploymentCheck, Options

POLL_SECONDS = 5.0  # how often each running execution is looked at (the sweep's items look at their row as often)
STYLES = {"ok": "green", "FAIL": "bold red", "skip": "yellow"}  # by check.OK, FAIL, SKIP
NAME_WIDTH = 10


def check(
    aws: Annotated[
        bool,
        typer.Option(
            "--aws",
            help="Check the deployment of your AWS credentials and region "
            "(ORIOLE_DEPLOYMENT names another than Oriole).",
        ),
    ] = False,
    ollama_model: Annotated[
        str | None,
        typer.Option(help="The model to ask each allow-listed Ollama endpoint for (without it they are skipped)."),
    ] = None,
    openai_model: Annotated[
        str | None,
        typer.Option(
            help="The model to ask each allow-listed OpenAI-compatible base URL for (without it they are skipped)."
        ),
    ] = None,
    timeout_seconds: Annotated[
        int, typer.Option(min=10, max=7200, help="How long to wait for the experiments and the sweep.")
    ] = 900,
    paid: Annotated[
        bool,
        typer.Option(
            "--paid",
            help="Also call each granted Bedrock model through its global. profile, and run a two-run sweep that "
            "its cost cap censors and its spend limit stops (a few calls, under a cent each).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of the lines.")] = False,
) -> None:
    """Check a deployment end to end.

    The stacks and the code version, the parameters and prompts, a short
    baseline experiment (the database through the proxy), one minimal call to each granted Bedrock model and
    each allow-listed model server, and a one-item sweep; a stopped run that the status-change finalizer must
    close, an event it refuses that must reach its dead-letter queue, the reconciler run once, each model's
    price and the sweeps' spend limit (with --paid, a run censored by its cost cap and a sweep stopped by its
    limit). One line per check, each failure with its fix; what the check runs is archived, and it removes
    its test event from the queue.

    Exit status: 0 when every check passed (or was skipped), 1 when one failed, 2 when there is nothing to
    check (no credentials, no region, no deployment).
    """
    if not aws:
        raise fail(
            "oriole check exercises a deployment: run `oriole check --aws` (locally, `make demo` and "
            "`make test` run the same code)"
        )
    from botocore.exceptions import ClientError

    from oriole_workstation import check as checks
    from oriole_workstation.check import FAIL, OK, SKIP

    models = {provider: model for provider, model in (("ollama", ollama_model), ("openai", openai_model)) if model}
    options = checks.Options(
        server_models=models, timeout_seconds=timeout_seconds, poll_seconds=POLL_SECONDS, paid=paid
    )
    found: list[Check] = []
    with Spinner(disable=as_json) as spinner:
        try:
            for line in _deployment_check(options, spinner.update).run():
                found.append(line)
                if not as_json:
                    spinner.print(_line(line))
        except ClientError as error:
            operation = error.operation_name
            raise fail(
                f"AWS refused {operation} ({error.response['Error'].get('Message', '')}); the check needs "
                "credentials that may read CloudFormation, Step Functions, Lambda and Parameter Store, start and "
                "stop executions, invoke the finalizer and the reconciler and read their dead-letter queue (an "
                "administrator's or a PowerUser's)"
            ) from None
    failures = sum(c.status == FAIL for c in found)
    if as_json:
        print_json({"ok": not failures, "checks": [c.as_json() for c in found]})
    else:
        counts = {s: sum(c.status == s for c in found) for s in (OK, FAIL, SKIP)}
        out.print(f"\n{counts[OK]} ok, {counts[FAIL]} failed, {counts[SKIP]} skipped", highlight=False)
    raise typer.Exit(1 if failures else 0)


class Spinner:
    """What the check is doing, on stderr while it runs; each finished line goes to stdout between updates."""

    def __init__(self, disable: bool):
        self.status = None if disable else err.status("checking the deployment", spinner="dots")

    def __enter__(self) -> Spinner:
        if self.status:
            self.status.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.status:
            self.status.stop()

    def update(self, text: str) -> None:
        if self.status:
            self.status.update(terminal_safe(text))

    def print(self, line: Text) -> None:
        if self.status:
            self.status.stop()
        out.print(line, highlight=False, soft_wrap=True)
        if self.status:
            self.status.start()


def _deployment_check(options: Options, progress: Callable[[str], None]) -> DeploymentCheck:
    """The check of the deployment of these credentials and region; without either, exit status 2."""
    import boto3
    from botocore.exceptions import ProfileNotFound

    from oriole_workstation import check as checks
    from oriole_workstation import cloud

    try:
        session = boto3.Session()
    except ProfileNotFound as error:
        raise fail(f"{error}: set AWS_PROFILE to a profile of `aws configure list-profiles`") from None
    if session.region_name is None:
        raise fail("no AWS region: set AWS_REGION (or use a profile that has one, AWS_PROFILE)")
    if session.get_credentials() is None:
        raise fail("no AWS credentials: run `aws configure` or set AWS_PROFILE")
    aws = checks.Aws(
        session.client("cloudformation"),
        session.client("stepfunctions"),
        session.client("lambda"),
        session.client("ssm"),
        session.region_name,
        session.client("bedrock"),
        session.client("service-quotas"),
        session.client("sqs"),
    )
    return checks.DeploymentCheck(aws, cloud.deployment_name(), options, progress)


def _line(line: Check) -> Text:
    """``ok    name        detail`` and, for a failure, ``      fix: ...`` under it; stored text shown, never obeyed."""
    text = Text(f"{line.status:<4}  ", style=STYLES[line.status])
    text.append(f"{line.name:<{NAME_WIDTH}}  ", style="bold")
    text.append(terminal_safe(f"{line.target}: " if line.target else "") + terminal_safe(line.detail))
    if line.fix:
        text.append("\n      fix: ", style="bold")
        text.append(terminal_safe(line.fix))
    return text
