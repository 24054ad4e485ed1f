"""One way to start an experiment and follow it to its end, locally and on AWS.

A ``Launcher`` starts executions of a state machine (moto's in this process, or the deployed one), follows
an experiment through its continue-as-new successors by reading its row, and returns the outcome as the
database records it. ``oriole run`` and ``oriole status`` both go through it, so a run on
AWS prints exactly what a local run prints.

On AWS, EventBridge sends every execution's end to the status-change finalizer. Locally there is no
EventBridge: the launcher is given ``report_status_change`` and sends the end of an execution that left
its experiment open to the same finalizer itself.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from oriole.lifecycle.experiments import failure_reason
from oriole.lifecycle.task_io import CaughtError
from oriole.statuses import TERMINAL_EXECUTION_STATUSES, ExecutionStatus
from oriole_workstation.results import Results
from oriole_workstation.rows import ExperimentSummary

RESULT_KEYS = (
    "experiment_id",
    "status",
    "ending",
    "goal_found",
    "actions",
    "turns",
    "moves",
    "failed_moves",
    "shortest_path_length",
    "optimal_path_length",
    "path_length",
    "path_efficiency",
    "failure_reason",
    "maze",
    "llm_provider",
    "model_name",
    "goal_first_seen_step",
    "goal_reached_step",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "failed_attempts",
    "failed_tokens",
    "failed_cost_usd",
    "duration_seconds",
    "execution_arns",
)


def current_execution(sfn, execution_arn: str) -> dict:
    """The execution that carries the experiment ``execution_arn`` started, as DescribeExecution gives it:
    followed through each successor a handed-over execution names in its output (ContinueAsNew's
    ``continuation``), so an experiment is followed by Step Functions alone, without its database."""
    while True:
        execution = sfn.describe_execution(executionArn=execution_arn)
        output = json.loads(execution.get("output") or "null")
        successor = (
            (output.get("continuation") or {}).get("successorExecutionArn") if isinstance(output, dict) else None
        )
        if execution["status"] != ExecutionStatus.SUCCEEDED or not successor:
            return execution
        execution_arn = successor


def execution_name(prefix: str = "oriole") -> str:
    """A unique execution name (Step Functions allows 80 characters)."""
    return f"{prefix}-{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"[:80]


@dataclass(frozen=True)
class RunResult:
    """How one experiment ended: its last execution (as DescribeExecution gives it) and its row's summary;
    ``summary`` is None when the execution was rejected before an experiment existed."""

    execution_arn: str
    execution: dict[str, Any]
    summary: ExperimentSummary | None

    def as_json(self) -> dict[str, Any]:
        """The one JSON object ``oriole run --json`` prints (scripts and sweeps read it). A rejected start's
        ``failure_reason`` is the one line a stored experiment would get (``Error: message``), never the Lambda
        error payload with its stack trace."""
        if self.summary is None:
            caught = CaughtError(Error=self.execution.get("error"), Cause=self.execution.get("cause"))
            return {
                "experiment_id": None,
                "status": "rejected",
                "ending": None,
                "goal_found": False,
                "actions": 0,
                "turns": 0,
                "shortest_path_length": None,
                "optimal_path_length": None,
                "path_length": None,
                "path_efficiency": None,
                "failure_reason": failure_reason(caught),
                "execution_arn": self.execution_arn,
            }
        summary = asdict(self.summary)
        return {k: summary[k] for k in RESULT_KEYS}


class Launcher:
    """Starts executions of one state machine and follows their experiments to the end."""

    def __init__(
        self,
        sfn,
        state_machine_arn: str,
        *,
        poll_seconds: float,
        report_status_change: Callable[[dict], object] | None = None,
        wait: Callable[[float], object] = time.sleep,
    ):
        """``wait`` sleeps between two looks at the executions (``poll_seconds``): it may return early, when it knows
        an execution ended (the local runner's does)."""
        self.sfn = sfn
        self.state_machine_arn = state_machine_arn
        self.poll_seconds = poll_seconds
        self.report_status_change = report_status_change
        self.wait = wait

    def start(self, execution_input: dict, name: str | None = None) -> str:
        return self.sfn.start_execution(
            stateMachineArn=self.state_machine_arn, name=name or execution_name(), input=json.dumps(execution_input)
        )["executionArn"]

    def describe(self, execution_arn: str) -> dict:
        return self.sfn.describe_execution(executionArn=execution_arn)

    def follow(
        self, execution_arn: str, results: Results, on_progress: Callable[[ExperimentSummary], None] | None = None
    ) -> RunResult:
        """Follow an execution and its successors until the experiment is closed and its last execution has
        ended (or the start was rejected). ``on_progress`` sees the experiment's summary at every poll and
        may raise to stop following."""
        experiment_id = None
        while True:
            if experiment_id is None:
                experiment_id = results.store.experiment_by_execution(execution_arn)
            if experiment_id is None:
                execution = self.describe(execution_arn)
                if execution["status"] in TERMINAL_EXECUTION_STATUSES:  # ended before StartExperiment made a row
                    return RunResult(execution_arn, execution, None)
            else:
                ended = self._ended(experiment_id, results, on_progress)
                if ended is not None:
                    return RunResult(execution_arn, *ended)
            self.wait(self.poll_seconds)

    def _ended(
        self, experiment_id: int, results: Results, on_progress: Callable[[ExperimentSummary], None] | None
    ) -> tuple[dict[str, Any], ExperimentSummary] | None:
        """The last execution and the summary once the experiment is over; None while it goes on.

        A SUCCEEDED execution of an open experiment has handed over to a successor: that is not an end.
        """
        summary = self._summary(experiment_id, results)
        if on_progress:
            on_progress(summary)
        last = self.describe(summary.execution_arns[-1])
        if last["status"] not in TERMINAL_EXECUTION_STATUSES:
            return None
        if not summary.completed and self.report_status_change is not None:
            self.report_status_change(last)
            summary = self._summary(experiment_id, results)
        if summary.completed or (self.report_status_change is not None and last["status"] != ExecutionStatus.SUCCEEDED):
            return last, summary
        return None

    @staticmethod
    def _summary(experiment_id: int, results: Results) -> ExperimentSummary:
        """The summary of an experiment this launcher follows: its row exists (it was found by its execution)
        and experiments are never deleted."""
        summary = results.summary(experiment_id)
        assert summary is not None, f"experiment {experiment_id} was found by its execution, so its row exists"
        return summary
