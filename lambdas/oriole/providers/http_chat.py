"""The agent of every provider whose model answers a JSON chat request POSTed over HTTP (Ollama's ``/api/chat``,
the OpenAI-compatible ``/chat/completions``): what such adapters share, written once.

A provider of this kind is a ``ChatFormat`` (where its chat endpoint is, how its requests and answers look on the
wire: its module's ``wire_request`` and ``parse_response``) and a subclass of ``HttpChatAgent`` that says what each
request sends beside the conversation (``settings``) and how an experiment's configuration sets it (``from_config``).
The request itself (one bounded exchange, retried by ``oriole.providers.retry``'s schedule, errors named for what to
do) is ``oriole.providers.transport``'s.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from oriole.core.turn_loop import ModelRequest, ModelResponse
from oriole.errors import InvalidModelResponse, ModelRequestRejected, OrioleError
from oriole.providers.transport import JsonPoster, Reply, Server
from oriole.providers.wire import excerpt, parse_json, sent_hash
from oriole.text import JsonObject

WireRequest = Callable[[ModelRequest, JsonObject], JsonObject]  # (request, an agent's settings) -> the body sent
ParseResponse = Callable[[bytes, int, int, int], ModelResponse]  # (body, latency ms, throttles, retries) -> answer


@dataclass(frozen=True)
class ChatFormat:
    """A chat protocol spoken over HTTP: who answers (as messages name the server), the path under the base URL,
    the request body of a neutral request, and the answer read back; and the server's cheapest documented call,
    the listing of the models it serves (``models_path``, read by ``served_models``: every name a request may give
    a model by)."""

    service: str  # "Ollama", "the OpenAI-compatible server"
    path: str  # "/api/chat"
    wire_request: WireRequest
    parse_response: ParseResponse
    models_path: str  # "/api/tags"
    served_models: Callable[[bytes], set[str]]


class HttpChatAgent(ABC):
    """An Agent (see ``oriole.core.turn_loop``) asking one model behind a chat endpoint over HTTP.

    ``context_budget`` is how many tokens one request may hold (the earlier turns are trimmed to fit it); ``retries``
    (``max_attempts``, ``backoff_seconds``, ``sleep``, ``clock``) go to the ``JsonPoster``.
    """

    chat_format: ClassVar[ChatFormat]

    def __init__(
        self,
        model: str,
        base_url: str,
        timeout_seconds: float,
        reach_hint: str,
        api_key: str | None = None,
        context_budget: int | None = None,
        **retries: Any,
    ):
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.context_budget = context_budget
        server = Server(self.chat_format.service, self.base_url, model, reach_hint=reach_hint)
        self.http = JsonPoster(server, self.base_url + self.chat_format.path, timeout_seconds, api_key, **retries)

    @property
    @abstractmethod
    def settings(self) -> JsonObject:
        """What every request sends beyond the system prompt, the tools and the messages (the model, its generation
        settings): stored with each call, so that its request can be rebuilt exactly."""

    @property
    def url(self) -> str:
        return self.http.url

    def payload(self, request: ModelRequest) -> JsonObject:
        """The request body (the format's ``wire_request``)."""
        return self.chat_format.wire_request(request, self.settings)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """Ask the model once (retrying only failures a retry can fix) and translate its answer."""
        payload = self.payload(request)
        reply = self.http.post(payload)
        answer = self.chat_format.parse_response(reply.body, reply.latency_ms, reply.throttles, reply.retries)
        return replace(answer, sent_sha256=sent_hash(payload))  # the bytes post sent (request_bytes)

    def check_server(self, models: Sequence[str]) -> str:
        """Ask the server once for the models it serves (within ``CHECK_TIMEOUT_SECONDS``, or the request timeout
        when shorter), and whether ``models`` are among them: what it answered, in a line. The transport's named
        errors when it cannot be reached, times out or refuses (a wrong API key); ``ModelRequestRejected`` naming
        the closest models it does serve when one is not served."""
        server = replace(self.http.server, model=", ".join(models))
        url = self.base_url + self.chat_format.models_path
        timeout = min(self.http.timeout_seconds, CHECK_TIMEOUT_SECONDS)
        reply = JsonPoster(server, url, timeout, self.http.api_key).get()
        try:
            served = self.chat_format.served_models(reply.body)
        except (ValueError, TypeError, KeyError, AttributeError):
            raise InvalidModelResponse(
                f"{self.chat_format.service} at {self.base_url} answered GET {self.chat_format.models_path} with "
                f"something that lists no models: {excerpt(reply.body)}"
            ) from None
        if missing := [model for model in models if model not in served]:
            raise ModelRequestRejected(
                f"{self.chat_format.service} at {self.base_url} serves no model {', '.join(map(repr, missing))}; "
                f"{_served_text(missing[0], served)}"
            )
        return f"{self.chat_format.service} at {self.base_url} serves {', '.join(models)} ({reply.latency_ms} ms)"

    def ask_get(self, path: str) -> Reply:
        """``GET`` a path under the base URL once (no retry: an identity question, ``IDENTITY_TIMEOUT_SECONDS`` at
        most), with the API key the chat sends."""
        return self._once(path).get()

    def ask_post(self, path: str, payload: JsonObject) -> Reply:
        """``POST`` JSON to a path under the base URL once, as ``ask_get``."""
        return self._once(path).post(payload)

    def _once(self, path: str) -> JsonPoster:
        timeout = min(self.http.timeout_seconds, IDENTITY_TIMEOUT_SECONDS)
        return JsonPoster(self.http.server, self.base_url + path, timeout, self.http.api_key, max_attempts=1)


IDENTITY_TIMEOUT_SECONDS = 5.0  # answered at once by a server that serves; three fit StartExperiment's time
# what an identity question may meet and record as the reason it told nothing: a named transport error (refused,
# timed out, rejected, a body too large) or an answer that is not JSON
IDENTITY_FAILURES: tuple[type[BaseException], ...] = (OrioleError, ValueError)


def listing(raw: bytes) -> Any:
    """A models listing's JSON, read field by field by ``ChatFormat.served_models``: a field that is missing or of
    the wrong type raises, which ``check_server`` reports as an answer that lists no models."""
    return parse_json(raw)


CHECK_TIMEOUT_SECONDS = 15.0  # a listing of models answers at once; a server that does not is down for a sweep


def _served_text(wanted: str, served: set[str]) -> str:
    """``it serves: a, b`` with the names most like ``wanted`` first, at most a few."""
    if not served:
        return "it serves none (pull or load the model first)"
    near = difflib.get_close_matches(wanted, sorted(served), n=3, cutoff=0.5)
    shown = near + [name for name in sorted(served) if name not in near][: max(0, 5 - len(near))]
    more = f" and {len(served) - len(shown)} more" if len(served) > len(shown) else ""
    return f"it serves: {', '.join(shown)}{more}"
