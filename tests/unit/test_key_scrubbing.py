"""An API key never leaves as text (issue 37), whatever a hostile server (a raw socket here) echoes: the key is taken
out of the whole error body before an excerpt is cut, out of a header before it is bounded, and out of every string
of an answer once parsed, where JSON escapes of any mix spell it (also in JSON text inside a string: a call's
arguments, a tool call written in the text). And the exchange itself: an interim 1xx answer is read past, a body
shorter than its Content-Length is an incomplete read, tried again."""

from __future__ import annotations

import json
import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oriole.errors import ModelRequestRejected, ModelThrottled, ModelUnavailable
from oriole.providers import openai
from oriole.providers.transport import KEY_SHOWN_AS, JsonPoster, Server
from oriole.text import Scrubber
from tests.raw_server import RawServer, ok_json

SHORTEST_LEAK = 12  # no run of this many characters of a (random, long) key may show anywhere


def random_key(rng: random.Random) -> str:
    alphabet = string.ascii_letters + string.digits + "-_.~+/=!*'()"
    return "sk-" + "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 200)))


def leaked(key: str, text: str) -> str | None:
    """The longest run of the key, of at least ``SHORTEST_LEAK`` characters, that ``text`` holds."""
    for size in range(len(key), SHORTEST_LEAK - 1, -1):
        for start in range(len(key) - size + 1):
            if key[start : start + size] in text:
                return key[start : start + size]
    return None


def spelt(key: str, rng: random.Random) -> str:
    """The key as the inside of a JSON string, each character as it is or as a JSON escape, mixed at random."""
    return "".join(f"\\u{ord(c):04x}" if rng.random() < 0.5 else json.dumps(c)[1:-1] for c in key)


def poster(url: str, key: str, timeout: float = 5.0) -> JsonPoster:
    server = Server("OpenAI-compatible server", url, "m", reach_hint="check the URL")
    return JsonPoster(server, f"{url}/v1/chat/completions", timeout, api_key=key, backoff_seconds=0.01)


@pytest.mark.parametrize("seed", range(10))
def test_a_key_an_error_body_echoes_after_any_prefix_is_never_quoted_in_part(seed):
    rng = random.Random(seed)
    key = random_key(rng)
    prefix = "".join(rng.choice(string.ascii_letters + " ") for _ in range(rng.randint(0, 400)))
    echoed = rng.choice([key, spelt(key, rng)])
    body = rng.choice(
        [
            f'{{"error": {{"message": "{prefix}{echoed}", "type": "auth"}}}}',
            f'{{"error": "{prefix}{echoed}"}}',
            f'{{"message": "{prefix}{echoed}"}}',
            f"{prefix}{echoed}",  # not JSON: the excerpt of its text
        ]
    ).encode()
    status, error = rng.choice([("401 Unauthorized", ModelRequestRejected), ("503 Unavailable", ModelUnavailable)])
    with RawServer(ok_json(body, status)) as server, pytest.raises(error) as refused:
        poster(server.url, key).post({"model": "m"})
    assert leaked(key, str(refused.value)) is None, str(refused.value)
    assert server.requests[0][1]["authorization"] == f"Bearer {key}"  # the key was sent, and echoed


@pytest.mark.parametrize("seed", range(4))
def test_a_key_in_a_retry_after_header_is_taken_out_before_the_header_is_cut(seed):
    rng = random.Random(seed)
    key = random_key(rng)
    header = f"Retry-After: {'x' * rng.randint(0, 30)}{key}\r\n"
    throttling = RawServer(ok_json({"error": "slow down"}, "429 Too Many Requests", header))
    with throttling as server, pytest.raises(ModelThrottled) as throttled:
        poster(server.url, key).post({"model": "m"})
    assert leaked(key, str(throttled.value)) is None, str(throttled.value)


def answer_echoing(key: str, rng: random.Random) -> bytes:
    """A 200 Chat Completions answer spelling the key with JSON escapes in its text, its reasoning, a call's
    arguments (JSON text in a string: escaped twice) and a tool call written in the text."""
    once = spelt(key, rng)
    arguments = json.dumps({"reasoning": "KEY"}).replace("KEY", once)  # the JSON text a string carries
    in_text = json.dumps({"tool": "move_east", "arguments": {"reasoning": "KEY"}}).replace("KEY", once)
    message = {
        "role": "assistant",
        "content": f"my key: {once} and a call {in_text}",
        "reasoning_content": f"{once}",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "move_east", "arguments": arguments}}],
    }
    body = json.dumps({"choices": [{"message": message, "finish_reason": "tool_calls"}], "usage": {}})
    # json.dumps escaped the backslashes of the spelt key once more: put the answer's own escapes back
    return body.replace("\\\\u", "\\u").encode() if rng.random() < 0.5 else body.encode()


@pytest.mark.parametrize("seed", range(10))
def test_a_key_spelt_with_escapes_in_an_answer_never_reaches_what_is_stored(seed):
    rng = random.Random(seed)
    key = random_key(rng)
    with RawServer(ok_json(answer_echoing(key, rng))) as server:
        reply = poster(server.url, key).post({"model": "m"})
    response = openai.parse_response(reply.body, reply.latency_ms)
    decoded = json.loads(reply.body)
    everything = " ".join(
        [
            reply.body.decode("utf-8", "replace"),
            json.dumps(decoded, ensure_ascii=False),
            str(response.text),
            str(response.thinking),
            *(json.dumps(call.arguments) for call in response.tool_calls),
        ]
    )
    # a JSON string's escapes read once and twice over: what the text tool calls and the arguments decode
    for _ in range(3):
        everything = everything.encode("latin-1", "replace").decode("unicode_escape", "replace")
        assert leaked(key, everything) is None
    assert KEY_SHOWN_AS in str(response.text)


@settings(max_examples=200, deadline=None)
@given(
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0xFF, exclude_characters="\x7f"), min_size=16),
    st.integers(0, 2**32),
)
def test_the_scrubber_takes_a_key_out_of_any_spelling_of_it(key, seed):
    rng = random.Random(seed)
    scrubber = Scrubber(key, KEY_SHOWN_AS)
    body = json.dumps({"a": [{"b": "x"}], "t": "KEY"}).replace("KEY", spelt(key, rng)).encode()
    clean = json.loads(scrubber.body(body))
    assert key not in json.dumps(clean, ensure_ascii=False) and clean["t"] == KEY_SHOWN_AS
    assert key not in scrubber.text(f"... {spelt(key, rng)} ...".replace("\\", "\\\\"))


def test_an_interim_1xx_answer_is_read_past():
    interim = [
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n",
        b"HTTP/1.1 102 Processing\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\n",
    ]
    with RawServer([*random.Random(1).sample(interim, 3), ok_json({"answer": 42})]) as server:
        reply = poster(server.url, None).post({"model": "m"})
    assert json.loads(reply.body) == {"answer": 42} and reply.retries == 0


@pytest.mark.parametrize("seed", range(4))
def test_a_body_shorter_than_its_length_is_an_incomplete_read_tried_again(seed):
    rng = random.Random(seed)
    whole = ok_json({"answer": "x" * rng.randint(10, 5000)})
    cut = whole[: rng.randint(whole.index(b"\r\n\r\n") + 4, len(whole) - 1)]  # then the server closes
    with RawServer(cut, ok_json({"answer": 1})) as server:
        reply = poster(server.url, None).post({"model": "m"})
    assert json.loads(reply.body) == {"answer": 1} and reply.retries == 1 and len(server.requests) == 2
    with RawServer(cut) as server, pytest.raises(ModelUnavailable, match="the answer ended after"):
        poster(server.url, None).post({"model": "m"})
