"""The Ollama provider: the turn loop's neutral request as Ollama's ``POST /api/chat``, and its answer back.

The agent is the shared HTTP chat agent (``oriole.providers.http_chat``: the http/https-only transport, bounded
reading, retries with backoff, the named errors); this module only translates. A body that is not a chat
response is ``InvalidModelResponse``. Tool calls come back exactly as the model sent them: judging them is
the turn loop's job, so a malformed call becomes an invalid action rather than a lost one. Token counts
must be counts (see ``oriole.providers.wire.reported_count``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oriole.core.tools import ToolCall, model_call
from oriole.core.turn_loop import AgentSetup, Message, ModelRequest, ModelResponse, Usage, prompt_budget
from oriole.errors import InvalidModelResponse
from oriole.experiment_config import ExperimentConfig
from oriole.providers.http_chat import IDENTITY_FAILURES, ChatFormat, HttpChatAgent, listing
from oriole.providers.identity import Asking, ModelIdentity, text
from oriole.providers.wire import (
    EXCERPT_CHARS,
    MAX_DURATION_NS,
    arguments_object,
    content_text,
    excerpt,
    function_tool,
    not_json,
    optional_text,
    parse_json,
    picture_base64,
    reported_count,
    reported_text,
)
from oriole.text import JsonObject, bounded

CHAT_PATH = "/api/chat"
DURATION_FIELDS = ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")


def wire_message(message: Message) -> JsonObject:
    """One neutral message in Ollama's chat format (a call's arguments as an object)."""
    if message.role == "tool":
        return {"role": "tool", "content": content_text(message.content), "tool_name": message.name or ""}
    wire: JsonObject = {"role": message.role, "content": content_text(message.content)}
    if message.picture is not None:  # Ollama's images: base64, on the message that shows them
        wire["images"] = [picture_base64(message.picture)]
    if message.tool_calls:
        wire["tool_calls"] = [
            {"function": {"name": call.name, "arguments": arguments_object(call.arguments)}}
            for call in message.tool_calls
        ]
    return wire


def _durations(body: JsonObject) -> JsonObject:
    """Ollama's own timings (nanoseconds), as far as they are counts up to an hour: they are kept for reading
    only, so an absurd one is left out rather than refused."""
    return {
        k: body[k]
        for k in DURATION_FIELDS
        if isinstance(body.get(k), int) and not isinstance(body[k], bool) and 0 <= body[k] <= MAX_DURATION_NS
    }


def _tool_call(index: int, entry: object) -> ToolCall:
    """A call as the model sent it; a nameless one is kept (with name "") so the loop counts it invalid."""
    function = entry.get("function") if isinstance(entry, dict) else None
    function = function if isinstance(function, dict) else {}
    name = function.get("name")
    return model_call(name if isinstance(name, str) else "", function.get("arguments"), call_id=f"call_{index}")


def parse_response(raw: bytes, latency_ms: int, throttles: int = 0, retries: int = 0) -> ModelResponse:
    """Turn a non-streaming ``/api/chat`` body into a ModelResponse; anything else is InvalidModelResponse."""
    try:
        body = parse_json(raw)
    except ValueError as error:
        raise InvalidModelResponse(f"Ollama answered with {not_json(raw, error)}") from None
    if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
        raise InvalidModelResponse(f"Ollama answered without a chat message object: {excerpt(raw)}")
    message = body["message"]
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise InvalidModelResponse(f"Ollama answered with tool_calls that are not a list: {excerpt(raw)}")
    return ModelResponse(
        tool_calls=tuple(_tool_call(i, entry) for i, entry in enumerate(calls)),
        text=optional_text(message.get("content")),
        thinking=optional_text(message.get("thinking")),
        # a count Ollama leaves out is zero (a fully cached prompt has no prompt_eval_count)
        usage=Usage(
            reported_count(body.get("prompt_eval_count"), "prompt_eval_count"),
            reported_count(body.get("eval_count"), "eval_count"),
            latency_ms,
        ),
        stop_reason=bounded(body["done_reason"], EXCERPT_CHARS) if isinstance(body.get("done_reason"), str) else None,
        durations=_durations(body),
        throttles=throttles,
        retries=retries,
        raw=raw,
        model=reported_text(body.get("model")),
    )


def wire_request(request: ModelRequest, settings: JsonObject) -> JsonObject:
    """The ``/api/chat`` body of a request with an agent's ``settings`` (the model, ``stream``, ``options``):
    system prompt first, then the turn's messages, and the tools when there are any."""
    messages = [{"role": "system", "content": request.system_prompt}]
    messages += [wire_message(m) for m in request.messages]
    body = {"model": settings["model"], "messages": messages, **{k: v for k, v in settings.items() if k != "model"}}
    if request.tools:  # a request without tools (a summary, text tool calls) must not name any
        body["tools"] = [function_tool(t) for t in request.tools]
    return body


def served_models(raw: bytes) -> set[str]:
    """The models ``GET /api/tags`` lists, by every name a request may use: ``llama3:latest`` also as ``llama3``."""
    names = {str(entry["name"]) for entry in listing(raw)["models"]}
    return names | {name.removesuffix(":latest") for name in names}


recorded_answer = parse_response  # a stored answer is read again as the first time (``oriole.providers.replay``)
OLLAMA = ChatFormat("Ollama", CHAT_PATH, wire_request, parse_response, "/api/tags", served_models)


class OllamaAgent(HttpChatAgent):
    """An Agent (see ``oriole.core.turn_loop``) backed by a model served by Ollama; its context budget is Ollama's
    context window (``options.num_ctx``) less the answer's room (``options.num_predict``, ``prompt_budget``)."""

    chat_format = OLLAMA

    def __init__(
        self,
        model: str,
        endpoint: str,
        options: JsonObject,
        timeout_seconds: float,
        api_key: str | None = None,
        **retries: Any,
    ):
        """``retries`` (``max_attempts``, ``backoff_seconds``, ``sleep``, ``clock``) go to the ``JsonPoster``."""
        self.options = dict(options)
        reach = (
            f"Check that Ollama is running and reachable at {endpoint.rstrip('/')}, or point oriole at the right "
            "server with --ollama-url or the /oriole/ollama/endpoint parameter"
        )
        window, answer = self.options.get("num_ctx"), self.options.get("num_predict")
        budget = prompt_budget(window, answer or 0) if isinstance(window, int) else None
        super().__init__(model, endpoint, timeout_seconds, reach, api_key, budget, **retries)

    @classmethod
    def from_config(
        cls, model: str, config: ExperimentConfig, api_key: str | None = None, **kwargs: Any
    ) -> OllamaAgent:
        """An agent from an experiment's configuration."""
        options = {
            "num_ctx": config.num_ctx,
            **({"num_predict": config.num_predict} if config.num_predict else {}),  # 0: no cap, none sent
            "temperature": config.temperature,
            "repeat_penalty": config.repeat_penalty,
            "seed": config.seed,
        }
        return cls(model, config.endpoint, options, config.request_timeout_seconds, api_key=api_key, **kwargs)

    @property
    def settings(self) -> JsonObject:
        """What every request sends beyond the conversation (see ``wire_request``)."""
        return {"model": self.model, "stream": False, "options": dict(self.options)}


def check_server(config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
    """Whether the Ollama server an experiment with ``config`` goes to answers and has ``models`` pulled: one
    ``GET /api/tags`` (see ``HttpChatAgent.check_server``)."""
    return OllamaAgent.from_config(models[0], config, api_key).check_server(models)


def agent(setup: AgentSetup, api_key: str | None = None) -> OllamaAgent:
    """The provider's agent for an experiment's turn (its entry in ``oriole.provider_registry`` names this module)."""
    return OllamaAgent.from_config(setup.model, setup.config, api_key)


def model_identity(config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity:
    """What the Ollama server an experiment goes to reports, asked once at its start: its version (``GET
    /api/version``), the model's digest as pulled (its ``GET /api/tags`` entry: the build, which a tag such as
    ``qwen3:8b`` may point elsewhere after the next pull) and its details (``POST /api/show``: parameter size,
    quantisation, family). An endpoint that does not answer leaves its fields unknown, with the reason."""
    agent = OllamaAgent.from_config(model, config, api_key)
    asking = Asking()
    version = asking.ask("/api/version", lambda: parse_json(agent.ask_get("/api/version").body), IDENTITY_FAILURES)
    tags = asking.ask("/api/tags", lambda: parse_json(agent.ask_get("/api/tags").body), IDENTITY_FAILURES)
    shown = asking.ask(
        "/api/show", lambda: parse_json(agent.ask_post("/api/show", {"model": model}).body), IDENTITY_FAILURES
    )
    entry = _tags_entry(tags, model)
    if tags is not None and entry is None:
        asking.missing("/api/tags", f"the listing has no model named {model!r}")
    details = _object_field(shown, "details") or _object_field(entry, "details")
    return asking.identity(
        model_build=text(entry.get("digest")) if entry else None,
        reported_model=text(entry.get("model") or entry.get("name")) if entry else None,
        server_software="Ollama" if isinstance(version, dict) and "version" in version else None,
        server_version=text(version.get("version")) if isinstance(version, dict) else None,
        parameter_size=text(details.get("parameter_size")),
        quantization=text(details.get("quantization_level")),
    )


def _tags_entry(tags: object, model: str) -> JsonObject | None:
    """The ``/api/tags`` entry of ``model`` (``llama3`` is ``llama3:latest``), or None."""
    names = {model, model if ":" in model else f"{model}:latest"}
    entries = tags.get("models") if isinstance(tags, dict) else None
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and (entry.get("name") in names or entry.get("model") in names):
            return entry
    return None


def _object_field(value: object, key: str) -> JsonObject:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}
