"""One JSON POST to a model server, bounded and retried: the transport of every adapter that speaks HTTP
(Ollama's ``/api/chat``, the OpenAI-compatible ``/chat/completions``).

Only the standard library (urllib, http.client, json) talks HTTP, so the Lambda bundle carries no HTTP client and a
cold start imports nothing heavy. Failures are named for what to do about them: a server that cannot be reached or
keeps answering 5xx is retried a few times with backoff (``oriole.providers.retry``, the schedule every adapter
uses) and then reported as ``ModelUnavailable``; a 429 is ``ModelThrottled`` (the state machine retries it with
backoff), unless its ``Retry-After`` asks for a short wait, which is waited out here first; any other refusal (4xx,
such as an unknown model) is ``ModelRequestRejected`` at once, since repeating it cannot help; a request slower
than the timeout is ``ModelTimeout`` at once, so a slow model cannot multiply the wait.

The timeout bounds the whole exchange, retries and waits included, not each read: a socket timeout alone
lets a server that trickles its headers or its body, answers ``100 Continue`` forever or holds an error
body open keep a request (and the turn, and its Lambda) alive for as long as it likes. Each attempt's
sockets are shut down when the request's time is up (``_Exchange``), whatever is reading them, so a
request never outlives ``requestTimeoutSeconds`` by more than a moment and the turn's deadline holds.

What comes back is bounded: the client opens only http and https URLs and follows no redirect (so an API
key goes to the configured server and nowhere else), a body larger than ``MAX_RESPONSE_BYTES`` is an
``InvalidModelResponse`` (read no further), an error body is read up to ``MAX_ERROR_BYTES`` and quoted up to
``EXCERPT_CHARS``. The API key never comes back: a server that echoes it (in an error body, a status line, a
header, an answer), as sent or spelt with JSON escapes of any mix, has it replaced by ``[API key]``
(``oriole.text.Scrubber``) in the whole text before anything is cut to an excerpt, and in the body the adapters
read (its strings scrubbed once parsed, the body written again), so no stored or printed text holds any of it.

An interim answer (1xx: ``102 Processing``, ``103 Early Hints``) is read past, as ``100 Continue`` is; a body
that ends before its ``Content-Length`` is an incomplete read, tried again like a reset connection.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oriole.environment import Environment
from oriole.errors import (
    InvalidApiKey,
    InvalidModelResponse,
    ModelRequestRejected,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
    OrioleError,
)
from oriole.provider_registry import PROVIDERS
from oriole.providers.retry import Backoff
from oriole.providers.wire import EXCERPT_CHARS, MAX_ANSWER_DEPTH, excerpt, parse_json, request_bytes
from oriole.text import JsonObject, Scrubber, ascii_int, bounded

MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a chat answer is a few KB; this is room for very long reasoning
MAX_ERROR_BYTES = 64 * 1024
MAX_RETRY_AFTER_SECONDS = 10.0  # a throttle asking for a wait this short is waited out inside the task
_READ_CHUNK = 64 * 1024
KEY_SHOWN_AS = "[API key]"


@dataclass(frozen=True)
class Server:
    """Who is asked, as the messages name it: the kind of server, the base URL the researcher configured, the
    model, how to point oriole at the right server, and what to raise when it is too slow."""

    service: str
    base_url: str
    model: str
    reach_hint: str
    timeout_hint: str = "raise requestTimeoutSeconds (/oriole/models/request-timeout-seconds) or use a smaller model"

    @property
    def asked(self) -> str:
        return f"{self.service} model {self.model!r} at {self.base_url}"


@dataclass(frozen=True)
class Reply:
    """A 2xx body, the wall time of the attempt that got it, the throttled attempts waited out before, and every
    failed attempt before it (throttles included)."""

    body: bytes
    latency_ms: int
    throttles: int = 0
    retries: int = 0
    headers: tuple[tuple[str, str], ...] = ()  # the answer's headers, as the server sent them (a ``Server`` header)


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
    seconds = None if value is None else ascii_int(value.strip(), 6, signed=False)
    return None if seconds is None else float(seconds)


def check_api_key(key: str | None, source: str) -> str | None:
    """``key`` when it can travel in an ``Authorization`` header: printable Latin-1, no control character (http.client
    refuses a header with a line break and quotes the whole header, key and all, in its error; it cannot encode
    a character beyond Latin-1). The refusal names ``source`` and where the character is, never the key."""
    if key is None:
        return None
    for position, char in enumerate(key, 1):
        if not char.isprintable():
            kind = "a control character"
        elif ord(char) > 0xFF:
            kind = "a character beyond Latin-1"
        else:
            continue
        raise InvalidApiKey(
            f"{source} holds {kind} at position {position} of {len(key)}, which no HTTP header "
            "can carry: set the key again (a copied key often ends with a line break)"
        )
    return key


def environment_api_key(provider: str) -> str | None:
    """A provider's API key in a local run's environment (its ``Provider.api_key`` variable), checked; None when
    unset or empty."""
    return check_api_key(
        Environment.read().api_key(provider), f"the {PROVIDERS[provider].api_key} environment variable"
    )


class _Exchange:
    """The sockets of one attempt and the moment it must end. A timer shuts them down at that moment, so a
    read blocked on a server that trickles (the TLS handshake, the status line, a header, the body, an error
    body, one ``100 Continue`` after another) returns at once; ``expired`` then tells the attempt it was
    cut, not answered. Each socket is watched through a duplicate of its descriptor: shutting that down ends
    the connection however http.client and ssl have wrapped it, and closing it never touches a descriptor
    number the process has reused."""

    def __init__(self, seconds: float):
        self.ends = time.monotonic() + seconds
        self.expired = False
        self._watched: list[socket.socket] = []
        self._over = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Exchange:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._over = True
            for watched in self._watched:
                watched.close()

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expired = True
            for watched in self._watched:
                _shut(watched)

    def connect(
        self, address: tuple[str, int], timeout: object = None, source_address: tuple[str, int] | None = None
    ) -> socket.socket:
        """``socket.create_connection`` within the time left (each address tried gets what is left, not a
        whole timeout of its own); the connected socket is watched."""
        host, port = address
        failure: OSError = TimeoutError("no time left to connect")
        for family, kind, proto, _, target in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            left = self.ends - time.monotonic()
            if left <= 0:
                break
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(left)
                if source_address:
                    sock.bind(source_address)
                sock.connect(target)
            except OSError as err:
                sock.close()
                failure = err
                continue
            with self._lock:
                self._watched.append(sock.dup())
                if self.expired:
                    _shut(self._watched[-1])
            return sock
        raise failure


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the other side: nothing left to interrupt
        sock.shutdown(socket.SHUT_RDWR)


class _ExchangeRequest(urllib.request.Request):
    """A request that connects through its ``_Exchange`` (the only kind ``http_opener`` opens): a POST of
    ``data``, or a GET without it."""

    def __init__(
        self, url: str, exchange: _Exchange, data: bytes | None, headers: dict[str, str], method: str = "POST"
    ):
        super().__init__(url, data=data, headers=headers, method=method)
        self.exchange = exchange


class _FinalResponse(http.client.HTTPResponse):
    """A response read past every informational answer (1xx: 102 Processing, 103 Early Hints), as http.client
    reads past ``100 Continue`` alone: an interim answer is not the answer. (101 Switching Protocols is final.)"""

    def _read_status(self) -> tuple[str, int, str]:
        while True:
            version, status, reason = super()._read_status()  # type: ignore[misc]  # CPython's, not typeshed's
            if not 100 <= status < 200 or status == http.client.SWITCHING_PROTOCOLS:
                return version, status, reason
            http.client.parse_headers(self.fp)  # the interim answer's headers, skipped


def _watched(
    connection: type[http.client.HTTPConnection], request: urllib.request.Request
) -> Callable[..., http.client.HTTPConnection]:
    """``connection`` as urllib's ``do_open`` builds it, connecting through the request's ``_Exchange``."""
    if not isinstance(request, _ExchangeRequest):
        raise TypeError(f"http_opener opens only requests with an exchange, not {type(request).__name__}")
    exchange = request.exchange

    def build(host: str, **options: Any) -> http.client.HTTPConnection:
        made = connection(host, **options)
        made.response_class = _FinalResponse
        # how http.client opens its socket (and a tunnel's): an attribute typeshed does not declare
        made._create_connection = exchange.connect  # type: ignore[attr-defined]
        return made

    return build


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, req), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        # the TLS context HTTPSHandler made (or was given): an attribute typeshed does not declare
        context = self._context  # type: ignore[attr-defined]
        return self.do_open(_watched(http.client.HTTPSConnection, req), req, context=context)


def http_opener(errors_raised: bool = True) -> urllib.request.OpenerDirector:
    """An opener that speaks http and https only, follows no redirect (``build_opener`` would also open
    ``file:``, ``ftp:`` and ``data:`` URLs, and follow a redirect to them) and connects through each request's
    ``_Exchange`` (``request.exchange``); a status that is not 2xx is an ``HTTPError`` unless ``errors_raised`` is
    False (the answer is returned whatever its status, for a caller that reads errors itself)."""
    opener = urllib.request.OpenerDirector()
    handlers: list[urllib.request.BaseHandler] = [urllib.request.ProxyHandler(), _HTTPHandler(), _HTTPSHandler()]
    if errors_raised:
        handlers += [urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor()]
    for handler in (*handlers, urllib.request.UnknownHandler()):  # any other scheme: URLError "unknown url type"
        opener.add_handler(handler)
    return opener


class _Incomplete(Exception):
    """A body that ended before its ``Content-Length``: the connection was closed under it."""


def _read_body(response: http.client.HTTPResponse, asked: str) -> bytes:
    """Read the body, failing once it exceeds ``MAX_RESPONSE_BYTES`` (the rest is never read into memory) or
    when it ends before its ``Content-Length`` (``_Incomplete``: http.client returns what came, as if it were
    all)."""
    chunks, size = [], 0
    while chunk := response.read1(_READ_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise InvalidModelResponse(
                f"{asked} answered with more than {MAX_RESPONSE_BYTES:,} bytes; the answer was not read further"
            )
    if response.length:  # bytes its Content-Length announced that never came
        raise _Incomplete(
            f"the answer ended after {size:,} of the {size + response.length:,} bytes its Content-Length "
            "announced (the connection was closed)"
        )
    return b"".join(chunks)


@dataclass(frozen=True)
class Answer:
    """What one exchange brought back, whatever its status: for a caller that reads errors itself (botocore)."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


def exchange(
    method: str,
    url: str,
    headers: dict[str, str],
    body: bytes | None,
    seconds: float,
    asked: str,
    hint: str,
    limit: float | None = None,
) -> Answer:
    """One HTTP request of at most ``seconds``, from connecting to the last byte of the answer, however the
    server trickles it (``_Exchange``): the answer whatever its status (no redirect followed, interim 1xx answers
    read past), or a named error: ``ModelTimeout`` past the time, ``ModelUnavailable`` for a server that cannot
    be reached or closes an answer short, ``InvalidModelResponse`` past ``MAX_RESPONSE_BYTES``. ``asked`` names
    who was asked, ``hint`` what to do about a timeout, ``limit`` the time a message names (the request's whole
    time, of which ``seconds`` are left)."""
    timeout = ModelTimeout(f"{asked} did not answer within {limit or seconds:g} s; {hint}")
    with _Exchange(seconds) as bounded_exchange:
        try:
            request = _ExchangeRequest(url, bounded_exchange, body, headers, method)
            with http_opener(errors_raised=False).open(request, timeout=seconds) as response:
                answer = Answer(response.status, list(response.headers.items()), _read_body(response, asked))
        except InvalidModelResponse:
            raise
        except (OSError, http.client.HTTPException, _Incomplete) as err:
            if (
                bounded_exchange.expired
                or isinstance(err, TimeoutError)
                or isinstance(getattr(err, "reason", None), TimeoutError)
            ):
                raise timeout from None
            raise ModelUnavailable(f"{asked}: the connection failed ({type(err).__name__}: {err})") from None
        if bounded_exchange.expired:  # a body without a length, cut short, reads like a whole one
            raise timeout
        return answer


class JsonPoster:
    """POSTs JSON to one URL of one server (or GETs it) and returns the body of the first 2xx answer, or a named
    error."""

    def __init__(
        self,
        server: Server,
        url: str,
        timeout_seconds: float,
        api_key: str | None = None,
        max_attempts: int = 3,
        backoff_seconds: float = 0.5,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.server = server
        self.url = url
        self.timeout_seconds = timeout_seconds
        self.api_key = check_api_key(api_key, f"the {server.service} API key") or None
        self._keys = Scrubber(self.api_key, KEY_SHOWN_AS)  # whatever the server echoes, the key never comes back
        self.backoff = Backoff(max_attempts, backoff_seconds, sleep)
        self._clock = clock
        self._opener = http_opener()

    def post(self, payload: JsonObject) -> Reply:
        """Send ``payload`` (retrying only failures a retry can fix, while the request's time lasts) and return
        the answer's body."""
        return self._exchange(request_bytes(payload))

    def get(self) -> Reply:
        """GET the URL, retried and bounded as a POST is (a listing of what the server serves)."""
        return self._exchange(None)

    def _exchange(self, data: bytes | None) -> Reply:
        attempt, throttles, deadline = 1, 0, None
        while True:
            started = self._clock()
            if deadline is None:
                deadline = started + self.timeout_seconds
            try:
                body, headers = self._attempt(data, deadline - started)
            except _Retryable as err:
                wait = self.backoff.wait(attempt)
                if not self.backoff.allows(attempt) or self._clock() + wait >= deadline:
                    raise self._unavailable(err, attempt) from err
                self.backoff.sleep(wait)
            except _Throttled as err:
                throttles += 1
                if (
                    err.wait is None
                    or err.wait > MAX_RETRY_AFTER_SECONDS
                    or not self.backoff.allows(attempt)
                    or self._clock() + err.wait >= deadline
                ):
                    raise ModelThrottled(
                        self._scrubbed(
                            f"{self.server.service} at {self.server.base_url} throttled "
                            f"model {self.server.model!r}: {err}"
                        ),
                        throttles=throttles,
                    ) from None
                self.backoff.sleep(err.wait)  # the server said how long: its wait, not the schedule's
            else:
                elapsed = self._clock() - started
                if elapsed > deadline - started:  # complete, but after the request's time was up
                    raise self._timeout()
                return Reply(
                    self._keys.body(body, MAX_ANSWER_DEPTH),
                    int(elapsed * 1000),
                    throttles,
                    attempt - 1,
                    tuple((name, self._scrubbed(value)) for name, value in headers),
                )
            attempt += 1

    def _scrubbed(self, text: str) -> str:
        """``text`` (a message quoting what the server sent) without the API key."""
        return self._keys.text(text)

    def _headers(self, data: bytes | None) -> dict[str, str]:
        headers = {"Accept": "application/json"} | ({} if data is None else {"Content-Type": "application/json"})
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers

    def _attempt(self, data: bytes | None, seconds: float) -> tuple[bytes, list[tuple[str, str]]]:
        """One HTTP attempt of at most ``seconds``, from connecting to the last byte of the body (or of an error
        body): the body and the headers, or a named error."""
        if seconds <= 0:
            raise self._timeout()
        with _Exchange(seconds) as exchange:
            request = _ExchangeRequest(self.url, exchange, data, self._headers(data), "GET" if data is None else "POST")
            try:
                answer = self._send(request, seconds)
            except (OrioleError, _Retryable, _Throttled):
                if exchange.expired:
                    raise self._timeout() from None
                raise
            if exchange.expired:  # a body without a length, cut short, reads like a whole one
                raise self._timeout()
            return answer

    def _send(self, request: urllib.request.Request, seconds: float) -> tuple[bytes, list[tuple[str, str]]]:
        try:
            with self._opener.open(request, timeout=seconds) as response:
                return self._read(response), list(response.headers.items())
        except urllib.error.HTTPError as err:
            raise self._http_error(err) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise self._timeout() from err
            raise _Retryable(f"cannot connect ({err.reason})") from err
        except TimeoutError as err:
            raise self._timeout() from err
        except (OSError, http.client.HTTPException) as err:
            raise _Retryable(f"the connection failed ({type(err).__name__}: {err})") from err

    def _read(self, response: http.client.HTTPResponse) -> bytes:
        """The body (``_read_body``); one that ends before its ``Content-Length`` is tried again like a reset."""
        try:
            return _read_body(response, self.server.asked)
        except _Incomplete as err:
            raise _Retryable(str(err)) from None

    def _http_error(self, err: urllib.error.HTTPError) -> Exception:
        """The named error of a refusal; what it quotes (the error body, a header) has the key taken out of it
        whole before anything is cut to an excerpt."""
        try:
            text = error_text(self._keys.body(err.read(MAX_ERROR_BYTES), MAX_ANSWER_DEPTH))
        except (OSError, http.client.HTTPException):
            text = self._scrubbed(str(err.reason))
        if err.code >= 500:
            return _Retryable(f"HTTP {err.code}: {text}")
        if err.code == 429:  # a hosted server or a proxy in front of it rate-limits
            header = err.headers.get("Retry-After") if err.headers else None
            wait = retry_after(header)
            if header is not None:
                shown = bounded(self._scrubbed(header), 40)
                text += f" (Retry-After: {wait:g} s)" if wait is not None else f" (Retry-After: {shown})"
            return _Throttled(text, wait)
        return ModelRequestRejected(
            self._scrubbed(
                f"{self.server.service} at {self.server.base_url} rejected the "
                f"request for model {self.server.model!r} (HTTP {err.code}): "
                f"{text}"
            )
        )

    def _unavailable(self, last: _Retryable, attempts: int) -> ModelUnavailable:
        return ModelUnavailable(
            self._scrubbed(f"{self.server.asked}: {last} (failed {attempts} attempt(s)). {self.server.reach_hint}")
        )

    def _timeout(self) -> ModelTimeout:
        return ModelTimeout(
            f"{self.server.asked} did not answer within {self.timeout_seconds:g} s; {self.server.timeout_hint}"
        )
