"""CheckProgress decisions: goal first, then the limits, then the per-execution turn budget."""

from oriole.progress import Progress, decide

CONFIG = {"maxMoves": 100, "maxDurationMinutes": 2.0, "maxTurnsPerExecution": 10}


def test_goal_found_wins_even_at_the_limits():
    assert decide(Progress(True, 100, 500.0, 10), CONFIG).decision == "success"


def test_action_limit_times_out_with_a_reason():
    decision = decide(Progress(False, 100, 1.0, 1), CONFIG)
    assert decision.decision == "timeout" and decision.reason.startswith("max_moves reached: 100 actions")


def test_duration_limit_times_out_with_a_reason():
    decision = decide(Progress(False, 5, 121.0, 1), CONFIG)
    assert decision.decision == "timeout" and decision.reason.startswith("max_duration_minutes reached")


def test_continue_until_the_execution_turn_budget_then_continue_as_new():
    assert decide(Progress(False, 5, 1.0, 9), CONFIG).decision == "continue"
    assert decide(Progress(False, 5, 1.0, 10), CONFIG).decision == "continue_as_new"
