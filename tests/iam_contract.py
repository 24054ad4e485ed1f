"""The IAM contract between the code and its deployment: every AWS call a function makes (recorded by
``tests.aws_calls``) must be one its role in the synthesized templates allows, and every task state of a deployed
flow must be one its state machine's role allows (``tests.iam_policy`` decides, offline).

The deployment is the one ``tests/infra`` synthesizes (``CONTEXT`` there: the default deployment ``Oriole``, a
Bedrock base model and a profile id, both model-server API keys), in each profile (``PROFILES``: the lean one is
``LEAN`` there), resolved for the local runner's region and account (us-east-1, 123456789012: the same on both
sides). A call must be allowed in every profile.

A local run names some resources differently; ``Deployment.translate`` maps them, and nothing else:

- the state machines ``oriole-experiment`` and ``oriole-sweep`` (``runner.STATE_MACHINE_NAME``...) and their
  executions -> the deployed ``<stack>-experiment`` and ``<stack>-sweep``; the functions ``oriole-<name>`` (and
  their versions) -> the deployed functions;
- a resource a function finds in its environment (``aws_calls.NAMING_VARIABLES``: the database and API-key secrets,
  the migrations' role secrets, the reconciler's state machine, the version pruner's stack and sweep state
  machine) -> the template's value of that variable on that function; a variable the template does not set on the
  function is left as it is, and so is denied; a function the pruner is given (``<anything>-<Name>``, as in
  ``Oriole-CheckProgress``) -> the deployed function ``Name``, when the template gives the pruner that function;
- a Bedrock model the deployment does not grant (local runs use made-up ids) -> the deployment's first model, under
  the same profile prefix: the deployment would have been configured with the model the run used, as a base id.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from oriole import flows
from oriole.environment import BEDROCK_MODEL_IDS, PRUNED_FUNCTIONS, ROLE_SECRETS
from oriole.lifecycle import deployment
from oriole_workstation import runner
from tests import isolation
from tests.aws_calls import ENTRY_POINTS, Call
from tests.iam_policy import UnsupportedPolicy, allows

REGION, ACCOUNT = runner.REGION, runner.ACCOUNT
# What the AWS managed policies the function roles attach allow, from their published documents (AWS Managed
# Policy Reference): logs and network interfaces only. A managed policy not listed here fails the contract.
_LOGS = ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"]
MANAGED_POLICIES = {
    "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": [
        {"Effect": "Allow", "Action": _LOGS, "Resource": "*"}
    ],
    "arn:aws:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole": [
        {
            "Effect": "Allow",
            "Action": [
                *_LOGS,
                "ec2:CreateNetworkInterface",
                "ec2:DescribeNetworkInterfaces",
                "ec2:DescribeSubnets",
                "ec2:DeleteNetworkInterface",
                "ec2:AssignPrivateIpAddresses",
                "ec2:UnassignPrivateIpAddresses",
            ],
            "Resource": "*",
        }
    ],
}
LAMBDA_INVOKE = "arn:aws:states:::lambda:invoke"
START_EXPERIMENT = "oriole.handlers.start_experiment.handler"


PROFILES = ("standard", "lean")


@functools.cache
def contract_stacks(profile: str = "standard") -> tuple:
    """The data and orchestrator stacks of the contract deployment in ``profile``, synthesized once per session."""
    from tests.infra.conftest import CONTEXT, LEAN, synthesize

    return synthesize(**(LEAN if profile == "lean" else CONTEXT))


def contract_templates(profile: str = "standard") -> dict:
    """The contract deployment's templates in ``profile`` (``data``, ``orchestrator``) and the orchestrator stack's
    name (``stack``), from one synthesis a session: the session's xdist workers share it through their common
    folder, the first to need it synthesizing while the others wait (``tests.isolation.shared_once``)."""

    def synthesized() -> dict:
        from aws_cdk.assertions import Template

        data, orchestrator = contract_stacks(profile)
        return {
            "data": Template.from_stack(data).to_json(),
            "orchestrator": Template.from_stack(orchestrator).to_json(),
            "stack": orchestrator.stack_name,
        }

    return isolation.shared_once(f"contract-templates-{profile}.json", synthesized)


@functools.cache
def deployed(region: str = REGION, profile: str = "standard") -> Deployment:
    templates = contract_templates(profile)
    return Deployment(templates["data"], templates["orchestrator"], region, stack=templates["stack"])


@dataclass(frozen=True)
class Function:
    name: str  # the construct's name: StartExperiment, Reconciler...
    arn: str
    handler: str
    statements: list[dict]
    environment: dict  # the template's variables, unresolved


@dataclass(frozen=True)
class StateMachine:
    name: str
    arn: str
    definition: dict  # substitutions filled
    statements: list[dict]


class Deployment:
    """The synthesized templates with their intrinsics resolved for ``region``: each function's role and
    environment, each state machine's definition and role."""

    def __init__(
        self, data: dict, orchestrator: dict, region: str = REGION, account: str = ACCOUNT, stack: str | None = None
    ):
        from tests.infra.conftest import resolve

        self._template = orchestrator
        self.resolve = functools.partial(
            resolve, template=orchestrator, region=region, account=account, exporter=data, stack=stack
        )
        resources = orchestrator["Resources"].items()
        self.functions = {
            r["Properties"]["Handler"]: self._function(logical_id, r["Properties"])
            for logical_id, r in resources
            if r["Type"] == "AWS::Lambda::Function" and r["Properties"].get("Handler") in ENTRY_POINTS
        }
        machines = [
            self._state_machine(r["Properties"], f"arn:aws:states:{region}:{account}:stateMachine:")
            for _, r in resources
            if r["Type"] == "AWS::StepFunctions::StateMachine"
        ]
        self.state_machines = {m.name: m for m in machines}

    def _function(self, logical_id: str, properties: dict) -> Function:
        return Function(
            re.sub(r"^Functions|[0-9A-F]{8}$", "", logical_id),
            self.resolve({"Fn::GetAtt": [logical_id, "Arn"]}),
            properties["Handler"],
            self.role(properties["Role"]),
            properties.get("Environment", {}).get("Variables", {}),
        )

    def _state_machine(self, properties: dict, arn_prefix: str) -> StateMachine:
        """The definition as deployed: the definition string with CloudFormation's substitutions filled."""
        text = self.resolve(properties["DefinitionString"])
        for key, value in self.resolve(properties.get("DefinitionSubstitutions", {})).items():
            text = text.replace(f"${{{key}}}", value)
        name = self.resolve(properties["StateMachineName"])
        return StateMachine(name, arn_prefix + name, json.loads(text), self.role(properties["RoleArn"]))

    def role(self, arn: dict) -> list[dict]:
        """Every statement of the role a ``Fn::GetAtt [role, Arn]`` names: its inline policies, the policies
        attached to it and the managed policies it lists."""
        [role_id, _] = arn["Fn::GetAtt"]
        role = self._template["Resources"][role_id]["Properties"]
        statements = [s for policy in role.get("Policies", []) for s in policy["PolicyDocument"]["Statement"]]
        statements += [
            s
            for r in self._template["Resources"].values()
            if r["Type"] == "AWS::IAM::Policy" and {"Ref": role_id} in r["Properties"]["Roles"]
            for s in r["Properties"]["PolicyDocument"]["Statement"]
        ]
        for managed in self.resolve(role.get("ManagedPolicyArns", [])):
            if managed not in MANAGED_POLICIES:
                raise UnsupportedPolicy(f"{role_id} attaches {managed}, whose statements the contract does not know")
            statements += MANAGED_POLICIES[managed]
        return self.resolve(statements)

    def variable(self, handler: str, name: str) -> str | None:
        """The value the template gives ``name`` in the environment of ``handler``'s function, resolved."""
        value = self.functions[handler].environment.get(name)
        return None if value is None else self.resolve(value)

    def state_machine(self, flow: str) -> StateMachine:
        [found] = [m for name, m in self.state_machines.items() if name.endswith(f"-{flow}")]
        return found

    @property
    def model_ids(self) -> list[str]:
        return json.loads(self.variable(START_EXPERIMENT, BEDROCK_MODEL_IDS))

    def _renames(self, call: Call) -> Iterator[tuple[str, str]]:
        """(local, deployed) resource pairs for ``call``: its function's environment first, then the flows."""
        for name, local in call.environment:
            ours = self.variable(call.function, name)
            if ours is None:
                continue
            if name == ROLE_SECRETS:
                theirs = json.loads(ours)
                yield from ((arn, theirs[role]) for role, arn in json.loads(local).items() if role in theirs)
            elif name == PRUNED_FUNCTIONS:
                yield from self._pruned(json.loads(local), json.loads(ours))
            else:
                yield from _with_executions(local, ours)
        for local_name, flow in (
            (runner.STATE_MACHINE_NAME, flows.EXPERIMENT),
            (runner.SWEEP_STATE_MACHINE_NAME, flows.SWEEP),
        ):
            yield from _with_executions(
                f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{local_name}", self.state_machine(flow).arn
            )
        for function in self.functions.values():
            yield f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:oriole-{function.name}", function.arn

    def _pruned(self, local: list[str], theirs: list[str]) -> Iterator[tuple[str, str]]:
        """(local, deployed) function ARNs for the functions a pruner is given: ``<anything>-<Name>`` stands for
        the deployed function ``Name`` if the template's list (``theirs``, function names) holds it."""
        given = {
            function.name: function.arn
            for function in self.functions.values()
            if function.arn.rsplit(":", 1)[-1] in theirs
        }
        for name in local:
            deployed_arn = given.get(name.rsplit("-", 1)[-1])
            if deployed_arn:
                yield f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{name}", deployed_arn

    def translate(self, call: Call) -> str:
        """The deployed resource ``call`` stands for (see the module docstring)."""
        resource = call.resource
        for local, ours in self._renames(call):
            if resource == local or resource.startswith((local + ":", local + "/")):
                resource = ours + resource[len(local) :]
                break
        if call.model_id is not None:
            model, granted = deployment.base_model(call.model_id), [deployment.base_model(m) for m in self.model_ids]
            if model not in granted and resource.endswith(model):
                resource = resource[: -len(model)] + granted[0]
        return resource

    def denial(self, call: Call) -> str | None:
        """Why the deployed role would refuse ``call``; None when it allows it."""
        function = self.functions.get(call.function)
        if function is None:
            return f"{call.function} is the handler of no deployed function"
        if call.problem:
            return f"{function.name} ({call.function}) called {call.action}: {call.problem}"
        resource = self.translate(call)
        if allows(function.statements, call.action, resource, {"aws:RequestedRegion": call.region}):
            return None
        local = "" if resource == call.resource else f" (locally {call.resource})"
        return f"{function.name} ({call.function}) would be denied {call.action} on {resource}{local}"

    def checked(self, calls: Iterable[Call]) -> set[tuple[str, str, str]]:
        """The distinct (function, action, deployed resource) the contract evaluates for ``calls``."""
        return {
            (self.functions[c.function].name, c.action, self.translate(c))
            for c in calls
            if c.function in self.functions and not c.problem
        }


def _with_executions(local: str, ours: str) -> Iterator[tuple[str, str]]:
    """A pair, and for state machines the pair of their executions' ARNs (a map's children included)."""
    yield local, ours
    if ":stateMachine:" in local and ":stateMachine:" in ours:
        yield local.replace(":stateMachine:", ":execution:"), ours.replace(":stateMachine:", ":execution:")


def denials(calls: Iterable[Call]) -> list[str]:
    """Each distinct refusal the deployed roles of either profile would give ``calls``."""
    found = ((profile, deployed(profile=profile).denial(call)) for profile in PROFILES for call in set(calls))
    return sorted({f"{profile}: {d}" for profile, d in found if d})


def task_requirements(machine: StateMachine) -> Iterator[tuple[str, str, str]]:
    """(state, action, resource) for every call the service makes on the state machine's behalf: each Task
    state's Lambda invoke (the version it names), and for each distributed map the start of its child executions
    (of this state machine) and their description and stop (``execution:<name>/<map label>:<id>``)."""

    def walk(states: dict, path: str) -> Iterator[tuple[str, str, str]]:
        for name, state in states.items():
            where = f"{path}{name}"
            if state["Type"] == "Task":
                yield where, "lambda:InvokeFunction", _invoked(state, where)
            for branch in state.get("Branches", []):
                yield from walk(branch["States"], f"{where}/")
            processor = state.get("ItemProcessor") or state.get("Iterator")
            if processor is None:
                continue
            if processor.get("ProcessorConfig", {}).get("Mode") == "DISTRIBUTED":
                if "ItemReader" in state or "ResultWriter" in state:
                    raise UnsupportedPolicy(f"{where}: a map reading or writing S3 has no contract here yet")
                child = (
                    machine.arn.replace(":stateMachine:", ":execution:")
                    + f"/{state.get('Label', name)}:0b6f2c3e-5d1a-4e8f-9c7b-2a4d6e8f0a1c"
                )
                yield where, "states:StartExecution", machine.arn
                yield where, "states:DescribeExecution", child
                yield where, "states:StopExecution", child
            yield from walk(processor["States"], f"{where}/")

    return walk(machine.definition["States"], "")


def _invoked(state: dict, where: str) -> str:
    """The function a Task state invokes; only static Lambda invokes are known to the contract."""
    resource = state["Resource"]
    if resource.startswith("arn:aws:lambda:"):
        return resource
    if resource.split(".", 1)[0] != LAMBDA_INVOKE or "FunctionName" not in state.get("Parameters", {}):
        raise UnsupportedPolicy(f"{where}: no contract for a task on {resource} with {state.get('Parameters')}")
    return state["Parameters"]["FunctionName"]


def state_machine_denials(machine: StateMachine) -> list[str]:
    """Each task state call the state machine's role would refuse."""
    return [
        f"state machine {machine.name}, state {where}: its role would be denied {action} on {resource}"
        for where, action, resource in task_requirements(machine)
        if not allows(machine.statements, action, resource)
    ]
