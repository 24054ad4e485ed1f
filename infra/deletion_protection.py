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

from aws_cdk import CustomResource, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from infra.custom_resources import inline_provider

HANDLER = Path(__file__).with_name("deletion_protection_handler.py")
TIMEOUT_MINUTES = 15  # Lambda's longest: the handler waits for a busy database up to this


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
        provider = inline_provider(
            self,
            handler=HANDLER,
            description="Oriole: the database's deletion protection, once it is available",
            statements=[iam.PolicyStatement(actions=database.actions, resources=[database.arn])],
            log_retention_days=log_retention_days,
            timeout_minutes=TIMEOUT_MINUTES,
        )
        resource = CustomResource(
            self,
            "Resource",
            service_token=provider.service_token,
            resource_type="Custom::DeletionProtection",
            properties={"Kind": database.kind, "Identifier": database.identifier, "DeletionProtection": enabled},
        )
        resource.node.add_dependency(*everything_else)
