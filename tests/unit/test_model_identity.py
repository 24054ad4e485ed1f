"""Each provider's model identity (``model_identity``, the provider contract): what the server reports about the
build it serves and about itself, asked once at an experiment's start. Against the project's protocol servers on
loopback (Ollama's ``/api/version``, ``/api/tags`` and ``/api/show``; ``GET /v1/models`` and its headers), a dead
port, and Bedrock's control plane under botocore's Stubber. A server that does not answer is recorded as unknown
with the reason, never raised."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from oriole.provider_registry import PROVIDERS
from oriole.providers import baseline, bedrock, ollama, openai
from oriole.providers.contract import CONTRACT, load_adapter
from oriole.providers.identity import UNKNOWN
from tests import ollama_server
from tests.ollama_server import ScriptedOllama
from tests.openai_server import ScriptedOpenAI
from tests.unit.test_ollama_provider import closed_port_url
from tests.unit.test_server_checks import config

BASE = "anthropic.claude-haiku-4-5-20251001-v1:0"
MODEL_ARN = f"arn:aws:bedrock:us-east-1::foundation-model/{BASE}"
PROFILE_ARN = f"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.{BASE}"


def test_every_adapter_says_what_its_server_reports_and_a_baseline_asks_nothing():
    assert "model_identity" in CONTRACT
    for name in PROVIDERS:
        assert callable(load_adapter(name).model_identity)
    assert baseline.model_identity(config(), "random") is None


def test_ollama_reports_its_version_and_the_models_digest_size_and_quantisation():
    with ScriptedOllama(models=("qwen3:8b",)) as server:
        found = ollama.model_identity(config(endpoint=server.url), "qwen3:8b", api_key="k")
        requests = [(r.method, r.path, r.body) for r in server.listings]
        sent_keys = {r.headers.get("authorization") for r in server.listings}
    assert found.model_build == server.digest("qwen3:8b") and len(found.model_build) == 64
    assert (found.reported_model, found.server_software, found.server_version) == (
        "qwen3:8b",
        "Ollama",
        ollama_server.VERSION,
    )
    assert (found.parameter_size, found.quantization) == ("8.2B", "Q4_K_M")
    assert found.unknown == {} and set(found.answers) == {"/api/version", "/api/tags", "/api/show"}
    assert found.answers["/api/show"]["model_info"]["general.architecture"] == "qwen3"
    assert found.answers["/api/tags"]["models"][0]["details"]["families"] == ["qwen3"]  # kept as it was reported
    assert requests == [
        ("GET", "/api/version", None),
        ("GET", "/api/tags", None),
        ("POST", "/api/show", {"model": "qwen3:8b"}),
    ]
    assert sent_keys == {"Bearer k"}  # asked with the chat's key


def test_a_model_pulled_again_reports_another_build():
    with ScriptedOllama(models=("llama3",)) as server:
        before = ollama.model_identity(config(endpoint=server.url), "llama3")
        server.digests["llama3:latest"] = "f" * 64
        after = ollama.model_identity(config(endpoint=server.url), "llama3")
    assert before.model_build != after.model_build == "f" * 64
    assert after.reported_model == "llama3:latest"  # the tag an untagged name resolves to


def test_an_ollama_that_does_not_have_the_model_or_cannot_be_reached_is_unknown_with_the_reason():
    with ScriptedOllama(models=("other:1b",)) as server:
        missing = ollama.model_identity(config(endpoint=server.url), "qwen3:8b")
    assert missing.model_build == UNKNOWN and missing.server_version == ollama_server.VERSION
    assert "no model named 'qwen3:8b'" in missing.unknown["/api/tags"]
    assert "HTTP 404" in missing.unknown["/api/show"] and "not found" in missing.unknown["/api/show"]
    dead = ollama.model_identity(config(endpoint=closed_port_url(), requestTimeoutSeconds=2), "qwen3:8b")
    assert dead.model_build == UNKNOWN and dead.server_software is None
    assert dead.unknown["/api/version"].startswith("ModelUnavailable: ")
    assert dead.unknown["/api/tags"] == dead.unknown["/api/show"] == "not asked: the server did not answer /api/version"
    assert dead.columns()["model_identity"] == {"answers": {}, "unknown": dead.unknown}


def test_an_openai_compatible_server_reports_the_models_entry_and_its_server_header():
    sent: list[bytes] = []
    with ScriptedOpenAI(models=("Qwen/Qwen3-8B",), api_key="sk-x") as server:
        server_listing = server.listing

        def vllm_listing(request):  # vLLM's entry names the weights it loaded (root), its window, its permissions
            status, body = server_listing(request)[:2]
            sent.append(body.replace(b'"owned_by"', b'"root": "/models/qwen3-8b-awq", "owned_by"'))
            sent[-1] = sent[-1].replace(
                b'"created"', b'"max_model_len": 32768, "permission": [{"id": "p1"}], "created"'
            )
            return (
                status,
                sent[-1],
                {
                    "Server": "uvicorn",
                    "X-Request-Id": "r1",
                },
            )

        server.listing = lambda request: vllm_listing(request) if request.path == "/v1/models" else None
        found = openai.model_identity(config(baseUrl=server.base_url), "Qwen/Qwen3-8B", api_key="sk-x")
    assert (found.model_build, found.reported_model, found.server_software) == (
        "/models/qwen3-8b-awq",
        "Qwen/Qwen3-8B",
        "uvicorn",
    )
    assert found.answers["/models"]["headers"] == {"server": "uvicorn"}  # only the headers that name software
    assert found.answers["/models"]["body"] == json.loads(sent[-1])  # the entry as reported, numbers included
    assert found.unknown == {}


def test_an_openai_compatible_server_refusing_the_key_or_not_listing_the_model_is_unknown_with_the_reason():
    with ScriptedOpenAI(models=("m",), api_key="right") as server:
        refused = openai.model_identity(config(baseUrl=server.base_url), "m", api_key="wrong")
        absent = openai.model_identity(config(baseUrl=server.base_url), "n", api_key="right")
    assert refused.model_build == UNKNOWN and "HTTP 401" in refused.unknown["/models"]
    assert "wrong" not in str(refused.unknown)
    assert absent.model_build == UNKNOWN and "no model with id 'n'" in absent.unknown["/models"]
    assert absent.server_software.startswith("BaseHTTP/")  # what the server said of itself still counts


@pytest.fixture
def control_plane(monkeypatch):
    client = boto3.client("bedrock", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t")
    monkeypatch.setattr(bedrock, "control_client", lambda timeout: client)
    with Stubber(client) as stub:
        yield stub


FOUNDATION = {
    "modelDetails": {
        "modelArn": MODEL_ARN,
        "modelId": BASE,
        "modelName": "Claude Haiku 4.5",
        "providerName": "Anthropic",
        "modelLifecycle": {"status": "ACTIVE"},
    }
}


def test_bedrock_resolves_an_inference_profile_to_the_foundation_model_it_routes_to(control_plane):
    control_plane.add_response(
        "get_inference_profile",
        {
            "inferenceProfileName": "US Claude Haiku 4.5",
            "inferenceProfileArn": PROFILE_ARN,
            "inferenceProfileId": "us." + BASE,
            "status": "ACTIVE",
            "type": "SYSTEM_DEFINED",
            "models": [{"modelArn": MODEL_ARN}, {"modelArn": MODEL_ARN.replace("us-east-1", "us-west-2")}],
        },
        {"inferenceProfileIdentifier": "us." + BASE},
    )
    control_plane.add_response("get_foundation_model", FOUNDATION, {"modelIdentifier": BASE})
    found = bedrock.model_identity(config(), "us." + BASE)
    control_plane.assert_no_pending_responses()
    assert (found.model_build, found.reported_model, found.inference_profile) == (MODEL_ARN, BASE, PROFILE_ARN)
    assert (found.server_software, found.server_version) == ("Amazon Bedrock", "us-east-1")
    assert found.answers["GetFoundationModel"]["modelDetails"]["providerName"] == "Anthropic"
    assert "ResponseMetadata" not in found.answers["GetFoundationModel"] and found.unknown == {}


def test_bedrock_credentials_that_may_not_look_models_up_leave_the_build_unknown(control_plane):
    control_plane.add_client_error(
        "get_foundation_model", "AccessDeniedException", "not authorized to GetFoundationModel"
    )
    found = bedrock.model_identity(config(), BASE)
    assert found.model_build == UNKNOWN and found.inference_profile is None
    assert "AccessDeniedException" in found.unknown["GetFoundationModel"]


def test_what_a_hostile_server_reports_is_kept_storable_and_bounded():
    """A NUL (which PostgreSQL text cannot hold), a lone surrogate, a huge version: kept storable and cut, so the
    start writes its row whatever the server said."""
    with ScriptedOllama(models=("m",)) as server:
        server.listing = lambda request: (
            (200, b'{"version": "1.0\\u0000\\ud800' + b"9" * 5000 + b'"}') if request.path == "/api/version" else None
        )
        found = ollama.model_identity(config(endpoint=server.url), "m")
    assert "\x00" not in found.server_version and len(found.server_version) <= 400
    assert "\x00" not in str(found.answers) and len(str(found.answers)) < 3000


def test_the_transcript_and_the_provenance_name_the_build_or_why_it_is_unknown():
    from oriole_workstation.transcript import model_build

    ollama_row = {
        "llm_provider": "ollama",
        "wire_provider": "ollama",
        "model_build": "a" * 64,
        "server_software": "Ollama",
        "server_version": "0.12.6",
        "model_parameter_size": "8.2B",
        "model_quantization": "Q4_K_M",
    }
    assert model_build(ollama_row) == "build sha256:aaaaaaaaaaaa (Ollama 0.12.6; 8.2B Q4_K_M)"
    unknown = {"llm_provider": "openai", "model_build": UNKNOWN, "identity_unknown": {"/models": "HTTP 404"}}
    assert model_build(unknown) == "build unknown; not told: /models: HTTP 404"
    assert model_build({"llm_provider": "ollama", "model_build": None}) == "build not recorded"
    assert model_build({"llm_provider": "baseline", "wire_provider": "baseline"}) == "none (a baseline calls no model)"
