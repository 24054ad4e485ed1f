"""ContinueAsNew: start the successor execution that carries the experiment on, then this one ends.

The successor gets a deterministic name (``exp-<id>-part-<n>``), which makes a retried start
idempotent on AWS; its input is only the experiment id.
"""

import json

import boto3

from oriole.handlers.observability import logger
from oriole.progress import successor_name


@logger.inject_lambda_context
def handler(event: dict, context) -> dict:
    experiment_id, part = int(event["experimentId"]), int(event["part"]) + 1
    name = successor_name(experiment_id, part)
    client = boto3.client("stepfunctions")
    try:
        response = client.start_execution(stateMachineArn=event["stateMachineArn"], name=name,
                                          input=json.dumps({"experimentId": experiment_id}))
        arn = response["executionArn"]
    except client.exceptions.ExecutionAlreadyExists:
        arn = event["stateMachineArn"].replace(":stateMachine:", ":execution:") + f":{name}"
    logger.info("continued as new execution", extra={"experiment_id": experiment_id, "successor": arn})
    return {"successorExecutionArn": arn, "part": part}
