"""The runtime's environment is one model (``oriole.environment.Environment``): nothing else in the runtime reads
``os.environ``; unset variables mean a local run; a malformed or missing variable is named."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from oriole import environment
from oriole.environment import Environment, MalformedEnvironment

RUNTIME = Path(environment.__file__).parent


def test_nothing_in_the_runtime_but_the_model_reads_the_process_environment():
    reads = [
        f"{path.relative_to(RUNTIME)}:{node.lineno}"
        for path in RUNTIME.rglob("*.py")
        if path.name != "environment.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") and ast.unparse(node.value) == "os"
    ]
    assert reads == []


def test_an_empty_environment_is_a_local_run_that_restricts_nothing():
    env = Environment.read({})
    assert (env.deployment, env.database_url, env.code_version, env.execution_timeout_seconds) == (
        "Oriole",
        None,
        None,
        None,
    )
    assert env.bedrock_model_ids is None and env.vision_models == () and env.role_secrets == {}
    assert env.model_servers("ollama") is None and env.model_servers("bedrock") is None
    assert env.api_key_secret("openai") is None and env.api_key("baseline") is None


def test_what_a_deployment_sets_is_read_typed():
    env = Environment.read(
        {
            environment.DEPLOYMENT: "Lab",
            environment.EXECUTION_TIMEOUT: "8460",
            environment.BEDROCK_MODEL_IDS: '["anthropic.claude-x"]',
            "ORIOLE_OLLAMA_ENDPOINTS": '["https://gpu:11434"]',
            "OPENAI_API_KEY_SECRET_ARN": "arn:aws:secretsmanager:us-east-1:1:secret:k",
            "OPENAI_API_KEY": "sk-local",
            environment.ROLE_SECRETS: '{"oriole_app": "arn:app"}',
        }
    )
    assert (env.deployment, env.execution_timeout_seconds, env.execution_timeout) == ("Lab", 8460, 8460)
    assert env.bedrock_model_ids == ("anthropic.claude-x",) and env.model_servers("ollama") == ("https://gpu:11434",)
    assert env.api_key_secret("openai").endswith(":secret:k") and env.api_key("openai") == "sk-local"
    assert env.role_secrets == {"oriole_app": "arn:app"}


@pytest.mark.parametrize("text", ["qwen2.5:7b", '{"a": 1}', "[1, 2]"])
def test_a_malformed_list_fails_only_what_reads_it_and_names_the_variable(text):
    env = Environment.read({environment.VISION_MODELS: text, environment.CODE_VERSION: "1.0+abc"})
    assert env.code_version == "1.0+abc"  # the rest still reads
    with pytest.raises(MalformedEnvironment, match="ORIOLE_VISION_MODELS must be a JSON list of strings"):
        assert env.vision_models


def test_a_variable_a_function_needs_is_named_when_it_is_missing():
    with pytest.raises(MalformedEnvironment, match="ORIOLE_STATE_MACHINE_ARN is not set"):
        assert Environment.read({}).state_machine_arn
