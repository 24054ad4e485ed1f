"""The task functions against real PostgreSQL: retries find their earlier work and write nothing."""

from datetime import UTC, datetime

import pytest

from oriole import catalog
from oriole.core.turn import Turn
from oriole.errors import ExperimentNotRunning, TurnOutOfOrder
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import CaughtError, FinalizeRequest, StartRequest, TurnRequest
from oriole.providers import baseline


def start(store, arn: str, **config) -> dict:
    event = {
        "input": {"mazeId": "perfect-9", "llmProvider": "baseline", "modelName": "oracle", "config": config},
        "executionArn": arn,
    }
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()


def counts(store, experiment_id: int) -> tuple:
    row = store.conn.execute(
        "SELECT (SELECT count(*) FROM actions WHERE experiment_id = %(id)s) AS actions, "
        "(SELECT count(*) FROM turns WHERE experiment_id = %(id)s) AS turns, "
        "(SELECT action_count FROM experiments WHERE id = %(id)s) AS total",
        {"id": experiment_id},
    ).fetchone()
    return row["actions"], row["turns"], row["total"]


def test_a_retried_start_returns_the_same_experiment(store):
    first = start(store, "arn:test:start-retry")
    again = start(store, "arn:test:start-retry")
    assert first == again and first["turnNumber"] == 1


def test_a_retried_turn_returns_the_stored_result_without_calling_the_agent(store):
    state = start(store, "arn:test:turn-retry", maxActionsPerTurn=3)
    event = {"experimentId": state["experimentId"], "turnNumber": 1}
    first = experiments.play_turn(TurnRequest.model_validate(event), store, baseline.agent)
    written = counts(store, state["experimentId"])

    def agent_must_not_be_called(setup):
        raise AssertionError("a committed turn was played again")

    again = experiments.play_turn(TurnRequest.model_validate(event), store, agent_must_not_be_called)
    assert again == first and first.actions == 3
    assert counts(store, state["experimentId"]) == written == (3, 1, 3)


def test_a_turn_out_of_order_is_refused(store):
    state = start(store, "arn:test:out-of-order")
    with pytest.raises(TurnOutOfOrder, match="has 0 turns; turn 3 cannot be next"):
        experiments.play_turn(
            TurnRequest.model_validate({"experimentId": state["experimentId"], "turnNumber": 3}), store, baseline.agent
        )


def test_a_stale_concurrent_commit_writes_nothing(store):
    """Two attempts of the same turn race: the second commit finds the turn taken and adds no row."""
    state = start(store, "arn:test:race", maxActionsPerTurn=2)
    event = {"experimentId": state["experimentId"], "turnNumber": 1}
    loaded = store.load_turn(state["experimentId"], 1, with_maze=True)
    first = experiments.play_turn(TurnRequest.model_validate(event), store, baseline.agent)
    turn = Turn(loaded.state, loaded.maze_row.stored().maze)
    played = turn.play(baseline.agent(turn.agent_setup))
    late = experiments._commit(store, loaded.state, 1, played, datetime.now(UTC), turn.answered)
    assert late == first
    assert counts(store, state["experimentId"]) == (2, 1, 2)
    # its calls were made all the same: kept as a failed attempt's, never as a second turn
    [attempt] = store.conn.execute(
        "SELECT f.error, count(c.*) AS calls FROM failed_attempts f JOIN failed_attempt_calls c USING (attempt) "
        "WHERE f.experiment_id = %s GROUP BY f.attempt",
        (state["experimentId"],),
    ).fetchall()
    assert attempt == {"error": "TurnOutOfOrder: turn 1 was committed by another attempt first", "calls": 2}
    totals = store.conn.execute(
        "SELECT model_calls, failed_model_calls, failed_attempts FROM experiments WHERE id = %s",
        (state["experimentId"],),
    ).fetchone()
    assert totals == {"model_calls": first.actions + 2, "failed_model_calls": 2, "failed_attempts": 1}


def test_finalizing_twice_changes_nothing(store):
    state = start(store, "arn:test:finalize")
    first = experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": state["experimentId"], "reason": "max_moves reached"}),
        store,
        "timed_out",
    )
    again = experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": state["experimentId"], "error": {"Error": "Boom"}}),
        store,
        "failed",
    )
    assert first.closed and not again.closed
    row = store.conn.execute(
        "SELECT status, failure_reason FROM experiments WHERE id = %s", (state["experimentId"],)
    ).fetchone()
    assert (row["status"], row["failure_reason"]) == ("timed_out", "max_moves reached")
    with pytest.raises(ExperimentNotRunning):
        experiments.play_turn(
            TurnRequest.model_validate({"experimentId": state["experimentId"], "turnNumber": 1}), store, baseline.agent
        )


def test_failure_reason_unwraps_a_lambda_error_payload():
    cause = '{"errorType": "ModelRequestRejected", "errorMessage": "unknown model x"}'
    assert (
        experiments.failure_reason(CaughtError(Error="ModelRequestRejected", Cause=cause))
        == "ModelRequestRejected: unknown model x"
    )
    assert (
        experiments.failure_reason(CaughtError(Error="States.Timeout", Cause="task timed out"))
        == "States.Timeout: task timed out"
    )


def test_a_turn_that_would_outlive_its_lambda_ends_with_the_deadline_and_is_written(store, database_url, monkeypatch):
    """100 s left and 120 s requests (plus the margin): after its first call, the turn stops and commits."""
    from oriole.handlers import agents
    from oriole_workstation.runner import LambdaContext

    state = start(store, "arn:test:deadline", maxActionsPerTurn=8)
    event = {"experimentId": state["experimentId"], "turnNumber": 1}
    result = experiments.play_turn(TurnRequest.model_validate(event), store, baseline.agent, lambda: 100.0)
    assert result.end_reason == "deadline" and result.actions == 1
    turn = store.conn.execute(
        "SELECT end_reason, action_count FROM turns WHERE experiment_id = %s", (state["experimentId"],)
    ).fetchone()
    assert turn == {"end_reason": "deadline", "action_count": 1}
    roomy = experiments.play_turn(
        TurnRequest.model_validate({**event, "turnNumber": 2}), store, baseline.agent, lambda: 899.0
    )
    assert roomy.end_reason != "deadline"

    # the handler reads the time left from its Lambda context
    import time

    from oriole.store import db

    monkeypatch.setenv("DATABASE_URL", database_url)
    db.reset()
    context = LambdaContext(
        "oriole-InvokeBaselineAgent", "arn:aws:lambda:us-east-1:1:function:f", "r", deadline=time.monotonic() + 100
    )
    answer = agents.invoke_baseline({**event, "turnNumber": 3}, context)
    db.reset()
    assert answer["endReason"] == "deadline" and answer["actions"] == 1
