"""How a run ended: exactly one of four endings, and the cause within it (DESIGN.md section 13).

- **success**: the goal condition was met;
- **agent** (agent failure): the agent used its action budget (``maxMoves``) or its token budget
  (``maxTotalTokens``), gave up, or stalled; a study's limits are budgets the agent spends, so running out of one is
  the agent's failure;
- **censored**: something outside the agent stopped a run that was going fine: the wall clock
  (``maxDurationMinutes``, a safety limit), Step Functions' execution timeout, a stop (StopExecution, Ctrl-C on a
  sweep, ``oriole doctor --fix``), a deployment's limit (throttled past every retry), a safety cap on spending
  (``maxInputTokens``, ``maxCostUsd``); whether the agent would have
  succeeded is unknown, so a censored run is in no decided rate and is censored in the success-by-step curve;
- **error**: a provider or infrastructure failure.

An experiment is closed with a status and a failure reason; both are read here, once, to give its ending and
cause (``closing``), which ``Store.finalize`` stores beside them. A rule that ends a run writes a reason starting
with one of ``REASON_RULES``' prefixes; a new limit adds its prefix there with the ending it means (a safety cap on
spending is censored, a budget of the study is the agent's). Migration 0020 applied the same rules to the rows
stored before, and a test holds the two to each other.
"""

from __future__ import annotations

from dataclasses import dataclass

from oriole.errors import (
    InvalidApiKey,
    InvalidModelResponse,
    ModelRequestRejected,
    ModelThrottled,
    ModelTimeout,
    ModelUnavailable,
)
from oriole.statuses import Ending, EndingCause, ExperimentStatus

STALL_REASON_PREFIX = "agent_stalled"
GAVE_UP_REASON_PREFIX = "agent_gave_up"
MAX_MOVES_REASON_PREFIX = "max_moves reached"  # a timed_out experiment that ran out of moves, not of time
MAX_TOKENS_REASON_PREFIX = "max_tokens reached"  # one that used its token budget (maxTotalTokens)
MAX_DURATION_REASON_PREFIX = "max_duration_minutes reached"
EXECUTION_TIMEOUT_REASON_PREFIX = "execution TIMED_OUT"  # the status-change finalizer's words
STOPPED_REASON_PREFIX = "execution ABORTED"
SPEND_CAP_REASON_PREFIX = "spend cap reached"  # maxInputTokens or maxCostUsd: a safety cap, not the study's budget

ENDING_OF_CAUSE: dict[EndingCause, Ending] = {
    EndingCause.GOAL: Ending.SUCCESS,
    EndingCause.MAX_MOVES: Ending.AGENT,
    EndingCause.MAX_TOKENS: Ending.AGENT,
    EndingCause.GAVE_UP: Ending.AGENT,
    EndingCause.STALLED: Ending.AGENT,
    EndingCause.MAX_DURATION: Ending.CENSORED,
    EndingCause.EXECUTION_TIMEOUT: Ending.CENSORED,
    EndingCause.STOPPED: Ending.CENSORED,
    EndingCause.DEPLOYMENT_LIMIT: Ending.CENSORED,
    EndingCause.SPEND_CAP: Ending.CENSORED,
    EndingCause.PROVIDER: Ending.ERROR,
    EndingCause.INFRASTRUCTURE: Ending.ERROR,
}

# A failure reason that starts with one of these prefixes was ended by that cause.
REASON_RULES: tuple[tuple[str, EndingCause], ...] = (
    (MAX_MOVES_REASON_PREFIX, EndingCause.MAX_MOVES),
    (MAX_TOKENS_REASON_PREFIX, EndingCause.MAX_TOKENS),
    (GAVE_UP_REASON_PREFIX, EndingCause.GAVE_UP),
    (STALL_REASON_PREFIX, EndingCause.STALLED),
    (MAX_DURATION_REASON_PREFIX, EndingCause.MAX_DURATION),
    (EXECUTION_TIMEOUT_REASON_PREFIX, EndingCause.EXECUTION_TIMEOUT),
    (STOPPED_REASON_PREFIX, EndingCause.STOPPED),
    (SPEND_CAP_REASON_PREFIX, EndingCause.SPEND_CAP),
)
# A caught error (its reason is ``Name: message``) by the error's name: a model server's failure is the provider's,
# throttling past every retry is a limit of the deployment (Lambda's concurrency, a model quota), anything else
# broke the infrastructure.
ERROR_NAME_CAUSES: dict[str, EndingCause] = {
    **{
        error.__name__: EndingCause.PROVIDER
        for error in (ModelUnavailable, ModelTimeout, ModelRequestRejected, InvalidModelResponse, InvalidApiKey)
    },
    ModelThrottled.__name__: EndingCause.DEPLOYMENT_LIMIT,
    "Lambda.TooManyRequestsException": EndingCause.DEPLOYMENT_LIMIT,
}


@dataclass(frozen=True)
class Closing:
    """A closed experiment's ending and the cause within it."""

    ending: Ending
    cause: EndingCause


def cause_of(status: ExperimentStatus, failure_reason: str | None) -> EndingCause | None:
    """Which cause ended an experiment with this status and failure reason; None while it runs.

    The reason decides where it names a rule; otherwise a stopped execution (``aborted``) was stopped, a
    ``timed_out`` one hit a time limit outside the agent, and a failure is a caught error, the provider's or
    the infrastructure's by its name.
    """
    if status == ExperimentStatus.RUNNING:
        return None
    if status == ExperimentStatus.SUCCEEDED:
        return EndingCause.GOAL
    reason = failure_reason or ""
    for prefix, cause in REASON_RULES:
        if reason.startswith(prefix):
            return cause
    if status == ExperimentStatus.ABORTED:
        return EndingCause.STOPPED
    if status == ExperimentStatus.TIMED_OUT:
        return EndingCause.EXECUTION_TIMEOUT
    return ERROR_NAME_CAUSES.get(reason.partition(":")[0].strip(), EndingCause.INFRASTRUCTURE)


def closing(status: ExperimentStatus, failure_reason: str | None) -> Closing | None:
    """The ending and cause of an experiment closed with this status and reason (None while it runs)."""
    cause = cause_of(status, failure_reason)
    return None if cause is None else Closing(ENDING_OF_CAUSE[cause], cause)


def ending_category(status: ExperimentStatus, failure_reason: str | None) -> Ending | None:
    """The ending alone: ``success``, ``agent``, ``censored`` or ``error``; None while running."""
    found = closing(status, failure_reason)
    return None if found is None else found.ending
