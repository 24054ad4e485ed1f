"""ContinueAsNew: start the successor execution that carries the experiment on, then this one ends.

The successor gets a deterministic name (``exp-<id>-part-<n>``), which makes a retried start idempotent on
AWS, and an input of the experiment id and a continuation token: the row keeps the token's hash (one
statement, once per execution), and the successor's StartExperiment attaches only with a token issued so
(``experiments.continue_as_new``). A throttled StartExecution is retried by botocore with backoff; one still
throttled after that is ``StartExecutionThrottled``, which the state machine retries.
"""

from aws_lambda_powertools.utilities.typing import LambdaContext

from oriole.handlers.executions import start_named
from oriole.handlers.observability import logger
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import Continued, ContinueRequest, task
from oriole.store import shared_store


@logger.inject_lambda_context
@task(ContinueRequest, Continued, "ContinueAsNew input")
def handler(request: ContinueRequest, context: LambdaContext) -> Continued:
    result = experiments.continue_as_new(request, shared_store(context), start_named)
    logger.info(
        "continued as new execution",
        extra={"experiment_id": request.experimentId, "successor": result.successor_execution_arn},
    )
    return result
