"""The synthesized stacks: resources, their key properties, IAM scope, and the flow from the ASL file."""

from __future__ import annotations

import json
import re

import pytest
from aws_cdk.assertions import Annotations, Match

from oriole import flows
from oriole.catalog import CATALOG
from oriole.handlers import FUNCTIONS
from tests.infra.conftest import MODEL_IDS, OLLAMA_SECRET, synthesize

ASL = flows.definition()
EXPERIMENT_FUNCTIONS = flows.functions(flows.EXPERIMENT)


def resources(template, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template.to_json()["Resources"].items() if v["Type"] == kind}


def one(template, kind: str) -> dict:
    [value] = resources(template, kind).values()
    return value["Properties"]


def state_machine(template, flow: str) -> dict:
    """The properties of the state machine of one flow (named ``<stack>-<flow>``)."""
    [found] = [props for props in (r["Properties"] for r in resources(template, "AWS::StepFunctions::StateMachine")
                                   .values()) if props["StateMachineName"].endswith(f"-{flow}")]
    return found


def function_ids(template) -> dict[str, str]:
    """Construct name (``StartExperiment``...) -> logical id."""
    return {re.sub(r"^Functions|[0-9A-F]{8}$", "", k): k for k in resources(template, "AWS::Lambda::Function")
            if k.startswith("Functions")}


def policies_of(template, logical_role_prefix: str) -> list[dict]:
    statements = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        roles = json.dumps(policy["Properties"]["Roles"])
        if logical_role_prefix in roles:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def test_database_is_postgres_16_encrypted_private_with_tls_required(templates):
    data, _ = templates
    db = one(data, "AWS::RDS::DBInstance")
    assert db["Engine"] == "postgres" and db["EngineVersion"].startswith("16.")
    assert db["StorageEncrypted"] is True and db["PubliclyAccessible"] is False
    assert db["DeletionProtection"] is True
    assert one(data, "AWS::RDS::DBParameterGroup")["Parameters"]["rds.force_ssl"] == "1"
    subnets = json.dumps(one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"])
    assert "isolatedSubnet" in subnets and "public" not in subnets.lower()
    secret = one(data, "AWS::SecretsManager::Secret")
    assert secret["GenerateSecretString"]["SecretStringTemplate"] == '{"username":"oriole"}'
    assert len(resources(data, "AWS::EC2::NatGateway")) == 1 and resources(data, "AWS::EC2::FlowLog")


def test_database_accepts_postgres_only_from_the_client_group(templates):
    data, _ = templates
    ingress = [r["Properties"] for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()]
    assert len(ingress) == 1
    assert ingress[0]["FromPort"] == ingress[0]["ToPort"] == 5432
    assert "DatabaseClients" in json.dumps(ingress[0]["SourceSecurityGroupId"])


def test_deletion_protection_and_egress_are_context_options():
    data, _ = synthesize(deletionProtection="false", egress="endpoints")
    from aws_cdk.assertions import Template

    template = Template.from_stack(data)
    assert one(template, "AWS::RDS::DBInstance")["DeletionProtection"] is False
    assert not resources(template, "AWS::EC2::NatGateway")
    services = {json.dumps(r["Properties"]["ServiceName"]) for r in
                resources(template, "AWS::EC2::VPCEndpoint").values()}
    for service in ("ssm", "secretsmanager", "states", "bedrock-runtime"):
        assert any(f".{service}" in s for s in services), service


def test_an_existing_database_replaces_the_instance():
    from aws_cdk.assertions import Template

    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:research-db-AbCdEf"
    data, orchestrator = synthesize(existingDatabaseSecretArn=secret, existingVpcId="vpc-123",
                                    existingSubnetIds="subnet-a,subnet-b", existingAvailabilityZones="us-east-1a,"
                                    "us-east-1b", existingSecurityGroupId="sg-123")
    assert not resources(Template.from_stack(data), "AWS::RDS::DBInstance")
    env = one_function_env(Template.from_stack(orchestrator), "CheckProgress")
    assert env["DATABASE_SECRET_ARN"] == secret


def test_an_incomplete_existing_database_context_is_refused():
    with pytest.raises(ValueError, match="existingVpcId"):
        synthesize(existingDatabaseSecretArn="arn:aws:secretsmanager:us-east-1:1:secret:x")


def one_function_env(template, name: str) -> dict:
    fn = resources(template, "AWS::Lambda::Function")[function_ids(template)[name]]
    return fn["Properties"]["Environment"]["Variables"]


def test_functions_share_one_asset_run_python_3_12_plus_on_arm64_in_the_vpc_traced(templates):
    _, orchestrator = templates
    ids = function_ids(orchestrator)
    assert set(ids) == {p.removesuffix("FunctionArn") for p in FUNCTIONS} | {"ExecutionStatusFinalizer", "Migrations"}
    functions = resources(orchestrator, "AWS::Lambda::Function")
    codes = set()
    for logical_id in ids.values():
        props = functions[logical_id]["Properties"]
        major, minor = map(int, props["Runtime"].removeprefix("python").split("."))
        assert (major, minor) >= (3, 12)
        assert props["Architectures"] == ["arm64"] and props["TracingConfig"] == {"Mode": "Active"}
        assert props["VpcConfig"]["SubnetIds"] and "LogGroup" in props["LoggingConfig"]
        codes.add(json.dumps(props["Code"]))
    assert len(codes) == 1
    handlers = {functions[i]["Properties"]["Handler"] for i in ids.values()}
    assert set(FUNCTIONS.values()) <= handlers


def test_log_groups_have_bounded_retention(templates):
    _, orchestrator = templates
    groups = resources(orchestrator, "AWS::Logs::LogGroup").values()
    assert groups and all(g["Properties"]["RetentionInDays"] == 30 for g in groups)


def test_parameters_come_from_the_catalog(templates):
    _, orchestrator = templates
    names = {p["Properties"]["Name"]: p["Properties"]["Value"]
             for p in resources(orchestrator, "AWS::SSM::Parameter").values()}
    for param in CATALOG:
        if param.overridable:
            assert names[param.name] == param.default_text
    assert "navigating a 2D grid maze" in names["/oriole/prompts/v1"]
    assert "/oriole/experiments/max-execution-seconds" not in names  # read at deploy time only


def test_state_machine_is_the_asl_file_with_substitutions_and_the_execution_timeout(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == {**ASL, "TimeoutSeconds": 3600}
    ids = function_ids(orchestrator)
    assert sm["DefinitionSubstitutions"] == {
        placeholder: {"Fn::GetAtt": [ids[placeholder.removesuffix("FunctionArn")], "Arn"]}
        for placeholder in EXPERIMENT_FUNCTIONS}
    assert sm["TracingConfiguration"] == {"Enabled": True}
    assert sm["LoggingConfiguration"]["Level"] == "ALL"


def test_state_machine_may_invoke_only_its_functions(templates):
    _, orchestrator = templates
    ids = function_ids(orchestrator)
    statements = policies_of(orchestrator, "FlowStateMachineRole")
    invoke = [s for s in statements if s["Action"] == "lambda:InvokeFunction"]
    targets = {r["Fn::GetAtt"][0] for s in invoke for r in s["Resource"] if isinstance(r, dict) and "Fn::GetAtt" in r}
    assert targets == {ids[p.removesuffix("FunctionArn")] for p in EXPERIMENT_FUNCTIONS}


def test_bedrock_invoke_is_scoped_to_the_configured_models(templates):
    _, orchestrator = templates
    bedrock = [s for s in policies_of(orchestrator, "InvokeBedrockAgent")
               if "bedrock:InvokeModel" in json.dumps(s["Action"])]
    resources_json = json.dumps([s["Resource"] for s in bedrock])
    assert "foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0" in resources_json
    assert "inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0" in resources_json
    assert "foundation-model/*" not in resources_json
    others = [s for name in ("InvokeOllamaAgent", "StartExperiment", "CheckProgress")
              for s in policies_of(orchestrator, name)]
    assert "bedrock:" not in json.dumps(others)
    assert len(MODEL_IDS) == 2


def test_parameter_store_read_is_limited_to_the_prefix_and_to_start_experiment(templates):
    _, orchestrator = templates
    ssm = [s for s in policies_of(orchestrator, "StartExperiment") if "ssm:" in json.dumps(s["Action"])]
    assert ssm and all(":parameter/oriole" in json.dumps(s["Resource"]) for s in ssm)
    assert "ssm:" not in json.dumps(policies_of(orchestrator, "CheckProgress"))


def test_database_secret_is_read_only_by_the_functions_that_query(templates):
    _, orchestrator = templates
    readers = {name for name in function_ids(orchestrator)
               if "secretsmanager:GetSecretValue" in json.dumps(policies_of(orchestrator, f"Functions{name}"))}
    assert "ContinueAsNew" not in readers
    assert {"StartExperiment", "InvokeBaselineAgent", "CheckProgress", "Migrations",
            "ExecutionStatusFinalizer"} <= readers
    ollama = json.dumps(policies_of(orchestrator, "FunctionsInvokeOllamaAgent"))
    assert OLLAMA_SECRET.rsplit("-", 1)[0] in ollama


def test_continue_as_new_may_start_only_this_state_machine(templates):
    _, orchestrator = templates
    start = [s for s in policies_of(orchestrator, "FunctionsContinueAsNew") if s["Action"] == "states:StartExecution"]
    assert len(start) == 1 and "stateMachine:OrioleOrchestrator-experiment" in json.dumps(start[0]["Resource"])
    describe = [s for s in policies_of(orchestrator, "FunctionsExecutionStatusFinalizer")
                if s["Action"] == "states:DescribeExecution"]
    assert len(describe) == 1 and "execution:OrioleOrchestrator-experiment:*" in json.dumps(describe[0]["Resource"])
    assert "states:" not in json.dumps(policies_of(orchestrator, "FunctionsCheckProgress"))


def test_status_changes_reach_the_finalizer(templates):
    _, orchestrator = templates
    rule = one(orchestrator, "AWS::Events::Rule")
    assert rule["EventPattern"]["detail-type"] == ["Step Functions Execution Status Change"]
    assert set(rule["EventPattern"]["detail"]["status"]) == {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
    assert function_ids(orchestrator)["ExecutionStatusFinalizer"] in json.dumps(rule["Targets"])


def test_migrations_run_on_deploy_from_the_vpc(templates):
    _, orchestrator = templates
    trigger = one(orchestrator, "Custom::Trigger")
    assert "FunctionsMigrationsCurrentVersion" in json.dumps(trigger["HandlerArn"])  # runs the deployed code
    env = one_function_env(orchestrator, "Migrations")
    assert "ORIOLE_MIGRATIONS_DIR" not in env  # the migrations are package data of the runtime package


def test_alarms_dashboard_and_outputs(templates):
    data, orchestrator = templates
    alarms = resources(orchestrator, "AWS::CloudWatch::Alarm")
    assert {a["Properties"].get("MetricName") for a in alarms.values()} >= {"ExecutionsFailed", "ExecutionsTimedOut"}
    assert len(alarms) == 3 and resources(orchestrator, "AWS::CloudWatch::Dashboard")
    outputs = orchestrator.to_json()["Outputs"]
    assert {"StateMachineArn", "StateMachineConsole", "ExampleExecutionInput", "SweepStateMachineArn",
            "ExampleSweepInput"} <= set(outputs)
    example = json.loads(outputs["ExampleExecutionInput"]["Value"])
    assert example["mazeId"] == "perfect-11"
    assert {"DatabaseEndpoint", "DatabaseSecretArn"} <= set(data.to_json()["Outputs"])


def test_cdk_nag_finds_nothing_unsuppressed(stacks):
    for stack in stacks:
        annotations = Annotations.from_stack(stack)
        findings = [*annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")),
                    *annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*"))]
        assert not findings, [f"{f.id}: {f.entry.data[:120]}" for f in findings]


def test_a_session_manager_bastion_gives_psql_a_port_forward(templates):
    data, _ = templates
    bastion = one(data, "AWS::EC2::Instance")
    assert bastion["InstanceType"] == "t4g.nano"
    groups = json.dumps(bastion["SecurityGroupIds"])
    assert "DatabaseClients" in groups  # the database accepts it like a function
    ingress_to_bastion = [r for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()
                          if "DatabaseClients" in json.dumps(r["Properties"]["GroupId"])]
    assert not ingress_to_bastion  # no open port: Session Manager only
    forward = data.to_json()["Outputs"]["PsqlPortForward"]["Value"]
    assert "AWS-StartPortForwardingSessionToRemoteHost" in json.dumps(forward)


def test_a_second_state_machine_runs_sweeps_with_a_capped_distributed_map_per_provider(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.SWEEP)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == flows.definition(flows.SWEEP) and "TimeoutSeconds" not in deployed
    maps = [branch["States"][branch["StartAt"]] for branch in deployed["States"]["RunRepetitions"]["Branches"]]
    assert len(maps) == 3
    for state in maps:
        assert state["Type"] == "Map" and state["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
        assert state["MaxConcurrencyPath"].startswith("$.caps.")
    ids = function_ids(orchestrator)
    substitutions = sm["DefinitionSubstitutions"]
    assert {k: v for k, v in substitutions.items() if k != flows.EXPERIMENT_STATE_MACHINE} == {
        placeholder: {"Fn::GetAtt": [ids[placeholder.removesuffix("FunctionArn")], "Arn"]}
        for placeholder in flows.functions(flows.SWEEP)}
    assert "stateMachine:OrioleOrchestrator-experiment" in json.dumps(substitutions[flows.EXPERIMENT_STATE_MACHINE])
    assert sm["TracingConfiguration"] == {"Enabled": True} and sm["LoggingConfiguration"]["Level"] == "ALL"


def test_the_sweep_state_machine_starts_its_own_children_and_its_tasks_only_experiments(templates):
    _, orchestrator = templates
    own = json.dumps(policies_of(orchestrator, "SweepsStateMachineRole"))
    assert "states:StartExecution" in own and "stateMachine:OrioleOrchestrator-sweep" in own
    assert "execution:OrioleOrchestrator-sweep/*" in own and "states:StopExecution" in own
    invoke = [s for s in policies_of(orchestrator, "SweepsStateMachineRole") if s["Action"] == "lambda:InvokeFunction"]
    ids = function_ids(orchestrator)
    targets = {r["Fn::GetAtt"][0] for s in invoke for r in s["Resource"] if isinstance(r, dict) and "Fn::GetAtt" in r}
    assert targets == {ids[p.removesuffix("FunctionArn")] for p in flows.functions(flows.SWEEP)}
    start = [s for s in policies_of(orchestrator, "FunctionsStartRepetition") if s["Action"] == "states:StartExecution"]
    assert len(start) == 1 and "stateMachine:OrioleOrchestrator-experiment" in json.dumps(start[0]["Resource"])
    plan = json.dumps(policies_of(orchestrator, "FunctionsPlanSweep"))
    assert "ssm:GetParametersByPath" in plan and "parameter/oriole/prompts" in plan and "states:" not in plan


def test_the_example_sweep_input_is_a_sweep_the_state_machine_accepts(templates):
    from oriole import sweeps

    _, orchestrator = templates
    example = json.loads(orchestrator.to_json()["Outputs"]["ExampleSweepInput"]["Value"])
    run = sweeps.validate(sweeps.SweepRun, example, "example")
    assert len(sweeps.plan(run)) == 72 and run.wait_seconds == 30
