"""Deploy-time settings read from CDK context (``cdk.json`` or ``-c key=value``), validated once.

Every knob a researcher may turn at deploy time is here, with its default and what it costs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import aws_logs as logs
from constructs import Construct

from oriole.catalog import BY_KEY, data_stack, orchestrator_stack
from oriole.config import parse_stored, url_problem, without_userinfo
from oriole.environment import DEFAULT_DEPLOYMENT
from oriole.errors import InvalidParameter
from oriole.provider_registry import PROVIDERS, Provider

EGRESS_MODES = ("nat", "endpoints")
DEPLOYMENT_NAME = re.compile(r"^[A-Z][A-Za-z0-9]{0,23}$")
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
    def from_context(cls, get, provider: Provider) -> ModelServerSettings:
        secret, kms = f"{provider.name}ApiKeySecretArn", f"{provider.name}ApiKeyKmsKeyArn"
        return cls(_model_servers(get, provider.servers.context, secret), get(secret), _kms_key(get, kms, secret))


@dataclass(frozen=True)
class Settings:
    deployment: str
    egress: str
    deletion_protection: bool
    bedrock_model_ids: tuple[str, ...]
    vision_models: tuple[str, ...]  # models beyond the catalog's IMAGE_MODELS that accept images
    max_execution_seconds: int
    model_servers: dict[str, ModelServerSettings]  # by provider: those of oriole.provider_registry with servers
    existing_database: ExistingDatabase | None
    log_retention_days: int
    alarm_email: str | None
    bastion: bool

    @property
    def data_stack(self) -> str:
        return data_stack(self.deployment)

    @property
    def orchestrator_stack(self) -> str:
        return orchestrator_stack(self.deployment)

    @classmethod
    def from_context(cls, scope: Construct) -> Settings:
        def get(key: str, default=None):
            value = scope.node.try_get_context(key)
            return default if value is None else value

        egress = get("egress", "nat")
        if egress not in EGRESS_MODES:
            raise ValueError(f"context egress must be one of {', '.join(EGRESS_MODES)}; got {egress!r}")
        deployment = str(get("deployment", DEFAULT_DEPLOYMENT))
        if not DEPLOYMENT_NAME.match(deployment):
            raise ValueError(
                f"context deployment must be a capitalised name of letters and digits (up to 24), "
                f"like OrioleLab2; got {deployment!r}"
            )
        return cls(
            deployment=deployment,
            egress=egress,
            deletion_protection=_flag(get("deletionProtection", True)),
            bedrock_model_ids=_list(get("bedrockModelIds", [])),
            vision_models=_list(get("visionModels", [])),
            max_execution_seconds=_execution_timeout(get("maxExecutionSeconds")),
            model_servers={p.name: ModelServerSettings.from_context(get, p) for p in PROVIDERS.values() if p.servers},
            existing_database=_existing_database(get),
            log_retention_days=int(get("logRetentionDays", 30)),
            alarm_email=get("alarmEmail"),
            bastion=_flag(get("bastion", True)),
        )


def _list(value) -> tuple[str, ...]:
    """A list from context: a JSON list (from cdk.json, or ``-c key='["a", "b"]'``) or ``a,b``."""
    if isinstance(value, str):
        value = json.loads(value) if value.startswith("[") else [v for v in value.split(",") if v]
    return tuple(str(v) for v in value)


def _execution_timeout(value) -> int:
    """The execution timeout, within the catalog's bounds (above the default duration limit plus a turn)."""
    param = BY_KEY["maxExecutionSeconds"]
    if value is None:
        return param.default
    try:
        return parse_stored(param, str(value))
    except InvalidParameter as err:
        raise ValueError(f"context maxExecutionSeconds: {err}") from None


def _model_servers(get, context: str, key_context: str) -> tuple[str, ...]:
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


def _flag(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


def _kms_key(get, context: str, secret_context: str) -> str | None:
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
    return arn


def _existing_database(get) -> ExistingDatabase | None:
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
    return getattr(logs.RetentionDays, _RETENTION[allowed])
