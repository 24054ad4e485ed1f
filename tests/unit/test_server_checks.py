"""Each provider's check of its model server (``check_server``, the provider contract): the cheapest documented
call, asked once for every model a sweep sends there. Against the project's protocol servers on loopback (Ollama's
``GET /api/tags``, ``GET /v1/models``), a dead port, and Bedrock's control plane under botocore's Stubber."""

from __future__ import annotations

import re
import socket
import time

import boto3
import pytest
from botocore.stub import Stubber

from oriole.errors import InvalidModelResponse, ModelRequestRejected, ModelUnavailable
from oriole.experiment_config import ExperimentConfig
from oriole.provider_registry import PROVIDERS
from oriole.providers import baseline, bedrock, ollama, openai
from oriole.providers.contract import CONTRACT, load_adapter
from tests.ollama_server import ScriptedOllama
from tests.openai_server import ScriptedOpenAI
from tests.unit.test_ollama_provider import closed_port_url


def config(**overrides: object) -> ExperimentConfig:
    """A resolved configuration: the catalog's defaults, with ``overrides``."""
    return ExperimentConfig.of(overrides)


def test_every_adapter_checks_its_server():
    assert "check_server" in CONTRACT
    for name in PROVIDERS:
        assert callable(load_adapter(name).check_server)
    assert baseline.check_server(config(), ["random"]) == "no model server"


def test_an_openai_compatible_server_is_asked_once_for_every_model_it_should_serve():
    with ScriptedOpenAI(models=("Qwen/Qwen3-8B", "gpt-4.1-mini")) as server:
        said = openai.check_server(config(baseUrl=server.base_url), ["Qwen/Qwen3-8B", "gpt-4.1-mini"])
        assert said.startswith(f"the OpenAI-compatible server at {server.base_url} serves Qwen/Qwen3-8B, gpt-4.1-mini")
        assert [(r.method, r.path) for r in server.listings] == [("GET", "/v1/models")] and server.requests == []


def test_a_model_the_server_does_not_serve_is_refused_with_the_closest_it_does():
    with (
        ScriptedOpenAI(models=("Qwen/Qwen3-8B", "Qwen/Qwen3-32B", "other")) as server,
        pytest.raises(ModelRequestRejected) as refused,
    ):
        openai.check_server(config(baseUrl=server.base_url), ["Qwen/Qwen3-8b"])
    assert f"at {server.base_url} serves no model 'Qwen/Qwen3-8b'; it serves: Qwen/Qwen3-8B" in str(refused.value)


def test_ollama_lists_its_pulled_models_with_their_tags():
    with ScriptedOllama(models=("llama3", "qwen2.5:7b")) as server:
        said = ollama.check_server(config(endpoint=server.url), ["llama3", "qwen2.5:7b", "llama3:latest"])
        assert said.startswith(f"Ollama at {server.url} serves llama3, qwen2.5:7b, llama3:latest")
        with pytest.raises(
            ModelRequestRejected, match=re.escape("serves no model 'qwen2.5:14b'; it serves: qwen2.5:7b")
        ):
            ollama.check_server(config(endpoint=server.url), ["qwen2.5:14b"])
        assert [r.path for r in server.listings] == ["/api/tags", "/api/tags"]


def test_a_dead_port_is_unavailable_naming_the_server_and_what_to_do():
    url = closed_port_url()
    with pytest.raises(ModelUnavailable) as dead:
        ollama.check_server(config(endpoint=url, requestTimeoutSeconds=2), ["llama3"])
    assert f"at {url}" in str(dead.value) and "Check that Ollama is running" in str(dead.value)


def test_a_wrong_api_key_is_refused_and_the_key_never_shown():
    with ScriptedOpenAI(models=("m",), api_key="right-key") as server, pytest.raises(ModelRequestRejected) as refused:
        openai.check_server(config(baseUrl=server.base_url), ["m"], api_key="wrong-key")
    assert "HTTP 401" in str(refused.value) and "wrong-key" not in str(refused.value)


def test_an_answer_that_lists_no_models_says_what_came_back():
    with ScriptedOpenAI() as server:
        server.listing = lambda request: (200, b'{"models": "none"}')  # a server that is not OpenAI-compatible
        with pytest.raises(InvalidModelResponse, match="lists no models"):
            openai.check_server(config(baseUrl=server.base_url), ["m"])


def test_a_silent_server_is_given_up_on_within_the_request_timeout():
    with socket.socket() as silent:  # takes the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        started = time.monotonic()
        with pytest.raises(ModelUnavailable, match="did not answer within 1 s"):
            openai.check_server(config(baseUrl=url, requestTimeoutSeconds=1), ["m"])
        assert time.monotonic() - started < 3


@pytest.fixture
def control_plane(monkeypatch):
    client = boto3.client("bedrock", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    monkeypatch.setattr(bedrock, "control_client", lambda timeout: client)
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()


AVAILABLE = {
    "modelId": "anthropic.claude-3-haiku-20240307-v1:0",
    "agreementAvailability": {"status": "AVAILABLE"},
    "authorizationStatus": "AUTHORIZED",
    "entitlementAvailability": "AVAILABLE",
    "regionAvailability": "AVAILABLE",
}


def test_bedrock_looks_each_model_up_and_an_inference_profile_through_its_model(control_plane):
    stub = control_plane
    base = "anthropic.claude-haiku-4-5-20251001-v1:0"
    stub.add_response("get_foundation_model_availability", AVAILABLE, {"modelId": AVAILABLE["modelId"]})
    stub.add_client_error("get_foundation_model_availability", "ValidationException", "not a model id")
    stub.add_response(
        "get_inference_profile",
        {
            "inferenceProfileName": "US Claude Haiku 4.5",
            "inferenceProfileArn": "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us." + base,
            "inferenceProfileId": "us." + base,
            "status": "ACTIVE",
            "type": "SYSTEM_DEFINED",
            "models": [{"modelArn": f"arn:aws:bedrock:us-east-1::foundation-model/{base}"}],
        },
        {"inferenceProfileIdentifier": "us." + base},
    )
    stub.add_response("get_foundation_model_availability", {**AVAILABLE, "modelId": base}, {"modelId": base})
    said = bedrock.check_server(config(), [AVAILABLE["modelId"], "us." + base])
    assert said == f"Amazon Bedrock in us-east-1 serves {AVAILABLE['modelId']}, us.{base} ({base})"


def test_bedrock_refuses_a_model_this_account_is_not_granted_and_one_that_does_not_exist(control_plane):
    stub = control_plane
    stub.add_response("get_foundation_model_availability", {**AVAILABLE, "authorizationStatus": "NOT_AUTHORIZED"})
    with pytest.raises(ModelRequestRejected, match=r"will not serve .*this account is not granted it"):
        bedrock.check_server(config(), [AVAILABLE["modelId"]])
    stub.add_client_error("get_foundation_model_availability", "ResourceNotFoundException", "no such model")
    stub.add_client_error("get_inference_profile", "ResourceNotFoundException", "no such profile")
    with pytest.raises(
        ModelRequestRejected, match=re.escape("has no model or inference profile 'anthropic.claude-typo'")
    ):
        bedrock.check_server(config(), ["anthropic.claude-typo"])


def test_credentials_that_may_not_look_models_up_leave_the_model_unchecked_not_refused(control_plane):
    stub = control_plane
    stub.add_client_error("get_foundation_model_availability", "AccessDeniedException", "not allowed")
    said = bedrock.check_server(config(), [AVAILABLE["modelId"]])
    assert said.startswith(f"Amazon Bedrock in us-east-1: {AVAILABLE['modelId']} not checked")
