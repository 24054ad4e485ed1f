"""The handlers' Powertools Logger and Metrics, configured once.

Metrics go to CloudWatch as embedded metric format in the logs (namespace ``Oriole``, dimension
``service=oriole``); the dashboard and alarms of the monitoring construct read them. The local runner
disables them (``POWERTOOLS_METRICS_DISABLED``) so nothing but results reaches the terminal.
"""

import warnings

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from oriole.core.endings import ending_category
from oriole.statuses import Ending, ExperimentStatus

logger = Logger(service="oriole")
metrics = Metrics(namespace="Oriole", service="oriole")
# A task with nothing to count (a finalizer that found the experiment closed) is normal, not a mistake.
warnings.filterwarnings("ignore", message="No application metrics to publish")


def count(name: str, value: float = 1) -> None:
    """Add a count to this invocation's metrics; nothing at all when metrics are disabled (locally), where
    Powertools would otherwise keep them in memory forever without publishing them."""
    if not is_metrics_disabled():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def count_failure(status: ExperimentStatus, reason: str | None) -> None:
    """An experiment closed as failed with an error ending (a provider or the infrastructure broke) is trouble:
    ``ExperimentsFailedByError`` is what the failure alarm watches. An agent that stalled or gave up is an
    expected outcome of research, and a censored run (throttled past its retries) is a limit, not a breakage."""
    if status == ExperimentStatus.FAILED and ending_category(status, reason) == Ending.ERROR:
        count("ExperimentsFailedByError")
