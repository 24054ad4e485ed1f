"""The agent of every provider whose model answers a JSON chat request POSTed over HTTP (Ollama's ``/api/chat``,
the OpenAI-compatible ``/chat/completions``): what such adapters share, written once.

A provider of this kind is a ``ChatFormat`` (where its chat endpoint is, how its requests and answers look on the
wire: its module's ``wire_request`` and ``parse_response``) and a subclass of ``HttpChatAgent`` that says what each
request sends beside the conversation (``settings``) and how an experiment's configuration sets it (``from_config``).
The request itself (one bounded exchange, retried by ``oriole.providers.retry``'s schedule, errors named for what to
do) is ``oriole.providers.transport``'s.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from oriole.core.turn_loop import ModelRequest, ModelResponse
from oriole.providers.transport import JsonPoster, Server
from oriole.text import JsonObject

WireRequest = Callable[[ModelRequest, JsonObject], JsonObject]  # (request, an agent's settings) -> the body sent
ParseResponse = Callable[[bytes, int, int, int], ModelResponse]  # (body, latency ms, throttles, retries) -> answer


@dataclass(frozen=True)
class ChatFormat:
    """A chat protocol spoken over HTTP: who answers (as messages name the server), the path under the base URL,
    the request body of a neutral request, and the answer read back."""

    service: str  # "Ollama", "the OpenAI-compatible server"
    path: str  # "/api/chat"
    wire_request: WireRequest
    parse_response: ParseResponse


class HttpChatAgent(ABC):
    """An Agent (see ``oriole.core.turn_loop``) asking one model behind a chat endpoint over HTTP.

    ``context_budget`` is how many tokens one request may hold (the history is trimmed to fit it); ``retries``
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
        reply = self.http.post(self.payload(request))
        return self.chat_format.parse_response(reply.body, reply.latency_ms, reply.throttles, reply.retries)
