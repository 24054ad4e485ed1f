"""The handlers publish the metrics the dashboard reads, as CloudWatch embedded metric format."""

import json

from oriole.handlers import finalize, observability
from oriole.lifecycle.task_io import Finalized


class Context:
    function_name = "oriole-FinalizeSuccess"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:oriole-FinalizeSuccess"
    aws_request_id = "req-1"
    memory_limit_in_mb = 512


def test_a_closing_finalizer_counts_the_outcome_in_the_oriole_namespace(monkeypatch, capsys):
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.setattr(
        finalize.experiments,
        "finalize",
        lambda event, store, status: Finalized(experiment_id=7, status=status, closed=True, failure_reason=None),
    )
    monkeypatch.setattr(finalize, "shared_store", lambda context: None)
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


def emitted_metrics(capsys) -> dict:
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
    return {k: v for r in records for k, v in r.items() if k not in ("_aws", "service")}


def test_only_a_failure_by_error_counts_for_the_failure_alarm(monkeypatch, capsys):
    """A stalled agent is an outcome of the research, not trouble: it counts as failed but not as failed by
    error, which is what the alarm watches."""
    monkeypatch.delenv("POWERTOOLS_METRICS_DISABLED", raising=False)
    monkeypatch.setattr(finalize, "shared_store", lambda context: None)
    reasons = iter(["agent_stalled: 3 turns in a row without a valid action", "ModelRequestRejected: no access"])
    monkeypatch.setattr(
        finalize.experiments,
        "finalize",
        lambda event, store, status: Finalized(
            experiment_id=7, status=status, closed=True, failure_reason=next(reasons)
        ),
    )
    finalize.failure({"experimentId": 7}, Context())
    stalled = emitted_metrics(capsys)
    finalize.failure({"experimentId": 7}, Context())
    broken = emitted_metrics(capsys)
    assert stalled.get("ExperimentsFailed") == [1.0] and "ExperimentsFailedByError" not in stalled
    assert broken.get("ExperimentsFailedByError") == [1.0]
