"""The status-change finalizer against real PostgreSQL: every way an execution can end leaves its
experiment closed with a reason, and only the execution that carries the experiment can close it."""

import json

import pytest

from oriole import catalog
from oriole.core import progress
from oriole.inputs import ExecutionStatusChange
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import ContinueRequest, FinalizeRequest, StartRequest
from oriole_workstation.runner import LambdaContext

MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:oriole-experiment"
EXECUTIONS = "arn:aws:states:us-east-1:123456789012:execution:oriole-experiment:"


def start(store, name: str) -> int:
    event = {
        "input": {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "random"},
        "executionArn": EXECUTIONS + name,
    }
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()[
        "experimentId"
    ]


def detail(name: str, status: str, **fields) -> dict:
    return {
        "executionArn": EXECUTIONS + name,
        "stateMachineArn": MACHINE,
        "name": name,
        "status": status,
        "input": "{}",
        **fields,
    }


def close(event_detail: dict, store, execution_status) -> dict:
    """The status-change finalizer's core, given the event's detail as the handler parses it."""
    return experiments.close_after_execution(
        ExecutionStatusChange.model_validate(event_detail), store, execution_status
    )


def row(store, experiment_id: int) -> dict:
    return store.conn.execute(
        "SELECT status, completed_at, failure_reason FROM experiments WHERE id = %s", (experiment_id,)
    ).fetchone()


def no_successor(arn: str) -> str | None:
    raise AssertionError(f"only a handed-over execution asks for its successor's status, not for {arn}")


@pytest.mark.parametrize(
    "status, fields, closed_as, reason",
    [
        ("TIMED_OUT", {}, "timed_out", "execution TIMED_OUT: {name} reached its execution timeout"),
        (
            "ABORTED",
            {"cause": "stopped from the console"},
            "aborted",
            "execution ABORTED: {name} was stopped (stopped from the console)",
        ),
        (
            "FAILED",
            {
                "error": "ModelTimeout",
                "cause": json.dumps({"errorType": "ModelTimeout", "errorMessage": "no answer within 120 s"}),
            },
            "failed",
            "execution FAILED: {name} failed (ModelTimeout: no answer within 120 s)",
        ),
    ],
)
def test_an_execution_that_ends_with_its_experiment_open_closes_it_once(store, status, fields, closed_as, reason):
    name = f"ends-{status.lower()}"
    experiment_id = start(store, name)
    result = close(detail(name, status, **fields), store, no_successor)
    assert result["closed"] and result["experimentId"] == experiment_id
    closed = row(store, experiment_id)
    assert (closed["status"], closed["failure_reason"]) == (closed_as, reason.format(name=name))
    again = close(detail(name, "FAILED", error="Other"), store, no_successor)
    assert not again["closed"] and row(store, experiment_id) == closed


def test_an_experiment_the_state_machine_closed_is_left_as_it_is(store):
    experiment_id = start(store, "finalized")
    experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": experiment_id, "reason": "max_moves reached"}),
        store,
        "timed_out",
    )
    before = row(store, experiment_id)
    result = close(detail("finalized", "SUCCEEDED"), store, no_successor)
    assert not result["closed"] and row(store, experiment_id) == before


def test_the_end_of_an_earlier_part_changes_nothing(store):
    experiment_id = start(store, "part-one")
    _, token_hash = progress.continuation_token()
    assert store.issue_continuation(experiment_id, 1, token_hash).issued
    assert store.attach_execution(experiment_id, EXECUTIONS + f"exp-{experiment_id}-part-2", 2, token_hash)
    result = close(detail("part-one", "FAILED", error="Boom"), store, no_successor)
    assert not result["closed"] and row(store, experiment_id)["status"] == "running"


def handed_over(name: str, successor: str) -> dict:
    output = {"experimentId": 1, "continuation": {"successorExecutionArn": EXECUTIONS + successor}}
    return detail(name, "SUCCEEDED", output=json.dumps(output))


def test_a_handed_over_execution_leaves_the_experiment_to_its_running_successor(store):
    experiment_id = start(store, "handing-over")
    successor = f"exp-{experiment_id}-part-2"
    asked = []

    def running(arn):
        asked.append(arn)
        return "RUNNING"

    result = close(handed_over("handing-over", successor), store, running)
    assert not result["closed"] and asked == [EXECUTIONS + successor]
    assert row(store, experiment_id)["status"] == "running"


@pytest.mark.parametrize(
    "successor_status, state", [(None, "which does not exist"), ("SUCCEEDED", "which already ended (SUCCEEDED)")]
)
def test_a_successor_that_never_started_fails_the_experiment(store, successor_status, state):
    name = f"orphaned-{successor_status}"
    experiment_id = start(store, name)
    successor = f"exp-{experiment_id}-part-2"
    result = close(handed_over(name, successor), store, lambda arn: successor_status)
    assert result["closed"]
    assert (
        row(store, experiment_id)["failure_reason"]
        == f"continuation did not start: execution {name} handed over to {successor}, {state}"
    )


def test_a_successor_aborted_before_it_attached_itself_closes_the_experiment(store):
    """Only the successor ContinueAsNew started (its input holds the token that task issued) closes the
    experiment when it ends before attaching; a stranger, or an execution merely named like it, does not."""
    experiment_id = start(store, "before-attach")
    started = {}

    def start_execution(machine: str, name: str, execution_input: dict) -> str:
        started[name] = execution_input
        return f"{machine}:{name}"

    experiments.continue_as_new(
        ContinueRequest.model_validate({"experimentId": experiment_id, "part": 1, "stateMachineArn": MACHINE}),
        store,
        start_execution,
    )
    successor = f"exp-{experiment_id}-part-2"
    stranger = detail("someone-else", "ABORTED", input=json.dumps(started[successor]))
    assert not close(stranger, store, no_successor)["closed"]
    for impostor in ({"experimentId": experiment_id}, {"experimentId": experiment_id, "continuationToken": "x"}):
        assert not close(detail(successor, "ABORTED", input=json.dumps(impostor)), store, no_successor)["closed"]
    assert row(store, experiment_id)["status"] == "running"
    assert close(detail(successor, "ABORTED", input=json.dumps(started[successor])), store, no_successor)["closed"]
    assert row(store, experiment_id)["status"] == "aborted"


def test_an_execution_without_an_experiment_is_ignored(store):
    result = close(detail("rejected-input", "FAILED", error="UnknownMaze"), store, no_successor)
    assert result == {
        "executionArn": EXECUTIONS + "rejected-input",
        "status": "FAILED",
        "experimentId": None,
        "closed": False,
        "failureReason": None,
    }


def test_the_lambda_handler_takes_the_eventbridge_event(store, database_url, monkeypatch):
    from oriole.handlers import execution_status
    from oriole.store import db

    monkeypatch.setenv("DATABASE_URL", database_url)
    db.reset()
    experiment_id = start(store, "from-eventbridge")
    event = {
        "version": "0",
        "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
        "detail-type": "Step Functions Execution Status Change",
        "source": "aws.states",
        "account": "123456789012",
        "time": "2025-01-01T00:00:00Z",
        "region": "us-east-1",
        "resources": [EXECUTIONS + "from-eventbridge"],
        "detail": {
            **detail("from-eventbridge", "TIMED_OUT"),
            "startDate": 1735689600000,
            "stopDate": 1735696800000,
            "output": None,
            "error": None,
            "cause": None,
        },
    }
    try:
        result = execution_status.handler(event, LambdaContext("status", "arn:aws:lambda:::function:status", "r"))
    finally:
        db.reset()
    assert result["closed"] and row(store, experiment_id)["status"] == "timed_out"
