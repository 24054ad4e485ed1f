"""The reconciler: on a schedule (EventBridge), close every experiment of this state machine whose latest
execution is no longer running although the experiment is still open: an execution's end whose status-change
event was lost (the finalizer's retries ran out; the event waits in the dead-letter queue)."""

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


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    prefix = execution_prefix(Environment.read().state_machine_arn)
    results = reconcile.close_ended(shared_store(), aws.describe_execution, lambda arn: arn.startswith(prefix))
    closed = [r for r in results if r["closed"]]
    for result in closed:
        logger.warning("closed an experiment whose execution had ended", extra=result)
        count_failure(result["experimentStatus"], result["failureReason"])
    if closed:
        count("ExperimentsClosedByReconciler", len(closed))
    return {"found": len(results), "closed": len(closed)}
