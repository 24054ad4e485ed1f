"""Closing experiments left open by an execution that ended: what the status-change finalizer would have
done had its event arrived.

EventBridge delivers each execution's end to the finalizer asynchronously; an event that Lambda could not
deliver after its retries lands in a dead-letter queue. The scheduled reconciler (and ``oriole doctor
--aws``) therefore looks at every open experiment itself: one whose latest execution is no longer RUNNING
(or no longer exists) is handed to the same ``close_after_execution`` as the event would have been.

The scheduled reconciler asks Step Functions first (``worth_a_look``) and reads the database only while an
execution runs or ended within ``LOOKBACK`` (EventBridge retries a status change for up to 6 hours before its dead
letters): an idle deployment's paused database stays paused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from oriole.inputs import ExecutionStatusChange
from oriole.lifecycle import experiments
from oriole.statuses import ExecutionStatus
from oriole.store import Store
from oriole.store.experiments import OpenExperiment
from oriole.text import JsonObject

# How long after the last execution ended the reconciler keeps looking: EventBridge's 6 hours of retries of its
# status change, and one more hour of the reconciler's own runs.
LOOKBACK = timedelta(hours=7)
DETAIL_KEYS = ("executionArn", "stateMachineArn", "name", "status", "input", "output", "error", "cause")
Describe = Callable[[str], JsonObject | None]  # DescribeExecution, None when the execution does not exist


def status_change_detail(execution: Mapping[str, Any]) -> JsonObject:
    """The status-change event's detail from a DescribeExecution answer: how the local runner, the
    reconciler and ``oriole doctor --aws`` report an execution's end that EventBridge did not deliver."""
    detail = {k: execution[k] for k in DETAIL_KEYS if k in execution}
    detail.update({k: int(execution[k].timestamp() * 1000) for k in ("startDate", "stopDate") if k in execution})
    return detail


def worth_a_look(executions: Iterable[Mapping[str, Any]], now: datetime, timeout: timedelta) -> bool:
    """Whether an execution of the state machine runs or ended within ``LOOKBACK`` of ``now``, from its executions
    newest first (ListExecutions' order); it reads no further than one that started before any such could have
    (``LOOKBACK`` and the execution ``timeout`` ago), so an idle state machine costs one page."""
    horizon = now - LOOKBACK
    for execution in executions:
        if execution["status"] == "RUNNING" or execution.get("stopDate", now) >= horizon:
            return True
        if execution["startDate"] < horizon - timeout:
            return False
    return False


def gone(execution_arn: str) -> JsonObject:
    """The detail of an execution Step Functions does not know (any more): it ran nothing, so it was stopped."""
    return {
        "executionArn": execution_arn,
        "name": execution_arn.rsplit(":", 1)[-1],
        "status": "ABORTED",
        "cause": "Step Functions has no such execution (any more)",
    }


def ended(store: Store, describe: Describe, belongs: Callable[[str], bool]) -> list[tuple[OpenExperiment, JsonObject]]:
    """Open experiments whose latest execution (one that ``belongs`` here) is no longer RUNNING, each with
    the status-change detail that closes it."""
    found: list[tuple[OpenExperiment, JsonObject]] = []
    for row in store.open_experiments():
        if not belongs(row.last_execution):
            continue
        execution = describe(row.last_execution)
        if execution is None:
            found.append((row, gone(row.last_execution)))
        elif execution["status"] != ExecutionStatus.RUNNING:
            found.append((row, status_change_detail(execution)))
    return found


def close(store: Store, detail: JsonObject, execution_status: Callable[[str], str | None]) -> JsonObject:
    """Close one experiment as the status-change finalizer does (a successor that carries it on leaves it open)."""
    return experiments.close_after_execution(ExecutionStatusChange.model_validate(detail), store, execution_status)


def close_ended(store: Store, describe: Describe, belongs: Callable[[str], bool]) -> list[JsonObject]:
    """Close every open experiment whose execution ended; what was found and what became of it (``startDate``:
    when its execution started, in milliseconds as the status-change event gives it; None for one Step Functions
    no longer knows)."""

    def status(arn: str) -> str | None:
        execution = describe(arn)
        return None if execution is None else execution["status"]

    return [
        {
            "experimentId": row.experiment_id,
            "lastExecution": row.last_execution,
            "executionStatus": detail["status"],
            "startDate": detail.get("startDate"),
            **_outcome(close(store, detail, status)),
        }
        for row, detail in ended(store, describe, belongs)
    ]


def _outcome(result: JsonObject) -> JsonObject:
    return {
        "closed": result["closed"],
        "failureReason": result["failureReason"],
        "experimentStatus": result["experimentStatus"],
    }
