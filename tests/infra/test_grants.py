"""What each role may do, beyond its database secret: Bedrock through the deployment's models and profiles only,
Parameter Store under the deployment's prefix only, Step Functions on this deployment's state machines only."""

from __future__ import annotations

import json

import pytest

from oriole import flows
from tests.infra.conftest import BASE_MODEL, MODEL_IDS, OLLAMA_ENDPOINTS, OLLAMA_SECRET, PROFILE, VISION_MODELS, resolve
from tests.infra.templates import function_ids, one_function_env, policies_of

EXPERIMENT_FUNCTIONS = flows.functions(flows.EXPERIMENT)


def test_state_machine_may_invoke_only_its_functions(templates):
    _, orchestrator = templates
    ids = function_ids(orchestrator)
    statements = policies_of(orchestrator, "FlowStateMachineRole")
    invoke = [s for s in statements if s["Action"] == "lambda:InvokeFunction"]
    targets = {r["Fn::GetAtt"][0] for s in invoke for r in s["Resource"] if isinstance(r, dict) and "Fn::GetAtt" in r}
    assert targets == {ids[p.removesuffix("FunctionArn")] for p in EXPERIMENT_FUNCTIONS}


def bedrock_resources(template, region: str) -> list[str]:
    [statement] = [
        s for s in policies_of(template, "InvokeBedrockAgent") if "bedrock:InvokeModel" in json.dumps(s["Action"])
    ]
    return [resolve(r, template.to_json(), region) for r in statement["Resource"]]


@pytest.mark.parametrize(
    ("region", "geography"),
    [("us-east-1", "us"), ("eu-west-1", "eu"), ("ap-northeast-1", "apac"), ("sa-east-1", "global")],
)
def test_a_base_model_is_granted_through_its_geographys_profiles_and_a_profile_id_as_given(
    templates, region, geography
):
    """Current models are invoked on demand only through inference profiles: the profile of the region's
    geography and the global one (in this region and account), and the foundation model in every region a
    profile routes to (a global profile: the model without a region, which the wildcard matches too)."""
    _, orchestrator = templates
    granted = bedrock_resources(orchestrator, region)
    account = f"arn:aws:bedrock:{region}:123456789012"
    assert f"{account}:inference-profile/{geography}.{BASE_MODEL}" in granted
    assert f"{account}:inference-profile/global.{BASE_MODEL}" in granted
    assert f"{account}:inference-profile/{PROFILE}" in granted  # a profile id given directly
    assert f"{account}:inference-profile/{BASE_MODEL}" not in granted  # no such profile exists
    assert {f"arn:aws:bedrock:*::foundation-model/{m}" for m in (BASE_MODEL, PROFILE.split(".", 1)[1])} <= set(granted)
    assert not any(r.endswith("foundation-model/*") or r.endswith("inference-profile/*") for r in granted)
    others = [s for name in ("InvokeOllamaAgent", "CheckProgress") for s in policies_of(orchestrator, name)]
    assert "bedrock:" not in json.dumps(others)
    # StartExperiment looks the granted models up (the model identity), never invokes one
    lookups = [s for s in policies_of(orchestrator, "StartExperiment") if "bedrock:" in json.dumps(s)]
    assert {s["Action"] for s in lookups} == {"bedrock:GetInferenceProfile", "bedrock:GetFoundationModel"}
    looked_up = [
        resolve(r, orchestrator.to_json(), region)
        for s in lookups
        for r in (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]])
    ]
    assert looked_up and set(looked_up) <= set(granted)  # only the models it may invoke


def test_start_experiment_knows_the_allowed_models_and_ollama_endpoints(templates):
    _, orchestrator = templates
    env = one_function_env(orchestrator, "StartExperiment")
    assert json.loads(env["ORIOLE_BEDROCK_MODEL_IDS"]) == MODEL_IDS
    assert json.loads(env["ORIOLE_OLLAMA_ENDPOINTS"]) == OLLAMA_ENDPOINTS
    assert json.loads(env["ORIOLE_VISION_MODELS"]) == VISION_MODELS  # models marked as accepting images
    assert env["OLLAMA_API_KEY_SECRET_ARN"] == OLLAMA_SECRET
    # it reads the key to ask the server which model build it serves (its listing sits behind the key)
    assert "secretsmanager:GetSecretValue" in json.dumps(
        [s for s in policies_of(orchestrator, "FunctionsStartExperiment") if OLLAMA_SECRET[:40] in json.dumps(s)]
    )


def test_a_plain_deploy_grants_the_current_model_of_cdk_json(default_stacks):
    """cdk.json's bedrockModelIds: one current model, invocable through its us. and global. profiles."""
    from aws_cdk.assertions import Template

    orchestrator = Template.from_stack(default_stacks[1])
    granted = bedrock_resources(orchestrator, "us-east-1")
    assert f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.{BASE_MODEL}" in granted
    assert f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/global.{BASE_MODEL}" in granted


def test_parameter_store_read_is_limited_to_the_prefix_and_to_start_experiment(templates):
    _, orchestrator = templates
    ssm = [s for s in policies_of(orchestrator, "StartExperiment") if "ssm:" in json.dumps(s["Action"])]
    assert ssm and all(":parameter/oriole/*" in json.dumps(s["Resource"]) for s in ssm)
    assert "ssm:GetParametersByPath" not in json.dumps(ssm)  # names only, never the whole tree
    assert "ssm:" not in json.dumps(policies_of(orchestrator, "CheckProgress"))


def test_continue_as_new_may_start_only_this_state_machine(templates):
    _, orchestrator = templates
    start = [s for s in policies_of(orchestrator, "FunctionsContinueAsNew") if s["Action"] == "states:StartExecution"]
    assert len(start) == 1 and "stateMachine:OrioleOrchestrator-experiment" in json.dumps(start[0]["Resource"])
    describe = [
        s
        for s in policies_of(orchestrator, "FunctionsExecutionStatusFinalizer")
        if s["Action"] == "states:DescribeExecution"
    ]
    assert len(describe) == 1 and "execution:OrioleOrchestrator-experiment:*" in json.dumps(describe[0]["Resource"])
    assert "states:" not in json.dumps(policies_of(orchestrator, "FunctionsCheckProgress"))


def test_the_sweep_state_machine_starts_its_own_children_and_its_tasks_only_experiments(templates):
    _, orchestrator = templates
    own = json.dumps(policies_of(orchestrator, "SweepsStateMachineRole"))
    assert "states:StartExecution" in own and "stateMachine:OrioleOrchestrator-sweep" in own
    assert "execution:OrioleOrchestrator-sweep/*" in own and "states:StopExecution" in own
    assert "states:RedriveExecution" in own  # a redriven sweep redrives its map runs' failed children
    invoke = [s for s in policies_of(orchestrator, "SweepsStateMachineRole") if s["Action"] == "lambda:InvokeFunction"]
    ids = function_ids(orchestrator)
    targets = {r["Fn::GetAtt"][0] for s in invoke for r in s["Resource"] if isinstance(r, dict) and "Fn::GetAtt" in r}
    assert targets == {ids[p.removesuffix("FunctionArn")] for p in flows.functions(flows.SWEEP)}
    start = [s for s in policies_of(orchestrator, "FunctionsStartRepetition") if s["Action"] == "states:StartExecution"]
    assert len(start) == 1 and "stateMachine:OrioleOrchestrator-experiment" in json.dumps(start[0]["Resource"])
    plan = json.dumps(policies_of(orchestrator, "FunctionsPlanSweep"))
    assert "ssm:GetParametersByPath" in plan and "parameter/oriole/prompts" in plan and "states:" not in plan
