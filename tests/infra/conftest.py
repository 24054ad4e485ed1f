"""Both stacks synthesized once per session, offline: bundling is skipped through the documented
context ``aws:cdk:bundling-stacks=[]`` (no Docker, no registry), and cdk-nag runs as in ``app.py``."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")

MODEL_IDS = ["anthropic.claude-3-5-haiku-20241022-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0"]
OLLAMA_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/ollama-AbCdEf"
OPENAI_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:oriole/openai-GhIjKl"
OPENAI_BASE_URLS = ["https://gpu-box.lab.example/v1/", "https://api.openai.com/v1"]


def synthesize(**context):
    import aws_cdk as cdk
    from cdk_nag import AwsSolutionsChecks

    from infra.nag import suppress_data, suppress_orchestrator
    from infra.settings import Settings
    from infra.stacks import DataStack, OrchestratorStack

    app = cdk.App(context={"aws:cdk:bundling-stacks": [], **context})
    settings = Settings.from_context(app)
    data = DataStack(app, "OrioleData", settings=settings)
    orchestrator = OrchestratorStack(app, "OrioleOrchestrator", settings=settings, data=data)
    suppress_data(data)
    suppress_orchestrator(orchestrator)
    cdk.Aspects.of(app).add(AwsSolutionsChecks())
    app.synth()
    return data, orchestrator


@pytest.fixture(scope="session")
def stacks():
    return synthesize(bedrockModelIds=MODEL_IDS, ollamaApiKeySecretArn=OLLAMA_SECRET, maxExecutionSeconds=3600,
                      openaiBaseUrls=OPENAI_BASE_URLS, openaiApiKeySecretArn=OPENAI_SECRET)


@pytest.fixture(scope="session")
def templates(stacks):
    from aws_cdk.assertions import Template

    return tuple(Template.from_stack(stack) for stack in stacks)
