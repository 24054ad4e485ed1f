"""Whole experiments with real model protocols through the local state machine: Ollama and an
OpenAI-compatible server over real HTTP (scripted /api/chat and /v1/chat/completions servers on loopback, the
latter checking every request against the Chat Completions spec) and Bedrock through a real boto3 client
under botocore's Stubber, so every request is checked against the service model."""

from __future__ import annotations

from itertools import pairwise

import boto3
import pytest

from oriole import catalog
from oriole.core import mazeset
from oriole.handlers import agents
from oriole.provider_registry import PROVIDERS
from tests import ollama_server, openai_server
from tests.integration.test_local_state_machine import assert_invariants
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls

MAZE = "perfect-7"
OPENAI_MODEL = "Qwen/Qwen3-8B"


def shortest_moves(name: str) -> list[str]:
    """The tool names that walk the maze's shortest path."""
    path = mazeset.get_maze(name).maze.shortest_path()
    names = {(0, -1): "move_north", (0, 1): "move_south", (1, 0): "move_east", (-1, 0): "move_west"}
    return [names[(b[0] - a[0], b[1] - a[1])] for a, b in pairwise(path)]


@pytest.fixture(scope="module")
def local(bedrock_local):
    return bedrock_local


def run(local, execution_input: dict) -> dict:
    result = local.run(execution_input)
    return result.as_json() | {"execution": result.execution}


def rows(local, sql: str, experiment_id: int) -> list[dict]:
    return local.store.conn.execute(sql, (experiment_id,)).fetchall()


def test_an_ollama_experiment_reaches_the_goal_and_stores_what_the_server_sent(local):
    moves = shortest_moves(MAZE)  # 8 moves on perfect-7
    script = [
        tool_calls(
            (moves[0], {"reasoning": "start"}),
            (moves[1], {}),
            (moves[2], '{"reasoning": "as text"}'),
            prompt_eval_count=300,
            eval_count=30,
            thinking="corridor ahead",
        ),
        tool_calls((moves[3], {}), ("move_diagonal", {}), prompt_eval_count=350, eval_count=20),
        text_reply("Let me think about the next turn.", prompt_eval_count=400, eval_count=10),
        tool_calls(*[(m, {}) for m in moves[4:]], prompt_eval_count=500, eval_count=40),
    ]
    boto3.client("ssm", region_name="us-east-1").put_parameter(
        Name=catalog.pricing_name("qwen2.5:7b"),
        Value='{"inputPerMTok": 1.0, "outputPerMTok": 2.0}',
        Type="String",
        Overwrite=True,
    )
    with ScriptedOllama(*script, models=["qwen2.5:7b"]) as server:
        data = run(
            local,
            {
                "mazeId": MAZE,
                "llmProvider": "ollama",
                "modelName": "qwen2.5:7b",
                "config": {"endpoint": server.url, "temperature": 0.0},
            },
        )
    assert data["status"] == "succeeded" and data["goal_found"]
    assert data["actions"] == 9 and data["moves"] == 8 and data["turns"] == 2
    assert (data["input_tokens"], data["output_tokens"]) == (1550, 100)
    assert data["cost_usd"] == pytest.approx((1550 * 1.0 + 100 * 2.0) / 1e6)
    exp_id = data["experiment_id"]
    turns = rows(local, "SELECT * FROM turns WHERE experiment_id = %s ORDER BY turn_number", exp_id)
    assert [
        (t["action_count"], t["model_calls"], t["input_tokens"], t["output_tokens"], t["end_reason"]) for t in turns
    ] == [(5, 3, 1050, 60, "no_tool_call"), (4, 1, 500, 40, "goal_found")]
    actions = rows(local, "SELECT * FROM actions WHERE experiment_id = %s ORDER BY step_number", exp_id)
    assert [a["action_type"] for a in actions] == [*moves[:4], "invalid", *moves[4:]]
    assert actions[0]["reasoning"] == "start" and actions[2]["reasoning"] == "as text"
    assert "unknown tool 'move_diagonal'" in actions[4]["error"]
    calls = rows(local, "SELECT * FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index", exp_id)
    assert len(calls) == 4 and calls[0]["response"]["tool_calls"][0]["name"] == moves[0]
    assert calls[0]["durations"]["eval_duration"] == 1_100_000_000 and calls[0]["stop_reason"] == "stop"
    assert calls[0]["response"]["thinking"] == "corridor ahead"
    assert [m["role"] for m in calls[1]["request_messages"]] == ["tool", "tool", "tool"]
    first = server.requests[0].body
    assert first["model"] == "qwen2.5:7b" and first["stream"] is False
    assert first["options"]["temperature"] == 0.0 and first["options"]["num_ctx"] == 32768
    assert first["messages"][0] == {"role": "system", "content": catalog.shipped_prompt("v1")}
    assert "experiment" not in str(first["messages"][1:])  # the model never sees or chooses an experiment id
    # the build the server reported, asked once at the start (out of the chat script), in columns
    identity = rows(local, "SELECT * FROM experiments WHERE id = %s", exp_id)[0]
    assert (identity["model_build"], identity["reported_model"]) == (server.digest("qwen2.5:7b"), "qwen2.5:7b")
    assert (identity["server_software"], identity["server_version"]) == ("Ollama", ollama_server.VERSION)
    assert (identity["model_parameter_size"], identity["model_quantization"]) == ("8.2B", "Q4_K_M")
    assert identity["model_identity"]["unknown"] == {}
    assert [(r.method, r.path) for r in server.listings] == [
        ("GET", "/api/version"),
        ("GET", "/api/tags"),
        ("POST", "/api/show"),
    ]
    assert_invariants(local.store, exp_id)


def openai(server: openai_server.ScriptedOpenAI, **config) -> dict:
    return {
        "mazeId": MAZE,
        "llmProvider": "openai",
        "modelName": OPENAI_MODEL,
        "config": {"baseUrl": server.base_url, **config},
    }


@pytest.fixture
def openai_key(monkeypatch):
    """OPENAI_API_KEY set for the run (the handler caches the key per container: cleared on both sides)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test")
    agents.api_key.cache_clear()
    yield "sk-local-test"
    agents.api_key.cache_clear()


def test_an_openai_experiment_walks_the_shortest_path_and_stores_the_usage_the_server_reported(local, openai_key):
    moves = shortest_moves(MAZE)  # 8 moves on perfect-7
    usage = [(300 + 40 * i, 12 + i) for i in range(9)]
    replies = [
        openai_server.tool_calls((m, {"reasoning": "open"}), prompt_tokens=p, completion_tokens=c)
        for m, (p, c) in zip(moves[:3], usage, strict=False)
    ]
    replies.append(openai_server.text_reply("Next turn.", *usage[3], reasoning_content="the corridor bends"))
    replies += [
        openai_server.tool_calls((m, {}), prompt_tokens=p, completion_tokens=c)
        for m, (p, c) in zip(moves[3:], usage[4:], strict=True)
    ]
    boto3.client("ssm", region_name="us-east-1").put_parameter(
        Name=catalog.pricing_name(OPENAI_MODEL),
        Value='{"inputPerMTok": 0.5, "outputPerMTok": 1.5}',
        Type="String",
        Overwrite=True,
    )
    with openai_server.ScriptedOpenAI(*replies, api_key=openai_key, models=[OPENAI_MODEL]) as server:
        data = run(local, openai(server, temperature=0.0))
    assert data["status"] == "succeeded" and data["goal_found"] and data["turns"] == 2
    assert data["actions"] == data["moves"] == data["shortest_path_length"] == 8
    # every request had the spec's shape: the server answers a bad one with a 400, which would fail the run
    assert server.remaining == 0 and len(server.requests) == 9
    reported = (sum(p for p, _ in usage), sum(c for _, c in usage))
    assert (data["input_tokens"], data["output_tokens"]) == reported
    assert data["cost_usd"] == pytest.approx((reported[0] * 0.5 + reported[1] * 1.5) / 1e6)
    exp_id = data["experiment_id"]
    calls = rows(local, "SELECT * FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index", exp_id)
    assert [(c["input_tokens"], c["output_tokens"]) for c in calls] == usage
    assert [c["stop_reason"] for c in calls] == ["tool_calls"] * 3 + ["stop"] + ["tool_calls"] * 5
    assert calls[3]["response"]["thinking"] == "the corridor bends"
    assert [c["response"]["tool_calls"][0]["id"] for c in calls if c["response"]["tool_calls"]] == [
        f"call_{i:04d}" for i in range(1, 9)
    ]
    seed = rows(local, "SELECT seed FROM experiments WHERE id = %s", exp_id)[0]["seed"]
    for request in server.requests:
        body = request.body
        assert request.headers["authorization"] == f"Bearer {openai_key}"
        assert (body["model"], body["temperature"], body["max_tokens"], body["seed"]) == (OPENAI_MODEL, 0.0, 1024, seed)
        assert body["parallel_tool_calls"] is False and body["stream"] is False
        assert body["messages"][0] == {"role": "system", "content": catalog.shipped_prompt("v1")}
    identity = rows(local, "SELECT * FROM experiments WHERE id = %s", exp_id)[0]
    assert (identity["model_build"], identity["reported_model"]) == (OPENAI_MODEL, OPENAI_MODEL)
    assert identity["server_software"].startswith("BaseHTTP/")  # the listing's Server header, as sent
    assert server.listings[0].headers["authorization"] == f"Bearer {openai_key}"  # asked with the chat's key
    assert_invariants(local.store, exp_id)


def test_an_openai_throttle_with_a_long_retry_after_is_retried_by_the_state_machine_and_counted(local):
    moves = shortest_moves(MAZE)
    throttled = openai_server.error(
        429, "Rate limit reached", "requests", "rate_limit_exceeded", headers={"Retry-After": "30"}
    )
    with openai_server.ScriptedOpenAI(
        openai_server.tool_calls((moves[0], {})),
        openai_server.text_reply("next"),
        throttled,
        *[openai_server.tool_calls((m, {})) for m in moves[1:]],
    ) as server:
        data = run(local, openai(server))
    assert data["status"] == "succeeded" and data["actions"] == 8 and server.remaining == 0
    assert rows(local, "SELECT throttle_count FROM experiments WHERE id = %s", data["experiment_id"])[0] == {
        "throttle_count": 1
    }
    assert_invariants(local.store, data["experiment_id"])


def test_a_model_the_openai_server_does_not_have_fails_the_experiment_with_its_message(local):
    missing = openai_server.error(404, f"The model `{OPENAI_MODEL}` does not exist.", code="model_not_found")
    with openai_server.ScriptedOpenAI(missing) as server:
        data = run(local, openai(server))
    assert data["execution"]["status"] == "FAILED" and data["execution"]["error"] == "ModelRequestRejected"
    assert data["status"] == "failed" and len(server.requests) == 1
    assert data["failure_reason"].startswith("ModelRequestRejected: the OpenAI-compatible server at ")
    assert (
        f"The model `{OPENAI_MODEL}` does not exist. (invalid_request_error, model_not_found)" in data["failure_reason"]
    )
    assert_invariants(local.store, data["experiment_id"])


def test_on_aws_a_base_url_the_deployment_does_not_list_is_refused_before_any_row(local, monkeypatch):
    monkeypatch.setenv(PROVIDERS["openai"].servers.listed, '["https://gpu-box.lab/v1"]')
    count = "SELECT count(*) AS n FROM experiments"
    before = local.store.conn.execute(count).fetchone()["n"]
    with openai_server.ScriptedOpenAI() as server:
        data = run(local, openai(server))
    assert data["status"] == "rejected" and not server.requests
    assert data["failure_reason"].startswith(
        f"InvalidConfig: config.baseUrl '{server.base_url}' is not an OpenAI-compatible base URL this deployment allows"
    )
    assert local.store.conn.execute(count).fetchone()["n"] == before


def converse_reply(*tool_uses: str, text: str | None = None, stop: str = "tool_use", tokens=(200, 25)) -> dict:
    content = ([{"text": text}] if text else []) + [
        {"toolUse": {"toolUseId": f"t{i}", "name": name, "input": {}}} for i, name in enumerate(tool_uses)
    ]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1], "totalTokens": sum(tokens)},
        "metrics": {"latencyMs": 42},
    }


def test_a_bedrock_experiment_reaches_the_goal_through_throttling(local, bedrock):
    moves = shortest_moves(MAZE)
    bedrock.add_response("converse", converse_reply(*moves[:4]))
    bedrock.add_response("converse", converse_reply(text="Thinking.", stop="end_turn", tokens=(300, 5)))
    for _ in range(3):  # more throttles than the adapter retries in process: the state machine retries
        bedrock.add_client_error("converse", service_error_code="ThrottlingException", http_status_code=429)
    bedrock.add_response("converse", converse_reply(*moves[4:6]))
    bedrock.add_response("converse", converse_reply(text="Cut off", stop="max_tokens", tokens=(10, 1)))
    bedrock.add_response("converse", converse_reply(*moves[6:]))
    data = run(local, {"mazeId": MAZE, "llmProvider": "bedrock", "modelName": "anthropic.claude-test-v1:0"})
    bedrock.assert_no_pending_responses()
    assert data["status"] == "succeeded" and data["actions"] == 8 and data["turns"] == 3
    assert (data["input_tokens"], data["output_tokens"]) == (200 + 300 + 200 + 10 + 200, 25 + 5 + 25 + 1 + 25)
    exp = rows(local, "SELECT throttle_count FROM experiments WHERE id = %s", data["experiment_id"])[0]
    assert exp["throttle_count"] == 3
    calls = rows(
        local,
        "SELECT stop_reason, latency_ms FROM model_calls WHERE experiment_id = %s ORDER BY turn_number, call_index",
        data["experiment_id"],
    )
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn", "tool_use", "max_tokens", "tool_use"]
    assert {c["latency_ms"] for c in calls} == {42}
    assert_invariants(local.store, data["experiment_id"])


def test_an_unknown_bedrock_model_fails_the_experiment_with_the_reason(local, bedrock):
    bedrock.add_client_error(
        "converse",
        service_error_code="ResourceNotFoundException",
        http_status_code=404,
        service_message="Model not found",
    )
    data = run(local, {"mazeId": MAZE, "llmProvider": "bedrock", "modelName": "no.such-model"})
    assert data["execution"]["status"] == "FAILED" and data["execution"]["error"] == "ModelRequestRejected"
    assert data["status"] == "failed"
    assert data["failure_reason"].startswith("ModelRequestRejected:") and "no.such-model" in data["failure_reason"]
    assert_invariants(local.store, data["experiment_id"])
