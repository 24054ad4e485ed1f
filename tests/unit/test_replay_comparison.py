"""The replay comparison (pure): a failure reason that names its own experiment compares without the id."""

from __future__ import annotations

from oriole_workstation import replay as replays


def ended(reason: str) -> replays.Stored:
    ending = {
        "status": "failed",
        "failure_reason": reason,
        "goal_found": False,
        "goal_reached_step": None,
        "action_count": 0,
        "turn_count": 0,
    }
    return replays.Stored(ending, [], [], [])


def test_a_failure_reason_naming_its_own_experiment_or_execution_is_compared_without_the_id():
    original = ended("execution FAILED: exp-12-part-2 failed (experiment 12 is already failed; 120 actions)")
    replayed = ended("execution FAILED: exp-31-part-2 failed (experiment 31 is already failed; 120 actions)")
    assert replays.compare(original, replayed, 12, 31).identical


def test_any_other_difference_in_the_reason_still_counts():
    comparison = replays.compare(ended("agent_gave_up: lost at 12"), ended("agent_gave_up: lost at 31"), 12, 31)
    assert comparison.first_difference["what"] == "experiment failure_reason"
    assert comparison.first_difference["expected"] == "agent_gave_up: lost at 12"
