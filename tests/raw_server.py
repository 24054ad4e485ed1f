"""A hostile server from a raw socket: it reads each request (its headers and its Content-Length body) and writes
back exactly the bytes a test scripts, piece by piece with pauses between them, then closes the connection. No
HTTP library stands between the script and the client, so a status line, an interim 1xx answer, a body shorter
than its length or one byte a second reach the client as written.

    with RawServer([b"HTTP/1.1 103 Early Hints\\r\\n\\r\\n", ok_json({"a": 1})]) as server:
        ...  # server.url; server.requests holds (request line, headers, body) per connection
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Paced:
    """Write ``pieces`` one every ``pause`` seconds (for as long as they last and the client listens)."""

    pause: float
    pieces: Iterable[bytes]


Answer = bytes | list[bytes] | Paced


def ok_json(value: object, status: str = "200 OK", extra_headers: str = "") -> bytes:
    """A whole HTTP/1.1 answer carrying ``value`` as JSON."""
    body = value if isinstance(value, bytes) else json.dumps(value).encode()
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{extra_headers}"
    return head.encode() + b"Connection: close\r\n\r\n" + body


class RawServer:
    """Answers each connection on 127.0.0.1 with the next scripted answer (the last one again when the script runs
    out), then closes it."""

    def __init__(self, *answers: Answer):
        self._script: deque[Answer] = deque(answers)
        self._last: Answer = answers[-1] if answers else b""
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._stop = threading.Event()
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self._thread = threading.Thread(target=self._serve, name="raw-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            answer = self._script.popleft() if self._script else self._last
            threading.Thread(target=self._answer, args=(conn, answer), daemon=True).start()

    def _answer(self, conn: socket.socket, answer: Answer) -> None:
        with conn:
            conn.settimeout(10)
            try:
                self.requests.append(_read_request(conn))
                pieces, pause = (answer.pieces, answer.pause) if isinstance(answer, Paced) else (answer, 0.0)
                for piece in [pieces] if isinstance(pieces, bytes) else pieces:
                    if self._stop.is_set():
                        return
                    conn.sendall(piece)
                    time.sleep(pause)
            except OSError:  # the client hung up: what a hostile server cannot help
                return


def _read_request(conn: socket.socket) -> tuple[str, dict[str, str], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    line, *fields = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return line, headers, body
