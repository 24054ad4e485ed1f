"""The recorder behind the IAM contract: a handler's AWS calls are recorded with its function, the IAM action and
each ARN IAM authorizes (a Bedrock profile: the profile and the model in every region it routes to); calls
outside a handler are not the functions'; an operation without an ARN mapping is recorded as a problem."""

from __future__ import annotations

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from oriole import deployment
from oriole.handlers import aws, continue_as_new
from tests import aws_calls
from tests.aws_calls import model_arns

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:oriole-experiment"
MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"


def client(service: str):
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="AKIDTESTING",
                        aws_secret_access_key="secret", config=Config(retries={"total_max_attempts": 1}))


def continue_as_new_with(monkeypatch, sfn) -> list[aws_calls.Call]:
    monkeypatch.setattr(aws, "stepfunctions", lambda: sfn)
    mark = len(aws_calls.CALLS)
    continue_as_new.handler.__wrapped__({"experimentId": 7, "part": 1, "stateMachineArn": MACHINE}, None)
    return aws_calls.since(mark)


def test_a_handlers_call_is_recorded_with_its_function_action_and_resource(monkeypatch):
    sfn = client("stepfunctions")
    with Stubber(sfn) as stub:
        stub.add_response("start_execution", {"executionArn": MACHINE + ":exp-7-part-2", "startDate": 0})
        calls = continue_as_new_with(monkeypatch, sfn)
        mark = len(aws_calls.CALLS)
        stub.add_response("start_execution", {"executionArn": MACHINE + ":x", "startDate": 0})
        sfn.start_execution(stateMachineArn=MACHINE, name="x")  # the test's own call, not a function's
    assert calls == [aws_calls.Call("oriole.handlers.continue_as_new.handler", "states:StartExecution", MACHINE,
                                    "us-east-1", calls[0].environment)]
    assert aws_calls.since(mark) == []


def test_an_operation_without_an_arn_mapping_is_recorded_as_a_problem(monkeypatch):
    ssm = client("ssm")
    monkeypatch.setattr(continue_as_new, "start_named", lambda *args: ssm.describe_parameters())
    with Stubber(ssm) as stub:
        stub.add_response("describe_parameters", {"Parameters": []})
        [recorded] = continue_as_new_with(monkeypatch, client("stepfunctions"))
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
        f"arn:aws:bedrock:sa-east-1::foundation-model/{MODEL}", f"arn:aws:bedrock:::foundation-model/{MODEL}"]


def test_a_profile_of_undocumented_destinations_is_not_guessed():
    with pytest.raises(LookupError, match="DESTINATION_REGIONS"):
        model_arns(f"ca.{MODEL}", "ca-central-1")


def test_every_geography_a_deployment_grants_has_its_destination_regions():
    assert set(deployment.GEOGRAPHIES.values()) <= set(deployment.DESTINATION_REGIONS)
