"""Which model build answered an experiment: what its server reports about the model and itself, asked once when the
experiment starts (``oriole.lifecycle.experiments.start``), never per turn.

Each provider's adapter asks its server's documented endpoints (its module's ``model_identity``): Ollama's ``GET
/api/version``, ``GET /api/tags`` (the model's digest) and ``POST /api/show`` (its parameter size and quantisation);
an OpenAI-compatible server's ``GET /models`` entry and its answer's headers (``Server``); Bedrock's
``GetInferenceProfile`` and ``GetFoundationModel`` (the model a profile resolves to). What they answered becomes a
``ModelIdentity``: a few fields a researcher queries as columns (``experiments.model_build`` and its neighbours,
migration 0034) and the answers themselves, bounded, as JSON.

An endpoint that does not answer (refused, not found, timed out, not the documented shape) never fails the
experiment: its fields stay unknown and ``unknown`` says, per endpoint, why. ``model_build`` is what comparisons
split on (a model name an alias may point at another build of tomorrow): the Ollama digest, the OpenAI-compatible
entry's ``root`` or ``id``, the foundation model's ARN; ``"unknown"`` when the server did not tell it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oriole.errors import ModelTimeout, ModelUnavailable
from oriole.text import JsonObject, bounded, replaced, stored_message

UNKNOWN = "unknown"  # a field the server was asked for and did not tell
MAX_FIELD_CHARS = 400  # one reported value (a digest, a version, an ARN): far above any real one
MAX_TEXT_CHARS = 2_000  # a long reported text kept in the answers (a license, a modelfile), cut to this
# How deep containers are kept in the answers: a vLLM /models entry's permission objects sit 5 deep (body, data,
# entry, permission, object), Ollama's details.families 4 (models, entry, details, families). A container nested
# deeper is cut (a body is bounded by the transport's MAX_RESPONSE_BYTES, so its size is bounded whatever the depth).
MAX_KEPT_DEPTH = 8


@dataclass(frozen=True)
class ModelIdentity:
    """What the server reported about the model an experiment runs and about itself (None: not reported)."""

    model_build: str = UNKNOWN
    reported_model: str | None = None  # the model as the server names it (a tag, a /models id, a model id)
    server_software: str | None = None  # "Ollama", a Server header ("uvicorn"), "Amazon Bedrock"
    server_version: str | None = None
    parameter_size: str | None = None  # "8.2B"
    quantization: str | None = None  # "Q4_K_M"
    inference_profile: str | None = None  # the Bedrock inference profile's ARN, when the model id names one
    answers: JsonObject = field(default_factory=dict)  # per endpoint, what it answered (bounded)
    unknown: JsonObject = field(default_factory=dict)  # per endpoint, why it told nothing

    def columns(self) -> JsonObject:
        """The experiment's columns (migration 0034)."""
        return {
            "model_build": self.model_build,
            "reported_model": self.reported_model,
            "server_software": self.server_software,
            "server_version": self.server_version,
            "model_parameter_size": self.parameter_size,
            "model_quantization": self.quantization,
            "inference_profile": self.inference_profile,
            "model_identity": {"answers": self.answers, "unknown": self.unknown},
        }


def text(value: object) -> str | None:
    """A reported value as a stored field: a non-empty string or number, bounded; anything else None."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    shown = replaced(bounded(str(value).strip(), MAX_FIELD_CHARS))  # storable, whatever the server put in it
    return shown or None


def kept(value: Any, depth: int = 0) -> Any:
    """A reported answer as it is kept: strings bounded and storable, numbers, booleans and nulls as reported,
    containers at most ``MAX_KEPT_DEPTH`` levels deep and 64 long."""
    if isinstance(value, str):
        return replaced(bounded(value, MAX_TEXT_CHARS))
    if value is None or isinstance(value, bool | int | float):
        return value
    if depth >= MAX_KEPT_DEPTH:
        return None
    if isinstance(value, Mapping):
        return {replaced(str(k)[:MAX_FIELD_CHARS]): kept(v, depth + 1) for k, v in list(value.items())[:64]}
    if isinstance(value, list | tuple):
        return [kept(v, depth + 1) for v in list(value)[:64]]
    return replaced(str(value)[:MAX_FIELD_CHARS])


class Asking:
    """The answers of one experiment's identity questions as they come: ``ask`` one endpoint (what it answered, or
    None with the reason kept), then ``identity`` from what was learnt."""

    def __init__(self) -> None:
        self.answers: JsonObject = {}
        self.unknown: JsonObject = {}
        self.unreachable: str | None = None  # the first question the server could not be reached for

    def ask(self, endpoint: str, call: Callable[[], Any], failures: tuple[type[BaseException], ...]) -> Any:
        """``call()``'s answer, kept under ``endpoint``; None when it raised one of ``failures`` (its message kept
        as the reason, the experiment goes on). Once the server could not be reached (refused, timed out), the
        questions after are not asked: a start waits for a dead server once, not once a question."""
        if self.unreachable is not None:
            self.unknown[endpoint] = f"not asked: the server did not answer {self.unreachable}"
            return None
        try:
            answer = call()
        except failures as err:
            self.unknown[endpoint] = stored_message(f"{type(err).__name__}: {err}")
            if isinstance(err, ModelUnavailable | ModelTimeout):
                self.unreachable = endpoint
            return None
        self.answers[endpoint] = kept(answer)
        return answer

    def missing(self, endpoint: str, why: str) -> None:
        """An answer that came but did not tell what was asked (the model not listed, a field absent)."""
        self.unknown[endpoint] = stored_message(why)

    def identity(
        self,
        model_build: str | None = None,
        reported_model: str | None = None,
        server_software: str | None = None,
        server_version: str | None = None,
        parameter_size: str | None = None,
        quantization: str | None = None,
        inference_profile: str | None = None,
    ) -> ModelIdentity:
        """What was learnt, with the answers and the reasons kept; the build ``unknown`` when none was told."""
        return ModelIdentity(
            model_build or UNKNOWN,
            reported_model,
            server_software,
            server_version,
            parameter_size,
            quantization,
            inference_profile,
            self.answers,
            self.unknown,
        )
