"""The status-change finalizer: an EventBridge rule sends every terminal "Step Functions Execution Status
Change" of the state machine here, so an experiment is closed however its execution ended, including the
ends the state machine cannot catch itself (an execution timeout, an abort from the console, a failure
of the failure path, a successor execution that never started). Locally, the workstation's launcher and
``oriole doctor`` call the same handler.
"""

from aws_lambda_powertools.utilities.parser import envelopes, parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.executions import execution_status
from oriole.handlers.observability import count, count_failure, logger, metrics
from oriole.inputs import ExecutionStatusChange
from oriole.lifecycle import experiments
from oriole.store import shared_store
from oriole.text import JsonObject


@logger.inject_lambda_context
@metrics.log_metrics
def handler(event: JsonObject, context: LambdaContext) -> JsonObject:
    detail = parse(event=event, model=ExecutionStatusChange, envelope=envelopes.EventBridgeEnvelope)
    if not isinstance(detail, ExecutionStatusChange):  # the envelope's detail is an object: it gives the model
        raise TypeError(f"the status-change event's detail parsed as {type(detail).__name__}")
    result = experiments.close_after_execution(detail, shared_store(context), execution_status)
    logger.info("execution status change", extra=result)
    if result["closed"]:
        count("ExperimentsClosedByStatusChange")
        count_failure(result["experimentStatus"], result["failureReason"])
    return result
