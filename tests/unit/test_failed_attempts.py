"""A turn that fails part way still knows every call the server answered (``Turn.answered``), and its rows
(``failed_attempt_write``) carry each call's tokens and a cost that adds up exactly to what the experiment's tokens
cost, whatever the rounding of each call's."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import ClassVar

import pytest

from oriole.core.mazeset import get_maze
from oriole.core.tools import ToolCall
from oriole.core.turn import Turn
from oriole.core.turn_loop import ModelRequest, ModelResponse, Usage
from oriole.errors import ModelThrottled, ModelTimeout
from oriole.experiment_config import ExperimentConfig
from oriole.store.turn_rows import failed_attempt_write
from tests.unit.test_memory_modes import Recorder, state

MAZE = get_maze("perfect-7").maze
PRICED = {"pricing": {"inputPerMTok": 0.37, "outputPerMTok": 1.13}}


class FailsAfter:
    """Answers ``answers`` (a move each, with the given usage), then raises ``error``."""

    context_budget = None
    settings: ClassVar[dict] = {}

    def __init__(self, usages: list[tuple[int, int]], error: Exception):
        self.usages, self.error = list(usages), error

    def respond(self, request: ModelRequest) -> ModelResponse:
        if not self.usages:
            raise self.error
        used = self.usages.pop(0)
        call = ToolCall("move_north", {}, call_id="c")
        return ModelResponse(tool_calls=(call,), text=None, usage=Usage(*used, 40), stop_reason="tool_calls")


def failing_turn(history_mode: str, config: dict, usages, error) -> tuple:
    loaded = state(MAZE, history_mode)
    settings = ExperimentConfig.of({"historyMode": history_mode, "historyTurns": 1, **config})
    loaded = replace(loaded, experiment=replace(loaded.experiment, config=settings, input_tokens=999, output_tokens=3))
    turn = Turn(loaded, MAZE)
    with pytest.raises(type(error)):
        turn.play(FailsAfter(usages, error))
    return loaded, turn


def test_the_calls_answered_before_a_failure_are_kept_in_order_with_what_made_them():
    usages = [(1234, 56), (2345, 67), (3456, 78)]
    loaded, turn = failing_turn("summary", {"compaction": "model", **PRICED}, usages, ModelTimeout("stalled"))
    assert [(a.kind, a.response.usage.input_tokens) for a in turn.answered] == [
        ("compaction", 1234),  # the summary of the turn that left the window, a call of its own
        ("turn", 2345),
        ("turn", 3456),
    ]
    write = failed_attempt_write(loaded, 4, turn.answered, ModelTimeout("stalled"), throttles=0)
    assert write.attempt["turn_number"] == 4 and write.attempt["error"] == "ModelTimeout: stalled"
    assert [c["kind"] for c in write.calls] == ["compaction", "turn", "turn"]
    assert write.spent["input_tokens"] == 1234 + 2345 + 3456 and write.spent["output_tokens"] == 56 + 67 + 78
    assert write.spent["model_calls"] == 3 and write.spent["latency_ms"] == 120


def test_each_calls_cost_telescopes_to_the_cost_of_the_experiments_tokens():
    usages = [(333_333, 7), (1, 1), (777_777, 333)]
    loaded, turn = failing_turn("actions", PRICED, usages, ModelTimeout("stalled"))
    write = failed_attempt_write(loaded, 4, turn.answered, ModelTimeout("stalled"), throttles=0)

    def cost(tokens_in: int, tokens_out: int) -> Decimal:
        priced = Decimal(tokens_in) * Decimal("0.37") + Decimal(tokens_out) * Decimal("1.13")
        return (priced / 1_000_000).quantize(Decimal("0.000001"))

    before, after = cost(999, 3), cost(999 + 1_111_111, 3 + 341)
    calls = sum(Decimal(str(c["cost_usd"])) for c in write.calls)
    assert calls == Decimal(str(write.spent["cost_usd"])) == after - before


def test_the_throttles_of_the_call_that_failed_are_counted_with_the_answered_calls():
    throttled = ModelThrottled("slow down", throttles=3)
    loaded, turn = failing_turn("actions", {}, [(10, 1)], throttled)
    write = failed_attempt_write(loaded, 4, turn.answered, throttled, throttles=throttled.throttles)
    assert write.attempt["throttles"] == 3 and write.spent["throttles"] == 3 and write.spent["model_calls"] == 1
    assert write.spent["cost_usd"] is None  # unpriced here: unknown, never $0; its tokens are counted all the same
    assert write.spent["input_tokens"] == 10


def test_every_attempt_has_an_id_of_its_own():
    loaded, turn = failing_turn("actions", {}, [(10, 1)], ModelTimeout("stalled"))
    ids = {failed_attempt_write(loaded, 4, turn.answered, ModelTimeout("x"), 0).attempt["attempt"] for _ in range(3)}
    assert len(ids) == 3


def test_the_token_budget_counts_the_committed_turns_not_the_failed_attempts():
    loaded = state(MAZE, "actions")
    experiment = replace(
        loaded.experiment,
        config=ExperimentConfig.of({"maxTotalTokens": 5000}),
        input_tokens=4000,
        output_tokens=400,
        failed_input_tokens=1500,  # a retried turn is the infrastructure's doing, not the agent's
        failed_output_tokens=100,
    )
    agent = Recorder()
    Turn(replace(loaded, experiment=experiment), MAZE).play(agent)
    assert agent.requests[0].messages[-1].content["tokens_left"] == 5000 - (4400 - 1600)
    agent = Recorder()
    Turn(loaded, MAZE).play(agent)  # no budget: nothing said about tokens
    assert "tokens_left" not in agent.requests[0].messages[-1].content
