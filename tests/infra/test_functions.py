"""The functions: one asset, their runtime, network, logs, environment and secrets, the parameters they read, the
triggers that run on deploy, and the version pruner."""

from __future__ import annotations

import json

import pytest

from oriole.catalog import CATALOG, MODEL_TASK_SECONDS
from oriole.handlers import FUNCTIONS
from tests.iam_policy import allows
from tests.infra.conftest import (
    CONTEXT,
    OLLAMA_ENDPOINTS,
    OLLAMA_SECRET,
    OPENAI_BASE_URLS,
    OPENAI_SECRET,
    resolve,
    synthesize,
)
from tests.infra.templates import (
    REGION,
    function_ids,
    one_function_env,
    policies_of,
    resources,
    triggers,
)


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


@pytest.mark.parametrize("fixture", ["templates", "lean_templates"])
def test_every_log_group_expires(request, fixture):
    """Each log group the stacks make has the retention of ``logRetentionDays``; a function without a group of its
    own (the providers of triggers and custom resources) has its ``/aws/lambda/<name>`` group's retention set by
    CDK's log-retention resource, and so do the database's exported logs; only that log-retention function, which
    sets its own, is left."""
    for template in request.getfixturevalue(fixture):
        groups = resources(template, "AWS::Logs::LogGroup").values()
        assert groups and all(g["Properties"]["RetentionInDays"] == 30 for g in groups)
        retained = [
            json.dumps(r["Properties"]["LogGroupName"]) for r in resources(template, "Custom::LogRetention").values()
        ]
        assert all(
            r["Properties"]["RetentionInDays"] == 30 for r in resources(template, "Custom::LogRetention").values()
        )
        for logical_id, function in resources(template, "AWS::Lambda::Function").items():
            if "LogGroup" in function["Properties"].get("LoggingConfig", {}):
                continue
            if logical_id.startswith("LogRetentionaae0aa3c5b4d4f87b02d85b201efdd8a"):
                continue
            assert any(f'"Ref": "{logical_id}"' in name for name in retained), logical_id
    data, _ = request.getfixturevalue(fixture)
    exported = [json.dumps(r["Properties"]["LogGroupName"]) for r in resources(data, "Custom::LogRetention").values()]
    assert any("postgresql" in name for name in exported)  # the database's own log export


def test_parameters_come_from_the_catalog_and_a_deploy_keeps_a_researchers_value(templates):
    """Every catalog parameter read at start exists under the prefix, its value the one the parameter-values
    resource gives (the default, unless a researcher set another: parameter_values_handler), whose defaults are
    the catalog's and the deployment's first model servers; the shipped prompts are written as they ship."""
    _, orchestrator = templates
    values = {
        p["Properties"]["Name"]: p["Properties"]["Value"]
        for p in resources(orchestrator, "AWS::SSM::Parameter").values()
    }
    [(kept_id, kept)] = resources(orchestrator, "Custom::ParameterValues").items()
    defaults, names = kept["Properties"]["Defaults"], kept["Properties"]["Names"]
    for param in CATALOG:
        if param.overridable:
            assert names[param.key] == param.name and values[param.name] == {"Fn::GetAtt": [kept_id, param.key]}
            if param.key not in ("endpoint", "baseUrl"):
                assert defaults[param.key] == param.default_text, param.key
    assert defaults["endpoint"] == OLLAMA_ENDPOINTS[0]  # the deployment's, not localhost
    assert defaults["baseUrl"] == OPENAI_BASE_URLS[0]
    assert "navigating a 2D grid maze" in values["/oriole/prompts/v1"]
    assert "/oriole/experiments/max-execution-seconds" not in values  # read at deploy time only


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
    assert start["OPENAI_API_KEY_SECRET_ARN"] == OPENAI_SECRET  # it asks the server's model listing with the key
    readers = {
        name
        for name in function_ids(orchestrator)
        if OPENAI_SECRET.rsplit("-", 1)[0] in json.dumps(policies_of(orchestrator, f"Functions{name}"))
    }
    assert readers == {"InvokeOpenAIAgent", "StartExperiment"}  # the agent, and the model identity asked at start
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
    """``openaiApiKeyKmsKeyArn``: the functions that read the secret (the agent, and StartExperiment asking the
    model's identity) may use that key to decrypt, through Secrets Manager in the stack's region only
    (kms:ViaService); no other function may, and no other key."""
    from aws_cdk.assertions import Template

    key = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    data, orchestrator = synthesize(**{**CONTEXT, "openaiApiKeyKmsKeyArn": key})
    template = Template.from_stack(orchestrator)
    users = {name for name in function_ids(template) if "kms:" in json.dumps(policies_of(template, f"Functions{name}"))}
    assert users == {"InvokeOpenAIAgent", "StartExperiment"}
    secrets_manager = {"kms:ViaService": f"secretsmanager.{REGION}.amazonaws.com"}
    for name in users:
        statements = resolve(
            policies_of(template, f"Functions{name}"),
            template.to_json(),
            REGION,
            exporter=Template.from_stack(data).to_json(),
        )
        assert allows(statements, "kms:Decrypt", key, secrets_manager), name
        assert not allows(statements, "kms:Decrypt", key, {"kms:ViaService": f"s3.{REGION}.amazonaws.com"}), name
        assert not allows(statements, "kms:Decrypt", key.replace("1234abcd", "9999abcd"), secrets_manager), name
        assert allows(statements, "secretsmanager:GetSecretValue", OPENAI_SECRET), name


def test_without_a_list_no_openai_base_url_is_allowed_on_aws():
    from aws_cdk.assertions import Template

    _, orchestrator = synthesize()
    env = one_function_env(Template.from_stack(orchestrator), "StartExperiment")
    assert env["ORIOLE_OPENAI_BASE_URLS"] == "[]"


def test_migrations_run_on_deploy_from_the_vpc(templates):
    _, orchestrator = templates
    assert "Migrations" in triggers(orchestrator)  # the deployed code, its published version
    env = one_function_env(orchestrator, "Migrations")
    assert "ORIOLE_MIGRATIONS_DIR" not in env  # the migrations are package data of the runtime package
    migrations = resources(orchestrator, "AWS::Lambda::Function")[function_ids(orchestrator)["Migrations"]]
    assert migrations["Properties"]["VpcConfig"]["SubnetIds"]


def test_every_database_task_waits_for_its_database_within_its_invocation(templates, lean_templates):
    """Each function that connects to the database is told how patient to be (oriole.store.db: never past its
    invocation's remaining time), in both profiles; the migrations' trigger waits for their whole timeout, of which
    connecting may take all but what migrating takes."""
    from infra.functions import CONNECT_PATIENCE_SECONDS, MIGRATIONS_SECONDS
    from oriole.handlers.migrate import MIGRATING_SECONDS

    for _, orchestrator in (templates, lean_templates):
        for name in function_ids(orchestrator):
            env = one_function_env(orchestrator, name)
            if "DATABASE_SECRET_ARN" in env:
                assert env["ORIOLE_CONNECT_PATIENCE_SECONDS"] == str(CONNECT_PATIENCE_SECONDS), name
        assert "ORIOLE_CONNECT_PATIENCE_SECONDS" not in one_function_env(orchestrator, "VersionPruner")
    assert MIGRATIONS_SECONDS - MIGRATING_SECONDS > 120  # the 120 s it used to wait: a slow proxy target rolled back


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


def test_a_model_task_may_run_a_whole_request_and_the_deadline_margin(templates):
    from oriole.catalog import BY_KEY, DEADLINE_MARGIN_SECONDS, MODEL_TASK_SECONDS

    _, orchestrator = templates
    functions = resources(orchestrator, "AWS::Lambda::Function")
    ids = function_ids(orchestrator)
    for name in ("InvokeBedrockAgent", "InvokeOllamaAgent"):
        assert functions[ids[name]]["Properties"]["Timeout"] == MODEL_TASK_SECONDS
    assert BY_KEY["requestTimeoutSeconds"].maximum + 2 * DEADLINE_MARGIN_SECONDS <= MODEL_TASK_SECONDS
