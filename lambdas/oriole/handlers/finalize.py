"""The finalizers: close the experiment as succeeded, timed out or failed (each at most once)."""

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.observability import count, count_failure, logger, metrics
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import Finalized, FinalizeRequest, task
from oriole.statuses import ExperimentStatus
from oriole.store import shared_store


def _finalize(request: FinalizeRequest, context: LambdaContext, status: ExperimentStatus) -> Finalized:
    result = experiments.finalize(request, shared_store(context), status)
    logger.info("experiment finalized", extra=result.as_state())
    if result.closed:
        count(_METRIC[status])
        count_failure(status, result.failure_reason)
    return result


_METRIC = {
    ExperimentStatus.SUCCEEDED: "ExperimentsSucceeded",
    ExperimentStatus.TIMED_OUT: "ExperimentsTimedOut",
    ExperimentStatus.FAILED: "ExperimentsFailed",
}


@logger.inject_lambda_context
@metrics.log_metrics
@task(FinalizeRequest, Finalized, "FinalizeSuccess input")
def success(request: FinalizeRequest, context: LambdaContext) -> Finalized:
    return _finalize(request, context, ExperimentStatus.SUCCEEDED)


@logger.inject_lambda_context
@metrics.log_metrics
@task(FinalizeRequest, Finalized, "FinalizeTimeout input")
def timeout(request: FinalizeRequest, context: LambdaContext) -> Finalized:
    return _finalize(request, context, ExperimentStatus.TIMED_OUT)


@logger.inject_lambda_context
@metrics.log_metrics
@task(FinalizeRequest, Finalized, "FinalizeFailure input")
def failure(request: FinalizeRequest, context: LambdaContext) -> Finalized:
    return _finalize(request, context, ExperimentStatus.FAILED)
