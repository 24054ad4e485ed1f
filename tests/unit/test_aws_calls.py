"""The recorder behind the IAM contract: a handler's AWS calls are recorded with its function, the IAM action and
each ARN IAM authorizes (a Bedrock profile: the profile and the model in every region it routes to); calls
outside a handler are not the functions'; an operation without an ARN mapping is recorded as a problem."""

from __future__ import annotations

import inspect

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from oriole.environment import EXECUTION_TIMEOUT, STATE_MACHINE_ARN
from oriole.handlers import aws, reconcile
from oriole.lifecycle import deployment
from tests import aws_calls
from tests.aws_calls import model_arns

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:oriole-experiment"
EXECUTION = "arn:aws:states:us-east-1:123456789012:execution:oriole-experiment:lost"
MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"


def client(service: str):
    return boto3.client(
        service,
        region_name="us-east-1",
        aws_access_key_id="AKIDTESTING",
        aws_secret_access_key="secret",
        config=Config(retries={"total_max_attempts": 1}),
    )


def reconciler_calling(monkeypatch, call) -> list[aws_calls.Call]:
    """The reconciler's handler with its store and its search replaced by ``call(describe)``: what it records."""
    monkeypatch.setenv(STATE_MACHINE_ARN, MACHINE)
    monkeypatch.setenv(EXECUTION_TIMEOUT, "3600")
    monkeypatch.setattr(reconcile, "executions", lambda arn: iter(()))
    monkeypatch.setattr(reconcile.reconcile, "worth_a_look", lambda executions, now, timeout: True)
    monkeypatch.setattr(reconcile, "shared_store", lambda context: None)
    monkeypatch.setattr(reconcile.reconcile, "close_ended", lambda store, describe, belongs: call(describe) and [])
    mark = len(aws_calls.CALLS)
    inspect.unwrap(reconcile.handler)({}, None)
    return aws_calls.since(mark)


def test_a_handlers_call_is_recorded_with_its_function_action_and_resource(monkeypatch):
    sfn = client("stepfunctions")
    monkeypatch.setattr(aws, "stepfunctions", lambda: sfn)
    with Stubber(sfn) as stub:
        stub.add_client_error("describe_execution", "ExecutionDoesNotExist", http_status_code=400)
        calls = reconciler_calling(monkeypatch, lambda describe: [describe(EXECUTION)])
        mark = len(aws_calls.CALLS)
        stub.add_client_error("describe_execution", "ExecutionDoesNotExist", http_status_code=400)
        with pytest.raises(sfn.exceptions.ExecutionDoesNotExist):
            sfn.describe_execution(executionArn=EXECUTION)  # the test's own call, not a function's
    [recorded] = calls
    assert (recorded.function, recorded.action, recorded.resource, recorded.region) == (
        "oriole.handlers.reconcile.handler",
        "states:DescribeExecution",
        EXECUTION,
        "us-east-1",
    )
    assert (STATE_MACHINE_ARN, MACHINE) in recorded.environment  # what it names the resource by
    assert aws_calls.since(mark) == []


def test_an_operation_without_an_arn_mapping_is_recorded_as_a_problem(monkeypatch):
    ssm = client("ssm")
    with Stubber(ssm) as stub:
        stub.add_response("describe_parameters", {"Parameters": []})
        [recorded] = reconciler_calling(monkeypatch, lambda describe: [ssm.describe_parameters()])
    assert (recorded.action, recorded.resource) == ("ssm:DescribeParameters", "")
    assert recorded.problem.startswith("no ARN mapping for ssm DescribeParameters")


def test_a_base_model_is_authorized_on_its_foundation_model_in_the_calling_region():
    assert model_arns(MODEL, "eu-west-1") == [f"arn:aws:bedrock:eu-west-1::foundation-model/{MODEL}"]


def test_a_geographic_profile_is_authorized_on_the_model_in_every_destination_region():
    arns = model_arns(f"eu.{MODEL}", "eu-west-3")
    assert arns[0] == f"arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.{MODEL}"
    regions = {arn.split(":")[3] for arn in arns[1:]}
    assert regions == set(deployment.DESTINATION_REGIONS["eu"]) and "eu-north-1" in regions


def test_a_global_profile_is_authorized_on_the_model_without_a_region():
    assert model_arns(f"global.{MODEL}", "sa-east-1") == [
        f"arn:aws:bedrock:sa-east-1:123456789012:inference-profile/global.{MODEL}",
        f"arn:aws:bedrock:sa-east-1::foundation-model/{MODEL}",
        f"arn:aws:bedrock:::foundation-model/{MODEL}",
    ]


def test_a_profile_of_undocumented_destinations_is_not_guessed():
    with pytest.raises(LookupError, match="DESTINATION_REGIONS"):
        model_arns(f"ca.{MODEL}", "ca-central-1")


def test_every_geography_a_deployment_grants_has_its_destination_regions():
    assert set(deployment.GEOGRAPHIES.values()) <= set(deployment.DESTINATION_REGIONS)


def test_a_lambda_request_is_authorized_on_the_function_or_the_version_it_names():
    """By name or by ARN; a qualifier makes it the version (what deleting one version is authorized on)."""
    _, delete = aws_calls.ARNS[("lambda", "DeleteFunction")]
    function = "arn:aws:lambda:us-east-1:123456789012:function:oriole-CheckProgress"
    assert delete({"FunctionName": "oriole-CheckProgress", "Qualifier": "3"}, "us-east-1") == [function + ":3"]
    assert delete({"FunctionName": function}, "us-east-1") == [function]
