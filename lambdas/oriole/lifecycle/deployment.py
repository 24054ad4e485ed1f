"""What a deployment fixes when it is deployed: environment variables that CDK sets on the functions.

On AWS an execution input must stay within what the stack was deployed for: a Bedrock model the functions
may invoke, an Ollama endpoint or an OpenAI-compatible base URL the operator allowed (the API key is sent to
it, and its answers land in ``failure_reason``). StartExperiment checks these before it writes anything.
Locally none of these variables is set and nothing is restricted: the researcher's own machine and
credentials decide.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from oriole.catalog import BY_KEY, IMAGE_MODELS
from oriole.environment import VISION_MODELS, Environment
from oriole.errors import InvalidConfig, ModelNotAllowed
from oriole.provider_registry import PROFILE_PREFIXES as PROFILE_PREFIXES
from oriole.provider_registry import Provider
from oriole.provider_registry import base_model as base_model
from oriole.provider_registry import profile_prefix as profile_prefix

# A Bedrock model id's profile prefix and base model are read here (the deployment's grants) and by the Bedrock
# adapter (which model a profile resolves to), so they live in ``oriole.provider_registry``, below both layers;
# they are re-exported here for the infrastructure, the workstation and the tests.

# The variables CDK sets on the functions are named and read by ``oriole.environment`` (each provider's model
# servers and API key's secret by its entry in ``oriole.provider_registry``).

# A region's first word -> the geographic profile prefix callable from it; other regions use ``global``.
GEOGRAPHIES = {"us": "us", "eu": "eu", "ap": "apac"}
GLOBAL = "global"
# The regions a geographic profile may route a call to, per prefix: the union over the models of the
# destination regions AWS documents (docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-support.html,
# also in the CDK's CrossRegionInferenceProfileRegion). IAM must allow the foundation model in each of them
# (geographic-cross-region-inference.html, "IAM policy requirements"). A global profile routes to any commercial
# region and is authorized on the foundation model without a region (``arn:aws:bedrock:::foundation-model/...``,
# global-cross-region-inference.html). No Canadian (``ca``) table is documented there yet.
DESTINATION_REGIONS = {
    "us": ("us-east-1", "us-east-2", "us-west-1", "us-west-2"),
    "eu": (
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
    ),
    "apac": (
        "ap-east-2",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-south-1",
        "ap-south-2",
        "ap-southeast-1",
        "ap-southeast-2",
        "ap-southeast-3",
        "ap-southeast-4",
        "ap-southeast-5",
        "ap-southeast-7",
        "me-central-1",
    ),
    "jp": ("ap-northeast-1", "ap-northeast-3"),
    "au": ("ap-southeast-2", "ap-southeast-4"),
    "us-gov": ("us-gov-east-1", "us-gov-west-1"),
}


def geography(region: str) -> str:
    """The inference-profile prefix of a region's geography (``us-east-1`` -> ``us``)."""
    return GEOGRAPHIES.get(region.split("-", 1)[0], GLOBAL)


def invocable_ids(model_ids: tuple[str, ...] | list[str], region_geography: str) -> list[str]:
    """Every id a deployment granted: a profile id as given; a base id, itself and its profiles of the
    deployment's geography and the global one (which of them Bedrock serves depends on the model)."""
    ids: list[str] = []
    for model_id in model_ids:
        names = (
            [model_id]
            if profile_prefix(model_id)
            else [model_id, f"{region_geography}.{model_id}", f"{GLOBAL}.{model_id}"]
        )
        ids += [name for name in names if name not in ids]
    return ids


def check_granted_model(model_name: str, env: Environment | None = None) -> None:
    """Refuse a model of an AWS service (Bedrock's: ``Provider.aws_service``) the deployment does not grant, naming
    the ones it does."""
    env = env or Environment.read()
    configured = env.bedrock_model_ids
    if configured is None:
        return
    allowed = invocable_ids(configured, geography(env.region))
    if model_name not in allowed:
        raise ModelNotAllowed(
            f"modelName {model_name!r} is not allowed by this deployment; allowed: {', '.join(allowed) or 'none'}. "
            "Add a model with `cdk deploy -c bedrockModelIds='[\"<model or profile id>\"]'` (docs)"
        )


def check_image_model(model_name: str, observation: str, env: Environment | None = None) -> None:
    """Refuse to send pictures (``observation`` image or both) to a model nobody marked as accepting images: the
    catalog's ``IMAGE_MODELS`` and the deployment's ``visionModels`` (``ORIOLE_VISION_MODELS``, which a local run
    reads from its environment). A Bedrock inference profile counts as its base model."""
    marked = IMAGE_MODELS | set((env or Environment.read()).vision_models)
    if model_name in marked or base_model(model_name) in marked:
        return
    raise InvalidConfig(
        f"config.observation {observation} sends pictures, but model {model_name!r} is not marked as accepting "
        f"images; use observation text, or mark it: `cdk deploy -c visionModels='[\"{model_name}\"]'` on AWS, "
        f'{VISION_MODELS}=\'["{model_name}"]\' in the environment of a local run (docs: "Seeing the maze")'
    )


def check_model_server(provider: Provider, url: str, env: Environment | None = None) -> None:
    """On AWS, a model server must be one the deployment allows (the API key is sent to it, its answers land in
    the database); plain http is refused when an API key would be sent over it."""
    env = env or Environment.read()
    servers = provider.servers
    allowed = env.model_servers(provider.name)
    if servers is None or allowed is None:
        return
    local = str(BY_KEY[servers.key].default)
    where = (
        f"deploy with `cdk deploy -c {servers.context}='[\"{servers.example}\"]'` and set "
        f"{BY_KEY[servers.key].name} to one of them (`oriole params set {servers.key} URL --aws`)"
    )
    if url.rstrip("/") not in {e.rstrip("/") for e in allowed}:
        if url.rstrip("/") == local.rstrip("/"):
            raise InvalidConfig(
                f"config.{servers.key} is the local default {local}, which a Lambda function cannot reach; {where}"
            )
        raise InvalidConfig(
            f"config.{servers.key} {url!r} is not an {servers.service} {servers.noun} this "
            f"deployment allows (allowed: {', '.join(allowed) or 'none'}); {where}"
        )
    if env.api_key_secret(provider.name) and not url.lower().startswith("https://"):
        raise InvalidConfig(
            f"config.{servers.key} {url!r} is plain http but this deployment sends an "
            f"{servers.service} API key: allow only https {servers.noun}s"
        )


# A version becomes current when the deploy that published it succeeds, at most this long after it was published.
DEPLOY_MARGIN = timedelta(hours=1)
VERSION_ARN = re.compile(r"arn:[\w-]+:lambda:[\w-]+:\d{12}:function:([\w-]+):(\d+)\b")


@dataclass(frozen=True)
class PublishedVersion:
    """A published Lambda version: its number and when it was published (its ``LastModified``)."""

    number: int
    published: datetime


def versions_named(text: str) -> set[tuple[str, int]]:
    """The (function name, version) pairs the Lambda version ARNs in ``text`` name (a state machine
    definition, the physical ids of a stack's versions)."""
    return {(name, int(number)) for name, number in VERSION_ARN.findall(text)}


def stale_versions(
    versions: Iterable[PublishedVersion], in_stack: set[int], now: datetime, grace: timedelta, in_use: set[int]
) -> list[int]:
    """The versions of one function that no execution can call any more, oldest first.

    The stack holds (``in_stack``) the version its template names now and, while a deploy runs, the one it
    replaces: both stay, and whatever is newer (a deploy that failed leaves a version that never became
    current). The oldest version the stack holds became current when the deploy that published it succeeded;
    every older version stopped being current then, and an execution started on one lasts at most ``grace``
    (the execution timeout; its successor execution starts on the new definition), which also covers the
    deploy (``DEPLOY_MARGIN``). So once that oldest held version is older than ``grace``, every older version
    goes, unless a running sweep names it (``in_use``: a sweep has no execution timeout)."""
    versions = list(versions)
    held = [version for version in versions if version.number in in_stack]
    if not held:
        return []
    oldest_held = min(held, key=lambda version: version.number)
    if now - oldest_held.published <= grace:
        return []
    return sorted(
        version.number for version in versions if version.number < oldest_held.number and version.number not in in_use
    )
