"""A scripted stand-in for an OpenAI-compatible server: real HTTP on loopback (see ``tests.scripted_server``),
answering ``POST /v1/chat/completions`` from a script, and ``GET /v1/models`` with the models it is given.

Every request is checked against the Chat Completions spec before it is answered, and one that breaks it gets
the 400 an OpenAI server sends (``{"error": {"message", "type", "code", "param"}}``): a model; messages whose
roles are system, developer, user, assistant or tool; an assistant's ``tool_calls`` each with an ``id``,
``"type": "function"`` and ``function.arguments`` as a JSON string; after it, one ``tool`` message per call
naming its ``tool_call_id`` and nothing else in between; ``tools`` only as ``{"type": "function", "function":
{"name", "parameters"}}``; ``parallel_tool_calls`` only with tools; ``stream`` absent or false; no field the
spec does not have; one of ``max_tokens`` and ``max_completion_tokens``; a user message's content a string or
an array of ``text`` and ``image_url`` parts, an image a ``data:image/png;base64,`` URL whose PNG decodes (every
chunk's CRC, the inflated data; ``tests.pictures.decode_png``), kept in ``pictures`` per request. The calls an
answer carries get ids from this server, so a later request must name exactly the ids it gave. With
``parallel_tool_calls: false`` a scripted reply carrying several calls is a script error (500): a server that
honours the flag never sends one. With ``api_key`` set, a request without ``Authorization: Bearer <key>`` gets a 401.

    with ScriptedOpenAI(tool_calls(("move_east", {"reasoning": "open"})), text_reply("done")) as server:
        agent = OpenAIAgent("Qwen/Qwen3-8B", server.base_url, {"temperature": 0.0}, timeout_seconds=5)
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import time
from collections.abc import Iterable

from tests.pictures import DecodedPng, PngError, decode_png
from tests.scripted_server import Raw, ScriptedRequest, ScriptedServer, slow

__all__ = ["ScriptedOpenAI", "error", "slow", "text_reply", "tool_calls"]

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
ROLES = {"system", "developer", "user", "assistant", "tool"}
REQUEST_FIELDS = {
    "model",
    "messages",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "stream",
    "stream_options",
    "stop",
    "n",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "user",
    "response_format",
    "reasoning_effort",
    "metadata",
    "store",
    "service_tier",
}


class SpecViolation(ValueError):
    """Why a request is not one an OpenAI server would accept."""


def tool_calls(
    *calls: tuple[str, object],
    content: str | None = None,
    prompt_tokens: int = 120,
    completion_tokens: int = 15,
    finish_reason: str = "tool_calls",
    **message: object,
) -> dict:
    """A reply whose message carries tool calls, each ``(name, arguments)``; an object is sent as its JSON
    text (the spec's form), a string exactly as given."""
    entries = [{"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)} for name, args in calls]
    return {
        "message": {"content": content, "tool_calls": entries, **message},
        "finish_reason": finish_reason,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def text_reply(
    text: str, prompt_tokens: int = 120, completion_tokens: int = 15, finish_reason: str = "stop", **message: object
) -> dict:
    """A reply with text and no tool call."""
    return {
        "message": {"content": text, **message},
        "finish_reason": finish_reason,
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def error(
    status: int,
    message: str,
    kind: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> Raw:
    """An error as an OpenAI server sends one: ``{"error": {"message", "type", "param", "code"}}``."""
    body = json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}}).encode()
    return (status, body, headers) if headers else (status, body)


class ScriptedOpenAI(ScriptedServer):
    """An OpenAI-compatible chat completions endpoint answering each request with the next scripted reply;
    ``base_url`` is what a client takes (``http://127.0.0.1:PORT/v1``)."""

    def __init__(self, *replies: dict | tuple, api_key: str | None = None, models: Iterable[str] = ()):
        super().__init__(*replies, models=models)
        self.api_key = api_key
        self.issued: dict[str, str] = {}  # tool call id -> the name it was issued with
        self._ids = itertools.count(1)
        self.pictures: list[list[DecodedPng]] = []  # per request received, the images it carried, decoded

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def error(self, status: int, message: str) -> Raw:
        return error(status, message, "server_error" if status >= 500 else "invalid_request_error")

    def usage_of(self, body: dict) -> tuple[int, int]:
        usage = body.get("usage") or {}
        return usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)

    def listing(self, request: ScriptedRequest) -> Raw | None:
        """``GET /v1/models``: the served models as the spec lists them (behind the API key, as the chat is)."""
        if (request.method, request.path) != ("GET", MODELS_PATH):
            return None
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Incorrect API key provided", code="invalid_api_key")
        data = [{"id": model, "object": "model", "created": 0, "owned_by": "scripted"} for model in self.models]
        return 200, json.dumps({"object": "list", "data": data}).encode()

    def problem(self, request: ScriptedRequest) -> Raw | None:
        if request.path != CHAT_PATH:
            return error(404, f"Unknown request URL: {request.method} {request.path}", code="unknown_url")
        if request.method != "POST":
            return error(405, f"Method {request.method} not allowed")
        if self.api_key and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return error(401, "Incorrect API key provided", code="invalid_api_key")
        try:
            self._check(request.body)
            self.pictures.append(
                [
                    _image(part)
                    for message in request.body["messages"]
                    if isinstance(message.get("content"), list)
                    for part in message["content"]
                    if part["type"] == "image_url"
                ]
            )
        except SpecViolation as err:
            return error(400, str(err))
        return None

    def render(self, reply: dict, request: ScriptedRequest) -> Raw:
        message = {"role": "assistant", "content": None, "refusal": None, **reply["message"]}
        calls = message.pop("tool_calls", None) or []
        if len(calls) > 1 and request.body.get("parallel_tool_calls") is False:
            return self.error(
                500,
                "ScriptedOpenAI: the script answers a request with parallel_tool_calls false "
                f"with {len(calls)} tool calls; a server honouring the flag sends one",
            )
        if calls:
            message["tool_calls"] = [self._issue(call) for call in calls]
        usage = {**reply["usage"], "total_tokens": sum(reply["usage"].values())}
        body = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.body["model"],
            "system_fingerprint": "fp_scripted",
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": reply["finish_reason"]}],
            "usage": usage,
        }
        return 200, json.dumps(body).encode()

    def _issue(self, call: dict) -> dict:
        call_id = f"call_{next(self._ids):04d}"
        self.issued[call_id] = call["name"]
        return {"id": call_id, "type": "function", "function": call}

    # --- the spec's request shape -----------------------------------------------------------------------------

    def _check(self, body: object) -> None:
        if not isinstance(body, dict):
            raise SpecViolation("We could not parse the JSON body of your request.")
        unknown = sorted(set(body) - REQUEST_FIELDS)
        if unknown:
            raise SpecViolation(f"Unrecognized request argument supplied: {', '.join(unknown)}")
        if not isinstance(body.get("model"), str) or not body["model"]:
            raise SpecViolation("you must provide a model parameter")
        if body.get("stream", False) is not False:
            raise SpecViolation("ScriptedOpenAI answers only non-streaming requests")
        if "max_tokens" in body and "max_completion_tokens" in body:
            raise SpecViolation("max_tokens and max_completion_tokens cannot both be set")
        for field, kind in (
            ("temperature", (int, float)),
            ("max_tokens", int),
            ("max_completion_tokens", int),
            ("seed", int),
            ("parallel_tool_calls", bool),
        ):
            if field in body and (not isinstance(body[field], kind) or isinstance(body[field], bool) != (kind is bool)):
                raise SpecViolation(f"Invalid type for '{field}': {body[field]!r}")
        if "parallel_tool_calls" in body and "tools" not in body:
            raise SpecViolation("'parallel_tool_calls' is only allowed when 'tools' are specified.")
        if "tools" in body:
            _check_tools(body["tools"])
        self._check_messages(body.get("messages"))

    def _check_messages(self, messages: object) -> None:
        if not isinstance(messages, list) or not messages:
            raise SpecViolation("'messages' must be a non-empty array")
        awaited: list[str] = []  # ids of the last assistant's calls still without a tool message
        for index, message in enumerate(messages):
            where = f"messages[{index}]"
            if not isinstance(message, dict) or message.get("role") not in ROLES:
                raise SpecViolation(f"{where}: role must be one of {', '.join(sorted(ROLES))}")
            role = message["role"]
            if awaited and role != "tool":
                raise SpecViolation(
                    f"An assistant message with 'tool_calls' must be followed by tool messages "
                    f"responding to each 'tool_call_id'. Missing: {', '.join(awaited)}"
                )
            if role == "tool":
                awaited = self._answered(message, awaited, where)
            elif role == "assistant":
                awaited = self._calls(message, where)
            elif role == "user" and isinstance(message.get("content"), list):
                _check_parts(message["content"], where)
            elif not isinstance(message.get("content"), str):
                raise SpecViolation(f"{where}: content must be a string")
        if awaited:
            raise SpecViolation(f"tool calls {', '.join(awaited)} have no tool message")

    def _answered(self, message: dict, awaited: list[str], where: str) -> list[str]:
        if message.get("tool_call_id") not in awaited:
            raise SpecViolation(
                f"{where}: a tool message must answer a tool call of the assistant message before "
                f"it; tool_call_id {message.get('tool_call_id')!r} is not one of {awaited}"
            )
        if not isinstance(message.get("content"), str) or set(message) - {"role", "content", "tool_call_id"}:
            raise SpecViolation(f"{where}: a tool message is role, content (a string) and tool_call_id")
        return [call_id for call_id in awaited if call_id != message["tool_call_id"]]

    def _calls(self, message: dict, where: str) -> list[str]:
        calls = message.get("tool_calls")
        content = message.get("content")
        if calls is None:
            if not isinstance(content, str):
                raise SpecViolation(f"{where}: an assistant message without tool_calls needs string content")
            return []
        if not isinstance(calls, list) or not calls or not (content is None or isinstance(content, str)):
            raise SpecViolation(f"{where}: tool_calls must be a non-empty array and content a string or null")
        for call in calls:
            _check_call(call, where)
            if self.issued.get(call["id"]) != call["function"]["name"]:
                raise SpecViolation(
                    f"{where}: tool call id {call['id']!r} with name {call['function']['name']!r} "
                    "was never issued by this server"
                )
        return [call["id"] for call in calls]


def _check_call(call: object, where: str) -> None:
    function = call.get("function") if isinstance(call, dict) else None
    if not (
        isinstance(call, dict)
        and set(call) == {"id", "type", "function"}
        and call["type"] == "function"
        and isinstance(call["id"], str)
        and call["id"]
        and isinstance(function, dict)
        and isinstance(function.get("name"), str)
        and isinstance(function.get("arguments"), str)
    ):
        raise SpecViolation(
            f"{where}: each tool call is {{'id', 'type': 'function', 'function': {{'name', "
            f"'arguments': a JSON string}}}}; got {call!r:.200}"
        )
    try:
        json.loads(function["arguments"])
    except ValueError:
        raise SpecViolation(f"{where}: function.arguments is not JSON: {function['arguments']!r:.100}") from None


def _check_parts(parts: list, where: str) -> None:
    """A user message's content parts: each ``{"type": "text", "text"}`` or ``{"type": "image_url", "image_url":
    {"url", "detail"?}}``."""
    if not parts:
        raise SpecViolation(f"{where}: content must be a non-empty array of parts")
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        text_part = kind == "text" and set(part) == {"type", "text"} and isinstance(part["text"], str)
        image = part.get("image_url") if kind == "image_url" else None
        image_part = (
            isinstance(image, dict)
            and set(part) == {"type", "image_url"}
            and isinstance(image.get("url"), str)
            and set(image) <= {"url", "detail"}
        )
        if not (text_part or image_part):
            raise SpecViolation(
                f"{where}: each content part is {{'type': 'text', 'text'}} or {{'type': "
                f"'image_url', 'image_url': {{'url'}}}}; got {part!r:.200}"
            )


def _image(part: dict) -> DecodedPng:
    """The PNG of an ``image_url`` part's data URL, decoded; anything else is the 400 a server sends."""
    url = part["image_url"]["url"]
    head, _, data = url.partition(",")
    if head != "data:image/png;base64":
        raise SpecViolation(f"ScriptedOpenAI reads images as data:image/png;base64 URLs; got {url[:40]!r}")
    try:
        return decode_png(base64.b64decode(data, validate=True))
    except (binascii.Error, PngError, ValueError) as err:
        raise SpecViolation(f"Invalid image in image_url: {err}") from None


def _check_tools(tools: object) -> None:
    if not isinstance(tools, list) or not tools:
        raise SpecViolation("'tools' must be a non-empty array")
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not (
            isinstance(tool, dict)
            and set(tool) == {"type", "function"}
            and tool["type"] == "function"
            and isinstance(function, dict)
            and isinstance(function.get("name"), str)
            and isinstance(function.get("parameters"), dict)
            and set(function) <= {"name", "description", "parameters", "strict"}
        ):
            raise SpecViolation(
                f"each tool is {{'type': 'function', 'function': {{'name', 'description', "
                f"'parameters'}}}}; got {tool!r:.200}"
            )
