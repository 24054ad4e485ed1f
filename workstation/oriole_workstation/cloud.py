"""The CLI's view of a deployed Oriole: the stacks' outputs, executions on the deployed state machine,
and Parameter Store. Everything goes through boto3 with the researcher's own credentials."""

from __future__ import annotations

import json
import os

from oriole import catalog
from oriole.config import parse_assignment
from oriole.environment import DEFAULT_DEPLOYMENT, DEPLOYMENT
from oriole.errors import OrioleError

LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"


class DeploymentNotFound(OrioleError):
    """The stack is not deployed in this account and region (or the credentials cannot see it)."""


def deployment_name() -> str:
    """The deployment the CLI works on, as ``cdk deploy -c deployment=<Name>`` named it: ``ORIOLE_DEPLOYMENT``,
    else the default ``Oriole``, spelt as the stacks spell it (``catalog.canonical_deployment``: case does not
    matter). Its name decides its stacks' names (``catalog.data_stack``, ``catalog.orchestrator_stack``) and,
    through the catalog, its parameter prefix."""
    return catalog.canonical_deployment(os.environ.get(DEPLOYMENT) or DEFAULT_DEPLOYMENT)


def describe_stack(cloudformation, stack: str) -> dict | None:
    """DescribeStacks of one stack; None when no stack of that name exists (a deleted one included)."""
    try:
        [description] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except cloudformation.exceptions.ClientError as err:
        if "does not exist" in err.response["Error"].get("Message", ""):
            return None
        raise
    return description


def outputs(description: dict) -> dict[str, str]:
    return {o["OutputKey"]: o["OutputValue"] for o in description.get("Outputs", [])}


def stack_outputs(cloudformation, stack: str | None = None) -> dict[str, str]:
    """The outputs of ``stack``, by default the orchestrator stack of the deployment (``deployment_name``): how
    every ``--aws`` command finds the deployed state machines."""
    stack = stack or catalog.orchestrator_stack(deployment_name())
    try:
        description = describe_stack(cloudformation, stack)
    except cloudformation.exceptions.ClientError as err:
        description, why = None, err.response["Error"]["Message"]
    else:
        why = "it does not exist"
    if description is None:
        raise DeploymentNotFound(
            f"stack {stack} not found ({why}); deploy with `make deploy`, or check AWS_PROFILE and AWS_REGION"
        )
    return outputs(description)


def deployments(cloudformation) -> list[str]:
    """The Oriole deployments in this account and region: the orchestrator stacks, by their Deployment output."""
    pages = cloudformation.get_paginator("describe_stacks").paginate()
    return sorted(
        {
            outputs(stack)["Deployment"]
            for page in pages
            for stack in page["Stacks"]
            if stack["StackName"].endswith(catalog.ORCHESTRATOR) and "Deployment" in outputs(stack)
        }
    )


def task_functions(sfn, state_machine_arn: str) -> dict[str, str]:
    """State name -> the function (a published version on AWS) each Lambda task of the deployed definition
    invokes, map iterations included."""
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=state_machine_arn)["definition"])
    found: dict[str, str] = {}

    def walk(states: dict) -> None:
        for name, state in states.items():
            if state.get("Resource") == LAMBDA_INVOKE:
                found[name] = state["Parameters"]["FunctionName"]
            for inner in (state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])):
                if inner:
                    walk(inner["States"])

    walk(definition["States"])
    return found


def function_environment(awslambda, function: str) -> dict[str, str]:
    """The environment variables a function (or one of its versions, by ARN) runs with."""
    configuration = awslambda.get_function_configuration(FunctionName=function)
    return configuration.get("Environment", {}).get("Variables", {})


def parameter_values(ssm) -> dict[str, str]:
    """Every parameter under the prefix, name -> value."""
    paginator = ssm.get_paginator("get_parameters_by_path")
    return {
        p["Name"]: p["Value"]
        for page in paginator.paginate(Path=catalog.PREFIX, Recursive=True)
        for p in page["Parameters"]
    }


def set_parameter(ssm, name: str, value: str) -> str:
    """Set a catalog parameter (by name, path or config key) after the check an execution input's ``config``
    gets (type, range, finiteness, text), so no value stored here can break a later start; returns the
    parameter's full name."""
    key, typed = parse_assignment(f"{name}={value}")
    param = catalog.BY_KEY[key]
    ssm.put_parameter(Name=param.name, Value=str(typed), Type="String", Overwrite=True)
    return param.name
