"""The AWS clients the handlers share, one per warm container, with botocore's standard retry mode: a
throttled call is retried with backoff before a handler sees it (and names it, for the state machine)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import boto3
from botocore.config import Config

from oriole.text import JsonObject

if TYPE_CHECKING:  # boto3's types come with the test extra's stubs; the Lambda never imports them
    from botocore.exceptions import ClientError
    from mypy_boto3_lambda import LambdaClient
    from mypy_boto3_ssm import SSMClient
    from mypy_boto3_stepfunctions import SFNClient

RETRIES = Config(retries={"mode": "standard", "total_max_attempts": 6})


@functools.cache
def ssm() -> SSMClient:
    return boto3.client("ssm", config=RETRIES)


@functools.cache
def stepfunctions() -> SFNClient:
    return boto3.client("stepfunctions", config=RETRIES)


@functools.cache
def awslambda() -> LambdaClient:
    return boto3.client("lambda", config=RETRIES)


def throttled(err: ClientError) -> bool:
    """Whether a botocore ClientError is a throttle."""
    return err.response.get("Error", {}).get("Code") in ("ThrottlingException", "TooManyUpdates")


def describe_execution(execution_arn: str) -> JsonObject | None:
    """DescribeExecution; None when Step Functions does not know the execution (or the ARN is not one)."""
    client = stepfunctions()
    try:
        return dict(client.describe_execution(executionArn=execution_arn))
    except (client.exceptions.ExecutionDoesNotExist, client.exceptions.InvalidArn):
        return None
