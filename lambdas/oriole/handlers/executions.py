"""The Step Functions calls of the tasks that start or look at executions (ContinueAsNew, the status-change
finalizer, a sweep's items), made with boto3 the same way everywhere."""

import json

import boto3


def start_named(state_machine_arn: str, name: str, execution_input: dict) -> str:
    """Start an execution under a deterministic ``name`` and return its ARN; when one of that name exists
    already (a retried task), return that one's ARN: the start happens once whatever retries it."""
    client = boto3.client("stepfunctions")
    try:
        return client.start_execution(stateMachineArn=state_machine_arn, name=name,
                                      input=json.dumps(execution_input))["executionArn"]
    except client.exceptions.ExecutionAlreadyExists:
        return state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"


def execution_status(execution_arn: str) -> str | None:
    """The execution's status, or None when it does not exist."""
    client = boto3.client("stepfunctions")
    try:
        return client.describe_execution(executionArn=execution_arn)["status"]
    except client.exceptions.ExecutionDoesNotExist:
        return None
