"""The AWS clients the handlers share, one per warm container, with botocore's standard retry mode: a
throttled call is retried with backoff before a handler sees it (and names it, for the state machine)."""

import functools

import boto3
from botocore.config import Config

from oriole.text import JsonObject

RETRIES = Config(retries={"mode": "standard", "total_max_attempts": 6})


@functools.cache
def ssm():
    return boto3.client("ssm", config=RETRIES)


@functools.cache
def stepfunctions():
    return boto3.client("stepfunctions", config=RETRIES)


def throttled(err) -> bool:
    """Whether a botocore ClientError is a throttle."""
    return err.response.get("Error", {}).get("Code") in ("ThrottlingException", "TooManyUpdates")


def describe_execution(execution_arn: str) -> JsonObject | None:
    """DescribeExecution; None when Step Functions does not know the execution (or the ARN is not one)."""
    client = stepfunctions()
    try:
        return client.describe_execution(executionArn=execution_arn)
    except (client.exceptions.ExecutionDoesNotExist, client.exceptions.InvalidArn):
        return None
