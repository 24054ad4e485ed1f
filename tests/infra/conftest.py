"""Both stacks synthesized once per session, offline: bundling is skipped through the documented
context ``aws:cdk:bundling-stacks=[]`` (no Docker, no registry), and cdk-nag runs as in ``app.py``."""

from __future__ import annotations

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
    return synthesize(bedrockModelIds=MODEL_IDS, ollamaApiKeySecretArn=OLLAMA_SECRET, maxExecutionSeconds=3600,
                      ollamaEndpoints=OLLAMA_ENDPOINTS, openaiBaseUrls=OPENAI_BASE_URLS,
                      openaiApiKeySecretArn=OPENAI_SECRET)


@pytest.fixture(scope="session")
def templates(stacks):
    from aws_cdk.assertions import Template

    return tuple(Template.from_stack(stack) for stack in stacks)


@pytest.fixture(scope="session")
def default_stacks():
    """A plain deploy: cdk.json's context and nothing else."""
    return synthesize()


def resolve(value, template: dict, region: str, account: str = "123456789012"):
    """Evaluate the intrinsic functions of a template value as CloudFormation would in ``region`` (the few
    the stacks use: Ref of pseudo parameters, Fn::Join, Fn::If on the template's conditions, Fn::Equals,
    Fn::Select, Fn::Split)."""
    def ev(v):
        if isinstance(v, list):
            return [ev(x) for x in v]
        if not isinstance(v, dict) or len(v) != 1:
            return v
        [(key, arg)] = v.items()
        if key == "Ref":
            return {"AWS::Region": region, "AWS::Partition": "aws", "AWS::AccountId": account}.get(arg, v)
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
        return v
    return ev(value)
