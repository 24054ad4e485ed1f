"""``oriole doctor``: open experiments that no execution runs any more are listed, and closed with --fix
through the status-change finalizer; an experiment a live runner holds is left alone."""

import json
import time

import psycopg
import pytest

from oriole import catalog, experiments
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
    event = {"input": {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "random"},
             "executionArn": execution_arn}
    return experiments.start(event, store, lambda names: catalog.defaults())["experimentId"]


def listed(result) -> dict[int, dict]:
    return {z["experiment_id"]: z for z in json.loads(result.stdout)["zombies"]}


def test_a_local_experiment_whose_process_died_is_listed_and_fixed(doctor, store, database_url):
    orphan = start(store, EXECUTION_PREFIX + "local-crashed-run")
    running = start(store, EXECUTION_PREFIX + "local-live-run")
    elsewhere = start(store, "arn:aws:states:eu-west-1:210987654321:execution:oriole-experiment:on-aws")
    with psycopg.connect(database_url, autocommit=True) as live_runner:
        Results(live_runner).hold(running)  # what LocalAws does for every experiment it runs

        found = listed(doctor("--json"))
        assert orphan in found and running not in found and elsewhere not in found
        assert found[orphan]["last_execution"] == EXECUTION_PREFIX + "local-crashed-run"
        assert found[orphan]["closed"] is False and found[orphan]["turns"] == 0
        readable = doctor().stdout
        assert "local-crashed-run" in readable and "oriole doctor --fix" in readable

        fixed = listed(doctor("--fix", "--json"))[orphan]
        assert fixed["closed"] and fixed["failure_reason"] == (
            "execution ABORTED: local-crashed-run was stopped (no oriole run process holds it: the process that "
            "ran the local execution ended)")
        row = store.conn.execute("SELECT status, completed_at FROM experiments WHERE id = %s", (orphan,)).fetchone()
        assert row["status"] == "aborted" and row["completed_at"] is not None
        assert orphan not in listed(doctor("--json"))
    statuses = store.conn.execute("SELECT id, status FROM experiments WHERE id IN (%s, %s)",
                                  (running, elsewhere)).fetchall()
    assert {r["status"] for r in statuses} == {"running"}
    assert running in listed(doctor("--json"))  # its runner is gone now


def test_with_aws_an_experiment_whose_execution_ended_is_listed_and_fixed(doctor, store, database_url):
    """Against moto's Step Functions (in this process), as against an account: only what is not RUNNING."""
    with LocalAws(database_url) as aws:
        ended = aws.sfn.create_state_machine(
            name="ended", roleArn="arn:aws:iam::123456789012:role/r",
            definition=json.dumps({"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Boom",
                                                                     "Cause": "it broke"}}}))["stateMachineArn"]
        waiting = aws.sfn.create_state_machine(
            name="waiting", roleArn="arn:aws:iam::123456789012:role/r",
            definition=json.dumps({"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 30,
                                                                     "End": True}}}))["stateMachineArn"]
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
