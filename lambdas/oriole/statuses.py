"""Every status and ending the runtime names, defined once. Each is a ``StrEnum``: its members are the strings the
database stores, the state machine routes on and the CLI shows, so a member compares equal to its text and
serialises as it (changing a value is changing the schema and the flows: add a member, never rename one).
"""

from __future__ import annotations

from enum import StrEnum


class ExperimentStatus(StrEnum):
    """``experiments.status`` (migration 0001's CHECK)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    TIMED_OUT = "timed_out"
    ABORTED = "aborted"


class Ending(StrEnum):
    """``experiments.ending``: how a closed experiment scores (``progress.ending_category``)."""

    SUCCESS = "success"
    AGENT = "agent"  # a run without success: the limits, or the agent's own failure (stalled, gave up)
    ERROR = "error"  # infrastructure or provider


class NextStep(StrEnum):
    """What CheckProgress decides after a turn; the flow's ConditionCheck routes on these values."""

    SUCCESS = "success"
    TIMEOUT = "timeout"
    STALLED = "stalled"
    GAVE_UP = "gave_up"
    CONTINUE = "continue"
    CONTINUE_AS_NEW = "continue_as_new"


class TurnEnd(StrEnum):
    """``turns.end_reason``: why the turn loop ended a turn."""

    NO_TOOL_CALL = "no_tool_call"
    ACTION_BUDGET = "action_budget"
    MAX_MOVES = "max_moves"
    GOAL_FOUND = "goal_found"
    GAVE_UP = "gave_up"
    CIRCUIT_BREAKER = "circuit_breaker"
    REPETITION = "repetition"
    DEADLINE = "deadline"


class ExecutionStatus(StrEnum):
    """A Step Functions execution's status (DescribeExecution, the status-change event)."""

    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    TIMED_OUT = "TIMED_OUT"
    ABORTED = "ABORTED"
    PENDING_REDRIVE = "PENDING_REDRIVE"


TERMINAL_EXECUTION_STATUSES = (
    ExecutionStatus.SUCCEEDED,
    ExecutionStatus.FAILED,
    ExecutionStatus.TIMED_OUT,
    ExecutionStatus.ABORTED,
)  # an execution's ends


class RepetitionOutcome(StrEnum):
    """A sweep item's word for its repetition besides the experiment's own status: started now, skipped (the
    spend limit, or the sweep was stopped), rejected (its execution failed before an experiment existed), or
    still starting (its execution runs, no experiment yet)."""

    STARTED = "started"
    SKIPPED = "skipped"
    REJECTED = "rejected"
    STARTING = "starting"
