"""What an alarm watches, as the construct that owns the resource states it (the database, the NAT, the flows), for
``infra.monitoring`` to make into CloudWatch alarms on one topic."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

PERIOD = Duration.minutes(5)
ABOVE = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
BELOW = cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD


@dataclass(frozen=True)
class AlarmSpec:
    """One alarm: ``metric`` compared with ``threshold`` over one period; no data is never trouble (a paused
    database, an idle NAT and a quiet flow report nothing)."""

    name: str
    metric: cloudwatch.IMetric
    threshold: float
    comparison: cloudwatch.ComparisonOperator
    description: str
