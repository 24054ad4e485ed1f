"""The pure parts of ``oriole check --aws``: how a stack state, a Bedrock answer or a model server's failure maps to
the one thing to do, and how an execution is judged. The whole command runs against moto in
tests/integration/test_check_aws.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from oriole.catalog import pricing_name
from oriole.environment import REQUIRE_SPEND_LIMIT
from oriole_workstation.check import (
    FAIL,
    OK,
    Outcome,
    bedrock_candidates,
    bedrock_fix,
    closed_ids,
    code_check,
    database_check,
    experiment_outcome,
    not_served_by_that_id,
    price_check,
    server_fix,
    spend_limit_check,
    split_by_start,
    stack_fix,
    stacks_check,
)

HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
ROLE = "arn:aws:sts::111122223333:assumed-role/OrioleOrchestrator-FunctionsInvokeBedrockAgentServiceRole/fn"


def rejected(code: str, message: str, model: str = f"us.{HAIKU}") -> Outcome:
    reason = f"ModelRequestRejected: Bedrock rejected the request for model '{model}' ({code}): {message}"
    return Outcome(False, reason, "ModelRequestRejected", reason)


@pytest.mark.parametrize(
    "status, says",
    [
        (None, "`make deploy`"),
        ("ROLLBACK_COMPLETE", "delete it (`aws cloudformation delete-stack --stack-name OrioleData`)"),
        ("ROLLBACK_FAILED", "`--retain-resources` for what cannot be deleted"),
        ("DELETE_FAILED", "`--retain-resources` for what cannot be deleted"),
        ("UPDATE_ROLLBACK_FAILED", "`aws cloudformation continue-update-rollback --stack-name OrioleData`"),
        ("UPDATE_ROLLBACK_COMPLETE", "the last deploy failed and rolled back (the previous version runs)"),
        ("UPDATE_IN_PROGRESS", "wait for it to end"),
    ],
)
def test_each_stack_state_that_needs_something_names_it(status, says):
    fix = stack_fix("OrioleData", status)
    assert says in fix
    if status and status != "UPDATE_IN_PROGRESS":
        assert "describe-stack-events --stack-name OrioleData" in fix  # where the reason is


def test_complete_stacks_pass_and_the_first_stack_at_fault_names_the_fix():
    assert stack_fix("OrioleData", "UPDATE_COMPLETE") is None
    healthy = {"OrioleData": "UPDATE_COMPLETE", "OrioleOrchestrator": "CREATE_COMPLETE"}
    assert stacks_check(healthy, []).status == OK
    broken = stacks_check({"OrioleData": "UPDATE_COMPLETE", "OrioleOrchestrator": "ROLLBACK_COMPLETE"}, [])
    assert broken.status == FAIL and broken.fix.startswith("OrioleOrchestrator: its first deploy failed")
    older = stacks_check(healthy, ["SweepStateMachineArn"])
    assert older.status == FAIL and older.detail.endswith("no output SweepStateMachineArn")


@pytest.mark.parametrize(
    "code, message, says",
    [
        (
            "AccessDeniedException",
            f"User: {ROLE} is not authorized to perform: bedrock:InvokeModel on resource: "
            f"arn:aws:bedrock:us-west-2::foundation-model/{HAIKU} with an explicit deny in a service control policy",
            "an SCP of your organization denies the call",
        ),
        (
            "AccessDeniedException",
            f"User: {ROLE} is not authorized to perform: bedrock:InvokeModel on resource: "
            f"arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.{HAIKU} because no identity-based policy "
            "allows "
            "the bedrock:InvokeModel action",
            "npx cdk deploy --all -c bedrockModelIds=",
        ),
        (
            "ValidationException",
            f"Invocation of model ID {HAIKU} with on-demand throughput isn\u2019t supported. Retry "
            "your request with the ID or ARN of an inference profile that contains this model.",
            f"run experiments with the profile id (us.{HAIKU})",
        ),
        ("ValidationException", "The provided model identifier is invalid.", "`aws bedrock list-inference-profiles`"),
        (
            "AccessDeniedException",
            "You don't have access to the model with the specified model ID.",
            "submit the use-case form",
        ),
    ],
)
def test_bedrock_answers_map_to_their_one_fix(code, message, says):
    assert says in bedrock_fix(f"us.{HAIKU}", rejected(code, message), "us-east-1")


def test_bedrock_throttled_or_out_of_reach_names_the_quota_or_the_network():
    throttled = Outcome(False, "x", "ModelThrottled", "ModelThrottled: Bedrock throttled model 'm' 3 time(s)")
    assert "Service Quotas, Amazon Bedrock" in bedrock_fix(HAIKU, throttled, "us-east-1")
    unreachable = Outcome(False, "x", "ModelUnavailable", "ModelUnavailable: cannot reach Bedrock")
    assert "bedrock-runtime interface endpoint" in bedrock_fix(HAIKU, unreachable, "us-east-1")


def test_a_model_is_called_by_its_geographys_profile_first_then_by_its_base_id():
    assert bedrock_candidates(HAIKU, "us-east-1") == [f"us.{HAIKU}", HAIKU]
    assert bedrock_candidates(HAIKU, "eu-west-3") == [f"eu.{HAIKU}", HAIKU]
    assert bedrock_candidates(HAIKU, "sa-east-1") == [f"global.{HAIKU}", HAIKU]
    assert bedrock_candidates(f"jp.{HAIKU}", "ap-northeast-1") == [f"jp.{HAIKU}"]
    invalid = {
        "status": "FAILED",
        "error": "ModelRequestRejected",
        "cause": json.dumps({"errorMessage": "... (ValidationException): The provided model identifier is invalid."}),
    }
    denied = {**invalid, "cause": json.dumps({"errorMessage": "... (AccessDeniedException): aws-marketplace"})}
    assert not_served_by_that_id(invalid) and not not_served_by_that_id(denied)


@pytest.mark.parametrize(
    "provider, error, reason, says",
    [
        (
            "ollama",
            "ModelUnavailable",
            "ModelUnavailable: Ollama at https://o:11434: cannot connect (refused)",
            "must accept connections from the deployment's NAT gateway address",
        ),
        (
            "openai",
            "ModelTimeout",
            "ModelTimeout: did not answer within 120 s",
            "`oriole params set requestTimeoutSeconds 300 --aws`",
        ),
        (
            "openai",
            "ModelRequestRejected",
            "ModelRequestRejected: ... (HTTP 401): invalid api key",
            "secret the deployment names (openaiApiKeySecretArn)",
        ),
        (
            "openai",
            "ModelRequestRejected",
            "ModelRequestRejected: ... (HTTP 404): The model `m` does not exist.",
            "check that the base URL ends where /chat/completions follows",
        ),
    ],
)
def test_model_server_failures_map_to_their_fix(provider, error, reason, says):
    assert says in server_fix(provider, "https://o:11434", "m", Outcome(False, reason, error, reason))


def test_an_experiment_is_judged_by_its_execution():
    limit = {
        "status": "SUCCEEDED",
        "output": json.dumps(
            {"experimentId": 7, "progress": {"decision": "timeout", "reason": "max_moves reached", "actions": 1}}
        ),
    }
    assert experiment_outcome(limit, 3) == Outcome(True, "experiment 7 reached its limit after 1 action(s)")
    stalled = {"status": "FAILED", "error": "AgentStalled", "cause": "agent_stalled: 1 turns in a row"}
    assert experiment_outcome(stalled, 3).worked  # the model answered, without a move
    refused = {
        "status": "FAILED",
        "error": "ModelRequestRejected",
        "cause": json.dumps(
            {"errorType": "ModelRequestRejected", "errorMessage": "denied", "stackTrace": ["never shown"]}
        ),
    }
    assert experiment_outcome(refused, 3) == Outcome(
        False, "ModelRequestRejected: denied", "ModelRequestRejected", "ModelRequestRejected: denied"
    )
    assert experiment_outcome(None, 901).detail == "still running after 901 s"


def test_the_code_version_is_one_for_every_function_and_compared_with_the_checkout():
    same = {"oriole-StartExperiment": "0.1.0+aaaaaaaaaaaa", "oriole-CheckProgress": "0.1.0+aaaaaaaaaaaa"}
    assert code_check(same, "0.1.0+aaaaaaaaaaaa").status == OK
    assert "not compared" in code_check(same, None).detail
    newer = code_check(same, "0.1.0+bbbbbbbbbbbb")
    assert newer.status == FAIL and newer.detail.endswith("this checkout would deploy 0.1.0+bbbbbbbbbbbb")
    unset = code_check({**same, "oriole-PlanSweep": None}, None)
    assert unset.status == FAIL and "no ORIOLE_CODE_VERSION in oriole-PlanSweep" in unset.detail


def test_the_database_line_reads_the_baselines_start():
    proxy = "orioledata-proxy.proxy-c0ffee.us-east-1.rds.amazonaws.com"
    assert database_check(Outcome(True, "experiment 1 found the goal"), proxy, "fn").status == OK
    away = Outcome(False, "OperationalError: connection timed out", "OperationalError", "OperationalError: ...")
    line = database_check(away, proxy, "OrioleOrchestrator-FunctionsMigrations1234")
    assert line.status == FAIL
    assert "`aws rds describe-db-proxy-targets --db-proxy-name orioledata-proxy`" in line.fix
    assert "`aws lambda invoke --function-name OrioleOrchestrator-FunctionsMigrations1234 out.json`" in line.fix
    refused = Outcome(False, "InvalidParameter: ...", "InvalidParameter", "InvalidParameter: ...")
    assert database_check(refused, proxy, "fn").status == "skip"


QUOTAS = [
    {"QuotaName": "Cross-region model inference requests per minute for Anthropic Claude Haiku 4.5", "Value": 0.0},
    {"QuotaName": "Cross-region model inference tokens per minute for Anthropic Claude Haiku 4.5", "Value": 4e5},
    {"QuotaName": "Cross-region model inference tokens per day for Anthropic Claude Haiku 4.5", "Value": 5e8},
    {"QuotaName": "On-demand model inference tokens per minute for Anthropic Claude 3 Haiku", "Value": 1e6},
]


def test_a_granted_model_s_quota_of_zero_fails_with_the_increase_to_ask_for():
    """A new account may get 0 requests a minute for a model: every call of the check's and the sweeps'
    experiments would be throttled, so the line fails and names the quota; another model's quotas are not its."""
    from oriole_workstation.check import SKIP, bedrock_quota_check

    haiku = {"providerName": "Anthropic", "modelName": "Claude Haiku 4.5"}
    line = bedrock_quota_check(f"us.{HAIKU}", haiku, QUOTAS)
    assert line.status == FAIL and line.target == f"us.{HAIKU}"
    assert line.detail == (
        "Cross-region model inference requests per minute: 0; Cross-region model inference tokens per minute: 400,000"
    )
    assert line.fix.endswith("Cross-region model inference requests per minute for Anthropic Claude Haiku 4.5")
    raised = bedrock_quota_check(f"us.{HAIKU}", haiku, [{**QUOTAS[0], "Value": 250.0}, *QUOTAS[1:]])
    assert raised.status == OK
    unknown = bedrock_quota_check("amazon.nova-lite-v1:0", {"providerName": "Amazon", "modelName": "Nova Lite"}, QUOTAS)
    assert unknown.status == SKIP


def test_the_lambda_line_says_how_many_experiments_a_sweep_runs_at_once():
    from oriole_workstation.check import lambda_quota_check

    new_account = lambda_quota_check({"ConcurrentExecutions": 10, "UnreservedConcurrentExecutions": 10})
    assert new_account.status == OK and "at most 8 experiments at once" in new_account.detail
    assert "ask for 1,000" in new_account.detail
    assert "ask for" not in lambda_quota_check({"ConcurrentExecutions": 1000}).detail
    starved = lambda_quota_check({"ConcurrentExecutions": 100, "UnreservedConcurrentExecutions": 2})
    assert starved.status == FAIL and "Concurrent executions" in starved.fix


def test_a_granted_model_is_priced_as_the_bedrock_line_calls_it_and_unpriced_fails_with_how_to_price_it():
    listed = price_check(HAIKU, "eu-west-1", {})
    assert listed.status == OK and listed.target == HAIKU
    assert listed.detail.startswith(f"eu.{HAIKU}: $1.1 / $5.5 per million tokens in/out (list price read ")
    stored = price_check(
        f"global.{HAIKU}", "eu-west-1", {pricing_name(f"global.{HAIKU}"): '{"inputPerMTok": 0.5, "outputPerMTok": 2.5}'}
    )
    assert stored.status == OK and stored.detail.startswith(f"global.{HAIKU}: $0.5 / $2.5 per million tokens")
    llama = "meta.llama3-8b-instruct-v1:0"
    unpriced = price_check(llama, "us-east-1", {})
    assert unpriced.status == FAIL and unpriced.detail.startswith(f"no price is known for us.{llama}: ")
    assert unpriced.fix is not None and unpriced.fix.startswith(f"`oriole prices set us.{llama} --input USD --output")


def test_the_limit_line_reads_whether_plansweep_requires_a_spend_limit():
    assert spend_limit_check({REQUIRE_SPEND_LIMIT: "true"}).status == OK
    missing = spend_limit_check({})
    assert missing.status == FAIL and missing.detail == "PlanSweep runs a sweep of models without a spend limit"


def test_the_reconciler_line_tells_the_check_s_runs_from_older_losses_by_step_functions_start_dates():
    began = datetime(2026, 11, 28, 8, 0, tzinfo=UTC)
    at = int(began.timestamp() * 1000)
    closed = [
        {"experimentId": 1, "startDate": at - 1},  # started a millisecond before the check's first execution
        {"experimentId": 2, "startDate": None},  # an execution Step Functions no longer knows
        {"experimentId": 3, "startDate": at},
        {"experimentId": 4, "startDate": at + 60_000},
    ]
    ours, older = split_by_start(closed, began)
    assert [e["experimentId"] for e in ours] == [3, 4]
    assert [e["experimentId"] for e in older] == [1, 2]
    assert split_by_start(closed, None) == (closed, [])  # no execution of the check ended: every closure counts


def test_the_id_list_shows_five_ids_then_a_count_and_says_when_a_reconciler_gave_none():
    closed = [{"experimentId": n, "startDate": None} for n in range(1, 8)]
    assert closed_ids(closed) == "#1, #2, #3, #4, #5 and 2 more"
    assert closed_ids([{}, {}]) == "their ids not reported"  # a reconciler deployed before it listed them
