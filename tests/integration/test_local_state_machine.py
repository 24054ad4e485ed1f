"""Whole experiments through the real ASL file under moto, with the real handlers and PostgreSQL."""

import gc
import json
import time
import uuid

import pytest

from oriole import catalog
from oriole.core import endings, mazeset
from oriole.lifecycle.task_io import ContinueRequest, FinalizeRequest, StartRequest
from tests.integration.conftest import baseline


def assert_invariants(store, experiment_id: int) -> None:
    """What must hold after any run: gapless steps, continuous positions, totals equal sums (of the committed turns
    and the calls answered in failed attempts), closed."""
    conn = store.conn
    exp = conn.execute("SELECT * FROM experiments WHERE id = %s", (experiment_id,)).fetchone()
    actions = conn.execute(
        "SELECT * FROM actions WHERE experiment_id = %s ORDER BY step_number", (experiment_id,)
    ).fetchall()
    turns = conn.execute(
        "SELECT * FROM turns WHERE experiment_id = %s ORDER BY turn_number", (experiment_id,)
    ).fetchall()
    maze = store.find_maze(exp["maze_id"]).maze
    assert [a["step_number"] for a in actions] == list(range(1, len(actions) + 1))
    position = maze.start
    for a in actions:
        assert (a["from_x"], a["from_y"]) == position, a["step_number"]
        position = (a["to_x"], a["to_y"])
    assert position == (exp["current_x"], exp["current_y"])
    assert [t["turn_number"] for t in turns] == list(range(1, len(turns) + 1))
    starts = [1 + sum(t["action_count"] for t in turns[:i]) for i in range(len(turns))]
    assert [t["first_step"] for t in turns] == starts
    failed = conn.execute(
        "SELECT c.* FROM failed_attempt_calls c JOIN failed_attempts f USING (attempt) WHERE f.experiment_id = %s",
        (experiment_id,),
    ).fetchall()
    assert exp["turn_count"] == len(turns)
    assert exp["action_count"] == len(actions) == sum(t["action_count"] for t in turns)
    for total in ("input_tokens", "output_tokens", "cost_usd", "model_calls"):  # committed turns + failed attempts
        if total == "cost_usd" and exp["cost_usd"] is None:  # unpriced: unknown in every row, never $0
            assert all(t["cost_usd"] is None for t in turns) and all(c["cost_usd"] is None for c in failed)
            assert exp["failed_cost_usd"] is None  # unknown as cost_usd is, never $0
            continue
        spent = len(failed) if total == "model_calls" else sum(c[total] for c in failed)
        assert exp[f"failed_{total}"] == spent, total
        assert exp[total] == sum(t[total] for t in turns) + spent, total
    assert exp["latency_ms"] == sum(t["latency_ms"] for t in turns) + sum(c["latency_ms"] for c in failed)
    assert exp["move_count"] == sum(a["action_type"].startswith("move_") for a in actions)
    assert exp["failed_move_count"] == sum(a["action_type"].startswith("move_") and not a["success"] for a in actions)
    assert exp["completed_at"] is not None and exp["status"] != "running"
    assert_aggregates(exp, actions, turns, maze.start)


def assert_aggregates(exp: dict, actions: list[dict], turns: list[dict], start: tuple[int, int]) -> None:
    """The aggregates the turn's write keeps on the experiment equal a recomputation from the raw rows, and the
    ending is the one the scoring rule gives."""
    tiles = {start} | {(a["to_x"], a["to_y"]) for a in actions}
    assert exp["unique_tiles_visited"] == len(tiles)
    assert exp["model_calls"] == sum(t["model_calls"] for t in turns) + exp["failed_model_calls"]
    assert exp["last_action_at"] == max((a["created_at"] for a in actions), default=None)
    assert exp["ending"] == endings.ending_category(exp["status"], exp["failure_reason"])


def state_names(local, execution_arn: str) -> list[str]:
    return [
        e["stateEnteredEventDetails"]["name"]
        for e in local.aws.history(execution_arn)
        if "stateEnteredEventDetails" in e
    ]


def test_oracle_finds_the_goal_in_exactly_the_shortest_path(local):
    result = local.run(baseline("oracle", "perfect-11"))
    data = result.as_json()
    entry = mazeset.get_maze("perfect-11")
    assert result.execution["status"] == "SUCCEEDED"
    assert data["status"] == "succeeded" and data["goal_found"]
    assert data["moves"] == data["actions"] == entry.shortest_path_length == data["shortest_path_length"]
    assert data["path_efficiency"] == 1.0 and data["failure_reason"] is None
    assert data["goal_reached_step"] == data["actions"]
    assert state_names(local, result.execution_arn)[-2:] == ["FinalizeSuccess", "ExperimentSucceeded"]
    assert_invariants(local.store, data["experiment_id"])


def test_random_agent_ends_through_finalize_timeout_at_max_moves(local):
    result = local.run(baseline("random", "medium-60", maxMoves=200))
    data = result.as_json()
    assert data["status"] == "timed_out" and not data["goal_found"] and data["actions"] == 200
    assert data["failure_reason"] == "max_moves reached: 200 actions of 200 allowed"
    assert "FinalizeTimeout" in state_names(local, result.execution_arn)
    assert_invariants(local.store, data["experiment_id"])


@pytest.mark.parametrize("agent", ["explorer", "wall-follower"])
def test_searching_baselines_reach_the_goal_of_a_small_maze(local, agent):
    data = local.run(baseline(agent, "perfect-15")).as_json()
    assert data["status"] == "succeeded" and data["moves"] >= data["shortest_path_length"]
    assert_invariants(local.store, data["experiment_id"])


def test_stored_aggregates_equal_a_recount_from_the_raw_actions_after_real_runs(local):
    """Several baselines with wall hits and revisits: what each turn's write accumulated equals the aggregates
    recomputed from the raw actions and turns, in Python and by the migration's own recount."""
    runs = [
        local.run(baseline(*args, **config)).as_json()["experiment_id"]
        for *args, config in (
            ("random", "medium-60", {"maxMoves": 300, "seed": 3}),
            ("explorer", "perfect-21", {}),
            ("wall-follower", "rooms-60", {"maxMoves": 400}),
            ("oracle", "perfect-9", {"maxActionsPerTurn": 3}),
        )
    ]
    conn = local.store.conn
    view = (
        "SELECT experiment_id, unique_tiles_visited, revisits, model_calls, mean_latency_ms, last_action_at, "
        "ending FROM experiment_results WHERE experiment_id = ANY (%s) ORDER BY experiment_id"
    )
    stored = conn.execute(view, (runs,)).fetchall()
    assert conn.execute("SELECT recount_experiments(%s) AS n", (runs,)).fetchone()["n"] == len(runs)
    assert conn.execute(view, (runs,)).fetchall() == stored
    for row in stored:
        assert_invariants(local.store, row["experiment_id"])
    assert sum(row["revisits"] for row in stored) > 0 and all(row["unique_tiles_visited"] > 1 for row in stored)


def test_configuration_snapshot_and_overrides_are_stored(local):
    data = local.run(
        baseline("oracle", "perfect-7", maxActionsPerTurn=2, visionRange=1, repetitionThreshold=0)
    ).as_json()
    row = local.store.conn.execute(
        "SELECT config, seed, prompt_version, prompt_hash, prompt_text FROM experiments WHERE id = %s",
        (data["experiment_id"],),
    ).fetchone()
    assert row["config"]["maxActionsPerTurn"] == 2 and row["config"]["visionRange"] == 1
    assert row["config"]["repetitionThreshold"] == 0  # a falsy value is stored, not dropped
    assert "temperature" not in row["config"]  # a baseline's snapshot holds the keys that applied to it only
    assert row["config"]["seed"] == row["seed"] >= 0
    assert row["prompt_version"] == "v1" and len(row["prompt_hash"]) == 64 and "maze" in row["prompt_text"]
    turns = local.store.conn.execute(
        "SELECT action_count FROM turns WHERE experiment_id = %s", (data["experiment_id"],)
    ).fetchall()
    assert max(t["action_count"] for t in turns) == 2


def count_experiments(local) -> int:
    return local.store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


@pytest.mark.parametrize(
    "execution_input, error, message",
    [
        ({"mazeId": "no-such-maze", "llmProvider": "baseline", "modelName": "random"}, "UnknownMaze", "no-such-maze"),
        ({"mazeId": "perfect-7", "llmProvider": "azure", "modelName": "gpt"}, "InvalidExecutionInput", "llmProvider"),
        (baseline("random", "perfect-7", maxMovez=5), "InvalidConfig", "maxMovez"),
        (baseline("random", "perfect-7", maxMoves="many"), "InvalidConfig", "config.maxMoves must be an integer"),
        ({**baseline("random", "perfect-7"), "promptVersion": "v99"}, "UnknownPromptVersion", "v99"),
        ({"mazeId": "perfect-7", "llmProvider": "baseline"}, "InvalidExecutionInput", "modelName: Field required"),
        ({**baseline("random", "perfect-7"), "colour": "red"}, "InvalidExecutionInput", "colour: unknown field"),
        ({"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "genius"}, "InvalidExecutionInput", "genius"),
        ({"experimentId": 999999}, "ContinuationRefused", "cannot continue experiment 999999"),
    ],
)
def test_bad_execution_input_fails_at_start_with_a_named_error_and_no_row(local, execution_input, error, message):
    before = count_experiments(local)
    result = local.run(execution_input)
    assert result.summary is None
    assert result.execution["status"] == "FAILED"
    assert result.execution["error"] == error
    assert message in json.loads(result.execution["cause"])["errorMessage"]
    assert count_experiments(local) == before
    assert state_names(local, result.execution_arn) == [
        "ReceiveInput",
        "StartExperiment",
        "FinalizeFailure",
        "ExperimentFailed",
    ]


def test_long_experiments_continue_as_new_executions(local):
    result = local.run(baseline("oracle", "perfect-31", maxTurnsPerExecution=3, maxActionsPerTurn=4))
    data = result.as_json()
    assert data["status"] == "succeeded"
    arns = data["execution_arns"]
    assert len(arns) == -(-data["turns"] // 3)
    assert [a.rsplit(":", 1)[-1] for a in arns[1:]] == [
        f"exp-{data['experiment_id']}-part-{n}" for n in range(2, len(arns) + 1)
    ]
    for arn in arns[:-1]:
        assert local.launcher.describe(arn)["status"] == "SUCCEEDED"
        assert state_names(local, arn)[-2:] == ["ContinueAsNew", "HandedOver"]
    assert state_names(local, arns[-1])[-1] == "ExperimentSucceeded"
    assert_invariants(local.store, data["experiment_id"])


def test_the_runner_s_set_up_stays_out_of_full_collections_while_it_runs(local):
    """What the runner set up (moto's, botocore's and the handlers' modules, models and parsed flows) is frozen out
    of the cyclic collector's full collections while it runs; test_cli checks it is handed back when it closes."""
    assert gc.get_freeze_count() > 100_000


def test_a_follower_looks_again_as_soon_as_an_execution_ends_not_at_its_next_poll(local):
    """Polling every two minutes, the follower still returns within seconds of the end: each execution's end wakes
    it (a chain of three here, so the ends that hand over wake it too). Without the wake, this takes minutes."""
    launcher = local.aws.launcher(poll_seconds=120)
    started = time.monotonic()
    arn = launcher.start(baseline("oracle", "perfect-15", maxTurnsPerExecution=3, maxActionsPerTurn=4))
    data = launcher.follow(arn, local.results).as_json()
    assert data["status"] == "succeeded" and len(data["execution_arns"]) >= 2
    assert time.monotonic() - started < 60


@pytest.mark.parametrize("token", [None, "not-the-issued-token"])
def test_an_execution_started_by_hand_as_the_next_part_is_refused_and_leaves_the_experiment_running(local, token):
    """A console execution named exp-<id>-part-2 whose input names the experiment: StartExperiment refuses it
    (ContinuationRefused), FinalizeFailure and the status-change finalizer close nothing, the row is as it was."""
    from oriole.lifecycle import experiments

    first = f"{local.aws.state_machine_arn.replace(':stateMachine:', ':execution:')}:first-part-{uuid.uuid4().hex}"
    experiment_id = experiments.start(
        StartRequest.model_validate({"input": baseline("oracle", "perfect-9"), "executionArn": first}),
        local.store,
        lambda names: catalog.defaults(),
    ).as_state()["experimentId"]
    experiments.continue_as_new(
        ContinueRequest.model_validate({"experimentId": experiment_id, "part": 1, "stateMachineArn": "unused"}),
        local.store,
        lambda machine, name, execution_input: name,
    )  # a token is issued
    columns = "status, completed_at, execution_arns, continuation_hashes, turn_count"
    before = local.store.conn.execute(f"SELECT {columns} FROM experiments WHERE id = %s", (experiment_id,)).fetchone()
    execution_input = {"experimentId": experiment_id} | ({"continuationToken": token} if token else {})
    result = local.follow(local.launcher.start(execution_input, name=f"exp-{experiment_id}-part-2"))
    assert result.execution["status"] == "FAILED" and result.execution["error"] == "ContinuationRefused"
    assert f"cannot continue experiment {experiment_id}" in result.execution["cause"]
    assert token is None or token not in result.execution["cause"]
    assert not local.aws.report_status_change(result.execution)["closed"]
    after = local.store.conn.execute(f"SELECT {columns} FROM experiments WHERE id = %s", (experiment_id,)).fetchone()
    assert after == before and after["status"] == "running" and after["execution_arns"] == [first]
    experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": experiment_id, "reason": "test over"}), local.store, "aborted"
    )


def turn_round_trips(local, execution_input) -> float:
    before = dict(local.aws.statements)
    data = local.run(execution_input).as_json()
    used = {k: v - before.get(k, 0) for k, v in local.aws.statements.items()}
    return (used["oriole-InvokeBaselineAgent"] + used["oriole-CheckProgress"]) / data["turns"]


def test_database_round_trips_per_turn_do_not_grow_with_actions_per_turn(local):
    one = turn_round_trips(local, baseline("random", "sparse-60", maxMoves=40, maxActionsPerTurn=1))
    eight = turn_round_trips(local, baseline("random", "sparse-60", maxMoves=320, maxActionsPerTurn=8))
    assert one == eight == 3


def test_history_events_per_turn_stay_within_the_continue_as_new_budget(local):
    runs = [local.run(baseline("random", "sparse-60", maxMoves=moves)) for moves in (80, 160)]
    events = [len(local.aws.history(r.execution_arn)) for r in runs]
    turns = [r.as_json()["turns"] for r in runs]
    per_turn = (events[1] - events[0]) / (turns[1] - turns[0])
    transitions = [sum(e["type"].endswith("StateEntered") for e in local.aws.history(r.execution_arn)) for r in runs]
    assert per_turn == 16
    assert (transitions[1] - transitions[0]) / (turns[1] - turns[0]) == 5
    fixed = events[0] - per_turn * turns[0]
    assert catalog.BY_KEY["maxTurnsPerExecution"].default * per_turn + fixed < 25_000


def test_a_long_one_action_per_turn_experiment_chains_executions_within_the_history_budget(local):
    """A scaled version of the 10,000-action benchmark (bench/bench_local_run.py --actions-per-turn 1):
    300 turns at one action each, 40 turns per execution."""
    result = local.run(
        baseline("random", "medium-60", maxMoves=300, maxActionsPerTurn=1, maxTurnsPerExecution=40, seed=1)
    )
    data = result.as_json()
    assert data["status"] == "timed_out" and data["actions"] == data["turns"] == 300
    arns = data["execution_arns"]
    assert len(arns) == 8 and len(set(arns)) == 8
    events = [len(local.aws.history(arn)) for arn in arns]
    # 16 events per turn plus a fixed start and end; every execution far below the 25,000-event limit
    assert all(n <= 40 * 16 + 20 for n in events) and max(events) < 25_000
    assert events[:7] == [events[0]] * 7 and events[-1] < events[0]  # 7 full parts of 40 turns, then 20 turns
    assert_invariants(local.store, data["experiment_id"])


def test_the_interpreter_gets_from_a_function_what_moto_s_lambda_would_give_it(local):
    """The runner hands a Task state's invoke straight to the handler (bench/bench_local_run.py's speed); what the
    state machine receives is what the invoke through moto's Lambda answers, an unhandled error included."""
    import boto3
    from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils

    arn = local.aws._substitutions["CheckProgressFunctionArn"]
    request = json.dumps({"experimentId": "not a number"}).encode()
    through_moto = boto3.client("lambda", region_name="us-east-1").invoke(FunctionName=arn, Payload=request)
    direct = lambda_eval_utils._invoke_lambda_function({"FunctionName": arn, "Payload": request}, "us-east-1", None)
    assert direct["FunctionError"] == through_moto["FunctionError"] == "Unhandled"
    answer = json.loads(through_moto["Payload"].read())
    assert direct["Payload"]["errorType"] == answer["errorType"] and "experimentId" in answer["errorMessage"]
    assert direct["StatusCode"] == through_moto["StatusCode"] == 200


def test_an_answer_over_lambda_s_response_limit_is_a_function_error(local, monkeypatch):
    monkeypatch.setitem(local.aws._handlers, "oriole-Oversized", lambda event, context: {"text": "x" * 6_291_556})
    payload, error = local.aws._invoke("oriole-Oversized", b"{}")
    assert error == "Unhandled" and json.loads(payload)["errorType"] == "Function.ResponseSizeTooLarge"
