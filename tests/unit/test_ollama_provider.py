"""The Ollama provider against a scripted Ollama over real loopback HTTP: translation both ways, retries,
timeouts and named failures, and one real turn of the shared turn loop."""

from __future__ import annotations

import itertools
import json
import socket
import time

import pytest

from oriole.core.maze import DIRECTIONS
from oriole.core.mazeset import get_maze
from oriole.core.tools import TOOL_SPECS, RecallWindow, Rules, ToolCall, WorldState
from oriole.core.turn_loop import Message, ModelRequest, TurnSettings, run_turn, turn_context
from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelThrottled, ModelTimeout, ModelUnavailable
from oriole.experiment_config import ExperimentConfig
from oriole.providers.ollama import OllamaAgent
from tests.ollama_server import ScriptedOllama, error, slow, text_reply, tool_calls

MODEL = "qwen3:8b"
OPTIONS = {"num_ctx": 4096, "temperature": 0.0, "repeat_penalty": 1.4, "seed": 42}
CONTEXT = {"position": [1, 1], "visible": {"open": [[1, 2]]}, "step": 0}


class Sleeps(list):
    """Records the backoff waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def agent_for(server: ScriptedOllama, **kwargs) -> OllamaAgent:
    values = {"options": OPTIONS, "timeout_seconds": 5.0, "sleep": Sleeps(), **kwargs}
    return OllamaAgent(MODEL, server.url, **values)


def ask(agent: OllamaAgent, *messages: Message):
    return agent.respond(ModelRequest("You are in a maze.", TOOL_SPECS, messages or (Message("user", CONTEXT),)))


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# --- answers -------------------------------------------------------------------------------------------------


def test_a_tool_call_becomes_a_neutral_tool_call():
    with ScriptedOllama(tool_calls(("move_east", {"reasoning": "open corridor"}))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls == (ToolCall("move_east", {"reasoning": "open corridor"}, call_id="call_0"),)
    assert response.text is None


def test_several_calls_keep_their_order_and_get_distinct_ids():
    script = tool_calls(("move_north", {}), ("move_east", {"reasoning": "b"}), ("recall_all", {}))
    with ScriptedOllama(script) as server:
        response = ask(agent_for(server))
    assert [c.name for c in response.tool_calls] == ["move_north", "move_east", "recall_all"]
    assert [c.call_id for c in response.tool_calls] == ["call_0", "call_1", "call_2"]
    assert response.tool_calls[1].arguments == {"reasoning": "b"}


def test_arguments_given_as_a_json_string_pass_through_unchanged():
    with ScriptedOllama(tool_calls(("move_south", '{"reasoning": "down"}'))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls[0].arguments == '{"reasoning": "down"}'


@pytest.mark.parametrize("arguments", ["{not json", [1, 2], {"speed": 9}])
def test_invalid_arguments_pass_through_for_the_loop_to_reject(arguments):
    with ScriptedOllama(tool_calls(("move_west", arguments))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls[0].arguments == arguments


def test_an_unknown_tool_passes_through_for_the_loop_to_reject():
    with ScriptedOllama(tool_calls(("teleport", {"x": 5}))) as server:
        response = ask(agent_for(server))
    assert response.tool_calls == (ToolCall("teleport", {"x": 5}, call_id="call_0"),)


def test_a_call_without_a_function_name_is_kept_with_an_empty_name():
    script = {"message": {"tool_calls": [{"function": {"arguments": {}}}, {"oops": 1}]}}
    with ScriptedOllama(script) as server:
        response = ask(agent_for(server))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("", {}), ("", None)]


def test_a_text_answer_has_no_tool_calls():
    with ScriptedOllama(text_reply("I think I am stuck.")) as server:
        response = ask(agent_for(server))
    assert response.tool_calls == () and response.text == "I think I am stuck."
    assert response.model == json.loads(server.answers[0][1])["model"]  # the model Ollama says answered


def test_usage_durations_done_reason_and_thinking_are_mapped():
    reply = tool_calls(
        ("move_east", {}),
        thinking="east looks open",
        prompt_eval_count=321,
        eval_count=17,
        done_reason="length",
        total_duration=9,
        load_duration=8,
        prompt_eval_duration=7,
        eval_duration=6,
    )
    with ScriptedOllama(slow(0.05, reply)) as server:
        response = ask(agent_for(server))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (321, 17)
    assert isinstance(response.usage.latency_ms, int) and 50 <= response.usage.latency_ms < 5000
    assert response.stop_reason == "length" and response.thinking == "east looks open"
    assert response.durations == {
        "total_duration": 9,
        "load_duration": 8,
        "prompt_eval_duration": 7,
        "eval_duration": 6,
    }
    assert response.throttles == 0


def test_missing_counts_and_durations_default_to_zero_and_nothing():
    bare = {"model": MODEL, "message": {"role": "assistant", "content": ""}, "done": True}
    with ScriptedOllama((200, json.dumps(bare).encode())) as server:
        response = ask(agent_for(server))
    assert (response.usage.input_tokens, response.usage.output_tokens) == (0, 0)
    assert response.durations == {} and response.stop_reason is None
    assert response.text is None and response.thinking is None


# --- the request -----------------------------------------------------------------------------------------------


def test_the_request_body_is_a_non_streaming_chat_request():
    history = (
        Message("user", CONTEXT),
        Message(
            "assistant",
            None,
            tool_calls=(
                ToolCall("move_south", '{"reasoning": "down"}', "call_0"),
                ToolCall("move_east", "{broken", "call_1"),
            ),
        ),
        Message("tool", {"success": True, "position": [1, 2]}, tool_call_id="call_0", name="move_south"),
        Message("tool", {"success": False, "error": "wall"}, tool_call_id="call_1", name="move_east"),
    )
    with ScriptedOllama(text_reply("ok")) as server:
        ask(agent_for(server), *history)
    sent = server.requests[0]
    assert (sent.method, sent.path) == ("POST", "/api/chat")
    body = sent.body
    assert body["model"] == MODEL and body["stream"] is False
    assert body["options"] == OPTIONS and isinstance(body["options"]["temperature"], float)
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": TOOL_SPECS[0].name,
            "description": TOOL_SPECS[0].description,
            "parameters": TOOL_SPECS[0].parameters,
        },
    }
    assert [t["function"]["name"] for t in body["tools"]] == [s.name for s in TOOL_SPECS]
    assert body["messages"] == [
        {"role": "system", "content": "You are in a maze."},
        {"role": "user", "content": json.dumps(CONTEXT, separators=(",", ":"), sort_keys=True)},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "move_south", "arguments": {"reasoning": "down"}}},
                {"function": {"name": "move_east", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": '{"position":[1,2],"success":true}', "tool_name": "move_south"},
        {"role": "tool", "content": '{"error":"wall","success":false}', "tool_name": "move_east"},
    ]
    assert sent.headers["content-type"] == "application/json"


def test_the_api_key_is_sent_as_a_bearer_token_only_when_given():
    with ScriptedOllama(text_reply("a"), text_reply("b")) as server:
        ask(agent_for(server, api_key="sk-secret"))
        ask(agent_for(server))
    assert server.requests[0].headers["authorization"] == "Bearer sk-secret"
    assert "authorization" not in server.requests[1].headers


def test_from_config_reads_the_snapshot_keys():
    config = {
        "endpoint": "http://ollama.internal:11434/",
        "numCtx": 8192,
        "temperature": 0,
        "repeatPenalty": 1.1,
        "requestTimeoutSeconds": 30,
        "seed": 7,
        "maxMoves": 100,
    }
    agent = OllamaAgent.from_config("llama3.2", ExperimentConfig.of(config), api_key="k")
    assert agent.model == "llama3.2" and agent.url == "http://ollama.internal:11434/api/chat"
    assert agent.options == {"num_ctx": 8192, "num_predict": 1024, "temperature": 0.0, "repeat_penalty": 1.1, "seed": 7}
    assert agent.context_budget == 8192 - 1024  # the answer's room kept free in the window
    assert isinstance(agent.options["temperature"], float)
    assert agent.http.timeout_seconds == 30.0 and agent.http.api_key == "k"


def test_from_config_sends_the_options_on_the_wire():
    with ScriptedOllama(text_reply("ok")) as server:
        config = {
            "endpoint": server.url,
            "numCtx": 2048,
            "numPredict": 1500,
            "temperature": 0.0,
            "repeatPenalty": 1.4,
            "requestTimeoutSeconds": 5,
            "seed": 3,
        }
        ask(OllamaAgent.from_config(MODEL, ExperimentConfig.of(config), None))
    options = {"num_ctx": 2048, "num_predict": 1500, "temperature": 0.0, "repeat_penalty": 1.4, "seed": 3}
    assert server.requests[0].body["options"] == options
    assert "authorization" not in server.requests[0].headers


def test_no_output_cap_sends_no_num_predict_and_keeps_the_whole_window():
    """numPredict 0 is the absence of a cap: options carry no num_predict (the model's own default applies), as
    Ollama requests did before the setting existed, and no room is kept for the answer."""
    with ScriptedOllama(text_reply("ok")) as server:
        config = {"endpoint": server.url, "numCtx": 2048, "numPredict": 0, "seed": 3}
        agent = OllamaAgent.from_config(MODEL, ExperimentConfig.of(config), None)
        ask(agent)
    assert "num_predict" not in server.requests[0].body["options"]
    assert agent.context_budget == 2048


# --- failures --------------------------------------------------------------------------------------------------


def test_a_5xx_is_retried_with_backoff_and_then_succeeds():
    with ScriptedOllama(error(500, "llama runner process has terminated"), tool_calls(("move_east", {}))) as server:
        agent = agent_for(server)
        response = ask(agent)
    assert [c.name for c in response.tool_calls] == ["move_east"]
    assert len(server.requests) == 2
    assert len(agent.http.backoff.sleep) == 1 and 0 <= agent.http.backoff.sleep[0] <= 0.5  # full jitter


def test_a_5xx_on_every_attempt_is_model_unavailable_after_max_attempts():
    with ScriptedOllama(*[error(503, "server busy")] * 3) as server:
        agent = agent_for(server, max_attempts=3, backoff_seconds=0.5)
        with pytest.raises(ModelUnavailable) as raised:
            ask(agent)
    assert len(server.requests) == 3 and server.remaining == 0
    assert type(raised.value) is ModelUnavailable
    message = str(raised.value)
    assert "server busy" in message and "3 attempt" in message and server.url in message
    assert "--ollama-url" in message and "/oriole/ollama/endpoint" in message
    delays = agent.http.backoff.sleep
    assert len(delays) == 2 and 0 <= delays[0] <= 0.5 and 0 <= delays[1] <= 1.0  # full jitter, the cap doubles


def test_a_refused_connection_is_model_unavailable_after_max_attempts():
    url = closed_port_url()
    sleeps = Sleeps()
    agent = OllamaAgent(MODEL, url, OPTIONS, 5.0, max_attempts=2, sleep=sleeps)
    with pytest.raises(ModelUnavailable) as raised:
        ask(agent)
    assert type(raised.value) is ModelUnavailable
    assert url in str(raised.value) and "2 attempt" in str(raised.value) and "running" in str(raised.value)
    assert len(sleeps) == 1


def test_a_response_slower_than_the_timeout_is_model_timeout_without_retry():
    with ScriptedOllama(slow(1.0, text_reply("too late")), text_reply("never asked")) as server:
        agent = agent_for(server, timeout_seconds=0.3)
        started = time.monotonic()
        with pytest.raises(ModelTimeout) as raised:
            ask(agent)
        elapsed = time.monotonic() - started
    assert elapsed < 0.9
    assert len(server.requests) == 1 and agent.http.backoff.sleep == []
    message = str(raised.value)
    assert server.url in message and MODEL in message and "0.3 s" in message


class SteppedClock:
    """A clock that returns the given readings, then keeps returning the last one."""

    def __init__(self, *readings: float):
        self.readings = list(readings)

    def __call__(self) -> float:
        return self.readings.pop(0) if len(self.readings) > 1 else self.readings[0]


def test_latency_is_the_wall_time_of_the_http_call():
    with ScriptedOllama(text_reply("ok")) as server:
        response = ask(agent_for(server, clock=SteppedClock(100.0, 100.25)))
    assert response.usage.latency_ms == 250


def test_a_body_that_completes_after_the_deadline_is_a_timeout():
    """A body complete only after the request's time is up is a timeout (test_hostile_input: a trickling server)."""
    with ScriptedOllama(text_reply("late"), text_reply("never asked")) as server:
        agent = agent_for(server, timeout_seconds=2.0, clock=SteppedClock(0.0, 2.5))
        with pytest.raises(ModelTimeout):
            ask(agent)
    assert len(server.requests) == 1 and agent.http.backoff.sleep == []


def test_a_model_ollama_does_not_have_is_rejected_with_its_message_and_not_retried():
    with ScriptedOllama(error(404, f"model '{MODEL}' not found"), text_reply("unused")) as server:
        agent = agent_for(server)
        with pytest.raises(ModelRequestRejected) as raised:
            ask(agent)
    assert f"model '{MODEL}' not found" in str(raised.value) and "404" in str(raised.value)
    assert len(server.requests) == 1 and agent.http.backoff.sleep == []


def test_rate_limiting_is_a_throttle_the_state_machine_retries():
    with ScriptedOllama(error(429, "too many requests"), text_reply("unused")) as server:
        agent = agent_for(server)
        with pytest.raises(ModelThrottled, match="too many requests"):
            ask(agent)
    assert len(server.requests) == 1


def test_a_body_that_is_not_json_is_an_invalid_response():
    with ScriptedOllama((200, b"<html>proxy error</html>")) as server, pytest.raises(InvalidModelResponse) as raised:
        ask(agent_for(server))
    assert "<html>proxy error</html>" in str(raised.value)


def test_a_json_body_without_a_message_is_an_invalid_response():
    with ScriptedOllama((200, b'{"error": "unexpected EOF"}')) as server, pytest.raises(InvalidModelResponse) as raised:
        ask(agent_for(server))
    assert "unexpected EOF" in str(raised.value)


# --- one real turn ---------------------------------------------------------------------------------------------


def _moves(path: list[tuple[int, int]]) -> list[str]:
    by_step = {step: f"move_{name}" for name, step in DIRECTIONS.items()}
    return [by_step[(b[0] - a[0], b[1] - a[1])] for a, b in itertools.pairwise(path)]


def test_a_turn_of_the_shared_loop_walks_the_shortest_path_through_ollama():
    maze = get_maze("perfect-7").maze
    path = maze.shortest_path()
    moves = _moves(path)
    game = Rules(maze, vision_range=3, goal_condition="reach", recall_interval=10, max_recall_actions=50)
    world = WorldState(position=maze.start)
    context = turn_context(world, game, [], max_actions=100)
    script = [tool_calls((moves[0], {"reasoning": "first"}))]
    script += [tool_calls(*[(m, {}) for m in moves[i : i + 3]]) for i in range(1, len(moves), 3)]
    with ScriptedOllama(*script) as server:
        outcome = run_turn(
            agent_for(server),
            "Find the goal.",
            world,
            game,
            RecallWindow(50),
            context,
            TurnSettings(budget=len(moves) + 5, actions_left=100),
        )
    assert outcome.end_reason == "goal_found"
    assert [a.tool_name for a in outcome.actions] == moves
    assert [a.to_pos for a in outcome.actions] == path[1:] and world.position == maze.goal
    assert all(a.success for a in outcome.actions)
    assert len(server.requests) == len(script) and server.remaining == 0
    assert outcome.usage.input_tokens == 120 * len(script)
    first, second = server.requests[0].body["messages"], server.requests[1].body["messages"]
    assert [m["role"] for m in first] == ["system", "user"]
    assert first[0]["content"] == "Find the goal." and json.loads(first[1]["content"]) == context
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    assert second[2]["tool_calls"] == [{"function": {"name": moves[0], "arguments": {"reasoning": "first"}}}]
    assert second[3]["tool_name"] == moves[0]
    assert json.loads(second[3]["content"]) == {
        **outcome.actions[0].result,
        "actions_left_in_turn": len(moves) + 4,
        "actions_left": 99,
    }
    assert json.loads(second[3]["content"])["position"] == list(path[1])
