"""Alarms on real trouble only, a dashboard of what the experiments do, and an optional monthly AWS Budget.

What pages (each alarm goes to the SNS topic, and to ``alarmEmail``): an execution that hit Step Functions' hard
timeout (the graceful limits should always win), an experiment that failed for any reason but a stalled agent
(``ExperimentsFailedByError``), a sweep execution that failed, Lambda throttles (the concurrency quota is too
small), a status change the finalizer could not process (its dead letters), the NAT (a failing NAT instance, a NAT
gateway out of ports), and the database's own (``Database.alarms``: connections, CPU credits, storage and the
proxy's connections to it; the serverless database running at its most capacity). What does not: an agent that
stalls, a limit reached, a throttle or a full database that the retries absorbed; the dashboard shows those. No
alarm reads the database: a paused one stays paused, and no data is never trouble.

Custom metrics come from the handlers through Powertools Metrics (namespace ``Oriole``, dimension
``service=oriole``): ExperimentsStarted/Succeeded/TimedOut/Failed/FailedByError/ClosedByStatusChange/
ClosedByReconciler, Turns, Actions, InputTokens, OutputTokens.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_budgets as budgets
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.alarms import ABOVE, PERIOD, AlarmSpec
from infra.settings import Settings

NAMESPACE = "Oriole"
MAX_ALARM_METRICS = 10  # CloudWatch: the metric math of one alarm holds at most 10 metrics


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
        sweeps: sfn.StateMachine,
        functions: list[lambda_.Function],
        dead_letters: sqs.IQueue,
        alarms: list[AlarmSpec],
        settings: Settings,
    ):
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Alarms", display_name="Oriole alarms", enforce_ssl=True)
        if settings.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarm_email))
        specs = [
            AlarmSpec(
                "ExecutionsTimedOut",
                state_machine.metric_timed_out(period=PERIOD),
                1,
                ABOVE,
                "An execution hit Step Functions' execution timeout instead of ending by its limits",
            ),
            AlarmSpec(
                "ExperimentsFailedByError",
                oriole_metric("ExperimentsFailedByError"),
                1,
                ABOVE,
                "An experiment failed after the retries (not a stalled agent): look up its failure_reason",
            ),
            AlarmSpec(
                "SweepsFailed",
                sweeps.metric_failed(period=PERIOD),
                1,
                ABOVE,
                "A sweep execution failed: its failed state in the Step Functions console says why",
            ),
            *self._throttles(functions, itemized=settings.profile.itemized_alarms),
            AlarmSpec(
                "FinalizerDeadLetters",
                dead_letters.metric_approximate_number_of_messages_visible(period=PERIOD, statistic="Maximum"),
                1,
                ABOVE,
                "A status change was not processed; the reconciler closes its experiment within 15 minutes",
            ),
            *alarms,
        ]
        self.alarms = [self._alarm(spec) for spec in specs]
        for alarm in self.alarms:
            alarm.add_alarm_action(actions.SnsAction(self.topic))
        if settings.dashboard:
            self._dashboard(state_machine, functions, self.alarms)
        if settings.monthly_budget_usd is not None and settings.alarm_email:
            self._budget(settings.monthly_budget_usd, settings.alarm_email)

    @staticmethod
    def _throttles(functions: list[lambda_.Function], *, itemized: bool) -> list[AlarmSpec]:
        """Lambda throttling a function past the flows' retries: of each function (in sums of at most
        ``MAX_ALARM_METRICS``), or, in the lean profile, of the region's functions as one metric (one alarm metric
        instead of two dozen)."""
        description = "Lambda throttled a function: raise the account's concurrency quota"
        if not itemized:
            region = cloudwatch.Metric(namespace="AWS/Lambda", metric_name="Throttles", statistic="Sum", period=PERIOD)
            return [AlarmSpec("LambdaThrottles", region, 1, ABOVE, description + " (any function of the region)")]
        return [
            AlarmSpec(
                "LambdaThrottles" + (f"{start // MAX_ALARM_METRICS + 1}" if start else ""),
                _sum(
                    "Lambda throttles",
                    [f.metric_throttles(period=PERIOD) for f in functions[start : start + MAX_ALARM_METRICS]],
                ),
                1,
                ABOVE,
                description,
            )
            for start in range(0, len(functions), MAX_ALARM_METRICS)
        ]

    def _budget(self, amount: float, email: str) -> None:
        """An AWS Budget on the account's cost each month, mailed to the alarm address when the month's actual cost
        passes 80% of it and when its forecast passes the whole (budgets are the account's: it counts everything
        the account spends, Bedrock included)."""
        subscribers = [budgets.CfnBudget.SubscriberProperty(subscription_type="EMAIL", address=email)]
        budgets.CfnBudget(
            self,
            "MonthlyBudget",
            budget=budgets.CfnBudget.BudgetDataProperty(
                budget_name=f"{Stack.of(self).stack_name}-monthly",
                budget_type="COST",
                time_unit="MONTHLY",
                budget_limit=budgets.CfnBudget.SpendProperty(amount=amount, unit="USD"),
            ),
            notifications_with_subscribers=[
                budgets.CfnBudget.NotificationWithSubscribersProperty(
                    notification=budgets.CfnBudget.NotificationProperty(
                        notification_type=kind, comparison_operator="GREATER_THAN", threshold=percent
                    ),
                    subscribers=subscribers,
                )
                for kind, percent in (("ACTUAL", 80), ("FORECASTED", 100))
            ],
        )

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

    def _alarm(self, spec: AlarmSpec) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(
            self,
            spec.name,
            metric=spec.metric,
            threshold=spec.threshold,
            evaluation_periods=1,
            comparison_operator=spec.comparison,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=spec.description,
        )
