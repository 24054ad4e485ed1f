"""What a deployment fixes when it is deployed: environment variables that CDK sets on the functions.

On AWS an execution input must stay within what the stack was deployed for: a Bedrock model the functions
may invoke, an Ollama endpoint or an OpenAI-compatible base URL the operator allowed (the API key is sent to
it, and its answers land in ``failure_reason``). StartExperiment checks these before it writes anything.
Locally none of these variables is set and nothing is restricted: the researcher's own machine and
credentials decide.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass

from oriole.catalog import BY_KEY
from oriole.errors import InvalidConfig, ModelNotAllowed

BEDROCK_MODEL_IDS = "ORIOLE_BEDROCK_MODEL_IDS"  # JSON list: the deploy-time bedrockModelIds
OLLAMA_ENDPOINTS = "ORIOLE_OLLAMA_ENDPOINTS"  # JSON list: the deploy-time ollamaEndpoints
OLLAMA_API_KEY = "OLLAMA_API_KEY"  # a local run's key (the variable); on AWS the secret below holds it
OLLAMA_API_KEY_SECRET = "OLLAMA_API_KEY_SECRET_ARN"  # set when the deployment sends an Ollama API key
OPENAI_BASE_URLS = "ORIOLE_OPENAI_BASE_URLS"  # JSON list: the deploy-time openaiBaseUrls
OPENAI_API_KEY = "OPENAI_API_KEY"
OPENAI_API_KEY_SECRET = "OPENAI_API_KEY_SECRET_ARN"  # set when the deployment sends an OpenAI-compatible API key
API_KEYS = {"ollama": OLLAMA_API_KEY, "openai": OPENAI_API_KEY}  # provider -> the variable of its API key
CODE_VERSION = "ORIOLE_CODE_VERSION"  # package version and asset hash of the deployed code
EXECUTION_TIMEOUT = "ORIOLE_EXECUTION_TIMEOUT_SECONDS"  # the state machine's TimeoutSeconds
STATE_MACHINE_ARN = "ORIOLE_STATE_MACHINE_ARN"  # the reconciler's state machine
ROLE_SECRETS = "ORIOLE_ROLE_SECRETS"  # JSON: database role -> the secret of its password (the migrations)

# Prefixes of Bedrock's system-defined cross-region inference profiles (``us.anthropic...``).
PROFILE_PREFIXES = ("us", "eu", "apac", "jp", "au", "ca", "us-gov", "global")
# A region's first word -> the geographic profile prefix callable from it; other regions use ``global``.
GEOGRAPHIES = {"us": "us", "eu": "eu", "ap": "apac"}
GLOBAL = "global"
LOCAL_OLLAMA = "http://localhost:11434"
LOCAL_OPENAI = "http://localhost:8000/v1"


def geography(region: str) -> str:
    """The inference-profile prefix of a region's geography (``us-east-1`` -> ``us``)."""
    return GEOGRAPHIES.get(region.split("-", 1)[0], GLOBAL)


def profile_prefix(model_id: str) -> str | None:
    """``us`` for ``us.anthropic.claude-...``; None for a base model id."""
    head, dot, _ = model_id.partition(".")
    return head if dot and head in PROFILE_PREFIXES else None


def base_model(model_id: str) -> str:
    """The foundation model an id names: a profile id without its prefix, a base id as it is."""
    return model_id.split(".", 1)[1] if profile_prefix(model_id) else model_id


def invocable_ids(model_ids: tuple[str, ...] | list[str], region_geography: str) -> list[str]:
    """Every id a deployment granted: a profile id as given; a base id, itself and its profiles of the
    deployment's geography and the global one (which of them Bedrock serves depends on the model)."""
    ids: list[str] = []
    for model_id in model_ids:
        names = [model_id] if profile_prefix(model_id) else [
            model_id, f"{region_geography}.{model_id}", f"{GLOBAL}.{model_id}"]
        ids += [name for name in names if name not in ids]
    return ids


def _listed(environ: Mapping[str, str], name: str) -> list[str] | None:
    text = environ.get(name)
    return None if text is None else list(json.loads(text))


def check_bedrock_model(model_name: str, environ: Mapping[str, str] = os.environ) -> None:
    """Refuse a Bedrock model the deployment does not grant, naming the ones it does."""
    configured = _listed(environ, BEDROCK_MODEL_IDS)
    if configured is None:
        return
    allowed = invocable_ids(configured, geography(environ.get("AWS_REGION", "")))
    if model_name not in allowed:
        raise ModelNotAllowed(
            f"modelName {model_name!r} is not allowed by this deployment; allowed: {', '.join(allowed) or 'none'}. "
            "Add a model with `cdk deploy -c bedrockModelIds='[\"<model or profile id>\"]'` (see README)")


@dataclass(frozen=True)
class ModelServers:
    """Model servers an experiment names by URL (Ollama's endpoint, an OpenAI-compatible base URL): its config
    key, the deploy-time list (context and environment variable), the API key's secret variable, and the local
    default, which a Lambda function cannot reach."""

    service: str
    noun: str
    key: str
    listed: str
    context: str
    example: str
    secret: str
    local: str


OLLAMA = ModelServers("Ollama", "endpoint", "endpoint", OLLAMA_ENDPOINTS, "ollamaEndpoints",
                      "https://your-ollama:11434", OLLAMA_API_KEY_SECRET, LOCAL_OLLAMA)
OPENAI = ModelServers("OpenAI-compatible", "base URL", "baseUrl", OPENAI_BASE_URLS, "openaiBaseUrls",
                      "https://your-server/v1", OPENAI_API_KEY_SECRET, LOCAL_OPENAI)


def check_model_server(servers: ModelServers, url: str, environ: Mapping[str, str] = os.environ) -> None:
    """On AWS, a model server must be one the deployment allows (the API key is sent to it, its answers land in
    the database); plain http is refused when an API key would be sent over it."""
    allowed = _listed(environ, servers.listed)
    if allowed is None:
        return
    where = (f"deploy with `cdk deploy -c {servers.context}='[\"{servers.example}\"]'` and set "
             f"{BY_KEY[servers.key].name} to one of them (`oriole params set {servers.key} URL --aws`)")
    if url.rstrip("/") not in {e.rstrip("/") for e in allowed}:
        if url.rstrip("/") == servers.local:
            raise InvalidConfig(f"config.{servers.key} is the local default {servers.local}, which a Lambda function "
                                f"cannot reach; {where}")
        raise InvalidConfig(f"config.{servers.key} {url!r} is not an {servers.service} {servers.noun} this "
                            f"deployment allows (allowed: {', '.join(allowed) or 'none'}); {where}")
    if environ.get(servers.secret) and not url.lower().startswith("https://"):
        raise InvalidConfig(f"config.{servers.key} {url!r} is plain http but this deployment sends an "
                            f"{servers.service} API key: allow only https {servers.noun}s")


def execution_timeout(environ: Mapping[str, str] = os.environ) -> int | None:
    """The state machine's execution timeout in seconds (the runner sets it locally too); None when unset."""
    value = environ.get(EXECUTION_TIMEOUT)
    return int(value) if value else None


def code_version(environ: Mapping[str, str] = os.environ) -> str:
    """The code's version: on AWS ``<package version>+<asset hash>`` as CDK set it; locally ``<version>+local``."""
    from oriole import __version__

    return environ.get(CODE_VERSION) or f"{__version__}+local"
