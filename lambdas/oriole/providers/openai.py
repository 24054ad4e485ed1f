"""The OpenAI-compatible provider: the turn loop's neutral request as a Chat Completions request
(``POST {base_url}/chat/completions``), and its answer back.

One protocol covers the servers labs run their own models on (vLLM, SGLang, llama.cpp's llama-server,
LM Studio, Ollama's ``/v1``) and OpenAI's hosted API. The wire format follows the Chat Completions spec:
tools as ``{"type": "function", "function": {...}}``; an assistant turn's calls as ``tool_calls`` entries
with an ``id`` and the arguments as a JSON string; one ``role: "tool"`` message per call naming its
``tool_call_id``. The answer's ``choices[0].message`` carries the text and the calls (kept exactly as the
model sent them: judging them is the turn loop's job), ``finish_reason`` is the stop reason and
``usage.prompt_tokens``/``completion_tokens`` the tokens. A body of any other shape is an
``InvalidModelResponse`` quoting it.

The agent is the shared HTTP chat agent (``oriole.providers.http_chat``: http/https only, no redirect, bounded
reading, retries, ``Retry-After``, named errors): the standard library only, no ``openai`` package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oriole.core.picture import MEDIA_TYPE
from oriole.core.tools import ToolCall, model_call
from oriole.core.turn_loop import AgentSetup, Message, ModelRequest, ModelResponse, Usage, prompt_budget
from oriole.errors import InvalidModelResponse
from oriole.experiment_config import ExperimentConfig
from oriole.providers.http_chat import IDENTITY_FAILURES, ChatFormat, HttpChatAgent, listing
from oriole.providers.identity import Asking, ModelIdentity, text
from oriole.providers.wire import (
    EXCERPT_CHARS,
    arguments_object,
    content_text,
    excerpt,
    function_tool,
    json_text,
    not_json,
    optional_text,
    parse_json,
    picture_base64,
    reported_count,
    reported_text,
)
from oriole.text import JsonObject, bounded

CHAT_PATH = "/chat/completions"
REASONING_FIELDS = ("reasoning_content", "reasoning")  # what vLLM, SGLang and llama.cpp call a model's thinking


def wire_arguments(arguments: object) -> str:
    """A call's arguments as the JSON string the spec wants: the model's own string when it is a JSON object,
    else the object (``{}`` for arguments that were not one: the call was already answered with its error)."""
    parsed = arguments_object(arguments)
    return arguments if isinstance(arguments, str) and parsed else json_text(parsed)


def wire_message(message: Message) -> JsonObject:
    """One neutral message as a Chat Completions message; one carrying a picture has content parts, its text
    and an ``image_url`` part holding the PNG as a data URL (what vLLM, llama.cpp and OpenAI read)."""
    if message.picture is not None:
        return {
            "role": message.role,
            "content": [
                {"type": "text", "text": content_text(message.content)},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:{MEDIA_TYPE};base64,{picture_base64(message.picture)}"},
                },
            ],
        }
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": content_text(message.content)}
    if not message.tool_calls:
        return {"role": message.role, "content": content_text(message.content)}
    return {
        "role": message.role,
        "content": content_text(message.content) or None,
        "tool_calls": [
            {
                "id": call.call_id or "",
                "type": "function",
                "function": {"name": call.name, "arguments": wire_arguments(call.arguments)},
            }
            for call in message.tool_calls
        ],
    }


def _tool_call(index: int, entry: object) -> ToolCall:
    """A call as the model sent it: a nameless one is kept (name "") so the loop counts it invalid; one without
    an id gets ``call_<index>``, so its result can still name it."""
    fields: JsonObject = entry if isinstance(entry, dict) else {}
    found = fields.get("function")
    function: JsonObject = found if isinstance(found, dict) else {}
    name, call_id = function.get("name"), fields.get("id")
    return model_call(
        name if isinstance(name, str) else "",
        function.get("arguments"),
        call_id=call_id if isinstance(call_id, str) and call_id else f"call_{index}",
    )


def _choice(raw: bytes) -> tuple[JsonObject, JsonObject, JsonObject]:
    """The body, its first choice and that choice's message, or InvalidModelResponse quoting the body."""
    try:
        body = parse_json(raw)
    except ValueError as error:
        raise InvalidModelResponse(f"the server answered with {not_json(raw, error)}") from None
    choices = body.get("choices") if isinstance(body, dict) else None
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(body, dict) or not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise InvalidModelResponse(f"the server answered without choices[0].message: {excerpt(raw)}")
    if not isinstance(body.get("usage"), dict | None) or not isinstance(
        choice["message"].get("tool_calls"), list | None
    ):
        raise InvalidModelResponse(f"the server answered with usage or tool_calls of the wrong type: {excerpt(raw)}")
    return body, choice, choice["message"]


def parse_response(raw: bytes, latency_ms: int, throttles: int = 0, retries: int = 0) -> ModelResponse:
    """Turn a non-streaming ``chat.completion`` body into a ModelResponse; anything else is InvalidModelResponse."""
    body, choice, message = _choice(raw)
    usage = body.get("usage") or {}
    finish = choice.get("finish_reason")
    return ModelResponse(
        tool_calls=tuple(_tool_call(i, entry) for i, entry in enumerate(message.get("tool_calls") or [])),
        text=optional_text(message.get("content")) or optional_text(message.get("refusal")),
        thinking=next(filter(None, (optional_text(message.get(k)) for k in REASONING_FIELDS)), None),
        usage=Usage(
            reported_count(usage.get("prompt_tokens"), "usage.prompt_tokens"),
            reported_count(usage.get("completion_tokens"), "usage.completion_tokens"),
            latency_ms,
        ),
        stop_reason=bounded(finish, EXCERPT_CHARS) if isinstance(finish, str) else None,
        throttles=throttles,
        retries=retries,
        raw=raw,
        model=reported_text(body.get("model")),
        system_fingerprint=reported_text(body.get("system_fingerprint")),
    )


def wire_request(request: ModelRequest, settings: JsonObject) -> JsonObject:
    """The Chat Completions body of a request with an agent's ``settings`` (the model, ``stream`` and the
    generation fields, and ``parallel_tool_calls``, sent only with tools: the spec allows it only there)."""
    settings = dict(settings)
    parallel = settings.pop("parallel_tool_calls", None)
    messages = [{"role": "system", "content": request.system_prompt}]
    messages += [wire_message(m) for m in request.messages]
    body = {"model": settings.pop("model"), "messages": messages, **settings}
    if request.tools:  # a request without tools (a summary, text tool calls) must not name any
        body["tools"] = [function_tool(t) for t in request.tools]
        if parallel is not None:
            body["parallel_tool_calls"] = parallel
    return body


def served_models(raw: bytes) -> set[str]:
    """The model ids ``GET {base URL}/models`` lists (``{"data": [{"id": ...}, ...]}``)."""
    return {str(entry["id"]) for entry in listing(raw)["data"]}


recorded_answer = parse_response  # a stored answer is read again as the first time (``oriole.providers.replay``)
OPENAI = ChatFormat("the OpenAI-compatible server", CHAT_PATH, wire_request, parse_response, "/models", served_models)


class OpenAIAgent(HttpChatAgent):
    """An Agent (see ``oriole.core.turn_loop``) backed by a model behind an OpenAI-compatible Chat Completions API."""

    chat_format = OPENAI

    def __init__(
        self,
        model: str,
        base_url: str,
        generation: JsonObject,
        timeout_seconds: float,
        api_key: str | None = None,
        parallel_tool_calls: bool | None = None,
        context_budget: int | None = None,
        **retries: Any,
    ):
        """``generation`` holds the request's generation fields (``temperature``, ``max_tokens`` or
        ``max_completion_tokens``, ``seed`` if sent); ``parallel_tool_calls`` goes with the tools, if set;
        ``context_budget`` is what requests are trimmed to (contextTokens in the catalog); ``retries``
        (``max_attempts``, ``backoff_seconds``, ``sleep``, ``clock``) go to the ``JsonPoster``."""
        self.generation = dict(generation)
        self.parallel_tool_calls = parallel_tool_calls
        reach = (
            f"Check that the server is running and serves the OpenAI API at {base_url.rstrip('/')} (a base URL "
            "usually ends in /v1), or point oriole at it with --openai-url or the /oriole/openai/base-url parameter"
        )
        super().__init__(model, base_url, timeout_seconds, reach, api_key, context_budget, **retries)

    @classmethod
    def from_config(
        cls, model: str, config: ExperimentConfig, api_key: str | None = None, **kwargs: Any
    ) -> OpenAIAgent:
        """An agent from an experiment's configuration."""
        generation: JsonObject = {"temperature": config.temperature, config.max_tokens_field: config.max_output_tokens}
        if config.send_seed:
            generation["seed"] = config.seed
        return cls(
            model,
            config.base_url,
            generation,
            config.request_timeout_seconds,
            api_key=api_key,
            parallel_tool_calls=config.parallel_tool_calls,
            context_budget=prompt_budget(config.context_tokens, config.max_output_tokens),
            **kwargs,
        )

    @property
    def settings(self) -> JsonObject:
        """What every request sends beyond the conversation (see ``wire_request``)."""
        settings = {"model": self.model, "stream": False, **self.generation}
        if self.parallel_tool_calls is not None:
            settings["parallel_tool_calls"] = self.parallel_tool_calls
        return settings


def check_server(config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
    """Whether the OpenAI-compatible server an experiment with ``config`` goes to answers and serves ``models``:
    one ``GET {base URL}/models`` (see ``HttpChatAgent.check_server``)."""
    return OpenAIAgent.from_config(models[0], config, api_key).check_server(models)


def agent(setup: AgentSetup, api_key: str | None = None) -> OpenAIAgent:
    """The provider's agent for an experiment's turn (its entry in ``oriole.provider_registry`` names this module)."""
    return OpenAIAgent.from_config(setup.model, setup.config, api_key)


SHOWN_HEADERS = ("server", "openai-version", "x-powered-by", "via")  # what a listing's headers say of the software


def model_identity(config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity:
    """What the OpenAI-compatible server an experiment goes to reports, asked once at its start: the model's entry
    in ``GET {base URL}/models`` (``id``, ``owned_by``, ``created``; vLLM adds ``root``, the weights it loaded, and
    ``max_model_len``) and the answer's headers that name the software (``Server``: ``uvicorn`` for vLLM and SGLang,
    ``llama.cpp``...). The build is the entry's ``root`` where the server gives one, else its ``id``; each answer's
    ``system_fingerprint`` is kept per call (``model_calls.response``). An endpoint that does not answer leaves its
    fields unknown, with the reason."""
    agent = OpenAIAgent.from_config(model, config, api_key)
    asking = Asking()
    answer = asking.ask("/models", lambda: _listing_answer(agent), IDENTITY_FAILURES) or {}
    entries, headers = answer.get("body", {}).get("data"), answer.get("headers", {})
    found = [e for e in entries if isinstance(e, dict) and e.get("id") == model] if isinstance(entries, list) else []
    if answer and not found:
        asking.missing("/models", f"the listing has no model with id {model!r}")
    entry = found[0] if found else {}
    return asking.identity(
        model_build=text(entry.get("root")) or text(entry.get("id")),
        reported_model=text(entry.get("id")),
        server_software=text(headers.get("server")) or text(entry.get("owned_by")),
        server_version=text(headers.get("openai-version")),
    )


def _listing_answer(agent: OpenAIAgent) -> JsonObject:
    """``GET {base URL}/models`` once: its JSON body (an object, else ``ValueError``) and the headers that name the
    software."""
    reply = agent.ask_get("/models")
    body = listing(reply.body)
    if not isinstance(body, dict):
        raise ValueError(f"the listing is not a JSON object: {excerpt(reply.body)}")
    shown = {name.lower(): value for name, value in reply.headers if name.lower() in SHOWN_HEADERS}
    return {"body": body, "headers": shown}
