"""The version pruner against Lambda and Step Functions (moto's) and the stack's resources (a real boto3
CloudFormation client under botocore's Stubber: moto's stacks give no Lambda version a physical id): versions
older than what the stack holds go once no execution can run on them; the held ones (the current, and during a
deploy the one a rollback returns to) and a running sweep's stay, however old."""

from __future__ import annotations

import io
import json
import zipfile
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from oriole.environment import EXECUTION_TIMEOUT, PRUNED_FUNCTIONS, STACK_ID, SWEEP_STATE_MACHINE_ARN
from oriole.handlers import versions
from oriole.lifecycle import deployment
from oriole_workstation.runner import LambdaContext

REGION = "us-east-1"
GRACE = timedelta(seconds=8460) + deployment.DEPLOY_MARGIN
STACK = f"arn:aws:cloudformation:{REGION}:123456789012:stack/OrioleOrchestrator/1b2c3d4e"


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
    """A function with one published version per deploy (1 .. ``deploys``); its ARN."""
    role = boto3.client("iam", region_name=REGION).create_role(
        RoleName=f"{name}-role", AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []})
    )
    arn = lambda_client.create_function(
        FunctionName=name,
        Runtime="python3.14",
        Role=role["Role"]["Arn"],
        Handler="handler.handler",
        Code={"ZipFile": code()},
    )["FunctionArn"]
    for deploy in range(1, deploys + 1):
        lambda_client.update_function_configuration(FunctionName=name, Description=f"deploy {deploy}")
        lambda_client.get_waiter("function_updated_v2").wait(FunctionName=name)
        assert lambda_client.publish_version(FunctionName=name)["Version"] == str(deploy)
    return arn


def running_sweep(stepfunctions, calls: str) -> str:
    """A sweep state machine with one execution still running on a definition that invokes ``calls``."""
    definition = json.dumps({"StartAt": "Plan", "States": {"Plan": {"Type": "Task", "Resource": calls, "End": True}}})
    machine = stepfunctions.create_state_machine(
        name="OrioleOrchestrator-sweep", definition=definition, roleArn="arn:aws:iam::123456789012:role/sweep"
    )["stateMachineArn"]
    stepfunctions.start_execution(stateMachineArn=machine, name="sweep-started-long-ago")
    return machine


def stack_holding(*version_arns: str):
    """A CloudFormation client whose stack holds these versions (and a function, which is no version)."""
    client = boto3.client("cloudformation", region_name=REGION)
    stubber = Stubber(client)
    summaries = [
        {
            "LogicalResourceId": f"Version{i}",
            "PhysicalResourceId": arn,
            "ResourceType": "AWS::Lambda::Version",
            "LastUpdatedTimestamp": datetime.now(UTC),
            "ResourceStatus": "CREATE_COMPLETE",
        }
        for i, arn in enumerate(version_arns)
    ]
    summaries.append(
        {
            "LogicalResourceId": "Function",
            "PhysicalResourceId": "Oriole-StartExperiment",
            "ResourceType": "AWS::Lambda::Function",
            "LastUpdatedTimestamp": datetime.now(UTC),
            "ResourceStatus": "CREATE_COMPLETE",
        }
    )
    stubber.add_response("list_stack_resources", {"StackResourceSummaries": summaries}, {"StackName": STACK})
    stubber.activate()
    return client


def remaining(lambda_client, name: str) -> list[int]:
    return sorted(
        int(v["Version"])
        for v in lambda_client.list_versions_by_function(FunctionName=name)["Versions"]
        if v["Version"] != "$LATEST"
    )


def test_versions_no_execution_can_call_are_deleted_and_the_others_kept(aws):
    lambda_client, stepfunctions = aws
    start = deployed_function(lambda_client, "Oriole-StartExperiment", deploys=3)
    plan = deployed_function(lambda_client, "Oriole-PlanSweep", deploys=3)
    migrations = deployed_function(lambda_client, "Oriole-Migrations", deploys=4)
    sweeps = running_sweep(stepfunctions, f"{plan}:1")
    # The stack holds each function's current version; during this deploy also the migrations' replaced one
    # (version 2, what a rollback would run again); the migrations' version 4 is a failed deploy's.
    cloudformation = stack_holding(f"{start}:3", f"{plan}:3", f"{migrations}:2", f"{migrations}:3")
    later = datetime.now(UTC) + GRACE + timedelta(minutes=1)  # the held versions are older than any execution

    deleted = versions.prune(
        lambda_client,
        stepfunctions,
        cloudformation,
        ["Oriole-StartExperiment", "Oriole-PlanSweep", "Oriole-Migrations"],
        STACK,
        sweeps,
        GRACE,
        later,
    )
    assert deleted == {"Oriole-StartExperiment": [1, 2], "Oriole-PlanSweep": [2], "Oriole-Migrations": [1]}
    assert remaining(lambda_client, "Oriole-StartExperiment") == [3]
    assert remaining(lambda_client, "Oriole-PlanSweep") == [1, 3]  # the running sweep still calls version 1
    assert remaining(lambda_client, "Oriole-Migrations") == [2, 3, 4]


def test_during_a_deploy_the_versions_executions_may_still_call_stay(aws, monkeypatch):
    """The deployed function, as the trigger runs it (moto's stack holds no version, moto's functions were
    just published): nothing is known to be stale, nothing is deleted."""
    lambda_client, stepfunctions = aws
    deployed_function(lambda_client, "Oriole-CheckProgress", deploys=2)
    stack = boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName="OrioleOrchestrator", TemplateBody=json.dumps({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}})
    )["StackId"]
    monkeypatch.setenv(PRUNED_FUNCTIONS, json.dumps(["Oriole-CheckProgress"]))
    monkeypatch.setenv(EXECUTION_TIMEOUT, "8460")
    monkeypatch.setenv(STACK_ID, stack)
    monkeypatch.setenv(SWEEP_STATE_MACHINE_ARN, running_sweep(stepfunctions, "arn:aws:states:::pass"))
    context = LambdaContext("Oriole-VersionPruner", f"arn:aws:lambda:{REGION}:123456789012:function:p", "r")
    assert versions.handler({}, context) == {"deleted": {}}
    assert remaining(lambda_client, "Oriole-CheckProgress") == [1, 2]
