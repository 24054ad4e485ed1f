"""Hostile input through the real local state machine, PostgreSQL and the scripted model servers (issues 14 and 26):
refused inputs leave no row and no file content anywhere, provider answers are bounded and checked, hostile
model text is stored recoverably without costing a step, and the local run lock holds through a dropped
connection and from the row's first moment. docs/explanation/failures.md's table lists these classes."""

from __future__ import annotations

import inspect
import itertools
import json
import time

import boto3
import psycopg
import pytest

from oriole import catalog
from oriole.core.text_tool_calls import block
from oriole.lifecycle.task_io import StartRequest
from oriole.store import db
from oriole.text import MAX_MESSAGE_CHARS, unescape
from tests.integration.conftest import baseline
from tests.integration.test_fault_table import MAZE, moves
from tests.integration.test_local_state_machine import assert_invariants, state_names
from tests.ollama_server import ScriptedOllama, error, text_reply, tool_calls
from tests.openai_server import ScriptedOpenAI
from tests.openai_server import text_reply as openai_text
from tests.openai_server import tool_calls as openai_calls
from tests.scripted_server import trickle

SECRET = "TOP-SECRET-FILE-CONTENT"


def ollama(endpoint: str, **config) -> dict:
    return {
        "mazeId": MAZE,
        "llmProvider": "ollama",
        "modelName": "scripted",
        "config": {"endpoint": endpoint, **config},
    }


def count_experiments(local) -> int:
    return local.store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


def everything_stored(local) -> str:
    """Every experiment, turn, call and action as text: what a leak would have to appear in."""
    tables = ("experiments", "turns", "model_calls", "actions")
    return "".join(json.dumps(local.store.conn.execute(f"SELECT * FROM {t}").fetchall(), default=str) for t in tables)


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "secret.json"
    path.write_text(json.dumps({"message": {"content": SECRET}, "error": SECRET}))
    return path


# -- class 1: the endpoint, the body, the error text -----------------------------------------------------------


@pytest.mark.parametrize(
    "scheme",
    ["file://{path}", "FILE://{path}", "ftp://localhost{path}", "data:,{path}", "localhost:11434", "http:///{path}"],
)
def test_an_endpoint_that_is_not_an_http_url_is_refused_before_any_row(local, secret_file, scheme):
    before = count_experiments(local)
    result = local.run(ollama(scheme.format(path=secret_file)))
    assert result.summary is None and result.execution["error"] == "InvalidConfig"
    assert "config.endpoint must be an http or https URL" in result.as_json()["failure_reason"]
    assert count_experiments(local) == before
    assert SECRET not in json.dumps(result.execution, default=str) and SECRET not in everything_stored(local)


def test_a_stored_endpoint_that_is_not_an_http_url_fails_each_start_cleanly(local, secret_file):
    ssm = boto3.client("ssm", region_name="us-east-1")
    name = catalog.BY_KEY["endpoint"].name
    ssm.put_parameter(Name=name, Value=f"file://{secret_file}", Type="String", Overwrite=True)
    before = count_experiments(local)
    try:
        result = local.run({"mazeId": MAZE, "llmProvider": "ollama", "modelName": "scripted"})
    finally:
        ssm.put_parameter(Name=name, Value=catalog.BY_KEY["endpoint"].default, Type="String", Overwrite=True)
    assert result.execution["error"] == "InvalidParameter" and count_experiments(local) == before
    assert SECRET not in json.dumps(result.execution, default=str)


def test_a_huge_provider_error_reaches_the_failure_path_with_a_short_reason(local):
    with ScriptedOllama(error(400, "model not found " + "\x1b[2J" * 250_000)) as server:
        result = local.run(ollama(server.url))
    data = result.as_json()
    assert data["status"] == "failed" and data["failure_reason"].startswith("ModelRequestRejected: Ollama at")
    assert len(data["failure_reason"]) <= MAX_MESSAGE_CHARS
    assert len(result.execution["cause"]) < 20_000  # the Lambda error payload in the state: far under 256 KB
    assert state_names(local, result.execution_arn)[-2:] == ["FinalizeFailure", "ExperimentFailed"]
    assert_invariants(local.store, data["experiment_id"])


def test_a_body_over_the_bound_fails_the_turn_without_losing_the_turns_before(local):
    path = moves()
    huge = (200, json.dumps({"message": {"content": "x" * (5 * 1024 * 1024)}}).encode())
    with ScriptedOllama(tool_calls(*[(m, {}) for m in path[:3]]), text_reply("next"), huge) as server:
        result = local.run(ollama(server.url))
    data = result.as_json()
    assert data["status"] == "failed" and data["turns"] == 1 and data["actions"] == 3
    assert data["failure_reason"].startswith("InvalidModelResponse: Ollama model 'scripted'")
    assert "more than 4,194,304 bytes" in data["failure_reason"]
    assert_invariants(local.store, data["experiment_id"])


# -- issue 26, class 1: a model server cannot hold a turn -------------------------------------------------------


def trickled_headers():
    """A server that sends its status line, then one header byte every 0.2 s, forever."""
    return trickle(0.2, itertools.chain([b"HTTP/1.1 200 OK\r\nX-Slow: "], itertools.repeat(b"a")))


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_a_server_that_trickles_ends_the_turn_at_the_timeout_and_the_experiment_cleanly(local, provider):
    path = moves()
    if provider == "ollama":
        server = ScriptedOllama(
            tool_calls(*[(m, {}) for m in path[:3]]), text_reply("next"), *[trickled_headers() for _ in range(3)]
        )
    else:
        server = ScriptedOpenAI(
            openai_calls(*[(m, {}) for m in path[:3]]), openai_text("next"), *[trickled_headers() for _ in range(3)]
        )
    with server:
        config = (
            {"endpoint": server.url}
            if provider == "ollama"
            else {"baseUrl": server.base_url, "parallelToolCalls": True}
        )
        started = time.monotonic()
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": provider,
                "modelName": "scripted",
                "config": {**config, "requestTimeoutSeconds": 1},
            }
        )
        elapsed = time.monotonic() - started
        requests = len(server.requests)
    data = result.as_json()
    assert data["status"] == "failed" and data["failure_reason"].startswith("ModelTimeout: ")
    assert "did not answer within 1 s" in data["failure_reason"]
    assert (data["turns"], data["actions"]) == (1, 3)  # the turn before is kept, the held one never written
    assert requests == 5  # the held request, and the state machine's two retries of the turn
    # three held requests of 1 s each, the retries' waits (at most 1 + 2 s), and the local run itself
    assert elapsed < 3 * (1 + 0.5) + 3 + 6
    assert state_names(local, result.execution_arn)[-2:] == ["FinalizeFailure", "ExperimentFailed"]
    assert_invariants(local.store, data["experiment_id"])


# -- issue 26, class 3: a model's answer cannot end an experiment ------------------------------------------------

# past the arguments' 16 levels, within the answer's 100 (deeper, the whole answer is refused at one fixed depth)
DEEP = json.loads('{"a":' * 90 + "1" + "}" * 90)
HUGE = "1" + "0" * 100_000


def test_hostile_arguments_are_invalid_calls_and_the_experiment_goes_on_to_its_goal(local):
    path = moves()
    hostile = (
        200,
        (
            '{"message": {"role": "assistant", "content": "", "tool_calls": ['
            '{"function": {"name": "move_east", "arguments": ' + json.dumps(DEEP) + "}}, "
            '{"function": {"name": "move_east", "arguments": {"reasoning": ' + HUGE + "}}}]}, "
            '"eval_count": 1, "prompt_eval_count": 1, "total_duration": ' + HUGE + "}"
        ).encode(),
    )
    with ScriptedOllama(hostile, text_reply("[" * 1_000_000), tool_calls(*[(m, {}) for m in path])) as server:
        data = local.run(ollama(server.url)).as_json()
    assert data["status"] == "succeeded" and data["actions"] == len(path) + 2
    errors = local.store.conn.execute(
        "SELECT error FROM actions WHERE experiment_id = %s AND action_type = 'invalid' ORDER BY step_number",
        (data["experiment_id"],),
    ).fetchall()
    assert "nest deeper than 16 levels" in errors[0]["error"] and errors[1]["error"] == "'reasoning' must be a string"
    assert_invariants(local.store, data["experiment_id"])


def test_a_bracket_flood_with_text_tool_calls_is_read_within_its_bounds_and_the_experiment_goes_on(local):
    path = moves()
    flood = "<tool_call>" + "[" * 2_000_000 + '{"name": "move_east", "arguments": ' + '{"a":' * 5000 + "1" + "}" * 5001
    calls = "\n".join(block(m) for m in path)
    with ScriptedOllama(text_reply(flood), text_reply(calls)) as server:
        data = local.run(ollama(server.url, textToolCalls=True, maxActionsPerTurn=len(path) + 1)).as_json()
    assert data["status"] == "succeeded" and data["moves"] == len(path) and data["actions"] == len(path) + 1
    assert_invariants(local.store, data["experiment_id"])


def column_types(store) -> dict[tuple[str, str], tuple[str, int | None, int | None]]:
    rows = store.conn.execute(
        "SELECT table_name, column_name, data_type, numeric_precision, numeric_scale "
        "FROM information_schema.columns WHERE table_schema = 'public'"
    ).fetchall()
    return {
        (r["table_name"], r["column_name"]): (r["data_type"], r["numeric_precision"], r["numeric_scale"]) for r in rows
    }


def largest(kind: tuple[str, int | None, int | None]) -> float:
    data_type, precision, scale = kind
    return {"integer": 2**31 - 1, "bigint": 2**63 - 1}.get(data_type) or 10 ** (precision - scale) - 10**-scale


def test_the_worst_case_of_tokens_calls_and_prices_fits_every_column(store):
    """The bounds the code accepts, taken together, and the largest total each column may then have to hold."""
    from oriole.providers.transport import JsonPoster
    from oriole.providers.wire import MAX_LATENCY_MS, MAX_TOKENS_PER_CALL

    maximum = {p.key: p.maximum for p in catalog.CATALOG if p.maximum is not None}
    calls_per_turn = maximum["maxActionsPerTurn"] + 2  # a call per action, the answer without a call, a compaction
    turns = maximum["maxMoves"] + (maximum["maxMoves"] + 1) * maximum["maxStalledTurns"]  # see progress.decide
    attempts = inspect.signature(JsonPoster).parameters["max_attempts"].default
    task_tries = 1 + 6  # the flow's ModelThrottled retrier (flows/experiment.asl.json)
    call_cost = 2 * MAX_TOKENS_PER_CALL * catalog.MAX_PRICE_PER_MTOK / 1_000_000
    worst = {
        ("model_calls", "input_tokens"): MAX_TOKENS_PER_CALL,
        ("model_calls", "latency_ms"): MAX_LATENCY_MS,
        ("model_calls", "throttles"): attempts,
        ("turns", "input_tokens"): calls_per_turn * MAX_TOKENS_PER_CALL,
        ("turns", "model_calls"): calls_per_turn,
        ("turns", "cost_usd"): calls_per_turn * call_cost,
        ("turns", "latency_ms"): calls_per_turn * MAX_LATENCY_MS,
        ("turns", "throttles"): calls_per_turn * attempts,
        ("turns", "action_count"): maximum["maxActionsPerTurn"],
        ("turns", "turn_number"): turns,
        ("experiments", "input_tokens"): turns * calls_per_turn * MAX_TOKENS_PER_CALL,
        ("experiments", "cost_usd"): turns * calls_per_turn * call_cost,
        ("experiments", "model_calls"): turns * calls_per_turn,
        ("experiments", "latency_ms"): turns * calls_per_turn * MAX_LATENCY_MS,
        ("experiments", "throttle_count"): turns * (calls_per_turn + task_tries) * attempts,
        ("experiments", "turn_count"): turns,
        ("experiments", "action_count"): maximum["maxMoves"],
        ("experiments", "stalled_turns"): maximum["maxStalledTurns"],
    }
    types = column_types(store)
    too_large = {column: (bound, types[column]) for column, bound in worst.items() if bound > largest(types[column])}
    assert too_large == {}
    assert worst["experiments", "cost_usd"] > 10**8  # the reason migration 0014 widened it from numeric(14, 6)


# -- class 2: settings at their bounds --------------------------------------------------------------------------


def numbers_at(end: str) -> dict:
    return {
        p.key: getattr(p, end)
        for p in catalog.CATALOG
        if p.overridable
        and "baseline" in p.providers  # the oracle plays: a model's key is refused (it would not apply)
        and p.type in (int, float)
        and p.key not in ("numCtx", "temperature", "repeatPenalty", "requestTimeoutSeconds")
    }


def test_every_setting_at_its_maximum_fits_the_columns_and_the_code(local):
    data = local.run(baseline("oracle", MAZE, **numbers_at("maximum"))).as_json()
    assert data["status"] == "succeeded" and data["moves"] == data["shortest_path_length"] == data["actions"]
    assert_invariants(local.store, data["experiment_id"])


def test_every_setting_at_its_minimum_fits_the_columns_and_the_code(local):
    data = local.run(baseline("oracle", MAZE, **numbers_at("minimum"))).as_json()
    assert data["status"] == "timed_out" and data["actions"] == 1 and data["turns"] == 1
    assert_invariants(local.store, data["experiment_id"])


# -- class 3: model text the database refuses as it comes ------------------------------------------------------

HOSTILE = "\x00 [bold red]markup[/] \x1b]0;pwned\x07\x1b[2J \ud800 \udfff \u202e \\u0000"


def test_hostile_model_text_still_lets_a_perfect_model_walk_the_shortest_path(local):
    path = moves()
    thinking = (HOSTILE * 40_000)[:1_500_000]  # 1.5 MB of reasoning, under the body bound
    script = [
        tool_calls(
            *[(m, {"reasoning": f"{HOSTILE} step {i}"}) for i, m in enumerate(path[:4])],
            content=HOSTILE,
            thinking=thinking,
            done_reason=HOSTILE,
        ),
        text_reply(HOSTILE * 10),
        tool_calls(*[(m, {"reasoning": HOSTILE}) for m in path[4:]], content="\x00"),
    ]
    with ScriptedOllama(*script) as server:
        data = local.run(ollama(server.url)).as_json()
    assert data["status"] == "succeeded" and data["moves"] == data["actions"] == data["shortest_path_length"]
    calls = local.store.conn.execute(
        "SELECT response, stop_reason FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index",
        (data["experiment_id"],),
    ).fetchall()
    assert [c["response"].get("escaped") for c in calls] == [True, True, True]
    first = calls[0]["response"]
    assert unescape(first["text"]) == HOSTILE and unescape(first["thinking"]) == thinking
    assert unescape(first["tool_calls"][2]["arguments"]["reasoning"]) == f"{HOSTILE} step 2"
    assert unescape(calls[0]["stop_reason"]) == HOSTILE[:200]
    reasoning = local.store.conn.execute(
        "SELECT reasoning FROM actions WHERE experiment_id = %s ORDER BY step_number LIMIT 1", (data["experiment_id"],)
    ).fetchone()["reasoning"]
    assert reasoning == f"{HOSTILE} step 0".replace("\x00", "\ufffd").replace("\ud800", "\ufffd").replace(
        "\udfff", "\ufffd"
    )
    assert_invariants(local.store, data["experiment_id"])


# -- class 4: numbers a provider should never send ------------------------------------------------------------


@pytest.mark.parametrize("counts", [{"prompt_eval_count": -500}, {"eval_count": 2.5}, {"eval_count": 10**15}])
def test_an_impossible_token_count_fails_the_turn_and_never_reaches_a_total(local, counts):
    path = moves()
    with ScriptedOllama(
        tool_calls(*[(m, {}) for m in path[:2]]), text_reply("next"), tool_calls((path[2], {}), **counts)
    ) as server:
        data = local.run(ollama(server.url)).as_json()
    assert data["status"] == "failed" and data["failure_reason"].startswith(
        "InvalidModelResponse: the provider reported"
    )
    assert data["turns"] == 1 and (data["input_tokens"], data["output_tokens"]) == (240, 30)  # turn 1's two calls
    assert_invariants(local.store, data["experiment_id"])


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE experiments SET input_tokens = -1 WHERE id = %(id)s",
        "UPDATE experiments SET cost_usd = -0.01 WHERE id = %(id)s",
        "UPDATE experiments SET action_count = -1 WHERE id = %(id)s",
        "UPDATE turns SET output_tokens = -5 WHERE experiment_id = %(id)s",
        "UPDATE turns SET cost_usd = -1 WHERE experiment_id = %(id)s",
        "UPDATE model_calls SET input_tokens = -5 WHERE experiment_id = %(id)s",
        "UPDATE model_calls SET latency_ms = -5 WHERE experiment_id = %(id)s",
    ],
)
def test_the_schema_refuses_a_negative_count_or_cost(local, statement):
    with ScriptedOllama(tool_calls(*[(m, {}) for m in moves()])) as server:
        data = local.run(ollama(server.url)).as_json()
    with pytest.raises(psycopg.errors.CheckViolation):
        local.store.conn.execute(statement, {"id": data["experiment_id"]})


# -- class 5: the local run lock ---------------------------------------------------------------------------------


@pytest.fixture
def zombies(cli):
    def fix() -> list[int]:
        result = cli("doctor", "--fix", "--json")
        assert result.exit_code == 0, result.output
        return [z["experiment_id"] for z in json.loads(result.stdout)["zombies"]]

    return fix


def test_doctor_fix_in_the_moment_after_the_row_is_created_leaves_the_run_alone(local, zombies):
    start = "oriole-StartExperiment"
    real = local.aws._handlers[start]
    seen = []

    def start_then_doctor(event, context):
        result = real(event, context)  # the row is committed; the Lambda has not answered yet
        seen.append((result["experimentId"], zombies()))
        return result

    local.aws._handlers[start] = start_then_doctor
    try:
        data = local.run(baseline("oracle", MAZE)).as_json()
    finally:
        local.aws._handlers[start] = real
    [(experiment_id, listed)] = seen
    assert experiment_id == data["experiment_id"] and experiment_id not in listed
    assert data["status"] == "succeeded"


def test_a_dropped_lock_connection_is_taken_again_and_doctor_leaves_the_run_alone(local, zombies):
    agent = "oriole-InvokeBaselineAgent"
    real = local.aws._handlers[agent]
    seen = []

    def drop_the_lock_then_doctor(event, context):
        if event["turnNumber"] == 2:
            lock_connection = local.aws._locks._results.conn
            local.store.conn.execute("SELECT pg_terminate_backend(%s)", (lock_connection.info.backend_pid,))
            seen.append((event["experimentId"], zombies(), lock_connection.closed))
        return real(event, context)

    local.aws._handlers[agent] = drop_the_lock_then_doctor
    try:
        data = local.run(baseline("oracle", MAZE, maxActionsPerTurn=2)).as_json()
    finally:
        local.aws._handlers[agent] = real
    [(experiment_id, listed, dropped)] = seen
    assert dropped and experiment_id not in listed
    assert data["status"] == "succeeded" and data["moves"] == data["shortest_path_length"]


def test_an_experiment_whose_runner_is_gone_is_still_found(local, zombies, database_url):
    """The other side of the lock: the grace period delays the verdict, it never hides an abandoned run."""
    from oriole.lifecycle import experiments
    from oriole.store import Store
    from oriole_workstation.runner import EXECUTION_PREFIX

    with db.connect(database_url) as conn:
        event = {"input": baseline("random", MAZE), "executionArn": EXECUTION_PREFIX + "hostile-abandoned"}
        abandoned = experiments.start(
            StartRequest.model_validate(event), Store(conn), lambda names: catalog.defaults()
        ).as_state()["experimentId"]
    assert abandoned in zombies()
