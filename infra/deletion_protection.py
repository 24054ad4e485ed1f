"""Deletion protection, switched on last: a custom resource that depends on every other resource of the data stack
sets the database's ``DeletionProtection`` once everything else exists, so that a first create that fails on the
way rolls back to nothing (an unprotected database is deleted, after its final snapshot, instead of stopping the
rollback in ``ROLLBACK_FAILED``). The template never names ``DeletionProtection`` on the database, so no later
update turns it off again; the custom resource sets it again whenever ``deletionProtection`` changes.

Its handler (``deletion_protection_handler.py``, inline) waits for the database to be available and retries while
RDS calls it busy (its first backup runs right after it was created): one un-retried call would fail the first
deploy, and that rollback would delete a healthy database.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import CustomResource, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import custom_resources as cr
from constructs import Construct

from infra.bundling import ARCHITECTURE, RUNTIME
from infra.settings import log_retention

HANDLER = Path(__file__).with_name("deletion_protection_handler.py")
TIMEOUT = Duration.minutes(15)  # Lambda's longest: the handler waits for a busy database up to this


@dataclass(frozen=True)
class ProtectedDatabase:
    """What is protected: an RDS ``instance`` or an Aurora ``cluster``, by its identifier and ARN."""

    kind: str
    identifier: str
    arn: str

    @property
    def actions(self) -> list[str]:
        noun = "DBCluster" if self.kind == "cluster" else "DBInstance"
        return [f"rds:Describe{noun}s", f"rds:Modify{noun}"]


class DeletionProtection(Construct):
    """Call last, in the stack, on the stack: it depends on every resource the stack holds so far."""

    def __init__(
        self, stack: Stack, construct_id: str, *, database: ProtectedDatabase, enabled: bool, log_retention_days: int
    ):
        everything_else = list(stack.node.children)
        super().__init__(stack, construct_id)
        retention = log_retention(log_retention_days)
        handler = lambda_.Function(
            self,
            "Handler",
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler="index.handler",
            code=lambda_.Code.from_inline(HANDLER.read_text()),
            timeout=TIMEOUT,
            description="Oriole: the database's deletion protection, once it is available",
            log_group=logs.LogGroup(self, "Logs", retention=retention, removal_policy=RemovalPolicy.DESTROY),
        )
        handler.add_to_role_policy(iam.PolicyStatement(actions=database.actions, resources=[database.arn]))
        provider = cr.Provider(
            self,
            "Provider",
            on_event_handler=handler,
            log_group=logs.LogGroup(self, "ProviderLogs", retention=retention, removal_policy=RemovalPolicy.DESTROY),
        )
        resource = CustomResource(
            self,
            "Resource",
            service_token=provider.service_token,
            resource_type="Custom::DeletionProtection",
            properties={"Kind": database.kind, "Identifier": database.identifier, "DeletionProtection": enabled},
        )
        resource.node.add_dependency(*everything_else)
