"""Every log group expires. The constructs' own functions log to groups of their own with a retention; a function
that CDK makes without one (the providers of triggers and of other custom resources, which log to the group Lambda
creates on the first invocation, ``/aws/lambda/<name>``) gets that group's retention set by a ``LogRetention``
resource, which creates the group or changes the one that exists (a later deploy of an older stack included).
CDK's log-retention function sets its own group's retention itself."""

from __future__ import annotations

from aws_cdk import CfnResource, Fn, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.settings import log_retention

FUNCTION = "AWS::Lambda::Function"
LOG_RETENTION_FUNCTION = "LogRetentionaae0aa3c5b4d4f87b02d85b201efdd8a"  # CDK's singleton, in every stack that uses it


def expire_log_groups(stack: Stack, days: int) -> None:
    """Call once the stack holds every function: each one without a log group of its own gets a retention."""
    for resource in [c for c in stack.node.find_all() if isinstance(c, CfnResource)]:
        if resource.cfn_resource_type == FUNCTION and not _logs_elsewhere(resource):
            scope = resource.node.scope
            logs.LogRetention(
                scope if isinstance(scope, Construct) else stack,
                f"{resource.node.id}LogRetention",
                log_group_name=Fn.join("", ["/aws/lambda/", resource.ref]),
                retention=log_retention(days),
            )


def _logs_elsewhere(resource: CfnResource) -> bool:
    """A function given a log group of its own (``LoggingConfig``), or CDK's log-retention function."""
    if isinstance(resource, lambda_.CfnFunction):
        config = resource.logging_config
        return isinstance(config, lambda_.CfnFunction.LoggingConfigProperty) and config.log_group is not None
    return LOG_RETENTION_FUNCTION in resource.node.path
