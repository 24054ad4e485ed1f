"""``oriole doctor``: open experiments that no execution runs any more are listed, and closed with --fix
through the status-change finalizer; an experiment a live runner holds is left alone."""

import json
import time

import psycopg
import pytest

from oriole import catalog
from oriole.environment import EXECUTION_TIMEOUT, STATE_MACHINE_ARN
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest
from oriole_workstation.results import Results
from oriole_workstation.runner import EXECUTION_PREFIX, LocalAws


@pytest.fixture
def doctor(cli):
    def invoke(*args):
        result = cli("doctor", *args)
        assert result.exit_code == 0, result.output
        return result

    return invoke


def start(store, execution_arn: str) -> int:
    event = {
        "input": {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "random"},
        "executionArn": execution_arn,
    }
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()[
        "experimentId"
    ]


def listed(result) -> dict[int, dict]:
    return {z["experiment_id"]: z for z in json.loads(result.stdout)["zombies"]}


def test_a_local_experiment_whose_process_died_is_listed_and_fixed(doctor, store, database_url):
    orphan = start(store, EXECUTION_PREFIX + "local-crashed-run")
    running = start(store, EXECUTION_PREFIX + "local-live-run")
    elsewhere = start(store, "arn:aws:states:eu-west-1:210987654321:execution:oriole-experiment:on-aws")
    with psycopg.connect(database_url, autocommit=True) as live_runner:
        Results(live_runner).hold(EXECUTION_PREFIX + "local-live-run")  # what LocalAws does for each execution

        found = listed(doctor("--json"))
        assert orphan in found and running not in found and elsewhere not in found
        assert found[orphan]["last_execution"] == EXECUTION_PREFIX + "local-crashed-run"
        assert found[orphan]["closed"] is False and found[orphan]["turns"] == 0
        readable = doctor().stdout
        assert "local-crashed-run" in readable and "oriole doctor --fix" in readable

        fixed = listed(doctor("--fix", "--json"))[orphan]
        assert fixed["closed"] and fixed["failure_reason"] == (
            "execution ABORTED: local-crashed-run was stopped (no oriole run process holds it: the process that "
            "ran the local execution ended)"
        )
        row = store.conn.execute("SELECT status, completed_at FROM experiments WHERE id = %s", (orphan,)).fetchone()
        assert row["status"] == "aborted" and row["completed_at"] is not None
        assert orphan not in listed(doctor("--json"))
    statuses = store.conn.execute(
        "SELECT id, status FROM experiments WHERE id IN (%s, %s)", (running, elsewhere)
    ).fetchall()
    assert {r["status"] for r in statuses} == {"running"}
    assert running in listed(doctor("--json"))  # its runner is gone now


def test_with_aws_an_experiment_whose_execution_ended_is_listed_and_fixed(doctor, store, database_url):
    """Against moto's Step Functions (in this process), as against an account: only what is not RUNNING."""
    with LocalAws(database_url) as aws:
        ended = aws.sfn.create_state_machine(
            name="ended",
            roleArn="arn:aws:iam::123456789012:role/r",
            definition=json.dumps(
                {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Boom", "Cause": "it broke"}}}
            ),
        )["stateMachineArn"]
        waiting = aws.sfn.create_state_machine(
            name="waiting",
            roleArn="arn:aws:iam::123456789012:role/r",
            definition=json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 30, "End": True}}}),
        )["stateMachineArn"]
        failed_arn = aws.sfn.start_execution(stateMachineArn=ended, name="failed-run")["executionArn"]
        running_arn = aws.sfn.start_execution(stateMachineArn=waiting, name="still-running")["executionArn"]
        failed, running = start(store, failed_arn), start(store, running_arn)
        gone = start(store, "arn:test:doctor-unknown-to-step-functions")
        while aws.sfn.describe_execution(executionArn=failed_arn)["status"] == "RUNNING":
            time.sleep(0.01)
        try:
            found = listed(doctor("--aws", "--json"))
            assert failed in found and running not in found and gone in found
            assert found[failed]["execution_status"] == "FAILED" and found[gone]["execution_status"] == "ABORTED"
            fixed = listed(doctor("--aws", "--fix", "--json"))[failed]
        finally:
            aws.sfn.stop_execution(executionArn=running_arn)
    assert fixed["closed"] and fixed["failure_reason"] == "execution FAILED: failed-run failed (Boom: it broke)"


def test_the_scheduled_reconciler_closes_what_the_doctor_would(store, database_url, monkeypatch):
    """The deployed reconciler (an EventBridge schedule) uses the doctor's --aws logic on its own state
    machine's executions only: an ended one is closed, a running one and another machine's are left."""
    from oriole.handlers import reconcile
    from oriole_workstation.runner import LambdaContext

    with LocalAws(database_url) as aws:

        def machine(name: str, state: dict) -> str:
            states = {
                "S": state,
                "W": {"Type": "Wait", "Seconds": 30, "End": True},
                "F": {"Type": "Fail", "Error": "Boom", "Cause": "it broke"},
            }
            return aws.sfn.create_state_machine(
                name=name,
                roleArn="arn:aws:iam::123456789012:role/r",
                definition=json.dumps({"StartAt": "S", "States": states}),
            )["stateMachineArn"]

        ours = machine(
            "ours",
            {"Type": "Choice", "Choices": [{"Variable": "$.wait", "BooleanEquals": True, "Next": "W"}], "Default": "F"},
        )
        foreign = machine("foreign", {"Type": "Fail", "Error": "Elsewhere"})
        failed_arn = aws.sfn.start_execution(stateMachineArn=ours, name="lost-event", input='{"wait": false}')[
            "executionArn"
        ]
        running_arn = aws.sfn.start_execution(stateMachineArn=ours, name="still-going", input='{"wait": true}')[
            "executionArn"
        ]
        foreign_arn = aws.sfn.start_execution(stateMachineArn=foreign, name="not-ours")["executionArn"]
        failed, running, other = (start(store, arn) for arn in (failed_arn, running_arn, foreign_arn))
        for arn in (failed_arn, foreign_arn):
            while aws.sfn.describe_execution(executionArn=arn)["status"] == "RUNNING":
                time.sleep(0.01)
        aws_started = aws.sfn.describe_execution(executionArn=failed_arn)["startDate"]
        gone = start(store, ours.replace(":stateMachine:", ":execution:") + ":purged-from-history")
        monkeypatch.setenv(STATE_MACHINE_ARN, ours)
        monkeypatch.setenv(EXECUTION_TIMEOUT, "3600")
        try:
            context = LambdaContext("oriole-Reconciler", "arn:aws:lambda:us-east-1:1:function:r", "r")
            first = reconcile.handler({}, context)
            again = reconcile.handler({}, context)
        finally:
            aws.sfn.stop_execution(executionArn=running_arn)
    rows = {
        r["id"]: r
        for r in store.conn.execute(
            "SELECT id, status, failure_reason FROM experiments WHERE id = ANY(%s)", ([failed, running, other, gone],)
        ).fetchall()
    }
    assert rows[failed]["status"] == "failed"
    assert rows[failed]["failure_reason"] == "execution FAILED: lost-event failed (Boom: it broke)"
    assert rows[gone]["status"] == "aborted" and "no such execution" in rows[gone]["failure_reason"]
    assert rows[running]["status"] == rows[other]["status"] == "running"
    started = int(aws_started.timestamp() * 1000)
    assert first == {
        "found": 2,
        "closed": 2,
        "lookedAt": True,
        "closedExperiments": [
            {"experimentId": failed, "startDate": started},
            {"experimentId": gone, "startDate": None},
        ],
    }
    assert again == {"found": 0, "closed": 0, "lookedAt": True, "closedExperiments": []}


def test_an_idle_deployment_s_reconciler_leaves_its_database_alone(database_url, monkeypatch):
    """Nothing ran on the state machine lately: the reconciler answers from Step Functions alone, without asking
    for a connection, so a paused database stays paused."""
    from oriole.handlers import reconcile
    from oriole_workstation.runner import LambdaContext

    def no_database(*args):
        raise AssertionError("the idle reconciler asked for the database")

    monkeypatch.setattr(reconcile, "shared_store", no_database)
    with LocalAws(database_url) as aws:
        idle = aws.sfn.create_state_machine(
            name="idle",
            roleArn="arn:aws:iam::123456789012:role/r",
            definition=json.dumps({"StartAt": "S", "States": {"S": {"Type": "Pass", "End": True}}}),
        )["stateMachineArn"]
        monkeypatch.setenv(STATE_MACHINE_ARN, idle)
        monkeypatch.setenv(EXECUTION_TIMEOUT, "3600")
        context = LambdaContext("oriole-Reconciler", "arn:aws:lambda:us-east-1:1:function:r", "r")
        assert reconcile.handler({}, context) == {"found": 0, "closed": 0, "lookedAt": False, "closedExperiments": []}
