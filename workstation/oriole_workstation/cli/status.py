"""``oriole status``: where an experiment is, by its id or an execution ARN: its row and, with --aws, its
executions."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

import typer

from oriole.text import ascii_int
from oriole_workstation.cli.common import MAX_EXPERIMENT_ID, fail, opened, print_columns, print_json, selection
from oriole_workstation.display import terminal_safe


def status(
    target: Annotated[str, typer.Argument(help="An experiment id, or an execution ARN.")],
    aws: Annotated[
        bool,
        typer.Option("--aws", help="Read the deployed database (DATABASE_URL) and describe the executions on AWS."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Where one experiment is, by its id or an execution ARN.

    Its row in the database and, with --aws, the state of its executions.
    """
    from oriole_workstation.database import open_results

    number = ascii_int(target, 20, signed=False)  # an id (a bigint); anything else is looked up as an ARN
    if number is not None and not 1 <= number <= MAX_EXPERIMENT_ID:
        raise fail(f"an experiment id is a whole number from 1 to {MAX_EXPERIMENT_ID:,}; got {target}")
    if number is not None:
        results = opened(selection(ids=[number]), aws)  # an id that does not exist: refused with the nearest
        row = results.summary(number)
    else:
        results = open_results(aws)
        found = results.store.experiment_for_execution(target, None)
        row = results.summary(found.id) if found else None
    executions = []
    if aws:
        import boto3

        sfn = boto3.client("stepfunctions")
        arns = row.execution_arns if row else [target]
        executions = [
            {k: d.get(k) for k in ("executionArn", "status", "startDate", "stopDate", "error", "cause")}
            for d in (sfn.describe_execution(executionArn=arn) for arn in arns)
        ]
    if row is None and not executions:
        raise fail(f"no experiment {target} in the database (set DATABASE_URL for the deployed one)")
    if as_json:
        print_json({"experiment": row, "executions": executions})
        return
    if row:
        print_columns(("field", "value"), [(k, v) for k, v in asdict(row).items() if k != "execution_arns"])
    for execution in executions:
        print(
            terminal_safe(
                f"{execution['executionArn']}: {execution['status']}"
                + (f" ({execution['error']}: {execution['cause']})" if execution.get("error") else "")
            )
        )
