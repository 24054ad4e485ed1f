"""The OpenAI-compatible provider against a scripted Chat Completions server over real loopback HTTP (every
request checked against the spec's shapes): translation both ways, the settings, retries, Retry-After,
timeouts, named failures and bounds, and one real turn of the shared turn loop. (Which base URLs a deployment
allows is tested with StartExperiment, in tests/integration/test_deployed_start.py.)"""

from __future__ import annotations

import json
import re
import time

import pytest

from oriole import catalog
from oriole.core.mazeset import get_maze
from oriole.core.tools import TOOL_SPECS, RecallWindow, Rules, ToolCall, WorldState
from oriole.core.turn_loop import Message, ModelRequest, TurnSettings, response_as_json, run_turn, turn_context
from oriole.errors import (
    InvalidModelResponse,
    ModelRequestRejected,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
)
from oriole.experiment_config import ExperimentConfig
from oriole.providers.openai import OpenAIAgent
from oriole.providers.transport import MAX_RESPONSE_BYTES
from tests.openai_server import ScriptedOpenAI, error, slow, text_reply, tool_calls
from tests.unit.test_ollama_provider import Sleeps, SteppedClock, _moves, closed_port_url

MODEL = "Qwen/Qwen3-8B"
GENERATION = {"temperature": 0.0, "max_tokens": 256, "seed": 42}
CONTEXT = {"position": [1, 1], "visible": {"open": [[1, 2]]}, "step": 0}


def agent_for(server: ScriptedOpenAI, **kwargs) -> OpenAIAgent:
    values = {"generation": GENERATION, "timeout_seconds": 5.0, "sleep": Sleeps(), **kwargs}
    return OpenAIAgent(MODEL, server.base_url, **values)


def ask(agent: OpenAIAgent, *messages: Message, tools=TOOL_SPECS):
    return agent.respond(ModelRequest("You are in a maze.", tools, messages or (Message("user", CONTEXT),)))


# --- answers -------------------------------------------------------------------------------------------------


def test_a_tool_call_keeps_the_servers_id_and_its_arguments_as_the_json_string_sent():
    with ScriptedOpenAI(tool_calls(("move_east", {"reasoning": "open corridor"}))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls == (ToolCall("move_east", '{"reasoning": "open corridor"}', call_id="call_0001"),)
    assert response.text is None and response.stop_reason == "tool_calls"


def test_several_calls_keep_their_order_and_ids():
    script = tool_calls(("move_north", {}), ("move_east", {"reasoning": "b"}), ("recall_all", {}))
    with ScriptedOpenAI(script) as server:
        response = ask(agent_for(server, parallel_tool_calls=True))
    assert [(c.name, c.call_id) for c in response.tool_calls] == [
        ("move_north", "call_0001"),
        ("move_east", "call_0002"),
        ("recall_all", "call_0003"),
    ]
    assert server.requests[0].body["parallel_tool_calls"] is True


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]", '{"speed": 9}', ""])
def test_arguments_pass_through_unchanged_for_the_loop_to_judge(arguments):
    with ScriptedOpenAI(tool_calls(("move_west", arguments))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls[0].arguments == arguments


def test_a_call_without_a_name_or_an_id_is_kept_named_empty_with_an_id_of_its_own():
    body = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"type": "function", "function": {"arguments": "{}"}}, {"id": 7, "oops": 1}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    with ScriptedOpenAI((200, json.dumps(body).encode())) as server:
        response = ask(agent_for(server))
    assert [(c.name, c.arguments, c.call_id) for c in response.tool_calls] == [
        ("", "{}", "call_0"),
        ("", None, "call_1"),
    ]


def test_text_reasoning_usage_and_finish_reason_are_mapped():
    reply = text_reply(
        "I think I am stuck.",
        prompt_tokens=321,
        completion_tokens=17,
        finish_reason="length",
        reasoning_content="east looks closed",
    )
    with ScriptedOpenAI(slow(0.05, reply)) as server:
        response = ask(agent_for(server))
    assert response.tool_calls == () and response.text == "I think I am stuck."
    assert response.thinking == "east looks closed" and response.stop_reason == "length"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (321, 17)
    assert 50 <= response.usage.latency_ms < 5000 and response.throttles == 0


def test_a_refusal_is_kept_as_the_answers_text():
    with ScriptedOpenAI(text_reply(None, refusal="I can't help with that.")) as server:
        assert ask(agent_for(server)).text == "I can't help with that."


def test_an_answer_without_usage_counts_zero_tokens():
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}
    with ScriptedOpenAI((200, json.dumps(body).encode())) as server:
        response = ask(agent_for(server))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (0, 0) and response.text == "hi"
    assert (response.model, response.system_fingerprint) == (None, None)  # what the answer did not say


def test_the_model_and_fingerprint_the_server_reports_are_kept_beside_the_answer():
    with ScriptedOpenAI(text_reply("ok")) as server:
        response = ask(agent_for(server))
    reported = json.loads(server.answers[0][1])
    assert (response.model, response.system_fingerprint) == (reported["model"], "fp_scripted")
    assert response_as_json(response)["system_fingerprint"] == "fp_scripted"
    body = {**reported, "model": "resolved-build-2025-06-01", "system_fingerprint": 7}  # not a string: not kept
    with ScriptedOpenAI((200, json.dumps(body).encode())) as server:
        response = ask(agent_for(server))
    assert (response.model, response.system_fingerprint) == ("resolved-build-2025-06-01", None)


def test_latency_is_the_wall_time_of_the_http_call():
    with ScriptedOpenAI(text_reply("ok")) as server:
        response = ask(agent_for(server, clock=SteppedClock(100.0, 100.25)))
    assert response.usage.latency_ms == 250


# --- the request -----------------------------------------------------------------------------------------------


def test_the_request_has_the_specs_shape():
    history = (
        Message("user", CONTEXT),
        Message(
            "assistant",
            "Going south.",
            tool_calls=(
                ToolCall("move_south", '{"reasoning": "down"}', "call_a"),
                ToolCall("move_east", "{broken", "call_b"),
                ToolCall("recall_all", {"reasoning": "lost"}, "call_c"),
            ),
        ),
        Message("tool", {"success": True, "position": [1, 2]}, tool_call_id="call_a", name="move_south"),
        Message("tool", {"success": False, "error": "wall"}, tool_call_id="call_b", name="move_east"),
        Message("tool", {"success": False, "error": "not executed"}, tool_call_id="call_c", name="recall_all"),
    )
    with ScriptedOpenAI(text_reply("ok")) as server:
        server.issued.update({"call_a": "move_south", "call_b": "move_east", "call_c": "recall_all"})
        ask(agent_for(server, parallel_tool_calls=False), *history)
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/v1/chat/completions")
    assert sent.headers["content-type"] == "application/json" and "authorization" not in sent.headers
    body = sent.body
    assert {k: body[k] for k in ("model", "stream", "temperature", "max_tokens", "seed", "parallel_tool_calls")} == {
        "model": MODEL,
        "stream": False,
        "temperature": 0.0,
        "max_tokens": 256,
        "seed": 42,
        "parallel_tool_calls": False,
    }
    assert body["tools"] == [
        {"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.parameters}}
        for s in TOOL_SPECS
    ]
    assert body["messages"] == [
        {"role": "system", "content": "You are in a maze."},
        {"role": "user", "content": json.dumps(CONTEXT, separators=(",", ":"), sort_keys=True)},
        {
            "role": "assistant",
            "content": "Going south.",
            "tool_calls": [
                {
                    "id": "call_a",
                    "type": "function",
                    "function": {"name": "move_south", "arguments": '{"reasoning": "down"}'},
                },
                {"id": "call_b", "type": "function", "function": {"name": "move_east", "arguments": "{}"}},
                {
                    "id": "call_c",
                    "type": "function",
                    "function": {"name": "recall_all", "arguments": '{"reasoning":"lost"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": '{"position":[1,2],"success":true}'},
        {"role": "tool", "tool_call_id": "call_b", "content": '{"error":"wall","success":false}'},
        {"role": "tool", "tool_call_id": "call_c", "content": '{"error":"not executed","success":false}'},
    ]


def test_an_assistant_turn_with_calls_and_no_text_sends_null_content():
    history = (
        Message("user", CONTEXT),
        Message("assistant", None, tool_calls=(ToolCall("move_east", {}, "c1"),)),
        Message("tool", {"success": True}, tool_call_id="c1", name="move_east"),
    )
    with ScriptedOpenAI(text_reply("ok")) as server:
        server.issued["c1"] = "move_east"
        ask(agent_for(server), *history)
    assert server.requests[0].body["messages"][2]["content"] is None


def test_a_request_without_tools_names_no_tools_and_no_parallel_tool_calls():
    with ScriptedOpenAI(text_reply('{"tool": "move_east"}')) as server:
        ask(agent_for(server, parallel_tool_calls=True), tools=())
    assert "tools" not in server.requests[0].body and "parallel_tool_calls" not in server.requests[0].body


def test_the_api_key_is_a_bearer_token_and_a_missing_one_is_rejected():
    with ScriptedOpenAI(text_reply("a"), api_key="sk-secret") as server:
        ask(agent_for(server, api_key="sk-secret"))
        with pytest.raises(
            ModelRequestRejected,
            match=r"HTTP 401\): Incorrect API key provided \("
            r"invalid_request_error, invalid_api_key\)",
        ):
            ask(agent_for(server))
    assert server.requests[0].headers["authorization"] == "Bearer sk-secret"


def test_from_config_reads_the_snapshot_keys():
    config = {
        "baseUrl": "https://gpu-box.lab:8000/v1/",
        "temperature": 0,
        "maxOutputTokens": 64,
        "maxTokensField": "max_completion_tokens",
        "sendSeed": True,
        "seed": 7,
        "parallelToolCalls": True,
        "requestTimeoutSeconds": 30,
        "contextTokens": 8192,
    }
    agent = OpenAIAgent.from_config(MODEL, ExperimentConfig.of(config), api_key="k")
    assert agent.url == "https://gpu-box.lab:8000/v1/chat/completions" and agent.model == MODEL
    assert agent.generation == {"temperature": 0.0, "max_completion_tokens": 64, "seed": 7}
    assert isinstance(agent.generation["temperature"], float)
    assert agent.parallel_tool_calls is True and agent.context_budget == 8192 - 64  # the answer's room kept free
    assert agent.http.timeout_seconds == 30.0 and agent.http.api_key == "k"


def test_from_config_without_the_seed_and_with_the_catalog_defaults():
    agent = OpenAIAgent.from_config(MODEL, ExperimentConfig.of({"sendSeed": False, "seed": 7}))
    defaults = catalog.BY_KEY
    assert agent.generation == {
        "temperature": defaults["temperature"].default,
        "max_tokens": defaults["maxOutputTokens"].default,
    }
    assert agent.url == defaults["baseUrl"].default + "/chat/completions"
    room = defaults["maxOutputTokens"].int_default
    assert agent.parallel_tool_calls is False and agent.context_budget == defaults["contextTokens"].default - room


# --- failures --------------------------------------------------------------------------------------------------


def test_a_5xx_is_retried_with_backoff_and_then_succeeds():
    with ScriptedOpenAI(error(502, "Bad gateway", "server_error"), tool_calls(("move_east", {}))) as server:
        agent = agent_for(server)
        response = ask(agent)
    assert [c.name for c in response.tool_calls] == ["move_east"] and len(server.requests) == 2
    assert len(agent.http.backoff.sleep) == 1 and 0 <= agent.http.backoff.sleep[0] <= 0.5  # full jitter


def test_a_5xx_on_every_attempt_is_model_unavailable_naming_the_server_and_how_to_fix_it():
    with (
        ScriptedOpenAI(*[error(503, "The engine is currently overloaded", "server_error")] * 3) as server,
        pytest.raises(ModelUnavailable) as raised,
    ):
        ask(agent_for(server))
    assert type(raised.value) is ModelUnavailable and len(server.requests) == 3
    message = str(raised.value)
    assert "currently overloaded" in message and "3 attempt" in message and server.base_url in message
    assert "--openai-url" in message and "/oriole/openai/base-url" in message


def test_a_refused_connection_is_model_unavailable():
    agent = OpenAIAgent(MODEL, closed_port_url() + "/v1", GENERATION, 5.0, max_attempts=2, sleep=Sleeps())
    with pytest.raises(ModelUnavailable, match="2 attempt"):
        ask(agent)


def test_a_429_without_retry_after_is_a_throttle_for_the_state_machine():
    with ScriptedOpenAI(
        error(429, "Rate limit reached for requests", "requests", "rate_limit_exceeded"), text_reply("unused")
    ) as server:
        agent = agent_for(server)
        with pytest.raises(ModelThrottled, match="Rate limit reached") as raised:
            ask(agent)
    assert raised.value.throttles == 1 and len(server.requests) == 1 and agent.http.backoff.sleep == []


def test_a_short_retry_after_is_waited_out_in_the_task_and_counted():
    with ScriptedOpenAI(error(429, "Slow down", headers={"Retry-After": "2"}), tool_calls(("move_east", {}))) as server:
        agent = agent_for(server)
        response = ask(agent)
    assert agent.http.backoff.sleep == [2.0] and response.throttles == 1 and len(server.requests) == 2


def test_a_long_retry_after_is_left_to_the_state_machine_and_quoted():
    with ScriptedOpenAI(error(429, "Quota", headers={"Retry-After": "120"}), text_reply("unused")) as server:
        agent = agent_for(server)
        with pytest.raises(ModelThrottled, match="Quota") as raised:
            ask(agent)
    assert "Retry-After: 120 s" in str(raised.value) and agent.http.backoff.sleep == [] and len(server.requests) == 1


def test_throttles_on_every_attempt_are_counted_in_the_error():
    with ScriptedOpenAI(*[error(429, "Busy", headers={"Retry-After": "1"})] * 3) as server:
        agent = agent_for(server, max_attempts=3)
        with pytest.raises(ModelThrottled) as raised:
            ask(agent)
    assert raised.value.throttles == 3 and agent.http.backoff.sleep == [1.0, 1.0] and server.remaining == 0


@pytest.mark.parametrize(
    "status, message, code",
    [
        (404, f"The model `{MODEL}` does not exist.", "model_not_found"),
        (400, "This model's maximum context length is 8192 tokens.", "context_length_exceeded"),
    ],
)
def test_a_refused_request_is_rejected_with_the_servers_message_and_not_retried(status, message, code):
    with ScriptedOpenAI(error(status, message, code=code), text_reply("unused")) as server:
        agent = agent_for(server)
        with pytest.raises(ModelRequestRejected) as raised:
            ask(agent)
    assert message in str(raised.value) and f"HTTP {status}" in str(raised.value) and code in str(raised.value)
    assert len(server.requests) == 1 and agent.http.backoff.sleep == []


def test_a_response_slower_than_the_timeout_is_model_timeout_without_retry():
    with ScriptedOpenAI(slow(1.0, text_reply("too late")), text_reply("never asked")) as server:
        agent = agent_for(server, timeout_seconds=0.3)
        started = time.monotonic()
        with pytest.raises(ModelTimeout, match=r"0\.3 s"):
            ask(agent)
    assert time.monotonic() - started < 0.9 and len(server.requests) == 1


@pytest.mark.parametrize(
    "body, what",
    [
        (b"<html>proxy error</html>", "not JSON"),
        (b'{"object": "error", "message": "boom"}', "without choices[0].message"),
        (b'{"choices": []}', "without choices[0].message"),
        (b'{"choices": [{"text": "a completion, not a chat"}]}', "without choices[0].message"),
        (b'{"choices": [{"message": {"tool_calls": {"name": "x"}}}]}', "wrong type"),
        (b'{"choices": [{"message": {"content": "a"}}], "usage": "lots"}', "wrong type"),
        (b'{"choices": [{"message": {"content": "a"}}], "usage": {"prompt_tokens": -3}}', "usage.prompt_tokens"),
        (
            b'{"choices": [{"message": {"content": "a"}}], "usage": {"completion_tokens": 1.5}}',
            "usage.completion_tokens",
        ),
    ],
)
def test_a_body_not_of_the_specs_shape_is_an_invalid_response_with_an_excerpt(body, what):
    with ScriptedOpenAI((200, body)) as server, pytest.raises(InvalidModelResponse, match=re.escape(what)) as raised:
        ask(agent_for(server))
    if not what.startswith("usage."):
        assert body.decode()[:30] in str(raised.value)


def test_a_body_over_the_bound_is_refused_without_reading_the_rest():
    body = json.dumps({"choices": [{"message": {"content": "x" * (MAX_RESPONSE_BYTES + 1)}}]}).encode()
    with ScriptedOpenAI((200, body)) as server, pytest.raises(InvalidModelResponse, match="more than 4,194,304"):
        ask(agent_for(server, max_attempts=1))


# --- one real turn ---------------------------------------------------------------------------------------------


def test_a_turn_of_the_shared_loop_walks_the_shortest_path_carrying_the_servers_ids():
    maze = get_maze("perfect-7").maze
    moves = _moves(maze.shortest_path())
    game = Rules(maze, vision_range=3, goal_condition="reach", recall_interval=10, max_recall_actions=50)
    world = WorldState(position=maze.start)
    context = turn_context(world, game, [], max_actions=100)
    script = [tool_calls((m, {"reasoning": "on"}), prompt_tokens=100 + i) for i, m in enumerate(moves)]
    with ScriptedOpenAI(*script) as server:
        outcome = run_turn(
            agent_for(server),
            "Find the goal.",
            world,
            game,
            RecallWindow(50),
            context,
            TurnSettings(budget=len(moves) + 5, actions_left=100),
        )
    assert outcome.end_reason == "goal_found" and [a.tool_name for a in outcome.actions] == moves
    assert world.position == maze.goal and all(a.success for a in outcome.actions)
    assert outcome.usage.input_tokens == sum(100 + i for i in range(len(moves)))
    last = server.requests[-1].body["messages"]
    assert [m["role"] for m in last] == ["system", "user", *["assistant", "tool"] * (len(moves) - 1)]
    assert (
        [m["tool_calls"][0]["id"] for m in last if m["role"] == "assistant"]
        == [m["tool_call_id"] for m in last if m["role"] == "tool"]
        == [f"call_{i:04d}" for i in range(1, len(moves))]
    )


# --- the scripted server itself refuses what the spec refuses ---------------------------------------------------

GOOD_CALL = {"id": "call_0001", "type": "function", "function": {"name": "move_east", "arguments": "{}"}}
GOOD = {
    "model": MODEL,
    "messages": [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [GOOD_CALL]},
        {"role": "tool", "tool_call_id": "call_0001", "content": "{}"},
    ],
}


def assistant(**fields) -> list[dict]:
    return [*GOOD["messages"][:2], {"role": "assistant", "content": None, **fields}, GOOD["messages"][3]]


@pytest.mark.parametrize(
    "change, refusal",
    [
        ({}, None),
        ({"stream": True}, "non-streaming"),
        ({"parallel_tool_calls": False}, "only allowed when 'tools'"),
        ({"max_tokens": 5, "max_completion_tokens": 5}, "cannot both"),
        ({"options": {}}, "Unrecognized request argument supplied: options"),
        ({"model": ""}, "model"),
        ({"tools": [{"function": {"name": "x", "parameters": {}}}]}, "each tool is"),
        (
            {"messages": assistant(tool_calls=[{**GOOD_CALL, "function": {"name": "move_east", "arguments": {}}}])},
            "arguments': a JSON string",
        ),
        ({"messages": assistant(tool_calls=[{**GOOD_CALL, "id": "call_9999"}])}, "never issued"),
        ({"messages": GOOD["messages"][:3]}, "have no tool message"),
        ({"messages": [*GOOD["messages"][:3], {"role": "user", "content": "u"}]}, "must be followed by tool messages"),
        (
            {"messages": [*GOOD["messages"][:3], {**GOOD["messages"][3], "tool_call_id": "call_0002"}]},
            "is not one of ['call_0001']",
        ),
        ({"messages": [*GOOD["messages"], {**GOOD["messages"][3]}]}, "is not one of []"),
        ({"messages": [{"role": "robot", "content": "x"}]}, "role must be one of"),
    ],
)
def test_the_scripted_server_refuses_what_the_spec_refuses(change, refusal):
    with ScriptedOpenAI(text_reply("ok")) as server:
        server.issued["call_0001"] = "move_east"
        poster = agent_for(server).http
        if refusal is None:
            poster.post({**GOOD, **change})
            return
        with pytest.raises(ModelRequestRejected, match=re.escape(refusal)):
            poster.post({**GOOD, **change})
