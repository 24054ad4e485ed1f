"""The offline IAM evaluator the IAM contract relies on: what AWS's evaluation logic denies, it denies."""

from __future__ import annotations

import pytest

from tests.iam_policy import UnsupportedPolicy, allows

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:OrioleOrchestrator-experiment"
EXECUTIONS = "arn:aws:states:us-east-1:123456789012:execution:OrioleOrchestrator-experiment:*"
SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/app-AbCdEf"


def allow(action, resource, **extra) -> dict:
    return {"Effect": "Allow", "Action": action, "Resource": resource, **extra}


def test_a_call_no_statement_allows_is_denied():
    statements = [allow("states:StartExecution", MACHINE)]
    assert allows(statements, "states:StartExecution", MACHINE)
    assert not allows(statements, "states:StopExecution", MACHINE)
    assert not allows(statements, "states:StartExecution", MACHINE.replace("experiment", "sweep"))
    assert not allows([], "states:StartExecution", MACHINE)


def test_an_explicit_deny_wins_over_any_allow():
    statements = [allow("states:*", "*"), {"Effect": "Deny", "Action": "states:StartExecution", "Resource": MACHINE}]
    assert not allows(statements, "states:StartExecution", MACHINE)
    assert allows(statements, "states:DescribeExecution", EXECUTIONS.replace("*", "run-1"))


def test_actions_match_case_insensitively_with_both_wildcards():
    assert allows([allow("STATES:describe*", "*")], "states:DescribeExecution", MACHINE)
    assert allows([allow("ssm:GetParameter?", "*")], "ssm:GetParameters", MACHINE)
    assert not allows([allow("ssm:GetParameter?", "*")], "ssm:GetParametersByPath", MACHINE)
    assert not allows([allow("ssm:Get*", "*")], "secretsmanager:GetSecretValue", SECRET)


def test_resources_match_case_sensitively_and_a_wildcard_matches_a_whole_tail():
    statements = [allow("states:DescribeExecution", [EXECUTIONS])]
    assert allows(statements, "states:DescribeExecution", EXECUTIONS.replace("*", "exp-7-part-2"))
    assert not allows(statements, "states:DescribeExecution", EXECUTIONS.replace("*", "x").replace("Oriole", "oriole"))
    prompts = [allow("ssm:GetParameters", "arn:aws:ssm:us-east-1:123456789012:parameter/oriole/*")]
    assert allows(prompts, "ssm:GetParameters", "arn:aws:ssm:us-east-1:123456789012:parameter/oriole/prompts/v1")
    assert not allows(prompts, "ssm:GetParameters", "arn:aws:ssm:us-east-1:123456789012:parameter/other/x")


def test_a_different_region_or_account_is_refused():
    statements = [allow("secretsmanager:GetSecretValue", SECRET)]
    assert not allows(statements, "secretsmanager:GetSecretValue", SECRET.replace("us-east-1", "eu-west-1"))
    assert not allows(statements, "secretsmanager:GetSecretValue", SECRET.replace("123456789012", "210987654321"))


def test_a_wildcard_stays_in_its_segment_unless_it_ends_it():
    """``execution:name/*`` reaches a distributed map's children (``name/<map run>:<id>``); a mid-segment ``*``
    does not cross a colon, and a region ``*`` matches the empty region of a global foundation model."""
    children = [allow("states:DescribeExecution", "arn:aws:states:us-east-1:1:execution:sweep/*")]
    assert allows(children, "states:DescribeExecution", "arn:aws:states:us-east-1:1:execution:sweep/Bedrock:a1")
    mid = [allow("states:DescribeExecution", "arn:aws:states:us-east-1:1:execution:sw*p")]
    assert allows(mid, "states:DescribeExecution", "arn:aws:states:us-east-1:1:execution:sweep")
    assert not allows(mid, "states:DescribeExecution", "arn:aws:states:us-east-1:1:execution:sw:x:p")
    models = [allow("bedrock:InvokeModel", "arn:aws:bedrock:*::foundation-model/anthropic.claude-x")]
    assert allows(models, "bedrock:InvokeModel", "arn:aws:bedrock:::foundation-model/anthropic.claude-x")
    assert allows(models, "bedrock:InvokeModel", "arn:aws:bedrock:eu-north-1::foundation-model/anthropic.claude-x")
    assert not allows(models, "bedrock:InvokeModel", "arn:aws:bedrock:eu-north-1::foundation-model/anthropic.claude-y")
    one_char = [allow("bedrock:InvokeModel", "arn:aws:bedrock:us-east-?::foundation-model/m")]
    assert allows(one_char, "bedrock:InvokeModel", "arn:aws:bedrock:us-east-2::foundation-model/m")
    assert not allows(one_char, "bedrock:InvokeModel", "arn:aws:bedrock:us-east-12::foundation-model/m")


def test_not_action_and_not_resource_allow_everything_else():
    statements = [{"Effect": "Allow", "NotAction": "iam:*", "NotResource": SECRET}]
    assert allows(statements, "states:StartExecution", MACHINE)
    assert not allows(statements, "iam:PassRole", MACHINE)
    assert not allows(statements, "secretsmanager:GetSecretValue", SECRET)


def test_conditions_are_evaluated_or_refused():
    regional = [allow("bedrock:InvokeModel", "*", Condition={"StringEquals": {"aws:RequestedRegion": ["us-east-1"]}})]
    assert allows(regional, "bedrock:InvokeModel", "m", {"aws:RequestedRegion": "us-east-1"})
    assert not allows(regional, "bedrock:InvokeModel", "m", {"aws:RequestedRegion": "us-west-2"})
    with pytest.raises(UnsupportedPolicy, match="not in the request context"):
        allows(regional, "bedrock:InvokeModel", "m")
    dated = [allow("s3:GetObject", "*", Condition={"DateGreaterThan": {"aws:CurrentTime": "2020-01-01"}})]
    with pytest.raises(UnsupportedPolicy, match="DateGreaterThan"):
        allows(dated, "s3:GetObject", "o", {"aws:CurrentTime": "2030-01-01"})


def test_a_resource_policy_is_not_taken_for_an_identity_policy():
    with pytest.raises(UnsupportedPolicy, match="principal"):
        allows([allow("sqs:SendMessage", "*", Principal={"Service": "events.amazonaws.com"})], "sqs:SendMessage", "q")
