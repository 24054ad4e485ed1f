"""The sweep flow's ASL file: a plan, then a Parallel of one distributed map per provider, each capped from the
plan, whose items catch every failure, keep their output tiny and loop Wait/check until the experiment ends."""

import json
import re

import pytest

from oriole import flows
from oriole.handlers import FUNCTIONS
from oriole.inputs import PROVIDERS

ASL = flows.definition(flows.SWEEP)
STATES = ASL["States"]
MAPS = {branch["StartAt"]: branch["States"][branch["StartAt"]] for branch in STATES["RunRepetitions"]["Branches"]}


def test_the_sweep_plans_then_runs_the_providers_side_by_side_then_summarizes():
    assert ASL["StartAt"] == "PlanSweep" and STATES["PlanSweep"]["Next"] == "RunRepetitions"
    parallel = STATES["RunRepetitions"]
    assert parallel["Type"] == "Parallel" and parallel["Next"] == "SummarizeSweep"
    assert parallel["ResultPath"] is None  # the maps' results never reach the parent's state
    assert STATES["SummarizeSweep"]["End"] is True
    assert all(len(branch["States"]) == 1 for branch in parallel["Branches"])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_provider_has_a_distributed_map_capped_from_the_plan(provider):
    [state] = [m for m in MAPS.values() if m["ItemsPath"] == f"$.indices.{provider}"]
    assert state["Type"] == "Map" and state["MaxConcurrencyPath"] == f"$.caps.{provider}"
    assert state["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert state["ToleratedFailurePercentage"] == 100  # no item's failure fails the sweep
    assert state["ResultPath"] is None
    assert state["ItemSelector"] == {"index.$": "$$.Map.Item.Value", "sweep.$": "$.sweep",
                                     "waitSeconds.$": "$.waitSeconds"}


def test_every_providers_map_runs_the_same_item_flow():
    processors = [json.dumps(m["ItemProcessor"], sort_keys=True) for m in MAPS.values()]
    assert len(processors) == len(PROVIDERS) and len(set(processors)) == 1


ITEM = next(iter(MAPS.values()))["ItemProcessor"]["States"]


def test_every_item_task_catches_everything_and_the_item_ends_with_its_outcome_only():
    tasks = {name: state for name, state in ITEM.items() if state["Type"] == "Task"}
    assert set(tasks) == {"StartRepetition", "CheckRepetition"}
    for name, state in tasks.items():
        assert state["Catch"] == [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                                   "Next": "RepetitionFailed"}], name
    ends = {name: state for name, state in ITEM.items() if state.get("End")}
    assert ends == {"ExperimentClosed": {**ITEM["ExperimentClosed"], "InputPath": "$.check.outcome"},
                    "NothingStarted": {**ITEM["NothingStarted"], "InputPath": "$.repetition.outcome"},
                    "RepetitionFailed": {**ITEM["RepetitionFailed"], "Result": "error"}}


def test_an_item_waits_and_checks_until_the_experiment_is_closed():
    assert ITEM["IsStarted"]["Choices"][0]["Next"] == "WaitForExperiment"
    assert ITEM["WaitForExperiment"] == {"Type": "Wait", "SecondsPath": "$.waitSeconds", "Next": "CheckRepetition"}
    assert ITEM["CheckRepetition"]["Next"] == "IsClosed"
    assert ITEM["IsClosed"]["Default"] == "WaitForExperiment"
    assert ITEM["IsClosed"]["Choices"] == [{"Variable": "$.check.closed", "BooleanEquals": True,
                                            "Next": "ExperimentClosed"}]


def test_the_experiment_flow_is_a_placeholder_and_every_function_is_known():
    placeholders = set(re.findall(r"\$\{(\w+)\}", flows.definition_text(flows.SWEEP)))
    assert placeholders == flows.functions(flows.SWEEP) | {flows.EXPERIMENT_STATE_MACHINE}
    assert flows.functions(flows.SWEEP) <= set(FUNCTIONS)
    assert not flows.functions(flows.SWEEP) & flows.functions(flows.EXPERIMENT)


@pytest.mark.parametrize("states, start", [(STATES, ASL["StartAt"]), (ITEM, "StartRepetition")])
def test_every_state_is_reachable(states, start):
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        state = states[name]
        todo += [state[k] for k in ("Next", "Default") if k in state]
        todo += [c["Next"] for c in state.get("Choices", []) + state.get("Catch", [])]
    assert seen == set(states)
