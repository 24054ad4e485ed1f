"""Alarms on what needs a researcher's attention and a dashboard of what the experiments do.

Custom metrics come from the handlers through Powertools Metrics (namespace ``Oriole``, dimension
``service=oriole``): ExperimentsStarted/Succeeded/TimedOut/Failed/ClosedByStatusChange, Turns, Actions,
InputTokens, OutputTokens.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

NAMESPACE = "Oriole"
MAX_ALARM_METRICS = 10  # CloudWatch: the metric math of one alarm holds at most 10 metrics


def oriole_metric(name: str, statistic: str = "Sum") -> cloudwatch.Metric:
    return cloudwatch.Metric(namespace=NAMESPACE, metric_name=name, dimensions_map={"service": "oriole"},
                             statistic=statistic, period=Duration.minutes(5))


def _errors(functions: list[lambda_.Function]) -> cloudwatch.MathExpression:
    """The functions' Lambda errors, summed (an alarm's math may use at most ``MAX_ALARM_METRICS`` metrics)."""
    return cloudwatch.MathExpression(expression="+".join(f"e{i}" for i in range(len(functions))),
                                     using_metrics={f"e{i}": fn.metric_errors(period=Duration.minutes(5))
                                                    for i, fn in enumerate(functions)},
                                     label="Lambda errors", period=Duration.minutes(5))


class Monitoring(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, state_machine: sfn.StateMachine,
                 functions: list[lambda_.Function], alarm_email: str | None):
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Alarms", display_name="Oriole alarms", enforce_ssl=True)
        if alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(alarm_email))
        notify = actions.SnsAction(self.topic)
        alarms = [
            self._alarm("ExecutionsFailed", state_machine.metric_failed(period=Duration.minutes(5)),
                        "An experiment execution failed: look up its failure_reason"),
            self._alarm("ExecutionsTimedOut", state_machine.metric_timed_out(period=Duration.minutes(5)),
                        "An execution hit max-execution-seconds"),
            *(self._alarm("FunctionErrors" + (f"{start // MAX_ALARM_METRICS + 1}" if start else ""),
                          _errors(functions[start:start + MAX_ALARM_METRICS]),
                          "A Lambda function raised an error (the state machine may have retried it)")
              for start in range(0, len(functions), MAX_ALARM_METRICS)),
        ]
        for alarm in alarms:
            alarm.add_alarm_action(notify)
        dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=None)
        dashboard.add_widgets(
            cloudwatch.GraphWidget(title="Experiments", width=12, left=[
                oriole_metric(name) for name in
                ("ExperimentsStarted", "ExperimentsSucceeded", "ExperimentsTimedOut", "ExperimentsFailed",
                 "ExperimentsClosedByStatusChange")]),
            cloudwatch.GraphWidget(title="Turns and actions", width=12,
                                   left=[oriole_metric("Turns"), oriole_metric("Actions")]),
            cloudwatch.GraphWidget(title="Tokens", width=12,
                                   left=[oriole_metric("InputTokens"), oriole_metric("OutputTokens")]),
            cloudwatch.AlarmStatusWidget(title="Alarms", width=12, alarms=alarms),
        )

    def _alarm(self, name: str, metric: cloudwatch.IMetric, description: str) -> cloudwatch.Alarm:
        return cloudwatch.Alarm(self, name, metric=metric, threshold=1, evaluation_periods=1,
                                comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
                                treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
                                alarm_description=description)
