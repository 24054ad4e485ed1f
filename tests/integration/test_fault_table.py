"""The fault table: each case injects one fault into a real local run (moto's interpreter running the ASL
file, the real handlers, PostgreSQL, the scripted Ollama server over HTTP) and checks what the researcher
sees: the experiment's final status and reason, and that no step is missing or doubled and every total is
the sum of its turns (``assert_invariants``).

Lambda faults are injected by wrapping a handler in the runner's routing table: the wrapper raises an
exception whose class name is the error name the real Lambda would report (the runner reports
``type(err).__name__`` as the errorType, as the Lambda runtime does), before or after the real handler
did its work. The docs' "When things fail" table (docs/explanation/failures.md) lists the same cases.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

import boto3
import psycopg
import pytest

from oriole import catalog, flows
from oriole.core import mazeset
from oriole.store import db
from tests.integration.conftest import baseline
from tests.integration.test_local_state_machine import assert_invariants, state_names
from tests.ollama_server import ScriptedOllama, error, slow, text_reply, tool_calls

AGENT, START, CHECK = "oriole-InvokeBaselineAgent", "oriole-StartExperiment", "oriole-CheckProgress"


@contextmanager
def failing(local, function: str, error_name: str, *, after: bool, on_call: int = 1, times: int = 1) -> Iterator[list]:
    """From the ``on_call``-th invocation of ``function`` on, ``times`` invocations raise ``error_name``,
    before the real handler runs or after it did its work (committed). Yields the injected failures."""
    handlers = local.aws._handlers
    real = handlers[function]
    injected_error = type(error_name, (Exception,), {})
    calls, injected = [], []

    def handler(event, context):
        calls.append(event)
        if len(calls) < on_call or len(injected) >= times:
            return real(event, context)
        injected.append(event)
        if after:
            real(event, context)
        raise injected_error(f"injected {'after' if after else 'before'} {function} ran")

    handlers[function] = handler
    try:
        yield injected
    finally:
        handlers[function] = real


def settle(local, execution_arn: str) -> str:
    """Wait for an execution to end; its status."""
    deadline = time.monotonic() + 30
    while (status := local.launcher.describe(execution_arn)["status"]) == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.05)
    return status


def experiment(local, experiment_id: int) -> dict:
    return local.store.conn.execute("SELECT * FROM experiments WHERE id = %s", (experiment_id,)).fetchone()


def invocations(local, function: str) -> int:
    return local.aws.invocations.get(function, 0)


ORACLE = baseline("oracle", "perfect-9", maxActionsPerTurn=3, maxTurnsPerExecution=2)  # 20 moves, 7 turns, 4 parts


def assert_oracle_run(local, data: dict) -> None:
    """The oracle's run came out as if nothing had happened: the shortest path, once."""
    assert data["status"] == "succeeded" and data["failure_reason"] is None
    assert data["moves"] == data["actions"] == 20 and data["turns"] == 7
    assert [a.rsplit(":", 1)[-1] for a in data["execution_arns"][1:]] == [
        f"exp-{data['experiment_id']}-part-{n}" for n in (2, 3, 4)
    ]
    assert_invariants(local.store, data["experiment_id"])


@pytest.mark.parametrize(
    "function, on_call",
    [(START, 1), (START, 2), (AGENT, 2), (CHECK, 2), ("oriole-ContinueAsNew", 2), ("oriole-FinalizeSuccess", 1)],
)
def test_a_lambda_error_after_the_task_did_its_work_is_retried_and_changes_nothing(local, function, on_call):
    """Lambda.Unknown: the function did its work (committed), then timed out or ran out of memory before
    answering. The retried task finds its work done: no second experiment, attachment, turn, successor
    or close."""
    before = invocations(local, function)
    with failing(local, function, "Lambda.Unknown", after=True, on_call=on_call) as injected:
        result = local.run(ORACLE)
        for arn in result.summary.execution_arns:  # a part may still be retrying after its successor finished
            assert settle(local, arn) == "SUCCEEDED"
    assert len(injected) == 1
    assert_oracle_run(local, result.as_json())
    runs = {START: 4, AGENT: 7, CHECK: 7, "oriole-ContinueAsNew": 3, "oriole-FinalizeSuccess": 1}[function]
    assert invocations(local, function) - before == runs + 1


@pytest.mark.parametrize("function", [START, AGENT, CHECK, "oriole-FinalizeSuccess"])
def test_a_lambda_error_before_the_task_ran_is_retried_and_the_retry_runs_it_cleanly(local, function):
    """Lambda.ServiceException: Lambda could not run the function; nothing was written."""
    on_call = 1 if function == "oriole-FinalizeSuccess" else 2
    with failing(local, function, "Lambda.ServiceException", after=False, on_call=on_call) as injected:
        result = local.run(ORACLE)
    assert len(injected) == 1
    assert_oracle_run(local, result.as_json())


@pytest.mark.parametrize(
    "function, error_name",
    [(START, "ParameterStoreThrottled"), (AGENT, "DatabaseBusy"), ("oriole-ContinueAsNew", "StartExecutionThrottled")],
)
def test_a_throttle_or_a_full_database_is_retried_by_the_state_machine(local, function, error_name):
    """Parameter Store or Step Functions still throttling after botocore's retries, or a database with no
    free connection slot: a named error, retried by the state machine; the run comes out whole."""
    with failing(local, function, error_name, after=False, on_call=2, times=2) as injected:
        result = local.run(ORACLE)
    assert len(injected) == 2
    assert_oracle_run(local, result.as_json())


def test_the_most_turns_per_execution_keep_the_worst_case_history_under_25000_events(local):
    """Measured here: 16 events per turn and 3 per failed attempt (a clean run against the same run with one
    retried CheckProgress). From the ASL: every retrier of the agent task and of CheckProgress spent in every
    turn, and of the start and of every closing task once. The catalog's maxTurnsPerExecution maximum keeps
    that worst case under Step Functions' 25,000 events per execution."""
    states = flows.definition()["States"]

    def attempts(*names: str) -> int:
        return sum(r["MaxAttempts"] for name in names for r in states[name].get("Retry", []))

    run = baseline("random", "sparse-60", maxMoves=40, seed=3)
    clean = local.run(run)
    with failing(local, CHECK, "Lambda.ServiceException", after=False, on_call=2):
        retried = local.run(run)
    events = [len(local.aws.history(r.execution_arn)) for r in (clean, retried)]
    per_attempt, turns = events[1] - events[0], clean.as_json()["turns"]
    assert per_attempt == 3 and retried.as_json()["turns"] == turns
    per_turn = 16 + per_attempt * (
        max(attempts(s) for s in ("InvokeBedrockAgent", "InvokeOllamaAgent", "InvokeBaselineAgent"))
        + attempts("CheckProgress")
    )
    closing = ("ContinueAsNew", "FinalizeSuccess", "FinalizeTimeout", "FinalizeFailure")
    once = (events[0] - 16 * turns) + per_attempt * attempts("StartExperiment", *closing) + 5 * len(closing)
    assert per_turn == 136
    most = catalog.BY_KEY["maxTurnsPerExecution"].maximum
    assert most * per_turn + once < 25_000 and most == catalog.MAX_TURNS_PER_EXECUTION
    assert catalog.BY_KEY["maxTurnsPerExecution"].default <= most


def test_a_database_that_stays_away_fails_the_experiment_after_the_retries(local):
    """OperationalError is what a task raises when its one reconnect failed too; after the state machine's
    retries (the first attempt and every retry of the database's retrier) the experiment fails and says so."""
    [retrier] = [
        r
        for r in flows.definition()["States"]["InvokeBaselineAgent"]["Retry"]
        if "OperationalError" in r["ErrorEquals"]
    ]
    times = 1 + retrier["MaxAttempts"]
    with failing(local, AGENT, "OperationalError", after=False, on_call=2, times=times) as injected:
        result = local.run(baseline("oracle", "perfect-9", maxActionsPerTurn=3))
    data = result.as_json()
    assert len(injected) == times and result.execution["status"] == "FAILED"
    assert data["status"] == "failed" and data["failure_reason"].startswith("OperationalError: injected before")
    assert data["turns"] == 1 and data["actions"] == 3
    assert_invariants(local.store, data["experiment_id"])


def test_a_failure_path_that_fails_too_is_closed_by_the_status_change_finalizer(local):
    """The agent hits a bug and FinalizeFailure cannot close the row either: the execution ends FAILED with
    the experiment open, and its status change closes it."""
    with (
        failing(local, AGENT, "RuntimeError", after=False, on_call=2),
        failing(local, "oriole-FinalizeFailure", "RuntimeError", after=False) as finalizer_failed,
    ):
        result = local.run(baseline("oracle", "perfect-9", maxActionsPerTurn=3))
    data = result.as_json()
    assert len(finalizer_failed) == 1 and result.execution["status"] == "FAILED"
    assert data["status"] == "failed"
    assert data["failure_reason"] == (
        f"execution FAILED: {result.execution_arn.rsplit(':', 1)[-1]} failed "
        "(RuntimeError: injected before oriole-InvokeBaselineAgent ran)"
    )
    assert_invariants(local.store, data["experiment_id"])


def test_a_successor_that_never_started_fails_the_experiment(local):
    """ContinueAsNew answered with a successor that was never started (as when its name is taken by an
    ended execution): the execution hands over and succeeds, the status change closes the experiment."""
    real = local.aws._handlers["oriole-ContinueAsNew"]

    def hand_over_to_nobody(event, context):
        name = f"exp-{event['experimentId']}-part-{event['part'] + 1}"
        arn = event["stateMachineArn"].replace(":stateMachine:", ":execution:") + ":" + name
        return {"successorExecutionArn": arn, "part": event["part"] + 1}

    local.aws._handlers["oriole-ContinueAsNew"] = hand_over_to_nobody
    try:
        result = local.run(ORACLE)
    finally:
        local.aws._handlers["oriole-ContinueAsNew"] = real
    data = result.as_json()
    assert result.execution["status"] == "SUCCEEDED" and data["status"] == "failed"
    assert data["failure_reason"] == (
        f"continuation did not start: execution {result.execution_arn.rsplit(':')[-1]}"
        f" handed over to exp-{data['experiment_id']}-part-2, which does not exist"
    )
    assert data["turns"] == 2
    assert_invariants(local.store, data["experiment_id"])


# -- model faults, through the scripted Ollama server ------------------------------------------------------------

MAZE = "perfect-7"


def moves(name: str = MAZE) -> list[str]:
    path = mazeset.get_maze(name).maze.shortest_path()
    names = {(0, -1): "move_north", (0, 1): "move_south", (1, 0): "move_east", (-1, 0): "move_west"}
    return [names[(b[0] - a[0], b[1] - a[1])] for a, b in pairwise(path)]


def ollama(server: ScriptedOllama, **config) -> dict:
    return {
        "mazeId": MAZE,
        "llmProvider": "ollama",
        "modelName": "scripted",
        "config": {"endpoint": server.url, **config},
    }


def walk(*names: str) -> dict:
    return tool_calls(*[(n, {}) for n in names])


def test_a_model_answering_500_is_retried_until_it_recovers(local):
    """Three 500s: the task's own retries, then ModelUnavailable and the state machine's retry."""
    path = moves()
    script = [walk(*path[:4]), text_reply("next turn"), *[error(500, "model runner crashed")] * 3, walk(*path[4:])]
    with ScriptedOllama(*script) as server:
        data = local.run(ollama(server)).as_json()
    assert server.remaining == 0 and len(server.requests) == 6
    assert data["status"] == "succeeded" and data["actions"] == 8 and data["turns"] == 2
    calls = local.store.conn.execute(
        "SELECT turn_number FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index",
        (data["experiment_id"],),
    ).fetchall()
    assert [c["turn_number"] for c in calls] == [1, 1, 2]  # of turn 2, only the attempt that answered
    assert_invariants(local.store, data["experiment_id"])


def test_a_model_that_keeps_timing_out_fails_the_experiment_naming_the_timeout(local):
    with ScriptedOllama(*[slow(1.5, walk("move_east"))] * 3) as server:
        result = local.run(ollama(server, requestTimeoutSeconds=1))
    data = result.as_json()
    assert len(server.requests) == 3  # one attempt per task: the state machine retried twice
    assert result.execution["status"] == "FAILED" and data["status"] == "failed"
    assert data["failure_reason"].startswith("ModelTimeout: Ollama model 'scripted'")
    assert "did not answer within 1 s" in data["failure_reason"] and data["turns"] == 0
    assert_invariants(local.store, data["experiment_id"])


def test_a_malformed_model_response_fails_the_experiment_with_an_excerpt(local):
    path = moves()
    with ScriptedOllama(walk(*path[:3]), text_reply("next turn"), (200, b"not json at all")) as server:
        result = local.run(ollama(server))
    data = result.as_json()
    assert result.execution["status"] == "FAILED" and data["status"] == "failed"
    assert data["failure_reason"].startswith("InvalidModelResponse: Ollama answered with a body that is not JSON")
    assert "'not json at all'" in data["failure_reason"]
    assert data["turns"] == 1 and data["actions"] == 3  # the turn before the fault is kept, once
    assert_invariants(local.store, data["experiment_id"])


def test_invalid_tool_arguments_three_times_open_the_breaker_and_the_errors_go_back_to_the_model(local):
    garbage = tool_calls(("move_east", {"experiment_id": 7}), ("move_east", "{not json"), ("move_east", ["x"]))
    with ScriptedOllama(garbage, walk(*moves())) as server:
        data = local.run(ollama(server)).as_json()
    assert data["status"] == "succeeded" and data["actions"] == 11 and data["turns"] == 2
    actions = local.store.conn.execute(
        "SELECT action_type, error FROM actions WHERE experiment_id = %s AND step_number <= 3 ORDER BY step_number",
        (data["experiment_id"],),
    ).fetchall()
    assert [a["action_type"] for a in actions] == ["invalid"] * 3
    assert "unexpected argument(s) experiment_id" in actions[0]["error"]
    assert "not valid JSON" in actions[1]["error"] and "must be an object" in actions[2]["error"]
    turns = local.store.conn.execute(
        "SELECT end_reason FROM turns WHERE experiment_id = %s ORDER BY turn_number", (data["experiment_id"],)
    ).fetchall()
    assert turns[0]["end_reason"] == "circuit_breaker"
    context = json.loads(server.requests[1].body["messages"][1]["content"])
    assert [entry["error"] for entry in context["recent_actions"]] == [a["error"] for a in actions]
    assert experiment(local, data["experiment_id"])["invalid_call_count"] == 3
    assert_invariants(local.store, data["experiment_id"])


def test_a_model_that_stops_acting_ends_the_experiment_as_agent_stalled(local):
    """Turns with no tool call, or only invalid calls, count; a valid action resets the count."""
    invalid = tool_calls(*[("teleport", {})] * 3)
    script = [
        text_reply("thinking"),
        text_reply("still thinking"),
        walk(moves()[0]),
        text_reply("moved"),
        text_reply("hmm"),
        invalid,
        text_reply("I give up"),
    ]
    with ScriptedOllama(*script) as server:
        result = local.run(ollama(server))
    data = result.as_json()
    assert server.remaining == 0 and data["turns"] == 6 and data["actions"] == 4
    assert data["status"] == "failed"
    assert data["failure_reason"] == (
        "agent_stalled: 3 turns in a row without a valid action (no tool call, "
        "or only invalid calls); maxStalledTurns is 3"
    )
    assert (result.execution["status"], result.execution["error"]) == ("FAILED", "AgentStalled")
    assert state_names(local, result.execution_arn)[-3:] == ["AgentStalled", "FinalizeFailure", "ExperimentFailed"]
    assert_invariants(local.store, data["experiment_id"])


def test_a_throttled_model_is_retried_with_backoff_and_the_throttle_counted(local):
    path = moves()
    with ScriptedOllama(walk(*path[:4]), text_reply("next turn"), error(429, "rate limit"), walk(*path[4:])) as server:
        data = local.run(ollama(server)).as_json()
    assert data["status"] == "succeeded" and data["turns"] == 2 and len(server.requests) == 4
    assert experiment(local, data["experiment_id"])["throttle_count"] == 1
    assert_invariants(local.store, data["experiment_id"])


# -- database faults -----------------------------------------------------------------------------------------------


def terminate(local, conn: psycopg.Connection) -> None:
    local.store.conn.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))


def test_a_connection_dropped_between_turns_is_reconnected_within_the_task(local):
    real = local.aws._handlers[CHECK]
    dropped = []

    def check_then_drop(event, context):
        result = real(event, context)
        if event["turnInExecution"] == 2:
            dropped.append(db.connection())
            terminate(local, dropped[-1])
        return result

    before = invocations(local, AGENT)
    local.aws._handlers[CHECK] = check_then_drop
    try:
        data = local.run(baseline("oracle", "perfect-9", maxActionsPerTurn=3)).as_json()
    finally:
        local.aws._handlers[CHECK] = real
    assert data["status"] == "succeeded" and data["turns"] == 7
    assert len(dropped) == 1 and dropped[0].closed and db.connection() is not dropped[0]
    assert invocations(local, AGENT) - before == 7  # no task failed: the store reconnected in place
    assert_invariants(local.store, data["experiment_id"])


def test_a_connection_lost_during_the_turn_commit_is_retried_and_writes_the_turn_once(local):
    real = local.aws._handlers[AGENT]
    lost = []

    def lose_the_commit_answer(event, context):
        if event["turnNumber"] == 3:
            conn = db.connection()
            open_cursor = conn.cursor

            def cursor(*args, **kwargs):  # the store sends each statement on a cursor of its row type
                opened = open_cursor(*args, **kwargs)
                send = opened.execute

                def execute(query, params=None, **kw):
                    send(query, params, **kw)
                    if "WITH advanced AS" in str(query):
                        lost.append(
                            local.store.conn.execute(
                                "SELECT turn_count FROM experiments WHERE id = %s", (event["experimentId"],)
                            ).fetchone()["turn_count"]
                        )
                        terminate(local, conn)
                        open_cursor().execute("SELECT 1")  # the answer never arrives
                    return opened

                opened.execute = execute
                return opened

            conn.cursor = cursor
        return real(event, context)

    before = invocations(local, AGENT)
    local.aws._handlers[AGENT] = lose_the_commit_answer
    try:
        data = local.run(baseline("oracle", "perfect-9", maxActionsPerTurn=3)).as_json()
    finally:
        local.aws._handlers[AGENT] = real
    assert lost == [3]  # the commit had reached the database when the connection died
    assert data["status"] == "succeeded" and data["turns"] == 7 and data["moves"] == 20
    assert invocations(local, AGENT) - before == 7
    assert_invariants(local.store, data["experiment_id"])


# -- executions that end from outside ------------------------------------------------------------------------------


def test_an_execution_stopped_mid_run_closes_its_experiment_as_aborted(local):
    """StopExecution (the console's Stop button) while turn 5's Lambda runs: that turn still commits, as a
    Lambda that was already running would, and nothing runs after it. (moto's interpreter mishandles a stop
    that lands exactly as a task starts, so the stop is sent from inside the Lambda call.)"""
    real = local.aws._handlers[AGENT]

    def stopped_during_turn_five(event, context):
        result = real(event, context)
        if event["turnNumber"] == 5:
            execution = local.store.conn.execute(
                "SELECT execution_arns[1] AS arn FROM experiments WHERE id = %s", (event["experimentId"],)
            ).fetchone()["arn"]
            local.aws.sfn.stop_execution(executionArn=execution, cause="stopped from the console")
        return result

    local.aws._handlers[AGENT] = stopped_during_turn_five
    try:
        result = local.run(baseline("random", "medium-60", maxActionsPerTurn=1, seed=5))
    finally:
        local.aws._handlers[AGENT] = real
    data = result.as_json()
    assert result.execution["status"] == "ABORTED"
    assert data["status"] == "aborted"
    assert data["failure_reason"] == f"execution ABORTED: {result.execution_arn.rsplit(':', 1)[-1]} was stopped"
    assert data["turns"] == 5 and data["actions"] == 5
    assert_invariants(local.store, data["experiment_id"])


def test_an_execution_that_times_out_closes_its_experiment_as_timed_out(local):
    """The deploy-time execution timeout (max-execution-seconds, the state machine's TimeoutSeconds), set
    to 1 s here; the third turn's Lambda takes 2 s. Its late commit is refused: the row is closed."""
    real = local.aws._handlers[AGENT]
    late_turn_done = threading.Event()

    def slow_third_turn(event, context):
        if event["turnNumber"] != 3:
            return real(event, context)
        time.sleep(2)
        try:
            return real(event, context)
        finally:
            late_turn_done.set()

    sfn, machine = local.aws.sfn, local.aws.state_machine_arn
    sfn.update_state_machine(stateMachineArn=machine, definition=local.aws.definition(execution_timeout_seconds=1))
    local.aws._handlers[AGENT] = slow_third_turn
    try:
        result = local.run(baseline("random", "medium-60", maxActionsPerTurn=1, seed=5))
        assert late_turn_done.wait(10)
    finally:
        local.aws._handlers[AGENT] = real
        sfn.update_state_machine(
            stateMachineArn=machine, definition=local.aws.definition(local.aws.execution_timeout_seconds)
        )
    data = result.as_json()
    assert result.execution["status"] == "TIMED_OUT" and data["status"] == "timed_out"
    assert (
        data["failure_reason"] == f"execution TIMED_OUT: {result.execution_arn.rsplit(':', 1)[-1]} reached its "
        "execution timeout"
    )
    assert experiment(local, data["experiment_id"])["turn_count"] == 2
    assert_invariants(local.store, data["experiment_id"])


# -- bad input -------------------------------------------------------------------------------------------------------


def count_experiments(local) -> int:
    return local.store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


@pytest.mark.parametrize(
    "execution_input, error_name, message",
    [
        ([], "InvalidExecutionInput", "execution input must be a JSON object, got list"),
        ("perfect-7", "InvalidExecutionInput", "execution input must be a JSON object, got str"),
        (None, "InvalidExecutionInput", "execution input must be a JSON object, got NoneType"),
        ({}, "InvalidExecutionInput", "mazeId: Field required"),
        ({"mazeId": True, "llmProvider": "baseline", "modelName": "random"}, "InvalidExecutionInput", "mazeId"),
        (
            {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": ""},
            "InvalidExecutionInput",
            "modelName: String should have at least 1 character",
        ),
        ({**baseline("random", "perfect-7"), "promptVersion": "../v1"}, "InvalidExecutionInput", "promptVersion"),
        ({**baseline("random", "perfect-7"), "config": "fast"}, "InvalidExecutionInput", "config: Input should be"),
        (baseline("random", "perfect-7", maxMoves=0), "InvalidConfig", "config.maxMoves must be at least 1"),
        ({"experimentId": "5"}, "InvalidExecutionInput", "experimentId: Input should be a valid integer"),
    ],
)
def test_a_malformed_execution_input_fails_at_once_with_a_named_error_and_no_row(
    local, execution_input, error_name, message
):
    before = count_experiments(local)
    result = local.run(execution_input)
    assert result.summary is None and result.execution["status"] == "FAILED"
    assert result.execution["error"] == error_name
    assert message in json.loads(result.execution["cause"])["errorMessage"]
    assert count_experiments(local) == before
    assert state_names(local, result.execution_arn) == [
        "ReceiveInput",
        "StartExperiment",
        "FinalizeFailure",
        "ExperimentFailed",
    ]


def test_a_prompt_version_missing_from_parameter_store_fails_at_start_with_no_row(local):
    ssm = boto3.client("ssm", region_name="us-east-1")
    name = catalog.prompt_name("v1")
    text = ssm.get_parameter(Name=name)["Parameter"]["Value"]
    ssm.delete_parameter(Name=name)
    before = count_experiments(local)
    try:
        result = local.run(baseline("random", "perfect-7"))
    finally:
        ssm.put_parameter(Name=name, Value=text, Type="String", Tier="Advanced")
    assert result.execution["error"] == "UnknownPromptVersion"
    assert "no prompt at /oriole/prompts/v1" in json.loads(result.execution["cause"])["errorMessage"]
    assert count_experiments(local) == before


# -- concurrency -----------------------------------------------------------------------------------------------------


def test_eight_concurrent_experiments_never_mix_their_actions_or_positions(local):
    inputs = [
        baseline("random", "sparse-60", maxMoves=150, maxActionsPerTurn=2, seed=11, maxTurnsPerExecution=20),
        baseline("random", "sparse-60", maxMoves=150, maxActionsPerTurn=2, seed=11, maxTurnsPerExecution=20),
        baseline("random", "sparse-60", maxMoves=150, maxActionsPerTurn=3, seed=12),
        baseline("oracle", "sparse-60", maxActionsPerTurn=4, maxTurnsPerExecution=10),
        baseline("explorer", "perfect-15", maxTurnsPerExecution=3),
        baseline("wall-follower", "perfect-15", maxActionsPerTurn=5),
        baseline("random", "medium-60", maxMoves=120, maxActionsPerTurn=1, seed=3),
        baseline("oracle", "perfect-11", maxActionsPerTurn=1),
    ]
    arns = [local.start(i) for i in inputs]  # all running at once in moto's execution threads
    results = [local.follow(arn) for arn in arns]
    data = [r.as_json() for r in results]
    firsts = [local.launcher.describe(r.summary.execution_arns[0]) for r in results]
    lasts = [local.launcher.describe(r.summary.execution_arns[-1]) for r in results]
    assert max(f["startDate"] for f in firsts) < min(last["stopDate"] for last in lasts)  # they overlapped
    assert len({d["experiment_id"] for d in data}) == 8
    for d in data:
        assert_invariants(local.store, d["experiment_id"])
    assert [d["status"] for d in data] == ["timed_out"] * 3 + ["succeeded"] * 3 + ["timed_out", "succeeded"]
    assert data[3]["moves"] == data[3]["shortest_path_length"] and data[7]["moves"] == 24
    paths = [
        local.store.conn.execute(
            "SELECT action_type, to_x, to_y, success FROM actions WHERE experiment_id = %s ORDER BY step_number",
            (d["experiment_id"],),
        ).fetchall()
        for d in data[:3]
    ]
    assert paths[0] == paths[1] and len(paths[0]) == 150  # same maze, same seed: the same run, undisturbed
    assert paths[2] != paths[0]
