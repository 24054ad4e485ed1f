"""How an experiment ended, in the words a researcher reads: every table, line, page and picture says it the
same way. The ending is one of four (``oriole.core.endings``): success, agent failure, censored, error; the
outcome names the cause within it (out of moves, gave up, out of time, stopped, ...), read from the status and
the failure reason by the same rules that stored the ending."""

from __future__ import annotations

from oriole.core.endings import cause_of
from oriole.statuses import Ending, EndingCause, ExperimentStatus

ENDINGS: dict[str | None, str] = {
    Ending.SUCCESS: "success",
    Ending.AGENT: "agent failure",
    Ending.CENSORED: "censored",
    Ending.ERROR: "error",
    None: "running",
}
CAUSES: dict[EndingCause, str] = {
    EndingCause.GOAL: "goal found",
    EndingCause.MAX_MOVES: "out of moves",
    EndingCause.MAX_TOKENS: "out of tokens",
    EndingCause.GAVE_UP: "gave up",
    EndingCause.STALLED: "stalled",
    EndingCause.MAX_DURATION: "out of time",
    EndingCause.EXECUTION_TIMEOUT: "execution timed out",
    EndingCause.STOPPED: "stopped",
    EndingCause.DEPLOYMENT_LIMIT: "throttled",
    EndingCause.SPEND_CAP: "spend cap",
    EndingCause.PROVIDER: "provider failed",
    EndingCause.INFRASTRUCTURE: "failed",
}


def ending_text(ending: str | None) -> str:
    """``success``, ``agent failure``, ``censored``, ``error``, ``running``."""
    return ENDINGS.get(ending, ending or "running")


def outcome_text(status: str, failure_reason: str | None) -> str:
    """``goal found``, ``out of moves``, ``gave up``, ``stalled``, ``out of time``, ``execution timed out``,
    ``stopped``, ``throttled``, ``spend cap``, ``provider failed``, ``failed``, ``running``: the cause that ended
    it."""
    cause = cause_of(ExperimentStatus(status), failure_reason)
    return "running" if cause is None else CAUSES[cause]
