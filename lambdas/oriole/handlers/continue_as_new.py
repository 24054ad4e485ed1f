"""ContinueAsNew: start the successor execution that carries the experiment on, then this one ends.

The successor gets a deterministic name (``exp-<id>-part-<n>``), which makes a retried start idempotent on
AWS; its input is only the experiment id. A throttled StartExecution is retried by botocore with backoff;
one still throttled after that is ``StartExecutionThrottled``, which the state machine retries.
"""

from oriole.handlers.executions import start_named
from oriole.handlers.observability import logger
from oriole.progress import successor_name


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    experiment_id, part = int(event["experimentId"]), int(event["part"]) + 1
    arn = start_named(event["stateMachineArn"], successor_name(experiment_id, part), {"experimentId": experiment_id})
    logger.info("continued as new execution", extra={"experiment_id": experiment_id, "successor": arn})
    return {"successorExecutionArn": arn, "part": part}
