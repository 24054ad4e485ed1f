"""The IAM contract on the synthesized templates: every task state of both flows is a call its state machine's
role allows, a call through a Bedrock inference profile is allowed on the profile and on the foundation model in
every region it routes to, and a call a function's role would refuse is reported with the function, the action
and the resource (the recorded calls themselves are held to it in tests/integration)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from oriole import flows
from oriole.core.sweep_plan import LANES
from oriole.environment import PRUNED_FUNCTIONS, ROLE_SECRETS, STACK_ID, STATE_MACHINE_ARN, SWEEP_STATE_MACHINE_ARN
from oriole.flows import sweep_flow
from oriole.handlers import DEPLOYED, FUNCTIONS
from oriole.lifecycle import deployment
from oriole.provider_registry import PROVIDERS
from oriole_workstation import runner
from tests.aws_calls import ENTRY_POINTS, Call, model_arns
from tests.iam_contract import Deployment, deployed, state_machine_denials, task_requirements
from tests.iam_policy import allows
from tests.infra.conftest import BASE_MODEL, MODEL_IDS, OLLAMA_SECRET, OPENAI_SECRET

SWEEP_MAPS = len(sweep_flow.LABELS) + len(LANES)  # a distributed map per provider and per lane

LOCAL = f"arn:aws:states:{runner.REGION}:{runner.ACCOUNT}:"
CONTINUE = FUNCTIONS["ContinueAsNewFunctionArn"]
RECONCILER = "oriole.handlers.reconcile.handler"
MIGRATIONS = "oriole.handlers.migrate.handler"
PRUNER = DEPLOYED["VersionPruner"]


@pytest.fixture(scope="module")
def contract(stacks) -> Deployment:
    return deployed()


def test_the_recorder_attributes_calls_to_every_deployed_handler_and_only_those(templates):
    _, orchestrator = templates
    handlers = {r["Properties"]["Handler"] for r in orchestrator.find_resources("AWS::Lambda::Function").values()}
    assert {h for h in handlers if h.startswith("oriole.")} == set(ENTRY_POINTS)


@pytest.mark.parametrize("flow", flows.FLOWS)
def test_every_task_state_is_a_call_its_state_machines_role_allows(contract, flow):
    """The published version each Task state invokes; for each distributed map, the start of its child executions
    (of this same state machine) and their description and stop."""
    machine = contract.state_machine(flow)
    required = list(task_requirements(machine))
    assert state_machine_denials(machine) == []
    invoked = {resource.rsplit(":", 1)[-1] for _, action, resource in required if action == "lambda:InvokeFunction"}
    assert invoked == {"1"}  # a version, never $LATEST
    assert len({r for _, a, r in required if a == "lambda:InvokeFunction"}) == len(flows.functions(flow))
    maps = {where for where, action, _ in required if action == "states:StopExecution"}
    assert len(maps) == (SWEEP_MAPS if flow == flows.SWEEP else 0)


def test_a_task_state_its_role_does_not_allow_is_named(contract):
    machine = contract.state_machine(flows.SWEEP)
    narrowed = dataclasses.replace(
        machine, statements=[s for s in machine.statements if "states:DescribeExecution" not in json.dumps(s["Action"])]
    )
    refused = state_machine_denials(narrowed)
    assert len(refused) == 2 * SWEEP_MAPS  # every map's children, described and stopped
    assert refused[0].startswith(f"state machine {machine.name}, state RunRepetitions/")
    assert (
        f"would be denied states:DescribeExecution on {machine.arn.replace(':stateMachine:', ':execution:')}/"
        in refused[0]
    )


def call(function: str, action: str, resource: str, **fields) -> Call:
    return Call(function, action, resource, runner.REGION, **fields)


def test_a_call_the_deployed_role_refuses_is_reported_with_function_action_and_resource(contract):
    sweep_machine = LOCAL + f"stateMachine:{runner.SWEEP_STATE_MACHINE_NAME}"
    refused = contract.denial(call(CONTINUE, "states:StartExecution", sweep_machine))
    assert refused == (
        f"ContinueAsNew ({CONTINUE}) would be denied states:StartExecution on "
        f"{contract.state_machine(flows.SWEEP).arn} (locally {sweep_machine})"
    )
    assert contract.denial(call(CONTINUE, "states:StartExecution", LOCAL + "stateMachine:oriole-experiment")) is None
    check = FUNCTIONS["CheckProgressFunctionArn"]
    parameter = f"arn:aws:ssm:{runner.REGION}:{runner.ACCOUNT}:parameter/oriole/prompts/v1"
    assert contract.denial(call(check, "ssm:GetParameters", parameter)).startswith("CheckProgress (")
    unmapped = contract.denial(call(check, "ssm:DescribeParameters", "", problem="no ARN mapping"))
    assert unmapped == f"CheckProgress ({check}) called ssm:DescribeParameters: no ARN mapping"


def test_a_local_function_and_its_versions_stand_for_the_deployed_function(contract):
    check = contract.functions[FUNCTIONS["CheckProgressFunctionArn"]]
    version = call(
        RECONCILER,
        "lambda:DeleteFunction",
        f"arn:aws:lambda:{runner.REGION}:{runner.ACCOUNT}:function:oriole-CheckProgress:3",
    )
    assert contract.translate(version) == f"{check.arn}:3"
    assert "would be denied lambda:DeleteFunction" in contract.denial(version)


def test_what_the_version_pruner_is_given_locally_stands_for_what_the_template_gives_it(contract):
    """The pruner's test names functions like the deployment ``Oriole`` would (``Oriole-CheckProgress``), a stack
    and a sweep state machine of moto's: each stands for the template's value on the pruner. It may list and
    delete the versions of the functions it is given, never delete a function, never touch one it is not given
    (the reconciler publishes no versions), and read only its own stack and its sweeps."""
    stack = f"arn:aws:cloudformation:{runner.REGION}:{runner.ACCOUNT}:stack/OrioleOrchestrator/1b2c3d4e"
    sweeps = LOCAL + "stateMachine:OrioleOrchestrator-sweep"
    given = json.dumps(["Oriole-CheckProgress", "Oriole-Reconciler"])
    environment = (
        (PRUNED_FUNCTIONS, given),
        (STACK_ID, stack),
        (SWEEP_STATE_MACHINE_ARN, sweeps),
    )
    function = f"arn:aws:lambda:{runner.REGION}:{runner.ACCOUNT}:function:Oriole-"
    check = contract.functions[FUNCTIONS["CheckProgressFunctionArn"]].arn
    sweep_executions = contract.state_machine(flows.SWEEP).arn.replace(":stateMachine:", ":execution:")
    cases = [
        ("lambda:ListVersionsByFunction", function + "CheckProgress", check, True),
        ("lambda:DeleteFunction", function + "CheckProgress:3", f"{check}:3", True),
        ("lambda:DeleteFunction", function + "CheckProgress", check, False),
        ("lambda:ListVersionsByFunction", function + "Reconciler", function + "Reconciler", False),
        ("cloudformation:ListStackResources", stack, contract.variable(PRUNER, STACK_ID), True),
        ("states:ListExecutions", sweeps, contract.state_machine(flows.SWEEP).arn, True),
        (
            "states:DescribeStateMachineForExecution",
            sweeps.replace(":stateMachine:", ":execution:") + ":s1",
            sweep_executions + ":s1",
            True,
        ),
    ]
    for action, local, deployed_resource, allowed in cases:
        pruned = call(PRUNER, action, local, environment=environment)
        assert contract.translate(pruned) == deployed_resource, action
        assert (contract.denial(pruned) is None) is allowed, (action, local)


def test_a_secret_is_read_only_where_the_template_hands_it(contract):
    """A function's secrets come from its environment: the local value stands for the template's value of the same
    variable on that function; one the template does not give the function stays local, and is refused."""
    ollama, openai = FUNCTIONS["InvokeOllamaAgentFunctionArn"], FUNCTIONS["InvokeOpenAIAgentFunctionArn"]
    local = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/key-Xy12Ab"
    mine = call(
        ollama, "secretsmanager:GetSecretValue", local, environment=((PROVIDERS["ollama"].api_key_secret, local),)
    )
    assert contract.translate(mine) == OLLAMA_SECRET and contract.denial(mine) is None
    theirs = dataclasses.replace(mine, environment=((PROVIDERS["openai"].api_key_secret, local),))
    assert (
        contract.denial(theirs) == f"InvokeOllamaAgent ({ollama}) would be denied secretsmanager:GetSecretValue "
        f"on {local}"
    )
    assert contract.denial(dataclasses.replace(theirs, function=openai)) is None
    assert contract.translate(dataclasses.replace(theirs, function=openai)) == OPENAI_SECRET
    owner = call(MIGRATIONS, "secretsmanager:GetSecretValue", local, environment=(("DATABASE_SECRET_ARN", local),))
    assert contract.translate(owner) == contract.variable(MIGRATIONS, "DATABASE_SECRET_ARN")  # the owner's secret,
    assert contract.translate(owner) != contract.variable(RECONCILER, "DATABASE_SECRET_ARN")  # not the app role's
    roles = json.loads(contract.variable(MIGRATIONS, ROLE_SECRETS))
    reader = call(
        MIGRATIONS,
        "secretsmanager:GetSecretValue",
        local,
        environment=((ROLE_SECRETS, json.dumps({"oriole_reader": local})),),
    )
    assert contract.translate(reader) == roles["oriole_reader"] and contract.denial(reader) is None


def test_the_reconciler_describes_only_the_executions_of_the_state_machine_it_is_given(contract):
    ours = LOCAL + "stateMachine:anything-local"
    lost = call(
        RECONCILER,
        "states:DescribeExecution",
        LOCAL + "execution:anything-local:lost",
        environment=((STATE_MACHINE_ARN, ours),),
    )
    experiment = contract.state_machine(flows.EXPERIMENT).arn
    assert contract.translate(lost) == experiment.replace(":stateMachine:", ":execution:") + ":lost"
    assert contract.denial(lost) is None
    sweep_child = call(RECONCILER, "states:DescribeExecution", LOCAL + "execution:oriole-sweep/Baseline:x")
    assert "would be denied states:DescribeExecution" in contract.denial(sweep_child)


REGIONS = ["us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1", "ap-southeast-2", "sa-east-1"]


@pytest.mark.parametrize("region", REGIONS)
def test_every_granted_model_is_invocable_on_its_profile_and_every_destination_region(stacks, region):
    """Each id StartExperiment lets an execution name in ``region`` (a base id: itself, its geography's profile and
    the global one; a profile id as given) is allowed on everything IAM checks for it (``aws_calls.model_arns``)."""
    statements = deployed(region).functions[FUNCTIONS["InvokeBedrockAgentFunctionArn"]].statements
    for model_id in deployment.invocable_ids(MODEL_IDS, deployment.geography(region)):
        for arn in model_arns(model_id, region):
            assert allows(statements, "bedrock:InvokeModel", arn), f"{model_id} from {region}: {arn}"


def test_a_profile_is_refused_where_the_deployment_does_not_grant_it(contract):
    """From us-east-1, a European profile of the base model is no grant of this deployment; an ungranted model id
    stands for the deployment's own model (local runs use made-up ids)."""
    bedrock = FUNCTIONS["InvokeBedrockAgentFunctionArn"]
    cases = ((f"eu.{BASE_MODEL}", True), (f"us.{BASE_MODEL}", False), ("global.vendor.made-up-v1", False))
    for model_id, refused in cases:
        denials = {
            contract.denial(call(bedrock, "bedrock:InvokeModel", arn, model_id=model_id))
            for arn in model_arns(model_id, runner.REGION)
        }
        assert (denials != {None}) is refused, model_id
