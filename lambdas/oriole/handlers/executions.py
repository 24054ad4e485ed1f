"""The Step Functions calls of the tasks that start or look at executions (ContinueAsNew, the status-change
finalizer, a sweep's items), made the same way everywhere: through the shared client (botocore's standard
retries first), a throttle still there afterwards named for the state machine to retry."""

import json

from botocore.exceptions import ClientError

from oriole.errors import StartExecutionThrottled
from oriole.handlers import aws
from oriole.text import JsonObject


def start_named(state_machine_arn: str, name: str, execution_input: JsonObject) -> str:
    """Start an execution under a deterministic ``name`` and return its ARN; when one of that name exists
    already (a retried task), return that one's ARN: the start happens once whatever retries it."""
    client = aws.stepfunctions()
    try:
        return client.start_execution(stateMachineArn=state_machine_arn, name=name, input=json.dumps(execution_input))[
            "executionArn"
        ]
    except client.exceptions.ExecutionAlreadyExists:
        return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"
    except ClientError as err:
        if aws.throttled(err):
            raise StartExecutionThrottled(f"Step Functions throttled the start of {name}: {err}") from err
        raise


def execution_status(execution_arn: str) -> str | None:
    """The execution's status, or None when it does not exist."""
    execution = aws.describe_execution(execution_arn)
    return None if execution is None else execution["status"]
