"""Deploy-time settings read from CDK context (``cdk.json`` or ``-c key=value``), validated once.

Every knob a researcher may turn at deploy time is here, with its default and what it costs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from aws_cdk import aws_logs as logs
from constructs import Construct

from oriole.catalog import BY_KEY
from oriole.config import check_override

EGRESS_MODES = ("nat", "endpoints")


@dataclass(frozen=True)
class ExistingDatabase:
    """A database the researcher already runs: its secret (host, port, username, password, dbname) and network."""

    secret_arn: str
    vpc_id: str
    subnet_ids: tuple[str, ...]
    availability_zones: tuple[str, ...]
    security_group_id: str


@dataclass(frozen=True)
class Settings:
    egress: str
    deletion_protection: bool
    bedrock_model_ids: tuple[str, ...]
    max_execution_seconds: int
    ollama_api_key_secret_arn: str | None
    openai_base_urls: tuple[str, ...]
    openai_api_key_secret_arn: str | None
    existing_database: ExistingDatabase | None
    log_retention_days: int
    alarm_email: str | None
    bastion: bool

    @classmethod
    def from_context(cls, scope: Construct) -> Settings:
        def get(key: str, default=None):
            value = scope.node.try_get_context(key)
            return default if value is None else value

        egress = get("egress", "nat")
        if egress not in EGRESS_MODES:
            raise ValueError(f"context egress must be one of {', '.join(EGRESS_MODES)}; got {egress!r}")
        models = get("bedrockModelIds", [])
        if isinstance(models, str):
            models = json.loads(models) if models.startswith("[") else [m for m in models.split(",") if m]
        openai_secret = get("openaiApiKeySecretArn")
        return cls(
            egress=egress,
            deletion_protection=_flag(get("deletionProtection", True)),
            bedrock_model_ids=tuple(models),
            max_execution_seconds=int(get("maxExecutionSeconds", BY_KEY["maxExecutionSeconds"].default)),
            ollama_api_key_secret_arn=get("ollamaApiKeySecretArn"),
            openai_base_urls=_openai_base_urls(get("openaiBaseUrls", []), keyed=bool(openai_secret)),
            openai_api_key_secret_arn=openai_secret,
            existing_database=_existing_database(get),
            log_retention_days=int(get("logRetentionDays", 30)),
            alarm_email=get("alarmEmail"),
            bastion=_flag(get("bastion", True)),
        )


def _openai_base_urls(value, keyed: bool) -> tuple[str, ...]:
    """The OpenAI-compatible base URLs experiments may use on AWS (a JSON list or comma-separated), each checked
    as ``/oriole/openai/base-url`` is; with an API key, https only: the key must not travel in clear."""
    urls = json.loads(value) if isinstance(value, str) and value.startswith("[") else value
    urls = [u for u in urls.split(",") if u] if isinstance(urls, str) else list(urls)
    for url in urls:
        check_override(BY_KEY["baseUrl"], url)
        if keyed and not url.lower().startswith("https://"):
            raise ValueError(f"context openaiBaseUrls lists {url!r}, plain http, but openaiApiKeySecretArn sends "
                             "an API key: list only https base URLs")
    return tuple(url.rstrip("/") for url in urls)


def _flag(value) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("1", "true", "yes")


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

    return ExistingDatabase(secret_arn, get("existingVpcId"), split("existingSubnetIds"),
                            split("existingAvailabilityZones"), get("existingSecurityGroupId"))


_RETENTION = {1: "ONE_DAY", 3: "THREE_DAYS", 5: "FIVE_DAYS", 7: "ONE_WEEK", 14: "TWO_WEEKS", 30: "ONE_MONTH",
              60: "TWO_MONTHS", 90: "THREE_MONTHS", 180: "SIX_MONTHS", 365: "ONE_YEAR", 731: "TWO_YEARS",
              1827: "FIVE_YEARS", 3653: "TEN_YEARS"}


def log_retention(days: int) -> logs.RetentionDays:
    """CloudWatch accepts only some retention periods: the nearest one at or above ``days``."""
    allowed = next((d for d in sorted(_RETENTION) if d >= days), max(_RETENTION))
    return getattr(logs.RetentionDays, _RETENTION[allowed])
