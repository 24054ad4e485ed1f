"""A model server cannot hold a request past its timeout (issue 26, class 1): real HTTP over loopback to the scripted
Ollama and OpenAI-compatible servers, each holding the exchange a different way, and the wall clock the bound is
kept against (so this waits a second per case, and lives in the integration tier, not in the unit tests)."""

from __future__ import annotations

import itertools
import time

import pytest

from oriole.core.tools import TOOL_SPECS
from oriole.core.turn_loop import Message, ModelRequest
from oriole.errors import ModelTimeout, ModelUnavailable
from oriole.providers import retry
from oriole.providers.ollama import OllamaAgent
from oriole.providers.openai import OpenAIAgent
from tests.ollama_server import ScriptedOllama
from tests.openai_server import ScriptedOpenAI
from tests.scripted_server import trickle

# Each verdict is a window of wall-clock time (the timeout, plus half a second): it runs with no other test of the
# session beside it, whose work would take the CPU the cut-off needs.
pytestmark = pytest.mark.serial

OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
# Each writes a piece well within the socket timeout, so only a bound on the whole exchange ends it.
HOLDING = {
    "status line": (b"", b"H"),
    "headers": (b"HTTP/1.1 200 OK\r\n", b"X-Slow: a\r\n"),
    "a header": (OK_HEAD + b"X-Slow: ", b"a"),
    "endless 100 Continue": (b"", b"HTTP/1.1 100 Continue\r\n\r\n"),
    "body": (OK_HEAD + b"Content-Length: 100000\r\n\r\n{", b" "),
    "chunked body": (OK_HEAD + b"Transfer-Encoding: chunked\r\n\r\n", b"1\r\n \r\n"),
    "body without length": (OK_HEAD + b"Connection: close\r\n\r\n", b" "),
    "error body": (b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 65536\r\n\r\n", b"e"),
    "429 error body": (b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Length: 65536\r\n\r\n", b"e"),
    "silence": (b"", b""),
}


def holding(behaviour: str):
    """The answer of a server that holds the exchange: its start, then one piece after another, forever."""
    start, piece = HOLDING[behaviour]
    pause = 0.005 if "Continue" in behaviour else 0.2
    return trickle(pause, itertools.chain([start], itertools.repeat(piece)))


TIMEOUT = 1.0
MARGIN = 0.5  # a cut exchange ends this soon after the timeout


def agent_on(provider: str, server, timeout: float = TIMEOUT, **retries):
    if provider == "ollama":
        return OllamaAgent("m", server.url, {}, timeout_seconds=timeout, **retries)
    return OpenAIAgent("m", server.base_url, {"temperature": 0.0, "max_tokens": 10}, timeout_seconds=timeout, **retries)


def timed_ask(agent) -> float:
    started = time.monotonic()
    with pytest.raises(ModelTimeout, match=f"did not answer within {TIMEOUT:g} s"):
        agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))
    return time.monotonic() - started


@pytest.mark.parametrize("provider, server_class", [("ollama", ScriptedOllama), ("openai", ScriptedOpenAI)])
@pytest.mark.parametrize("behaviour", sorted(HOLDING))
def test_a_server_that_holds_the_exchange_is_cut_off_at_the_request_timeout(provider, server_class, behaviour):
    with server_class(holding(behaviour), holding(behaviour)) as server:
        elapsed = timed_ask(agent_on(provider, server))
        assert len(server.requests) == 1  # a timeout is not retried inside the task
    assert TIMEOUT - 0.05 <= elapsed < TIMEOUT + MARGIN, behaviour


@pytest.mark.parametrize("provider, server_class", [("ollama", ScriptedOllama), ("openai", ScriptedOpenAI)])
def test_retries_and_their_waits_stay_inside_the_request_timeout(provider, server_class, monkeypatch):
    monkeypatch.setattr(retry.random, "uniform", lambda low, high: high)  # full jitter at its cap: 0.4 s, then 0.8 s
    with server_class(*[(503, b'{"error": "busy"}')] * 10) as server:
        agent = agent_on(provider, server, max_attempts=10, backoff_seconds=0.4)
        started = time.monotonic()
        with pytest.raises(ModelUnavailable, match=r"failed 2 attempt\(s\)"):
            agent.respond(ModelRequest("p", TOOL_SPECS, (Message("user", {}),)))
        assert time.monotonic() - started < TIMEOUT and len(server.requests) == 2  # waits 0.4, then 0.8 would not fit


def test_a_connect_to_an_address_that_never_answers_is_bounded_too():
    import socket as sockets

    listener = sockets.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held = []
    for _ in range(8):  # fill the backlog: a further connect waits for an answer that never comes
        held.append(sockets.socket())
        held[-1].setblocking(False)
        held[-1].connect_ex(("127.0.0.1", port))
    agent = OllamaAgent("m", f"http://127.0.0.1:{port}", {}, timeout_seconds=TIMEOUT, max_attempts=1)
    try:
        elapsed = timed_ask(agent)
    finally:
        for sock in held:
            sock.close()
        listener.close()
    assert elapsed < TIMEOUT + MARGIN
