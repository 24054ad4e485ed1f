"""The experiment's limits: after each turn, decide whether to finish, go on, or continue as a new
execution. ConditionCheck in the state machine only routes on the decision made here."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from oriole.catalog import TURN_ALLOWANCE_SECONDS
from oriole.core.endings import (
    GAVE_UP_REASON_PREFIX,
    MAX_DURATION_REASON_PREFIX,
    MAX_MOVES_REASON_PREFIX,
    MAX_TOKENS_REASON_PREFIX,
    SPEND_CAP_REASON_PREFIX,
    STALL_REASON_PREFIX,
)
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import NextStep


@dataclass(frozen=True)
class Progress:
    goal_found: bool
    action_count: int  # the experiment's actions so far (experiments.action_count)
    elapsed_seconds: float
    turn_in_execution: int  # the just-played turn's number within the current execution, from 1
    stalled_turns: int = 0  # turns in a row, up to the just-played one, without a valid action
    execution_seconds_left: float | None = None  # before the execution's hard timeout; None when unknown
    gave_up_reason: str | None = None  # what the model said when it called give_up
    input_tokens: int = 0  # read by the model calls of every turn so far
    cost_usd: float | None = None  # at the experiment's prices; None when unknown (no price)
    tokens: int = 0  # input and output tokens of the committed turns' model calls (the token budget's count)


@dataclass(frozen=True)
class Decision:
    decision: NextStep
    reason: str | None = None


def decide(progress: Progress, config: ExperimentConfig) -> Decision:
    """Goal found wins; then the agent giving up; then the action and token budgets and the time limit; then the
    safety caps on spending; then the stall rule; then the per-execution budgets: its turns, and its time before the
    hard execution timeout. Each reason starts with the prefix that gives its ending (``oriole.core.endings``): the
    action and token budgets are the agent's failure, the wall clock and the spending caps censor the run. The token
    budget (``maxTotalTokens``, 0: none) counts the committed turns' calls: the turn that reaches it is the last
    (``run_turn`` ends a turn there too).

    The caps (``maxInputTokens``, ``maxCostUsd``) are judged after every turn, on the totals its commit left (every
    call a server answered, failed attempts included): the turn that crosses one is the last, so an experiment ends
    at most one turn over its cap.

    A model that keeps answering without a usable tool call would otherwise burn turns (and tokens)
    until the time limit; after ``maxStalledTurns`` such turns in a row the experiment ends as failed.
    An execution with less than one turn's allowance left continues as a new execution, so the graceful
    limits (FinalizeTimeout) always win over Step Functions' timeout, whatever ``maxDurationMinutes`` is.
    """
    if progress.goal_found:
        return Decision(NextStep.SUCCESS)
    if progress.gave_up_reason is not None:
        return Decision(NextStep.GAVE_UP, f"{GAVE_UP_REASON_PREFIX}: {progress.gave_up_reason}")
    max_actions = config.max_actions
    if progress.action_count >= max_actions:
        return Decision(
            NextStep.TIMEOUT, f"{MAX_MOVES_REASON_PREFIX}: {progress.action_count} actions of {max_actions} allowed"
        )
    max_tokens = config.max_total_tokens
    if max_tokens and progress.tokens >= max_tokens:
        return Decision(
            NextStep.TIMEOUT, f"{MAX_TOKENS_REASON_PREFIX}: {progress.tokens:,} tokens of {max_tokens:,} allowed"
        )
    minutes = progress.elapsed_seconds / 60
    if minutes >= config.max_duration_minutes:
        return Decision(
            NextStep.TIMEOUT,
            f"{MAX_DURATION_REASON_PREFIX}: ran {minutes:.1f} of {config.max_duration_minutes:g} minutes",
        )
    capped = spend_cap(progress, config)
    if capped is not None:
        return Decision(NextStep.TIMEOUT, f"{SPEND_CAP_REASON_PREFIX}: {capped}")
    max_stalled = config.max_stalled_turns
    if progress.stalled_turns >= max_stalled:
        return Decision(
            NextStep.STALLED,
            f"{STALL_REASON_PREFIX}: {progress.stalled_turns} turns in a row without "
            "a valid action (no tool call, or only invalid calls); maxStalledTurns is "
            f"{max_stalled}",
        )
    if progress.turn_in_execution >= config.max_turns_per_execution:
        return Decision(NextStep.CONTINUE_AS_NEW)
    left = progress.execution_seconds_left
    if left is not None and left < TURN_ALLOWANCE_SECONDS:
        return Decision(NextStep.CONTINUE_AS_NEW)
    return Decision(NextStep.CONTINUE)


def spend_cap(progress: Progress, config: ExperimentConfig) -> str | None:
    """Which safety cap the experiment has reached, in words; None while under both. A snapshot taken before the
    caps existed has the catalog's defaults; an experiment without a known price is judged on its tokens alone."""
    if progress.input_tokens >= config.max_input_tokens:
        return f"{progress.input_tokens:,} input tokens of the {config.max_input_tokens:,} maxInputTokens allows"
    if progress.cost_usd is not None and progress.cost_usd >= config.max_cost_usd:
        return f"${progress.cost_usd:,.4f} spent of the ${config.max_cost_usd:,.2f} maxCostUsd allows"
    return None


def successor_name(experiment_id: int, part: int) -> str:
    """The execution that carries an experiment on as its ``part``-th execution: deterministic, so a
    retried start cannot start a second one, and the status-change finalizer can recognise it."""
    return f"exp-{experiment_id}-part-{part}"


def successor_part(experiment_id: int, execution_arn: str) -> int | None:
    """The part an execution would carry ``experiment_id`` on as, when its name is a successor name of that
    experiment (``exp-<id>-part-<n>``, n >= 2); None for any other execution."""
    head, _, part = execution_arn.rsplit(":", 1)[-1].partition(f"exp-{experiment_id}-part-")
    if head or not part.isdecimal() or part != str(int(part)) or int(part) < 2:
        return None
    return int(part)


def continuation_token() -> tuple[str, str]:
    """A new secret for the successor's input, and the hash the experiment's row keeps: only the task that
    drew it (ContinueAsNew) ever holds the token, so only the execution it starts can attach itself."""
    token = secrets.token_urlsafe(32)
    return token, continuation_hash(token)


def continuation_hash(token: str) -> str:
    """What the row keeps of a continuation token (SHA-256, hex): the token itself never reaches the database."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
