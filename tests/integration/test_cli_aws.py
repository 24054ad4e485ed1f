"""The CLI's --aws paths against moto: the deployed stack's outputs, executions on the deployed state
machine (run by the real handlers, as in the local runner), and Parameter Store."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import boto3
import pytest
from typer.testing import CliRunner

from oriole_workstation.cli import app
from oriole_workstation.launcher import RESULT_KEYS

runner = CliRunner()


@contextmanager
def orchestrator_stack(local, name: str) -> Iterator[None]:
    """A stack named ``name`` whose outputs point at the state machines the runner deployed."""
    cloudformation = boto3.client("cloudformation", region_name="us-east-1")
    template = {
        "Resources": {
            "Marker": {
                "Type": "AWS::SSM::Parameter",
                "Properties": {"Type": "String", "Value": "x", "Name": f"/test/{name}"},
            }
        },
        "Outputs": {
            "StateMachineArn": {"Value": local.aws.state_machine_arn},
            "SweepStateMachineArn": {"Value": local.aws.sweep_state_machine_arn},
        },
    }
    cloudformation.create_stack(StackName=name, TemplateBody=json.dumps(template))
    try:
        yield
    finally:
        cloudformation.delete_stack(StackName=name)


@pytest.fixture
def deployed(local, database_url, monkeypatch):
    """A stack named like the default deployment's whose outputs point at the state machines the runner deployed."""
    monkeypatch.setenv("COLUMNS", "250")
    with orchestrator_stack(local, "OrioleOrchestrator"):
        yield local


def test_run_with_aws_starts_on_the_deployed_state_machine_and_follows_it(deployed):
    result = runner.invoke(app, ["run", "--aws", "--maze", "perfect-7", "--agent", "oracle", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert tuple(data) == RESULT_KEYS  # the same object as a local run prints
    assert data["status"] == "succeeded" and data["goal_found"] and data["actions"] == data["shortest_path_length"]
    [execution] = data["execution_arns"]
    assert execution.startswith(deployed.aws.state_machine_arn.replace(":stateMachine:", ":execution:"))
    block = runner.invoke(app, ["run", "--aws", "--maze", "perfect-7", "--agent", "oracle"])
    assert block.exit_code == 0 and "goal found" in block.stdout and "path efficiency  1.000" in block.stdout
    status = runner.invoke(app, ["status", execution, "--aws", "--json"])
    assert status.exit_code == 0, status.output
    report = json.loads(status.stdout)
    assert report["experiment"]["status"] == "succeeded" and report["experiment"]["goal_found"]
    assert [e["status"] for e in report["executions"]] == ["SUCCEEDED"]
    by_id = runner.invoke(app, ["status", str(report["experiment"]["experiment_id"])])
    assert "succeeded" in by_id.stdout


def test_run_with_aws_without_a_deployment_says_how_to_deploy(local, monkeypatch):
    result = runner.invoke(app, ["run", "--aws", "--agent", "oracle"])
    assert result.exit_code == 2 and "make deploy" in result.output


def test_params_with_aws_show_and_set_the_deployed_values(local, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    listing = runner.invoke(app, ["params", "list", "--aws"])
    assert "/oriole/experiments/max-moves" in listing.stdout and "10000" in listing.stdout
    assert runner.invoke(app, ["params", "set", "maxMoves", "500", "--aws"]).exit_code == 0
    value = boto3.client("ssm", region_name="us-east-1").get_parameter(Name="/oriole/experiments/max-moves")
    assert value["Parameter"]["Value"] == "500"
    bad = runner.invoke(app, ["params", "set", "maxMoves", "lots", "--aws"])
    assert bad.exit_code == 2 and "maxMoves must be an integer from 1 to 1000000; got 'lots'" in bad.output
    assert "unknown config key 'noSuchKey'" in runner.invoke(app, ["params", "set", "noSuchKey", "1", "--aws"]).output
    assert "at least 1" in runner.invoke(app, ["params", "set", "maxMoves", "0", "--aws"]).output
    assert "--config" in runner.invoke(app, ["params", "set", "maxMoves", "5"]).output
    runner.invoke(app, ["params", "set", "maxMoves", "10000", "--aws"])


def test_a_sweep_submitted_with_aws_returns_at_once_and_a_second_submit_meets_it(deployed, tmp_path):
    sweep_id = f"aws-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "sweep.json"
    file.write_text(
        json.dumps(
            {"id": sweep_id, "agents": ["baseline/oracle"], "mazes": ["perfect-7", "perfect-9"], "repetitions": 2}
        )
    )
    submitted = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "1"])
    assert submitted.exit_code == 0, submitted.output
    assert submitted.stdout.startswith("started ") and "oriole sweep status" in submitted.stderr
    arn = submitted.stdout.split()[-1]
    assert arn.endswith(f":{sweep_id}-" + arn.rsplit("-", 2)[1] + "-1")  # <id>-<input hash>-<run>
    again = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "1"])
    assert again.stdout == f"already running: {arn}\n"  # the same sweep: the same execution
    other = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "2"])
    assert other.exit_code == 2 and "is running another version of its file" in other.output
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
        time.sleep(0.2)
    status = runner.invoke(app, ["sweep", "status", sweep_id, "--aws"])
    assert status.exit_code == 0, status.output
    assert status.stdout.startswith(f"execution {arn.rsplit(':', 1)[-1]}: SUCCEEDED at ")
    assert f"sweep {sweep_id}: 4 planned, 4 done, 0 running, 0 left" in status.stdout
    assert "done: 4 goal found\nspent $0.0000 · 0 tokens" in status.stdout
    resumed = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "1"])
    assert resumed.stdout.strip().endswith("-2")  # submitted again once ended: a new run, which resumes
    second = resumed.stdout.split()[-1]
    while (done := sfn.describe_execution(executionArn=second))["status"] == "RUNNING":
        time.sleep(0.2)
    assert json.loads(done["output"])["alreadyDone"] == 4

    # the spend limit on the deployed sweep state machine: spent 4 of 2.5, the 2 new repetitions never start
    deployed.store.conn.execute("UPDATE experiments SET cost_usd = 1 WHERE agent_id LIKE %s", (sweep_id + "/%",))
    file.write_text(
        json.dumps(
            {
                "id": sweep_id,
                "agents": ["baseline/oracle"],
                "mazes": ["perfect-7", "perfect-9"],
                "repetitions": 3,
                "spend_limit_usd": 2.5,
            }
        )
    )
    limited = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "1"])
    assert limited.exit_code == 0, limited.output
    while (done := sfn.describe_execution(executionArn=limited.stdout.split()[-1]))["status"] == "RUNNING":
        time.sleep(0.2)
    output = json.loads(done["output"])
    assert (output["planned"], output["alreadyDone"], output["skipped"], output["spentUsd"]) == (6, 4, 2, 4.0)


def test_every_aws_command_finds_the_stacks_of_the_deployment_oriole_deployment_names(local, monkeypatch, tmp_path):
    """ORIOLE_DEPLOYMENT=lab2 (deployed with ``-c deployment=Lab2``; the name's case does not matter): `run`,
    `sweep` and `sweep status` with --aws read the outputs of Lab2Orchestrator; without it they look for
    OrioleOrchestrator, which this account does not have."""
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("ORIOLE_DEPLOYMENT", "lab2")
    sweep_id = f"lab2-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "sweep.json"
    file.write_text(json.dumps({"id": sweep_id, "agents": ["baseline/oracle"], "mazes": ["perfect-7"]}))
    with orchestrator_stack(local, "Lab2Orchestrator"):
        run = runner.invoke(app, ["run", "--aws", "--maze", "perfect-7", "--agent", "oracle", "--json"])
        assert run.exit_code == 0, run.output
        submitted = runner.invoke(app, ["sweep", str(file), "--aws", "--wait-seconds", "1"])
        assert submitted.exit_code == 0 and submitted.stdout.startswith("started "), submitted.output
        arn = submitted.stdout.split()[-1]
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        while sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
            time.sleep(0.2)
        status = runner.invoke(app, ["sweep", "status", sweep_id, "--aws"])
        assert status.exit_code == 0 and f"execution {arn.rsplit(':', 1)[-1]}: SUCCEEDED" in status.stdout
        monkeypatch.delenv("ORIOLE_DEPLOYMENT")
        for command in (
            ["run", "--aws", "--agent", "oracle"],
            ["sweep", str(file), "--aws"],
            ["sweep", "status", sweep_id, "--aws"],
        ):
            default = runner.invoke(app, command)
            assert default.exit_code == 2 and "stack OrioleOrchestrator not found" in default.output, command
