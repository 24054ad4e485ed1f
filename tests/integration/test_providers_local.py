"""Whole experiments with real model protocols through the local state machine: Ollama over real HTTP
(a scripted /api/chat server on loopback) and Bedrock through a real boto3 client under botocore's
Stubber, so every request is checked against the service model."""

from __future__ import annotations

from itertools import pairwise

import boto3
import pytest

from oriole import catalog, mazeset
from tests.integration.test_local_state_machine import assert_invariants
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls

MAZE = "perfect-7"


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
        tool_calls((moves[0], {"reasoning": "start"}), (moves[1], {}), (moves[2], '{"reasoning": "as text"}'),
                   prompt_eval_count=300, eval_count=30, thinking="corridor ahead"),
        tool_calls((moves[3], {}), ("move_diagonal", {}), prompt_eval_count=350, eval_count=20),
        text_reply("Let me think about the next turn.", prompt_eval_count=400, eval_count=10),
        tool_calls(*[(m, {}) for m in moves[4:]], prompt_eval_count=500, eval_count=40),
    ]
    boto3.client("ssm", region_name="us-east-1").put_parameter(
        Name=catalog.pricing_name("qwen2.5:7b"), Value='{"inputPerMTok": 1.0, "outputPerMTok": 2.0}',
        Type="String", Overwrite=True)
    with ScriptedOllama(*script) as server:
        data = run(local, {"mazeId": MAZE, "llmProvider": "ollama", "modelName": "qwen2.5:7b",
                           "config": {"endpoint": server.url, "temperature": 0.0}})
    assert data["status"] == "succeeded" and data["goal_found"]
    assert data["actions"] == 9 and data["moves"] == 8 and data["turns"] == 2
    assert (data["input_tokens"], data["output_tokens"]) == (1550, 100)
    assert data["cost_usd"] == pytest.approx((1550 * 1.0 + 100 * 2.0) / 1e6)
    exp_id = data["experiment_id"]
    turns = rows(local, "SELECT * FROM turns WHERE experiment_id = %s ORDER BY turn_number", exp_id)
    assert [(t["action_count"], t["model_calls"], t["input_tokens"], t["output_tokens"], t["end_reason"])
            for t in turns] == [(5, 3, 1050, 60, "no_tool_call"), (4, 1, 500, 40, "goal_found")]
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
    assert_invariants(local.store, exp_id)


def converse_reply(*tool_uses: str, text: str | None = None, stop: str = "tool_use", tokens=(200, 25)) -> dict:
    content = ([{"text": text}] if text else []) + [
        {"toolUse": {"toolUseId": f"t{i}", "name": name, "input": {}}} for i, name in enumerate(tool_uses)]
    return {"output": {"message": {"role": "assistant", "content": content}}, "stopReason": stop,
            "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1], "totalTokens": sum(tokens)},
            "metrics": {"latencyMs": 42}}


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
    calls = rows(local, "SELECT stop_reason, latency_ms FROM model_calls WHERE experiment_id = %s "
                        "ORDER BY turn_number, call_index", data["experiment_id"])
    assert [c["stop_reason"] for c in calls] == ["tool_use", "end_turn", "tool_use", "max_tokens", "tool_use"]
    assert {c["latency_ms"] for c in calls} == {42}
    assert_invariants(local.store, data["experiment_id"])


def test_an_unknown_bedrock_model_fails_the_experiment_with_the_reason(local, bedrock):
    bedrock.add_client_error("converse", service_error_code="ResourceNotFoundException", http_status_code=404,
                             service_message="Model not found")
    data = run(local, {"mazeId": MAZE, "llmProvider": "bedrock", "modelName": "no.such-model"})
    assert data["execution"]["status"] == "FAILED" and data["execution"]["error"] == "ModelRequestRejected"
    assert data["status"] == "failed"
    assert data["failure_reason"].startswith("ModelRequestRejected:") and "no.such-model" in data["failure_reason"]
    assert_invariants(local.store, data["experiment_id"])
