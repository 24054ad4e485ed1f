"""A provider is one module and one registration: every provider of the registry has its adapter (the whole contract
of ``oriole.providers.contract``), its agent task with its handler written out, its branch in both flow files and
their diagrams (drawn by the docs), its cap and its names; a provider added to the registry reaches each of them;
nothing outside the registry branches on a provider's name; and the generated files are what the code writes
(``make flows``)."""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import pytest

from oriole import catalog, flows, inputs
from oriole.core import sweep_plan
from oriole.core.turn_loop import ModelRequest
from oriole.flows import experiment_flow, generate, sweep_flow
from oriole.handlers import FUNCTIONS, agents
from oriole.lifecycle.task_io import TurnRequest
from oriole.provider_registry import DEFAULT_PROVIDER, MODEL_PROVIDERS, NAMES, PROVIDERS, Provider
from oriole.providers import contract

ROOT = Path(__file__).parents[2]
ACME = Provider("acme", "Acme", "oriole.providers.openai", sweep_cap=2, api_key="ACME_API_KEY")


def test_the_generated_files_are_what_make_flows_writes():
    for path, text in generate.outputs().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} differs from its code: run `make flows`"
    assert set(generate.outputs()) == {sweep_flow.FILE, Path(flows.__file__).parent / "experiment.asl.json"}


@pytest.mark.parametrize("provider", PROVIDERS.values(), ids=tuple(PROVIDERS))
def test_every_provider_has_its_adapter_task_handler_and_branches(provider):
    adapter = contract.load_adapter(provider.name)
    for name in contract.CONTRACT:  # each function takes what the contract passes, by the contract's names
        expected = list(inspect.signature(getattr(contract.Adapter, name)).parameters)[1:]  # without self
        assert list(inspect.signature(getattr(adapter, name)).parameters) == expected, (provider.name, name)
    assert FUNCTIONS[provider.placeholder] == f"oriole.handlers.agents.{provider.entry_point}"
    handler = getattr(agents, provider.entry_point)
    assert inspect.unwrap(handler).__code__.co_qualname == provider.entry_point  # its own name in a trace
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
    caps = sweep_plan.caps(spec, NAMES)
    assert {name: caps[name] for name in NAMES} == {name: PROVIDERS[name].sweep_cap for name in NAMES}
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
    text = experiment_flow.generate(flows.definition_text(flows.EXPERIMENT))
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
    maps = [next(iter(branch["States"])) for branch in branches]
    assert maps[-1 - len(sweep_plan.LANES)] == "AcmeRepetitions"  # the last provider's, before the lanes
    line = r"\n +AcmeRepetitions +distributed Map, MaxConcurrencyPath \$\.caps\.acme\n"
    assert re.search(line, sweep_flow.diagram(labels))


def test_every_registration_names_its_own_task_and_map():
    """Step Functions wants each state name once: labels, and so tasks and maps, are distinct."""
    assert all(name == provider.name for name, provider in PROVIDERS.items())
    assert len({p.label for p in PROVIDERS.values()}) == len({p.task for p in PROVIDERS.values()}) == len(PROVIDERS)


def test_an_adapter_that_lacks_part_of_the_contract_is_refused_naming_it(monkeypatch):
    monkeypatch.setitem(PROVIDERS, "acme", Provider("acme", "Acme", "oriole.providers.wire", sweep_cap=1))
    with pytest.raises(TypeError, match=r"oriole\.providers\.wire of provider 'acme' does not define agent, "):
        contract.load_adapter("acme")


@pytest.mark.parametrize("provider", ["baseline", "replay"])
def test_a_provider_without_answers_of_its_own_says_so_when_asked_to_read_one(provider):
    with pytest.raises(contract.NotRecorded):
        contract.load_adapter(provider).recorded_answer(b"{}", 0, 0, 0)


def test_a_baseline_request_is_written_as_neutral_json():
    written = contract.load_adapter("baseline").wire_request(ModelRequest("system", (), ()), {})
    assert written == {"system": "system", "tools": [], "messages": []}


def test_the_handlers_write_out_one_entry_point_per_provider_each_playing_its_own(monkeypatch):
    """``invoke_<provider>`` is a plain function of the module (a search finds it), one per registration and no
    other, wrapped in the Powertools logger and metrics, playing its own provider's turn."""
    defined = {name for name, value in vars(agents).items() if name.startswith("invoke_") and callable(value)}
    assert defined == {p.entry_point for p in PROVIDERS.values()}
    played = []
    monkeypatch.setattr(agents, "_play", lambda request, context, provider: played.append(provider))
    for provider in PROVIDERS.values():
        inspect.unwrap(getattr(agents, provider.entry_point))(TurnRequest(experimentId=1, turnNumber=1), None)
    assert played == list(PROVIDERS)


def test_no_runtime_code_outside_the_registry_branches_on_a_provider_name():
    """What differs between providers is a field of their registration (``calls_model``, ``models``,
    ``aws_service``, ``servers``...), never ``provider == "baseline"``: a new provider needs no hunt for branches."""
    root = Path(catalog.__file__).parent
    branches = [
        f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
        for path in root.rglob("*.py")
        if path.name != "provider_registry.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Compare)
        and any(isinstance(side, ast.Constant) and side.value in PROVIDERS for side in (node.left, *node.comparators))
    ]
    assert branches == []
