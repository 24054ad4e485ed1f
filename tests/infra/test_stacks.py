"""The synthesized stacks: resources, their key properties, IAM scope, and the flow from the ASL file."""

from __future__ import annotations

import json
import re

import pytest
from aws_cdk.assertions import Annotations, Match

from oriole import flows
from oriole.catalog import CATALOG, MODEL_TASK_SECONDS
from oriole.handlers import FUNCTIONS
from oriole.provider_registry import NAMES
from tests.iam_policy import allows
from tests.infra.conftest import (
    BASE_MODEL,
    CONTEXT,
    MODEL_IDS,
    OLLAMA_ENDPOINTS,
    OLLAMA_SECRET,
    OPENAI_BASE_URLS,
    OPENAI_SECRET,
    PROFILE,
    VISION_MODELS,
    resolve,
    synthesize,
)

ASL = flows.definition()
REGION = "eu-west-1"  # where the tests resolve a template's intrinsics
EXPERIMENT_FUNCTIONS = flows.functions(flows.EXPERIMENT)


def resources(template, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template.to_json()["Resources"].items() if v["Type"] == kind}


def one(template, kind: str) -> dict:
    [value] = resources(template, kind).values()
    return value["Properties"]


def state_machine(template, flow: str) -> dict:
    """The properties of the state machine of one flow (named ``<stack>-<flow>``)."""
    [found] = [
        props
        for props in (r["Properties"] for r in resources(template, "AWS::StepFunctions::StateMachine").values())
        if props["StateMachineName"].endswith(f"-{flow}")
    ]
    return found


def function_ids(template) -> dict[str, str]:
    """Construct name (``StartExperiment``...) -> logical id."""
    return {
        re.sub(r"^Functions|[0-9A-F]{8}$", "", k): k
        for k in resources(template, "AWS::Lambda::Function")
        if k.startswith("Functions")
    }


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
    assert db["Engine"] == "postgres"
    assert db["StorageEncrypted"] is True and db["PubliclyAccessible"] is False
    parameters = one(data, "AWS::RDS::DBParameterGroup")["Parameters"]
    assert parameters["rds.force_ssl"] == "1"
    assert "idle_session_timeout" not in parameters  # per role (migration 0012): it would cut researchers' psql
    subnets = json.dumps(one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"])
    assert "isolatedSubnet" in subnets and "public" not in subnets.lower()
    assert len(resources(data, "AWS::EC2::NatGateway")) == 1 and resources(data, "AWS::EC2::FlowLog")


def test_rds_creates_a_listed_full_version_and_keeps_its_minor_upgrades_and_uses_gp3(templates):
    """RDS creates an instance only at a version DescribeDBEngineVersions lists as available: a full version
    (cfn-lint's copy of that list, its W3691/E3691 data, is the offline check), with RDS's automatic minor
    upgrades on; the pin is never sent again unless it changes (see infra/database.py)."""
    from importlib import resources as package_files

    from cfnlint.data.schemas.extensions import aws_rds_dbinstance

    from infra.database import ENGINE_VERSION

    data, _ = templates
    db = one(data, "AWS::RDS::DBInstance")
    version = db["EngineVersion"]
    assert version == ENGINE_VERSION.postgres_full_version and re.fullmatch(r"16\.\d+", version)
    assert db["AutoMinorVersionUpgrade"] is True and db["StorageType"] == "gp3"
    assert one(data, "AWS::RDS::DBParameterGroup")["Family"] == "postgres16"

    def postgres_versions(file: str) -> set[str]:
        schema = json.loads(package_files.files(aws_rds_dbinstance).joinpath(file).read_text())
        [rule] = [r for r in schema["allOf"] if r["if"]["properties"].get("Engine", {}).get("const") == "postgres"]
        return set(
            rule["if"]["properties"]["EngineVersion"].get("enum") or rule["then"]["properties"]["EngineVersion"]["enum"]
        )

    assert version in postgres_versions("engine_version.json")
    assert version not in postgres_versions("engine_version_deprecated.json")
    assert "16" in postgres_versions("engine_version_deprecated.json")  # why a major alone is refused


def joined(value: dict) -> str:
    """An ``Fn::Join`` of strings and Refs as text, each Ref written as the logical id it names."""
    separator, parts = value["Fn::Join"]
    return separator.join(part if isinstance(part, str) else part["Ref"] for part in parts)


def data_template(**context):
    from aws_cdk.assertions import Template

    return Template.from_stack(synthesize(**context)[0])


def test_a_failed_first_create_can_delete_the_database_and_protection_comes_after_everything_else(templates):
    """CloudFormation creates the instance unprotected (RDS's default, and the template never names the
    property, so no later update sends it); a custom resource that depends on every other resource of the stack
    turns deletion protection on. A rollback of the first create, whatever failed (the proxy's target group,
    the bastion), deletes an unprotected instance (after its final snapshot): never ROLLBACK_FAILED."""
    data, _ = templates
    [(instance_id, instance)] = resources(data, "AWS::RDS::DBInstance").items()
    assert "DeletionProtection" not in instance["Properties"]
    assert instance["DeletionPolicy"] == "Snapshot"
    [(protection_id, protection)] = resources(data, "Custom::AWS").items()
    for phase in ("Create", "Update"):
        call = json.loads(joined(protection["Properties"][phase]))
        assert call["service"] == "RDS" and call["action"] == "modifyDBInstance"
        assert call["parameters"] == {"DBInstanceIdentifier": instance_id, "DeletionProtection": True}
    provider = protection["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    before = set(protection["DependsOn"])
    others = set(data.to_json()["Resources"]) - {protection_id}
    unordered = {r for r in others - before if not r.startswith(provider[:-8])}  # its own provider function
    assert not unordered, unordered  # the proxy, its target group, the bastion, the secrets: all first
    assert {
        instance_id,
        *resources(data, "AWS::RDS::DBProxyTargetGroup"),
        *resources(data, "AWS::EC2::Instance"),
    } <= before
    [policy] = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in resources(data, "AWS::IAM::Policy").values()
        if protection_id.removesuffix(protection_id[-8:]) in json.dumps(p["Properties"]["PolicyName"])
    ]
    assert [s["Action"] for s in policy] == ["rds:ModifyDBInstance"]  # on the instance: the next test


def test_the_deletion_protection_call_is_allowed_on_the_instance_and_nothing_else(templates):
    """The custom resource's role (the policy CDK writes for its SDK call, and the logs of the managed basic
    execution role) allows ModifyDBInstance on this one instance: the call as the custom resource makes it,
    resolved, is allowed; another instance, or any other RDS action, is not."""
    data, _ = templates
    template = data.to_json()
    [(instance_id, _)] = resources(data, "AWS::RDS::DBInstance").items()
    [protection] = resources(data, "Custom::AWS").values()
    provider = template["Resources"][protection["Properties"]["ServiceToken"]["Fn::GetAtt"][0]]["Properties"]
    [role_id, _] = provider["Role"]["Fn::GetAtt"]
    role = template["Resources"][role_id]["Properties"]
    assert [resolve(arn, template, REGION) for arn in role["ManagedPolicyArns"]] == [
        "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
    ]  # logs only
    statements = [
        s
        for p in resources(data, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in resolve(p["Properties"]["PolicyDocument"]["Statement"], template, REGION)
    ]
    instance = f"arn:aws:rds:{REGION}:123456789012:db:{resolve({'Ref': instance_id}, template, REGION)}"
    assert statements == [{"Action": "rds:ModifyDBInstance", "Effect": "Allow", "Resource": instance}]
    for phase in ("Create", "Update"):
        call = json.loads(resolve(protection["Properties"][phase], template, REGION))
        named = f"arn:aws:rds:{REGION}:123456789012:db:{call['parameters']['DBInstanceIdentifier']}"
        assert named == instance and allows(statements, "rds:ModifyDBInstance", named)
    assert not allows(statements, "rds:ModifyDBInstance", instance.replace(":db:", ":db:another"))
    assert not allows(statements, "rds:DeleteDBInstance", instance)


def test_without_deletion_protection_the_database_goes_with_the_stack():
    data = data_template(deletionProtection="false")
    [instance] = resources(data, "AWS::RDS::DBInstance").values()
    assert instance["DeletionPolicy"] == "Delete" and "DeletionProtection" not in instance["Properties"]
    [protection] = resources(data, "Custom::AWS").values()  # turns it off on a deployment that had it on
    assert json.loads(joined(protection["Properties"]["Update"]))["parameters"]["DeletionProtection"] is False


def test_database_and_proxy_accept_postgres_only_from_their_clients(templates):
    """The functions reach the proxy; the proxy and the bastion (for researchers' psql) reach the database."""
    data, _ = templates
    ingress = [r["Properties"] for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()]
    assert all(r["FromPort"] == r["ToPort"] for r in ingress)  # one port each: PostgreSQL's
    assert {(r["GroupId"]["Fn::GetAtt"][0], r["SourceSecurityGroupId"]["Fn::GetAtt"][0]) for r in ingress} == {
        ("DatabaseProxySecurityGroupCCC9DB86", "DatabaseClients539CA2ED"),
        ("DatabaseSecurityGroup5C91FDCB", "DatabaseProxySecurityGroupCCC9DB86"),
        ("DatabaseSecurityGroup5C91FDCB", "DatabaseClients539CA2ED"),
    }


def test_the_functions_connect_through_a_tls_proxy_as_the_application_role(templates):
    data, orchestrator = templates
    proxy = one(data, "AWS::RDS::DBProxy")
    assert proxy["RequireTLS"] is True and proxy["EngineFamily"] == "POSTGRESQL"
    target = one(data, "AWS::RDS::DBProxyTargetGroup")
    assert target["ConnectionPoolConfigurationInfo"]["MaxConnectionsPercent"] <= 80
    users = {
        json.loads(s["Properties"]["GenerateSecretString"]["SecretStringTemplate"])["username"]
        for s in resources(data, "AWS::SecretsManager::Secret").values()
    }
    assert users == {"oriole", "oriole_app", "oriole_reader"}
    for name in ("StartExperiment", "InvokeBedrockAgent", "CheckProgress", "ExecutionStatusFinalizer", "Reconciler"):
        env = one_function_env(orchestrator, name)
        assert "DatabaseAppSecret" in json.dumps(env["DATABASE_SECRET_ARN"]), name
        assert "DatabaseInstanceProxy" in json.dumps(env["ORIOLE_DATABASE_HOST"]), name
        assert env["ORIOLE_DATABASE_CA"] == "amazon-trust-services.pem", name
    migrations = one_function_env(orchestrator, "Migrations")
    assert "DatabaseInstanceSecret" in json.dumps(migrations["DATABASE_SECRET_ARN"])  # the owner
    roles = json.dumps(migrations["ORIOLE_ROLE_SECRETS"])
    assert "oriole_app" in roles and "oriole_reader" in roles and "DatabaseReaderSecret" in roles


def test_egress_is_a_context_option():
    template = data_template(egress="endpoints")
    assert not resources(template, "AWS::EC2::NatGateway")
    services = {
        json.dumps(r["Properties"]["ServiceName"]) for r in resources(template, "AWS::EC2::VPCEndpoint").values()
    }
    for service in ("ssm", "secretsmanager", "states", "bedrock-runtime"):
        assert any(f".{service}" in s for s in services), service


def test_an_existing_database_replaces_the_instance():
    from aws_cdk.assertions import Template

    secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:research-db-AbCdEf"
    data, orchestrator = synthesize(
        existingDatabaseSecretArn=secret,
        existingVpcId="vpc-123",
        existingSubnetIds="subnet-a,subnet-b",
        existingAvailabilityZones="us-east-1a,us-east-1b",
        existingSecurityGroupId="sg-123",
    )
    assert not resources(Template.from_stack(data), "AWS::RDS::DBInstance")
    env = one_function_env(Template.from_stack(orchestrator), "CheckProgress")
    assert env["DATABASE_SECRET_ARN"] == secret
    assert "ORIOLE_DATABASE_CA" not in env and "ORIOLE_DATABASE_HOST" not in env  # no proxy: TLS required


def test_an_existing_database_is_verified_against_a_bundle_shipped_for_it():
    from aws_cdk.assertions import Template

    existing = {
        "existingDatabaseSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
        "existingVpcId": "vpc-1",
        "existingSubnetIds": "subnet-a",
        "existingAvailabilityZones": "us-east-1a",
        "existingSecurityGroupId": "sg-1",
    }
    _, orchestrator = synthesize(**existing, existingDatabaseCaBundle="amazon-trust-services.pem")
    env = one_function_env(Template.from_stack(orchestrator), "CheckProgress")
    assert env["ORIOLE_DATABASE_CA"] == "amazon-trust-services.pem"
    with pytest.raises(ValueError, match=r"no file 'rds-global-bundle\.pem'"):
        synthesize(**existing, existingDatabaseCaBundle="rds-global-bundle.pem")


def test_an_incomplete_existing_database_context_is_refused():
    with pytest.raises(ValueError, match="existingVpcId"):
        synthesize(existingDatabaseSecretArn="arn:aws:secretsmanager:us-east-1:1:secret:x")


def one_function_env(template, name: str) -> dict:
    fn = resources(template, "AWS::Lambda::Function")[function_ids(template)[name]]
    return fn["Properties"]["Environment"]["Variables"]


def test_functions_share_one_asset_run_python_3_12_plus_on_arm64_in_the_vpc_traced(templates):
    _, orchestrator = templates
    ids = function_ids(orchestrator)
    assert set(ids) == {p.removesuffix("FunctionArn") for p in FUNCTIONS} | {
        "ExecutionStatusFinalizer",
        "Migrations",
        "Reconciler",
        "VersionPruner",
    }
    functions = resources(orchestrator, "AWS::Lambda::Function")
    codes = set()
    for name, logical_id in ids.items():
        props = functions[logical_id]["Properties"]
        major, minor = map(int, props["Runtime"].removeprefix("python").split("."))
        assert (major, minor) >= (3, 12)
        assert props["Architectures"] == ["arm64"] and props["TracingConfig"] == {"Mode": "Active"}
        assert "LogGroup" in props["LoggingConfig"]
        assert name == "VersionPruner" or props["VpcConfig"]["SubnetIds"]  # it alone needs no database
        codes.add(json.dumps(props["Code"]))
    assert len(codes) == 1
    handlers = {functions[i]["Properties"]["Handler"] for i in ids.values()}
    assert set(FUNCTIONS.values()) <= handlers


def test_log_groups_have_bounded_retention(templates):
    for template in templates:  # the deletion protection's custom resource logs too
        groups = resources(template, "AWS::Logs::LogGroup").values()
        assert groups and all(g["Properties"]["RetentionInDays"] == 30 for g in groups)
    functions = resources(templates[0], "AWS::Lambda::Function").values()
    assert all("LogGroup" in f["Properties"]["LoggingConfig"] for f in functions)


def test_parameters_come_from_the_catalog(templates):
    _, orchestrator = templates
    names = {
        p["Properties"]["Name"]: p["Properties"]["Value"]
        for p in resources(orchestrator, "AWS::SSM::Parameter").values()
    }
    for param in CATALOG:
        if param.overridable and param.key not in ("endpoint", "baseUrl"):
            assert names[param.name] == param.default_text
    assert names["/oriole/ollama/endpoint"] == OLLAMA_ENDPOINTS[0]  # the deployment's, not localhost
    assert names["/oriole/openai/base-url"] == OPENAI_BASE_URLS[0]
    assert "navigating a 2D grid maze" in names["/oriole/prompts/v1"]
    assert "/oriole/experiments/max-execution-seconds" not in names  # read at deploy time only


def test_state_machine_is_the_asl_file_with_substitutions_and_the_execution_timeout(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == {**ASL, "TimeoutSeconds": 3600}
    assert sm["TracingConfiguration"] == {"Enabled": True}
    assert sm["LoggingConfiguration"]["Level"] == "ERROR" and sm["LoggingConfiguration"]["IncludeExecutionData"]


def test_the_state_machine_calls_published_versions_never_latest(templates):
    """A deploy must not change the code under a running execution: each task names a version, whose
    resource is retained when a newer one replaces it."""
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    versions = resources(orchestrator, "AWS::Lambda::Version")
    ids = function_ids(orchestrator)
    for placeholder, value in sm["DefinitionSubstitutions"].items():
        version = versions[value["Ref"]]
        assert version["Properties"]["FunctionName"] == {"Ref": ids[placeholder.removesuffix("FunctionArn")]}
        assert version["DeletionPolicy"] == "Retain"
    assert set(sm["DefinitionSubstitutions"]) == set(flows.functions(flows.EXPERIMENT))


def test_every_function_records_the_version_and_the_asset_hash_of_the_code_it_runs(templates):
    """ORIOLE_CODE_VERSION is the package version and the hash the asset is keyed by (the asset's custom
    hash): the code a function runs."""
    from infra.bundling import asset_hash
    from oriole import __version__

    _, orchestrator = templates
    for name in function_ids(orchestrator):
        assert one_function_env(orchestrator, name)["ORIOLE_CODE_VERSION"] == f"{__version__}+{asset_hash()[:12]}"


def test_the_asset_hash_changes_with_any_file_of_the_runtime_package_and_its_migrations(tmp_path):
    import shutil

    from infra import bundling

    sources = {target: tmp_path / target for target in bundling.SOURCES}
    for target, source in bundling.SOURCES.items():
        shutil.copytree(source, sources[target], dirs_exist_ok=True, ignore=shutil.ignore_patterns(*bundling.NOT_CODE))
    before = bundling.asset_hash(sources=sources)
    assert before == bundling.asset_hash() == bundling.asset_hash(sources=sources)
    (sources["migrations"] / "0007_roles_and_code_version.sql").write_text("-- changed\n")
    assert bundling.asset_hash(sources=sources) != before
    (sources["migrations"] / "0007_roles_and_code_version.sql").unlink()
    (sources["migrations"] / "views" / "experiment_status.sql").write_text("-- changed\n")
    changed_view = bundling.asset_hash(sources=sources)
    assert changed_view != before
    (sources["."] / "prompts" / "v1.md").write_text("another prompt")
    assert bundling.asset_hash(sources=sources) != changed_view


def test_the_state_machine_logs_under_vendedlogs(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.EXPERIMENT)
    [destination] = sm["LoggingConfiguration"]["Destinations"]
    group_id = destination["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    group = resources(orchestrator, "AWS::Logs::LogGroup")[group_id]["Properties"]
    assert group["LogGroupName"] == "/aws/vendedlogs/states/OrioleOrchestrator-experiment"


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
    others = [
        s for name in ("InvokeOllamaAgent", "StartExperiment", "CheckProgress") for s in policies_of(orchestrator, name)
    ]
    assert "bedrock:" not in json.dumps(others)


def test_start_experiment_knows_the_allowed_models_and_ollama_endpoints(templates):
    _, orchestrator = templates
    env = one_function_env(orchestrator, "StartExperiment")
    assert json.loads(env["ORIOLE_BEDROCK_MODEL_IDS"]) == MODEL_IDS
    assert json.loads(env["ORIOLE_OLLAMA_ENDPOINTS"]) == OLLAMA_ENDPOINTS
    assert json.loads(env["ORIOLE_VISION_MODELS"]) == VISION_MODELS  # models marked as accepting images
    assert env["OLLAMA_API_KEY_SECRET_ARN"] == OLLAMA_SECRET
    assert "secretsmanager" not in json.dumps(
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


def test_every_function_reads_its_database_secret(templates):
    """Every function queries the database (ContinueAsNew records the continuation token's hash), but the
    version pruner, which only deletes old function versions."""
    _, orchestrator = templates
    readers = {
        name
        for name in function_ids(orchestrator)
        if "secretsmanager:GetSecretValue" in json.dumps(policies_of(orchestrator, f"Functions{name}"))
    }
    assert (
        {
            "StartExperiment",
            "InvokeBaselineAgent",
            "CheckProgress",
            "ContinueAsNew",
            "Migrations",
            "ExecutionStatusFinalizer",
            "Reconciler",
        }
        <= readers
        == set(function_ids(orchestrator)) - {"VersionPruner"}
    )
    ollama = json.dumps(policies_of(orchestrator, "FunctionsInvokeOllamaAgent"))
    assert OLLAMA_SECRET.rsplit("-", 1)[0] in ollama


def test_the_openai_key_goes_only_to_its_task_and_only_listed_base_urls_are_allowed(templates):
    _, orchestrator = templates
    start = one_function_env(orchestrator, "StartExperiment")
    assert json.loads(start["ORIOLE_OPENAI_BASE_URLS"]) == OPENAI_BASE_URLS
    assert one_function_env(orchestrator, "InvokeOpenAIAgent")["OPENAI_API_KEY_SECRET_ARN"] == OPENAI_SECRET
    assert start["OPENAI_API_KEY_SECRET_ARN"] == OPENAI_SECRET  # it learns that a key is sent, cannot read it
    readers = {
        name
        for name in function_ids(orchestrator)
        if OPENAI_SECRET.rsplit("-", 1)[0] in json.dumps(policies_of(orchestrator, f"Functions{name}"))
    }
    assert readers == {"InvokeOpenAIAgent"}
    timeouts = {
        name: resources(orchestrator, "AWS::Lambda::Function")[logical]["Properties"]["Timeout"]
        for name, logical in function_ids(orchestrator).items()
    }
    assert (
        timeouts["InvokeOpenAIAgent"]
        == timeouts["InvokeOllamaAgent"]
        == timeouts["InvokeBedrockAgent"]
        == MODEL_TASK_SECONDS
    )


@pytest.mark.parametrize(
    "context, message",
    [
        ({"openaiBaseUrls": '["http://gpu-box:8000/v1"]', "openaiApiKeySecretArn": OPENAI_SECRET}, "plain http"),
        ({"openaiBaseUrls": "file:///etc/passwd"}, "must be an http or https URL"),
    ],
)
def test_an_openai_base_url_list_that_would_leak_the_key_or_open_a_file_is_refused(context, message):
    with pytest.raises(Exception, match=message):
        synthesize(**context)


def test_an_api_key_secret_under_a_customer_managed_key_is_decrypted_through_secrets_manager_only():
    """``openaiApiKeyKmsKeyArn``: the agent that reads the secret may use that key to decrypt, through Secrets
    Manager in the stack's region only (kms:ViaService); no other function may, and no other key."""
    from aws_cdk.assertions import Template

    key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    data, orchestrator = synthesize(**{**CONTEXT, "openaiApiKeyKmsKeyArn": key})
    template = Template.from_stack(orchestrator)
    users = {name for name in function_ids(template) if "kms:" in json.dumps(policies_of(template, f"Functions{name}"))}
    assert users == {"InvokeOpenAIAgent"}
    statements = resolve(
        policies_of(template, "FunctionsInvokeOpenAIAgent"),
        template.to_json(),
        REGION,
        exporter=Template.from_stack(data).to_json(),
    )
    secrets_manager = {"kms:ViaService": f"secretsmanager.{REGION}.amazonaws.com"}
    assert allows(statements, "kms:Decrypt", key, secrets_manager)
    assert not allows(statements, "kms:Decrypt", key, {"kms:ViaService": f"s3.{REGION}.amazonaws.com"})
    assert not allows(statements, "kms:Decrypt", key.replace("1234abcd", "9999abcd"), secrets_manager)
    assert allows(statements, "secretsmanager:GetSecretValue", OPENAI_SECRET)


def test_without_a_list_no_openai_base_url_is_allowed_on_aws():
    from aws_cdk.assertions import Template

    _, orchestrator = synthesize()
    env = one_function_env(Template.from_stack(orchestrator), "StartExperiment")
    assert env["ORIOLE_OPENAI_BASE_URLS"] == "[]"


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


def test_status_changes_reach_the_finalizer_and_what_it_cannot_process_is_kept(templates):
    """The finalizer is invoked asynchronously: what fails after Lambda's retries goes to its on-failure
    destination, what EventBridge cannot deliver to the target's dead-letter queue: one queue, alarmed."""
    _, orchestrator = templates
    rules = {k: r["Properties"] for k, r in resources(orchestrator, "AWS::Events::Rule").items()}
    [rule] = [r for r in rules.values() if "EventPattern" in r]
    assert rule["EventPattern"]["detail-type"] == ["Step Functions Execution Status Change"]
    assert set(rule["EventPattern"]["detail"]["status"]) == {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
    ids = function_ids(orchestrator)
    [target] = rule["Targets"]
    assert ids["ExecutionStatusFinalizer"] in json.dumps(target["Arn"])
    [queue_id] = resources(orchestrator, "AWS::SQS::Queue")
    assert queue_id in json.dumps(target["DeadLetterConfig"])
    [invoke_config] = resources(orchestrator, "AWS::Lambda::EventInvokeConfig").values()
    assert invoke_config["Properties"]["FunctionName"] == {"Ref": ids["ExecutionStatusFinalizer"]}
    assert queue_id in json.dumps(invoke_config["Properties"]["DestinationConfig"]["OnFailure"])
    alarms = [a["Properties"] for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()]
    assert any(
        a.get("MetricName") == "ApproximateNumberOfMessagesVisible" and queue_id in json.dumps(a) for a in alarms
    )


def test_a_schedule_runs_the_reconciler_on_its_own_state_machine(templates):
    _, orchestrator = templates
    [schedule] = [
        r["Properties"]
        for r in resources(orchestrator, "AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
    ]
    assert schedule["ScheduleExpression"] == "rate(15 minutes)"
    assert function_ids(orchestrator)["Reconciler"] in json.dumps(schedule["Targets"])
    env = one_function_env(orchestrator, "Reconciler")
    assert "stateMachine:OrioleOrchestrator-experiment" in json.dumps(env["ORIOLE_STATE_MACHINE_ARN"])
    describe = [
        s for s in policies_of(orchestrator, "FunctionsReconciler") if s["Action"] == "states:DescribeExecution"
    ]
    assert len(describe) == 1


def triggers(template) -> dict[str, dict]:
    """Each trigger's properties, by the function it runs (``Migrations``, ``VersionPruner``)."""
    return {
        name: props
        for props in (r["Properties"] for r in resources(template, "Custom::Trigger").values())
        for name in function_ids(template)
        if f"Functions{name}CurrentVersion" in json.dumps(props["HandlerArn"])
    }


def test_migrations_run_on_deploy_from_the_vpc(templates):
    _, orchestrator = templates
    assert "Migrations" in triggers(orchestrator)  # the deployed code, its published version
    env = one_function_env(orchestrator, "Migrations")
    assert "ORIOLE_MIGRATIONS_DIR" not in env  # the migrations are package data of the runtime package
    migrations = resources(orchestrator, "AWS::Lambda::Function")[function_ids(orchestrator)["Migrations"]]
    assert migrations["Properties"]["VpcConfig"]["SubnetIds"]


def test_each_trigger_waits_longer_than_its_function_may_run(templates):
    """A trigger that gives up before its function (a slow first migration: a database still starting, the
    maze set loading) fails the custom resource and rolls the stack back. Each waits for its function's whole
    timeout and more, and no longer than the trigger provider itself may run."""
    _, orchestrator = templates
    functions = resources(orchestrator, "AWS::Lambda::Function")
    [provider] = [f["Properties"] for k, f in functions.items() if k.startswith("AWSCDKTriggerCustomResourceProvider")]
    found = triggers(orchestrator)
    assert set(found) == {"Migrations", "VersionPruner"}
    for name, trigger in found.items():
        timeout = functions[function_ids(orchestrator)[name]]["Properties"]["Timeout"]
        assert trigger["InvocationType"] == "RequestResponse"
        assert timeout * 1000 < int(trigger["Timeout"]) < provider["Timeout"] * 1000, name


def test_the_version_pruner_may_delete_versions_only_and_runs_after_the_state_machines(templates):
    """Every deploy publishes and retains versions; the pruner, run during each deploy that changes the code,
    lists the versions of every function that publishes some and deletes old ones (qualified ARNs only, never a
    function), reading what the stack holds and the running sweeps' definitions. It needs no database, so it
    runs outside the VPC (no Lambda or CloudFormation endpoint there)."""
    _, orchestrator = templates
    ids = function_ids(orchestrator)
    functions = resources(orchestrator, "AWS::Lambda::Function")
    pruner = functions[ids["VersionPruner"]]["Properties"]
    assert "VpcConfig" not in pruner and pruner["FunctionName"] == "OrioleOrchestrator-VersionPruner"
    env = pruner["Environment"]["Variables"]
    named = json.dumps(env["ORIOLE_PRUNED_FUNCTIONS"])
    versioned = {
        json.dumps(v["Properties"]["FunctionName"]) for v in resources(orchestrator, "AWS::Lambda::Version").values()
    }
    by_ref = {name for name in ids if ids[name] in named}
    assert by_ref | {"VersionPruner"} == {name for name in ids if ids[name] in "".join(versioned)}
    assert "OrioleOrchestrator-VersionPruner" in named  # itself by name (a Ref would be a circular dependency)
    assert env["ORIOLE_EXECUTION_TIMEOUT_SECONDS"] == "3600" and env["ORIOLE_STACK_ID"] == {"Ref": "AWS::StackId"}
    assert "stateMachine:OrioleOrchestrator-sweep" in json.dumps(env["ORIOLE_SWEEP_STATE_MACHINE_ARN"])
    statements = {
        s["Action"]: s["Resource"]
        for s in policies_of(orchestrator, "FunctionsVersionPruner")
        if isinstance(s["Action"], str)
    }
    deletable = statements["lambda:DeleteFunction"]
    assert len(deletable) == len(statements["lambda:ListVersionsByFunction"]) == len(versioned)
    assert all(json.dumps(r).endswith(':*"]]}') for r in deletable)  # qualified ARNs only
    assert statements["cloudformation:ListStackResources"] == {"Ref": "AWS::StackId"}
    assert "states:DescribeStateMachineForExecution" in statements and "states:ListExecutions" in statements
    [trigger] = [
        r
        for r in resources(orchestrator, "Custom::Trigger").values()
        if "VersionPruner" in json.dumps(r["Properties"]["HandlerArn"])
    ]
    machines = resources(orchestrator, "AWS::StepFunctions::StateMachine")
    assert set(machines) <= set(trigger["DependsOn"])


def alarm_metrics(template) -> set[str]:
    """Every metric an alarm watches, directly or inside a math expression."""
    names = set()
    for alarm in resources(template, "AWS::CloudWatch::Alarm").values():
        props = alarm["Properties"]
        names.add(props.get("MetricName"))
        names |= {m["MetricStat"]["Metric"]["MetricName"] for m in props.get("Metrics", []) if "MetricStat" in m}
    return names - {None}


def test_alarms_watch_real_trouble_only(templates):
    """Throttles, the finalizer's dead letters, the database's connections, CPU credits and storage, the
    hard timeout and failures by error page; an expected outcome (a stalled agent, a retried throttle or
    Lambda error) does not: no alarm on all failed executions or all Lambda errors."""
    _, orchestrator = templates
    watched = alarm_metrics(orchestrator)
    assert watched == {
        "ExecutionsTimedOut",
        "ExperimentsFailedByError",
        "Throttles",
        "ApproximateNumberOfMessagesVisible",
        "DatabaseConnections",
        "CPUCreditBalance",
        "FreeStorageSpace",
    }
    assert "ExecutionsFailed" not in watched and "Errors" not in watched
    connections = [
        a["Properties"]
        for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "DatabaseConnections"
    ]
    assert connections[0]["Threshold"] < 180  # below what a db.t4g.small accepts


def test_alarms_dashboard_and_outputs(templates):
    data, orchestrator = templates
    assert resources(orchestrator, "AWS::CloudWatch::Dashboard")
    throttles = [
        a["Properties"]["Metrics"]
        for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()
        if "Throttles" in json.dumps(a["Properties"].get("Metrics", []))
    ]
    watched = [
        json.dumps(m["MetricStat"]["Metric"]["Dimensions"]) for group in throttles for m in group if "MetricStat" in m
    ]
    assert all(len(group) <= 11 for group in throttles)  # at most 10 metrics and their sum, as CloudWatch allows
    assert len(watched) == len(set(watched)) == len(FUNCTIONS) + 1  # every function of the flow, the finalizer
    outputs = orchestrator.to_json()["Outputs"]
    assert {
        "StateMachineArn",
        "StateMachineConsole",
        "ExampleExecutionInput",
        "SweepStateMachineArn",
        "ExampleSweepInput",
    } <= set(outputs)
    example = json.loads(outputs["ExampleExecutionInput"]["Value"])
    assert example["mazeId"] == "perfect-11"
    assert {"DatabaseEndpoint", "DatabaseSecretArn", "ReaderSecretArn", "DatabaseProxyEndpoint"} <= set(
        data.to_json()["Outputs"]
    )


def test_cdk_nag_finds_nothing_unsuppressed(stacks):
    for stack in stacks:
        annotations = Annotations.from_stack(stack)
        findings = [
            *annotations.find_error("*", Match.string_like_regexp("AwsSolutions-.*")),
            *annotations.find_warning("*", Match.string_like_regexp("AwsSolutions-.*")),
        ]
        assert not findings, [f"{f.id}: {f.entry.data[:120]}" for f in findings]


def test_a_session_manager_bastion_gives_psql_a_port_forward(templates):
    data, _ = templates
    bastion = one(data, "AWS::EC2::Instance")
    assert bastion["InstanceType"] == "t4g.nano"
    groups = json.dumps(bastion["SecurityGroupIds"])
    assert "DatabaseClients" in groups  # the database accepts it like a function
    ingress_to_bastion = [
        r
        for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()
        if "DatabaseClients" in json.dumps(r["Properties"]["GroupId"])
    ]
    assert not ingress_to_bastion  # no open port: Session Manager only
    forward = data.to_json()["Outputs"]["PsqlPortForward"]["Value"]
    assert "AWS-StartPortForwardingSessionToRemoteHost" in json.dumps(forward)


def test_researchers_get_a_managed_policy_for_the_read_only_path_and_nothing_more(templates):
    """AnalystPolicyArn: a Session Manager port forward to the database through this bastion only (the
    remote-host forwarding document, not a shell), ending or resuming only one's own sessions, the read-only
    role's secret (not the owner's nor the application role's) and this stack's outputs."""
    data, _ = templates
    template = data.to_json()
    [(policy_id, policy)] = resources(data, "AWS::IAM::ManagedPolicy").items()
    assert template["Outputs"]["AnalystPolicyArn"]["Value"] == {"Ref": policy_id}
    statements = {json.dumps(s["Action"]): s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    [bastion] = resources(data, "AWS::EC2::Instance")
    start = [resolve(r, template, REGION) for r in statements['"ssm:StartSession"']["Resource"]]
    bastion_id = resolve({"Ref": bastion}, template, REGION)
    assert start == [
        f"arn:aws:ec2:{REGION}:123456789012:instance/{bastion_id}",  # this bastion's id only
        f"arn:aws:ssm:{REGION}::document/AWS-StartPortForwardingSessionToRemoteHost",
    ]
    own = statements['["ssm:TerminateSession", "ssm:ResumeSession"]']
    assert own["Condition"] == {"StringEquals": {"ssm:resourceTag/aws:ssmmessages:session-id": "${aws:userid}"}}
    [secret] = [k for k in resources(data, "AWS::SecretsManager::Secret") if k.startswith("DatabaseReaderSecret")]
    assert statements['["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]']["Resource"] == {
        "Ref": secret
    }
    assert statements['"cloudformation:DescribeStacks"']["Resource"] == {"Ref": "AWS::StackId"}
    assert set(statements) == {
        '"ssm:StartSession"',
        '["ssm:TerminateSession", "ssm:ResumeSession"]',
        '"ssmmessages:OpenDataChannel"',
        '["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]',
        '"cloudformation:DescribeStacks"',
    }


# -- time limits, names, egress, settings -------------------------------------------------------------------------


def test_the_execution_timeout_sits_above_the_graceful_duration_limit_with_room_for_a_turn(default_stacks):
    """A plain deploy: the experiment's own clock (maxDurationMinutes, from when StartExperiment ran) ends it
    through FinalizeTimeout before Step Functions' timeout, even with a whole model task still to run."""
    from aws_cdk.assertions import Template

    from oriole.catalog import BY_KEY, MODEL_TASK_SECONDS

    sm = state_machine(Template.from_stack(default_stacks[1]), flows.EXPERIMENT)
    timeout = json.loads(sm["DefinitionString"])["TimeoutSeconds"]
    assert timeout > BY_KEY["maxDurationMinutes"].default * 60 + MODEL_TASK_SECONDS
    env = one_function_env(Template.from_stack(default_stacks[1]), "CheckProgress")
    assert env["ORIOLE_EXECUTION_TIMEOUT_SECONDS"] == str(timeout)  # to continue as new before it


def test_a_model_task_may_run_a_whole_request_and_the_deadline_margin(templates):
    from oriole.catalog import BY_KEY, DEADLINE_MARGIN_SECONDS, MODEL_TASK_SECONDS

    _, orchestrator = templates
    functions = resources(orchestrator, "AWS::Lambda::Function")
    ids = function_ids(orchestrator)
    for name in ("InvokeBedrockAgent", "InvokeOllamaAgent"):
        assert functions[ids[name]]["Properties"]["Timeout"] == MODEL_TASK_SECONDS
    assert BY_KEY["requestTimeoutSeconds"].maximum + 2 * DEADLINE_MARGIN_SECONDS <= MODEL_TASK_SECONDS


def test_an_execution_timeout_too_short_for_a_turn_is_refused_at_synth():
    with pytest.raises(ValueError, match=r"maxExecutionSeconds.*at least"):
        synthesize(maxExecutionSeconds=600)


def test_no_launch_template_is_named_resource_launch_template(templates):
    data, _ = templates
    names = [t["Properties"].get("LaunchTemplateName") for t in resources(data, "AWS::EC2::LaunchTemplate").values()]
    assert names and "ResourceLaunchTemplate" not in names


PHYSICAL_NAMES = (
    "Name",
    "StateMachineName",
    "LogGroupName",
    "LaunchTemplateName",
    "DBProxyName",
    "FunctionName",
    "QueueName",
    "TopicName",
    "DashboardName",
    "RoleName",
    "DBInstanceIdentifier",
    "ExportName",
)


def physical_names(stacks) -> set[str]:
    """Every name a resource claims in the account and region (the ones CloudFormation does not generate);
    a property that refers to another resource (Ref, GetAtt, ImportValue) is not a name."""
    from aws_cdk.assertions import Template

    names = set()
    for stack in stacks:
        template = Template.from_stack(stack).to_json()
        for resource in template["Resources"].values():
            names |= {
                json.dumps(resource["Properties"][key])
                for key in PHYSICAL_NAMES
                if key in resource.get("Properties", {})
            }
        names |= {json.dumps(o["Export"]["Name"]) for o in template.get("Outputs", {}).values() if "Export" in o}
        names.add(stack.stack_name)
    return {n for n in names if not n.startswith(('{"Ref"', '{"Fn::GetAtt"', '{"Fn::ImportValue"'))}


def test_two_deployments_fit_in_one_account_and_region(stacks):
    second = synthesize(deployment="OrioleLab2", bedrockModelIds=MODEL_IDS)
    assert [s.stack_name for s in second] == ["OrioleLab2Data", "OrioleLab2Orchestrator"]
    clash = physical_names(stacks) & physical_names(second)
    assert not clash, clash
    from aws_cdk.assertions import Template

    parameters = {
        p["Properties"]["Name"] for p in resources(Template.from_stack(second[1]), "AWS::SSM::Parameter").values()
    }
    assert parameters and all(name.startswith("/oriolelab2/") for name in parameters)
    assert one_function_env(Template.from_stack(second[1]), "StartExperiment")["ORIOLE_DEPLOYMENT"] == "OrioleLab2"


def test_switching_egress_keeps_the_database_subnets():
    """The same subnet groups in both modes: switching egress after the first deploy changes routes and
    endpoints, never the subnets the database (or its proxy) lives in. The endpoints mode keeps the bastion,
    reached through Session Manager's own endpoints, for psql."""
    from aws_cdk.assertions import Template

    def database_subnets(egress: str) -> tuple[dict, dict]:
        data = Template.from_stack(synthesize(egress=egress)[0])
        group = one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"]
        subnets = {ref["Ref"]: resources(data, "AWS::EC2::Subnet")[ref["Ref"]]["Properties"] for ref in group}
        return group, {k: (v["CidrBlock"], json.dumps(v["AvailabilityZone"])) for k, v in subnets.items()}, data

    nat_group, nat_subnets, _ = database_subnets("nat")
    endpoints_group, endpoints_subnets, endpoints = database_subnets("endpoints")
    assert nat_group == endpoints_group and nat_subnets == endpoints_subnets
    assert resources(endpoints, "AWS::EC2::Instance")  # the bastion stays
    services = json.dumps(
        [r["Properties"]["ServiceName"] for r in resources(endpoints, "AWS::EC2::VPCEndpoint").values()]
    )
    assert ".ssmmessages" in services and ".ec2messages" in services


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"ollamaEndpoints": '["http://ollama.internal:11434"]', "ollamaApiKeySecretArn": OLLAMA_SECRET}, "plain http"),
        ({"ollamaEndpoints": '["ftp://x"]'}, "must be an http or https URL"),
        ({"openaiBaseUrls": '["https://lab:SECRET@gpu.example/v1"]'}, "user name or password"),
        ({"openaiBaseUrls": '["https://gpu.example\\\\@evil.example/v1"]'}, "backslash"),
        ({"ollamaEndpoints": '["https://[fe80::1%25eth0]:11434"]'}, "no zone"),
        ({"deployment": "oriole lab"}, "deployment must be"),
        ({"openaiApiKeyKmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:key/k1"}, "set that too"),
        (
            {
                "openaiApiKeySecretArn": OPENAI_SECRET,
                "openaiApiKeyKmsKeyArn": "arn:aws:kms:eu-west-1:123456789012:alias/k",
            },
            "must be a KMS key ARN",
        ),
    ],
)
def test_unsafe_or_malformed_settings_are_refused_at_synth(context, message):
    """Deploy context gets the URL check of every other entry (oriole.config.url_problem), quoting no password."""
    with pytest.raises(ValueError, match=message) as raised:
        synthesize(**context)
    assert "SECRET" not in str(raised.value)


def test_a_second_state_machine_runs_sweeps_with_a_capped_distributed_map_per_provider(templates):
    _, orchestrator = templates
    sm = state_machine(orchestrator, flows.SWEEP)
    deployed = json.loads(sm["DefinitionString"])
    assert deployed == flows.definition(flows.SWEEP) and "TimeoutSeconds" not in deployed
    maps = [branch["States"][branch["StartAt"]] for branch in deployed["States"]["RunRepetitions"]["Branches"]]
    assert len(maps) == len(NAMES)
    for state in maps:
        assert state["Type"] == "Map" and state["ItemProcessor"]["ProcessorConfig"]["Mode"] == "DISTRIBUTED"
        assert state["MaxConcurrencyPath"].startswith("$.caps.")
    substitutions = sm["DefinitionSubstitutions"]
    assert set(substitutions) == {*flows.functions(flows.SWEEP), flows.EXPERIMENT_STATE_MACHINE}
    for placeholder in flows.functions(flows.SWEEP):  # a published version of the task's function, never $LATEST
        assert placeholder.removesuffix("FunctionArn") in json.dumps(substitutions[placeholder])
        assert "CurrentVersion" in json.dumps(substitutions[placeholder])
    assert "stateMachine:OrioleOrchestrator-experiment" in json.dumps(substitutions[flows.EXPERIMENT_STATE_MACHINE])
    assert sm["TracingConfiguration"] == {"Enabled": True} and sm["LoggingConfiguration"]["Level"] == "ERROR"


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
    from oriole.core import sweep_plan

    _, orchestrator = templates
    example = json.loads(orchestrator.to_json()["Outputs"]["ExampleSweepInput"]["Value"])
    run = sweep_plan.validate(sweep_plan.SweepRun, example, "example")
    assert len(sweep_plan.plan(run)) == 72 and run.wait_seconds == 30
