"""The CLI's view of a deployed Oriole: the stacks' outputs, executions on the deployed state machine,
and Parameter Store. Everything goes through boto3 with the researcher's own credentials."""

from __future__ import annotations

import os

from oriole import catalog
from oriole.config import parse_assignment
from oriole.errors import OrioleError

# The deployment ORIOLE_DEPLOYMENT names (cdk deploy -c deployment=...): its stack and, through the catalog,
# its parameter prefix.
ORCHESTRATOR_STACK = f"{os.environ.get(catalog.DEPLOYMENT) or catalog.DEFAULT_DEPLOYMENT}Orchestrator"


class DeploymentNotFound(OrioleError):
    """The stack is not deployed in this account and region (or the credentials cannot see it)."""


def stack_outputs(cloudformation, stack: str = ORCHESTRATOR_STACK) -> dict[str, str]:
    try:
        [description] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except cloudformation.exceptions.ClientError as err:
        raise DeploymentNotFound(f"stack {stack} not found ({err.response['Error']['Message']}); deploy with "
                                 "`make deploy`, or check AWS_PROFILE and AWS_REGION") from None
    return {o["OutputKey"]: o["OutputValue"] for o in description.get("Outputs", [])}


def parameter_values(ssm) -> dict[str, str]:
    """Every parameter under the prefix, name -> value."""
    paginator = ssm.get_paginator("get_parameters_by_path")
    return {p["Name"]: p["Value"] for page in paginator.paginate(Path=catalog.PREFIX, Recursive=True)
            for p in page["Parameters"]}


def set_parameter(ssm, name: str, value: str) -> str:
    """Set a catalog parameter (by name, path or config key) after the check an execution input's ``config``
    gets (type, range, finiteness, text), so no value stored here can break a later start; returns the
    parameter's full name."""
    key, typed = parse_assignment(f"{name}={value}")
    param = catalog.BY_KEY[key]
    ssm.put_parameter(Name=param.name, Value=str(typed), Type="String", Overwrite=True)
    return param.name
