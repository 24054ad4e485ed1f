"""One JSON POST to a model server, bounded and retried: the transport of every adapter that speaks HTTP
(Ollama's ``/api/chat``, the OpenAI-compatible ``/chat/completions``).

Only the standard library (urllib, http.client, json) talks HTTP, so the Lambda bundle carries no HTTP
client and a cold start imports nothing heavy. Failures are named for what to do about them: a server that
cannot be reached or keeps answering 5xx is retried a few times with backoff and then reported as
``ModelUnavailable``; a 429 is ``ModelThrottled`` (the state machine retries it with backoff), unless its
``Retry-After`` asks for a short wait, which is waited out here first; any other refusal (4xx, such as an
unknown model) is ``ModelRequestRejected`` at once, since repeating it cannot help; a request slower than
the timeout is ``ModelTimeout`` at once, so a slow model cannot multiply the wait.

What comes back is bounded: the client opens only http and https URLs and follows no redirect (so an API
key goes to the configured server and nowhere else), a body larger than ``MAX_RESPONSE_BYTES`` is an
``InvalidModelResponse`` (read no further), an error body is read up to ``MAX_ERROR_BYTES`` and quoted up to
``EXCERPT_CHARS``.
"""

from __future__ import annotations

import http.client
import json
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelThrottled, ModelTimeout, ModelUnavailable
from oriole.providers import EXCERPT_CHARS, excerpt, parse_json
from oriole.text import bounded

JITTER_FRACTION = 0.25
MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a chat answer is a few KB; this is room for very long reasoning
MAX_ERROR_BYTES = 64 * 1024
MAX_RETRY_AFTER_SECONDS = 10.0  # a throttle asking for a wait this short is waited out inside the task
_READ_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Server:
    """Who is asked, as the messages name it: the kind of server, the base URL the researcher configured, the
    model, how to point oriole at the right server, and what to raise when it is too slow."""

    service: str
    base_url: str
    model: str
    reach_hint: str
    timeout_hint: str = "raise requestTimeoutSeconds (/oriole/ollama/request-timeout-seconds) or use a smaller model"

    @property
    def asked(self) -> str:
        return f"{self.service} model {self.model!r} at {self.base_url}"


@dataclass(frozen=True)
class Reply:
    """A 2xx body, the wall time of the attempt that got it, and the throttled attempts waited out before."""

    body: bytes
    latency_ms: int
    throttles: int = 0


class _Retryable(Exception):
    """One failed attempt that another attempt may fix: the server was unreachable or answered 5xx."""


class _Throttled(Exception):
    """One throttled attempt (429); ``wait`` is the Retry-After in seconds, when the server gave one."""

    def __init__(self, text: str, wait: float | None):
        super().__init__(text)
        self.wait = wait


def error_text(raw: bytes) -> str:
    """What an error body says, up to ``EXCERPT_CHARS``: Ollama's ``{"error": "..."}``, the OpenAI shape
    ``{"error": {"message": ..., "type": ..., "code": ...}}``, or a top-level ``message`` (some servers);
    anything else is shown as an excerpt."""
    try:
        body = parse_json(raw)
    except ValueError:
        return excerpt(raw)
    if not isinstance(body, dict):
        return excerpt(raw)
    detail = body.get("error")
    if isinstance(detail, dict):
        message = detail.get("message")
        kind = ", ".join(str(detail[k]) for k in ("type", "code") if isinstance(detail.get(k), str | int))
        if isinstance(message, str):
            return bounded(f"{message} ({kind})" if kind else message, EXCERPT_CHARS)
    for text in (detail, body.get("message")):
        if isinstance(text, str):
            return bounded(text, EXCERPT_CHARS)
    return excerpt(raw)


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header in seconds; None when absent or not a number of seconds (an HTTP date is
    quoted in the message, never waited on)."""
    if value is None or not value.strip().isdecimal() or len(value.strip()) > 6:
        return None
    return float(value.strip())


def http_opener() -> urllib.request.OpenerDirector:
    """An opener that speaks http and https only and follows no redirect (``build_opener`` would also open
    ``file:``, ``ftp:`` and ``data:`` URLs, and follow a redirect to them)."""
    opener = urllib.request.OpenerDirector()
    for handler in (urllib.request.ProxyHandler(), urllib.request.HTTPHandler(), urllib.request.HTTPSHandler(),
                    urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                    urllib.request.UnknownHandler()):  # any other scheme: URLError "unknown url type"
        opener.add_handler(handler)
    return opener


class JsonPoster:
    """POSTs JSON to one URL of one server and returns the body of the first 2xx answer, or a named error."""

    def __init__(self, server: Server, url: str, timeout_seconds: float, api_key: str | None = None,
                 max_attempts: int = 3, backoff_seconds: float = 0.5, *,
                 sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.server = server
        self.url = url
        self.timeout_seconds = timeout_seconds
        self.api_key = api_key
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.sleep = sleep
        self._clock = clock
        self._opener = http_opener()

    def post(self, payload: dict) -> Reply:
        """Send ``payload`` (retrying only failures a retry can fix) and return the answer's body."""
        data = json.dumps(payload).encode()
        attempt, throttles = 1, 0
        while True:
            try:
                body, latency_ms = self._attempt(data)
                return Reply(body, latency_ms, throttles)
            except _Retryable as err:
                if attempt == self.max_attempts:
                    raise self._unavailable(err) from err
                self.sleep(self._backoff(attempt - 1))
            except _Throttled as err:
                throttles += 1
                if err.wait is None or err.wait > MAX_RETRY_AFTER_SECONDS or attempt == self.max_attempts:
                    raise ModelThrottled(f"{self.server.service} at {self.server.base_url} throttled model "
                                         f"{self.server.model!r}: {err}", throttles=throttles) from None
                self.sleep(err.wait)
            attempt += 1

    def _backoff(self, retry: int) -> float:
        """Exponential backoff with a little jitter, so concurrent experiments do not retry in lockstep."""
        delay = self.backoff_seconds * 2 ** retry
        return delay + random.uniform(0, JITTER_FRACTION * delay)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _attempt(self, data: bytes) -> tuple[bytes, int]:
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
                raise InvalidModelResponse(f"{self.server.asked} answered with more than {MAX_RESPONSE_BYTES:,} "
                                           "bytes; the answer was not read further")
            if self._clock() > deadline:
                raise TimeoutError
        return b"".join(chunks)

    def _http_error(self, err: urllib.error.HTTPError) -> Exception:
        try:
            text = error_text(err.read(MAX_ERROR_BYTES))
        except (OSError, http.client.HTTPException):
            text = err.reason
        if err.code >= 500:
            return _Retryable(f"HTTP {err.code}: {text}")
        if err.code == 429:  # a hosted server or a proxy in front of it rate-limits
            header = err.headers.get("Retry-After") if err.headers else None
            wait = retry_after(header)
            if header is not None:
                text += f" (Retry-After: {wait:g} s)" if wait is not None else f" (Retry-After: {bounded(header, 40)})"
            return _Throttled(text, wait)
        return ModelRequestRejected(f"{self.server.service} at {self.server.base_url} rejected the request for "
                                    f"model {self.server.model!r} (HTTP {err.code}): {text}")

    def _unavailable(self, last: _Retryable) -> ModelUnavailable:
        return ModelUnavailable(f"{self.server.asked}: {last} (failed {self.max_attempts} attempt(s)). "
                                f"{self.server.reach_hint}")

    def _timeout(self) -> ModelTimeout:
        return ModelTimeout(f"{self.server.asked} did not answer within {self.timeout_seconds:g} s; "
                            f"{self.server.timeout_hint}")
