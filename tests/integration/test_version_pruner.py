"""The version pruner against Lambda and Step Functions (moto's): a deploy's versions are retained for the
executions that may still call them, and deleted once none can; a running sweep keeps the versions its
definition names however old they are; the newest version always stays."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from oriole import deployment
from oriole.handlers import versions
from oriole_workstation.runner import LambdaContext

REGION = "us-east-1"
GRACE = timedelta(seconds=8460) + deployment.DEPLOY_MARGIN


@pytest.fixture
def aws(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "test")
    with mock_aws(config={"lambda": {"use_docker": False}}):
        yield boto3.client("lambda", region_name=REGION), boto3.client("stepfunctions", region_name=REGION)


def code() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", "def handler(event, context):\n    return event\n")
    return buffer.getvalue()


def deployed_function(lambda_client, name: str, deploys: int) -> str:
    """A function with one published version per deploy (1 .. ``deploys``)."""
    role = boto3.client("iam", region_name=REGION).create_role(
        RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
    arn = lambda_client.create_function(FunctionName=name, Runtime="python3.14", Role=role["Role"]["Arn"],
                                        Handler="handler.handler", Code={"ZipFile": code()})["FunctionArn"]
    for deploy in range(1, deploys + 1):
        lambda_client.update_function_configuration(FunctionName=name, Description=f"deploy {deploy}")
        lambda_client.get_waiter("function_updated_v2").wait(FunctionName=name)
        assert lambda_client.publish_version(FunctionName=name)["Version"] == str(deploy)
    return arn


def running_sweep(stepfunctions, calls: str) -> str:
    """A sweep state machine with one execution still running on a definition that invokes ``calls``."""
    definition = json.dumps({"StartAt": "Plan", "States": {"Plan": {"Type": "Task", "Resource": calls, "End": True}}})
    machine = stepfunctions.create_state_machine(name="OrioleOrchestrator-sweep", definition=definition,
                                                 roleArn="arn:aws:iam::123456789012:role/sweep")["stateMachineArn"]
    stepfunctions.start_execution(stateMachineArn=machine, name="sweep-started-long-ago")
    return machine


def remaining(lambda_client, name: str) -> list[int]:
    return sorted(int(v["Version"]) for v in lambda_client.list_versions_by_function(FunctionName=name)["Versions"]
                  if v["Version"] != "$LATEST")


def test_versions_no_execution_can_call_are_deleted_and_the_others_kept(aws):
    lambda_client, stepfunctions = aws
    deployed_function(lambda_client, "Oriole-StartExperiment", deploys=3)
    plan = deployed_function(lambda_client, "Oriole-PlanSweep", deploys=3)
    sweeps = running_sweep(stepfunctions, f"{plan}:1")
    later = datetime.now(UTC) + GRACE + timedelta(minutes=1)  # every successor is older than any execution

    deleted = versions.prune(lambda_client, stepfunctions, ["Oriole-StartExperiment", "Oriole-PlanSweep"], sweeps,
                             GRACE, later)
    assert deleted == {"Oriole-StartExperiment": [1, 2], "Oriole-PlanSweep": [2]}
    assert remaining(lambda_client, "Oriole-StartExperiment") == [3]  # the newest: what the state machine calls
    assert remaining(lambda_client, "Oriole-PlanSweep") == [1, 3]  # the running sweep still calls version 1


def test_after_a_deploy_the_versions_executions_may_still_call_stay(aws, monkeypatch):
    """The deployed function, as the trigger runs it right after a deploy: every older version was replaced
    moments ago, so an execution started on it may still run: nothing is deleted."""
    lambda_client, stepfunctions = aws
    deployed_function(lambda_client, "Oriole-CheckProgress", deploys=2)
    monkeypatch.setenv(deployment.PRUNED_FUNCTIONS, json.dumps(["Oriole-CheckProgress"]))
    monkeypatch.setenv(deployment.EXECUTION_TIMEOUT, "8460")
    monkeypatch.setenv(deployment.SWEEP_STATE_MACHINE_ARN, running_sweep(stepfunctions, "arn:aws:states:::pass"))
    context = LambdaContext("Oriole-VersionPruner", f"arn:aws:lambda:{REGION}:123456789012:function:p", "r")
    assert versions.handler({}, context) == {"deleted": {}}
    assert remaining(lambda_client, "Oriole-CheckProgress") == [1, 2]
