"""Alarms on real trouble only, and a dashboard of what the experiments do.

What pages (each alarm goes to the SNS topic): an execution that hit Step Functions' hard timeout (the
graceful limits should always win), an experiment that failed for any reason but a stalled agent
(``ExperimentsFailedByError``), Lambda throttles (the concurrency quota is too small), a status change the
finalizer could not process (its dead letters), and the database running out of connections, CPU credits
or storage. What does not: an agent that stalls, a limit reached, a throttle or a full database that the
retries absorbed; the dashboard shows those.

Custom metrics come from the handlers through Powertools Metrics (namespace ``Oriole``, dimension
``service=oriole``): ExperimentsStarted/Succeeded/TimedOut/Failed/FailedByError/ClosedByStatusChange/
ClosedByReconciler, Turns, Actions, InputTokens, OutputTokens.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_rds as rds
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.database import MAX_CONNECTIONS_ESTIMATE, PROXY_CONNECTIONS_PERCENT

NAMESPACE = "Oriole"
PERIOD = Duration.minutes(5)
MAX_ALARM_METRICS = 10  # CloudWatch: the metric math of one alarm holds at most 10 metrics
CPU_CREDITS_LOW = 20
FREE_STORAGE_LOW_BYTES = 2 * 1024**3
ABOVE = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
BELOW = cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD


def oriole_metric(name: str, statistic: str = "Sum") -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=NAMESPACE, metric_name=name, dimensions_map={"service": "oriole"}, statistic=statistic, period=PERIOD
    )


def _sum(label: str, metrics: list[cloudwatch.IMetric]) -> cloudwatch.MathExpression:
    return cloudwatch.MathExpression(
        expression="+".join(f"m{i}" for i in range(len(metrics))),
        using_metrics={f"m{i}": m for i, m in enumerate(metrics)},
        label=label,
        period=PERIOD,
    )


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        state_machine: sfn.StateMachine,
        functions: list[lambda_.Function],
        dead_letters: sqs.IQueue,
        database: rds.DatabaseInstance | None,
        alarm_email: str | None,
    ):
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Alarms", display_name="Oriole alarms", enforce_ssl=True)
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        alarms = [
            self._alarm(
                "ExecutionsTimedOut",
                state_machine.metric_timed_out(period=PERIOD),
                1,
                ABOVE,
                "An execution hit Step Functions' execution timeout instead of ending by its limits",
            ),
            self._alarm(
                "ExperimentsFailedByError",
                oriole_metric("ExperimentsFailedByError"),
                1,
                ABOVE,
                "An experiment failed after the retries (not a stalled agent): look up its failure_reason",
            ),
            *(
                self._alarm(
                    "LambdaThrottles" + (f"{start // MAX_ALARM_METRICS + 1}" if start else ""),
                    _sum(
                        "Lambda throttles",
                        [f.metric_throttles(period=PERIOD) for f in functions[start : start + MAX_ALARM_METRICS]],
                    ),
                    1,
                    ABOVE,
                    "Lambda throttled a function: raise the account's concurrency quota",
                )
                for start in range(0, len(functions), MAX_ALARM_METRICS)
            ),
            self._alarm(
                "FinalizerDeadLetters",
                dead_letters.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                1,
                ABOVE,
                "A status change was not processed; the reconciler closes its experiment within 15 minutes",
            ),
        ]
        if database is not None:
            alarms += self._database_alarms(database)
        for alarm in alarms:
            alarm.add_alarm_action(actions.SnsAction(self.topic))
        self._dashboard(state_machine, functions, alarms)

    def _database_alarms(self, database: rds.DatabaseInstance) -> list[cloudwatch.Alarm]:
        budget = MAX_CONNECTIONS_ESTIMATE * PROXY_CONNECTIONS_PERCENT // 100
        return [
            self._alarm(
                "DatabaseConnections",
                database.metric_database_connections(period=PERIOD, statistic="Maximum"),
                budget,
                ABOVE,
                f"The database holds {budget} connections or more: the proxy's whole share",
            ),
            self._alarm(
                "DatabaseCpuCredits",
                database.metric("CPUCreditBalance", period=PERIOD, statistic="Minimum"),
                CPU_CREDITS_LOW,
                BELOW,
                "The burstable database is running out of CPU credits",
            ),
            self._alarm(
                "DatabaseFreeStorage",
                database.metric_free_storage_space(period=PERIOD, statistic="Minimum"),
                FREE_STORAGE_LOW_BYTES,
                BELOW,
                "The database has less than 2 GiB of storage left",
            ),
        ]

    def _dashboard(
        self, state_machine: sfn.StateMachine, functions: list[lambda_.Function], alarms: list[cloudwatch.Alarm]
    ) -> None:
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=None)
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Experiments",
                width=12,
                left=[
                    oriole_metric(name)
                    for name in (
                        "ExperimentsStarted",
                        "ExperimentsSucceeded",
                        "ExperimentsTimedOut",
                        "ExperimentsFailed",
                        "ExperimentsFailedByError",
                        "ExperimentsClosedByStatusChange",
                        "ExperimentsClosedByReconciler",
                    )
                ],
            ),
            cloudwatch.GraphWidget(
                title="Turns and actions", width=12, left=[oriole_metric("Turns"), oriole_metric("Actions")]
            ),
            cloudwatch.GraphWidget(
                title="Tokens", width=12, left=[oriole_metric("InputTokens"), oriole_metric("OutputTokens")]
            ),
            cloudwatch.GraphWidget(
                title="Executions and Lambda errors (retried ones included)",
                width=12,
                left=[
                    state_machine.metric_failed(period=PERIOD),
                    _sum("Lambda errors", [f.metric_errors(period=PERIOD) for f in functions]),
                ],
            ),
            cloudwatch.AlarmStatusWidget(title="Alarms", width=24, alarms=alarms),
        )

    def _alarm(
        self,
        name: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        comparison: cloudwatch.ComparisonOperator,
        description: str,
    ) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self,
            name,
            metric=metric,
            threshold=threshold,
            evaluation_periods=1,
            comparison_operator=comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
