"""The Ollama provider: the turn loop's neutral request as Ollama's ``POST /api/chat``, and its answer back.

Only the standard library (urllib and json) talks HTTP, so the Lambda bundle carries no HTTP client.
Failures are named for what to do about them: an endpoint that cannot be reached or keeps answering 5xx
is retried a few times and then reported as ``ModelUnavailable``; a request Ollama refuses (4xx, such as an
unknown model) is ``ModelRequestRejected`` at once, since repeating it cannot help; a request slower than
the timeout is ``ModelTimeout`` at once, so a slow model cannot multiply the wait; a body that is not a chat
response is ``InvalidModelResponse``. Tool calls come back exactly as the model sent them: judging them is
the turn loop's job, so a malformed call becomes an invalid action rather than a lost one.

What comes back is bounded: the client opens only http and https URLs and follows no redirect, a body larger
than ``MAX_RESPONSE_BYTES`` is an ``InvalidModelResponse`` (read no further), an error body is read up to
``MAX_ERROR_BYTES`` and quoted up to ``EXCERPT_CHARS``, and token counts must be counts (see
``oriole.providers.reported_count``).
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from oriole.catalog import BY_KEY
from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelThrottled, ModelTimeout, ModelUnavailable
from oriole.providers import reported_count
from oriole.text import bounded
from oriole.tools import ToolCall, ToolSpec
from oriole.turn_loop import Message, ModelRequest, ModelResponse, Usage

CHAT_PATH = "/api/chat"
DURATION_FIELDS = ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")
EXCERPT_CHARS = 200
JITTER_FRACTION = 0.25
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a chat answer is a few KB; this is room for very long reasoning
MAX_ERROR_BYTES = 64 * 1024
_READ_CHUNK = 64 * 1024


class _Retryable(Exception):
    """One failed attempt that another attempt may fix: the endpoint was unreachable or answered 5xx."""


def _json_text(value: object) -> str:
    """Compact JSON, as the model reads it: the fewest tokens for the same content."""
    return json.dumps(value, separators=(",", ":"))


def _content_text(content: str | dict | None) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else _json_text(content)


def _arguments_object(arguments: object) -> dict:
    """Ollama takes a call's arguments as an object; a JSON string is parsed, anything else becomes {}."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def wire_message(message: Message) -> dict:
    """One neutral message in Ollama's chat format."""
    if message.role == "tool":
        return {"role": "tool", "content": _content_text(message.content), "tool_name": message.name or ""}
    wire = {"role": message.role, "content": _content_text(message.content)}
    if message.tool_calls:
        wire["tool_calls"] = [{"function": {"name": call.name, "arguments": _arguments_object(call.arguments)}}
                              for call in message.tool_calls]
    return wire


def wire_tool(spec: ToolSpec) -> dict:
    return {"type": "function",
            "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters}}


def _excerpt(raw: bytes) -> str:
    text = raw[:EXCERPT_CHARS].decode("utf-8", errors="replace")
    return repr(text + ("..." if len(raw) > EXCERPT_CHARS else ""))


def _json(raw: bytes) -> object:
    """The body as JSON; ValueError when it is not (RecursionError, for nesting past the parser, included)."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _error_text(raw: bytes) -> str:
    """Ollama's error bodies are ``{"error": "..."}`` (quoted up to ``EXCERPT_CHARS``); anything else is shown
    as an excerpt."""
    try:
        body = _json(raw)
    except ValueError:
        return _excerpt(raw)
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return bounded(body["error"], EXCERPT_CHARS)
    return _excerpt(raw)


def _durations(body: dict) -> dict:
    """Ollama's own timings (nanoseconds), as far as they are counts: they are kept for reading only."""
    return {k: body[k] for k in DURATION_FIELDS
            if isinstance(body.get(k), int) and not isinstance(body[k], bool) and body[k] >= 0}


def _tool_call(index: int, entry: object) -> ToolCall:
    """A call as the model sent it; a nameless one is kept (with name "") so the loop counts it invalid."""
    function = entry.get("function") if isinstance(entry, dict) else None
    function = function if isinstance(function, dict) else {}
    name = function.get("name")
    return ToolCall(name if isinstance(name, str) else "", function.get("arguments"), call_id=f"call_{index}")


def _optional_text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_response(raw: bytes, latency_ms: int) -> ModelResponse:
    """Turn a non-streaming ``/api/chat`` body into a ModelResponse; anything else is InvalidModelResponse."""
    try:
        body = _json(raw)
    except ValueError:
        raise InvalidModelResponse(f"Ollama answered with a body that is not JSON: {_excerpt(raw)}") from None
    if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
        raise InvalidModelResponse(f"Ollama answered without a chat message object: {_excerpt(raw)}")
    message = body["message"]
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise InvalidModelResponse(f"Ollama answered with tool_calls that are not a list: {_excerpt(raw)}")
    return ModelResponse(
        tool_calls=tuple(_tool_call(i, entry) for i, entry in enumerate(calls)),
        text=_optional_text(message.get("content")),
        thinking=_optional_text(message.get("thinking")),
        # a count Ollama leaves out is zero (a fully cached prompt has no prompt_eval_count)
        usage=Usage(reported_count(body.get("prompt_eval_count"), "prompt_eval_count"),
                    reported_count(body.get("eval_count"), "eval_count"), latency_ms),
        stop_reason=bounded(body["done_reason"], EXCERPT_CHARS) if isinstance(body.get("done_reason"), str) else None,
        durations=_durations(body),
    )


def _http_opener() -> urllib.request.OpenerDirector:
    """An opener that speaks http and https only and follows no redirect (``build_opener`` would also open
    ``file:``, ``ftp:`` and ``data:`` URLs, and follow a redirect to them)."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.UnknownHandler()):  # any other scheme: URLError "unknown url type"
        opener.add_handler(handler)
    return opener


class OllamaAgent:
    """An Agent (see ``oriole.turn_loop``) backed by a model served by Ollama."""

    def __init__(self, model: str, endpoint: str, options: dict, timeout_seconds: float,
                 api_key: str | None = None, max_attempts: int = 3, backoff_seconds: float = 0.5, *,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.model = model
        self.endpoint = endpoint.rstrip("/")
        self.options = dict(options)
        self.timeout_seconds = timeout_seconds
        self.api_key = api_key
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self._sleep = sleep
        self._clock = clock
        self._opener = _http_opener()

    @property
    def context_budget(self) -> int | None:
        """Ollama's context window (``options.num_ctx``): the request's history is trimmed to fit it."""
        return self.options.get("num_ctx")

    @classmethod
    def from_config(cls, model: str, config: dict, api_key: str | None = None, **kwargs: Any) -> OllamaAgent:
        """An agent from an experiment's configuration snapshot; a key the snapshot lacks takes its catalog
        default, so experiments started before a parameter existed still run."""
        def value(key: str) -> Any:
            return config[key] if key in config else BY_KEY[key].default

        options = {"num_ctx": int(value("numCtx")), "temperature": float(value("temperature")),
                   "repeat_penalty": float(value("repeatPenalty")), "seed": int(value("seed"))}
        return cls(model, str(value("endpoint")), options, float(value("requestTimeoutSeconds")),
                   api_key=api_key, **kwargs)

    @property
    def url(self) -> str:
        return self.endpoint + CHAT_PATH

    def payload(self, request: ModelRequest) -> dict:
        """The ``/api/chat`` request body: system prompt first, then the turn's messages, the tools, options."""
        messages = [{"role": "system", "content": request.system_prompt}]
        messages += [wire_message(m) for m in request.messages]
        body = {"model": self.model, "messages": messages, "stream": False, "options": self.options}
        if request.tools:  # a request without tools (a summary, text tool calls) must not name any
            body["tools"] = [wire_tool(t) for t in request.tools]
        return body

    def respond(self, request: ModelRequest) -> ModelResponse:
        """Ask the model once (retrying only failures a retry can fix) and translate its answer."""
        raw, latency_ms = self._send(json.dumps(self.payload(request)).encode())
        return parse_response(raw, latency_ms)

    def _send(self, data: bytes) -> tuple[bytes, int]:
        last: _Retryable | None = None
        for attempt in range(self.max_attempts):
            if attempt:
                self._sleep(self._backoff(attempt - 1))
            try:
                return self._post(data)
            except _Retryable as err:
                last = err
        raise ModelUnavailable(
            f"Ollama model {self.model!r} at {self.endpoint}: {last} (failed {self.max_attempts} attempt(s)). "
            f"Check that Ollama is running and reachable at {self.endpoint}, or point oriole at the right "
            "server with --ollama-url or the /oriole/ollama/endpoint parameter"
        ) from last

    def _backoff(self, retry: int) -> float:
        """Exponential backoff with a little jitter, so concurrent experiments do not retry in lockstep."""
        delay = self.backoff_seconds * 2 ** retry
        return delay + random.uniform(0, JITTER_FRACTION * delay)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _post(self, data: bytes) -> tuple[bytes, int]:
        """One HTTP attempt: the body and its wall time in ms, or a named error."""
        request = urllib.request.Request(self.url, data=data, headers=self._headers(), method="POST")
        started = self._clock()
        try:
            with self._opener.open(request, timeout=self.timeout_seconds) as response:
                raw = self._read(response, started + self.timeout_seconds)
        except urllib.error.HTTPError as err:
            raise self._http_error(err) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise self._timeout() from err
            raise _Retryable(f"cannot connect ({err.reason})") from err
        except TimeoutError as err:
            raise self._timeout() from err
        except (ConnectionError, http.client.HTTPException) as err:
            raise _Retryable(f"the connection failed ({type(err).__name__}: {err})") from err
        return raw, int((self._clock() - started) * 1000)

    def _read(self, response: http.client.HTTPResponse, deadline: float) -> bytes:
        """Read the body, failing once the deadline passes (the socket timeout bounds each read, not the total,
        so a server trickling bytes would otherwise hold the request open indefinitely) or once it exceeds
        ``MAX_RESPONSE_BYTES`` (the rest is never read into memory)."""
        chunks, size = [], 0
        while chunk := response.read1(_READ_CHUNK):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise InvalidModelResponse(f"Ollama model {self.model!r} at {self.endpoint} answered with more than "
                                           f"{MAX_RESPONSE_BYTES:,} bytes; the answer was not read further")
            if self._clock() > deadline:
                raise TimeoutError
        return b"".join(chunks)

    def _http_error(self, err: urllib.error.HTTPError) -> Exception:
        try:
            text = _error_text(err.read(MAX_ERROR_BYTES))
        except (OSError, http.client.HTTPException):
            text = err.reason
        if err.code >= 500:
            return _Retryable(f"HTTP {err.code}: {text}")
        if err.code == 429:  # a hosted Ollama or a proxy in front of it rate-limits: the state machine retries
            return ModelThrottled(f"Ollama at {self.endpoint} throttled model {self.model!r}: {text}")
        return ModelRequestRejected(f"Ollama at {self.endpoint} rejected the request for model {self.model!r} "
                                    f"(HTTP {err.code}): {text}")

    def _timeout(self) -> ModelTimeout:
        return ModelTimeout(
            f"Ollama model {self.model!r} at {self.endpoint} did not answer within {self.timeout_seconds:g} s; "
            "raise requestTimeoutSeconds (/oriole/ollama/request-timeout-seconds) or use a smaller model"
        )
