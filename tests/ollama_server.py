"""A scripted stand-in for an Ollama server: real HTTP on loopback (see ``tests.scripted_server``), answering
``POST /api/chat`` from a script; and what Ollama documents about the models it is given and itself, out of the
script: ``GET /api/tags`` (each model's digest and details), ``POST /api/show`` (a model's details, 404 for one it
does not serve) and ``GET /api/version``. A model's digest is ``digests[name]`` (by default the SHA-256 of its
name): a test changes it to stand for a model pulled again.

The server speaks only what Ollama documents for a non-streaming chat request; anything else (another path, a
streaming request, a body without a model, a message's ``images`` that are not base64 PNGs that decode) is
answered with an error. The images of each request, decoded, are kept in ``pictures``.

    with ScriptedOllama(tool_calls(("move_east", {"reasoning": "open"})), text_reply("done")) as server:
        agent = OllamaAgent("llama3.2", server.url, {}, timeout_seconds=5)
        ...
        assert server.requests[0].body["stream"] is False
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable
from datetime import UTC, datetime

from tests.pictures import DecodedPng, PngError, decode_png
from tests.scripted_server import ScriptedRequest, ScriptedServer, slow

__all__ = ["ScriptedOllama", "chat_response", "error", "slow", "text_reply", "tool_calls"]

CHAT_PATH = "/api/chat"
TAGS_PATH = "/api/tags"
SHOW_PATH = "/api/show"
VERSION_PATH = "/api/version"
VERSION = "0.12.6"
DETAILS = {
    "parent_model": "",
    "format": "gguf",
    "family": "qwen3",
    "families": ["qwen3"],
    "parameter_size": "8.2B",
    "quantization_level": "Q4_K_M",
}


def chat_response(reply: dict, model: str) -> dict:
    """A full non-streaming ``/api/chat`` response: ``reply``'s fields over plausible defaults."""
    body = {
        "model": model,
        "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_500_000_000,
        "load_duration": 20_000_000,
        "prompt_eval_count": 120,
        "prompt_eval_duration": 300_000_000,
        "eval_count": 15,
        "eval_duration": 1_100_000_000,
        **reply,
    }
    body["message"] = {"role": "assistant", "content": "", **reply.get("message", {})}
    return body


def tool_calls(
    *calls: tuple[str, object],
    content: str = "",
    thinking: str | None = None,
    prompt_eval_count: int = 120,
    eval_count: int = 15,
    **fields: object,
) -> dict:
    """A reply whose message carries tool calls, each ``(name, arguments)``; arguments may be an object or,
    as some models and proxies send them, a string."""
    message: dict = {
        "content": content,
        "tool_calls": [{"function": {"name": name, "arguments": arguments}} for name, arguments in calls],
    }
    if thinking is not None:
        message["thinking"] = thinking
    return {"message": message, "prompt_eval_count": prompt_eval_count, "eval_count": eval_count, **fields}


def text_reply(text: str, **fields: object) -> dict:
    """A reply with text and no tool call."""
    return {"message": {"content": text}, **fields}


def error(status: int, message: str) -> tuple[int, bytes]:
    """An error as Ollama sends one: the status and ``{"error": message}``."""
    return status, json.dumps({"error": message}).encode()


class ScriptedOllama(ScriptedServer):
    """An Ollama chat endpoint answering each request with the next scripted reply (see ``ScriptedServer``);
    a dict reply is sent with 200 as a full chat response (see ``chat_response``)."""

    def __init__(self, *replies: dict | tuple, models: Iterable[str] = ()):
        super().__init__(*replies, models=models)
        self.digests: dict[str, str] = {}  # a model (with its tag) pulled again: its new digest
        self.pictures: list[list[DecodedPng]] = []  # per request received, the images it carried, decoded

    def listing(self, request: ScriptedRequest) -> tuple[int, bytes] | None:
        """What Ollama says of its models and itself (``GET /api/tags``, ``POST /api/show``, ``GET /api/version``),
        the models named with their tag as Ollama names them."""
        named = [model if ":" in model else f"{model}:latest" for model in self.models]
        if (request.method, request.path) == ("GET", TAGS_PATH):
            entries = [
                {
                    "name": name,
                    "model": name,
                    "modified_at": "2025-10-03T23:34:03.409490317-07:00",
                    "size": 5_225_376_047,
                    "digest": self.digest(name),
                    "details": DETAILS,
                }
                for name in named
            ]
            return 200, json.dumps({"models": entries}).encode()
        if (request.method, request.path) == ("GET", VERSION_PATH):
            return 200, json.dumps({"version": VERSION}).encode()
        if (request.method, request.path) == ("POST", SHOW_PATH):
            wanted = request.body.get("model") if isinstance(request.body, dict) else None
            name = wanted if isinstance(wanted, str) and ":" in wanted else f"{wanted}:latest"
            if name not in named:
                return error(404, f"model '{wanted}' not found")
            shown = {
                "modelfile": f"FROM {name}",
                "parameters": "temperature 0.6",
                "template": "{{ .Prompt }}",
                "details": DETAILS,
                "model_info": {"general.architecture": "qwen3", "general.parameter_count": 8_190_735_360},
                "capabilities": ["completion", "tools"],
                "modified_at": "2025-10-03T23:34:03.409490317-07:00",
            }
            return 200, json.dumps(shown).encode()
        return None

    def digest(self, name: str) -> str:
        """The digest of a pulled model (``name`` with its tag)."""
        return self.digests.get(name) or hashlib.sha256(name.encode()).hexdigest()

    def problem(self, request: ScriptedRequest) -> tuple[int, bytes] | None:
        problem = _protocol_problem(request)
        if problem is None:
            try:
                self.pictures.append(
                    [_image(data) for message in request.body["messages"] for data in message.get("images") or ()]
                )
            except (binascii.Error, PngError, ValueError) as err:
                return error(400, f"invalid image input: {err}")
        return problem

    def render(self, reply: dict, request: ScriptedRequest) -> tuple[int, bytes]:
        return 200, json.dumps(chat_response(reply, request.body["model"])).encode()

    def error(self, status: int, message: str) -> tuple[int, bytes]:
        return error(status, message)

    def usage_of(self, body: dict) -> tuple[int, int]:
        return body.get("prompt_eval_count", 0), body.get("eval_count", 0)


def _image(data: object) -> DecodedPng:
    if not isinstance(data, str):
        raise ValueError("an image must be a base64 string")
    return decode_png(base64.b64decode(data, validate=True))


def _protocol_problem(request: ScriptedRequest) -> tuple[int, bytes] | None:
    """Why a request is not a non-streaming ``POST /api/chat`` Ollama would accept, or None."""
    if request.path != CHAT_PATH:
        return 404, b"404 page not found"
    if request.method != "POST":
        return 405, b"405 method not allowed"
    body = request.body
    if not isinstance(body, dict):
        return error(400, "ScriptedOllama: the request body is not a JSON object")
    if not isinstance(body.get("model"), str) or not body["model"]:
        return error(400, "model is required")
    if body.get("stream") is not False:
        return error(400, 'ScriptedOllama answers only non-streaming chat requests; send "stream": false')
    if not isinstance(body.get("messages"), list):
        return error(400, "ScriptedOllama: messages must be a list")
    return None
