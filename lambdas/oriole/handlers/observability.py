"""The handlers' Powertools Logger and Metrics, configured once.

Metrics go to CloudWatch as embedded metric format in the logs (namespace ``Oriole``, dimension
``service=oriole``); the dashboard and alarms of the monitoring construct read them. The local runner
disables them (``POWERTOOLS_METRICS_DISABLED``) so nothing but results reaches the terminal.
"""

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service="oriole")
metrics = Metrics(namespace="Oriole", service="oriole")


def count(name: str, value: float = 1) -> None:
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
