"""The sweep flow, written once as code: ``sweep.asl.json`` is what this module generates.

The flow runs one distributed map per provider, and the maps differ only in their provider; Step Functions
wants every state name unique in the whole state machine, the maps' item states included, so each map's
states carry the provider's label as a prefix (``BedrockStartRepetition``, ``OllamaStartRepetition``...).
Writing the four maps by hand repeated everything four times; here the item flow, its retry policy and its
failure handling are written once and generated for each provider of the list given.

The JSON file stays the one definition CDK deploys and the local runner hands to moto; it is committed, and
``tests/unit/test_sweep_definition.py`` fails when it and this module disagree. After editing this module, or the
provider registry it generates a map for:

    make flows     # python -m oriole.flows.generate: rewrites sweep.asl.json (and the other generated parts)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from oriole.core.sweep_plan import LANES, MAX_CHECK_WAIT_SECONDS, MAX_EXPERIMENTS
from oriole.flows.states import LAMBDA_INVOKE, START_THROTTLED, TASK_RETRY
from oriole.provider_registry import PROVIDERS
from oriole.text import JsonObject

FILE = Path(__file__).with_name("sweep.asl.json")
EXPERIMENT_STATE_MACHINE = "${ExperimentStateMachineArn}"
# Consecutive failed checks after which an item gives up on its experiment: an hour of failures at the default
# wait of 30 s, more once the waits have grown (each failed check also spent its retries), far longer than a
# database failover or a burst of throttling, and a bound on a deployment that cannot check at all.
MAX_FAILED_CHECKS = 120
# An item's check before its first look: none failed, nothing followed yet, the sweep's wait first.
FIRST_CHECK = {"failedChecks": 0, "followedSeconds": 0}
FOLLOWED = "States.MathAdd($.check.followedSeconds, $.check.waitSeconds)"  # after the wait just done
LABELS = {p.name: p.label for p in PROVIDERS.values() if p.chosen}  # the shipped file: every chosen provider
# The maps of the experiments a sweep caps on their own (an agent's concurrency, a server's server_concurrency),
# beside the providers': lane -> label.
LANE_LABELS = {lane: lane.capitalize() for lane in LANES}


def _task(
    function: str,
    payload: JsonObject | str,
    result: JsonObject,
    result_path: str,
    *,
    comment: str | None = None,
    retry: list[JsonObject] = TASK_RETRY,
    catch: str | None = None,
    next_state: str | None = None,
) -> JsonObject:
    """A Lambda task: its payload, the fields it keeps from the function's answer and where, its retriers, the
    state a failure past them goes to, and the next state (None: the flow ends here)."""
    task = {
        "Type": "Task",
        "Resource": LAMBDA_INVOKE,
        **({"Comment": comment} if comment else {}),
        "Parameters": {
            "FunctionName": f"${{{function}FunctionArn}}",
            **({"Payload.$": payload} if isinstance(payload, str) else {"Payload": payload}),
        },
        "ResultSelector": result,
        "ResultPath": result_path,
        "Retry": retry,
    }
    if catch is not None:
        task["Catch"] = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": catch}]
    return {**task, "Next": next_state} if next_state else {**task, "End": True}


def _from_payload(*fields: str) -> JsonObject:
    return {f"{field}.$": f"$.Payload.{field}" for field in fields}


def _end(comment: str) -> JsonObject:
    """An end of an item. Every end succeeds with the output {}: the map keeps each item's output in its result,
    which must stay far below 256 KiB at 20,000 items, and a failed item's would carry its input, the sweep.
    (A Pass, not a Succeed: cfn-lint's schema refuses a Succeed's OutputPath, which the States Language allows.)"""
    return {"Type": "Pass", "Comment": comment, "OutputPath": None, "End": True}


def item_input(index: int, sweep: JsonObject, wait_seconds: int) -> JsonObject:
    """What a map's ItemSelector makes of plan index ``index``: the input of the item's child execution."""
    return {
        "index": index,
        "sweep": sweep,
        "waitSeconds": wait_seconds,
        "check": {**FIRST_CHECK, "waitSeconds": wait_seconds},
    }


def item_states(label: str) -> JsonObject:
    """One map item: start the experiment of a plan index, then look at it until it is closed, waiting
    ``waitSeconds`` at first and longer as the experiment ages (``check.waitSeconds``, which CheckRepetition
    computes from ``check.followedSeconds``, the sum of the waits: ``oriole.core.sweep_plan.next_check_wait``). The item
    holds its map slot, and so keeps the provider's cap, as long as its experiment may run: it ends when the
    experiment is closed, when nothing was started, or after ``MAX_FAILED_CHECKS`` checks in a row failed past
    their retries."""

    def name(state: str) -> str:
        return label + state

    return {
        name("StartRepetition"): _task(
            "StartRepetition",
            {"sweep.$": "$.sweep", "index.$": "$.index", "experimentStateMachineArn": EXPERIMENT_STATE_MACHINE},
            _from_payload("outcome", "executionArn"),
            "$.repetition",
            comment="Start the experiment of this plan index under a deterministic name, unless its repetition "
            "already ended or the sweep spent its limit.",
            retry=[*TASK_RETRY, START_THROTTLED],
            catch=name("StartFailed"),
            next_state=name("IsStarted"),
        ),
        name("IsStarted"): {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.repetition.outcome", "StringEquals": "started", "Next": name("WaitForExperiment")}
            ],
            "Default": name("NothingStarted"),
        },
        name("WaitForExperiment"): {
            "Type": "Wait",
            "SecondsPath": "$.check.waitSeconds",
            "Next": name("CheckRepetition"),
        },
        name("CheckRepetition"): _task(
            "CheckRepetition",
            {
                "executionArn.$": "$.repetition.executionArn",
                "waitSeconds.$": "$.waitSeconds",
                "followedSeconds.$": FOLLOWED,
            },
            {**_from_payload("closed", "outcome", "waitSeconds", "followedSeconds"), "failedChecks": 0},
            "$.check",
            comment="Whether the experiment is closed, from its row, and the next wait: a tenth of the time "
            f"followed, between waitSeconds and {MAX_CHECK_WAIT_SECONDS} s. A check that answers sets "
            "failedChecks back to 0.",
            catch=name("CheckFailed"),
            next_state=name("IsClosed"),
        ),
        name("IsClosed"): {
            "Type": "Choice",
            "Choices": [{"Variable": "$.check.closed", "BooleanEquals": True, "Next": name("ExperimentClosed")}],
            "Default": name("WaitForExperiment"),
        },
        name("CheckFailed"): {
            "Type": "Pass",
            "Comment": "The check failed past its retries (the database away, Lambda throttled), but the experiment "
            "may still run: the item keeps its slot, so the cap holds, and checks again after the "
            "same wait. The error stays under $.error.",
            "Parameters": {
                "failedChecks.$": "States.MathAdd($.check.failedChecks, 1)",
                "waitSeconds.$": "$.check.waitSeconds",
                "followedSeconds.$": FOLLOWED,
            },
            "ResultPath": "$.check",
            "Next": name("MayCheckAgain"),
        },
        name("MayCheckAgain"): {
            "Type": "Choice",
            "Choices": [
                {
                    "Variable": "$.check.failedChecks",
                    "NumericLessThan": MAX_FAILED_CHECKS,
                    "Next": name("WaitForExperiment"),
                }
            ],
            "Default": name("GaveUpChecking"),
        },
        name("ExperimentClosed"): _end("The experiment is closed; its row holds how it ended."),
        name("NothingStarted"): _end("Ended before (resume) or skipped (spend limit)."),
        name("StartFailed"): _end(
            "The start failed past its retries. Starting is the task's last act, and a retry that meets an execution "
            "already started follows it, so nothing was started (unless an answer was lost after the start and "
            "every retry failed too). The item ends, the sweep goes on; the summary reads the repetition's state "
            "from the database."
        ),
        name("GaveUpChecking"): _end(
            f"{MAX_FAILED_CHECKS} checks in a row failed: the deployment cannot see its experiments (a permission, "
            "the database secret). The item stops waiting so that the sweep can end; the summary counts the "
            "experiment as its row stands (running, if it still runs)."
        ),
    }


def provider_map(provider: str, label: str) -> JsonObject:
    """The Parallel branch of one provider (or one lane: a capped agent's or server's): a distributed map over its
    plan indices, capped by its cap.

    The map hands the Parallel nothing (OutputPath null): the Parallel's result is every branch's output, and
    each would otherwise be the whole plan. Items end in success by design; should one fail all the same (a
    child past its history limit), the sweep goes on: the map tolerates as many failed items as a map can have.
    (Written as a count: ``"ToleratedFailurePercentage": 100`` says the same, but AWS takes only an integer
    there and moto's parser only a decimal.)"""
    state = label + "Repetitions"
    return {
        "StartAt": state,
        "States": {
            state: {
                "Type": "Map",
                "Label": label,
                "Comment": (
                    f"The experiments of the plan PlanSweep gave {provider} (an agent's concurrency or a server's "
                    "server_concurrency), "
                    if provider in LANES
                    else f"The {provider} experiments of the plan (but a capped agent's or server's), "
                )
                + f"at most caps.{provider} at once; each item is a child execution.",
                "ItemsPath": f"$.indices.{provider}",
                "MaxConcurrencyPath": f"$.caps.{provider}",
                "ToleratedFailureCount": MAX_EXPERIMENTS,
                "ItemSelector": {
                    "index.$": "$$.Map.Item.Value",
                    "sweep.$": "$.sweep",
                    "waitSeconds.$": "$.waitSeconds",
                    "check": {**FIRST_CHECK, "waitSeconds.$": "$.waitSeconds"},
                },
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                    "StartAt": label + "StartRepetition",
                    "States": item_states(label),
                },
                "ResultPath": None,
                "OutputPath": None,
                "End": True,
            }
        },
    }


def definition(providers: Mapping[str, str] = LABELS) -> JsonObject:
    """The sweep flow for ``providers`` (provider -> label, the prefix of its map's state names), with a map for
    each lane (``LANE_LABELS``)."""
    return {
        "Comment": "Oriole sweep: plan the run, then one distributed map per provider and per agent or server the "
        "sweep caps (each with its own concurrency cap) starts each planned experiment on the experiment state "
        "machine and waits for its row to close; the summary counts the outcomes from the database. An "
        "item ends only when its experiment is closed or nothing was started (a failed check waits and checks again, "
        f"up to {MAX_FAILED_CHECKS} times in a row), so the caps hold through failures; the waits "
        f"between checks grow to a tenth of the time followed (at most {MAX_CHECK_WAIT_SECONDS} s), so "
        "that an item's history holds the longest experiment. Generated by "
        "oriole/flows/sweep_flow.py (make flows): edit that, not this file. Placeholders are filled "
        "by CDK definition_substitutions or by the local runner.",
        "StartAt": "PlanSweep",
        "States": {
            "PlanSweep": _task(
                "PlanSweep",
                "$",
                _from_payload("sweep", "planned", "alreadyDone", "indices", "caps", "waitSeconds"),
                "$",
                comment="Validate the sweep file; return per provider the plan indices left to run and the "
                "caps. A bad file fails the execution here with SweepFileError, before anything "
                "starts.",
                next_state="RunRepetitions",
            ),
            "RunRepetitions": {
                "Type": "Parallel",
                "Comment": "The providers, and the agents and servers capped on their own, run side by side, each "
                "capped on its own.",
                "Branches": [provider_map(group, label) for group, label in {**providers, **LANE_LABELS}.items()],
                "ResultPath": None,
                "Next": "SummarizeSweep",
            },
            "SummarizeSweep": _task(
                "SummarizeSweep",
                {
                    "sweep.$": "$.sweep",
                    "planned.$": "$.planned",
                    "alreadyDone.$": "$.alreadyDone",
                    "indices.$": "$.indices",
                    "experimentStateMachineArn": EXPERIMENT_STATE_MACHINE,
                },
                _from_payload(
                    "sweepId",
                    "planned",
                    "alreadyDone",
                    "succeeded",
                    "timedOut",
                    "failed",
                    "aborted",
                    "running",
                    "rejected",
                    "skipped",
                    "paused",
                    "successes",
                    "agentFailures",
                    "censored",
                    "errors",
                    "spentUsd",
                ),
                "$",
            ),
        },
    }


def generate(providers: Mapping[str, str] = LABELS) -> str:
    """``sweep.asl.json`` as it is committed."""
    return json.dumps(definition(providers), indent=2, ensure_ascii=False) + "\n"


def diagram(providers: Mapping[str, str] = LABELS) -> str:
    """The flow as the docs draw it (reference/state-machines.md): one map line per provider."""
    width = max(len(f"{label}Repetitions") for label in {**providers, **LANE_LABELS}.values()) + 2
    maps = "".join(
        f"               {f'{label}Repetitions':<{width}}distributed Map, MaxConcurrencyPath $.caps.{name}\n"
        for name, label in {**providers, **LANE_LABELS}.items()
    )
    return (
        "PlanSweep -> RunRepetitions (Parallel)                                              -> SummarizeSweep\n"
        + maps
        + "             each item (a STANDARD child execution), its states prefixed with the map's label:\n"
        "               StartRepetition -> IsStarted -> WaitForExperiment (growing wait) -> CheckRepetition "
        "-> IsClosed\n"
        "                 -> (wait again | ExperimentClosed)\n"
        "               a failed CheckRepetition -> CheckFailed -> MayCheckAgain "
        "-> (wait again | GaveUpChecking)\n"
    )
