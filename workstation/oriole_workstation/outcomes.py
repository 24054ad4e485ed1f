"""How an experiment ended, in the words a researcher reads: every table, line, page and picture says it the
same way. A status alone says too little: ``timed_out`` is also the end of an experiment that ran out of moves,
long before any clock, and an ``agent`` ending (a run without success) is no error."""

from __future__ import annotations

from oriole.core.progress import (
    GAVE_UP_REASON_PREFIX,
    MAX_DURATION_REASON_PREFIX,
    MAX_MOVES_REASON_PREFIX,
    STALL_REASON_PREFIX,
)
from oriole.statuses import Ending

ENDINGS: dict[str | None, str] = {
    Ending.SUCCESS: "success",
    Ending.AGENT: "no success",
    Ending.ERROR: "error",
    None: "running",
}
_REASONS = (
    (MAX_MOVES_REASON_PREFIX, "out of moves"),
    (MAX_DURATION_REASON_PREFIX, "out of time"),
    (STALL_REASON_PREFIX, "stalled"),
    (GAVE_UP_REASON_PREFIX, "gave up"),
)
_STATUSES = {
    "succeeded": "goal found",
    "timed_out": "out of time",
    "failed": "failed",
    "aborted": "aborted",
    "running": "running",
}


def ending_text(ending: str | None) -> str:
    """``success``, ``no success`` (an agent ending: a run that did not find the goal), ``error``, ``running``."""
    return ENDINGS.get(ending, ending or "running")


def outcome_text(status: str, failure_reason: str | None) -> str:
    """``goal found``, ``out of moves``, ``out of time``, ``stalled``, ``gave up``, ``failed``, ``aborted``,
    ``running``: the status, told apart by the reason where it hides what happened."""
    if status != "succeeded":
        reason = failure_reason or ""
        for prefix, words in _REASONS:
            if reason.startswith(prefix):
                return words
    return _STATUSES.get(status, status.replace("_", " "))
