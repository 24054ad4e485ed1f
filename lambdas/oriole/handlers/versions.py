"""The version pruner: during each deploy that changes the code (a trigger), delete the published versions of
Oriole's functions that no execution can call any more (``deployment.stale_versions``). Every deploy publishes
new versions and retains the old ones, which running executions may still call; without this they would pile
up towards Lambda's code storage quota, one asset per function and deploy.

What the stack holds is read while the deploy runs: CloudFormation removes the versions a deploy replaces
only in its last phase, so the version a rollback would return to is still held, and kept."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.environment import Environment
from oriole.handlers import aws
from oriole.handlers.observability import logger
from oriole.lifecycle import deployment
from oriole.text import JsonObject

if TYPE_CHECKING:  # boto3's types come with the test extra's stubs; the Lambda never imports them
    from mypy_boto3_cloudformation import CloudFormationClient
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_stepfunctions import SFNClient


@logger.inject_lambda_context
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    env = Environment.read()
    grace = timedelta(seconds=env.execution_timeout) + deployment.DEPLOY_MARGIN
    deleted = prune(
        boto3.client("lambda", config=aws.RETRIES),
        aws.stepfunctions(),
        boto3.client("cloudformation", config=aws.RETRIES),
        list(env.pruned_functions),
        env.stack_id,
        env.sweep_state_machine_arn,
        grace,
        datetime.now(UTC),
    )
    logger.info("deleted the versions no execution can call", extra={"deleted": deleted})
    return {"deleted": deleted}


def prune(
    lambda_client: LambdaClient,
    stepfunctions: SFNClient,
    cloudformation: CloudFormationClient,
    function_names: list[str],
    stack_id: str,
    sweep_state_machine_arn: str,
    grace: timedelta,
    now: datetime,
) -> dict[str, list[int]]:
    """Delete each function's stale versions; returns function name -> the versions deleted."""
    held = versions_in_stack(cloudformation, stack_id)
    in_use = running_sweep_versions(stepfunctions, sweep_state_machine_arn)
    deleted = {}
    for name in function_names:
        stale = deployment.stale_versions(
            published_versions(lambda_client, name), numbers(held, name), now, grace, numbers(in_use, name)
        )
        for number in stale:
            lambda_client.delete_function(FunctionName=name, Qualifier=str(number))
        if stale:
            deleted[name] = stale
    return deleted


def numbers(versions: set[tuple[str, int]], function_name: str) -> set[int]:
    return {number for name, number in versions if name == function_name}


def published_versions(lambda_client: LambdaClient, function_name: str) -> list[deployment.PublishedVersion]:
    """Every published version of a function (``LastModified``: ``2026-11-25T08:00:00.000+0000``)."""
    pages = lambda_client.get_paginator("list_versions_by_function").paginate(FunctionName=function_name)
    return [
        deployment.PublishedVersion(int(v["Version"]), datetime.fromisoformat(v["LastModified"]))
        for page in pages
        for v in page["Versions"]
        if v["Version"] != "$LATEST"
    ]


def versions_in_stack(cloudformation: CloudFormationClient, stack_id: str) -> set[tuple[str, int]]:
    """The (function, version) pairs the stack holds as ``AWS::Lambda::Version`` resources."""
    pages = cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack_id)
    return deployment.versions_named(
        " ".join(
            resource.get("PhysicalResourceId", "")
            for page in pages
            for resource in page["StackResourceSummaries"]
            if resource["ResourceType"] == "AWS::Lambda::Version"
        )
    )


def running_sweep_versions(stepfunctions: SFNClient, state_machine_arn: str) -> set[tuple[str, int]]:
    """The (function, version) pairs the definitions of the running sweeps invoke (a sweep's distributed maps
    run on their parent's definition, which stays running while they do)."""
    pages = stepfunctions.get_paginator("list_executions").paginate(
        stateMachineArn=state_machine_arn, statusFilter="RUNNING"
    )
    named: set[tuple[str, int]] = set()
    for page in pages:
        for execution in page["executions"]:
            definition = stepfunctions.describe_state_machine_for_execution(executionArn=execution["executionArn"])[
                "definition"
            ]
            named |= deployment.versions_named(definition)
    return named
