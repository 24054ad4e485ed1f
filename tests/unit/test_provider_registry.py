"""A provider is one module and one registration: every provider of the registry has its adapter, its agent task with
its handler, its branch in both flow files and their diagrams (drawn by the docs), its cap and its names; a provider
added to the registry reaches each of them; and the generated files are what the code writes (``make flows``)."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from oriole import catalog, flows, inputs
from oriole.core import sweep_plan
from oriole.flows import experiment_flow, render, sweep_flow
from oriole.handlers import FUNCTIONS, agents
from oriole.provider_registry import DEFAULT_PROVIDER, MODEL_PROVIDERS, NAMES, PROVIDERS, Provider

ROOT = Path(__file__).parents[2]
ACME = Provider("acme", "Acme", "oriole.providers.openai", sweep_cap=2, api_key="ACME_API_KEY")


def test_the_generated_files_are_what_make_flows_writes():
    for path, text in render.outputs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} differs from its code: run `make flows`"
    assert set(render.outputs()) == {sweep_flow.FILE, Path(flows.__file__).parent / "experiment.asl.json"}


@pytest.mark.parametrize("provider", PROVIDERS.values(), ids=tuple(PROVIDERS))
def test_every_provider_has_its_adapter_task_handler_and_branches(provider):
    adapter = importlib.import_module(provider.adapter)
    assert callable(adapter.agent)
    assert FUNCTIONS[provider.placeholder] == f"oriole.handlers.agents.{provider.entry_point}"
    handler = getattr(agents, provider.entry_point)
    assert handler.__wrapped__.__wrapped__.__code__.co_qualname == provider.entry_point  # its own name in a trace
    states = flows.definition(flows.EXPERIMENT)["States"]
    assert states[provider.task]["Parameters"]["FunctionName"] == f"${{{provider.placeholder}}}"
    model_errors = {"ModelThrottled", "ModelUnavailable", "ModelTimeout"}
    retried = {error for retrier in states[provider.task]["Retry"] for error in retrier["ErrorEquals"]}
    assert (model_errors <= retried) == provider.calls_model and bool(model_errors & retried) == provider.calls_model
    sweep = json.dumps(flows.definition(flows.SWEEP))
    in_sweeps = f'"{provider.label}Repetitions"' in sweep and f"$.caps.{provider.name}" in sweep
    assert in_sweeps == provider.chosen == (f"{provider.label}Repetitions" in sweep_flow.diagram())
    assert provider.task in experiment_flow.diagram()


def test_the_names_every_part_accepts_come_from_the_registry():
    assert NAMES == tuple(n for n, p in PROVIDERS.items() if p.chosen) == catalog.ALL_PROVIDERS
    assert MODEL_PROVIDERS == catalog.LLM_PROVIDERS and "replay" not in NAMES  # a replay is started by replayOf
    assert "baseline" not in MODEL_PROVIDERS and set(MODEL_PROVIDERS) < set(NAMES)
    assert inputs.ExecutionInput.model_fields["llmProvider"].default == DEFAULT_PROVIDER
    spec = sweep_plan.SweepFile(id="s", agents=["baseline/oracle"], mazes=["perfect-7"])
    assert sweep_plan.caps(spec, NAMES) == {name: PROVIDERS[name].sweep_cap for name in NAMES}
    assert {p.servers.listed for p in PROVIDERS.values() if p.servers} == {
        "ORIOLE_OLLAMA_ENDPOINTS",
        "ORIOLE_OPENAI_BASE_URLS",
    }
    assert [p.api_key_secret for p in PROVIDERS.values()] == [
        None,
        "OLLAMA_API_KEY_SECRET_ARN",
        "OPENAI_API_KEY_SECRET_ARN",
        None,
        None,
    ]


def test_a_provider_added_to_the_registry_reaches_both_flows_and_the_diagrams(monkeypatch):
    """What `make flows` would write after one more registration: the router's choice and its task in the
    experiment flow, its map in the sweep flow, and its line in each diagram."""
    monkeypatch.setattr(experiment_flow, "PROVIDERS", {**PROVIDERS, ACME.name: ACME})
    text = experiment_flow.render(flows.definition_text(flows.EXPERIMENT))
    states = json.loads(text)["States"]
    assert {"Variable": "$.llmProvider", "StringEquals": "acme", "Next": "InvokeAcmeAgent"} in states[
        "AgentProviderRouter"
    ]["Choices"]
    assert states["InvokeAcmeAgent"] == {
        **states["InvokeOpenAIAgent"],
        "Parameters": {**states["InvokeOpenAIAgent"]["Parameters"], "FunctionName": "${InvokeAcmeAgentFunctionArn}"},
    }
    assert list(states).index("InvokeAcmeAgent") == list(states).index("InvokeReplayAgent") + 1
    assert "| InvokeReplayAgent | InvokeAcmeAgent" in experiment_flow.diagram()
    labels = {**sweep_flow.LABELS, "acme": "Acme"}
    branches = sweep_flow.definition(labels)["States"]["RunRepetitions"]["Branches"]
    assert [next(iter(branch["States"])) for branch in branches][-1] == "AcmeRepetitions"
    line = r"\n +AcmeRepetitions +distributed Map, MaxConcurrencyPath \$\.caps\.acme\n"
    assert re.search(line, sweep_flow.diagram(labels))


def test_every_registration_names_its_own_task_and_map():
    """Step Functions wants each state name once: labels, and so tasks and maps, are distinct."""
    assert all(name == provider.name for name, provider in PROVIDERS.items())
    assert len({p.label for p in PROVIDERS.values()}) == len({p.task for p in PROVIDERS.values()}) == len(PROVIDERS)
