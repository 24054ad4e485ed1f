"""Where the agent tasks find their API keys: the Secrets Manager secret named by ``<KEY>_SECRET_ARN`` on AWS
(moto stands in for Secrets Manager), else the ``<KEY>`` environment variable, else none."""

from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from oriole.handlers import agents


@pytest.fixture(autouse=True)
def fresh_keys(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_API_KEY_SECRET_ARN", "OLLAMA_API_KEY", "OLLAMA_API_KEY_SECRET_ARN"):
        monkeypatch.delenv(name, raising=False)
    agents.api_key.cache_clear()
    yield
    agents.api_key.cache_clear()


def test_no_key_anywhere_is_no_key():
    assert agents.api_key("openai") is None and agents.api_key("ollama") is None


def test_locally_each_provider_reads_its_own_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert agents.api_key("openai") == "sk-openai" and agents.api_key("ollama") is None


def test_on_aws_the_secret_wins_over_the_variable(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    with mock_aws():
        arn = boto3.client("secretsmanager").create_secret(Name="oriole/openai", SecretString="sk-secret")["ARN"]
        monkeypatch.setenv("OPENAI_API_KEY_SECRET_ARN", arn)
        assert agents.api_key("openai") == "sk-secret"
