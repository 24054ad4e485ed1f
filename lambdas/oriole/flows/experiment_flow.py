"""The experiment flow's generated parts, written once as code: the provider branches from
``oriole.provider_registry`` (the AgentProviderRouter's choices and one ``Invoke<Label>Agent`` task per provider,
each with the retriers of a model task or of a baseline's, and the Catch every task has), and every other task's
retriers (``TASK_RETRY`` and what its own AWS calls add, ``OWN_RETRY``), so that no task retries the database or
Lambda's throttling differently from the others.

Everything else in ``experiment.asl.json`` is written by hand; ``generate`` puts these into the file (``make
flows``), and ``tests/unit/test_state_machine_definition.py`` fails when the file and the code disagree.
"""

from __future__ import annotations

import json

from oriole.flows.states import (
    LAMBDA_INVOKE,
    MODEL_THROTTLED,
    MODEL_UNAVAILABLE,
    PARAMETER_STORE_THROTTLED,
    START_THROTTLED,
    TASK_RETRY,
)
from oriole.provider_registry import DEFAULT_PROVIDER, PROVIDERS, Provider
from oriole.text import JsonObject

ROUTER = "AgentProviderRouter"
AFTER_TURN = "CheckProgress"
ON_FAILURE = "FinalizeFailure"
# What a hand-written task retries besides TASK_RETRY: its own AWS calls, throttled past botocore's retries.
OWN_RETRY = {"StartExperiment": [PARAMETER_STORE_THROTTLED], "ContinueAsNew": [START_THROTTLED]}


def agent_task(provider: Provider) -> JsonObject:
    """The task that plays one turn with ``provider``: a model's is retried when the model is throttled, away or
    slow; every task when Lambda or the database fails it; past the retries it goes to FinalizeFailure."""
    retry = [*TASK_RETRY, *((MODEL_THROTTLED, MODEL_UNAVAILABLE) if provider.calls_model else ())]
    return {
        "Type": "Task",
        "Resource": LAMBDA_INVOKE,
        "Parameters": {
            "FunctionName": f"${{{provider.placeholder}}}",
            "Payload": {"experimentId.$": "$.experimentId", "turnNumber.$": "$.turnNumber"},
        },
        "Retry": retry,
        "ResultSelector": {
            "actions.$": "$.Payload.actions",
            "endReason.$": "$.Payload.endReason",
            "goalFound.$": "$.Payload.goalFound",
            "position.$": "$.Payload.position",
        },
        "ResultPath": "$.turn",
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": ON_FAILURE}],
        "Next": AFTER_TURN,
    }


def router() -> JsonObject:
    """The choice of the agent task by the experiment's provider; the default provider's is the Default."""
    return {
        "Type": "Choice",
        "Choices": [
            {"Variable": "$.llmProvider", "StringEquals": name, "Next": provider.task}
            for name, provider in PROVIDERS.items()
            if name != DEFAULT_PROVIDER
        ],
        "Default": PROVIDERS[DEFAULT_PROVIDER].task,
    }


def provider_states() -> JsonObject:
    """The router and every provider's task, in the registry's order."""
    return {ROUTER: router(), **{provider.task: agent_task(provider) for provider in PROVIDERS.values()}}


def diagram() -> str:
    """The flow as the docs draw it (reference/state-machines.md), its provider branches from the registry."""
    tasks = " | ".join(provider.task for provider in PROVIDERS.values())
    return f"""\
ReceiveInput (the input, of any shape, nested under "input") -> StartExperiment -> {ROUTER}
   -> {tasks}
   -> CheckProgress -> ConditionCheck -> ContinueLoop (turnNumber++) -> {ROUTER} ...
                                      -> FinalizeSuccess -> ExperimentSucceeded
                                      -> FinalizeTimeout -> ExperimentTimedOut
                                      -> AgentStalled    -> FinalizeFailure -> ExperimentFailed (AgentStalled)
                                      -> ContinueAsNew   -> HandedOver (a successor execution goes on)
every Task: Retry (transient errors, with backoff), then Catch States.ALL -> FinalizeFailure
            -> ExperimentFailed (a Fail state with the caught error)
outside the flow: every terminal status change -> EventBridge -> the status-change finalizer
"""


def generate(text: str) -> str:
    """``experiment.asl.json`` (``text``) with its provider branches as the registry gives them (the router and the
    tasks it chose between are replaced, in the router's place) and every other task's retriers."""
    asl = json.loads(text)
    old = asl["States"][ROUTER]
    replaced = {ROUTER, old["Default"], *(choice["Next"] for choice in old["Choices"])}
    states = {}
    for name, state in asl["States"].items():
        if name == ROUTER:
            states.update(provider_states())
        elif name not in replaced:
            states[name] = {**state, "Retry": [*TASK_RETRY, *OWN_RETRY.get(name, [])]} if "Retry" in state else state
    return json.dumps({**asl, "States": states}, indent=2, ensure_ascii=False) + "\n"
