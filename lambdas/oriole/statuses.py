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
    """``experiments.ending``: how a closed experiment scores, exactly one of four (``oriole.core.endings``)."""

    SUCCESS = "success"
    AGENT = "agent"  # agent failure: its action or token budget used, it gave up, or it stalled
    CENSORED = "censored"  # stopped by something outside the agent: the wall clock, a timeout, a cancel, a limit
    ERROR = "error"  # a provider or infrastructure failure


class EndingCause(StrEnum):
    """``experiments.ending_cause``: which limit, stop or failure ended a run, within its ending
    (``oriole.core.endings.ENDING_OF_CAUSE`` says which ending each belongs to)."""

    GOAL = "goal"  # success
    MAX_MOVES = "max_moves"  # agent: its action budget (maxMoves) used
    MAX_TOKENS = "max_tokens"  # agent: its token budget (maxTotalTokens) used
    GAVE_UP = "gave_up"  # agent: it called give_up
    STALLED = "stalled"  # agent: maxStalledTurns turns in a row without a valid action
    MAX_DURATION = "max_duration"  # censored: the wall clock (maxDurationMinutes), a safety limit
    EXECUTION_TIMEOUT = "execution_timeout"  # censored: Step Functions' hard execution timeout
    STOPPED = "stopped"  # censored: its execution was stopped (StopExecution, Ctrl-C, oriole doctor --fix)
    DEPLOYMENT_LIMIT = "deployment_limit"  # censored: throttled past every retry (a quota of the deployment)
    SPEND_CAP = "spend_cap"  # censored: a safety cap on spending (maxInputTokens, maxCostUsd) reached
    PROVIDER = "provider"  # error: the model server failed, timed out, refused or answered nonsense
    INFRASTRUCTURE = "infrastructure"  # error: anything else that broke (a Lambda, the database, the flow)


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
    MAX_TOKENS = "max_tokens"
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
    spend limit, or the sweep was stopped), paused (its agent's server keeps failing), rejected (its execution
    failed before an experiment existed), or still starting (its execution runs, no experiment yet)."""

    STARTED = "started"
    SKIPPED = "skipped"
    PAUSED = "paused"  # its agent's model server failed the run's last experiments of that agent alike
    REJECTED = "rejected"
    STARTING = "starting"
