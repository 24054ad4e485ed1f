"""The finalizers: close the experiment as succeeded, timed out or failed (each at most once)."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.observability import count, count_failure, logger, metrics
from oriole.lifecycle import experiments
from oriole.statuses import ExperimentStatus
from oriole.store import shared_store
from oriole.text import JsonObject


def _finalize(event: JsonObject, context: LambdaContext, status: ExperimentStatus) -> JsonObject:
    result = experiments.finalize(event, shared_store(context), status)
    state = result.as_state()
    logger.info("experiment finalized", extra=state)
    if result.closed:
        count(_METRIC[status])
        count_failure(status, result.failure_reason)
    return state


_METRIC = {
    ExperimentStatus.SUCCEEDED: "ExperimentsSucceeded",
    ExperimentStatus.TIMED_OUT: "ExperimentsTimedOut",
    ExperimentStatus.FAILED: "ExperimentsFailed",
}


@logger.inject_lambda_context
@metrics.log_metrics
def success(event: JsonObject, context: LambdaContext) -> JsonObject:
    return _finalize(event, context, ExperimentStatus.SUCCEEDED)


@logger.inject_lambda_context
@metrics.log_metrics
def timeout(event: JsonObject, context: LambdaContext) -> JsonObject:
    return _finalize(event, context, ExperimentStatus.TIMED_OUT)


@logger.inject_lambda_context
@metrics.log_metrics
def failure(event: JsonObject, context: LambdaContext) -> JsonObject:
    return _finalize(event, context, ExperimentStatus.FAILED)
