"""Deploy-time settings read from CDK context (``cdk.json`` or ``-c key=value``), validated once.

Every knob a researcher may turn at deploy time is here, with its default and what it costs. A profile
(``profile``) chooses the defaults of the costly ones at once: ``standard`` (an RDS instance behind RDS Proxy, a
NAT gateway, a separate bastion, a dashboard: about $90 a month idle) or ``lean`` (Aurora Serverless v2 pausing at
0 ACU without a proxy, a NAT instance that doubles as the bastion, no dashboard: under $10 a month idle;
``python -m infra.idle_cost`` computes both from their templates).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aws_cdk import aws_logs as logs
from constructs import Construct

from oriole.catalog import BY_KEY, canonical_deployment, data_stack, orchestrator_stack
from oriole.config import parse_stored, url_problem, without_userinfo
from oriole.environment import DEFAULT_DEPLOYMENT
from oriole.errors import InvalidParameter
from oriole.provider_registry import PROVIDERS, Provider

NAT_GATEWAY, NAT_INSTANCE, ENDPOINTS = "nat", "nat-instance", "endpoints"
EGRESS_MODES = (NAT_GATEWAY, NAT_INSTANCE, ENDPOINTS)
DEPLOYMENT_NAME = re.compile(r"^[A-Z][A-Za-z0-9]{0,23}$")
AVAILABILITY_ZONE = re.compile(r"^(?P<region>[a-z]{2}(-[a-z]+)+-\d+)[a-z]$")
HTTPS_PORT = 443
# Aurora Serverless v2 capacity, in ACUs (about 2 GiB each): Aurora allows 1 to 256 as a maximum.
MAX_ACU_BOUNDS = (1.0, 256.0)
Get = Callable[..., Any]  # a context value by key, or the default given


@dataclass(frozen=True)
class Profile:
    """What one context value (``profile``) decides: the database (``serverless``: Aurora Serverless v2 pausing at
    0 ACU with no proxy; else an RDS instance behind RDS Proxy), the default egress, the dashboard (the account's
    first three are free, then $3 a month each), and whether Lambda throttles are alarmed function by function
    (``itemized_alarms``: two dozen alarm metrics at $0.10 a month) or as the region's one metric."""

    name: str
    serverless: bool
    egress: str
    dashboard: bool
    itemized_alarms: bool


PROFILES = {
    "standard": Profile("standard", serverless=False, egress=NAT_GATEWAY, dashboard=True, itemized_alarms=True),
    "lean": Profile("lean", serverless=True, egress=NAT_INSTANCE, dashboard=False, itemized_alarms=False),
}
DEFAULT_PROFILE = "standard"
KMS_KEY_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$")
CERTS = Path(__file__).resolve().parents[1] / "lambdas" / "oriole" / "certs"  # shipped in the asset


@dataclass(frozen=True)
class ExistingDatabase:
    """A database the researcher already runs: its secret (host, port, username, password, dbname) and network."""

    secret_arn: str
    vpc_id: str
    subnet_ids: tuple[str, ...]
    availability_zones: tuple[str, ...]
    security_group_id: str
    ca_bundle: str | None = None  # a file in lambdas/oriole/certs that signs its certificate: verify-full


@dataclass(frozen=True)
class ModelServerSettings:
    """What a provider sent to model servers (``Provider.servers``) is deployed with: the servers an execution may
    name (its ``ModelServers.context``, e.g. ``ollamaEndpoints``), the secret of its API key
    (``<provider>ApiKeySecretArn``) and the customer-managed KMS key that encrypts that secret
    (``<provider>ApiKeyKmsKeyArn``)."""

    urls: tuple[str, ...]
    api_key_secret_arn: str | None
    api_key_kms_key_arn: str | None

    @classmethod
    def from_context(cls, get: Get, provider: Provider) -> ModelServerSettings:
        if provider.servers is None:
            raise ValueError(f"provider {provider.name} is sent to no model server")
        secret, kms = f"{provider.name}ApiKeySecretArn", f"{provider.name}ApiKeyKmsKeyArn"
        return cls(_model_servers(get, provider.servers.context, secret), get(secret), _kms_key(get, kms, secret))


@dataclass(frozen=True)
class Settings:
    deployment: str
    profile: Profile
    egress: str
    availability_zones: tuple[str, ...] | None  # None: the region's first two
    deletion_protection: bool
    bedrock_model_ids: tuple[str, ...]
    vision_models: tuple[str, ...]  # models beyond the catalog's IMAGE_MODELS that accept images
    max_execution_seconds: int
    model_servers: dict[str, ModelServerSettings]  # by provider: those of oriole.provider_registry with servers
    existing_database: ExistingDatabase | None
    log_retention_days: int
    alarm_email: str | None
    monthly_budget_usd: float | None  # an AWS Budget on the account's monthly cost, mailed to alarm_email
    bastion: bool
    dashboard: bool
    max_acu: float  # the serverless database's most capacity (lean)

    @property
    def data_stack(self) -> str:
        return data_stack(self.deployment)

    @property
    def orchestrator_stack(self) -> str:
        return orchestrator_stack(self.deployment)

    @property
    def model_server_ports(self) -> tuple[int, ...]:
        """The ports the functions may send to besides HTTPS's: those of the allow-listed model servers."""
        ports = {_port(url) for servers in self.model_servers.values() for url in servers.urls}
        return tuple(sorted(ports - {HTTPS_PORT}))

    @classmethod
    def from_context(cls, scope: Construct) -> Settings:
        def get(key: str, default: Any = None) -> Any:
            value = scope.node.try_get_context(key)
            return default if value is None else value

        profile = _choice(get, "profile", DEFAULT_PROFILE, tuple(PROFILES))
        alarm_email = get("alarmEmail")
        return cls(
            deployment=_deployment(get),
            profile=PROFILES[profile],
            egress=_choice(get, "egress", PROFILES[profile].egress, EGRESS_MODES),
            availability_zones=_availability_zones(get),
            deletion_protection=_flag(get("deletionProtection", True)),
            bedrock_model_ids=_list(get("bedrockModelIds", [])),
            vision_models=_list(get("visionModels", [])),
            max_execution_seconds=_execution_timeout(get("maxExecutionSeconds")),
            model_servers={p.name: ModelServerSettings.from_context(get, p) for p in PROVIDERS.values() if p.servers},
            existing_database=_existing_database(get),
            log_retention_days=int(get("logRetentionDays", 30)),
            alarm_email=alarm_email,
            monthly_budget_usd=_budget(get, alarm_email),
            bastion=_flag(get("bastion", True)),
            dashboard=_flag(get("dashboard", PROFILES[profile].dashboard)),
            max_acu=_number(get, "maxAcu", 2.0, MAX_ACU_BOUNDS),
        )


def _choice(get: Get, key: str, default: str, choices: tuple[str, ...]) -> str:
    value = str(get(key, default))
    if value not in choices:
        raise ValueError(f"context {key} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _deployment(get: Get) -> str:
    """The deployment's name, case-folded to one spelling (``oriolelab2``, ``OrioleLab2`` -> ``Oriolelab2``): AWS
    keeps some of the names made from it in lower case (the parameter prefix, RDS identifiers), so two names that
    differ only in case would claim the same ones; folded, they name the same deployment."""
    given = str(get("deployment", DEFAULT_DEPLOYMENT))
    folded = canonical_deployment(given)
    if not DEPLOYMENT_NAME.match(folded):
        raise ValueError(
            f"context deployment must be a name of letters and digits (up to 24) starting with a letter, "
            f"like Lab2; got {given!r}"
        )
    return folded


def _availability_zones(get: Get) -> tuple[str, ...] | None:
    """``availabilityZones``: the two AZs of one region the VPC uses instead of the region's first two (some
    accounts' first AZs do not offer the instance types; the deploy how-to's pre-flight check lists those that
    do)."""
    zones = get("availabilityZones")
    if zones is None:
        return None
    listed = _list(zones)
    matches = [AVAILABILITY_ZONE.match(zone) for zone in listed]
    regions = {m["region"] for m in matches if m}
    if len(listed) != 2 or len(set(listed)) != 2 or None in matches or len(regions) != 1:
        raise ValueError(
            f"context availabilityZones must be two availability zones of one region, like "
            f"us-east-1b,us-east-1c; got {zones!r}"
        )
    return listed


def _budget(get: Get, alarm_email: str | None) -> float | None:
    value = get("monthlyBudgetUsd")
    if value is None:
        return None
    budget = _number(get, "monthlyBudgetUsd", 0.0, (1.0, 1_000_000.0))
    if not alarm_email:
        raise ValueError("context monthlyBudgetUsd mails its alerts to alarmEmail; set that too")
    return budget


def _number(get: Get, key: str, default: float, bounds: tuple[float, float]) -> float:
    try:
        value = float(get(key, default))
    except (TypeError, ValueError):
        value = float("nan")
    if not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"context {key} must be a number from {bounds[0]:g} to {bounds[1]:g}; got {get(key)!r}")
    return value


def _port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (HTTPS_PORT if parts.scheme.lower() == "https" else 80)


def _list(value: Any) -> tuple[str, ...]:
    """A list from context: a JSON list (from cdk.json, or ``-c key='["a", "b"]'``) or ``a,b``."""
    if isinstance(value, str):
        value = json.loads(value) if value.startswith("[") else [v for v in value.split(",") if v]
    return tuple(str(v) for v in value)


def _execution_timeout(value: Any) -> int:
    """The execution timeout, within the catalog's bounds (above the default duration limit plus a turn)."""
    param = BY_KEY["maxExecutionSeconds"]
    try:
        seconds = param.default if value is None else parse_stored(param, str(value))
    except InvalidParameter as err:
        raise ValueError(f"context maxExecutionSeconds: {err}") from None
    assert isinstance(seconds, int)  # the catalog's type for it
    return seconds


def _model_servers(get: Get, context: str, key_context: str) -> tuple[str, ...]:
    """The model servers (``ollamaEndpoints``, ``openaiBaseUrls``) executions may name on AWS; never plain http
    when an API key is sent (``key_context``)."""
    urls = _list(get(context, []))
    for url in urls:
        if problem := url_problem(url, ("http", "https")):  # the check every other entry of a URL gets
            raise ValueError(f"context {context}: {without_userinfo(url)!r} {problem}")
        if get(key_context) and not url.lower().startswith("https://"):
            raise ValueError(
                f"context {context}: {url!r} is plain http, but {key_context} "
                "makes the functions send an API key: use https"
            )
    return urls


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


def _kms_key(get: Get, context: str, secret_context: str) -> str | None:
    """The customer-managed KMS key (its key ARN) that encrypts the API-key secret of ``secret_context``: the
    agent that reads the secret needs kms:Decrypt on it, which only a key ARN can grant (an alias cannot)."""
    arn = get(context)
    if not arn:
        return None
    if not get(secret_context):
        raise ValueError(f"context {context} is the key of the secret {secret_context} names; set that too")
    if not KMS_KEY_ARN.match(arn):
        raise ValueError(
            f"context {context} must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>); got {arn!r}"
        )
    return str(arn)


def _existing_database(get: Get) -> ExistingDatabase | None:
    secret_arn = get("existingDatabaseSecretArn")
    if not secret_arn:
        return None
    required = ("existingVpcId", "existingSubnetIds", "existingAvailabilityZones", "existingSecurityGroupId")
    missing = [key for key in required if not get(key)]
    if missing:
        raise ValueError(f"existingDatabaseSecretArn also needs context {', '.join(missing)}")

    def split(key: str) -> tuple[str, ...]:
        value = get(key)
        return tuple(value if isinstance(value, list) else str(value).split(","))

    ca_bundle = get("existingDatabaseCaBundle")
    if ca_bundle and not (CERTS / ca_bundle).is_file():
        raise ValueError(
            f"context existingDatabaseCaBundle: no file {ca_bundle!r} in {CERTS}; put the CA bundle "
            "that signs the database's certificate there"
        )
    return ExistingDatabase(
        secret_arn,
        get("existingVpcId"),
        split("existingSubnetIds"),
        split("existingAvailabilityZones"),
        get("existingSecurityGroupId"),
        ca_bundle,
    )


_RETENTION = {
    1: "ONE_DAY",
    3: "THREE_DAYS",
    5: "FIVE_DAYS",
    7: "ONE_WEEK",
    14: "TWO_WEEKS",
    30: "ONE_MONTH",
    60: "TWO_MONTHS",
    90: "THREE_MONTHS",
    180: "SIX_MONTHS",
    365: "ONE_YEAR",
    731: "TWO_YEARS",
    1827: "FIVE_YEARS",
    3653: "TEN_YEARS",
}


def log_retention(days: int) -> logs.RetentionDays:
    """CloudWatch accepts only some retention periods: the nearest one at or above ``days``."""
    allowed = next((d for d in sorted(_RETENTION) if d >= days), max(_RETENTION))
    return logs.RetentionDays[_RETENTION[allowed]]
