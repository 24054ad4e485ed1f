"""The one ASL file: the states the design names, a Catch on every Task, placeholders for every function."""

import json
import re
from pathlib import Path

from oriole.handlers import FUNCTIONS

ASL = json.loads((Path(__file__).parents[2] / "infra" / "state_machine.asl.json").read_text())
STATES = ASL["States"]


def test_the_design_states_are_all_there():
    for name in ["StartExperiment", "AgentProviderRouter", "InvokeBedrockAgent", "InvokeOllamaAgent",
                 "InvokeBaselineAgent", "CheckProgress", "ConditionCheck", "ContinueLoop", "FinalizeSuccess",
                 "FinalizeTimeout", "FinalizeFailure", "ContinueAsNew", "ExperimentFailed"]:
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
    assert routes == {"ollama": "InvokeOllamaAgent", "baseline": "InvokeBaselineAgent"}


def test_every_placeholder_is_a_known_function_and_every_function_is_used():
    placeholders = set(re.findall(r"\$\{(\w+)\}", json.dumps(ASL)))
    assert placeholders == set(FUNCTIONS)


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
