"""The pieces of wire format the provider adapters share: JSON text as the model reads it, a tool described as a
JSON-schema function, a call's arguments as an object, and counts a provider reports, checked. The HTTP transport
of the adapters that speak HTTP is ``oriole.providers.transport``.
"""

import base64
import hashlib
import json

from oriole.core.picture import Picture
from oriole.core.tools import MAX_ARGUMENT_DEPTH, ToolSpec
from oriole.errors import InvalidModelResponse
from oriole.text import JsonObject, NestedTooDeeply, bounded, load_json

MAX_TOKENS_PER_CALL = 10_000_000  # far beyond any context window, far inside the integer columns
MAX_LATENCY_MS = 3_600_000  # an hour: four times the longest request timeout the catalog allows
MAX_DURATION_NS = MAX_LATENCY_MS * 1_000_000  # a duration a provider reports about itself, in nanoseconds
EXCERPT_CHARS = 200  # how much of a body, an error text or a stop reason a message or a column quotes
# An answer's envelope nests a few levels (Ollama's arguments sit 5 deep) and a call's arguments at most
# MAX_ARGUMENT_DEPTH more (deeper ones make an invalid action); a body deeper than this is refused whole.
MAX_ANSWER_DEPTH = 100


def reported_count(value: object, what: str, limit: int = MAX_TOKENS_PER_CALL) -> int:
    """A number a provider reports (tokens, milliseconds), checked: absent is 0; a whole number from 0 to
    ``limit`` is kept; anything else (negative, fractional, a string, absurdly large) is an
    ``InvalidModelResponse`` naming it, so no impossible count reaches a total, a cost or a spend cap."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= limit:
        return value
    raise InvalidModelResponse(
        f"the provider reported {what} = {value!r:.100}, which is not a count from 0 to "
        f"{limit:,}; the response was not used"
    )


def parse_json(raw: bytes | str) -> object:
    """A body as JSON (``oriole.text.load_json``), at most ``MAX_ANSWER_DEPTH`` levels deep wherever it is read (a
    run and its replay accept the same answers); ValueError when it is not JSON, ``NestedTooDeeply`` past the
    depth."""
    return load_json(raw, MAX_ANSWER_DEPTH)


def not_json(raw: bytes, error: ValueError) -> str:
    """What a body that ``parse_json`` refused is, for a message: JSON nested too deeply, or not JSON at all
    (quoted)."""
    if isinstance(error, NestedTooDeeply):
        return f"JSON {error}"
    return f"a body that is not JSON: {excerpt(raw)}"


def excerpt(raw: bytes) -> str:
    """The start of a body, quoted, for a message that says what came back."""
    text = raw[:EXCERPT_CHARS].decode("utf-8", errors="replace")
    return repr(text + ("..." if len(raw) > EXCERPT_CHARS else ""))


def request_bytes(body: JsonObject) -> bytes:
    """A request body exactly as an HTTP adapter POSTs it: JSON as ``json.dumps`` writes it, in UTF-8."""
    return json.dumps(body).encode()


def sent_hash(body: JsonObject) -> str:
    """SHA-256 of a request as it was sent (``model_calls.request.sent_sha256``), in canonical JSON (keys sorted, no
    spaces, bytes such as a picture in base64): an HTTP adapter's body as ``request_bytes`` POSTs it, Bedrock's
    ``converse`` parameters as botocore is given them. Every name, value and element in its order counts; only the
    order of an object's keys, which JSON gives no meaning and a stored part (JSONB) does not keep, does not. Taken
    when the call is sent, and again from a request rebuilt with today's adapter (a replay, ``oriole transcript``):
    an adapter that drops the system prompt or words a tool result otherwise gives another hash, although the
    provider-neutral request is the same."""
    text = json.dumps(body, default=_base64_bytes, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _base64_bytes(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"a request holds a {type(value).__name__}, which JSON cannot hold")


def json_text(value: object) -> str:
    """Compact JSON, as the model reads it: the fewest tokens for the same content. Keys are sorted: a message's
    content is stored as JSONB, which keeps no key order, and the text must come out the same when a request is
    rebuilt (and when an earlier turn is carried) as when it was first sent."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def content_text(content: str | JsonObject | None) -> str:
    """A neutral message's content as chat text: a dict (a context, a tool result) as compact JSON."""
    if content is None:
        return ""
    return content if isinstance(content, str) else json_text(content)


def reported_text(value: object) -> str | None:
    """A name an answer reports about itself (its model, a fingerprint): kept, bounded, when it is a non-empty
    string; anything else is nothing (it never fails an answer)."""
    return bounded(value, EXCERPT_CHARS) if isinstance(value, str) and value else None


def optional_text(value: object) -> str | None:
    """A text field of an answer: kept when it is a non-empty string, else nothing."""
    return value if isinstance(value, str) and value else None


def arguments_object(arguments: object) -> JsonObject:
    """A call's arguments as an object, for a history that must stay well formed: a JSON string is parsed,
    anything that is not an object becomes ``{}`` (the call was already answered with its error)."""
    if isinstance(arguments, str):
        try:
            arguments = load_json(arguments, MAX_ARGUMENT_DEPTH)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def picture_base64(picture: Picture) -> str:
    """A picture's PNG in base64, as Ollama's ``images`` and a data URL carry it."""
    return base64.b64encode(picture.png).decode("ascii")


def function_tool(spec: ToolSpec) -> JsonObject:
    """A tool as a JSON-schema function, the shape Ollama and the OpenAI Chat Completions API both take."""
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
    }
