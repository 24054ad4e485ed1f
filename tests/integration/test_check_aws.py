"""``oriole check --aws`` against a deployment in moto: the stacks in CloudFormation, the functions with the
environment CDK gives them, the catalog in Parameter Store, and real executions of the experiment and sweep
state machines (moto's interpreter, the real handlers, PostgreSQL, Bedrock through a stubbed boto3 client, Ollama
over real HTTP); the finalizer and the reconciler are the real handlers behind moto's Lambda, the finalizer's dead
letters a moto SQS queue. EventBridge, which moto's Step Functions does not feed, is played by a thread that sends
each stopped execution's status change to the finalizer. Each failure case breaks one part as AWS would show it
and reads the fix the check prints."""

from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager

import boto3
import pytest
from typer.testing import CliRunner

from oriole import catalog, flows
from oriole.core import mazeset
from oriole.environment import BEDROCK_MODEL_IDS, CODE_VERSION, REQUIRE_SPEND_LIMIT
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest
from oriole.provider_registry import PROVIDERS
from oriole.statuses import TERMINAL_EXECUTION_STATUSES
from oriole_workstation import check as check_module
from oriole_workstation.cli import app
from oriole_workstation.cli import check as check_command
from oriole_workstation.runner import DEAD_LETTERS, RECONCILER, STATUS_FINALIZER
from tests.ollama_server import ScriptedOllama, error, tool_calls

runner = CliRunner()
REGION = "us-east-1"
HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
PROXY = "oriole-proxy.proxy-c0ffee.us-east-1.rds.amazonaws.com"
OPENAI_URL = "https://vllm.lab.example/v1"
MARKETPLACE = (
    "Model access is denied due to IAM user or service role is not authorized to perform the required "
    "AWS Marketplace actions (aws-marketplace:ViewSubscriptions, aws-marketplace:Subscribe) to enable "
    "access to this model. Refer to the Amazon Bedrock documentation for further details. Your AWS "
    "Marketplace subscription for this model cannot be completed at this time. If you recently fixed "
    "this issue, try again after 15 minutes."
)
USE_CASE = (
    "Model use case details have not been submitted for this account. Fill out the Anthropic use case "
    "details form before using the model. If you have already filled out the form, try again in 15 minutes."
)


def stack(name: str, outputs: dict[str, str]) -> None:
    template = {
        "Resources": {
            "Marker": {
                "Type": "AWS::SSM::Parameter",
                "Properties": {"Type": "String", "Value": "x", "Name": f"/test/{name}"},
            }
        },
        "Outputs": {key: {"Value": value} for key, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(StackName=name, TemplateBody=json.dumps(template))


def set_environment(function: str, **variables: str) -> None:
    """Give a function of the local deployment variables, as CDK sets them on the deployed one."""
    awslambda = boto3.client("lambda", region_name=REGION)
    current = awslambda.get_function_configuration(FunctionName=function).get("Environment", {}).get("Variables", {})
    awslambda.update_function_configuration(FunctionName=function, Environment={"Variables": {**current, **variables}})


@pytest.fixture(scope="module")
def checkout_version() -> str:
    from infra.bundling import code_version

    return code_version()


@pytest.fixture(scope="module")
def deployed(bedrock_local, checkout_version):
    """The local deployment dressed as a deployed one: both stacks (the orchestrator's outputs pointing at the
    local state machines), every function carrying this checkout's code version, StartExperiment granting one
    Bedrock model and listing an OpenAI-compatible base URL (its Ollama endpoint is set per test)."""
    aws = bedrock_local.aws
    stack("OrioleData", {"DatabaseProxyEndpoint": PROXY})
    stack(
        "OrioleOrchestrator",
        {
            "StateMachineArn": aws.state_machine_arn,
            "SweepStateMachineArn": aws.sweep_state_machine_arn,
            "Deployment": "Oriole",
            "StatusFinalizerFunction": STATUS_FINALIZER,
            "ReconcilerFunction": RECONCILER,
        },
    )
    for function in boto3.client("lambda", region_name=REGION).list_functions()["Functions"]:
        set_environment(function["FunctionName"], **{CODE_VERSION: checkout_version})
    set_environment(
        "oriole-StartExperiment",
        **{
            BEDROCK_MODEL_IDS: json.dumps([HAIKU]),
            PROVIDERS["ollama"].servers.listed: "[]",
            PROVIDERS["openai"].servers.listed: json.dumps([OPENAI_URL]),
        },
    )
    set_environment("oriole-PlanSweep", **{REQUIRE_SPEND_LIMIT: "true"})
    yield bedrock_local
    for name in ("OrioleData", "OrioleOrchestrator"):
        boto3.client("cloudformation", region_name=REGION).delete_stack(StackName=name)


class EventBridge:
    """EventBridge's rule on the experiment state machine's status changes (moto's Step Functions emits none): each
    ended execution's change sent once to the finalizer, whatever ended it, as the deployed rule matches every
    terminal status, unless ``paused`` (a rule that delivers nothing). A delivery the finalizer fails is tried
    again on the next look, as EventBridge retries its target; each failure is kept in ``failed`` (execution ARN,
    error), so a test can say which delivery never went through instead of waiting for a run nobody closes."""

    def __init__(self, aws):
        self.aws, self.sent, self.paused = aws, set(), threading.Event()
        self.failed: list[tuple[str, str]] = []
        self.sfn = boto3.client("stepfunctions", region_name=REGION)

    def deliver(self, done: threading.Event) -> None:
        while not done.wait(0.05):
            if self.paused.is_set():
                continue
            pages = self.sfn.get_paginator("list_executions").paginate(stateMachineArn=self.aws.state_machine_arn)
            for execution in (e for page in pages for e in page["executions"]):
                if execution["status"] in TERMINAL_EXECUTION_STATUSES and execution["executionArn"] not in self.sent:
                    self.send(execution["executionArn"])

    def send(self, execution_arn: str) -> None:
        try:
            self.aws.report_status_change(self.sfn.describe_execution(executionArn=execution_arn))
        except Exception as err:  # noqa: BLE001 - kept in ``failed`` and tried again, as EventBridge retries
            self.failed.append((execution_arn, repr(err)))
            return
        self.sent.add(execution_arn)

    def undelivered(self) -> list[tuple[str, str]]:
        """The failed deliveries that no later try made good."""
        return [(arn, error) for arn, error in self.failed if arn not in self.sent]


@pytest.fixture(scope="module", autouse=True)
def eventbridge(deployed):
    rule, done = EventBridge(deployed.aws), threading.Event()
    thread = threading.Thread(target=rule.deliver, args=(done,), daemon=True)
    thread.start()
    yield rule
    done.set()
    thread.join()


QUOTAS = {  # the account's Bedrock quotas, as Service Quotas names them
    "Cross-region model inference requests per minute for Anthropic Claude Haiku 4.5": 250.0,
    "Cross-region model inference tokens per minute for Anthropic Claude Haiku 4.5": 2_000_000.0,
    "On-demand model inference requests per minute for Anthropic Claude 3 Haiku": 1000.0,
}
CONTROL_PLANE = {  # what moto does not answer: Bedrock's model details and Service Quotas' list, by operation
    "GetFoundationModel": {"modelDetails": {"modelName": "Claude Haiku 4.5", "providerName": "Anthropic"}},
    "ListServiceQuotas": {
        "Quotas": [{"ServiceCode": "bedrock", "QuotaName": name, "Value": value} for name, value in QUOTAS.items()]
    },
}


def answer_control_plane(model, **_):
    """botocore's ``before-call``: AWS's answer to an operation of ``CONTROL_PLANE``, as its service would give it."""
    from botocore.awsrequest import AWSResponse, HTTPHeaders

    answer = CONTROL_PLANE.get(model.name)
    return None if answer is None else (AWSResponse("", 200, HTTPHeaders(), None), answer)


@pytest.fixture
def check(deployed, monkeypatch, eventbridge):
    """Run ``oriole check`` with the given arguments; the check looks at its executions five times a second."""
    made = boto3.Session.client

    def client(session, *args, **kwargs):
        made_client = made(session, *args, **kwargs)
        if made_client.meta.service_model.service_name in ("bedrock", "service-quotas"):
            made_client.meta.events.register("before-call", answer_control_plane)
        return made_client

    monkeypatch.setattr(boto3.Session, "client", client)
    monkeypatch.setattr(check_command, "POLL_SECONDS", 0.2)
    monkeypatch.setenv("COLUMNS", "400")

    def invoke(*args: str):
        return runner.invoke(app, ["check", *args])

    yield invoke
    assert not eventbridge.undelivered(), "status changes the finalizer failed and no retry delivered"


@contextmanager
def ollama_listed(*script):
    """An Ollama endpoint the deployment allow-lists, answering ``script``."""
    with ScriptedOllama(*script) as server:
        set_environment("oriole-StartExperiment", **{PROVIDERS["ollama"].servers.listed: json.dumps([server.url])})
        try:
            yield server
        finally:
            set_environment("oriole-StartExperiment", **{PROVIDERS["ollama"].servers.listed: "[]"})


def flow_functions() -> set[str]:
    """Every function the two flows invoke: what the code check reads the version of."""
    return flows.functions(flows.EXPERIMENT) | flows.functions(flows.SWEEP)


def converse_move() -> dict:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t0", "name": "move_east", "input": {"reasoning": "check"}}}],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 300, "outputTokens": 20, "totalTokens": 320},
        "metrics": {"latencyMs": 40},
    }


def by_name(data: dict) -> dict[str, dict]:
    return {(c["name"], c["target"]): c for c in data["checks"]}


def dead_letters() -> list[dict]:
    """The messages waiting in the finalizer's dead-letter queue (looked at, left there)."""
    sqs = boto3.client("sqs", region_name=REGION)
    queue = sqs.get_queue_url(QueueName=DEAD_LETTERS)["QueueUrl"]
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, VisibilityTimeout=0).get("Messages", [])
    return [json.loads(m["Body"]) for m in messages]


def sweep_of(row: dict) -> str:
    """Which of the check's sweeps ran an experiment: ``sweep``, ``stop`` or ``spend``."""
    sweep_id = row["agent_id"].split("/")[0]
    return next((step for step in ("stop", "spend") if sweep_id.endswith(f"-{step}")), "sweep")


def experiments_since(deployed, first_id: int) -> list[dict]:
    return deployed.store.conn.execute(
        "SELECT id, llm_provider, model_name, status, ending, failure_reason, cost_usd, action_count, agent_id, "
        "comment, "
        "config->'maxMoves' AS max_moves, archived_at, cardinality(execution_arns) AS executions "
        "FROM experiments WHERE id > %s ORDER BY id",
        (first_id,),
    ).fetchall()


def open_experiment(deployed, execution_name: str) -> int:
    """An experiment left running by an execution of the experiment state machine that Step Functions no longer
    knows: what a lost status change leaves behind."""
    arn = deployed.aws.state_machine_arn.replace(":stateMachine:", ":execution:", 1) + f":{execution_name}"
    event = {
        "input": {"mazeId": check_module.MAZE, "llmProvider": "baseline", "modelName": "random"},
        "executionArn": arn,
    }
    started = experiments.start(StartRequest.model_validate(event), deployed.store, lambda names: catalog.defaults())
    return started.as_state()["experimentId"]


def status_of(deployed, experiment_id: int) -> str:
    return deployed.store.conn.execute("SELECT status FROM experiments WHERE id = %s", (experiment_id,)).fetchone()[
        "status"
    ]


def last_id(deployed) -> int:
    return deployed.store.conn.execute("SELECT coalesce(max(id), 0) AS id FROM experiments").fetchone()["id"]


def test_a_healthy_deployment_passes_every_check_through_real_executions(check, deployed, bedrock, checkout_version):
    """Every line ok; an experiment left open before the check began (its execution long gone) is closed by the
    reconciler line and named as an older loss, not as the check's."""
    for _ in ("us.", "global.", "the spend sweep's first run"):
        bedrock.add_response("converse", converse_move())
    left_open = open_experiment(deployed, "left-open-before-the-check")
    first = last_id(deployed)
    with ollama_listed(tool_calls(("move_south", {"reasoning": "check"}))) as ollama:
        result = check("--aws", "--json", "--paid", "--ollama-model", "qwen2.5:7b")
    assert result.exit_code == 0, result.output
    bedrock.assert_no_pending_responses()
    data = json.loads(result.stdout)
    assert data["ok"] is True
    assert [(c["name"], c["status"]) for c in data["checks"]] == [
        ("stacks", "ok"),
        ("code", "ok"),
        ("parameters", "ok"),
        ("prompts", "ok"),
        ("lambda", "ok"),
        ("quotas", "ok"),
        ("database", "ok"),
        ("baseline", "ok"),
        ("bedrock", "ok"),
        ("ollama", "ok"),
        ("openai", "skip"),
        ("sweep", "ok"),
        ("finalizer", "ok"),
        ("deadletter", "ok"),
        ("prices", "ok"),
        ("global", "ok"),
        ("spend", "ok"),
        ("reconciler", "ok"),
        ("limit", "ok"),
    ]
    checks = by_name(data)
    ran = experiments_since(deployed, first)
    [bedrock_row] = [r for r in ran if r["model_name"] == f"us.{HAIKU}" and r["comment"].startswith("check:")]
    assert checks[("stacks", None)]["detail"] == "OrioleData CREATE_COMPLETE, OrioleOrchestrator CREATE_COMPLETE"
    assert checks[("code", None)]["detail"].startswith(f"{checkout_version} in all {len(flow_functions())} functions")
    assert checks[("code", None)]["detail"].endswith("as this checkout would deploy")
    assert checks[("database", None)]["detail"].endswith(f"through the proxy {PROXY}")
    assert checks[("baseline", None)]["detail"].startswith("oracle on perfect-7: experiment ")
    assert "found the goal" in checks[("baseline", None)]["detail"]
    assert checks[("bedrock", HAIKU)]["detail"] == (
        f"us.{HAIKU} on perfect-7: experiment {bedrock_row['id']} reached its limit after 1 action(s)"
    )
    assert checks[("openai", OPENAI_URL)]["detail"].endswith("pass --openai-model NAME")
    assert "1 planned: 0 already done, 1 succeeded" in checks[("sweep", None)]["detail"]
    assert checks[("lambda", None)]["detail"] == (
        "1000 concurrent executions (1000 unreserved): a sweep runs at most 900 experiments at once"
    )
    assert checks[("quotas", HAIKU)]["detail"] == (
        "Cross-region model inference requests per minute: 250; Cross-region model inference tokens per minute: "
        "2,000,000"
    )
    assert [r.body["model"] for r in ollama.requests] == ["qwen2.5:7b"]
    assert sorted(
        (r["llm_provider"], r["model_name"], r["status"], r["action_count"], r["max_moves"])
        for r in ran
        if r["comment"].startswith("check:")
    ) == [
        ("baseline", "oracle", "succeeded", mazeset.get_maze(check_module.MAZE).shortest_path_length, 100),
        ("bedrock", f"global.{HAIKU}", "timed_out", 1, 1),
        ("bedrock", f"us.{HAIKU}", "timed_out", 1, 1),
        ("ollama", "qwen2.5:7b", "timed_out", 1, 1),
    ]
    [baseline_row] = [r for r in ran if r["llm_provider"] == "baseline" and r["comment"].startswith("check:")]
    assert baseline_row["executions"] == -(-baseline_row["action_count"] // 4) > 1  # a turn an execution: continued
    swept = {sweep_of(r): r for r in ran if r["comment"].startswith("sweep:")}
    assert set(swept) == {"sweep", "stop", "spend"}
    assert swept["sweep"]["status"] == "succeeded" and swept["sweep"]["agent_id"].startswith("check-")
    # the stopped run, closed by the finalizer as EventBridge delivered its end
    assert swept["stop"]["status"] == "aborted" and swept["stop"]["ending"] == "censored"
    assert swept["stop"]["failure_reason"].endswith("-stop-fe1c3dc752fe-r1-a0 was stopped")
    assert (
        "the status-change finalizer closed its experiment (aborted, censored)" in checks[("finalizer", None)]["detail"]
    )
    # the spend sweep: one run, priced, censored by its cap after one call; the second never started
    spent = swept["spend"]
    assert spent["model_name"] == f"us.{HAIKU}" and spent["ending"] == "censored"
    assert spent["failure_reason"].startswith("spend cap reached: $0.0004 spent")
    assert float(spent["cost_usd"]) == pytest.approx((300 * 1.1 + 20 * 5.5) / 1e6)
    assert checks[("spend", f"us.{HAIKU}")]["detail"].startswith(
        "its first run cost $0.000440 at its price and was censored by maxCostUsd $0.000001; the spend limit "
        "$0.000010 kept the second from starting: 2 planned: 0 already done, 1 censored, 1 skipped"
    )
    assert checks[("prices", HAIKU)]["detail"].startswith(f"us.{HAIKU}: $1.1 / $5.5 per million tokens in/out")
    # the finalizer's refused event went through Lambda's retries to its queue, which the check left empty
    assert checks[("deadletter", None)]["detail"] == (
        f"an event {STATUS_FINALIZER} refuses reached its dead-letter queue {DEAD_LETTERS} after 3 attempts, and "
        "the check removed it"
    )
    assert dead_letters() == []
    reconciled = checks[("reconciler", None)]["detail"]
    assert reconciled.startswith("it read Step Functions and the database: none of the check's experiments was left")
    assert re.search(r"; it also closed [1-9]\d* older experiment\(s\) left open before the check began", reconciled)
    assert status_of(deployed, left_open) == "aborted"
    # the check tests the system, not the models: its experiments, the sweeps' too, are in no comparison or report
    assert len(ran) == 7 and all(r["archived_at"] is not None for r in ran)
    compared = deployed.store.conn.execute(
        "SELECT count(*) AS n FROM comparison_scope(experiments => %s::bigint[])", ([r["id"] for r in ran],)
    ).fetchone()
    assert compared["n"] == 0


def test_status_changes_that_never_reach_the_finalizer_fail_its_lines_and_the_reconciler_closes_the_run(
    check, deployed, eventbridge
):
    """The rule delivers nothing and the finalizer has lost its dead-letter queue: the stopped run stays open, the
    check says where to look, and the reconciler, run by the check, closes it."""
    awslambda = boto3.client("lambda", region_name=REGION)
    config = awslambda.get_function_event_invoke_config(FunctionName=STATUS_FINALIZER)
    awslambda.delete_function_event_invoke_config(FunctionName=STATUS_FINALIZER)
    set_environment("oriole-StartExperiment", **{BEDROCK_MODEL_IDS: "[]"})
    first = last_id(deployed)
    eventbridge.paused.set()
    try:
        result = check("--aws", "--json", "--timeout-seconds", "15")
    finally:
        eventbridge.paused.clear()
        awslambda.put_function_event_invoke_config(
            FunctionName=STATUS_FINALIZER,
            MaximumRetryAttempts=config["MaximumRetryAttempts"],
            DestinationConfig=config["DestinationConfig"],
        )
        set_environment("oriole-StartExperiment", **{BEDROCK_MODEL_IDS: json.dumps([HAIKU])})
    assert result.exit_code == 1, result.output
    failures = {c["name"]: c for c in json.loads(result.stdout)["checks"] if c["status"] == "FAIL"}
    assert set(failures) == {"finalizer", "deadletter", "reconciler"}
    [stopped] = [r for r in experiments_since(deployed, first) if sweep_of(r) == "stop"]
    name = stopped["failure_reason"].removeprefix("execution ABORTED: ").removesuffix(" was stopped")
    assert failures["finalizer"]["detail"].startswith(f"the check stopped {name} ")
    assert failures["finalizer"]["detail"].endswith(" s ago and its experiment is still open")
    assert "`aws events list-rules --name-prefix OrioleOrchestrator`" in failures["finalizer"]["fix"]
    assert failures["deadletter"]["detail"] == (
        f"{STATUS_FINALIZER} has no dead-letter queue: a status change it cannot process would be lost"
    )
    assert failures["reconciler"]["detail"].startswith(
        f"it closed 1 of the check's experiment(s) (#{stopped['id']}) whose execution had ended without the finalizer "
        "closing them"
    )
    assert stopped["status"] == "aborted" and stopped["archived_at"] is not None  # closed by the reconciler


@pytest.mark.parametrize(
    "code, status, message, fix",
    [
        ("AccessDeniedException", 403, MARKETPLACE, "aws-marketplace:Subscribe and aws-marketplace:ViewSubscriptions"),
        ("ResourceNotFoundException", 404, USE_CASE, "Anthropic models need the one-time use-case form"),
    ],
)
def test_a_bedrock_model_the_account_cannot_call_yet_fails_with_the_one_time_step(
    check, bedrock, code, status, message, fix
):
    bedrock.add_client_error("converse", service_error_code=code, http_status_code=status, service_message=message)
    with ollama_listed(error(404, "model 'qwen2.5:7b' not found")):
        result = check("--aws", "--json", "--ollama-model", "qwen2.5:7b")
    bedrock.assert_no_pending_responses()
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    assert data["ok"] is False
    failures = {c["name"]: c for c in data["checks"] if c["status"] == "FAIL"}
    assert set(failures) == {"bedrock", "ollama"}
    assert failures["bedrock"]["detail"] == (
        f"ModelRequestRejected: Bedrock rejected the request for model 'us.{HAIKU}' ({code}): {message}"
    )
    assert fix in failures["bedrock"]["fix"] and "run `oriole check --aws` again" in failures["bedrock"]["fix"]
    if code == "AccessDeniedException":  # the administrator calls the id that failed
        assert f"--model-id us.{HAIKU} --messages" in failures["bedrock"]["fix"]
    assert "console.aws.amazon.com/states" in failures["bedrock"]["fix"]
    assert "`ollama pull qwen2.5:7b` on that server" in failures["ollama"]["fix"]


def test_a_model_granted_by_base_id_is_called_by_that_id_when_no_profile_serves_it(check, deployed, bedrock):
    """Bedrock answers that the geography's profile id is not a model it knows: the check calls the base id."""
    bedrock.add_client_error(
        "converse",
        service_error_code="ValidationException",
        http_status_code=400,
        service_message="The provided model identifier is invalid.",
    )
    bedrock.add_response("converse", converse_move())
    first = last_id(deployed)
    result = check("--aws", "--json")
    bedrock.assert_no_pending_responses()
    assert result.exit_code == 0, result.output
    called = [
        (r["model_name"], r["status"]) for r in experiments_since(deployed, first) if r["llm_provider"] == "bedrock"
    ]
    assert called == [(f"us.{HAIKU}", "failed"), (HAIKU, "timed_out")]


def test_a_missing_or_invalid_parameter_and_mixed_code_versions_print_their_fixes(check, deployed, checkout_version):
    ssm = boto3.client("ssm", region_name=REGION)
    set_environment("oriole-StartExperiment", **{BEDROCK_MODEL_IDS: "[]"})
    set_environment("oriole-InvokeBaselineAgent", **{CODE_VERSION: "0.0.9+0123456789ab"})
    ssm.delete_parameter(Name="/oriole/experiments/max-moves")
    ssm.put_parameter(Name="/oriole/gameplay/vision-range", Value="lots", Type="String", Overwrite=True)
    try:
        result = check("--aws")
    finally:
        ssm.put_parameter(Name="/oriole/experiments/max-moves", Value="10000", Type="String")
        ssm.put_parameter(Name="/oriole/gameplay/vision-range", Value="3", Type="String", Overwrite=True)
        set_environment("oriole-InvokeBaselineAgent", **{CODE_VERSION: checkout_version})
        set_environment("oriole-StartExperiment", **{BEDROCK_MODEL_IDS: json.dumps([HAIKU])})
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "ok    stacks      OrioleData CREATE_COMPLETE, OrioleOrchestrator CREATE_COMPLETE"
    assert lines[1] == (
        "FAIL  code        the functions run different code: 0.0.9+0123456789ab in "
        f"oriole-InvokeBaselineAgent; {checkout_version} in the other {len(flow_functions()) - 1}"
    )
    assert lines[2] == "      fix: deploy again: `make deploy`"
    assert lines[3].startswith(
        "FAIL  parameters  missing: /oriole/experiments/max-moves; Parameter Store value of "
        "/oriole/gameplay/vision-range is 'lots', not an integer"
    )
    assert lines[4] == (
        "      fix: `make deploy` creates the missing ones again (or `oriole params set KEY VALUE "
        "--aws`, defaults in `oriole params list`); `oriole params set visionRange 3 --aws` restores "
        "the default of visionRange"
    )
    # the experiments snapshot the parameters: the invalid one fails the baseline at its start
    assert "FAIL  baseline    InvalidParameter: Parameter Store value of /oriole/gameplay/vision-range" in result.stdout
    assert "skip  database    not shown: the baseline experiment failed before it" in result.stdout
    # nor does the stopped run start: there is nothing for the finalizer to close
    assert "FAIL  finalizer   sweep check-" in result.stdout
    assert "-stop ended before the check could stop its experiment: 1 planned: 0 already done, 1 rejected" in (
        result.stdout
    )
    assert result.stdout.rstrip().endswith("6 ok, 5 failed, 4 skipped")


def test_a_stack_whose_first_deploy_rolled_back_says_how_to_recover_and_checks_nothing_else(check):
    from moto.cloudformation.models import cloudformation_backends

    from oriole_workstation.runner import ACCOUNT

    [data_stack] = [s for s in cloudformation_backends[ACCOUNT][REGION].stacks.values() if s.name == "OrioleData"]
    data_stack.status = "ROLLBACK_COMPLETE"
    try:
        result = check("--aws")
    finally:
        data_stack.status = "CREATE_COMPLETE"
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "FAIL  stacks      OrioleData ROLLBACK_COMPLETE, OrioleOrchestrator CREATE_COMPLETE"
    assert lines[1].startswith(
        "      fix: OrioleData: its first deploy failed and rolled back, and such a stack "
        "cannot be updated: `aws cloudformation describe-stack-events --stack-name OrioleData"
    )
    assert lines[1].endswith(
        "delete it (`aws cloudformation delete-stack --stack-name OrioleData`) and `make deploy` again"
    )
    skipped = ("code", "parameters", "prompts", "lambda", *check_module.EXECUTION_LINES)
    assert [line.split()[:2] for line in lines[2:-2]] == [["skip", name] for name in skipped]
    assert lines[-1] == f"0 ok, 1 failed, {len(skipped)} skipped"


def test_without_a_deployment_it_says_which_one_there_is_or_how_to_deploy(check, monkeypatch):
    monkeypatch.setenv("ORIOLE_DEPLOYMENT", "LAB2")
    result = check("--aws")
    assert result.exit_code == 2
    assert "no deployment Lab2 (stack Lab2Orchestrator) in region us-east-1" in result.output
    assert "run `ORIOLE_DEPLOYMENT=Oriole oriole check --aws`" in result.output
    assert "AWS_PROFILE and AWS_REGION" in result.output
    local = check()
    assert local.exit_code == 2 and "run `oriole check --aws`" in local.output
