"""The CLI's view of a deployed Oriole: the stacks' outputs, executions on the deployed state machine,
and Parameter Store. Everything goes through boto3 with the researcher's own credentials."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable

from oriole import catalog
from oriole.config import check_override, parse_assignment

ORCHESTRATOR_STACK = "OrioleOrchestrator"
TERMINAL = ("SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED")


class DeploymentNotFound(RuntimeError):
    """The stack is not deployed in this account and region (or the credentials cannot see it)."""


def stack_outputs(cloudformation, stack: str = ORCHESTRATOR_STACK) -> dict[str, str]:
    try:
        [description] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except cloudformation.exceptions.ClientError as err:
        raise DeploymentNotFound(f"stack {stack} not found ({err.response['Error']['Message']}); deploy with "
                                 "`make deploy`, or check AWS_PROFILE and AWS_REGION") from None
    return {o["OutputKey"]: o["OutputValue"] for o in description.get("Outputs", [])}


def start(sfn, state_machine_arn: str, execution_input: dict) -> str:
    name = f"oriole-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
    return sfn.start_execution(stateMachineArn=state_machine_arn, name=name,
                               input=json.dumps(execution_input))["executionArn"]


def follow(sfn, execution_arn: str, on_status: Callable[[dict], None], poll_seconds: float = 2.0) -> dict:
    """Poll an execution until it ends, then follow the successor chain (``exp-<id>-part-<n>``) if it
    handed over; returns the description of the last execution."""
    while True:
        description = sfn.describe_execution(executionArn=execution_arn)
        on_status(description)
        if description["status"] not in TERMINAL:
            time.sleep(poll_seconds)
            continue
        successor = _successor(sfn, execution_arn)
        if successor is None:
            return description
        execution_arn = successor


def _successor(sfn, execution_arn: str) -> str | None:
    """The execution this one continued as, from its ContinueAsNew task's output, if any."""
    events = sfn.get_execution_history(executionArn=execution_arn, reverseOrder=True, maxResults=20)["events"]
    for event in events:
        details = event.get("taskSucceededEventDetails")
        if details and "successorExecutionArn" in details.get("output", ""):
            return json.loads(details["output"])["Payload"]["successorExecutionArn"]
    return None


def parameter_values(ssm) -> dict[str, str]:
    """Every parameter under the prefix, name -> value."""
    paginator = ssm.get_paginator("get_parameters_by_path")
    return {p["Name"]: p["Value"] for page in paginator.paginate(Path=catalog.PREFIX, Recursive=True)
            for p in page["Parameters"]}


def set_parameter(ssm, name: str, value: str) -> str:
    """Set a catalog parameter (by name, path or config key) after checking the value's type and range;
    returns the parameter's full name."""
    key, typed = parse_assignment(f"{name}={value}")
    param = catalog.BY_KEY[key]
    check_override(param, typed)
    ssm.put_parameter(Name=param.name, Value=str(typed), Type="String", Overwrite=True)
    return param.name
