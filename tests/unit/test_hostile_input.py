"""Hostile input at each boundary, without a database (issues 14 and 26): each class of input is refused with a
named error or made harmless, whatever the value; the integration tests run the same classes through the state
machine, the CLI and PostgreSQL."""

from __future__ import annotations

import csv
import io
import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oriole import catalog
from oriole.catalog import BY_KEY, CATALOG
from oriole.config import parse_assignment, parse_pricing, parse_stored, resolve
from oriole.core import mazeset, progress, sweep_plan
from oriole.core.mazeset import get_maze
from oriole.core.text_tool_calls import parse_tool_calls
from oriole.core.tools import TOOL_SPECS, RecallWindow, ToolCall, WorldState, execute, model_call
from oriole.core.turn import ExperimentState, Turn, TurnState
from oriole.core.turn_loop import Message, ModelRequest, ModelResponse, Usage
from oriole.errors import (
    InvalidConfig,
    InvalidExecutionInput,
    InvalidModelResponse,
    InvalidParameter,
    ModelRequestRejected,
    ModelUnavailable,
    OrioleError,
    SweepFileError,
    UnknownMaze,
)
from oriole.experiment_config import ExperimentConfig
from oriole.inputs import ExecutionInput, parse
from oriole.lifecycle.experiments import failure_reason
from oriole.lifecycle.task_io import CaughtError
from oriole.providers import bedrock
from oriole.providers import ollama as ollama_provider
from oriole.providers import openai as openai_provider
from oriole.providers.ollama import OllamaAgent
from oriole.providers.transport import MAX_RESPONSE_BYTES
from oriole.providers.wire import MAX_TOKENS_PER_CALL
from oriole.store.turn_rows import COLUMNS, turn_write
from oriole.text import (
    MAX_MESSAGE_CHARS,
    _has_unstorable,
    _has_unstorable_walk,
    escaped,
    replaced,
    unescape,
    unstorable,
)
from oriole_workstation import prompts, sweep_runs
from oriole_workstation.analysis import GroupRow
from oriole_workstation.display import csv_safe, terminal_safe
from oriole_workstation.report import as_csv, as_table
from tests.ollama_server import ScriptedOllama, error
from tests.scripted_server import trickle

HOSTILE_TEXT = ["nul \x00 inside", "\ud800 lone high", "lone low \udfff", "\\u0000 looks escaped \\", "\x00\ud83d"]


# --- class 3: text the database refuses -------------------------------------------------------------------


@pytest.mark.parametrize("text", [*HOSTILE_TEXT, "plain", "emoji \U0001f600 and \\ backslash", ""])
def test_an_escaped_row_gives_back_every_string_exactly(text):
    row = {"text": text, "nested": [{"key " + text: text}], "n": 3, "none": None, "other": "a \\ b"}
    stored, altered = escaped(row)
    assert altered == (unstorable(json.dumps(row, ensure_ascii=False)) is not None or unstorable(text) is not None)
    flat = json.dumps(stored)
    assert "\\u0000" not in flat.replace("\\\\u0000", "") and not any(0xD800 <= ord(c) <= 0xDFFF for c in flat)
    if altered:
        assert unstorable(json.dumps(stored, ensure_ascii=False)) is None
        assert unescape(stored["text"]) == text and unescape(stored["other"]) == "a \\ b"
        assert [unescape(k) for k in stored["nested"][0]] == ["key " + text]
    else:
        assert stored is row


_HOSTILE_CHARS = st.sampled_from(["\x00", "\ud800", "\udfff", "\\", "\\u0000", "u0000", "\x01", "\U0001f600", "a"])
_TEXT = st.lists(_HOSTILE_CHARS | st.characters(), max_size=6).map("".join)
_LEAF = _TEXT | st.integers() | st.floats() | st.booleans() | st.none()
_KEY = _TEXT | st.integers() | st.floats()
JSONISH = st.recursive(
    _LEAF, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner) | st.dictionaries(_KEY, inner, max_size=4)
)


@given(JSONISH)
def test_the_encoder_s_answer_on_what_cannot_be_stored_is_the_walk_s(value):
    """The fast check (one JSON encoding of the row) answers exactly as the walk over every string, key and number,
    NULs, lone surrogates, backslashes that look like escapes and non-finite numbers included."""
    assert _has_unstorable(value) == _has_unstorable_walk(value)


def test_replaced_keeps_a_readable_copy():
    assert replaced({"reasoning": "go \x00 east \ud800"}) == {"reasoning": "go \ufffd east \ufffd"}
    clean = {"reasoning": "fine"}
    assert replaced(clean) is clean


class Hostile:
    """An agent that answers with text no database column accepts as it is, then walks east."""

    context_budget = None
    settings = MappingProxyType({})  # sends nothing beyond the conversation

    def respond(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(
            tool_calls=(
                ToolCall("move_east", {"reasoning": "east \x00 \ud800"}),
                ToolCall("move\x00diag", {"reasoning": "?"}),
            ),
            text="text \x00",
            thinking="\udfff" * 3,
            stop_reason="stop\x00",
        )


def turn_state(**config) -> TurnState:
    """An ollama experiment's state at its start, on perfect-7 at (1, 1), with its ``config`` overrides."""
    experiment = {column: 0 for column in COLUMNS} | {
        "status": "running",
        "maze_id": 101,
        "llm_provider": "ollama",
        "model_name": "m",
        "prompt_text": "p",
        "config": ExperimentConfig.of(resolve({}, {"maxActionsPerTurn": 2} | config)),
        "agent_state": {},
        "moves_at_last_recall": None,
        "goal_found": False,
        "goal_first_seen_step": None,
        "goal_reached_step": None,
        "current_x": 1,
        "current_y": 1,
        "gave_up_reason": None,
        "memory": {},
    }
    return TurnState(ExperimentState(**experiment), ())


RULES = Turn(turn_state(), get_maze("perfect-7").maze).rules


def test_a_turn_with_unstorable_model_text_keeps_every_action_and_stores_it_recoverably():
    state = turn_state()
    played = Turn(state, get_maze("perfect-7").maze).play(Hostile())
    write = turn_write(state, played, datetime.now(UTC))
    assert [a["action_type"] for a in write.actions] == ["move_east", "invalid"]
    assert write.actions[0]["reasoning"] == "east \ufffd \ufffd" and write.actions[1]["tool_name"] == "move\ufffddiag"
    [call] = write.calls
    assert call["response"]["escaped"] is True
    assert unescape(call["response"]["text"]) == "text \x00" and unescape(call["stop_reason"]) == "stop\x00"
    assert unescape(call["response"]["tool_calls"][0]["arguments"]["reasoning"]) == "east \x00 \ud800"
    for rows in (write.actions, write.calls):
        assert unstorable(json.dumps(rows, ensure_ascii=False)) is None
    # what the commit sends is the rows as made storable, encoded once
    sent = {name: json.loads(text) for name, text in write.encoded.items()}
    assert sent == {"actions": write.actions, "calls": write.calls, "parts": write.parts}
    assert all(unstorable(text) is None for text in write.encoded.values())


class Plain(Hostile):
    """An agent whose text every column accepts as it is (non-ASCII included): it walks east."""

    def respond(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse(tool_calls=(ToolCall("move_east", {"reasoning": "est \u00e9 \u2192"}),), text="\u00e9")


def test_a_storable_turn_sends_the_text_its_check_encoded():
    state = turn_state()
    played = Turn(state, get_maze("perfect-7").maze).play(Plain())
    write = turn_write(state, played, datetime.now(UTC))
    for name, rows in (("actions", write.actions), ("calls", write.calls), ("parts", write.parts)):
        assert write.encoded[name] == json.dumps(rows, ensure_ascii=False, allow_nan=False)


@pytest.mark.parametrize(
    "field, value",
    [
        ("modelName", "qwen\x00"),
        ("modelName", "qwen\ud800"),
        ("modelName", "qwen\x1b[2J"),
        ("modelName", "a\u202eb"),
        ("agentId", "run\x00"),
        ("agentId", "run\n2"),
        ("comment", "note \x00"),
        ("comment", "note \udc80"),
        ("mazeId", "perfect-7\x00"),
        ("promptVersion", "v1\x00"),
    ],
)
def test_an_input_with_characters_that_cannot_be_stored_or_shown_is_refused(field, value):
    data = {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "random", field: value}
    with pytest.raises(InvalidExecutionInput, match=field):
        parse(ExecutionInput, data, "execution input")


def test_a_comment_may_span_lines():
    data = {"mazeId": "perfect-7", "modelName": "m", "comment": "line one\n\tline two"}
    assert parse(ExecutionInput, data, "execution input").comment == "line one\n\tline two"


# --- class 1: endpoints, bodies, error texts --------------------------------------------------------------


@pytest.mark.parametrize(
    "endpoint",
    [
        "file:///etc/passwd",
        "FILE:///etc/hostname",
        "ftp://host/x",
        "data:text/plain,hi",
        "gopher://host:70",
        "localhost:11434",
        "//host:11434",
        "http://",
        "http:///path",
        "https://host:99999",
        "http://host:port",
        "http://ho st:11434",
        "http://host\x00:11434",
        "http://host/\x1b[2J",
        "http://host/?q=1",
        "http://host/#frag",
        "http://[::1",
        "http://" + "a" * 2100,
    ],
)
def test_only_an_http_or_https_base_url_with_a_host_is_an_endpoint(endpoint):
    with pytest.raises(InvalidConfig, match=r"config\.endpoint"):
        resolve({}, {"endpoint": endpoint})
    with pytest.raises(InvalidConfig):
        parse_assignment(f"endpoint={endpoint}")
    with pytest.raises(InvalidParameter, match="/oriole/ollama/endpoint"):
        parse_stored(BY_KEY["endpoint"], endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://localhost:11434",
        "https://ollama.example.org",
        "http://10.0.0.5:11434/",
        "http://[::1]:11434",
        "HTTPS://Host.Example:443/ollama",
    ],
)
def test_ordinary_endpoints_are_accepted(endpoint):
    assert resolve({}, {"endpoint": endpoint})["endpoint"] == endpoint


def test_every_text_setting_is_bounded():
    for param in CATALOG:
        if param.type is str:
            assert param.choices or param.max_length, param.name


def test_the_http_client_opens_no_file_url_even_when_given_one(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text('{"message": {"content": "TOP-SECRET-CONTENT"}}')
    agent = OllamaAgent("m", f"file://{secret}", {}, timeout_seconds=2, max_attempts=1)
    with pytest.raises(ModelUnavailable) as raised:
        agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))
    assert "TOP-SECRET" not in str(raised.value) and "unknown url type" in str(raised.value)


def test_a_redirect_is_not_followed(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("TOP-SECRET-CONTENT")

    class Redirect(BaseHTTPRequestHandler):
        def do_POST(self):
            self.send_response(307)
            self.send_header("Location", f"file://{secret}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent = OllamaAgent("m", f"http://127.0.0.1:{server.server_address[1]}", {}, timeout_seconds=2)
        with pytest.raises(ModelRequestRejected, match="HTTP 307") as raised:
            agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))
    finally:
        server.shutdown()
    assert "TOP-SECRET" not in str(raised.value)


def ask(server: ScriptedOllama) -> ModelResponse:
    agent = OllamaAgent("m", server.url, {}, timeout_seconds=10, max_attempts=1)
    return agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))


def test_a_body_over_the_bound_is_refused_without_reading_the_rest():
    body = json.dumps({"message": {"content": "x" * (MAX_RESPONSE_BYTES + 1)}}).encode()
    with ScriptedOllama((200, body)) as server, pytest.raises(InvalidModelResponse, match="more than 4,194,304 bytes"):
        ask(server)


def test_a_huge_error_text_is_quoted_short():
    with (
        ScriptedOllama(error(400, "no such model " + "\x1b[2J" * 200_000)) as server,
        pytest.raises(ModelRequestRejected) as raised,
    ):
        ask(server)
    assert len(str(raised.value)) < 600


def test_every_named_error_and_every_failure_reason_is_bounded():
    assert len(str(ModelRequestRejected("x" * 1_000_000))) <= MAX_MESSAGE_CHARS
    cause = json.dumps({"errorType": "X", "errorMessage": "y" * 1_000_000, "stackTrace": ["z"] * 1000})
    reason = failure_reason(CaughtError(Error="X", Cause=cause))
    assert reason.startswith("X: yyy") and len(reason) <= MAX_MESSAGE_CHARS and "stackTrace" not in reason
    assert unstorable(failure_reason(CaughtError(Error="X", Cause="bad \x00 \ud800"))) is None


@pytest.mark.parametrize("raw", [b"[" * 100_000, b'{"message": ' * 50_000])
def test_a_body_nested_past_the_parser_is_an_invalid_response(raw):
    with pytest.raises(InvalidModelResponse):
        ollama_provider.parse_response(raw, 1)


# --- issue 26, class 2: credentials never travel or persist ------------------------------------------------

SECRET = "sk-test-SECRET-0123456789"
URL_TRICKS = [  # each would send a request, or a credential, somewhere other than the host a reader sees
    f"http://user:{SECRET}@127.0.0.1:11434",
    f"https://{SECRET}@ollama.example.org",
    "http://good\\@evil.example",
    "http://good.example\\.evil.example",
    "http://evil.example#@good.example",
    "http://evil.example?@good.example",
    f"http://u:{SECRET}/x@good.example",
    "http://%65vil.example",
    "http://evil%2eexample",
    "http://[fe80::1%25eth0]:11434",
    "http://[fe80::1%eth0]",
    "http://ollama.example\t.org",
    "http://ollama .example",
    "http://\uff4fllama.example",
    "http://ollama.example\u3002org",
    "http://[::1",
    "http://[::g]",
    "http://host:0",
    "http://host:65536",
    "http://host:11434:1",
    "http://-host",
    f"http://{SECRET}:{SECRET}@",
    "http://host/?",
    "http://host/#",
    "http://host/%zz",
    "http://host/a b",
]


@pytest.mark.parametrize("url", URL_TRICKS)
def test_a_url_with_credentials_or_a_parser_trick_is_refused_everywhere_without_quoting_a_password(url):
    raised = []
    for attempt in (
        lambda: resolve({}, {"endpoint": url}),
        lambda: resolve({}, {"baseUrl": url + "/v1"}),
        lambda: parse_assignment(f"endpoint={url}"),
        lambda: parse_stored(BY_KEY["baseUrl"], url),
    ):
        with pytest.raises((InvalidConfig, InvalidParameter)) as error:
            attempt()
        raised.append(str(error.value))
    assert all(SECRET not in message for message in raised), raised


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:11434",
        "https://ollama.example.org/",
        "http://10.0.0.5:11434",
        "http://[::1]:11434",
        "http://[2001:db8::1]/ollama",
        "HTTPS://Host.Example:443/v1",
        "https://api.example/v1/a%20b",
        "http://xn--bcher-kva.example",
    ],
)
def test_an_ordinary_base_url_is_accepted(url):
    assert resolve({}, {"baseUrl": url})["baseUrl"] == url


@pytest.mark.parametrize(
    "key, kind",
    [
        ("sk-abc\n", "a control character at position 7 of 7"),
        ("sk-\x00abc", "a control character"),
        ("sk-\x1b[2Jabc", "a control character"),
        ("sk-\x85abc", "a control character"),
        ("sk-\u2028abc", "a control character"),
        ("sk-ключ", "a character beyond Latin-1"),
        ("sk-\U0001f511", "a character beyond Latin-1"),
    ],
)
def test_an_api_key_no_header_can_carry_is_refused_without_quoting_it(key, kind):
    from oriole.errors import InvalidApiKey

    with pytest.raises(InvalidApiKey, match="the Ollama API key holds " + kind) as raised:
        OllamaAgent("m", "http://127.0.0.1:1", {}, timeout_seconds=1, api_key=key)
    assert key not in str(raised.value) and key.strip() not in str(raised.value)
    assert OllamaAgent("m", "http://127.0.0.1:1", {}, timeout_seconds=1, api_key="sk-café").http.api_key


ECHOES = {  # what a hostile server may send back, each quoting the key it was sent
    "error body": (
        401,
        json.dumps({"error": {"message": f"Incorrect API key: Bearer {SECRET}", "code": 401}}).encode(),
    ),
    "5xx body": (503, f"upstream refused Authorization: Bearer {SECRET}".encode()),
    "redirect": (307, SECRET.encode(), {"Location": f"http://127.0.0.1:1/steal?key={SECRET}"}),
    "Retry-After": (429, b"{}", {"Retry-After": f"Bearer {SECRET}"}),
    "body not JSON": (200, f"Authorization: Bearer {SECRET}".encode()),
    "answer": (
        200,
        json.dumps(
            {
                "message": {
                    "content": f"your key is {SECRET}",
                    "thinking": SECRET,
                    "tool_calls": [{"function": {"name": "move_east", "arguments": {"reasoning": SECRET}}}],
                }
            }
        ).encode(),
    ),
    "status line": trickle(0, [f"HTTP/1.1 200 {SECRET}\r\nBearer: {SECRET}\r\n\r\n{{}}".encode()]),
    "bad status line": trickle(0, [f"HTTP/1.1 2 Bearer {SECRET}\r\n\r\n".encode()]),
}


@pytest.mark.parametrize("echo", sorted(ECHOES))
def test_a_key_a_server_echoes_never_reaches_a_message_or_an_answer(echo):
    with ScriptedOllama(*[ECHOES[echo]] * 3) as server:
        agent = OllamaAgent(
            "m", server.url, {}, timeout_seconds=5, api_key=SECRET, max_attempts=3, sleep=lambda seconds: None
        )
        try:
            shown = repr(agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),))))
        except OrioleError as error:
            shown = str(error)
        assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in shown and "SECRET" not in shown, shown
    if echo == "answer":
        assert "your key is [API key]" in shown


def test_a_key_echoed_as_json_escapes_it_is_scrubbed_too():
    key = 'sk-"quoted"\\back-caf\u00e9'
    for ensure_ascii in (True, False):
        body = json.dumps({"error": f"bad key {key}"}, ensure_ascii=ensure_ascii).encode()
        with ScriptedOllama((401, body)) as server:
            agent = OllamaAgent("m", server.url, {}, timeout_seconds=5, api_key=key, max_attempts=1)
            with pytest.raises(ModelRequestRejected) as raised:
                agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))
        assert "bad key [API key]" in str(raised.value) and "quoted" not in str(raised.value)
        answer = json.dumps({"message": {"content": f"echo {key}"}}, ensure_ascii=ensure_ascii).encode()
        with ScriptedOllama((200, answer)) as server:
            agent = OllamaAgent("m", server.url, {}, timeout_seconds=5, api_key=key, max_attempts=1)
            assert agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),))).text == "echo [API key]"


# --- issue 26, class 3: a model's answer cannot end an experiment --------------------------------------------


def nested(depth: int, leaf: object = 1) -> dict:
    """``{"a": {"a": ... leaf}}``, built without recursion."""
    value: object = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


FLOODS = {  # text a model may write with text tool calls on, each read from every bracket it holds
    "[ flood": "[" * 4_000_000,
    "{ flood": "{" * 4_000_000,
    "string flood": '["' * 2_000_000,
    "key flood": '{"a":' * 800_000,
    "list flood": "[1," * 1_300_000,
    "deep arguments": '<tool_call>{"name": "move_east", "arguments": '
    + '{"a":' * 3000
    + "1"
    + "}" * 3001
    + "</tool_call>",
    "huge number": '<tool_call>{"name": "move_east", "arguments": {"reasoning": 1' + "0" * 50_000 + "}}</tool_call>",
    "huge exponent": '<tool_call>{"name": "move_east", "arguments": {"reasoning": 1e999999}}</tool_call>',
    "many calls": '<tool_call>{"name": "move_east"}</tool_call>\n' * 200_000,
    "opening tags": "<tool_call>\n" * 1_000_000,
    "tags and brackets": "<tool_call>" + "[" * 4_000_000,
    "closing tags": "</tool_call>\n" * 1_000_000,
    "fences": "```\n" * 1_000_000,
}


@pytest.mark.parametrize("flood", sorted(FLOODS))
def test_reading_text_tool_calls_is_bounded_whatever_the_text(flood):
    from oriole.core.text_tool_calls import MAX_CALLS

    started = time.process_time()  # the work done, which other processes on a busy machine do not inflate
    calls = parse_tool_calls(FLOODS[flood])
    assert time.process_time() - started < 2 and len(calls) <= MAX_CALLS
    for call in calls:  # each is a call the loop answers: valid, or invalid with a reason
        record = execute(call, WorldState((1, 1)), RULES, RecallWindow(5))
        assert record.action_type in ("move_east", "invalid")


class Nested:
    """An agent whose calls carry arguments no schema allows: nested past any recursion, absurd numbers."""

    context_budget = None
    settings = MappingProxyType({})
    answered = False

    def respond(self, request: ModelRequest) -> ModelResponse:
        if self.answered:
            return ModelResponse(text="done")
        self.answered = True
        return ModelResponse(
            tool_calls=(
                model_call("move_east", nested(50_000)),
                model_call("move_east", json.loads("[" * 20 + "]" * 20)),
                model_call("move_east", {"reasoning": float("inf")}),
                model_call("move_east", '{"reasoning": 1' + "0" * 10_000 + "}"),
                model_call("move_east", "[" * 100_000),
            ),
            text="[" * 100_000,
            usage=Usage(1, 1, 1),
            durations={},
        )


def test_arguments_nested_past_any_recursion_or_absurd_numbers_are_invalid_calls_and_the_turn_is_written():
    state = turn_state(maxActionsPerTurn=8, circuitBreakerThreshold=8)
    played = Turn(state, get_maze("perfect-7").maze).play(Nested())
    outcome = played.outcome
    errors = [action.error for action in outcome.actions]
    assert [action.action_type for action in outcome.actions] == ["invalid"] * 5
    assert errors[0] == errors[1] == errors[4] and "nest deeper than 16 levels" in errors[0]
    assert errors[2] == errors[3] == "'reasoning' must be a string"  # a number of 10,001 digits is still a number
    write = turn_write(state, played, datetime.now(UTC))  # escaping, estimating: all bounded
    assert json.dumps(write.calls, default=str) and write.turn["action_count"] == 5


def ollama_call_body(arguments: str) -> bytes:
    return (
        '{"message": {"content": "", "tool_calls": [{"function": {"name": "move_east", "arguments": '
        + arguments
        + "}}]}}"
    ).encode()


@pytest.mark.parametrize("depth", [17, 60, 95])
def test_a_native_call_with_deeply_nested_arguments_is_an_invalid_call_not_a_failed_answer(depth):
    arguments = '{"a":' * (depth - 1) + "[1]" + "}" * (depth - 1)
    [call] = ollama_provider.parse_response(ollama_call_body(arguments), 1).tool_calls
    assert call.arguments is None and "nest deeper than 16" in call.problem


def nested_json(depth: int, rng: random.Random) -> str:
    """JSON ``depth`` levels deep, objects and lists mixed at random."""
    opened = [rng.choice(("[", '{"k":')) for _ in range(depth)]
    return "".join(opened) + "1" + "".join("]" if o == "[" else "}" for o in reversed(opened))


def at_stack_depth(frames: int, call):
    """``call()`` run ``frames`` Python frames deeper than here (how deep a caller already is must not matter)."""
    return call() if frames == 0 else at_stack_depth(frames - 1, call)


@pytest.mark.parametrize("seed", range(4))
def test_how_deep_an_answer_may_nest_does_not_depend_on_the_stack_it_is_read_from(seed):
    rng = random.Random(seed)
    deep = ollama_call_body(nested_json(rng.randint(101, 3000), rng))
    for frames in (0, 300, 700):
        with pytest.raises(InvalidModelResponse, match="Ollama answered with JSON nested deeper than 100 levels"):
            at_stack_depth(frames, lambda: ollama_provider.parse_response(deep, 1))
    near = ollama_call_body(nested_json(rng.randint(10, 94), rng))
    for frames in (0, 300, 700):
        [call] = at_stack_depth(frames, lambda: ollama_provider.parse_response(near, 1)).tool_calls
        assert call.problem is None or "nest deeper than 16" in call.problem
    text = nested_json(rng.randint(65, 3000), rng)
    written = '<tool_call>{"name": "move_east", "arguments": ' + text + "}</tool_call>"
    for frames in (0, 300, 700):  # a text tool call nested past the limit is a near miss, however deep the stack
        [call] = at_stack_depth(frames, lambda: parse_tool_calls(written))
        assert call.arguments is None and "nested deeper than" in (call.problem or "")


@pytest.mark.parametrize("arguments", ['{"a":' * 900 + "1" + "}" * 900, "[" * 900 + "]" * 900])
def test_arguments_nested_past_the_answers_depth_are_refused_by_name_or_an_invalid_call(arguments):
    with pytest.raises(InvalidModelResponse, match="nested deeper than 100 levels"):
        ollama_provider.parse_response(ollama_call_body(arguments), 1)
    openai_body = (
        '{"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": '
        '"move_east", "arguments": ' + json.dumps(arguments) + "}}]}}]}"
    ).encode()
    [call] = openai_provider.parse_response(openai_body, 1).tool_calls
    assert execute(call, WorldState((1, 1)), RULES, RecallWindow(5)).action_type == "invalid"
    [call] = bedrock.parse_response(
        {
            "output": {
                "message": {"content": [{"toolUse": {"name": "move_east", "toolUseId": "t", "input": nested(5000)}}]}
            }
        }
    ).tool_calls
    assert call.problem and call.arguments is None


def test_absurd_numbers_in_an_answer_are_refused_or_left_out_never_a_crash():
    huge = "1" + "0" * 100_000
    body = (
        '{"message": {"content": "", "tool_calls": [{"function": {"name": "move_east", "arguments": '
        '{"reasoning": '
        + huge
        + '}}}]}, "eval_count": 3, "total_duration": '
        + huge
        + ', "load_duration": '
        + str(10**30)
        + ', "eval_duration": 1e999999, "prompt_eval_duration": 1500}'
    ).encode()
    parsed = ollama_provider.parse_response(body, 1)
    assert parsed.durations == {"prompt_eval_duration": 1500}  # an absurd duration is left out
    assert parsed.tool_calls[0].arguments == {"reasoning": float("inf")}
    with pytest.raises(InvalidModelResponse, match="eval_count"):
        ollama_provider.parse_response(b'{"message": {"content": "x"}, "eval_count": ' + huge.encode() + b"}", 1)
    with pytest.raises(InvalidModelResponse, match="without a tool name"):
        bedrock.parse_response({"output": {"message": {"content": [{"toolUse": nested(5000)}]}}})


# --- issue 26, class 4: numbers are numbers ----------------------------------------------------------------

NOT_INTEGERS = [
    "\u0661\u0662",
    "\uff11\uff12",
    "\u0967\u0968",
    "1_000",
    "12.0",
    "1e3",
    "true",
    "0x10",
    "12abc",
    "",
    "\u00b2",
    "9" * 120,
]
NOT_NUMBERS = ["\u0661.\u0665", "\uff11.5", "1_0.5", "0x1p3", "true", "1,5", "", "--1", "1e", ".", "\u2212" + "1"]


@pytest.mark.parametrize("text", NOT_INTEGERS)
def test_an_integer_setting_refuses_what_int_would_take_but_a_researcher_never_means(text):
    with pytest.raises(InvalidConfig, match=r"config maxMoves must be an integer from 1 to 1000000"):
        parse_assignment(f"maxMoves={text}")
    with pytest.raises(InvalidParameter, match=r"not an integer from 1 to 1000000"):
        parse_stored(BY_KEY["maxMoves"], text)


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_a_number_setting_refuses_what_float_would_take_but_a_researcher_never_means(text):
    with pytest.raises(InvalidConfig, match=r"config temperature must be a number from 0 to 2"):
        parse_assignment(f"temperature={text}")


@pytest.mark.parametrize(
    "key, value",
    [
        ("maxMoves", True),
        ("maxMoves", 12.0),
        ("maxMoves", "12"),
        ("seed", 2**31),
        ("temperature", "0.5"),
        ("temperature", False),
        ("seed", -2),
    ],
)
def test_an_override_of_the_wrong_type_or_range_says_the_range(key, value):
    param = BY_KEY[key]
    with pytest.raises(InvalidConfig, match=f"from {param.minimum:.15g} to {param.maximum:.15g}"):
        resolve({}, {key: value})


@pytest.mark.parametrize(
    "text",
    [
        '{"inputPerMTok": "3", "outputPerMTok": 1}',
        '{"inputPerMTok": true, "outputPerMTok": 1}',
        '{"inputPerMTok": "\u0663", "outputPerMTok": 1}',
        '{"inputPerMTok": 3}',
        '{"inputPerMTok": 3, "outputPerMTok": 1, "cachePerMTok": 0.1}',
        '{"inputPerMTok": [3], "outputPerMTok": 1}',
        '{"inputPerMtok": 3, "outputPerMTok": 1}',
        '{"inputPerMTok": null, "outputPerMTok": 1}',
        '"3"',
        "3",
    ],
)
def test_a_price_is_a_json_number_under_its_own_name(text):
    with pytest.raises(InvalidParameter, match="must be JSON with two numbers"):
        parse_pricing("/oriole/pricing/m", text)
    assert parse_pricing("/oriole/pricing/m", '{"inputPerMTok": 3, "outputPerMTok": 0.5}') == {
        "inputPerMTok": 3.0,
        "outputPerMTok": 0.5,
    }


@pytest.mark.parametrize(
    "field",
    [
        'repetitions = "3"',
        "repetitions = true",
        "repetitions = 3.0",
        'concurrency = "2"',
        "concurrency = 2.5",
        "provider_concurrency = { baseline = true }",
        'spend_limit_usd = "5"',
        "spend_limit_usd = true",
        "mazes = [true]",
        'mazes = [{ family = "perfect", size = "11", samples = 2 }]',
        'mazes = [{ family = "perfect", size = 11.0, samples = 2 }]',
        "prompts = [1]",
        "agents = [1]",
    ],
)
def test_a_sweep_file_number_is_a_number_and_a_name_a_string(tmp_path, field):
    text = (
        'id = "s"\n'
        + field
        + "\n"
        + "".join(
            line + "\n"
            for line in ('agents = ["baseline/oracle"]', 'mazes = ["perfect-7"]')
            if line.split(" ")[0] != field.split(" ")[0]
        )
    )
    with pytest.raises(SweepFileError, match=field.split(" ")[0]):
        sweep_plan.plan(sweep_runs.load(sweep_file(tmp_path, text)))


@pytest.mark.parametrize("name", ["\u0661\u0660\u0661", "\uff11\uff10\uff11", "+101", "101.0", " 101"])
def test_a_maze_id_is_written_in_ascii_digits(name):
    with pytest.raises(UnknownMaze):
        get_maze(name)
    assert get_maze("101").id == 101


def test_a_seeded_name_says_the_range_of_its_seed():
    with pytest.raises(
        UnknownMaze,
        match="seed of 'perfect-11@1000000000000000000' must be a whole number from 0 to 999,999,999,999,999,999",
    ):
        mazeset.seeded("perfect-11@1000000000000000000")
    with pytest.raises(UnknownMaze, match="perfect mazes are 5 to 201 tiles wide"):
        mazeset.seeded("perfect-99999@1")


# --- issue 26, class 5: sweeps deduplicate what is the same, and plan in bounded time ---------------------------


@pytest.mark.parametrize(
    "mazes, configs",
    [
        (["perfect-11@07", "perfect-11@7"], [{}]),
        (["perfect-011@7", "perfect-11@0007"], [{}]),
        (["perfect-7", "101"], [{}]),
        (["perfect-7", 101], [{}]),
        (["perfect-7"], [{"temperature": 0.0}, {"temperature": -0.0}]),
        (["perfect-7"], [{"temperature": 1}, {"temperature": 1.0}]),
        (["perfect-7"], [{"endpoint": "http://Ollama.Example:80/"}, {"endpoint": "http://ollama.example"}]),
        (["perfect-7"], [{"baseUrl": "https://gpu.example:443/v1/"}, {"baseUrl": "HTTPS://GPU.example/v1"}]),
    ],
)
def test_the_same_maze_or_configuration_written_twice_comes_out_twice(mazes, configs):
    agent = "openai/q" if "baseUrl" in configs[0] else "ollama/q"
    spec = sweep_plan.SweepFile.model_validate({"id": "s", "agents": [agent], "mazes": mazes, "configs": configs})
    with pytest.raises(SweepFileError, match="comes out twice"):
        sweep_plan.plan(spec)


def test_a_sample_passes_over_the_mazes_the_file_names():
    named = get_maze("perfect-7")
    spec = sweep_plan.SweepFile.model_validate(
        {
            "id": "s",
            "agents": ["baseline/oracle"],
            "mazes": [{"family": "perfect", "size": 7, "samples": 13}, "perfect-7"],
        }
    )
    names = sweep_plan.maze_names(spec)
    assert names[-1] == "perfect-7" and len(names) == 14
    assert named.content_hash not in {mazeset.seeded(name).content_hash for name in names[:-1]}


def test_the_largest_sweep_plans_well_inside_the_lambdas_that_plan_it():
    """The measured worst case within every bound: the draw budget spent on the family whose draws cost the most
    per budgeted tile (open-field at 101, measured), and as many cells as a sweep may have, each checked as
    StartExperiment will check it. PlanSweep has 300 s; a map item computing the plan again in a cold container
    has its task's 60 s, on 512 MB (about 1/3.5 of a core)."""
    from infra.functions import TASK_SECONDS, WHOLE_SWEEP_SECONDS

    side = 101
    samples = sweep_plan.MAX_DRAWN_TILES // sweep_plan.DrawBudget._cost(side)
    spec = sweep_plan.SweepFile.model_validate(
        {
            "id": "worst",
            "agents": ["ollama/q"],
            "mazes": [{"family": "open-field", "size": side, "samples": samples}],
            "grid": {"maxMoves": list(range(1, sweep_plan.MAX_EXPERIMENTS // samples + 1))},
        }
    )
    started = time.process_time()  # CPU seconds: what a Lambda's share of a core pays, whatever else runs here
    planned = sweep_plan.plan(spec)
    elapsed = time.process_time() - started
    assert len(planned) > 0.99 * sweep_plan.MAX_EXPERIMENTS
    assert elapsed * 3.5 < min(TASK_SECONDS, WHOLE_SWEEP_SECONDS) * 0.5, elapsed
    with pytest.raises(SweepFileError, match="more than 2,000,000 tiles"):
        sweep_plan.plan(
            spec.model_copy(
                update={
                    "grid": {},
                    "mazes": [sweep_plan.MazeSample(family="open-field", size=side, samples=samples + 1)],
                }
            )
        )


# --- class 2: settings within what the code and the columns hold ------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "temperature=nan",
        "temperature=inf",
        "requestTimeoutSeconds=1e300",
        "maxDurationMinutes=-inf",
        "maxMoves=99999999999",
        "numCtx=-1",
        "seed=2147483648",
        "maxMoves=" + "9" * 5000,
        "endpoint=file:///etc/passwd",
    ],
)
def test_a_cli_assignment_gets_the_checks_of_an_execution_input(text):
    with pytest.raises(InvalidConfig):
        parse_assignment(text)


@pytest.mark.parametrize(
    "key, value", [("temperature", 10**400), ("maxMoves", 2**63), ("requestTimeoutSeconds", 1e300)]
)
def test_a_number_too_large_for_its_setting_is_refused(key, value):
    with pytest.raises(InvalidConfig, match=rf"config\.{key} must be at most"):
        resolve({}, {key: value})


@pytest.mark.parametrize(
    "text",
    [
        '{"inputPerMTok": NaN, "outputPerMTok": 1}',
        '{"inputPerMTok": 1, "outputPerMTok": Infinity}',
        '{"inputPerMTok": 1e300, "outputPerMTok": 1}',
        '{"inputPerMTok": -1, "outputPerMTok": 1}',
        '{"inputPerMTok": 1' + "0" * 400 + "}",
        "[" * 5000,
        '{"inputPerMTok": "nan", "outputPerMTok": 1}',
    ],
)
def test_prices_must_be_finite_and_bounded(text):
    with pytest.raises(InvalidParameter):
        parse_pricing("/oriole/pricing/m", text)


@pytest.mark.parametrize("end", ["minimum", "maximum"])
def test_every_setting_at_its_bound_gives_working_agents_limits_and_timestamps(end, monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    numbers = {p.key: getattr(p, end) for p in CATALOG if p.overridable and p.type in (int, float)}
    config = resolve({}, {"historyMode": "summary", **numbers})  # historyTurns plays a part: its bound is set too
    assert (
        OllamaAgent.from_config("m", ExperimentConfig.of(config)).http.timeout_seconds
        == config["requestTimeoutSeconds"]
    )
    bedrock.runtime_client(config["requestTimeoutSeconds"])
    decided = progress.decide(progress.Progress(False, 0, 1e9, 1), ExperimentConfig.of(config))
    assert decided.decision == "timeout"
    assert datetime.now(UTC) + timedelta(minutes=config["maxDurationMinutes"], seconds=config["requestTimeoutSeconds"])


# --- class 4: numbers a provider should never send ----------------------------------------------------------


@pytest.mark.parametrize("value", [-1, -(10**9), 1.5, 2.0, True, "12", [3], {"n": 1}, MAX_TOKENS_PER_CALL + 1, 10**30])
def test_a_count_that_is_not_a_count_is_an_invalid_response(value):
    body = json.dumps({"message": {"content": "hi"}, "prompt_eval_count": value, "eval_count": 3}).encode()
    with pytest.raises(InvalidModelResponse, match="prompt_eval_count"):
        ollama_provider.parse_response(body, 5)
    converse = {
        "output": {"message": {"content": [{"text": "hi"}]}},
        "usage": {"inputTokens": 1, "outputTokens": value},
        "metrics": {"latencyMs": 3},
    }
    with pytest.raises(InvalidModelResponse, match=r"usage\.outputTokens"):
        bedrock.parse_response(converse)


def test_absent_counts_are_zero_and_durations_that_are_not_counts_are_left_out():
    body = json.dumps(
        {"message": {"content": "hi"}, "eval_count": 7, "total_duration": -5, "eval_duration": "9", "load_duration": 12}
    ).encode()
    parsed = ollama_provider.parse_response(body, 5)
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens) == (0, 7)
    assert parsed.durations == {"load_duration": 12}
    with pytest.raises(InvalidModelResponse, match=r"metrics\.latencyMs"):
        bedrock.parse_response({"output": {"message": {"content": []}}, "metrics": {"latencyMs": -3}})


# --- class 7: the terminal and spreadsheets ----------------------------------------------------------------


def test_control_characters_are_written_out_never_sent_to_the_terminal():
    text = "model\x1b]0;pwned\x07\x1b[2J\r\x9b1m\u202egnp.exe\ud800"
    shown = terminal_safe(text)
    assert shown == "model\\x1b]0;pwned\\x07\\x1b[2J\\x0d\\x9b1m\\u202egnp.exe\\ud800"
    assert terminal_safe("a\nb\tc\x1b", lines=True) == "a\nb\tc\\x1b"


def comparison_row(**fields) -> GroupRow:
    return GroupRow(
        **{
            "llm_provider": "ollama",
            "model_name": "m",
            "agent_label": None,
            "prompt_version": "v1",
            "prompt_hash": "h" * 64,
            "maze_family": "perfect",
            "maze_size": "7x7",
            "mazes": 1,
            "few_mazes": True,
            "maze": None,
            "config": {},
            "all_runs": 1,
            "runs": 1,
            "successes": 1,
            "agent_failures": 0,
            "censored": 0,
            "errors": 0,
            "running": 0,
            "superseded": 0,
            "success_rate": 1,
            "success_rate_low": 0.2,
            "success_rate_high": 1,
            "success_rate_all": 1,
            "success_rate_all_low": 0.2,
            "success_rate_all_high": 1,
            "undecided_share": 0,
            "many_undecided": False,
            "median_actions_to_goal": 8,
            "median_path_length": 8,
            "median_path_efficiency": 1,
            "spl": 1,
            "spl_all": 1,
            "tokens": 10,
            "tokens_per_run": 10,
            "tokens_per_success": 10,
            "cost_usd": 0,
            "unpriced_runs": 0,
            "cost_per_run": 0,
            "cost_per_success": 0,
            "mean_latency_ms": 5,
            **fields,
        }
    )


@pytest.mark.parametrize(
    "name, cell",
    [
        ('=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'),
        ("+1+1", "'+1+1"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "\\x0d=1"),
        (" =1+1", "' =1+1"),
        ("\uff1d1+1", "'\uff1d1+1"),
        ("\x1b]8;;http://evil\x1b\\=x", "\\x1b]8;;http://evil\\x1b\\=x"),
        ("\u202e=1", "\\u202e=1"),
        ("qwen2.5", "qwen2.5"),
    ],
)
def test_a_csv_cell_that_would_be_a_formula_or_an_escape_is_text(name, cell):
    [header, row] = csv.reader(io.StringIO(as_csv([comparison_row(model_name=name, tokens_per_run=-1)]), newline=""))
    cells = dict(zip(header, row, strict=True))
    assert cells["model_name"] == cell and cells["tokens_per_run"] == "-1"  # numbers stay numbers
    assert csv_safe(name) == cell and csv_safe(-1) == -1


def test_json_in_a_csv_cell_stays_the_same_json():
    text = json.dumps({"reasoning": "go \u202e east \x9b1m \u2028 tag\U000e0041"}, ensure_ascii=False)
    shown = csv_safe(text, json_text=True)
    assert json.loads(shown) == json.loads(text)
    assert not any(ch in shown for ch in "\u202e\x9b\u2028\U000e0041")


def test_every_character_a_terminal_or_a_browser_would_obey_is_written_out():
    """The listed classes (display.OBEYED) are every code point of the categories Cc, Cf, Zl, Zp and Cs."""
    import unicodedata

    obeyed = [
        chr(code) for code in range(0x110000) if unicodedata.category(chr(code)) in ("Cc", "Cf", "Zl", "Zp", "Cs")
    ]
    shown = terminal_safe("".join(obeyed))
    assert shown.isascii() and not any(unicodedata.category(ch) == "Cc" for ch in shown)
    assert terminal_safe("a\nb\tc", lines=True) == "a\nb\tc"
    assert terminal_safe("é ü 你好 \U0001f600") == "é ü 你好 \U0001f600"


def test_the_report_table_writes_escape_sequences_out():
    rows = [comparison_row(model_name="evil\x1b[2J", config={"endpoint": "http://h/\x1b]0;t\x07"})]
    narrow, wide = as_table(rows), as_table(rows, wide=True)  # the config in a legend, or in its column
    assert not {"\x1b", "\x07"} & set(narrow + wide) and "evil\\x1b[2J" in narrow and "evil\\x1b[2J" in wide


# --- class 6: sweep files ----------------------------------------------------------------------------------


def sweep_file(tmp_path, text: str | bytes, suffix: str = ".toml"):
    path = tmp_path / f"sweep{suffix}"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


BASE = 'id = "s"\nagents = ["baseline/explorer"]\nmazes = ["perfect-7"]\n'


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            'agents = ["baseline/explorer", "baseline/explorer"]\nmazes = ["perfect-7"]\n',
            "two agents are labelled 'baseline/explorer'",
        ),
        (
            'agents = ["baseline/explorer", { label = "again", provider = "baseline", model = "explorer" }]\n'
            'mazes = ["perfect-7"]\n',
            "comes out twice",
        ),
        ('agents = ["baseline/explorer"]\nmazes = ["perfect-7", 101]\n', "comes out twice"),
        ('agents = ["ollama/q"]\nmazes = ["perfect-7"]\nprompts = ["v1", "v1"]\n', "comes out twice"),
        (
            'agents = ["ollama/q"]\nmazes = ["perfect-7"]\nconfigs = [{temperature = 1}, {temperature = 1.0}]\n',
            "comes out twice",
        ),
        (
            'agents = ["ollama/q"]\nmazes = ["perfect-7"]\nconfigs = [{maxMoves = 5}]\ngrid = {maxMoves = [5, 5]}\n',
            "comes out twice",
        ),
    ],
)
def test_a_cell_that_comes_out_twice_is_refused(tmp_path, extra, message):
    with pytest.raises(SweepFileError, match=message):
        sweep_plan.plan(sweep_runs.load(sweep_file(tmp_path, 'id = "s"\n' + extra)))


def test_the_matrix_size_is_checked_before_the_matrix_is_built(tmp_path):
    grid = ", ".join(
        f"{key} = [{', '.join(str(v) for v in range(1, 101))}]"
        for key in (
            "maxMoves",
            "historyActions",
            "maxRecallActions",
            "recallInterval",
            "numCtx",
            "maxStalledTurns",
            "seed",
            "visionRange",
        )
    )
    started = time.process_time()
    with pytest.raises(SweepFileError, match="describes 10,000,000,000,000,000 experiments"):
        sweep_plan.plan(sweep_runs.load(sweep_file(tmp_path, BASE + f"grid = {{ {grid} }}\n")))
    assert time.process_time() - started < 2


@pytest.mark.parametrize(
    "text, suffix, error, message",
    [
        (BASE + "spend_limit_usd = inf\n", ".toml", SweepFileError, "spend_limit_usd"),
        (BASE + "spend_limit_usd = nan\n", ".toml", SweepFileError, "spend_limit_usd"),
        (
            '{"id": "s", "agents": ["baseline/oracle"], "mazes": [7], "spend_limit_usd": Infinity}',
            ".json",
            SweepFileError,
            "spend_limit_usd",
        ),
        (BASE + "[[configs]]\nmaxDurationMinutes = inf\n", ".toml", InvalidConfig, "finite"),
        (
            '{"id": "s", "agents": ["ollama/q"], "mazes": [7], "configs": [{"temperature": NaN}]}',
            ".json",
            InvalidConfig,
            "finite",
        ),
        (BASE.encode() + b'comment = "caf\xe9"\n', ".toml", SweepFileError, "not UTF-8 text"),
        (BASE + "concurrency = 0\n", ".toml", SweepFileError, "concurrency"),
        (BASE + "concurrency = -3\n", ".toml", SweepFileError, "concurrency"),
        (BASE + "provider_concurrency = { baseline = 0 }\n", ".toml", SweepFileError, "provider_concurrency"),
        (BASE + "grid = { temperature = [] }\n", ".toml", SweepFileError, "grid"),
        (
            '{"id": "s", "agents": ["baseline/oracle"], "mazes": [' + "1" * 5000 + "]}",
            ".json",
            SweepFileError,
            "not valid JSON",
        ),
        ("[" * 100_000, ".json", SweepFileError, "JSON nested deeper than 64 levels"),
        ("x = " + "[" * 100_000, ".toml", SweepFileError, "TOML nested deeper than 64 levels"),
        (BASE + "#" * (2 * 1024 * 1024), ".toml", SweepFileError, "larger than"),
        (
            '{"id": "s", "agents": ["baseline/oracle"], "mazes": [7], "comment": "a\\u0000b"}',
            ".json",
            SweepFileError,
            "comment",
        ),
        ('{"id": "s", "agents": ["ollama/q\\u001b[2J"], "mazes": [7]}', ".json", SweepFileError, "modelName"),
        (
            '{"id": "s", "agents": ["baseline/oracle"], "mazes": ["' + "9" * 5000 + '"]}',
            ".json",
            SweepFileError,
            "unknown maze",
        ),
    ],
)
def test_a_hostile_sweep_file_is_refused_with_a_named_error(tmp_path, text, suffix, error, message):
    with pytest.raises(error, match=message):
        sweep_plan.plan(sweep_runs.load(sweep_file(tmp_path, text, suffix)))


@pytest.mark.parametrize(
    "option", ["baseline=0", "baseline=-1", "baseline=\u00b2", "baseline=" + "9" * 5000, "baseline=1001"]
)
def test_a_provider_concurrency_option_out_of_range_is_refused(option):
    spec = sweep_plan.SweepFile.model_validate({"id": "s", "agents": ["baseline/oracle"], "mazes": [7]})
    with pytest.raises(SweepFileError, match="N from 1 to 1000"):
        sweep_runs.provider_caps(spec, [option])


def test_every_prompt_a_sweep_names_must_exist():
    spec = sweep_plan.SweepFile.model_validate(
        {"id": "s", "agents": ["ollama/q"], "mazes": [7], "prompts": ["v1", "v9"]}
    )
    with pytest.raises(SweepFileError, match=r"prompt version\(s\) v9 not found; known: v1"):
        sweep_plan.check_prompts(spec, ["v1"])
    sweep_plan.check_prompts(spec, ["v1", "v9"])


# --- class 8: prompt files --------------------------------------------------------------------------------


def test_a_prompt_file_that_is_not_utf8_or_holds_a_nul_is_refused(tmp_path):
    latin1 = tmp_path / "p.md"
    latin1.write_bytes("Trouvez la sortie, café".encode("latin-1"))
    with pytest.raises(prompts.PromptRejected, match=r"p\.md is not UTF-8 text \(byte 0xe9 at offset 22\)"):
        prompts.read_text(latin1)
    with pytest.raises(prompts.PromptRejected, match="NUL"):
        prompts.check("v2", "Find the goal.\x00")
    assert isinstance(prompts.PromptRejected("x"), OrioleError) and catalog.prompt_name("v2")
