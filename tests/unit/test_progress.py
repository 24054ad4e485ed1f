"""CheckProgress decisions: goal first, then the limits, then the per-execution turn budget."""

from oriole.core.progress import Progress, decide
from oriole.experiment_config import ExperimentConfig
from oriole.statuses import NextStep

CONFIG = ExperimentConfig.of({"maxMoves": 100, "maxDurationMinutes": 2.0, "maxTurnsPerExecution": 10})


def test_goal_found_wins_even_at_the_limits():
    assert decide(Progress(True, 100, 500.0, 10), CONFIG).decision == "success"


def test_action_limit_times_out_with_a_reason():
    decision = decide(Progress(False, 100, 1.0, 1), CONFIG)
    assert decision.decision == "timeout" and decision.reason.startswith("max_moves reached: 100 actions")


def test_the_token_budget_ends_the_run_once_the_committed_turns_used_it_and_zero_means_none():
    budget = CONFIG.model_copy(update={"max_total_tokens": 50_000})
    assert decide(Progress(False, 5, 1.0, 1, tokens=49_999), budget).decision == "continue"
    decision = decide(Progress(False, 5, 1.0, 1, tokens=50_210), budget)
    assert decision.decision == "timeout" and decision.reason == "max_tokens reached: 50,210 tokens of 50,000 allowed"
    assert decide(Progress(False, 5, 1.0, 1, tokens=10**9), CONFIG).decision == "continue"  # maxTotalTokens 0
    assert decide(Progress(False, 100, 500.0, 1, tokens=50_210), budget).reason.startswith("max_moves reached")


def test_duration_limit_times_out_with_a_reason():
    decision = decide(Progress(False, 5, 121.0, 1), CONFIG)
    assert decision.decision == "timeout" and decision.reason.startswith("max_duration_minutes reached")


def test_continue_until_the_execution_turn_budget_then_continue_as_new():
    assert decide(Progress(False, 5, 1.0, 9), CONFIG).decision == "continue"
    assert decide(Progress(False, 5, 1.0, 10), CONFIG).decision == "continue_as_new"


STALL = CONFIG.model_copy(update={"max_stalled_turns": 3})


def test_the_stall_limit_fails_with_a_reason_after_that_many_turns_in_a_row():
    assert decide(Progress(False, 5, 1.0, 2, stalled_turns=2), STALL).decision == "continue"
    decision = decide(Progress(False, 5, 1.0, 3, stalled_turns=3), STALL)
    assert decision.decision == "stalled"
    assert decision.reason.startswith("agent_stalled: 3 turns in a row without a valid action")


def test_the_stall_rule_comes_after_the_goal_and_the_limits_and_before_the_execution_budget():
    assert decide(Progress(True, 5, 1.0, 3, stalled_turns=3), STALL).decision == "success"
    assert decide(Progress(False, 100, 1.0, 3, stalled_turns=3), STALL).decision == "timeout"
    assert decide(Progress(False, 5, 1.0, 10, stalled_turns=3), STALL).decision == "stalled"


def test_a_snapshot_without_the_stall_parameter_gets_the_catalog_default():
    from oriole.catalog import BY_KEY

    default = BY_KEY["maxStalledTurns"].default
    snapshot = {"maxMoves": 100, "maxDurationMinutes": 2.0, "maxTurnsPerExecution": 10}  # taken before the key
    config = ExperimentConfig.of(snapshot)
    assert config.max_stalled_turns == default == 3
    assert decide(Progress(False, 5, 1.0, 1, stalled_turns=default - 1), config).decision == "continue"
    assert decide(Progress(False, 5, 1.0, 1, stalled_turns=default), config).decision == "stalled"


def test_successor_names_are_deterministic():
    from oriole.core.progress import successor_name

    assert successor_name(42, 3) == "exp-42-part-3"


def test_an_execution_about_to_reach_its_timeout_continues_as_new():
    """Less than one turn's allowance before Step Functions' hard timeout: a new execution goes on."""
    from oriole.catalog import TURN_ALLOWANCE_SECONDS

    room, tight = TURN_ALLOWANCE_SECONDS + 1, TURN_ALLOWANCE_SECONDS - 1
    assert decide(Progress(False, 5, 1.0, 1, execution_seconds_left=room), CONFIG).decision == "continue"
    assert decide(Progress(False, 5, 1.0, 1, execution_seconds_left=tight), CONFIG).decision == "continue_as_new"
    assert decide(Progress(True, 5, 1.0, 1, execution_seconds_left=tight), CONFIG).decision == "success"


def capped(**caps) -> ExperimentConfig:
    return ExperimentConfig.of({"maxMoves": 100, "maxDurationMinutes": 2.0, "maxTurnsPerExecution": 10, **caps})


def test_a_spend_cap_ends_the_run_censored_after_the_turn_that_crossed_it():
    """maxInputTokens and maxCostUsd are safety caps: the turn whose commit crossed one is the last, and the run
    is censored (spend_cap), never the agent's failure; under both, it goes on."""
    from oriole.core.endings import closing
    from oriole.statuses import Ending, EndingCause, ExperimentStatus

    config = capped(maxInputTokens=1_000_000, maxCostUsd=2.0)
    under = Progress(False, 10, 60, 1, input_tokens=999_999, cost_usd=1.99)
    assert decide(under, config).decision == NextStep.CONTINUE
    for crossed, words in (
        (Progress(False, 10, 60, 1, input_tokens=1_000_000, cost_usd=0.5), "1,000,000 input tokens of the 1,000,000"),
        (Progress(False, 10, 60, 1, input_tokens=10, cost_usd=2.0004), "$2.0004 spent of the $2.00 maxCostUsd"),
    ):
        decided = decide(crossed, config)
        assert decided.decision == NextStep.TIMEOUT and words in decided.reason
        ended = closing(ExperimentStatus.TIMED_OUT, decided.reason)
        assert ended is not None and (ended.ending, ended.cause) == (Ending.CENSORED, EndingCause.SPEND_CAP)


def test_an_unpriced_run_is_capped_by_its_tokens_and_an_old_snapshot_by_the_defaults():
    config = capped(maxInputTokens=100, maxCostUsd=1.0)
    assert decide(Progress(False, 1, 1, 1, input_tokens=50, cost_usd=None), config).decision == NextStep.CONTINUE
    assert decide(Progress(False, 1, 1, 1, input_tokens=100, cost_usd=None), config).decision == NextStep.TIMEOUT
    # a snapshot taken before the caps existed reads the catalog's ($5, 5,000,000 input tokens)
    assert decide(Progress(False, 1, 1, 1, input_tokens=4_999_999, cost_usd=4.99), CONFIG).decision == NextStep.CONTINUE
    assert decide(Progress(False, 1, 1, 1, input_tokens=10, cost_usd=5.0), CONFIG).decision == NextStep.TIMEOUT


def test_the_action_budget_is_the_agents_even_when_a_cap_is_crossed_in_the_same_turn():
    decided = decide(Progress(False, 100, 1, 1, input_tokens=500), capped(maxInputTokens=100))
    assert decided.reason.startswith("max_moves reached")
