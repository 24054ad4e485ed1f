"""The handlers publish the metrics the dashboard reads, as CloudWatch embedded metric format."""

import json

from oriole.handlers import finalize, observability


class Context:
    function_name = "oriole-FinalizeSuccess"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:oriole-FinalizeSuccess"
    aws_request_id = "req-1"
    memory_limit_in_mb = 512


def test_a_closing_finalizer_counts_the_outcome_in_the_oriole_namespace(monkeypatch, capsys):
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.setattr(finalize.experiments, "finalize",
                        lambda event, store, status: {"experimentId": 7, "status": status, "closed": True})
    monkeypatch.setattr(finalize, "shared_store", lambda: None)
    finalize.success({"experimentId": 7}, Context())
    emitted = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    [record] = emitted
    directive = record["_aws"]["CloudWatchMetrics"][0]
    assert directive["Namespace"] == "Oriole" and ["service"] in directive["Dimensions"]
    assert record["ExperimentsSucceeded"] == [1.0]
    assert record["service"] == "oriole"
    assert observability.metrics.namespace == "Oriole"


def test_nothing_is_counted_when_metrics_are_disabled(monkeypatch, capsys):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    observability.count("Turns")
    assert not observability.metrics.metric_set
