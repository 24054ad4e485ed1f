"""Every AWS API call a Lambda handler makes while the tests run, recorded through botocore's event hooks.

``install`` adds a ``before-parameter-build`` handler to botocore's built-in handlers, as moto adds its own, so every
client of every session created afterwards reports each request it is about to build: under moto, under
botocore's Stubber and against a real endpoint alike. A request is attributed to the function whose handler is
running: the innermost frame on the calling thread's stack that belongs to one of ``ENTRY_POINTS`` (the local
runner routes an invoke to that very function in process; a test may call it directly). Requests made outside any
handler (the tests themselves, the CLI, moto's interpreter invoking the functions) are not the functions' and are
not recorded.

Each request becomes one ``Call`` per resource ARN that IAM authorizes for it (``ARNS``): SSM parameter names,
Secrets Manager secret ids, Step Functions state machines and executions, Bedrock models (a call through an
inference profile: the profile in the calling region and the foundation model in every region it routes to). An
operation without a mapping is recorded with its ``problem``, so the contract fails instead of skipping it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

from oriole.environment import PRUNED_FUNCTIONS, ROLE_SECRETS, STACK_ID, STATE_MACHINE_ARN, SWEEP_STATE_MACHINE_ARN
from oriole.handlers import DEPLOYED
from oriole.lifecycle import deployment
from oriole.provider_registry import PROVIDERS
from oriole_workstation.runner import ACCOUNT

# The deployed functions' handlers: the table infra/functions.py makes every function from (the flows' tasks and
# those beside the flows); a test of the synthesized templates checks that the stack deploys exactly these.
ENTRY_POINTS = tuple(DEPLOYED.values())
# Environment variables naming resources a function calls: locally they name moto's resources, on AWS the template
# sets them; each call keeps the values its function saw.
NAMING_VARIABLES = (
    "DATABASE_SECRET_ARN",
    *(p.api_key_secret for p in PROVIDERS.values() if p.api_key_secret),
    ROLE_SECRETS,
    STATE_MACHINE_ARN,
    PRUNED_FUNCTIONS,
    SWEEP_STATE_MACHINE_ARN,
    STACK_ID,
)


@dataclass(frozen=True)
class Call:
    function: str  # the handler, e.g. oriole.handlers.sweep_tasks.plan
    action: str  # the IAM action, e.g. ssm:GetParametersByPath
    resource: str  # one ARN IAM authorizes the request on
    region: str
    environment: tuple[tuple[str, str], ...] = ()  # the NAMING_VARIABLES the function saw
    model_id: str | None = None  # the model or profile id a Bedrock call named
    problem: str | None = None  # why the request could not be mapped to ARNs


def parameter_arn(name: str, region: str) -> str:
    return f"arn:aws:ssm:{region}:{ACCOUNT}:parameter/{name.lstrip('/')}"


def secret_arn(secret_id: str, region: str) -> str:
    """A secret's ARN; a name is taken as is (IAM sees the full ARN with its suffix: name secrets by ARN)."""
    if secret_id.startswith("arn:"):
        return secret_id
    return f"arn:aws:secretsmanager:{region}:{ACCOUNT}:secret:{secret_id}"


def model_arns(model_id: str, region: str, account: str = ACCOUNT) -> list[str]:
    """What IAM authorizes a Bedrock invocation on: a base model, its foundation model in ``region``; a geographic
    profile, the profile in ``region`` and the foundation model there and in every destination region of its
    geography; a global profile, the profile, the model in ``region`` and the model without a region."""
    partition = "aws-us-gov" if region.startswith("us-gov-") else "aws"
    if model_id.startswith("arn:"):
        return [model_id]
    prefix, model = deployment.profile_prefix(model_id), deployment.base_model(model_id)

    def foundation(where: str) -> str:
        return f"arn:{partition}:bedrock:{where}::foundation-model/{model}"

    if prefix is None:
        return [foundation(region)]
    profile = f"arn:{partition}:bedrock:{region}:{account}:inference-profile/{model_id}"
    if prefix == deployment.GLOBAL:
        return [profile, foundation(region), foundation("")]
    if prefix not in deployment.DESTINATION_REGIONS:
        raise LookupError(
            f"no destination regions are known for {prefix} profiles: add them to "
            "oriole.lifecycle.deployment.DESTINATION_REGIONS from Bedrock's documentation"
        )
    return [profile, *dict.fromkeys(foundation(r) for r in (region, *deployment.DESTINATION_REGIONS[prefix]))]


def foundation_model_arn(model: str, region: str) -> str:
    """The foundation model a lookup names by id or ARN."""
    return model if model.startswith("arn:") else f"arn:aws:bedrock:{region}::foundation-model/{model}"


def profile_arn(profile: str, region: str) -> str:
    """The inference profile a lookup names by id or ARN."""
    return profile if profile.startswith("arn:") else f"arn:aws:bedrock:{region}:{ACCOUNT}:inference-profile/{profile}"


def _model_named(params: dict) -> str | None:
    """The model or profile id a Bedrock call names: an invocation's ``modelId``, a lookup's identifier."""
    named = params.get("modelId") or params.get("modelIdentifier") or params.get("inferenceProfileIdentifier")
    return named if isinstance(named, str) else None


def function_arn(params: dict, region: str) -> str:
    """The function (or, with a ``Qualifier``, the version) a Lambda request names by name or ARN."""
    name = params["FunctionName"]
    arn = name if name.startswith("arn:") else f"arn:aws:lambda:{region}:{ACCOUNT}:function:{name}"
    return f"{arn}:{params['Qualifier']}" if params.get("Qualifier") else arn


def stack_arn(stack: str) -> str:
    """The stack a CloudFormation request names: IAM authorizes it on the stack's ARN, which holds the stack's
    id; a stack named by its name alone cannot be mapped (name the stack by its id, as the pruner does)."""
    if not stack.startswith("arn:"):
        raise LookupError(
            f"stack {stack!r} is named by its name: name it by its ARN (the stack id) so that IAM "
            "sees the stack the role names"
        )
    return stack


Mapper = Callable[[dict, str], list[str]]
# (botocore service, operation) -> (IAM action, the ARNs IAM authorizes the request on): GetParametersByPath on the
# path it names, not on the parameters it returns (Parameter Store user guide, ps-retrieval-authorization.html)
ARNS: dict[tuple[str, str], tuple[str, Mapper]] = {
    ("ssm", "GetParameters"): ("ssm:GetParameters", lambda p, r: [parameter_arn(n, r) for n in p["Names"]]),
    ("ssm", "GetParameter"): ("ssm:GetParameter", lambda p, r: [parameter_arn(p["Name"], r)]),
    ("ssm", "GetParametersByPath"): ("ssm:GetParametersByPath", lambda p, r: [parameter_arn(p["Path"], r)]),
    ("secretsmanager", "GetSecretValue"): (
        "secretsmanager:GetSecretValue",
        lambda p, r: [secret_arn(p["SecretId"], r)],
    ),
    ("stepfunctions", "StartExecution"): ("states:StartExecution", lambda p, r: [p["stateMachineArn"]]),
    ("stepfunctions", "ListExecutions"): ("states:ListExecutions", lambda p, r: [p["stateMachineArn"]]),
    ("stepfunctions", "DescribeExecution"): ("states:DescribeExecution", lambda p, r: [p["executionArn"]]),
    ("stepfunctions", "StopExecution"): ("states:StopExecution", lambda p, r: [p["executionArn"]]),
    ("stepfunctions", "DescribeStateMachineForExecution"): (
        "states:DescribeStateMachineForExecution",
        lambda p, r: [p["executionArn"]],
    ),
    ("lambda", "ListVersionsByFunction"): ("lambda:ListVersionsByFunction", lambda p, r: [function_arn(p, r)]),
    ("lambda", "DeleteFunction"): ("lambda:DeleteFunction", lambda p, r: [function_arn(p, r)]),
    ("lambda", "GetAccountSettings"): ("lambda:GetAccountSettings", lambda p, r: ["*"]),  # no resource of its own
    ("cloudformation", "ListStackResources"): (
        "cloudformation:ListStackResources",
        lambda p, r: [stack_arn(p["StackName"])],
    ),
    # Converse is authorized as InvokeModel, ConverseStream as InvokeModelWithResponseStream (Bedrock API reference)
    ("bedrock-runtime", "Converse"): ("bedrock:InvokeModel", lambda p, r: model_arns(p["modelId"], r)),
    ("bedrock-runtime", "ConverseStream"): (
        "bedrock:InvokeModelWithResponseStream",
        lambda p, r: model_arns(p["modelId"], r),
    ),
    ("bedrock-runtime", "InvokeModel"): ("bedrock:InvokeModel", lambda p, r: model_arns(p["modelId"], r)),
    # the model lookups of an experiment's start (its model identity): on the foundation model, on the profile
    ("bedrock", "GetFoundationModel"): (
        "bedrock:GetFoundationModel",
        lambda p, r: [foundation_model_arn(p["modelIdentifier"], r)],
    ),
    ("bedrock", "GetInferenceProfile"): (
        "bedrock:GetInferenceProfile",
        lambda p, r: [profile_arn(p["inferenceProfileIdentifier"], r)],
    ),
}

CALLS: list[Call] = []  # every call of the session, in order; a test slices it with ``since``


_ENTRIES = {tuple(path.rsplit(".", 1)): path for path in ENTRY_POINTS}  # (module, function) -> handler


def running_function() -> str | None:
    """The handler of the innermost entry point on this thread's stack, if any: a frame running a module-level
    function of that name in that module (the handler itself, under Powertools' decorators)."""
    frame = sys._getframe(1)
    while frame is not None:
        found = _ENTRIES.get((frame.f_globals.get("__name__"), frame.f_code.co_qualname))
        if found:
            return found
        frame = frame.f_back
    return None


def _record(params: dict, model, context: dict, **_) -> None:
    """botocore's ``before-parameter-build``: record the request as the calls of the running function."""
    function = running_function()
    if function is None:
        return
    service, operation = model.service_model.service_name, model.name
    region = context.get("client_region") or ""
    environment = tuple((name, os.environ[name]) for name in NAMING_VARIABLES if name in os.environ)
    seen = functools.partial(Call, function, region=region, environment=environment, model_id=_model_named(params))
    action, arns = ARNS.get((service, operation), (f"{model.service_model.signing_name}:{operation}", None))
    if arns is None:
        CALLS.append(
            seen(action, "", problem=f"no ARN mapping for {service} {operation}: add it to ARNS in tests/aws_calls.py")
        )
        return
    try:
        resources = arns(params, region)
    except LookupError as err:
        CALLS.append(seen(action, "", problem=str(err)))
        return
    CALLS.extend(seen(action, resource) for resource in resources)


def install() -> None:
    """Record from now on: every botocore session created afterwards registers ``_record`` (import order matters,
    as for moto: the test session installs this before any client exists)."""
    from botocore.handlers import BUILTIN_HANDLERS

    if ("before-parameter-build", _record) not in BUILTIN_HANDLERS:
        BUILTIN_HANDLERS.append(("before-parameter-build", _record))


def since(mark: int) -> list[Call]:
    """The calls recorded after ``mark`` (``len(CALLS)`` taken earlier)."""
    return CALLS[mark:]
