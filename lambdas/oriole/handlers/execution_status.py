"""The status-change finalizer: an EventBridge rule sends every terminal "Step Functions Execution Status
Change" of the state machine here, so an experiment is closed however its execution ended, including the
ends the state machine cannot catch itself (an execution timeout, an abort from the console, a failure
of the failure path, a successor execution that never started). Locally, the runner's ``wait`` and
``oriole doctor`` call the same handler.
"""

import boto3

from oriole import experiments
from oriole.handlers.observability import count, logger, metrics
from oriole.store import shared_store

DETAIL_KEYS = ("executionArn", "stateMachineArn", "name", "status", "input", "output", "error", "cause")


def status_change_detail(execution: dict) -> dict:
    """The status-change event's detail from a DescribeExecution answer: how the local runner and
    ``oriole doctor --aws`` report an execution's end that EventBridge did not deliver."""
    detail = {k: execution[k] for k in DETAIL_KEYS if k in execution}
    detail.update({k: int(execution[k].timestamp() * 1000) for k in ("startDate", "stopDate") if k in execution})
    return detail


def execution_status(execution_arn: str) -> str | None:
    """The execution's status, or None when it does not exist (asked only of a handed-over successor)."""
    client = boto3.client("stepfunctions")
    try:
        return client.describe_execution(executionArn=execution_arn)["status"]
    except client.exceptions.ExecutionDoesNotExist:
        return None


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: dict, context) -> dict:
    result = experiments.close_after_execution(event["detail"], shared_store(), execution_status)
    logger.info("execution status change", extra=result)
    if result["closed"]:
        count("ExperimentsClosedByStatusChange")
    return result
