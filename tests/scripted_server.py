"""A scripted model server: real HTTP on loopback, answering each request with the next reply of a script.

Tests of the HTTP providers go through a real socket, so timeouts, refused connections, status codes, headers
and malformed bodies are the ones urllib really sees. A subclass speaks one protocol: ``problem`` says why a
request is not one that protocol's server would accept (it is answered with that error, and still recorded),
``render`` turns a scripted reply into a full answer, and ``error`` writes an error in the protocol's shape.
A request beyond the script gets a 500 naming the problem, so a test that asks more than it scripted fails
loudly instead of hanging.

A reply is a dict (the subclass renders it with 200), a raw ``(status, body bytes)`` or
``(status, body bytes, headers)`` tuple, ``slow(seconds, reply)``, or ``trickle(pause, pieces)``: raw bytes the
test writes itself (status line, headers and body), one piece every ``pause`` seconds, for as long as the pieces
last (they may be endless) and the client listens. Every request is kept in ``requests``, and every answer
written whole in ``answers`` (status and body bytes, in the order of the requests). ``billed`` is the server's own
ledger: the tokens its 2xx answers reported, summed over the answers it finished writing (``usage_of`` reads them in
the protocol's fields), to be held against what the client stored. ``most_in_flight`` is the most scripted requests
it was answering at once: how many clients it served together (a concurrency cap is held against it);
``most_in_flight_by_model`` the same per model the requests named (an agent's cap).

The models a server serves (``models``) are what its protocol's listing answers (``listing``: Ollama's ``GET
/api/tags``, ``/api/show`` and ``/api/version``, ``GET /v1/models``): a listing is answered out of the script and
kept apart, its request in ``listings``, its answer out of ``answers`` and the ledger.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Raw = tuple[int, bytes] | tuple[int, bytes, dict[str, str]]


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` before answering with ``reply``."""

    seconds: float
    reply: dict | tuple


@dataclass(frozen=True)
class ScriptedRequest:
    """One request the server received: header names are lower-case; ``body`` is the parsed JSON (or None), ``raw``
    the bytes as they arrived."""

    method: str
    path: str
    headers: dict[str, str]
    body: object = field(default=None)
    raw: bytes = b""


@dataclass(frozen=True)
class Listed:
    """A listing's answer (``ScriptedServer.listing``): written like any, kept out of ``answers`` and the ledger."""

    raw: Raw


@dataclass(frozen=True)
class Trickle:
    """Write ``pieces`` (raw bytes: the whole answer, as a hostile server writes it) ``pause`` seconds apart."""

    pause: float
    pieces: Iterable[bytes]


def slow(seconds: float, reply: dict | tuple) -> Slow:
    return Slow(seconds, reply)


def trickle(pause: float, pieces: Iterable[bytes]) -> Trickle:
    return Trickle(pause, pieces)


class ScriptedServer:
    """An HTTP endpoint on 127.0.0.1 (ephemeral port) answering each request with the next scripted reply."""

    def __init__(self, *replies: dict | tuple | Slow | Trickle, models: Iterable[str] = ()):
        self._script: deque = deque(replies)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.models = tuple(models)
        self.requests: list[ScriptedRequest] = []
        self.listings: list[ScriptedRequest] = []
        self.answers: list[tuple[int, bytes]] = []
        self.delivered: list[tuple[int, bytes]] = []  # the answers written to the end without the client leaving
        self.in_flight = 0  # scripted requests being answered now
        self.most_in_flight = 0  # the most at once so far: how many clients the server served together
        self.in_flight_by_model: Counter[str] = Counter()  # the same, per model a request names ("model")
        self.most_in_flight_by_model: dict[str, int] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name=type(self).__name__, daemon=True
        )

    # --- the protocol, in a subclass ------------------------------------------------------------------------

    def problem(self, request: ScriptedRequest) -> Raw | None:
        """Why the protocol's server would refuse ``request`` (as its error answer), or None."""
        raise NotImplementedError

    def render(self, reply: dict, request: ScriptedRequest) -> Raw:
        """A scripted dict reply as the protocol's full answer."""
        raise NotImplementedError

    def error(self, status: int, message: str) -> Raw:
        """An error answer in the protocol's shape."""
        raise NotImplementedError

    def usage_of(self, body: dict) -> tuple[int, int]:
        """The input and output tokens a 2xx answer's body reports, in the protocol's fields."""
        raise NotImplementedError

    def billed(self) -> tuple[int, int]:
        """The ledger: input and output tokens over every 2xx answer written whole to its client."""
        with self._lock:
            delivered = list(self.delivered)
        reported = [self.usage_of(json.loads(body)) for status, body in delivered if 200 <= status < 300]
        return sum(r[0] for r in reported), sum(r[1] for r in reported)

    def listing(self, request: ScriptedRequest) -> Raw | None:
        """The protocol's listing of ``models`` when ``request`` asks for it, else None (the request goes on to
        the script)."""
        return None

    # --- the server -----------------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def remaining(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._script)

    def add(self, *replies: dict | tuple | Slow | Trickle) -> None:
        with self._lock:
            self._script.extend(replies)

    def __enter__(self):
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

    def _next(self, number: int) -> dict | tuple | Slow | Trickle:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.error(500, f"{type(self).__name__}: request #{number} was not scripted (the script is exhausted)")

    def _answer(self, request: ScriptedRequest) -> Raw | Trickle | Listed:
        """The status, body and headers for one request, waiting first if the reply is slow (a trickle is
        written as it is); a listing's, marked as such."""
        if (listed := self.listing(request)) is not None:
            with self._lock:
                self.listings.append(request)
            return Listed(listed)
        problem = self.problem(request)
        number = self._record(request)
        if problem:
            return problem
        model = str(request.body.get("model")) if isinstance(request.body, dict) else ""
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.in_flight_by_model[model] += 1
            self.most_in_flight_by_model[model] = max(
                self.most_in_flight_by_model.get(model, 0), self.in_flight_by_model[model]
            )
        try:
            reply = self._next(number)
            if isinstance(reply, Slow):
                if self._stopping.wait(reply.seconds):
                    return self.error(503, f"{type(self).__name__}: shutting down")
                reply = reply.reply
            return reply if isinstance(reply, tuple | Trickle) else self.render(reply, request)
        finally:
            with self._lock:
                self.in_flight -= 1
                self.in_flight_by_model[model] -= 1

    def _trickle(self, answer: Trickle, out) -> None:
        """Write the pieces one by one until they run out, the client leaves or the server stops."""
        for piece in answer.pieces:
            if self._stopping.wait(answer.pause):
                return
            try:
                out.write(piece)
                out.flush()
            except OSError:
                return  # the client gave up: what the test wanted

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        scripted = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._serve(self._json(raw), raw)

            def do_GET(self) -> None:
                self._serve(None)

            @staticmethod
            def _json(raw: bytes) -> object:
                try:
                    return json.loads(raw)
                except ValueError:
                    return None

            def _serve(self, body: object, raw: bytes = b"") -> None:
                headers = {name.lower(): value for name, value in self.headers.items()}
                answer = scripted._answer(ScriptedRequest(self.command, self.path, headers, body, raw))
                if isinstance(answer, Trickle):
                    self.close_connection = True
                    scripted._trickle(answer, self.wfile)
                    return
                chat = not isinstance(answer, Listed)  # a listing is kept apart: not an answer, never billed
                status, payload, *extra = answer.raw if isinstance(answer, Listed) else answer
                with scripted._lock:
                    if chat:
                        scripted.answers.append((status, payload))
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in (extra[0] if extra else {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except OSError:
                    return  # the client gave up (a timeout test); nothing left to tell it
                if chat:
                    with scripted._lock:
                        scripted.delivered.append((status, payload))

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
