"""Every flow the runtime package ships passes both States Language validators with no finding, in the form it
ships (``${...}`` placeholders) and in the form it deploys: the synthesized template's definition (with the
execution timeout as CDK sets it) and its substitutions resolved as CloudFormation resolves them, published
Lambda version ARNs and the experiment state machine's ARN.

The validators, both pinned in package.json and run offline: asl-validator (the States Language schema, state
names, paths) and AWS's own States Language service (npm amazon-states-language-service, the validator behind
the AWS Toolkit and Workflow Studio), driven by ``asl_language_service.js``. moto runs definitions that AWS
refuses (a state name used twice, a decimal where an integer is due), so these stand in for
CreateStateMachine's checks; the controls show that each refuses what it should.
"""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from oriole.flows import sweep_flow
from tests.infra.conftest import ROOT, resolve

SUFFIX = ".asl.json"
REGION, ACCOUNT = "us-east-1", "123456789012"
ASL_VALIDATOR = ROOT / "node_modules" / ".bin" / "asl-validator"
LANGUAGE_SERVICE = Path(__file__).with_name("asl_language_service.js")
FORMS = ("shipped", "deployed")


def shipped_flows() -> dict[str, str]:
    """Every ``*.asl.json`` in the runtime package's flows folder, by flow name, as shipped."""
    return {
        entry.name.removesuffix(SUFFIX): entry.read_text(encoding="utf-8")
        for entry in resources.files("oriole.flows").iterdir()
        if entry.name.endswith(SUFFIX)
    }


FLOWS = sorted(shipped_flows())


def substituted(value, template: dict, stack: str) -> str:
    """A definition substitution as CloudFormation resolves it: a Ref to an ``AWS::Lambda::Version`` gives the
    version's ARN (the function named as CloudFormation names it: stack, logical id, a random suffix); the
    other values are ARNs joined from the partition, region and account."""
    target = template["Resources"].get(value.get("Ref", "")) if isinstance(value, dict) else None
    if target is not None and target["Type"] == "AWS::Lambda::Version":
        function = f"{stack}-{target['Properties']['FunctionName']['Ref']}"[:51] + "-Q1w2E3r4T5y6"
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{function}:7"
    resolved = resolve(value, template, REGION, ACCOUNT)
    assert isinstance(resolved, str), f"unresolved substitution {value}"
    return resolved


def deployed(template: dict, stack: str, flow: str) -> str:
    """The definition of the state machine ``<stack>-<flow>`` as deployed."""
    [properties] = [
        r["Properties"]
        for r in template["Resources"].values()
        if r["Type"] == "AWS::StepFunctions::StateMachine" and r["Properties"]["StateMachineName"] == f"{stack}-{flow}"
    ]
    text = properties["DefinitionString"]
    for placeholder, value in properties.get("DefinitionSubstitutions", {}).items():
        text = text.replace("${" + placeholder + "}", substituted(value, template, stack))
    assert "${" not in text, f"{flow}: a placeholder the template does not substitute"
    return text


def controls() -> dict[str, str]:
    """Definitions each validator must refuse: the sweep flow's two faults as they were shipped, and a
    StartAt naming no state."""
    percentage = sweep_flow.definition()
    first = percentage["States"]["RunRepetitions"]["Branches"][0]
    first["States"][first["StartAt"]]["ToleratedFailurePercentage"] = 100.0
    return {
        "duplicate-names": json.dumps(sweep_flow.definition({"bedrock": "Same", "ollama": "Same"})),
        "decimal-percentage": json.dumps(percentage),
        "unknown-start": json.dumps({**sweep_flow.definition(), "StartAt": "NoSuchState"}),
    }


@pytest.fixture(scope="module")
def files(stacks, templates, tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(flow, form) -> the definition's file; the controls under ("control", name)."""
    folder = tmp_path_factory.mktemp("flows")
    template, stack = templates[1].to_json(), stacks[1].stack_name
    texts = {(flow, "shipped"): text for flow, text in shipped_flows().items()}
    texts |= {(flow, "deployed"): deployed(template, stack, flow) for flow in FLOWS}
    texts |= {("control", name): text for name, text in controls().items()}
    paths = {}
    for (flow, form), text in texts.items():
        paths[flow, form] = folder / f"{flow}.{form}.json"
        paths[flow, form].write_text(text, encoding="utf-8")
    return paths


def asl_validator(path: Path) -> subprocess.CompletedProcess:
    if not ASL_VALIDATOR.exists():
        pytest.fail("asl-validator is not installed: run `npm ci` (package-lock.json pins it)")
    return subprocess.run([str(ASL_VALIDATOR), "--json-path", str(path)], capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def language_service(files) -> dict[str, list[dict]]:
    """Every file's diagnostics from AWS's States Language service, in one run of Node."""
    if not (ROOT / "node_modules" / "amazon-states-language-service").exists():
        pytest.fail("amazon-states-language-service is not installed: run `npm ci` (package-lock.json pins it)")
    result = subprocess.run(
        ["node", str(LANGUAGE_SERVICE), *map(str, files.values())],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_package_ships_both_flows_and_each_deploys_as_a_state_machine(files):
    assert {"experiment", "sweep"} <= set(FLOWS)
    for flow in FLOWS:
        shipped, deployed_text = (files[flow, form].read_text() for form in FORMS)
        assert "${" in shipped and "arn:aws:lambda:us-east-1:123456789012:function:" in deployed_text
    assert json.loads(files["experiment", "deployed"].read_text())["TimeoutSeconds"] == 3600  # the fixture's


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("flow", FLOWS)
def test_asl_validator_accepts_every_flow(files, flow, form):
    result = asl_validator(files[flow, form])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("flow", FLOWS)
def test_the_states_language_service_finds_nothing_in_any_flow(files, language_service, flow, form):
    assert language_service[str(files[flow, form])] == []


def test_each_validator_refuses_what_aws_refuses(files, language_service):
    duplicates = asl_validator(files["control", "duplicate-names"])
    assert duplicates.returncode != 0 and "DUPLICATE_STATE_NAMES" in duplicates.stdout + duplicates.stderr
    assert asl_validator(files["control", "unknown-start"]).returncode != 0
    [decimal] = language_service[str(files["control", "decimal-percentage"])]
    assert "Expected one of integer" in decimal["message"]
    assert any('"StartAt"' in d["message"] for d in language_service[str(files["control", "unknown-start"])])
