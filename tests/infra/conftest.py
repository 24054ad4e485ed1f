"""Both stacks synthesized once per session, offline, for each profile: bundling is skipped through the documented
context ``aws:cdk:bundling-stacks=[]`` (no Docker, no registry), and cdk-nag runs as in ``app.py``. What the tests
ask of a template is in ``tests/infra/templates.py``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")

BASE_MODEL = "anthropic.claude-haiku-4-5-20251001-v1:0"
PROFILE = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
MODEL_IDS = [BASE_MODEL, PROFILE]
OLLAMA_ENDPOINTS = ["https://ollama.lab.example:11434"]
OLLAMA_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/ollama-AbCdEf"
OPENAI_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/openai-GhIjKl"
OPENAI_BASE_URLS = ["https://gpu-box.lab.example/v1/", "https://api.openai.com/v1"]
VISION_MODELS = ["lab/vision-model-8b"]
# The deployment most tests look at, and the one the IAM contract (tests/iam_contract.py) holds the code to.
CONTEXT = {
    "bedrockModelIds": MODEL_IDS,
    "ollamaApiKeySecretArn": OLLAMA_SECRET,
    "maxExecutionSeconds": 3600,
    "ollamaEndpoints": OLLAMA_ENDPOINTS,
    "openaiBaseUrls": OPENAI_BASE_URLS,
    "openaiApiKeySecretArn": OPENAI_SECRET,
    "visionModels": VISION_MODELS,
}
LEAN = {**CONTEXT, "profile": "lean"}  # the same deployment in the lean profile


def synthesize(**context):
    """Both stacks as ``app.py`` makes them, with ``cdk.json``'s context (its defaults and feature flags)
    under the given context."""
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    from infra.nag import suppress_data, suppress_orchestrator
    from infra.settings import Settings
    from infra.stacks import DataStack, OrchestratorStack

    defaults = json.loads((ROOT / "cdk.json").read_text())["context"]
    app = cdk.App(context={**defaults, "aws:cdk:bundling-stacks": [], **context})
    settings = Settings.from_context(app)
    data = DataStack(app, settings.data_stack, settings=settings)
    orchestrator = OrchestratorStack(app, settings.orchestrator_stack, settings=settings, data=data)
    suppress_data(data)
    suppress_orchestrator(orchestrator)
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    app.synth()
    return data, orchestrator


@pytest.fixture(scope="session")
def stacks():
    """The ``CONTEXT`` deployment, synthesized once per session for these tests and the IAM contract alike."""
    from tests.iam_contract import contract_stacks

    return contract_stacks()


@pytest.fixture(scope="session")
def templates(stacks):
    from aws_cdk.assertions import Template

    return tuple(Template.from_stack(stack) for stack in stacks)


@pytest.fixture(scope="session")
def lean_stacks():
    """The ``LEAN`` deployment (``CONTEXT`` in the lean profile), synthesized once per session for these tests and
    the IAM contract alike."""
    from tests.iam_contract import contract_stacks

    return contract_stacks("lean")


@pytest.fixture(scope="session")
def lean_templates(lean_stacks):
    from aws_cdk.assertions import Template

    return tuple(Template.from_stack(stack) for stack in lean_stacks)


@pytest.fixture(scope="session")
def default_stacks():
    """A plain deploy: cdk.json's context and nothing else."""
    return synthesize()


def resolve(
    value,
    template: dict,
    region: str,
    account: str = "123456789012",
    exporter: dict | None = None,
    stack: str | None = None,
):
    """Evaluate the intrinsic functions of a template value as CloudFormation would in ``region``: Ref of pseudo
    parameters (the stack's name and id given ``stack``), Fn::Join, Fn::If on the template's conditions,
    Fn::Equals, Fn::Select, Fn::Split; Ref and Fn::GetAtt of the template's resources give deterministic fake names
    and ARNs (``_reference``); Fn::ImportValue reads the ``exporter`` template's outputs. Anything else raises: a
    value that cannot be resolved is never taken for a string."""
    pseudo = {
        "AWS::Region": region,
        "AWS::Partition": "aws",
        "AWS::AccountId": account,
        "AWS::URLSuffix": "amazonaws.com",
    }
    if stack:
        pseudo |= {
            "AWS::StackName": stack,
            "AWS::StackId": f"arn:aws:cloudformation:{region}:{account}:stack/{stack}/0f1e2d3c-4b5a-6978-8a9b",
        }

    def ev(v):
        if isinstance(v, list):
            return [ev(x) for x in v]
        if not isinstance(v, dict):
            return v
        key = next(iter(v), "")
        if len(v) != 1 or not (key == "Ref" or key.startswith("Fn::")):
            return {k: ev(x) for k, x in v.items()}
        arg = v[key]
        if key == "Ref":
            if arg in pseudo:
                return pseudo[arg]
            if arg not in template["Resources"]:
                raise ValueError(f"resolve has no value for Ref {arg}")
            return _reference(arg, None, template, f"{region}:{account}", ev)
        if key == "Fn::GetAtt":
            return _reference(arg[0], arg[1], template, f"{region}:{account}", ev)
        if key == "Fn::ImportValue":
            outputs = (exporter or {}).get("Outputs", {}).values()
            exported = [o["Value"] for o in outputs if o.get("Export", {}).get("Name") == arg]
            if len(exported) != 1:
                raise ValueError(f"resolve finds no export {arg} (give the exporting template as exporter)")
            return resolve(exported[0], exporter, region, account)
        if key == "Fn::Join":
            return arg[0].join(str(ev(x)) for x in ev(arg[1]))
        if key == "Fn::If":
            return ev(arg[1] if ev(template["Conditions"][arg[0]]) else arg[2])
        if key == "Fn::Equals":
            return ev(arg[0]) == ev(arg[1])
        if key == "Fn::Select":
            return ev(arg[1])[int(arg[0])]
        if key == "Fn::Split":
            return ev(arg[1]).split(arg[0])
        raise ValueError(f"resolve does not evaluate {key}: {v}")

    return ev(value)


def _reference(logical_id: str, attribute: str | None, template: dict, where: str, ev) -> str:
    """A resource's Ref (``attribute`` None) or Fn::GetAtt, as a fake but well-formed value (``where`` is
    ``region:account``): a function is named by its FunctionName, else by its logical id; a version is version 1;
    a secret's ARN ends in ``-AbCdEf``; an instance's id is derived from its logical id, and so is a database
    instance's or cluster's identifier (lower case, as RDS keeps it)."""
    resource = template["Resources"][logical_id]
    kind, properties = resource["Type"], resource.get("Properties", {})
    if kind == "AWS::Lambda::Function":
        name = ev(properties.get("FunctionName", logical_id))
        return name if attribute is None else f"arn:aws:lambda:{where}:function:{name}"
    if kind == "AWS::Lambda::Version" and attribute is None:
        return f"arn:aws:lambda:{where}:function:{ev(properties['FunctionName'])}:1"
    if kind == "AWS::StepFunctions::StateMachine" and attribute in (None, "Arn"):
        return f"arn:aws:states:{where}:stateMachine:{ev(properties['StateMachineName'])}"
    if kind == "AWS::SecretsManager::Secret" and attribute is None:
        return f"arn:aws:secretsmanager:{where}:secret:{logical_id}-AbCdEf"
    if kind == "AWS::SecretsManager::SecretTargetAttachment" and attribute is None:
        return ev(properties["SecretId"])
    if kind == "AWS::SQS::Queue" and attribute == "Arn":
        return f"arn:aws:sqs:{where}:{logical_id}"
    if kind == "AWS::IAM::Role" and attribute == "Arn":
        return f"arn:aws:iam::{where.split(':')[1]}:role/{logical_id}"
    if kind == "AWS::SSM::Document" and attribute is None:
        return logical_id  # its generated name
    if kind == "AWS::EC2::Instance" and attribute is None:
        return "i-" + hashlib.sha256(logical_id.encode()).hexdigest()[:17]
    if kind in ("AWS::RDS::DBInstance", "AWS::RDS::DBCluster") and attribute is None:
        return logical_id.lower()
    raise ValueError(f"resolve has no fake value for {kind} {attribute or 'Ref'} ({logical_id})")
