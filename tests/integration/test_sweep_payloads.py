"""The largest sweep the flow allows keeps every state of the sweep flow far below Step Functions' limit of
256 KiB (262,144 bytes of UTF-8 JSON for a state's input or output, a task's result, a child execution's input).

The worst case comes from the real code and the real limits: PlanSweep's task (``sweep_tasks.plan_run``, on the
test database) plans a sweep of ``sweeps.MAX_EXPERIMENTS`` experiments of which none ran, so every index is
pending (the plan's indices are distinct integers below MAX_EXPERIMENTS: all of them is their longest list);
the sweep it carries is then grown to ``sweeps.MAX_INPUT_BYTES``, the most plan_run lets through. Every payload
follows from the shipped ASL file (its Parameters, ResultSelector, ResultPath, ItemSelector, OutputPath),
evaluated here on that plan:

- PlanSweep's task result (with the invoke's metadata) and output; the Parallel's and each map's input;
- each map's result (an item's output is {}; all MAX_EXPERIMENTS items in one map) and output; the
  Parallel's result (every branch's output) and output;
- each child execution's input, its tasks' payloads and results, and its largest state (the started
  execution's ARN, the check, and after a failed task the error, whose cause Step Functions holds to 32,768
  characters);
- SummarizeSweep's payload, task result and output.

Sizes are measured as Python writes JSON (", " and ": " separators), more than the compact form.
"""

from __future__ import annotations

import json
import uuid

import pytest

from oriole import flows
from oriole.core.sweep_plan import LANES, MAX_CHECK_WAIT_SECONDS, MAX_EXPERIMENTS, MAX_INPUT_BYTES
from oriole.errors import SweepFileError
from oriole.flows.sweep_flow import LANE_LABELS
from oriole.lifecycle import sweep_tasks
from oriole.lifecycle.task_io import SweepRequest, SweepSummaryRequest
from oriole.provider_registry import NAMES

LIMIT = 256 * 1024
MARGIN = 48 * 1024  # every payload stays at least this far below the limit
ASL = flows.definition(flows.SWEEP)
LONGEST_ARN = f"arn:aws-us-gov:states:ap-southeast-5:123456789012:execution:{'s' * 80}:{'e' * 80}"
ERROR = {"Error": "E" * 256, "Cause": "c" * 32_768}

WHERE = sweep_tasks.Deployment(lambda: ["v1"], dict, lambda: None)  # PlanSweep, where nothing else is known


def size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def path(expression: str, data, context: dict):
    """The value a reference path (``$``, ``$.a.b``, ``$$.Map.Item.Value``) selects."""
    root, _, rest = expression.partition(".")
    value = context if root == "$$" else data
    for key in filter(None, rest.split(".")):
        value = value[key]
    return value


def evaluate(expression: str, data, context: dict):
    """A reference path, or ``States.MathAdd`` of two (the one intrinsic function the sweep flow uses)."""
    if expression.startswith("States.MathAdd("):
        arguments = expression.removeprefix("States.MathAdd(").removesuffix(")").split(", ")
        return sum(path(argument, data, context) for argument in arguments)
    return path(expression, data, context)


def apply(template, data, context: dict | None = None):
    """A Parameters, ItemSelector or ResultSelector block applied to ``data``."""
    if isinstance(template, dict):
        return {
            key.removesuffix(".$"): evaluate(value, data, context or {})
            if key.endswith(".$")
            else apply(value, data, context)
            for key, value in template.items()
        }
    return template


def placed(state_input, result, result_path):
    """A state's output under its ResultPath: null keeps the input, ``$`` is the result, ``$.x`` adds it."""
    if result_path is None:
        return state_input
    if result_path == "$":
        return result
    return {**state_input, result_path.removeprefix("$."): result}


def invoked(payload) -> dict:
    """What the Lambda invoke integration returns: the function's answer and the call's metadata."""
    headers = {
        "Connection": "keep-alive",
        "Content-Length": str(size(payload)),
        "Content-Type": "application/json",
        "Date": "Wed, 25 Nov 2026 08:29:39 GMT",
        "X-Amz-Executed-Version": "1234",
        "X-Amzn-Trace-Id": "Root=1-6565a5a3-0123456789abcdef01234567;Parent=0123456789abcdef;Sampled=1",
        "x-amzn-Remapped-Content-Length": "0",
        "x-amzn-RequestId": str(uuid.uuid4()),
    }
    return {
        "ExecutedVersion": "1234",
        "Payload": payload,
        "SdkHttpMetadata": {
            "AllHttpHeaders": {k: [v] for k, v in headers.items()},
            "HttpHeaders": headers,
            "HttpStatusCode": 200,
        },
        "SdkResponseMetadata": {"RequestId": headers["x-amzn-RequestId"]},
        "StatusCode": 200,
    }


def task(state: dict, state_input, answer, context: dict | None = None) -> tuple[dict, dict, dict]:
    """A Lambda task state on ``state_input`` whose function answers ``answer``: its payload, task result and
    output."""
    payload = apply(state["Parameters"], state_input, context)["Payload"]
    result = invoked(answer)
    return payload, result, placed(state_input, apply(state["ResultSelector"], result), state["ResultPath"])


def largest_plan(store) -> tuple[dict, dict]:
    """PlanSweep's and SummarizeSweep's answers for a sweep of MAX_EXPERIMENTS experiments, none done, every
    provider in it; the plan's sweep then grown to MAX_INPUT_BYTES (as if its file were that large) and the
    summary's counts and spend at their longest."""
    repetitions = 10
    agents = [f"{provider}/{'random' if provider == 'baseline' else 'm'}" for provider in NAMES]
    moves = list(range(1, MAX_EXPERIMENTS // repetitions // len(agents) + 1))
    sweep = {
        "id": f"largest-{uuid.uuid4().hex[:8]}",
        "agents": agents,
        "mazes": ["perfect-7"],
        "repetitions": repetitions,
        "grid": {"maxMoves": moves},
    }
    plan = sweep_tasks.plan_run(SweepRequest.model_validate(sweep), store, WHERE).as_state()
    assert plan["planned"] == MAX_EXPERIMENTS and plan["alreadyDone"] == 0
    assert sorted(i for indices in plan["indices"].values() for i in indices) == list(range(MAX_EXPERIMENTS))
    summary = sweep_tasks.summarize(
        SweepSummaryRequest.model_validate({**plan, "experimentStateMachineArn": LONGEST_ARN}),
        store,
        lambda state_machine, prefix: set(),
    ).as_state()
    assert summary["skipped"] == MAX_EXPERIMENTS
    summary = {
        key: value if isinstance(value, str) else -1.2345678901234567e300 if key == "spentUsd" else MAX_EXPERIMENTS
        for key, value in summary.items()
    }
    plan["sweep"]["comment"] = ""
    plan["sweep"]["comment"] = "x" * (MAX_INPUT_BYTES - len(json.dumps(plan["sweep"])))
    assert len(json.dumps(plan["sweep"])) == MAX_INPUT_BYTES
    return plan, summary


def payloads(plan: dict, summary: dict) -> dict[str, int]:
    """Every payload of the sweep flow for ``plan``, by name, in bytes."""
    states = ASL["States"]
    found = {"execution input": size(plan["sweep"])}
    found["PlanSweep payload"] = found["execution input"]
    _, found_result, state = task(states["PlanSweep"], plan["sweep"], plan)
    found["PlanSweep task result"], found["PlanSweep output"] = size(found_result), size(state)
    found["RunRepetitions (Parallel) input"] = size(state)
    branch_outputs = []
    for branch in states["RunRepetitions"]["Branches"]:
        name = branch["StartAt"]
        mapped = branch["States"][name]
        found[f"{name} input"] = size(state)
        items = path(mapped["ItemsPath"], state, {})
        found[f"{name} result"] = size([{}] * MAX_EXPERIMENTS)  # every item in one map: a sweep of one provider
        output = {} if mapped["OutputPath"] is None else placed(state, [{}] * len(items), mapped["ResultPath"])
        found[f"{name} output"] = size(output)
        branch_outputs.append(output)
        found.update(child_payloads(mapped, state, max(items, default=MAX_EXPERIMENTS - 1)))
    found["RunRepetitions (Parallel) result"] = size(branch_outputs)
    state = placed(state, branch_outputs, states["RunRepetitions"]["ResultPath"])
    found["RunRepetitions (Parallel) output"] = found["SummarizeSweep input"] = size(state)
    payload, result, output = task(states["SummarizeSweep"], state, summary)
    found["SummarizeSweep payload"], found["SummarizeSweep task result"] = size(payload), size(result)
    found["SummarizeSweep output"] = size(output)
    return found


def child_payloads(mapped: dict, state: dict, index: int) -> dict[str, int]:
    """A child execution of the map: its input (the ItemSelector at the largest index), its tasks' payloads and
    results, and its largest state (started, checked, and carrying a failed task's error)."""
    name = mapped["Label"]
    child = apply(mapped["ItemSelector"], state, {"Map": {"Item": {"Value": index}}})
    item = mapped["ItemProcessor"]["States"]
    start = item[mapped["ItemProcessor"]["StartAt"]]
    start_payload, start_result, child_state = task(start, child, {"outcome": "started", "executionArn": LONGEST_ARN})
    check = item[start["Next"].removesuffix("IsStarted") + "CheckRepetition"]
    looked = {
        "closed": False,
        "outcome": "starting",
        "waitSeconds": MAX_CHECK_WAIT_SECONDS,
        "followedSeconds": 365 * 24 * 3600,
    }
    check_payload, check_result, child_state = task(check, child_state, looked)
    largest = placed(child_state, ERROR, check["Catch"][0]["ResultPath"])
    return {
        f"{name} child input": size(child),
        f"{name} StartRepetition payload": size(start_payload),
        f"{name} StartRepetition task result": size(start_result),
        f"{name} CheckRepetition payload": size(check_payload),
        f"{name} CheckRepetition task result": size(check_result),
        f"{name} child's largest state": size(largest),
    }


def test_every_state_of_the_largest_sweep_stays_far_below_256_kib(store):
    plan, summary = largest_plan(store)
    found = payloads(plan, summary)
    # every state of the flow was measured: 11 of the sweep, 9 of each map, a provider's or a lane's
    assert len(found) == 11 + 9 * (len(NAMES) + len(LANES))
    assert all(f"{LANE_LABELS[lane]} child's largest state" in found for lane in LANES)  # the lanes' maps too
    largest = max(found, key=found.get)
    table = "\n".join(f"{name:<45} {value:>9,}" for name, value in found.items())
    assert found[largest] <= LIMIT - MARGIN, f"{largest} is {found[largest]:,} bytes:\n{table}"
    assert largest == "PlanSweep task result" and found["PlanSweep output"] > MAX_INPUT_BYTES + 100_000


def test_a_sweep_that_would_carry_more_than_the_limit_is_refused_before_anything_starts(store):
    """The sweep is measured as carried too (validated, its defaults filled in), not only as given: an input
    just under the limit whose carried form is over it is refused with SweepFileError."""
    target = MAX_INPUT_BYTES - 20  # the defaults the carried form fills in take more than 20 bytes
    sweep = {
        "id": f"edge-{uuid.uuid4().hex[:8]}",
        "agents": ["baseline/random"],
        "mazes": ["perfect-7"],
        "grid": {"maxMoves": []},
        "comment": "",
    }
    while len(json.dumps(sweep)) + 8 <= target:
        sweep["grid"]["maxMoves"].append(len(sweep["grid"]["maxMoves"]) + 1)
    sweep["comment"] = "x" * (target - len(json.dumps(sweep)))
    assert len(json.dumps(sweep)) == target
    with pytest.raises(SweepFileError, match="larger than 65,536 bytes"):
        sweep_tasks.plan_run(SweepRequest.model_validate(sweep), store, WHERE)
