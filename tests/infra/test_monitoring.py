"""Alarms on real trouble only (for each profile), the dashboard, the outputs, and the optional monthly budget."""

from __future__ import annotations

import json

import pytest

from oriole.handlers import FUNCTIONS, OUTSIDE_FLOWS
from tests.infra.conftest import synthesize
from tests.infra.templates import alarm_metric_count, alarm_metrics, resources


def test_alarms_watch_real_trouble_only(templates):
    """Throttles, the finalizer's dead letters, the database's connections, CPU credits and storage, the proxy's
    connections to it, the NAT gateway's ports, the hard timeout, failed sweeps and failures by error page; an
    expected outcome (a stalled agent, a retried throttle or Lambda error) does not: no alarm on all failed
    experiment executions or all Lambda errors."""
    _, orchestrator = templates
    watched = alarm_metrics(orchestrator)
    assert watched == {
        "ExecutionsTimedOut",
        "ExperimentsFailedByError",
        "ExecutionsFailed",  # of the sweep state machine
        "Throttles",
        "ApproximateNumberOfMessagesVisible",
        "DatabaseConnections",
        "CPUCreditBalance",
        "FreeStorageSpace",
        "DatabaseConnectionsSetupFailed",
        "ErrorPortAllocation",
    }
    assert "Errors" not in watched
    alarms = [a["Properties"] for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()]
    [failed] = [a for a in alarms if a.get("MetricName") == "ExecutionsFailed"]
    assert "SweepsStateMachine" in json.dumps(
        failed["Dimensions"]
    )  # never the experiment flow's: a stalled agent fails it
    [connections] = [a for a in alarms if a.get("MetricName") == "DatabaseConnections"]
    assert connections["Threshold"] < 180  # below what a db.t4g.small accepts
    [proxy] = [a for a in alarms if a.get("MetricName") == "DatabaseConnectionsSetupFailed"]
    [dimension] = proxy["Dimensions"]
    assert dimension["Name"] == "ProxyName" and "DatabaseInstanceProxy" in json.dumps(dimension["Value"])
    assert all(a["TreatMissingData"] == "notBreaching" for a in alarms)  # an idle stack reports nothing


def test_the_lean_profile_alarms_in_few_metrics_and_never_on_the_database_s_absence(lean_templates):
    """Seven alarm metrics ($0.70 a month): throttles as the region's one metric, the NAT instance's status checks,
    the serverless database at its most capacity; no dashboard. A paused database reports nothing, which is never
    trouble."""
    _, orchestrator = lean_templates
    assert alarm_metrics(orchestrator) == {
        "ExecutionsTimedOut",
        "ExperimentsFailedByError",
        "ExecutionsFailed",
        "Throttles",
        "ApproximateNumberOfMessagesVisible",
        "StatusCheckFailed",
        "ACUUtilization",
    }
    assert alarm_metric_count(orchestrator) == 7
    alarms = [a["Properties"] for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()]
    [throttles] = [a for a in alarms if a.get("MetricName") == "Throttles"]
    assert throttles["Namespace"] == "AWS/Lambda" and "Dimensions" not in throttles
    assert all(a["TreatMissingData"] == "notBreaching" for a in alarms)
    assert not resources(orchestrator, "AWS::CloudWatch::Dashboard")


def test_alarms_dashboard_and_outputs(templates):
    data, orchestrator = templates
    assert resources(orchestrator, "AWS::CloudWatch::Dashboard")
    throttles = [
        a["Properties"]["Metrics"]
        for a in resources(orchestrator, "AWS::CloudWatch::Alarm").values()
        if "Throttles" in json.dumps(a["Properties"].get("Metrics", []))
    ]
    watched = [
        json.dumps(m["MetricStat"]["Metric"]["Dimensions"]) for group in throttles for m in group if "MetricStat" in m
    ]
    assert all(len(group) <= 11 for group in throttles)  # at most 10 metrics and their sum, as CloudWatch allows
    assert len(watched) == len(set(watched)) == len(FUNCTIONS) + 1  # every function of the flow, the finalizer
    outputs = orchestrator.to_json()["Outputs"]
    assert {
        "StateMachineArn",
        "StateMachineConsole",
        "ExampleExecutionInput",
        "SweepStateMachineArn",
        "ExampleSweepInput",
    } <= set(outputs)
    handlers = {
        key: function["Properties"]["Handler"]
        for key, function in resources(orchestrator, "AWS::Lambda::Function").items()
    }
    # what `oriole check --aws` invokes: the finalizer (its dead letters) and the reconciler
    for output, name in (("StatusFinalizerFunction", "ExecutionStatusFinalizer"), ("ReconcilerFunction", "Reconciler")):
        assert handlers[outputs[output]["Value"]["Ref"]] == OUTSIDE_FLOWS[name]
    example = json.loads(outputs["ExampleExecutionInput"]["Value"])
    assert example["mazeId"] == "perfect-11"
    assert {
        "DatabaseEndpoint",
        "DatabaseSecretArn",
        "ReaderSecretArn",
        "DatabaseProxyEndpoint",
        "DatabaseIdentifier",
    } <= set(data.to_json()["Outputs"])


def test_a_monthly_budget_mails_the_alarm_address():
    """``monthlyBudgetUsd``: an AWS Budget on the account's monthly cost, mailed to ``alarmEmail`` at 80% of it
    actually spent and at a forecast above it; without the address it is refused (it would mail no one)."""
    from aws_cdk.assertions import Template

    _, orchestrator = synthesize(monthlyBudgetUsd="50", alarmEmail="lab@example.org")
    [budget] = resources(Template.from_stack(orchestrator), "AWS::Budgets::Budget").values()
    props = budget["Properties"]
    assert props["Budget"]["BudgetLimit"] == {"Amount": 50, "Unit": "USD"}
    assert props["Budget"]["TimeUnit"] == "MONTHLY" and props["Budget"]["BudgetType"] == "COST"
    notices = {
        (n["Notification"]["NotificationType"], n["Notification"]["Threshold"])
        for n in props["NotificationsWithSubscribers"]
    }
    assert notices == {("ACTUAL", 80), ("FORECASTED", 100)}
    assert all(
        n["Subscribers"] == [{"Address": "lab@example.org", "SubscriptionType": "EMAIL"}]
        for n in props["NotificationsWithSubscribers"]
    )
    with pytest.raises(ValueError, match="monthlyBudgetUsd mails its alerts to alarmEmail"):
        synthesize(monthlyBudgetUsd="50")
    _, plain = synthesize()
    assert not resources(Template.from_stack(plain), "AWS::Budgets::Budget")
