"""The stacks' own custom resources: a small handler of this folder, shipped inline (boto3 only, under CloudFormation's
4 KB of inline code), behind CDK's provider framework, each function's logs kept like every other's."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.bundling import ARCHITECTURE, RUNTIME
from infra.settings import log_retention


def inline_provider(
    scope: Construct,
    *,
    handler: Path,
    description: str,
    statements: list[iam.PolicyStatement],
    log_retention_days: int,
    timeout_minutes: int = 1,
) -> cr.Provider:
    """A provider (in ``scope``) whose function runs ``handler``'s ``handler`` with ``statements`` as its rights."""
    retention = log_retention(log_retention_days)
    function = lambda_.Function(
        scope,
        "Handler",
        runtime=RUNTIME,
        architecture=ARCHITECTURE,
        handler="index.handler",
        code=lambda_.Code.from_inline(handler.read_text()),
        timeout=Duration.minutes(timeout_minutes),
        description=description,
        log_group=logs.LogGroup(scope, "Logs", retention=retention, removal_policy=RemovalPolicy.DESTROY),
    )
    for statement in statements:
        function.add_to_role_policy(statement)
    return cr.Provider(
        scope,
        "Provider",
        on_event_handler=function,
        log_group=logs.LogGroup(scope, "ProviderLogs", retention=retention, removal_policy=RemovalPolicy.DESTROY),
    )
