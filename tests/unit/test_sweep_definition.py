"""The sweep flow's ASL file: generated from ``oriole.flows.sweep_flow`` (the file and the generator agree), a plan,
then a Parallel of one distributed map per provider, each capped from the plan, whose items catch every
failure, retry as the experiment flow's tasks do, keep their output tiny, loop Wait/check until the experiment
ends and keep their slot while a check fails; every state name unique in the whole state machine."""

import json
import re

import pytest

from oriole import flows
from oriole.catalog import BY_KEY
from oriole.core import sweep_plan
from oriole.core.sweep_plan import MAX_EXPERIMENTS, SweepRun
from oriole.flows import sweep_flow
from oriole.handlers import FUNCTIONS
from oriole.provider_registry import NAMES

ASL = flows.definition(flows.SWEEP)
STATES = ASL["States"]
MAPS = {branch["StartAt"]: branch["States"][branch["StartAt"]] for branch in STATES["RunRepetitions"]["Branches"]}


def test_the_shipped_file_is_what_the_generator_writes():
    assert flows.definition_text(flows.SWEEP) == sweep_flow.generate(), (
        "sweep.asl.json and oriole/flows/sweep_flow.py disagree: run `make flows` and commit the file"
    )


def test_the_sweep_plans_then_runs_the_providers_side_by_side_then_summarizes():
    assert ASL["StartAt"] == "PlanSweep" and STATES["PlanSweep"]["Next"] == "RunRepetitions"
    parallel = STATES["RunRepetitions"]
    assert parallel["Type"] == "Parallel" and parallel["Next"] == "SummarizeSweep"
    assert parallel["ResultPath"] is None  # the maps' results never reach the parent's state
    assert STATES["SummarizeSweep"]["End"] is True
    assert all(len(branch["States"]) == 1 for branch in parallel["Branches"])


def provider_map(provider: str) -> dict:
    [state] = [m for m in MAPS.values() if m["ItemsPath"] == f"$.indices.{provider}"]
    return state


@pytest.mark.parametrize("provider", NAMES)
def test_each_provider_has_a_distributed_map_capped_from_the_plan(provider):
    state = provider_map(provider)
    assert state["Type"] == "Map" and state["MaxConcurrencyPath"] == f"$.caps.{provider}"
    assert state["Label"] == sweep_flow.LABELS[provider]
    assert state["ItemProcessor"]["ProcessorConfig"] == {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}
    assert state["ToleratedFailureCount"] == MAX_EXPERIMENTS  # every item may fail: no item's failure fails the sweep
    assert "ToleratedFailurePercentage" not in state
    assert state["ResultPath"] is None and state["OutputPath"] is None  # the Parallel gets {} from each branch
    assert state["ItemSelector"] == {
        "index.$": "$$.Map.Item.Value",
        "sweep.$": "$.sweep",
        "waitSeconds.$": "$.waitSeconds",
        "check": {"failedChecks": 0, "followedSeconds": 0, "waitSeconds.$": "$.waitSeconds"},
    }
    given = {"index.$": 7, "sweep.$": {"id": "s"}, "waitSeconds.$": 30, "check": {"waitSeconds.$": 30}}
    made = {key.removesuffix(".$"): value for key, value in state["ItemSelector"].items() if key != "check"}
    assert sweep_flow.item_input(7, {"id": "s"}, 30) == {
        **{k: given[f"{k}.$"] for k in made},
        "check": {**sweep_flow.FIRST_CHECK, "waitSeconds": 30},
    }


def state_names(states: dict) -> list[str]:
    """Every state name under ``states``, those of maps' item flows and parallels' branches included."""
    names = []
    for name, state in states.items():
        names.append(name)
        for nested in [state.get("ItemProcessor", {}), *state.get("Branches", [])]:
            names += state_names(nested.get("States", {}))
    return names


def test_every_state_name_is_unique_in_the_whole_state_machine():
    """CreateStateMachine refuses a name used twice anywhere (DUPLICATE_STATE_NAMES): each map's item states
    carry its provider's label."""
    names = state_names(STATES)
    assert len(names) == len(set(names))
    for provider, label in sweep_flow.LABELS.items():
        item = provider_map(provider)["ItemProcessor"]
        assert item["StartAt"] == f"{label}StartRepetition"
        assert all(name.startswith(label) for name in item["States"])


def test_every_providers_map_runs_the_same_item_flow_but_for_its_names():
    processors = {json.dumps(m["ItemProcessor"], sort_keys=True).replace(f'"{m["Label"]}', '"') for m in MAPS.values()}
    assert len(MAPS) == len(NAMES) + len(sweep_plan.LANES) and len(processors) == 1


def test_the_providers_are_data():
    """The generator writes a map for each provider it is given (a later provider registry feeds it), then one for
    each lane."""
    two = sweep_flow.definition({"baseline": "Baseline", "acme": "AcmeCloud"})
    maps = [b["States"][b["StartAt"]] for b in two["States"]["RunRepetitions"]["Branches"]]
    lanes = list(sweep_plan.LANES)
    assert [m["ItemsPath"] for m in maps] == [f"$.indices.{g}" for g in ("baseline", "acme", *lanes)]
    assert [m["ItemProcessor"]["StartAt"] for m in maps][:3] == [
        "BaselineStartRepetition",
        "AcmeCloudStartRepetition",
        "Lane1StartRepetition",
    ]
    names = state_names(two["States"])
    assert len(names) == len(set(names))


ITEM = provider_map("baseline")["ItemProcessor"]["States"]
LABEL = sweep_flow.LABELS["baseline"]


def item(state: str) -> dict:
    return ITEM[LABEL + state]


def test_every_item_task_catches_everything_and_every_end_succeeds_with_an_empty_output():
    """The map keeps each item's output in its result (20,000 of them must stay far below 256 KiB) and a failed
    item's result would carry its input, the sweep: every end succeeds with {}."""
    tasks = {name.removeprefix(LABEL): state for name, state in ITEM.items() if state["Type"] == "Task"}
    assert set(tasks) == {"StartRepetition", "CheckRepetition"}
    for name, failed in (("StartRepetition", "StartFailed"), ("CheckRepetition", "CheckFailed")):
        assert tasks[name]["Catch"] == [
            {"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": LABEL + failed}
        ], name
    ends = {
        name.removeprefix(LABEL): state
        for name, state in ITEM.items()
        if state.get("End") or state["Type"] in ("Succeed", "Fail")
    }
    assert set(ends) == {"ExperimentClosed", "NothingStarted", "StartFailed", "GaveUpChecking"}
    assert all(state["Type"] == "Pass" and state["OutputPath"] is None for state in ends.values())


def test_an_item_waits_and_checks_until_the_experiment_is_closed():
    """Each look is told the sweep's wait and the time followed, the wait just done included, and answers the
    next wait, which the Wait state takes."""
    assert item("IsStarted")["Choices"][0]["Next"] == LABEL + "WaitForExperiment"
    assert item("WaitForExperiment") == {
        "Type": "Wait",
        "SecondsPath": "$.check.waitSeconds",
        "Next": LABEL + "CheckRepetition",
    }
    assert item("CheckRepetition")["Parameters"]["Payload"] == {
        "executionArn.$": "$.repetition.executionArn",
        "waitSeconds.$": "$.waitSeconds",
        "followedSeconds.$": "States.MathAdd($.check.followedSeconds, $.check.waitSeconds)",
    }
    assert item("CheckRepetition")["ResultSelector"] == {
        "closed.$": "$.Payload.closed",
        "outcome.$": "$.Payload.outcome",
        "waitSeconds.$": "$.Payload.waitSeconds",
        "followedSeconds.$": "$.Payload.followedSeconds",
        "failedChecks": 0,
    }
    assert item("CheckRepetition")["Next"] == LABEL + "IsClosed"
    assert item("IsClosed")["Default"] == LABEL + "WaitForExperiment"
    assert item("IsClosed")["Choices"] == [
        {"Variable": "$.check.closed", "BooleanEquals": True, "Next": LABEL + "ExperimentClosed"}
    ]


def test_a_failed_check_keeps_the_slot_and_checks_again_until_too_many_in_a_row():
    """The experiment may still run when its check fails: the item waits and checks again (the cap holds); a
    check that answers resets the count; only MAX_FAILED_CHECKS failures in a row end the item."""
    check = item("CheckRepetition")
    assert check["ResultPath"] == "$.check" and check["ResultSelector"]["failedChecks"] == 0
    failed = item("CheckFailed")
    assert failed["Type"] == "Pass" and failed["ResultPath"] == "$.check" and failed["Next"] == LABEL + "MayCheckAgain"
    assert failed["Parameters"] == {
        "failedChecks.$": "States.MathAdd($.check.failedChecks, 1)",
        "waitSeconds.$": "$.check.waitSeconds",  # the same wait: no growth on failure
        "followedSeconds.$": "States.MathAdd($.check.followedSeconds, $.check.waitSeconds)",
    }
    assert item("MayCheckAgain")["Choices"] == [
        {
            "Variable": "$.check.failedChecks",
            "NumericLessThan": sweep_flow.MAX_FAILED_CHECKS,
            "Next": LABEL + "WaitForExperiment",
        }
    ]
    assert item("MayCheckAgain")["Default"] == LABEL + "GaveUpChecking"


def tasks_of(states: dict) -> dict[str, dict]:
    """Every Task state under ``states``, nested ones included."""
    found = {}
    for name, state in states.items():
        if state["Type"] == "Task":
            found[name] = state
        for nested in [state.get("ItemProcessor", {}), *state.get("Branches", [])]:
            found.update(tasks_of(nested.get("States", {})))
    return found


def retried(task: dict) -> set[str]:
    return {error for retrier in task["Retry"] for error in retrier["ErrorEquals"]}


def test_every_sweep_task_retries_as_the_experiment_flows_tasks_do():
    """Each retrier of the sweep is one of the experiment flow's, verbatim; every task retries Lambda's transient
    errors and a full database (DatabaseBusy); StartRepetition retries a throttled start as ContinueAsNew does."""
    experiment = tasks_of(flows.definition(flows.EXPERIMENT)["States"])
    known = {json.dumps(retrier, sort_keys=True) for task in experiment.values() for retrier in task["Retry"]}
    sweep = tasks_of(STATES)
    assert len(sweep) == 2 + 2 * (len(NAMES) + len(sweep_plan.LANES))
    for name, task in sweep.items():
        assert {json.dumps(retrier, sort_keys=True) for retrier in task["Retry"]} <= known, name
        assert {
            "Lambda.ServiceException",
            "Lambda.TooManyRequestsException",
            "Lambda.Unknown",
            "OperationalError",
            "DatabaseBusy",
        } <= retried(task), name
        assert ("StartExecutionThrottled" in retried(task)) == name.endswith("StartRepetition"), name
    assert "StartExecutionThrottled" in retried(experiment["ContinueAsNew"])


def test_the_experiment_flow_is_a_placeholder_and_every_function_is_known():
    placeholders = set(re.findall(r"\$\{(\w+)\}", flows.definition_text(flows.SWEEP)))
    assert placeholders == flows.functions(flows.SWEEP) | {flows.EXPERIMENT_STATE_MACHINE}
    assert flows.functions(flows.SWEEP) <= set(FUNCTIONS)
    assert not flows.functions(flows.SWEEP) & flows.functions(flows.EXPERIMENT)


@pytest.mark.parametrize("states, start", [(STATES, ASL["StartAt"]), (ITEM, LABEL + "StartRepetition")])
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


# History events as Step Functions writes them for the states of an item: a Wait, Choice or Pass is entered and
# exited; a Lambda task is entered and exited, and each attempt is scheduled, started and succeeds or fails.
STATE_EVENTS = {"Wait": 2, "Choice": 2, "Pass": 2}
HISTORY_LIMIT = 25_000  # events per execution, a map item's child execution included


def task_events(attempts: int = 1) -> int:
    """A Lambda task's events: entered and exited, and each attempt scheduled, started and ended."""
    return 2 + 3 * attempts


def most_attempts(task: dict) -> int:
    """The first attempt and every retry each retrier allows (each counts the attempts of its own errors)."""
    return 1 + sum(retrier["MaxAttempts"] for retrier in task["Retry"])


def looks_to_follow(seconds: int, wait_seconds: int) -> int:
    """The looks an item makes at an experiment that runs ``seconds``, as the flow runs them: wait (the sweep's
    wait first), look (the time followed grows by that wait; the look answers the next wait), and again."""
    followed, wait, looks = 0, wait_seconds, 0
    while followed < seconds:
        followed += wait
        looks += 1
        wait = sweep_plan.next_check_wait(followed, wait_seconds)
    return looks


def test_an_item_follows_the_longest_experiment_within_its_history():
    """The longest an experiment stays open: the longest maxDurationMinutes the catalog allows, plus the execution
    timeout (its last execution starts before that limit and, if the graceful end fails, Step Functions ends it
    at its timeout; the status-change finalizer closes the row at once). An item follows it for that long, at the
    shortest wait_seconds a sweep may ask, within its 25,000 history events: its start and end with every retry
    spent, every look that answers, and besides a whole run of MAX_FAILED_CHECKS failed looks each spending
    every retry. At the constant default wait of 30 s (the waits not growing) it would need over 7 times the limit."""
    wait, check, closed = item("WaitForExperiment"), item("CheckRepetition"), item("IsClosed")
    failed, again, start = item("CheckFailed"), item("MayCheckAgain"), item("StartRepetition")
    assert (wait["Next"], check["Next"], closed["Default"]) == (
        LABEL + "CheckRepetition",
        LABEL + "IsClosed",
        LABEL + "WaitForExperiment",
    )  # a look: these three
    assert (check["Catch"][0]["Next"], failed["Next"], again["Choices"][0]["Next"]) == (
        LABEL + "CheckFailed",
        LABEL + "MayCheckAgain",
        LABEL + "WaitForExperiment",
    )  # a failed look: four
    look = STATE_EVENTS[wait["Type"]] + task_events() + STATE_EVENTS[closed["Type"]]
    failed_look = (
        STATE_EVENTS[wait["Type"]]
        + task_events(most_attempts(check))
        + STATE_EVENTS[failed["Type"]]
        + STATE_EVENTS[again["Type"]]
    )
    ends = (
        1
        + task_events(most_attempts(start))
        + STATE_EVENTS[item("IsStarted")["Type"]]
        + STATE_EVENTS[item("ExperimentClosed")["Type"]]
        + 1
    )  # ExecutionStarted ... ExecutionSucceeded
    assert (look, failed_look, ends) == (9, 59, 71)

    longest = int(BY_KEY["maxDurationMinutes"].maximum * 60) + BY_KEY["maxExecutionSeconds"].default
    shortest_wait = next(m.ge for m in SweepRun.model_fields["wait_seconds"].metadata if hasattr(m, "ge"))
    assert (longest, shortest_wait) == (7 * 24 * 3600 + 8460, 1)
    looks = looks_to_follow(longest, shortest_wait)
    events = ends + looks * look + sweep_flow.MAX_FAILED_CHECKS * failed_look
    assert events <= HISTORY_LIMIT, f"{looks} looks: {events} events"
    assert looks < 1.2 * longest / sweep_plan.MAX_CHECK_WAIT_SECONDS  # the waits reach their cap within hours
    assert all(looks_to_follow(longest, w) <= looks for w in (30, 600, 3600))  # a longer wait_seconds: fewer looks
    assert longest // 30 * look > 7 * HISTORY_LIMIT  # the constant default wait of 30 s could not


def test_the_wait_grows_with_the_time_followed_between_the_sweeps_wait_and_the_cap():
    assert [sweep_plan.next_check_wait(followed, 1) for followed in (0, 19, 20, 35, 5999, 6000, 10**6)] == [
        1,
        1,
        2,
        3,
        599,
        600,
        600,
    ]
    assert sweep_plan.next_check_wait(100, 30) == 30 and sweep_plan.next_check_wait(3000, 30) == 300
    assert sweep_plan.next_check_wait(10**6, 3600) == 3600  # the sweep's own wait wins when it is longer than the cap
