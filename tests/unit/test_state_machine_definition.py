"""The one ASL file: the states the design names, a Catch on every Task, placeholders for every function."""

import json
import re

import pytest

from oriole import flows
from oriole.handlers import FUNCTIONS

ASL = flows.definition()
STATES = ASL["States"]


def test_the_design_states_are_all_there():
    for name in [
        "StartExperiment",
        "AgentProviderRouter",
        "InvokeBedrockAgent",
        "InvokeOllamaAgent",
        "InvokeOpenAIAgent",
        "InvokeBaselineAgent",
        "CheckProgress",
        "ConditionCheck",
        "ContinueLoop",
        "FinalizeSuccess",
        "FinalizeTimeout",
        "FinalizeFailure",
        "ContinueAsNew",
        "ExperimentFailed",
    ]:
        assert name in STATES, name


def test_every_task_catches_everything_into_the_failure_path():
    for name, state in STATES.items():
        if state["Type"] != "Task":
            continue
        catch = state.get("Catch", [])
        assert catch and catch[0]["ErrorEquals"] == ["States.ALL"], name
        expected = "ExperimentFailed" if name == "FinalizeFailure" else "FinalizeFailure"
        assert catch[0]["Next"] == expected, name


def test_the_failure_path_ends_in_a_fail_state_with_the_caught_error():
    assert STATES["FinalizeFailure"]["Next"] == "ExperimentFailed"
    assert STATES["ExperimentFailed"] == {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"}


def test_router_defaults_to_bedrock_and_routes_the_other_providers():
    router = STATES["AgentProviderRouter"]
    assert router["Default"] == "InvokeBedrockAgent"
    routes = {c["StringEquals"]: c["Next"] for c in router["Choices"]}
    assert routes == {
        "ollama": "InvokeOllamaAgent",
        "openai": "InvokeOpenAIAgent",
        "baseline": "InvokeBaselineAgent",
        "replay": "InvokeReplayAgent",
    }


def test_every_model_task_retries_and_catches_alike():
    """The three model tasks differ only in their function: throttles, an unavailable model and a timeout are
    retried the same way whoever serves the model."""

    def without_function(state: dict) -> dict:
        return {**state, "Parameters": {**state["Parameters"], "FunctionName": None}}

    bedrock = without_function(STATES["InvokeBedrockAgent"])
    assert without_function(STATES["InvokeOllamaAgent"]) == bedrock == without_function(STATES["InvokeOpenAIAgent"])
    assert {"ModelThrottled", "ModelUnavailable", "ModelTimeout"} <= set(retried(bedrock))


def test_every_placeholder_is_a_known_function_and_every_function_is_used():
    placeholders = set(re.findall(r"\$\{(\w+)\}", json.dumps(ASL)))
    assert placeholders == flows.functions(flows.EXPERIMENT) <= set(FUNCTIONS)
    assert set().union(*(flows.functions(flow) for flow in flows.FLOWS)) == set(FUNCTIONS)  # each used by a flow


def test_every_state_is_reachable_from_the_start():
    seen, todo = set(), [ASL["StartAt"]]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        state = STATES[name]
        todo += [state[k] for k in ("Next", "Default") if k in state]
        todo += [c["Next"] for c in state.get("Choices", []) + state.get("Catch", [])]
    assert seen == set(STATES)


def test_loop_state_stays_small_and_counts_turns():
    loop = STATES["ContinueLoop"]["Parameters"]
    assert set(loop) == {"experimentId.$", "llmProvider.$", "turnNumber.$", "turnInExecution.$", "part.$"}
    assert loop["turnNumber.$"] == "States.MathAdd($.turnNumber, 1)"


def test_condition_check_routes_every_decision_of_check_progress():
    from oriole.statuses import NextStep

    check = STATES["ConditionCheck"]
    routes = {c["StringEquals"]: c["Next"] for c in check["Choices"]}
    assert set(routes) | {NextStep.CONTINUE} == set(NextStep)
    assert check["Default"] == "ContinueLoop"


@pytest.mark.parametrize("decision, state", [("stalled", "AgentStalled"), ("gave_up", "AgentGaveUp")])
def test_an_agent_ending_fails_the_experiment_with_check_progress_reason_and_a_named_error(decision, state):
    assert {"Variable": "$.progress.decision", "StringEquals": decision, "Next": state} in STATES["ConditionCheck"][
        "Choices"
    ]
    ending = STATES[state]
    assert ending["Type"] == "Pass" and ending["Next"] == "FinalizeFailure"
    assert ending["Parameters"] == {
        "experimentId.$": "$.experimentId",
        "reason.$": "$.progress.reason",
        "error": {"Error": state, "Cause.$": "$.progress.reason"},
    }


def states_of(asl: dict) -> list[dict]:
    """Every state of a flow, those inside its Map and Parallel states included."""
    found = []
    for state in asl["States"].values():
        found.append(state)
        for inner in [state.get("ItemProcessor") or state.get("Iterator"), *state.get("Branches", [])]:
            if inner:
                found += states_of(inner)
    return found


def retried(state: dict) -> dict[str, dict]:
    return {name: retrier for retrier in state.get("Retry", []) for name in retrier["ErrorEquals"]}


def test_every_task_retries_transient_lambda_errors_with_backoff():
    for name, state in STATES.items():
        if state["Type"] != "Task":
            continue
        errors = retried(state)
        for error in ("Lambda.ServiceException", "Lambda.ClientExecutionTimeoutException", "Lambda.Unknown"):
            assert error in errors, (name, error)
            assert errors[error]["BackoffRate"] >= 2 and errors[error]["JitterStrategy"] == "FULL", (name, error)


def test_every_task_that_uses_the_database_retries_a_lost_connection():
    """The store reconnects once in the task (on AWS waiting within its connect budget for a database that resumes);
    a database that stays away fails the task with OperationalError, which the state machine retries (every task is
    safe to run twice). ContinueAsNew too: it records the continuation token's hash."""
    for name, state in STATES.items():
        if state["Type"] != "Task":
            continue
        retrier = retried(state).get("OperationalError")
        assert retrier and retrier["MaxAttempts"] >= 2 and retrier["IntervalSeconds"] >= 2, name
        assert retried(state).get("DatabaseBusy") is retrier, name  # no free connection slot: the same retries


def throttle_waits(retrier: dict) -> list[float]:
    """The longest wait before each retry (full jitter waits anywhere from none to this)."""
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return [min(cap, retrier["IntervalSeconds"] * retrier["BackoffRate"] ** n) for n in range(retrier["MaxAttempts"])]


@pytest.mark.parametrize("flow", [flows.EXPERIMENT, flows.SWEEP])
def test_lambda_throttling_is_retried_first_seconds_apart_for_minutes(flow):
    """A new account's concurrency is often 10: a task Lambda throttles waits for a slot (its first retries
    seconds apart, minutes in all) instead of ending its experiment as an error, in both flows; the throttle's
    retrier comes first (Step Functions uses the first that names the error) and names nothing else."""
    tasks = [
        state
        for state in states_of(flows.definition(flow))
        if state["Type"] == "Task" and state["Resource"] == "arn:aws:states:::lambda:invoke"
    ]
    assert tasks
    for state in tasks:
        first = state["Retry"][0]
        assert first["ErrorEquals"] == ["Lambda.TooManyRequestsException"] and first["JitterStrategy"] == "FULL"
        waits = throttle_waits(first)
        assert waits[0] <= 5 and 180 <= sum(waits) <= 900, waits
        assert all("Lambda.TooManyRequestsException" not in r["ErrorEquals"] for r in state["Retry"][1:])


def test_throttled_aws_calls_are_retried_by_name():
    """Parameter Store at the start and StartExecution in ContinueAsNew: each throttle that outlasted
    botocore's own retries is a named error the state machine retries with backoff and jitter."""
    for state, error in (("StartExperiment", "ParameterStoreThrottled"), ("ContinueAsNew", "StartExecutionThrottled")):
        retrier = retried(STATES[state]).get(error)
        assert retrier and retrier["MaxAttempts"] >= 3 and retrier["JitterStrategy"] == "FULL", state
        assert retrier.get("MaxDelaySeconds"), state


def test_check_progress_gets_the_execution_start_to_continue_as_new_before_the_timeout():
    assert STATES["CheckProgress"]["Parameters"]["Payload"]["executionStartTime.$"] == "$$.Execution.StartTime"


def test_the_execution_input_is_nested_first_so_that_an_input_of_any_shape_can_be_caught():
    assert ASL["StartAt"] == "ReceiveInput"
    assert STATES["ReceiveInput"] == {
        **STATES["ReceiveInput"],
        "Type": "Pass",
        "Next": "StartExperiment",
        "Parameters": {"input.$": "$", "executionArn.$": "$$.Execution.Id"},
    }
    assert STATES["StartExperiment"]["Parameters"]["Payload"]["input.$"] == "$.input"
