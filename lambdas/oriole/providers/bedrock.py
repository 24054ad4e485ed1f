"""The Bedrock adapter: the turn loop's neutral messages over the Bedrock Runtime Converse API.

Converse speaks one format for every Bedrock model, so this module only maps messages and tools to
content blocks and back (a picture of the maze is an ``image`` block, its PNG bytes with ``format: png``: one
per request, within Converse's 3.75 MB, 8,000 px and 20 images), and maps AWS errors to the project's named
errors. Throttling is retried here, not by botocore, so that every throttle is counted and stored with the
turn. Nothing heavy is imported at module level: a Lambda that never plays a Bedrock turn does not pay for boto3.

The exchange is bounded the way the HTTP providers' is, not per socket read: botocore signs the request, and the
adapter sends it itself (``oriole.providers.transport.exchange``, hooked on the client's ``before-send``), so
connecting, the headers and the body all end at ``requestTimeoutSeconds`` (throttle retries and their waits
included), however slowly a server (the documented endpoint override, a proxy) trickles. What comes back is read
before botocore parses it: a body that is not UTF-8, not JSON, nested past ``MAX_ANSWER_DEPTH``, or of another
shape than Converse's (a list where Converse has an object, an image's bytes not base64) is an
``InvalidModelResponse`` naming what is wrong, never an exception of botocore's parser; a ``toolUseId`` that is
not a string is left out, and the call gets an id of its own, as the OpenAI adapter does for a missing one.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias, cast

from oriole.catalog import default_of
from oriole.core.tools import ToolCall, ToolSpec, model_call
from oriole.core.turn_loop import AgentSetup, Message, ModelRequest, ModelResponse, Usage, prompt_budget
from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelThrottled, ModelTimeout, ModelUnavailable
from oriole.experiment_config import ExperimentConfig
from oriole.provider_registry import base_model, profile_prefix
from oriole.providers.identity import Asking, ModelIdentity, text
from oriole.providers.retry import Backoff
from oriole.providers.transport import Answer, exchange
from oriole.providers.wire import (
    MAX_ANSWER_DEPTH,
    MAX_LATENCY_MS,
    arguments_object,
    content_text,
    excerpt,
    not_json,
    reported_count,
    sent_hash,
)
from oriole.text import MAX_JSON_DEPTH, JsonObject, load_json, nesting_depth

if TYPE_CHECKING:  # boto3's types come with the test extra's stubs; the Lambda never imports them
    from botocore.awsrequest import AWSPreparedRequest, AWSResponse
    from botocore.exceptions import ClientError
    from botocore.model import Shape
    from mypy_boto3_bedrock import BedrockClient
    from mypy_boto3_bedrock_runtime import BedrockRuntimeClient
    from mypy_boto3_bedrock_runtime.type_defs import ConverseResponseTypeDef

MAX_CONNECT_TIMEOUT_SECONDS = 10.0
TIMEOUT_HINT = "raise requestTimeoutSeconds or use a smaller model"
_DEADLINE = threading.local()  # the monotonic moment the current thread's request must end (``BedrockAgent.respond``)

# Worth another attempt a moment later: the service is busy, not the request wrong.
RETRYABLE_CODES = frozenset({"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException"})
# The request itself is refused; sending it again cannot help.
REJECTED_CODES = frozenset({"ValidationException", "ResourceNotFoundException", "AccessDeniedException"})
# The service or the model failed while answering; the task may be retried by the state machine.
UNAVAILABLE_CODES = frozenset({"InternalServerException", "ModelErrorException"})
TIMEOUT_CODES = frozenset({"ModelTimeoutException"})


# a ``bedrock-runtime`` client, or a function making one when the first request is sent (``BedrockAgent.client``)
ClientSource: TypeAlias = "BedrockRuntimeClient | Callable[[], BedrockRuntimeClient]"


def runtime_client(timeout_seconds: float) -> BedrockRuntimeClient:
    """A ``bedrock-runtime`` client whose read timeout is the configured request timeout.

    botocore's own retries are switched off (one attempt in total; botocore's ``max_attempts`` would
    count retries, not attempts) because a retry hidden inside botocore would be a throttle nobody counts.
    """
    import boto3
    from botocore.config import Config

    config = Config(
        read_timeout=timeout_seconds,
        connect_timeout=min(timeout_seconds, MAX_CONNECT_TIMEOUT_SECONDS),
        retries={"total_max_attempts": 1, "mode": "standard"},
    )
    client = boto3.client("bedrock-runtime", config=config)
    output = client.meta.service_model.operation_model("Converse").output_shape
    assert output is not None, "Converse answers with a ConverseResponse"
    send = functools.partial(_send_bounded, timeout_seconds, output)
    client.meta.events.register("before-send.bedrock-runtime.Converse", cast("Callable[..., None]", send))
    return client


def _send_bounded(timeout_seconds: float, output: Shape, request: AWSPreparedRequest, **_: Any) -> AWSResponse:
    """Send a signed Converse request within the time its thread has left (``_DEADLINE``, else the client's
    timeout), as the HTTP providers send theirs, and hand botocore an answer it can parse."""
    from botocore.awsrequest import AWSResponse, HTTPHeaders

    deadline = getattr(_DEADLINE, "at", None)
    seconds = timeout_seconds if deadline is None else deadline - time.monotonic()
    if seconds <= 0:
        raise ModelTimeout(f"Bedrock did not answer within {timeout_seconds:g} s; {TIMEOUT_HINT}")
    body = request.body.encode() if isinstance(request.body, str) else request.body
    if body is not None and not isinstance(body, bytes | bytearray):
        raise TypeError(f"a Converse request's body is bytes, not {type(body).__name__}")
    answer = exchange(
        request.method,
        request.url,
        dict(request.headers),
        bytes(body or b""),
        seconds,
        "Bedrock",
        TIMEOUT_HINT,
        limit=timeout_seconds,
    )
    readable = _checked(answer, output)
    return AWSResponse(request.url, answer.status, HTTPHeaders.from_pairs(answer.headers), _Body(readable))


class _Body:
    """An answer's bytes as botocore reads a raw response (``stream()``)."""

    def __init__(self, data: bytes):
        self.data = data

    def stream(self, **_: Any) -> list[bytes]:
        return [self.data]


def _checked(answer: Answer, output: Shape) -> bytes:
    """The answer's body as botocore may parse it. An answer (2xx) that is not UTF-8 JSON of Converse's shape is an
    ``InvalidModelResponse``; a ``toolUseId`` that is not a string is left out. An error's body that botocore could
    not read is quoted in one it can (botocore names the error by its status)."""
    problem: str | None
    try:
        value = load_json(answer.body.decode("utf-8"), MAX_ANSWER_DEPTH)
    except UnicodeDecodeError as err:
        problem = f"a body that is not UTF-8 text (byte 0x{answer.body[err.start]:02x} at offset {err.start})"
    except ValueError as err:
        problem = not_json(answer.body, err)
    else:
        problem = _shape_problem(output, value, "the answer") if 200 <= answer.status < 300 else None
        if problem is None:
            return json.dumps(_without_odd_ids(value)).encode() if 200 <= answer.status < 300 else answer.body
    if 200 <= answer.status < 300:
        raise InvalidModelResponse(f"Bedrock answered with {problem}")
    return json.dumps({"message": f"an error answer with {problem}"}).encode()


def _shape_problem(shape: Shape, value: object, where: str) -> str | None:
    """Where ``value`` is not of ``shape`` in a way botocore's parser would stumble on (an object where Converse
    has a list, a string where it has an object, an image's bytes not base64, two choices of a union), or None.
    Scalars are the adapter's to check (``parse_response``); a document is any JSON."""
    from botocore.model import ListShape, MapShape, StructureShape

    if value is None or getattr(shape, "is_document_type", False):
        return None
    kind, shown = shape.type_name, type(value).__name__
    if isinstance(shape, StructureShape):
        if not isinstance(value, dict):
            return f"{where} of JSON type {shown} where Converse has an object"
        members = shape.members
        chosen = [name for name in members if value.get(name) is not None]
        if getattr(shape, "is_tagged_union", False) and len(chosen) != 1:
            if chosen:
                return f"{where} holding {', '.join(chosen)} where Converse has one of them"
            return f"{where} without any of {', '.join(members)} (Converse sends one)"
        return next(
            (p for name in chosen if (p := _shape_problem(members[name], value[name], f"{where}.{name}"))), None
        )
    if isinstance(shape, ListShape):
        if not isinstance(value, list):
            return f"{where} of JSON type {shown} where Converse has a list"
        return next((p for i, v in enumerate(value) if (p := _shape_problem(shape.member, v, f"{where}[{i}]"))), None)
    if isinstance(shape, MapShape):
        if not isinstance(value, dict):
            return f"{where} of JSON type {shown} where Converse has an object"
        return next((p for k, v in value.items() if (p := _shape_problem(shape.value, v, f"{where}.{k}"))), None)
    if kind in ("integer", "long") and (isinstance(value, bool) or not isinstance(value, int)):
        return f"{where} = {value!r:.40} where Converse has a whole number"
    if kind in ("float", "double") and (isinstance(value, bool) or not isinstance(value, int | float)):
        return f"{where} = {value!r:.40} where Converse has a number"
    if kind == "boolean" and not isinstance(value, bool):
        return f"{where} = {value!r:.40} where Converse has true or false"
    if kind == "blob" and not _base64(value):
        return f"{where} where Converse has base64 bytes"
    if kind == "timestamp" and (isinstance(value, bool) or not isinstance(value, str | int | float)):
        return f"{where} of JSON type {shown} where Converse has a time"
    return None


def _base64(value: object) -> bool:
    try:
        base64.b64decode(value, validate=True)  # type: ignore[arg-type]  # anything else fails right here
    except (binascii.Error, TypeError, ValueError):
        return False
    return True


def _without_odd_ids(value: object) -> object:
    """The answer with each ``toolUseId`` that is not a string left out: the call is given an id of its own."""
    output = value.get("output") if isinstance(value, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    for block in message.get("content") or [] if isinstance(message, dict) else []:
        use = block.get("toolUse") if isinstance(block, dict) else None
        if isinstance(use, dict) and "toolUseId" in use and not isinstance(use["toolUseId"], str):
            del use["toolUseId"]
    return value


def _document(value: object) -> Any:
    """``value`` as plain JSON types, the JSON value it encodes (botocore rejects tuples and other non-JSON values
    in documents), its keys sorted as a stored and rebuilt request has them
    (see ``oriole.providers.wire.json_text``)."""
    return json.loads(json.dumps(value, sort_keys=True))


def _tool_input(arguments: object) -> JsonObject:
    """A tool call's arguments as the JSON object Converse requires for ``toolUse.input``
    (see ``oriole.providers.wire.arguments_object``)."""
    document: JsonObject = _document(arguments_object(arguments))
    return document


def _tool_result(message: Message) -> JsonObject:
    """A tool message as a ``toolResult`` block; a result carrying an ``error`` is marked as failed."""
    result = message.content
    body: JsonObject
    if isinstance(result, dict):
        body, failed = {"json": _document(result)}, "error" in result
    else:
        body, failed = {"text": "" if result is None else str(result)}, False
    return {
        "toolResult": {"toolUseId": message.tool_call_id, "content": [body], "status": "error" if failed else "success"}
    }


def _blocks(message: Message) -> tuple[str, list[JsonObject]]:
    """The Converse role and content blocks of one neutral message."""
    if message.role == "tool":
        return "user", [_tool_result(message)]
    blocks: list[JsonObject] = [{"text": content_text(message.content)}] if message.content else []
    if message.picture is not None:  # after the text (and, merged, after the tool results, as Converse wants)
        blocks.append({"image": {"format": "png", "source": {"bytes": message.picture.png}}})
    if message.role == "assistant":
        blocks += [
            {"toolUse": {"toolUseId": call.call_id, "name": call.name, "input": _tool_input(call.arguments)}}
            for call in message.tool_calls
        ]
    return message.role, blocks


def converse_messages(messages: Sequence[Message]) -> list[JsonObject]:
    """Neutral messages as Converse messages.

    Converse wants roles to alternate and all tool results of an assistant turn in the next single user
    message, so consecutive messages of the same Converse role (tool results are user content) are merged,
    and a message with nothing to say is left out.
    """
    converse: list[JsonObject] = []
    for message in messages:
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if converse and converse[-1]["role"] == role:
            converse[-1]["content"].extend(blocks)
        else:
            converse.append({"role": role, "content": blocks})
    return converse


def tool_config(tools: Sequence[ToolSpec]) -> JsonObject:
    return {
        "tools": [
            {"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": t.parameters}}}
            for t in tools
        ]
    }


def _object(raw: Mapping[str, Any], key: str) -> JsonObject:
    """``raw[key]`` when it is an object, else an empty one: a malformed answer never raises anything unnamed."""
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def _tool_call(block: JsonObject, index: int) -> ToolCall:
    """A ``toolUse`` block as a call; one without a string ``toolUseId`` gets ``tooluse_<n>`` (its results must
    name an id), as the OpenAI adapter names a call that came without one."""
    use = block["toolUse"]
    if not isinstance(use, dict) or not use.get("name") or not isinstance(use["name"], str):
        shown = (
            excerpt(json.dumps(use, default=str).encode())
            if nesting_depth(use, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH
            else "(nested too deeply to show)"
        )
        raise InvalidModelResponse(f"Bedrock returned a toolUse block without a tool name: {shown}")
    call_id = use.get("toolUseId")
    return model_call(
        use["name"], use.get("input"), call_id=call_id if isinstance(call_id, str) and call_id else f"tooluse_{index}"
    )


def _reasoning(block: JsonObject) -> str | None:
    text = _object(_object(block, "reasoningContent"), "reasoningText").get("text")
    return text if isinstance(text, str) and text else None


def parse_response(raw: Mapping[str, Any], throttles: int = 0, retries: int | None = None) -> ModelResponse:
    """A Converse answer as a ``ModelResponse``; an answer without ``output.message``, or whose usage is not a
    set of counts (see ``oriole.providers.wire.reported_count``), is invalid. The answer is kept verbatim as
    JSON, without botocore's transport metadata (``ResponseMetadata``: request id, headers, retries)."""
    message = _object(raw, "output").get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise InvalidModelResponse(
            f"Bedrock answer has no output.message content (stopReason "
            f"{raw.get('stopReason')!r:.100}); keys: {sorted(map(str, raw))!s:.300}"
        )
    blocks = [b for b in message["content"] if isinstance(b, dict)]
    texts = [b["text"] for b in blocks if isinstance(b.get("text"), str)]
    thoughts = [t for t in map(_reasoning, blocks) if t]
    usage, metrics = _object(raw, "usage"), _object(raw, "metrics")
    stop = raw.get("stopReason")
    return ModelResponse(
        tool_calls=tuple(_tool_call(b, n) for n, b in enumerate(b for b in blocks if "toolUse" in b)),
        text="\n".join(texts) if texts else None,
        thinking="\n".join(thoughts) if thoughts else None,
        usage=Usage(
            reported_count(usage.get("inputTokens"), "usage.inputTokens"),
            reported_count(usage.get("outputTokens"), "usage.outputTokens"),
            reported_count(metrics.get("latencyMs"), "metrics.latencyMs", MAX_LATENCY_MS),
        ),
        stop_reason=stop[:200] if isinstance(stop, str) else None,
        throttles=throttles,
        retries=throttles if retries is None else retries,
        raw=_verbatim(raw),
    )


def _verbatim(raw: Mapping[str, Any]) -> bytes | None:
    """The answer as JSON without ``ResponseMetadata``; None when it nests past what JSON code may meet (its
    over-deep call was answered as invalid, and the answer cannot be replayed)."""
    answer = {k: v for k, v in raw.items() if k != "ResponseMetadata"}
    if nesting_depth(answer, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return None
    return json.dumps(answer, default=str).encode()


def recorded_answer(raw: bytes, latency_ms: int, throttles: int, retries: int) -> ModelResponse:
    """A stored answer read again as the first time (``oriole.providers.replay``; Converse reports its latency
    in the answer itself)."""
    try:
        answer = load_json(raw, MAX_ANSWER_DEPTH)
    except ValueError as err:
        raise InvalidModelResponse(f"the recorded Bedrock answer is {not_json(raw, err)}") from None
    if not isinstance(answer, dict):
        raise InvalidModelResponse(f"the recorded Bedrock answer is JSON of type {type(answer).__name__}")
    return parse_response(answer, throttles, retries)


def wire_request(request: ModelRequest, settings: JsonObject) -> JsonObject:
    """The ``converse`` keyword arguments of a request with an agent's ``settings`` (``modelId``,
    ``inferenceConfig``); ``toolConfig`` only with tools: Converse refuses an empty tool list."""
    kwargs = {
        "modelId": settings["modelId"],
        "system": [{"text": request.system_prompt}],
        "messages": converse_messages(request.messages),
        "inferenceConfig": settings["inferenceConfig"],
    }
    if request.tools:
        kwargs["toolConfig"] = tool_config(request.tools)
    return kwargs


class _Retryable(Exception):
    """One throttled (or busy-service) attempt, caught by the retry loop and never leaving this module."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")


class BedrockAgent:
    """An ``Agent`` answering through one Bedrock model with the Converse API."""

    def __init__(
        self,
        client: ClientSource,
        model_id: str,
        temperature: float,
        max_tokens: int = default_of("maxTokens", int),
        top_p: float = default_of("topP", float),
        max_attempts: int = 3,
        backoff_seconds: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        context_budget: int | None = None,
        timeout_seconds: float | None = None,
    ):
        """``client`` is a ``bedrock-runtime`` client, or a function making one when the first request is sent: an
        agent asked only for its settings (a replay's recorded agent) builds no client and needs no credentials."""
        self._client = client
        self.model_id = model_id
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.top_p = top_p
        self.backoff = Backoff(max_attempts, backoff_seconds, sleep)  # throttles are retried in process
        self.context_budget = context_budget  # requests are trimmed to it (contextTokens in the catalog)
        self.timeout_seconds = timeout_seconds  # one request, its throttle retries and their waits included

    @classmethod
    def from_config(cls, model_id: str, config: ExperimentConfig, client: ClientSource | None = None) -> BedrockAgent:
        """The agent an experiment's configuration asks for (temperature, maxTokens, topP, contextTokens).

        Without a client, one is built with the configuration's request timeout when the first request is sent.
        """
        if client is None:
            client = functools.partial(runtime_client, config.request_timeout_seconds)
        return cls(
            client,
            model_id,
            config.temperature,
            config.max_tokens,
            config.top_p,
            context_budget=prompt_budget(config.context_tokens, config.max_tokens),
            timeout_seconds=config.request_timeout_seconds,
        )

    @property
    def settings(self) -> JsonObject:
        """What every request sends beyond the conversation (temperature 0.0 is sent as 0.0; topP only below 1,
        where it changes anything, since some models refuse it next to a temperature)."""
        inference = {"temperature": float(self.temperature), "maxTokens": int(self.max_tokens)}
        if self.top_p < 1:
            inference["topP"] = float(self.top_p)
        return {"modelId": self.model_id, "inferenceConfig": inference}

    @property
    def client(self) -> BedrockRuntimeClient:
        """The ``bedrock-runtime`` client, made on first use when the agent was given a function making it."""
        if not hasattr(self._client, "converse"):  # a client answers converse; anything else is what makes one
            self._client = self._client()
        return cast("BedrockRuntimeClient", self._client)

    def converse_request(self, request: ModelRequest) -> JsonObject:
        """The ``converse`` keyword arguments for one model request (``wire_request``)."""
        return wire_request(request, self.settings)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """Ask the model, retrying throttles by the adapters' backoff schedule (``oriole.providers.retry``) and
        counting them, all within ``timeout_seconds`` (each attempt's exchange gets what is left: ``_DEADLINE``)."""
        kwargs = self.converse_request(request)
        sent = sent_hash(kwargs)
        throttles = 0
        deadline = None if self.timeout_seconds is None else time.monotonic() + self.timeout_seconds
        _DEADLINE.at = deadline
        try:
            while True:
                try:
                    return replace(parse_response(self._converse(kwargs), throttles), sent_sha256=sent)
                except _Retryable as err:
                    throttles += 1
                    wait = self.backoff.wait(throttles)
                    if not self.backoff.allows(throttles) or (deadline and time.monotonic() + wait >= deadline):
                        raise self._throttled(throttles, err) from None
                    self.backoff.sleep(wait)
        finally:
            _DEADLINE.at = None

    def _throttled(self, throttles: int, last: _Retryable) -> ModelThrottled:
        return ModelThrottled(
            f"Bedrock throttled model {self.model_id!r} {throttles} time(s) in a row "
            f"(last: {last}); the turn can be retried later",
            throttles=throttles,
        )

    def _converse(self, kwargs: JsonObject) -> ConverseResponseTypeDef:
        """One ``converse`` call, its failures translated to named errors (``_Retryable`` for a throttle)."""
        from botocore.exceptions import (
            ClientError,
            HTTPClientError,
            ParamValidationError,
            ReadTimeoutError,
        )
        from botocore.exceptions import ConnectionError as BotocoreConnectionError

        try:
            return self.client.converse(**kwargs)
        except ClientError as err:
            raise self._client_error(err) from err
        except ParamValidationError as err:
            raise ModelRequestRejected(f"request for Bedrock model {self.model_id!r} is invalid: {err}") from err
        except ReadTimeoutError as err:
            raise ModelTimeout(f"Bedrock model {self.model_id!r} did not answer in time: {err}") from err
        except (BotocoreConnectionError, HTTPClientError) as err:
            raise ModelUnavailable(f"cannot reach Bedrock for model {self.model_id!r}: {err}") from err

    def _client_error(self, err: ClientError) -> Exception:
        """The named error for an AWS error answer, chosen by its code (its HTTP status if the code is new)."""
        code = err.response.get("Error", {}).get("Code", "")
        message = err.response.get("Error", {}).get("Message", str(err))
        status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if code in RETRYABLE_CODES or status == 429:
            return _Retryable(code, message)
        if code in TIMEOUT_CODES:
            return ModelTimeout(f"Bedrock model {self.model_id!r} timed out ({code}): {message}")
        if code in UNAVAILABLE_CODES or (code not in REJECTED_CODES and status >= 500):
            return ModelUnavailable(f"Bedrock failed to answer for model {self.model_id!r} ({code}): {message}")
        return ModelRequestRejected(f"Bedrock rejected the request for model {self.model_id!r} ({code}): {message}")


@functools.cache
def shared_client(timeout_seconds: float) -> BedrockRuntimeClient:
    """The warm container's Bedrock client for a request timeout: made once (the local runner puts one holding the
    user's credentials, or a stubbed one, in its place)."""
    return runtime_client(timeout_seconds)


CHECK_TIMEOUT_SECONDS = 15.0
# What GetFoundationModelAvailability must answer for a model this account may call in this region, and what to do
# otherwise: field -> (the value it must have, what is wrong when it has another)
_AVAILABLE = {
    "authorizationStatus": ("AUTHORIZED", "this account is not granted it (the Bedrock console's Model access page)"),
    "entitlementAvailability": ("AVAILABLE", "this account is not entitled to it (the Model access page)"),
    "regionAvailability": ("AVAILABLE", "it is not offered in this region (another region, or an inference profile)"),
}


def check_server(config: ExperimentConfig, models: Sequence[str], api_key: str | None = None) -> str:
    """Whether Amazon Bedrock serves ``models`` to these credentials in this region: its control plane's model lookup,
    one ``GetFoundationModelAvailability`` a model (an inference profile, ``us.anthropic...``, first found with
    ``GetInferenceProfile``, then its first model looked up). ``ModelRequestRejected`` with the reason when a
    model is unknown or not granted; ``ModelUnavailable`` when Bedrock cannot be asked (no credentials, no
    network). Credentials that may call a model but not look one up are no reason to refuse: the line says the
    model was not checked. The client is ``control_client``'s (a test's, under botocore's Stubber, in its place)."""
    from botocore.exceptions import BotoCoreError, ClientError

    named, region = ", ".join(models), "its region"
    try:
        timeout = min(config.request_timeout_seconds, CHECK_TIMEOUT_SECONDS)
        bedrock = control_client(timeout)
        region = bedrock.meta.region_name
        found = [_availability(bedrock, model, region) for model in models]
    except ClientError as err:
        code, message = err.response.get("Error", {}).get("Code"), err.response.get("Error", {}).get("Message")
        if code == "AccessDeniedException":
            return (
                f"Amazon Bedrock in {region}: {named} not checked (these credentials may not look models up: {message})"
            )
        raise ModelUnavailable(f"Amazon Bedrock could not be asked about {named} ({code}): {message}") from None
    except BotoCoreError as err:
        raise ModelUnavailable(
            f"Amazon Bedrock could not be asked about {named}: {err} (check AWS_PROFILE, AWS_REGION and your "
            "credentials)"
        ) from None
    return f"Amazon Bedrock in {region} serves {', '.join(found)}"


def _availability(bedrock: BedrockClient, model: str, region: str) -> str:
    """``model`` as the line names it once GetFoundationModelAvailability says this account may call it."""
    from botocore.exceptions import ClientError

    base, shown = model, model
    try:
        answer = bedrock.get_foundation_model_availability(modelId=model)
    except ClientError as err:
        if err.response.get("Error", {}).get("Code") not in ("ResourceNotFoundException", "ValidationException"):
            raise
        try:  # not a model id: an inference profile's?
            profile = bedrock.get_inference_profile(inferenceProfileIdentifier=model)
        except ClientError as missing:
            if missing.response.get("Error", {}).get("Code") not in (
                "ResourceNotFoundException",
                "ValidationException",
            ):
                raise
            raise ModelRequestRejected(
                f"Amazon Bedrock in {region} has no model or inference profile {model!r}"
            ) from None
        if profile.get("status") != "ACTIVE" or not profile.get("models"):
            raise ModelRequestRejected(
                f"Amazon Bedrock's inference profile {model!r} in {region} is not active"
            ) from None
        base = profile["models"][0]["modelArn"].rsplit("/", 1)[-1]
        shown = f"{model} ({base})"
        answer = bedrock.get_foundation_model_availability(modelId=base)
    agreement = answer.get("agreementAvailability", {})
    problems = [why for field, (wanted, why) in _AVAILABLE.items() if answer.get(field) != wanted]
    if agreement.get("status") not in (None, "AVAILABLE"):
        problems.append(
            f"its offer agreement is {agreement.get('status')} {agreement.get('errorMessage') or ''}".strip()
        )
    if problems:
        raise ModelRequestRejected(f"Amazon Bedrock in {region} will not serve {shown}: {'; '.join(problems)}")
    return shown


def model_identity(config: ExperimentConfig, model: str, api_key: str | None = None) -> ModelIdentity:
    """What Amazon Bedrock reports about the model an experiment invokes, asked once at its start through the control
    plane (``control_client``): an inference profile id (``us.anthropic...``) resolved with ``GetInferenceProfile``
    (its ARN, and the foundation model it routes to), then ``GetFoundationModel`` of that model (its ARN, the
    build; its name, provider and lifecycle status). Credentials that may invoke a model but not look one up, or a
    region without the lookup, leave the fields unknown, with the reason."""
    from botocore.exceptions import BotoCoreError, ClientError

    failures = (ClientError, BotoCoreError, NotImplementedError)  # moto (a local run) implements no lookup
    asking = Asking()
    timeout = min(config.request_timeout_seconds, CHECK_TIMEOUT_SECONDS)
    client = asking.ask("client", lambda: control_client(timeout), failures)
    if client is None:
        return asking.identity(server_software=BEDROCK)
    asking.answers.pop("client", None)
    profile, base = None, model
    if profile_prefix(model):
        profile = asking.ask(
            "GetInferenceProfile",
            lambda: _plain(client.get_inference_profile(inferenceProfileIdentifier=model)),
            failures,
        )
        routed = [m.get("modelArn") for m in (profile or {}).get("models") or () if isinstance(m, dict)]
        base = routed[0].rsplit("/", 1)[-1] if routed and isinstance(routed[0], str) else base_model(model)
    found = asking.ask(
        "GetFoundationModel", lambda: _plain(client.get_foundation_model(modelIdentifier=base)), failures
    )
    details = (found or {}).get("modelDetails") or {}
    return asking.identity(
        model_build=text(details.get("modelArn")),
        reported_model=text(details.get("modelId")),
        server_software=BEDROCK,
        server_version=text(client.meta.region_name),
        inference_profile=text((profile or {}).get("inferenceProfileArn")),
    )


BEDROCK = "Amazon Bedrock"


def _plain(answer: Mapping[str, Any]) -> JsonObject:
    """A control-plane answer without botocore's ``ResponseMetadata`` (request ids, retries: not the model's)."""
    return {key: value for key, value in answer.items() if key != "ResponseMetadata"}


def control_client(timeout_seconds: float) -> BedrockClient:
    """A ``bedrock`` (control plane) client for the model lookups, with the caller's credentials and region."""
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=min(timeout_seconds, MAX_CONNECT_TIMEOUT_SECONDS), read_timeout=timeout_seconds)
    return boto3.client("bedrock", config=config)


def agent(setup: AgentSetup, api_key: str | None = None) -> BedrockAgent:
    """The provider's agent for an experiment's turn (Bedrock authorizes by the function's role: no API key); its
    client, the container's shared one, is fetched when the first request is sent."""
    timeout = setup.config.request_timeout_seconds
    return BedrockAgent.from_config(setup.model, setup.config, functools.partial(shared_client, timeout))
