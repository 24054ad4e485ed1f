"""StartExperiment as deployed: what the stack allows (Bedrock models, Ollama endpoints, OpenAI-compatible base
URLs) is checked before a
row is written, Parameter Store is read by name only, a continuation attaches only under its successor name,
and an execution near its hard timeout continues as new. Real PostgreSQL; the deployment's environment
variables set as CDK sets them."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from oriole import catalog, deployment, experiments
from oriole.errors import InvalidConfig, InvalidExecutionInput, ModelNotAllowed

HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
EXECUTIONS = "arn:aws:states:us-east-1:123456789012:execution:oriole-experiment:"


def rows(store) -> int:
    return store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


def start(store, arn: str, provider="baseline", model="oracle", **config) -> dict:
    event = {"input": {"mazeId": "perfect-9", "llmProvider": provider, "modelName": model, "config": config},
             "executionArn": EXECUTIONS + arn}
    return experiments.start(event, store, lambda names: catalog.defaults())


@pytest.fixture
def on_aws(monkeypatch):
    """The environment CDK gives StartExperiment in us-east-1 with one base model and one Ollama endpoint."""
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv(deployment.BEDROCK_MODEL_IDS, json.dumps([HAIKU]))
    monkeypatch.setenv(deployment.OLLAMA_ENDPOINTS, json.dumps(["https://ollama.lab.example:11434"]))
    return monkeypatch


def test_a_model_the_deployment_does_not_grant_is_refused_before_a_row_is_written(store, on_aws):
    before = rows(store)
    with pytest.raises(ModelNotAllowed) as refused:
        start(store, "legacy-model", "bedrock", "anthropic.claude-3-5-haiku-20241022-v1:0")
    message = str(refused.value)
    assert f"us.{HAIKU}" in message and f"global.{HAIKU}" in message and "bedrockModelIds" in message
    assert rows(store) == before
    assert isinstance(refused.value, InvalidExecutionInput)  # the execution fails with the input's error


@pytest.mark.parametrize("model", [HAIKU, f"us.{HAIKU}", f"global.{HAIKU}"])
def test_a_granted_base_model_may_be_named_as_itself_or_through_its_profiles(store, on_aws, model):
    assert start(store, f"granted-{model}", "bedrock", model)["experimentId"]


def test_an_eu_deployment_allows_the_eu_profile_and_not_the_us_one(store, on_aws):
    on_aws.setenv("AWS_REGION", "eu-west-1")
    assert start(store, "eu-profile", "bedrock", f"eu.{HAIKU}")["experimentId"]
    with pytest.raises(ModelNotAllowed):
        start(store, "us-profile-in-eu", "bedrock", f"us.{HAIKU}")


def test_locally_every_model_and_endpoint_is_allowed(store):
    assert start(store, "local-bedrock", "bedrock", "vendor.any-model-v1")["experimentId"]
    assert start(store, "local-ollama", "ollama", "qwen2.5:7b")["experimentId"]
    assert start(store, "local-openai", "openai", "Qwen/Qwen3-8B")["experimentId"]


def test_on_aws_the_local_ollama_default_is_refused_saying_what_to_set(store, on_aws):
    before = rows(store)
    with pytest.raises(InvalidConfig, match=r"local default http://localhost:11434.*ollamaEndpoints.*params set"):
        start(store, "ollama-default", "ollama", "qwen2.5:7b")
    with pytest.raises(InvalidConfig, match=r"not an Ollama endpoint this deployment allows .*ollama\.lab\.example"):
        start(store, "ollama-elsewhere", "ollama", "qwen2.5:7b", endpoint="http://10.0.0.12:8080")
    assert rows(store) == before
    assert start(store, "ollama-allowed", "ollama", "qwen2.5:7b",
                 endpoint="https://ollama.lab.example:11434/")["experimentId"]


def test_on_aws_only_a_listed_openai_base_url_is_accepted(store, on_aws):
    on_aws.setenv(deployment.OPENAI_BASE_URLS, json.dumps(["https://gpu-box.lab.example/v1/"]))
    before = rows(store)
    with pytest.raises(InvalidConfig, match=r"config.baseUrl is the local default http://localhost:8000/v1.*"
                                            r"openaiBaseUrls.*/oriole/openai/base-url.*params set baseUrl"):
        start(store, "openai-default", "openai", "Qwen/Qwen3-8B")
    with pytest.raises(InvalidConfig, match=r"'https://api.openai.com/v1' is not an OpenAI-compatible base URL this "
                                            r"deployment allows \(allowed: https://gpu-box.lab.example/v1/\)"):
        start(store, "openai-elsewhere", "openai", "gpt-4.1-mini", baseUrl="https://api.openai.com/v1")
    assert rows(store) == before
    assert start(store, "openai-allowed", "openai", "Qwen/Qwen3-8B",
                 baseUrl="https://gpu-box.lab.example/v1")["experimentId"]
    on_aws.setenv(deployment.OPENAI_BASE_URLS, json.dumps(["http://gpu-box.internal:8000/v1"]))
    on_aws.setenv(deployment.OPENAI_API_KEY_SECRET, "arn:aws:secretsmanager:us-east-1:1:secret:key")
    with pytest.raises(InvalidConfig, match="plain http but this deployment sends an OpenAI-compatible API key: "
                                            "allow only https base URLs"):
        start(store, "openai-http-key", "openai", "m", baseUrl="http://gpu-box.internal:8000/v1")


def test_plain_http_is_refused_when_the_deployment_sends_an_api_key(store, on_aws):
    on_aws.setenv(deployment.OLLAMA_ENDPOINTS, json.dumps(["http://ollama.internal:11434"]))
    on_aws.setenv(deployment.OLLAMA_API_KEY_SECRET, "arn:aws:secretsmanager:us-east-1:1:secret:key")
    with pytest.raises(InvalidConfig, match="plain http but this deployment sends an Ollama API key"):
        start(store, "ollama-http-key", "ollama", "qwen2.5:7b", endpoint="http://ollama.internal:11434")


def test_start_reads_only_the_catalog_the_prompt_and_the_price(store):
    asked: list[list[str]] = []

    def reader(names):
        asked.append(list(names))
        return catalog.defaults()

    event = {"input": {"mazeId": "perfect-9", "llmProvider": "bedrock", "modelName": HAIKU},
             "executionArn": EXECUTIONS + "reads-by-name"}
    experiments.start(event, store, reader)
    [names] = asked
    assert set(names) == {*catalog.START_NAMES, "/oriole/prompts/v1", catalog.pricing_name(HAIKU)}
    assert not any(name.endswith("/") for name in names)  # names only, never a path


# -- continuations ------------------------------------------------------------------------------------------------

def arns(store, experiment_id: int) -> list[str]:
    return store.conn.execute("SELECT execution_arns FROM experiments WHERE id = %s",
                              (experiment_id,)).fetchone()["execution_arns"]


def resume(store, experiment_id: int, name: str) -> dict:
    return experiments.start({"input": {"experimentId": experiment_id}, "executionArn": EXECUTIONS + name}, store,
                             lambda names: catalog.defaults())


@pytest.mark.parametrize("name", ["someone-elses-run", "exp-{id}-part-3", "exp-{id}0-part-2", "exp-{id}-part-02"])
def test_a_continuation_not_named_as_the_next_part_neither_attaches_nor_closes(store, name):
    experiment_id = start(store, f"carried-{name}")["experimentId"]
    rogue = name.format(id=experiment_id)
    with pytest.raises(InvalidExecutionInput, match=f"cannot continue|not the next part of experiment {experiment_id}"):
        resume(store, experiment_id, rogue)
    # the state machine sends the failed start to FinalizeFailure with the input and the execution ARN
    closed = experiments.finalize({"input": {"experimentId": experiment_id}, "executionArn": EXECUTIONS + rogue,
                                   "error": {"Error": "InvalidExecutionInput", "Cause": "refused"}}, store, "failed")
    assert not closed["closed"]
    row = store.conn.execute("SELECT status FROM experiments WHERE id = %s", (experiment_id,)).fetchone()
    assert row["status"] == "running" and arns(store, experiment_id) == [EXECUTIONS + f"carried-{name}"]


def test_the_expected_successor_attaches_once_even_when_retried(store):
    experiment_id = start(store, "carried-on")["experimentId"]
    for _ in range(2):
        assert resume(store, experiment_id, f"exp-{experiment_id}-part-2")["part"] == 2
    assert arns(store, experiment_id)[1:] == [EXECUTIONS + f"exp-{experiment_id}-part-2"]


# -- the execution's hard timeout ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("ran_for", "decision"), [(600, "continue"), (9000 - 600, "continue_as_new")])
def test_an_execution_near_its_timeout_continues_as_new(store, monkeypatch, ran_for, decision):
    """9,000 s execution timeout: with less than a turn's allowance (a whole model task and CheckProgress)
    left, the experiment goes on in a new execution instead of dying on Step Functions' timeout."""
    monkeypatch.setenv(deployment.EXECUTION_TIMEOUT, "9000")
    experiment_id = start(store, f"long-{ran_for}", maxDurationMinutes=600)["experimentId"]
    experiments.play_turn({"experimentId": experiment_id, "turnNumber": 1}, store, experiments.baseline_agent)
    started = (datetime.now(UTC) - timedelta(seconds=ran_for)).isoformat().replace("+00:00", "Z")
    result = experiments.check_progress({"experimentId": experiment_id, "turnInExecution": 1,
                                         "executionStartTime": started}, store)
    assert result["decision"] == decision


def test_each_experiment_records_the_code_version_it_started_with(store, monkeypatch):
    from oriole import __version__

    local = start(store, "code-local")["experimentId"]
    monkeypatch.setenv(deployment.CODE_VERSION, f"{__version__}+0123456789ab")
    deployed = start(store, "code-deployed")["experimentId"]
    rows = store.conn.execute("SELECT id, code_version FROM experiments WHERE id IN (%s, %s)",
                              (local, deployed)).fetchall()
    versions = {r["id"]: r["code_version"] for r in rows}
    assert versions == {local: f"{__version__}+local", deployed: f"{__version__}+0123456789ab"}
