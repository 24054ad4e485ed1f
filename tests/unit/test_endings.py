"""Every run ends in exactly one of four endings (success, agent failure, censored, error) with its cause, read
from the status and failure reason that closed it: what each limit, stop and failure of the flow writes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oriole.core import endings
from oriole.core.endings import ENDING_OF_CAUSE, closing, ending_category
from oriole.core.progress import Progress, decide
from oriole.experiment_config import ExperimentConfig
from oriole.lifecycle.experiments import _CLOSED_BY_EXECUTION
from oriole.statuses import Ending, EndingCause, ExperimentStatus, NextStep

CONFIG = ExperimentConfig.of(
    {
        "maxMoves": 100,
        "maxTotalTokens": 50_000,
        "maxDurationMinutes": 2.0,
        "maxTurnsPerExecution": 10,
        "maxStalledTurns": 3,
    }
)


@pytest.mark.parametrize(
    "status, reason, ending, cause",
    [
        ("running", None, None, None),
        ("succeeded", None, "success", "goal"),
        ("timed_out", "max_moves reached: 200 actions of 200 allowed", "agent", "max_moves"),
        ("timed_out", "max_tokens reached: 50,210 tokens of 50,000 allowed", "agent", "max_tokens"),
        ("failed", "agent_stalled: 3 turns in a row without a valid action", "agent", "stalled"),
        ("failed", "agent_gave_up: the maze is too hard", "agent", "gave_up"),
        ("timed_out", "max_duration_minutes reached: ran 120.3 of 120 minutes", "censored", "max_duration"),
        ("timed_out", "execution TIMED_OUT: exp-1 reached its execution timeout", "censored", "execution_timeout"),
        (
            "aborted",
            "execution ABORTED: exp-1 was stopped (stopped from the command line (Ctrl-C))",
            "censored",
            "stopped",
        ),
        ("aborted", None, "censored", "stopped"),
        ("failed", "ModelThrottled: Bedrock throttled the request 13 times", "censored", "deployment_limit"),
        ("failed", "Lambda.TooManyRequestsException: Rate Exceeded.", "censored", "deployment_limit"),
        ("failed", "ModelUnavailable: Ollama at http://localhost:11434 is unreachable", "error", "provider"),
        ("failed", "ModelTimeout: no answer in 120 s", "error", "provider"),
        ("failed", "InvalidModelResponse: the answer is not JSON", "error", "provider"),
        ("failed", "ModelRequestRejected: unknown model", "error", "provider"),
        ("failed", "OperationalError: the connection was dropped", "error", "infrastructure"),
        ("failed", "execution FAILED: exp-1 failed (ModelUnavailable: down)", "error", "infrastructure"),
        (
            "failed",
            "continuation did not start: execution exp-1 ended with the experiment open",
            "error",
            "infrastructure",
        ),
        ("failed", None, "error", "infrastructure"),
    ],
)
def test_each_way_a_run_ends_has_one_ending_and_its_cause(status, reason, ending, cause):
    found = closing(ExperimentStatus(status), reason)
    assert (found and (found.ending, found.cause)) == ((ending, cause) if ending else None)
    assert ending_category(ExperimentStatus(status), reason) == ending


def test_every_cause_belongs_to_exactly_one_ending_and_every_ending_has_a_cause():
    assert set(ENDING_OF_CAUSE) == set(EndingCause)
    assert set(ENDING_OF_CAUSE.values()) == set(Ending)


def test_what_check_progress_decides_closes_as_the_ending_it_means():
    """The reasons the limits write: the action and token budgets and the agent's own stops are agent failures, the
    wall clock censors the run."""
    flow_status = {
        NextStep.TIMEOUT: ExperimentStatus.TIMED_OUT,
        NextStep.STALLED: ExperimentStatus.FAILED,
        NextStep.GAVE_UP: ExperimentStatus.FAILED,
    }
    cases = [
        (Progress(False, 100, 1.0, 1), EndingCause.MAX_MOVES),
        (Progress(False, 5, 1.0, 1, tokens=50_000), EndingCause.MAX_TOKENS),
        (Progress(False, 5, 121.0, 1), EndingCause.MAX_DURATION),
        (Progress(False, 5, 1.0, 1, stalled_turns=3), EndingCause.STALLED),
        (Progress(False, 5, 1.0, 1, gave_up_reason="lost"), EndingCause.GAVE_UP),
    ]
    for progress, cause in cases:
        decision = decide(progress, CONFIG)
        assert endings.cause_of(flow_status[decision.decision], decision.reason) == cause


def test_what_the_status_change_finalizer_writes_closes_as_censored_or_error():
    """An execution's timeout and a stop censor the run; a failed failure path is an error."""
    expected = {"TIMED_OUT": Ending.CENSORED, "ABORTED": Ending.CENSORED, "FAILED": Ending.ERROR}
    for execution_status, (status, what) in _CLOSED_BY_EXECUTION.items():
        reason = f"execution {execution_status}: exp-7-part-2 {what}"
        assert ending_category(status, reason) == expected[execution_status]


@given(st.sampled_from(list(ExperimentStatus)), st.one_of(st.none(), st.text(max_size=80)))
def test_any_closed_status_and_reason_has_exactly_one_ending(status, reason):
    found = closing(status, reason)
    if status == ExperimentStatus.RUNNING:
        assert found is None
        return
    assert found is not None and ENDING_OF_CAUSE[found.cause] == found.ending
    assert (found.ending == Ending.SUCCESS) == (status == ExperimentStatus.SUCCEEDED)
