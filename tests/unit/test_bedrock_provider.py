"""The Bedrock adapter against a real boto3 ``bedrock-runtime`` client.

A botocore ``Stubber`` answers instead of AWS, so every request is validated against botocore's real
service model (and every stubbed answer too); nothing goes over the network.
"""

import copy
import itertools
import json

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.config import Config
from botocore.exceptions import ReadTimeoutError
from botocore.stub import ANY, Stubber

from oriole.core.maze import DIRECTIONS
from oriole.core.mazeset import get_maze
from oriole.core.tools import TOOL_SPECS, RecallWindow, Rules, ToolCall, WorldState
from oriole.core.turn_loop import Message, ModelRequest, TurnSettings, run_turn, turn_context
from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelThrottled, ModelTimeout, ModelUnavailable
from oriole.experiment_config import ExperimentConfig
from oriole.providers import retry
from oriole.providers.bedrock import BedrockAgent, runtime_client

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
CONTEXT = {"position": [1, 1], "visible": {"open": [[1, 1], [1, 2]], "walls": [[1, 0]], "goal": None}, "step": 0}


@pytest.fixture
def client():
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDTESTING",
        aws_secret_access_key="secret-testing",
        config=Config(retries={"total_max_attempts": 1}),
    )


@pytest.fixture
def stub(client):
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


@pytest.fixture
def sleeps(monkeypatch):
    """The backoff waits asked for; full jitter is pinned to its upper bound so the caps can be checked."""
    monkeypatch.setattr(retry.random, "uniform", lambda low, high: high)
    return []


def agent(client, sleeps=None, **kwargs):
    return BedrockAgent(
        client, MODEL, kwargs.pop("temperature", 0.2), sleep=(sleeps if sleeps is not None else []).append, **kwargs
    )


def request(*messages):
    return ModelRequest("You are in a maze.", TOOL_SPECS, (Message("user", CONTEXT), *messages))


def answer(*blocks, stop="tool_use", tokens=(120, 15), latency=340):
    return {
        "output": {"message": {"role": "assistant", "content": list(blocks)}},
        "stopReason": stop,
        "usage": {"inputTokens": tokens[0], "outputTokens": tokens[1], "totalTokens": sum(tokens)},
        "metrics": {"latencyMs": latency},
    }


def tool_use(name, call_id, **arguments):
    return {"toolUse": {"toolUseId": call_id, "name": name, "input": arguments}}


def test_request_carries_system_history_tool_results_tools_and_a_zero_temperature(client, stub):
    failed = {"success": False, "position": [1, 2], "error": "cannot move east: wall at the target tile"}
    moved = {
        "success": True,
        "position": [1, 2],
        "visible": {"open": [[1, 2]], "walls": [], "goal": None},
        "goal_found": False,
    }
    history = (
        Message(
            "assistant",
            "Going south, then east.",
            tool_calls=(
                ToolCall("move_south", '{"reasoning": "open below"}', call_id="tu-1"),
                ToolCall("move_east", "not json at all", call_id="tu-2"),
            ),
        ),
        Message("tool", moved, tool_call_id="tu-1", name="move_south"),
        Message("tool", failed, tool_call_id="tu-2", name="move_east"),
    )
    expected = {
        "modelId": MODEL,
        "system": [{"text": "You are in a maze."}],
        "messages": [
            {"role": "user", "content": [{"text": json.dumps(CONTEXT, separators=(",", ":"), sort_keys=True)}]},
            {
                "role": "assistant",
                "content": [
                    {"text": "Going south, then east."},
                    {"toolUse": {"toolUseId": "tu-1", "name": "move_south", "input": {"reasoning": "open below"}}},
                    {"toolUse": {"toolUseId": "tu-2", "name": "move_east", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "tu-1", "content": [{"json": moved}], "status": "success"}},
                    {"toolResult": {"toolUseId": "tu-2", "content": [{"json": failed}], "status": "error"}},
                ],
            },
        ],
        "toolConfig": {
            "tools": [
                {
                    "toolSpec": {
                        "name": spec.name,
                        "description": spec.description,
                        "inputSchema": {"json": spec.parameters},
                    }
                }
                for spec in TOOL_SPECS
            ]
        },
        "inferenceConfig": {"temperature": 0.0, "maxTokens": 1024},
    }
    assert {t["toolSpec"]["name"] for t in expected["toolConfig"]["tools"]} >= {"move_north", "recall_all"}
    stub.add_response("converse", answer({"text": "Blocked to the east."}, stop="end_turn"), expected)

    response = agent(client, temperature=0.0).respond(request(*history))

    assert response.text == "Blocked to the east." and response.tool_calls == ()


def test_from_config_sends_the_snapshot_temperature_even_when_it_is_zero(client, stub):
    stub.add_response(
        "converse",
        answer({"text": "ok"}, stop="end_turn"),
        {
            "modelId": MODEL,
            "system": ANY,
            "messages": ANY,
            "toolConfig": ANY,
            "inferenceConfig": {"temperature": 0.0, "maxTokens": 1024},
        },
    )
    chosen = BedrockAgent.from_config(
        MODEL, ExperimentConfig.of({"temperature": 0, "requestTimeoutSeconds": 30.0}), client
    )
    assert chosen.respond(request()).text == "ok"


@pytest.mark.parametrize(
    ("config", "inference"),
    [
        ({"temperature": 0.5, "maxTokens": 300, "topP": 0.9}, {"temperature": 0.5, "maxTokens": 300, "topP": 0.9}),
        ({"temperature": 0.7, "maxTokens": 2048, "topP": 1.0}, {"temperature": 0.7, "maxTokens": 2048}),
        ({"temperature": 0.1}, {"temperature": 0.1, "maxTokens": 1024}),  # a snapshot older than the keys
    ],
)
def test_generation_settings_come_from_the_snapshot(client, stub, config, inference):
    """maxTokens and topP are catalog entries like the temperature; topP 1 (no truncation) is not sent."""
    stub.add_response(
        "converse",
        answer({"text": "ok"}, stop="end_turn"),
        {"modelId": MODEL, "system": ANY, "messages": ANY, "toolConfig": ANY, "inferenceConfig": inference},
    )
    chosen = BedrockAgent.from_config(MODEL, ExperimentConfig.of({**config, "requestTimeoutSeconds": 30.0}), client)
    assert chosen.respond(request()).text == "ok"


def test_generation_settings_are_catalog_entries_with_bounds():
    from oriole.catalog import BY_KEY

    assert BY_KEY["temperature"].name == "/oriole/model/temperature"
    for key in ("maxTokens", "topP", "temperature"):
        assert BY_KEY[key].minimum is not None and BY_KEY[key].maximum is not None
    assert BY_KEY["maxTokens"].name == "/oriole/bedrock/max-tokens" and BY_KEY["topP"].maximum == 1


def test_one_tool_use_becomes_one_tool_call_with_usage_and_latency(client, stub):
    stub.add_response(
        "converse", answer(tool_use("move_south", "tu-9", reasoning="open"), tokens=(900, 42), latency=812)
    )

    response = agent(client).respond(request())

    assert response.tool_calls == (ToolCall("move_south", {"reasoning": "open"}, call_id="tu-9"),)
    assert response.usage.input_tokens == 900 and response.usage.output_tokens == 42
    assert response.usage.latency_ms == 812
    assert response.stop_reason == "tool_use" and response.throttles == 0 and response.text is None


def test_several_tool_uses_keep_their_order_with_text_and_reasoning(client, stub):
    stub.add_response(
        "converse",
        answer(
            {"reasoningContent": {"reasoningText": {"text": "South is open, then east."}}},
            {"text": "Two moves."},
            tool_use("move_south", "a"),
            tool_use("move_east", "b"),
            tool_use("recall_all", "c"),
        ),
    )

    response = agent(client).respond(request())

    assert [(c.name, c.call_id) for c in response.tool_calls] == [
        ("move_south", "a"),
        ("move_east", "b"),
        ("recall_all", "c"),
    ]
    assert response.text == "Two moves." and response.thinking == "South is open, then east."


def test_end_turn_text_only_answer_has_no_tool_calls(client, stub):
    stub.add_response("converse", answer({"text": "I think"}, {"text": "I am done."}, stop="end_turn"))

    response = agent(client).respond(request())

    assert response.tool_calls == () and response.stop_reason == "end_turn"
    assert response.text == "I think\nI am done." and response.thinking is None


def test_max_tokens_stop_reason_is_passed_through(client, stub):
    stub.add_response("converse", answer({"text": "Let me think about this very caref"}, stop="max_tokens"))
    response = agent(client).respond(request())
    assert response.stop_reason == "max_tokens" and response.tool_calls == ()


def test_throttles_are_retried_with_growing_backoff_and_counted(client, stub, sleeps):
    stub.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    stub.add_client_error("converse", "ServiceUnavailableException", "Busy", 503)
    stub.add_response("converse", answer(tool_use("move_east", "tu-1")))

    response = agent(client, sleeps).respond(request())

    assert response.throttles == 2 and response.tool_calls[0].name == "move_east"
    assert sleeps == [1.0, 2.0]


def test_jitter_waits_no_longer_than_the_cap(client, stub):
    waits = []
    stub.add_client_error("converse", "ThrottlingException", "Too many requests", 429)
    stub.add_response("converse", answer({"text": "ok"}, stop="end_turn"))
    assert agent(client, waits, backoff_seconds=0.5).respond(request()).throttles == 1
    assert len(waits) == 1 and 0 <= waits[0] <= 0.5


def test_throttled_on_every_attempt_raises_model_throttled_with_the_count(client, stub, sleeps):
    for _ in range(3):
        stub.add_client_error("converse", "ThrottlingException", "Rate exceeded", 429)

    with pytest.raises(ModelThrottled, match="3 time") as raised:
        agent(client, sleeps, max_attempts=3).respond(request())

    assert raised.value.throttles == 3 and "Rate exceeded" in str(raised.value)
    assert sleeps == [1.0, 2.0]


@pytest.mark.parametrize("code", ["ValidationException", "AccessDeniedException"])
def test_a_refused_request_is_rejected_without_retry(client, stub, sleeps, code):
    stub.add_client_error("converse", code, "The provided model identifier is invalid.", 400)

    with pytest.raises(ModelRequestRejected, match="model identifier is invalid") as raised:
        agent(client, sleeps).respond(request())

    assert MODEL in str(raised.value) and code in str(raised.value) and sleeps == []


def test_an_unknown_model_is_rejected_naming_it(client, stub, sleeps):
    stub.add_client_error("converse", "ResourceNotFoundException", "Model not found.", 404)
    unknown = BedrockAgent(client, "vendor.no-such-model-v9", 0.2, sleep=sleeps.append)

    with pytest.raises(ModelRequestRejected, match=r"'vendor\.no-such-model-v9'.*Model not found"):
        unknown.respond(request())
    assert sleeps == []


def test_a_model_timeout_is_a_model_timeout(client, stub):
    stub.add_client_error("converse", "ModelTimeoutException", "Model took too long", 408)
    with pytest.raises(ModelTimeout, match="Model took too long") as raised:
        agent(client).respond(request())
    assert isinstance(raised.value, ModelUnavailable)


def test_a_server_error_is_model_unavailable(client, stub):
    stub.add_client_error("converse", "InternalServerException", "Internal error", 500)
    with pytest.raises(ModelUnavailable, match="Internal error") as raised:
        agent(client).respond(request())
    assert not isinstance(raised.value, ModelTimeout)


def test_a_read_timeout_is_a_model_timeout(client):
    # The Stubber answers before any HTTP is sent, so it cannot time out: raise botocore's own error
    # from the HTTP send hook instead, where a real socket read timeout comes from.
    def time_out(request, **_):
        raise ReadTimeoutError(endpoint_url=request.url)

    client.meta.events.register("before-send.bedrock-runtime.Converse", time_out)
    with pytest.raises(ModelTimeout, match="did not answer in time"):
        agent(client).respond(request())


class _Body:
    def __init__(self, data: bytes):
        self.data = data

    def stream(self, **_):
        yield self.data


def test_an_answer_without_output_message_is_invalid(client):
    # The Stubber validates stubbed answers against the service model and refuses one without
    # output.message, so the answer is given as raw HTTP instead and parsed by botocore's real
    # rest-json parser, exactly as a malformed answer from the service would be.
    body = json.dumps(
        {
            "stopReason": "end_turn",
            "metrics": {"latencyMs": 5},
            "usage": {"inputTokens": 1, "outputTokens": 0, "totalTokens": 1},
        }
    ).encode()

    def reply(request, **_):
        return AWSResponse(request.url, 200, {"content-type": "application/json"}, _Body(body))

    client.meta.events.register("before-send.bedrock-runtime.Converse", reply)
    with pytest.raises(InvalidModelResponse, match=r"output\.message"):
        agent(client).respond(request())


def test_runtime_client_leaves_retries_to_the_adapter_and_uses_the_timeout(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTING")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-testing")
    config = runtime_client(45.0).meta.config
    assert config.read_timeout == 45.0 and config.connect_timeout == 10.0
    assert config.retries["total_max_attempts"] == 1


def test_a_turn_walks_the_shortest_path_and_sends_every_result_back(client, stub):
    maze = get_maze("perfect-7").maze
    path = maze.shortest_path()
    by_step = {step: f"move_{name}" for name, step in DIRECTIONS.items()}
    moves = [by_step[(b[0] - a[0], b[1] - a[1])] for a, b in itertools.pairwise(path)]
    for first in range(0, len(moves), 2):
        stub.add_response(
            "converse",
            answer(
                *(
                    tool_use(name, f"tu-{i}", reasoning="shortest path")
                    for i, name in enumerate(moves[first : first + 2], start=first)
                )
            ),
        )
    sent = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    rules = Rules(maze, vision_range=3, goal_condition="reach", recall_interval=10, max_recall_actions=50)
    world = WorldState(position=maze.start)
    context = turn_context(world, rules, [], max_actions=100)

    outcome = run_turn(
        agent(client),
        "system",
        world,
        rules,
        RecallWindow(50),
        context,
        TurnSettings(budget=len(moves) + 5, actions_left=100),
    )

    assert outcome.end_reason == "goal_found" and world.position == maze.goal
    assert [a.tool_name for a in outcome.actions] == moves
    assert [a.to_pos for a in outcome.actions] == path[1:] and all(a.success for a in outcome.actions)
    assert len(sent) == (len(moves) + 1) // 2
    assert sent[0]["messages"] == [
        {"role": "user", "content": [{"text": json.dumps(context, separators=(",", ":"), sort_keys=True)}]}
    ]
    for n, params in enumerate(sent):
        roles = [m["role"] for m in params["messages"]]
        assert roles == ["user", "assistant"] * n + ["user"]
        if n:
            results = [block["toolResult"] for block in params["messages"][-1]["content"]]
            done = outcome.actions[2 * n - 2 : 2 * n]
            left = len(moves) + 5
            assert results == [
                {
                    "toolUseId": f"tu-{a.step_number - 1}",
                    "status": "success",
                    "content": [
                        {
                            "json": {
                                **a.result,
                                "actions_left_in_turn": left - a.step_number,
                                "actions_left": 100 - a.step_number,
                            }
                        }
                    ],
                }
                for a in done
            ]
            uses = [block["toolUse"]["toolUseId"] for block in params["messages"][-2]["content"]]
            assert uses == [r["toolUseId"] for r in results]
    assert outcome.usage.input_tokens == 120 * len(sent)
