"""A scripted stand-in for an Ollama server: real HTTP on loopback, answering ``POST /api/chat`` from a script.

Tests of the Ollama provider go through a real socket, so timeouts, refused connections, status codes and
malformed bodies are the ones urllib really sees. The server speaks only what Ollama documents for a
non-streaming chat request; anything else (another path, a streaming request, a body without a model) is
answered with an error, and a request beyond the script gets a 500 naming the problem, so a test that
asks more than it scripted fails loudly instead of hanging.

    with ScriptedOllama(tool_calls(("move_east", {"reasoning": "open"})), text_reply("done")) as server:
        agent = OllamaAgent("llama3.2", server.url, {}, timeout_seconds=5)
        ...
        assert server.requests[0].body["stream"] is False
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHAT_PATH = "/api/chat"


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before answering with ``reply``."""

    seconds: float
    reply: dict | tuple[int, bytes]


@dataclass(frozen=True)
class ScriptedRequest:
    """One request the server received: header names are lower-case; ``body`` is the parsed JSON (or None)."""

    method: str
    path: str
    headers: dict[str, str]
    body: object = field(default=None)


def chat_response(reply: dict, model: str) -> dict:
    """A full non-streaming ``/api/chat`` response: ``reply``'s fields over plausible defaults."""
    body = {
        "model": model,
        "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_500_000_000,
        "load_duration": 20_000_000,
        "prompt_eval_count": 120,
        "prompt_eval_duration": 300_000_000,
        "eval_count": 15,
        "eval_duration": 1_100_000_000,
        **reply,
    }
    body["message"] = {"role": "assistant", "content": "", **reply.get("message", {})}
    return body


def tool_calls(*calls: tuple[str, object], content: str = "", thinking: str | None = None,
               prompt_eval_count: int = 120, eval_count: int = 15, **fields: object) -> dict:
    """A reply whose message carries tool calls, each ``(name, arguments)``; arguments may be an object or,
    as some models and proxies send them, a string."""
    message: dict = {"content": content,
                     "tool_calls": [{"function": {"name": name, "arguments": arguments}} for name, arguments in calls]}
    if thinking is not None:
        message["thinking"] = thinking
    return {"message": message, "prompt_eval_count": prompt_eval_count, "eval_count": eval_count, **fields}


def text_reply(text: str, **fields: object) -> dict:
    """A reply with text and no tool call."""
    return {"message": {"content": text}, **fields}


def error(status: int, message: str) -> tuple[int, bytes]:
    """An error as Ollama sends one: the status and ``{"error": message}``."""
    return status, json.dumps({"error": message}).encode()


def slow(seconds: float, reply: dict | tuple[int, bytes]) -> Slow:
    return Slow(seconds, reply)


class ScriptedOllama:
    """An Ollama chat endpoint on 127.0.0.1 (ephemeral port) answering each request with the next scripted reply.

    A reply is a dict (sent with 200 as a full chat response, see ``chat_response``), a raw
    ``(status, body bytes)`` tuple, or ``slow(seconds, reply)``. Every request is kept in ``requests``.
    """

    def __init__(self, *replies: dict | tuple[int, bytes] | Slow):
        self._script: deque = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[ScriptedRequest] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="scripted-ollama", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._script)

    def add(self, *replies: dict | tuple[int, bytes] | Slow) -> None:
        with self._lock:
            self._script.extend(replies)

    def __enter__(self) -> ScriptedOllama:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopping.set()  # wakes a handler still waiting out a slow reply
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _record(self, request: ScriptedRequest) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def _next(self, number: int) -> dict | tuple[int, bytes] | Slow:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return error(500, f"ScriptedOllama: request #{number} was not scripted (the script is exhausted)")

    def _answer(self, request: ScriptedRequest) -> tuple[int, bytes]:
        """The status and body for one request, waiting first if the reply is slow."""
        problem = _protocol_problem(request)
        number = self._record(request)
        if problem:
            return problem
        reply = self._next(number)
        if isinstance(reply, Slow):
            if self._stopping.wait(reply.seconds):
                return error(503, "ScriptedOllama: shutting down")
            reply = reply.reply
        if isinstance(reply, tuple):
            return reply
        return 200, json.dumps(chat_response(reply, request.body["model"])).encode()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self._serve(self._read_json())

            def do_GET(self) -> None:
                self._serve(None)

            def _read_json(self) -> object:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    return json.loads(raw)
                except ValueError:
                    return None

            def _serve(self, body: object) -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, payload = scripted._answer(ScriptedRequest(self.command, self.path, headers, body))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (a timeout test); nothing left to tell it

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


def _protocol_problem(request: ScriptedRequest) -> tuple[int, bytes] | None:
    """Why a request is not a non-streaming ``POST /api/chat`` Ollama would accept, or None."""
    if request.path != CHAT_PATH:
        return 404, b"404 page not found"
    if request.method != "POST":
        return 405, b"405 method not allowed"
    body = request.body
    if not isinstance(body, dict):
        return error(400, "ScriptedOllama: the request body is not a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return error(400, "model is required")
    if body.get("stream") is not False:
        return error(400, 'ScriptedOllama answers only non-streaming chat requests; send "stream": false')
    if not isinstance(body.get("messages"), list):
        return error(400, "ScriptedOllama: messages must be a list")
    return None
