"""The reconciler: on a schedule (EventBridge), close every experiment of this state machine whose latest
execution is no longer running although the experiment is still open: an execution's end whose status-change
event was lost (the finalizer's retries ran out; the event waits in the dead-letter queue). It asks Step Functions
first, and leaves the database alone (a paused one paused) when nothing ran lately (``reconcile.worth_a_look``).
It answers with what it found and closed, each closed experiment with its execution's start: ``oriole check --aws``
tells the runs it started from older ones by it."""

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.environment import Environment
from oriole.handlers import aws
from oriole.handlers.observability import count, count_failure, logger, metrics
from oriole.lifecycle import reconcile
from oriole.store import shared_store
from oriole.text import JsonObject


def execution_prefix(state_machine_arn: str) -> str:
    """Every execution ARN of a state machine starts with this."""
    return state_machine_arn.replace(":stateMachine:", ":execution:", 1) + ":"


def executions(state_machine_arn: str) -> Iterator[Mapping[str, Any]]:
    """The state machine's executions, newest first, a page at a time as they are read."""
    pages = aws.stepfunctions().get_paginator("list_executions").paginate(stateMachineArn=state_machine_arn)
    for page in pages:
        yield from page["executions"]


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    env = Environment.read()
    state_machine_arn = env.state_machine_arn
    timeout = timedelta(seconds=env.execution_timeout)
    if not reconcile.worth_a_look(executions(state_machine_arn), datetime.now(UTC), timeout):
        logger.info("nothing ran lately: the database is left alone")
        return {"found": 0, "closed": 0, "lookedAt": False, "closedExperiments": []}
    prefix = execution_prefix(state_machine_arn)
    results = reconcile.close_ended(shared_store(context), aws.describe_execution, lambda arn: arn.startswith(prefix))
    closed = [r for r in results if r["closed"]]
    for result in closed:
        logger.warning("closed an experiment whose execution had ended", extra=result)
        count_failure(result["experimentStatus"], result["failureReason"])
    if closed:
        count("ExperimentsClosedByReconciler", len(closed))
    return {
        "found": len(results),
        "closed": len(closed),
        "lookedAt": True,
        "closedExperiments": [{"experimentId": r["experimentId"], "startDate": r["startDate"]} for r in closed],
    }
