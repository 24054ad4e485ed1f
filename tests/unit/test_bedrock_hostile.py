"""Bedrock against a hostile endpoint (issue 37): a raw socket reached through the documented endpoint override
(``AWS_ENDPOINT_URL_BEDROCK_RUNTIME``), answering slowly or with answers Converse never sends. The whole exchange
ends at ``requestTimeoutSeconds``, as the HTTP providers' does, and every malformed answer is an
``InvalidModelResponse`` naming what is wrong, never an exception of botocore's parser."""

from __future__ import annotations

import json
import random
import time

import pytest

from oriole.core.tools import TOOL_SPECS
from oriole.core.turn_loop import Message, ModelRequest
from oriole.errors import InvalidModelResponse, ModelTimeout
from oriole.providers.bedrock import BedrockAgent, recorded_answer, runtime_client
from tests.raw_server import Paced, RawServer, ok_json

MODEL = "anthropic.claude-3-5-haiku-20241022-v1:0"
REQUEST = ModelRequest("You are in a maze.", TOOL_SPECS, (Message("user", {"position": [1, 1]}),))


def converse(content: list, **extra) -> dict:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 20},
        **extra,
    }


@pytest.fixture
def endpoint(monkeypatch):
    """A Bedrock agent whose client goes to a raw server's URL (the documented endpoint override)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTESTING")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")

    def agent_for(server: RawServer, timeout: float = 5.0) -> BedrockAgent:
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", server.url)
        return BedrockAgent(runtime_client(timeout), MODEL, 0.2, sleep=lambda s: None, timeout_seconds=timeout)

    return agent_for


@pytest.mark.parametrize("where", ["headers", "body", "status line"])
def test_a_server_sending_one_byte_a_second_is_cut_at_the_request_timeout(endpoint, where):
    whole = ok_json(converse([{"text": "x" * 200}]))
    split = {"status line": 3, "headers": whole.index(b"\r\n") + 2, "body": whole.index(b"\r\n\r\n") + 4}[where]
    trickled = [whole[:split], *(whole[i : i + 1] for i in range(split, len(whole)))]
    with RawServer(Paced(1.0, trickled)) as server:
        started = time.monotonic()
        with pytest.raises(ModelTimeout, match="did not answer within 3 s"):
            endpoint(server, timeout=3.0).respond(REQUEST)
    assert time.monotonic() - started < 3.0 + 1.5  # before: each byte reset a per-read timeout (283 s for 3 s)


def deep(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


HOSTILE = {
    "nested past the depth": (
        lambda rng: ok_json(f'{{"output": {deep(rng.randint(101, 5000))}}}'.encode()),
        "JSON nested",
    ),
    "not UTF-8": (lambda rng: ok_json(b'{"stopReason": "\xff\xfe' + bytes([rng.randint(0x80, 0xBF)]) + b'"}'), "UTF-8"),
    "a list": (lambda rng: ok_json([converse([{"text": "hi"}])] * rng.randint(1, 3)), "JSON type list"),
    "null message": (
        lambda rng: ok_json({"output": {"message": None}, "stopReason": "end_turn"}),
        "output without any of message",
    ),
    "message a string": (lambda rng: ok_json({"output": {"message": "hi"}}), "where Converse has an object"),
    "content an object": (
        lambda rng: ok_json({"output": {"message": {"role": "assistant", "content": {"text": "x"}}}}),
        "where Converse has a list",
    ),
    "NaN tokens": (
        lambda rng: ok_json(
            json.dumps(converse([{"text": "x"}])).replace("10", rng.choice(["NaN", "Infinity"])).encode()
        ),
        "usage.inputTokens",
    ),
    "not JSON": (lambda rng: ok_json(b"<html>" + bytes(rng.randint(1, 50))), "not JSON"),
    "image not base64": (
        lambda rng: ok_json(converse([{"image": {"format": "png", "source": {"bytes": "%%not base64%%"}}}])),
        "base64",
    ),
    "two choices of a union": (
        lambda rng: ok_json(converse([{"text": "x", "toolUse": {"name": "move_east", "toolUseId": "t", "input": {}}}])),
        "where Converse has one of them",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_malformed_answer_is_an_invalid_model_response_naming_it(endpoint, case):
    body, message = HOSTILE[case]
    with RawServer(body(random.Random(case))) as server, pytest.raises(InvalidModelResponse, match=message):
        endpoint(server).respond(REQUEST)


@pytest.mark.parametrize("odd_id", [7, None, {"id": "x"}, ["t"], True, ""])
def test_a_tool_use_id_that_is_not_a_string_is_replaced_like_a_missing_one(endpoint, odd_id):
    answer = converse([{"toolUse": {"name": "move_east", "toolUseId": odd_id, "input": {"reasoning": "east"}}}])
    with RawServer(ok_json(answer)) as server:
        response = endpoint(server).respond(REQUEST)
    [call] = response.tool_calls
    assert call.call_id == "tooluse_0" and call.arguments == {"reasoning": "east"}
    assert recorded_answer(response.raw or b"", 0, 0, 0).tool_calls[0].call_id == "tooluse_0"  # its replay agrees


def test_a_well_formed_answer_through_the_bounded_exchange_reads_as_before(endpoint):
    answer = converse([{"text": "thinking"}, {"toolUse": {"name": "move_east", "toolUseId": "tu1", "input": {}}}])
    with RawServer(b"HTTP/1.1 103 Early Hints\r\n\r\n" + ok_json(answer)) as server:
        response = endpoint(server).respond(REQUEST)
    assert response.text == "thinking" and response.tool_calls[0].call_id == "tu1" and response.usage.input_tokens == 10
    method, headers, body = server.requests[0]
    assert method.startswith("POST /model/") and headers["authorization"].startswith("AWS4-HMAC-SHA256")
    assert json.loads(body)["inferenceConfig"]["temperature"] == 0.2
