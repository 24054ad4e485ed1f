"""Every flow task's input and output is a model (``oriole.lifecycle.task_io``), and the flows agree with them: each
task state's ``Parameters`` sends exactly fields its handler's request model has (every required one among them),
and each ``ResultSelector`` reads only fields its result model writes, in both flow files."""

from __future__ import annotations

import importlib
import inspect

import pytest

from oriole import flows
from oriole.errors import InvalidExecutionInput
from oriole.handlers import FUNCTIONS, check_progress
from oriole.lifecycle.task_io import TASKS, ProgressDecision, ProgressRequest, TurnResult, task
from oriole.statuses import NextStep


class Context:
    """What the Powertools logger reads of a Lambda context."""

    function_name = "oriole-CheckProgress"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:oriole-CheckProgress"
    aws_request_id = "req-1"
    memory_limit_in_mb = 512


WHOLE_STATE = "$"  # ``"Payload.$": "$"``: the task is given the whole state (FinalizeFailure, PlanSweep)


def task_states(states: dict) -> list[tuple[str, dict]]:
    """Every Task state of a flow, those inside its maps and parallel branches too."""
    found = []
    for name, state in states.items():
        if state["Type"] == "Task":
            found.append((name, state))
        for inner in [state.get("ItemProcessor"), *state.get("Branches", [])]:
            if inner:
                found += task_states(inner["States"])
    return found


def field_names(model) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items()}


def required(model) -> set[str]:
    return {field.alias or name for name, field in model.model_fields.items() if field.is_required()}


TASK_STATES = [
    (flow, name, state)
    for flow in (flows.EXPERIMENT, flows.SWEEP)
    for name, state in task_states(flows.definition(flow)["States"])
]


def handler_of(state: dict) -> str:
    """The dotted handler a task state's function runs, its module imported: decorating registers its models, so
    each test sees them whichever ran first."""
    handler = FUNCTIONS[state["Parameters"]["FunctionName"][2:-1]]
    importlib.import_module(handler.rsplit(".", 1)[0])
    return handler


def test_every_flow_task_is_a_decorated_handler_with_its_models():
    assert len(TASK_STATES) >= 11
    for _flow, name, state in TASK_STATES:
        handler = handler_of(state)
        assert handler in TASKS, f"{name}: {handler} is not a @task handler"


@pytest.mark.parametrize(("flow", "name", "state"), TASK_STATES, ids=[n for _, n, _ in TASK_STATES])
def test_each_task_state_sends_its_request_fields_and_reads_its_result_fields(flow, name, state):
    request, result = TASKS[handler_of(state)]
    payload = state["Parameters"].get("Payload")
    if payload is None:
        assert state["Parameters"]["Payload.$"] == WHOLE_STATE, name
    else:
        sent = {key.removesuffix(".$") for key in payload}
        assert sent <= field_names(request), f"{name} sends {sorted(sent - field_names(request))}, not {request}"
        assert required(request) <= sent, f"{name} leaves out {sorted(required(request) - sent)}"
    read = {
        path.removeprefix("$.Payload.").split(".")[0]
        for key, path in (state.get("ResultSelector") or {}).items()
        if key.endswith(".$")
    }
    assert read <= field_names(result), f"{name} reads {sorted(read - field_names(result))}, not in {result}"


def test_an_event_that_does_not_parse_is_the_flows_named_error_listing_every_field():
    with pytest.raises(InvalidExecutionInput, match=r"invalid CheckProgress input: experimentId: .*turnInExecution"):
        check_progress.handler({"experimentId": "seven", "turnInExecution": 0}, Context())


def test_a_handler_returns_the_state_in_the_flows_names_and_only_its_result_model():
    @task(ProgressRequest, ProgressDecision, "test input")
    def decides(request, context):
        return ProgressDecision(decision=NextStep.CONTINUE, reason=None, actions=request.experimentId, goal_found=False)

    assert decides({"experimentId": 4, "turnInExecution": 1}, None) == {
        "decision": "continue",
        "reason": None,
        "actions": 4,
        "goalFound": False,
    }

    @task(ProgressRequest, TurnResult, "test input")
    def wrong(request, context):
        return ProgressDecision(decision=NextStep.CONTINUE, reason=None, actions=0, goal_found=False)

    with pytest.raises(TypeError, match="returned ProgressDecision, not TurnResult"):
        wrong({"experimentId": 4, "turnInExecution": 1}, None)
    assert inspect.unwrap(decides).__name__ == "decides"
