"""The experiment's limits: after each turn, decide whether to finish, go on, or continue as a new
execution. ConditionCheck in the state machine only routes on the decision made here."""

from __future__ import annotations

from dataclasses import dataclass

SUCCESS, TIMEOUT, CONTINUE, CONTINUE_AS_NEW = "success", "timeout", "continue", "continue_as_new"


@dataclass(frozen=True)
class Progress:
    goal_found: bool
    actions: int
    elapsed_seconds: float
    turn_in_execution: int  # the just-played turn's number within the current execution, from 1


@dataclass(frozen=True)
class Decision:
    decision: str
    reason: str | None = None


def decide(progress: Progress, config: dict) -> Decision:
    """Goal found wins; then the action and time limits; then the per-execution turn budget."""
    if progress.goal_found:
        return Decision(SUCCESS)
    max_moves = config["maxMoves"]
    if progress.actions >= max_moves:
        return Decision(TIMEOUT, f"max_moves reached: {progress.actions} actions of {max_moves} allowed")
    minutes = progress.elapsed_seconds / 60
    if minutes >= config["maxDurationMinutes"]:
        return Decision(
            TIMEOUT,
            f"max_duration_minutes reached: ran {minutes:.1f} of {config['maxDurationMinutes']:g} minutes",
        )
    if progress.turn_in_execution >= config["maxTurnsPerExecution"]:
        return Decision(CONTINUE_AS_NEW)
    return Decision(CONTINUE)
