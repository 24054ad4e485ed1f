"""ContinueAsNew: start the successor execution that carries the experiment on, then this one ends.

The successor gets a deterministic name (``exp-<id>-part-<n>``), which makes a retried start idempotent on
AWS; its input is only the experiment id. A throttled StartExecution is retried by botocore with backoff;
one still throttled after that is ``StartExecutionThrottled``, which the state machine retries.
"""

import json

from botocore.exceptions import ClientError

from oriole.errors import StartExecutionThrottled
from oriole.handlers import aws
from oriole.handlers.observability import logger
from oriole.progress import successor_name


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    experiment_id, part = int(event["experimentId"]), int(event["part"]) + 1
    name = successor_name(experiment_id, part)
    client = aws.stepfunctions()
    try:
        response = client.start_execution(stateMachineArn=event["stateMachineArn"], name=name,
                                          input=json.dumps({"experimentId": experiment_id}))
        arn = response["executionArn"]
    except client.exceptions.ExecutionAlreadyExists:
        arn = event["stateMachineArn"].replace(":stateMachine:", ":execution:") + f":{name}"
    except ClientError as err:
        if aws.throttled(err):
            raise StartExecutionThrottled(f"Step Functions throttled the start of {name}: {err}") from err
        raise
    logger.info("continued as new execution", extra={"experiment_id": experiment_id, "successor": arn})
    return {"successorExecutionArn": arn, "part": part}
