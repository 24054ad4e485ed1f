"""StartExperiment as deployed: what the stack allows (Bedrock models, Ollama endpoints, OpenAI-compatible base
URLs) is checked before a row is written, Parameter Store is read by name only, a continuation attaches only under
its successor name and with the token its predecessor's ContinueAsNew issued, and an execution near its hard
timeout continues as new. Real PostgreSQL; the deployment's environment variables set as CDK sets them."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from oriole import catalog
from oriole.environment import BEDROCK_MODEL_IDS, CODE_COMMIT, CODE_DIRTY, CODE_VERSION, EXECUTION_TIMEOUT
from oriole.errors import (
    ContinuationRefused,
    ExperimentNotRunning,
    InvalidConfig,
    InvalidExecutionInput,
    ModelNotAllowed,
)
from oriole.inputs import ExecutionStatusChange
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import (
    ContinueRequest,
    Finalized,
    FinalizeRequest,
    ProgressRequest,
    StartRequest,
    TurnRequest,
)
from oriole.provider_registry import PROVIDERS
from oriole.providers import baseline

HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"
EXECUTIONS = "arn:aws:states:us-east-1:123456789012:execution:oriole-experiment:"


def rows(store) -> int:
    return store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]


def start(store, arn: str, provider="baseline", model="oracle", **config) -> dict:
    event = {
        "input": {"mazeId": "perfect-9", "llmProvider": provider, "modelName": model, "config": config},
        "executionArn": EXECUTIONS + arn,
    }
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()


@pytest.fixture
def on_aws(monkeypatch):
    """The environment CDK gives StartExperiment in us-east-1 with one base model and one Ollama endpoint."""
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv(BEDROCK_MODEL_IDS, json.dumps([HAIKU]))
    monkeypatch.setenv(PROVIDERS["ollama"].servers.listed, json.dumps(["https://ollama.lab.example:11434"]))
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
    assert start(store, "ollama-allowed", "ollama", "qwen2.5:7b", endpoint="https://ollama.lab.example:11434/")[
        "experimentId"
    ]


def test_on_aws_only_a_listed_openai_base_url_is_accepted(store, on_aws):
    on_aws.setenv(PROVIDERS["openai"].servers.listed, json.dumps(["https://gpu-box.lab.example/v1/"]))
    before = rows(store)
    with pytest.raises(
        InvalidConfig,
        match=r"config.baseUrl is the local default http://localhost:8000/v1.*"
        r"openaiBaseUrls.*/oriole/openai/base-url.*params set baseUrl",
    ):
        start(store, "openai-default", "openai", "Qwen/Qwen3-8B")
    with pytest.raises(
        InvalidConfig,
        match=r"'https://api.openai.com/v1' is not an OpenAI-compatible base URL this "
        r"deployment allows \(allowed: https://gpu-box.lab.example/v1/\)",
    ):
        start(store, "openai-elsewhere", "openai", "gpt-4.1-mini", baseUrl="https://api.openai.com/v1")
    assert rows(store) == before
    assert start(store, "openai-allowed", "openai", "Qwen/Qwen3-8B", baseUrl="https://gpu-box.lab.example/v1")[
        "experimentId"
    ]
    on_aws.setenv(PROVIDERS["openai"].servers.listed, json.dumps(["http://gpu-box.internal:8000/v1"]))
    on_aws.setenv(PROVIDERS["openai"].api_key_secret, "arn:aws:secretsmanager:us-east-1:1:secret:key")
    with pytest.raises(
        InvalidConfig,
        match="plain http but this deployment sends an OpenAI-compatible API key: allow only https base URLs",
    ):
        start(store, "openai-http-key", "openai", "m", baseUrl="http://gpu-box.internal:8000/v1")


def test_plain_http_is_refused_when_the_deployment_sends_an_api_key(store, on_aws):
    on_aws.setenv(PROVIDERS["ollama"].servers.listed, json.dumps(["http://ollama.internal:11434"]))
    on_aws.setenv(PROVIDERS["ollama"].api_key_secret, "arn:aws:secretsmanager:us-east-1:1:secret:key")
    with pytest.raises(InvalidConfig, match="plain http but this deployment sends an Ollama API key"):
        start(store, "ollama-http-key", "ollama", "qwen2.5:7b", endpoint="http://ollama.internal:11434")


def test_start_reads_only_the_catalog_the_prompt_and_the_price(store):
    asked: list[list[str]] = []

    def reader(names):
        asked.append(list(names))
        return catalog.defaults()

    event = {
        "input": {"mazeId": "perfect-9", "llmProvider": "bedrock", "modelName": HAIKU},
        "executionArn": EXECUTIONS + "reads-by-name",
    }
    experiments.start(StartRequest.model_validate(event), store, reader).as_state()
    [names] = asked
    assert set(names) == {*catalog.START_NAMES, "/oriole/prompts/v1", catalog.pricing_name(HAIKU)}
    assert not any(name.endswith("/") for name in names)  # names only, never a path


def snapshot(store, experiment_id: int) -> dict:
    return store.conn.execute("SELECT config FROM experiments WHERE id = %s", (experiment_id,)).fetchone()["config"]


@pytest.mark.parametrize("provider, model", [("baseline", "random"), ("ollama", "qwen3:8b"), ("openai", "gpt-x")])
def test_the_stored_configuration_holds_the_keys_of_its_provider_and_no_other(store, provider, model):
    """What applied and nothing else: a baseline stores no model server, temperature or context size; a model its
    own provider's keys, each with the value its requests carry (the defaults included: Ollama's repeat_penalty),
    less those its other settings leave no part (under the defaults, historyMode actions and observation text: the
    earlier turns carried, the summary's compaction, the picture's view)."""
    stored = snapshot(store, start(store, f"keys-{provider}", provider, model)["experimentId"])
    applying = {p.key for p in catalog.CATALOG if p.overridable and provider in p.providers}
    idle = {"historyTurns", "compaction", "imageView"} if provider != "baseline" else set()
    assert set(stored) == (applying - idle) | {"pricing"}
    if provider == "baseline":
        assert not {"baseUrl", "endpoint", "temperature", "numCtx", "requestTimeoutSeconds"} & set(stored)
    if provider == "ollama":
        assert stored["repeatPenalty"] == catalog.BY_KEY["repeatPenalty"].default and "maxOutputTokens" not in stored


def test_a_setting_of_another_provider_is_refused_naming_it_and_nothing_is_written(store):
    before = rows(store)
    with pytest.raises(InvalidConfig, match=r"temperature do not apply to baseline experiments.*leave them out"):
        start(store, "baseline-with-temperature", temperature=0.0)
    with pytest.raises(InvalidConfig, match=r"baseUrl do not apply to ollama.*baseUrl: openai"):
        start(store, "ollama-with-base-url", "ollama", "qwen3:8b", baseUrl="http://127.0.0.1:8000/v1")
    assert rows(store) == before


# -- continuations ------------------------------------------------------------------------------------------------

MACHINE = EXECUTIONS.replace(":execution:", ":stateMachine:").rstrip(":")


def arns(store, experiment_id: int) -> list[str]:
    return store.conn.execute("SELECT execution_arns FROM experiments WHERE id = %s", (experiment_id,)).fetchone()[
        "execution_arns"
    ]


def carried(store, experiment_id: int) -> dict:
    """What a refused continuation must leave as it was."""
    return store.conn.execute(
        "SELECT status, completed_at, execution_arns, continuation_hashes, turn_count FROM experiments WHERE id = %s",
        (experiment_id,),
    ).fetchone()


def resume(store, experiment_id: int, name: str, token: str | None = None) -> dict:
    execution_input = {"experimentId": experiment_id} | ({"continuationToken": token} if token else {})
    return experiments.start(
        StartRequest.model_validate({"input": execution_input, "executionArn": EXECUTIONS + name}),
        store,
        lambda names: catalog.defaults(),
    ).as_state()


class Successors:
    """Step Functions' StartExecution as ContinueAsNew sees it: a name starts once, a second start of the same
    name returns the first execution (whatever its input)."""

    def __init__(self):
        self.inputs: dict[str, dict] = {}

    def __call__(self, state_machine_arn: str, name: str, execution_input: dict) -> str:
        self.inputs.setdefault(name, execution_input)
        return EXECUTIONS + name


def hand_over(store, experiment_id: int, successors: Successors, part: int = 1) -> str:
    """ContinueAsNew of the experiment's ``part``; the token its successor was started with."""
    handed = experiments.continue_as_new(
        ContinueRequest.model_validate({"experimentId": experiment_id, "part": part, "stateMachineArn": MACHINE}),
        store,
        successors,
    )
    name = f"exp-{experiment_id}-part-{part + 1}"
    assert handed.as_state() == {"successorExecutionArn": EXECUTIONS + name, "part": part + 1}
    return successors.inputs[name]["continuationToken"]


def finalize_refused(store, experiment_id: int, name: str) -> Finalized:
    """What the state machine does with a refused start: FinalizeFailure with the input and the execution ARN."""
    return experiments.finalize(
        FinalizeRequest.model_validate(
            {
                "input": {"experimentId": experiment_id},
                "executionArn": EXECUTIONS + name,
                "error": {"Error": "ContinuationRefused", "Cause": "refused"},
            }
        ),
        store,
        "failed",
    )


@pytest.mark.parametrize("name", ["someone-elses-run", "exp-{id}-part-3", "exp-{id}0-part-2", "exp-{id}-part-02"])
def test_a_continuation_not_named_as_the_next_part_neither_attaches_nor_closes(store, name):
    experiment_id = start(store, f"carried-{name}")["experimentId"]
    token = hand_over(store, experiment_id, Successors())
    rogue = name.format(id=experiment_id)
    before = carried(store, experiment_id)
    with pytest.raises(ContinuationRefused, match=f"cannot continue experiment {experiment_id}"):
        resume(store, experiment_id, rogue, token)  # even with the token: not the execution it was issued to
    assert not finalize_refused(store, experiment_id, rogue).closed
    assert carried(store, experiment_id) == before and before["status"] == "running"
    assert arns(store, experiment_id) == [EXECUTIONS + f"carried-{name}"]


@pytest.mark.parametrize("token", [None, "guessed", "x" * 43])
def test_an_execution_started_by_hand_under_the_next_parts_name_is_refused_and_changes_nothing(store, token):
    """A console execution named exp-<id>-part-2 with no token or a wrong one: refused with a named error that
    never quotes a token, the row untouched, and neither FinalizeFailure nor the status-change finalizer closes
    the experiment for its end; the successor ContinueAsNew starts next still attaches."""
    experiment_id = start(store, f"by-hand-{token}")["experimentId"]
    successors = Successors()
    issued = hand_over(store, experiment_id, successors)
    name = f"exp-{experiment_id}-part-2"
    before = carried(store, experiment_id)
    with pytest.raises(ContinuationRefused) as refused:
        resume(store, experiment_id, name, token)
    message = str(refused.value)
    assert message.startswith(f"execution {name} cannot continue experiment {experiment_id}: ")
    assert ("has no continuationToken" if token is None else "was not issued") in message
    assert issued not in message and (token is None or token not in message)
    assert not finalize_refused(store, experiment_id, name).closed
    ended = {
        "executionArn": EXECUTIONS + name,
        "stateMachineArn": MACHINE,
        "name": name,
        "status": "FAILED",
        "error": "ContinuationRefused",
        "input": json.dumps({"experimentId": experiment_id, "continuationToken": token}),
    }
    closed = experiments.close_after_execution(ExecutionStatusChange.model_validate(ended), store, lambda arn: None)
    assert not closed["closed"] and carried(store, experiment_id) == before
    assert resume(store, experiment_id, name, issued)["part"] == 2  # the refusal consumed no issued token


def test_the_successor_attaches_once_with_its_token_even_when_retried_and_consumes_it(store):
    experiment_id = start(store, "carried-on")["experimentId"]
    successors = Successors()
    token = hand_over(store, experiment_id, successors)
    assert successors.inputs == {
        f"exp-{experiment_id}-part-2": {"experimentId": experiment_id, "continuationToken": token}
    }
    for _ in range(2):
        assert resume(store, experiment_id, f"exp-{experiment_id}-part-2", token)["part"] == 2
    assert arns(store, experiment_id)[1:] == [EXECUTIONS + f"exp-{experiment_id}-part-2"]
    assert carried(store, experiment_id)["continuation_hashes"] == []  # consumed by the attach
    with pytest.raises(ContinuationRefused):  # a token opens one part only
        resume(store, experiment_id, f"exp-{experiment_id}-part-3", token)
    assert len(arns(store, experiment_id)) == 2


def test_a_retried_continue_as_new_leaves_the_successor_it_started_able_to_attach(store):
    """The first attempt started the successor and its answer was lost: the retry issues another token, its
    start meets the existing execution (the name starts once), and the successor's own token still attaches;
    a retry after the successor attached issues nothing and returns it."""
    experiment_id = start(store, "retried-handover")["experimentId"]
    successors = Successors()
    first = hand_over(store, experiment_id, successors)
    assert hand_over(store, experiment_id, successors) == first  # the successor keeps its input
    assert len(carried(store, experiment_id)["continuation_hashes"]) == 2
    assert resume(store, experiment_id, f"exp-{experiment_id}-part-2", first)["part"] == 2
    hand_over(store, experiment_id, successors)
    assert carried(store, experiment_id)["continuation_hashes"] == []


def test_a_closed_experiment_starts_no_successor(store):
    experiment_id = start(store, "closed-before-handover")["experimentId"]
    experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": experiment_id, "reason": "stopped"}), store, "aborted"
    )
    successors = Successors()
    with pytest.raises(ExperimentNotRunning, match="is aborted with 1 execution\\(s\\); part 2 not started"):
        hand_over(store, experiment_id, successors)
    assert successors.inputs == {}


def test_an_experiment_started_before_tokens_hands_over_once_without_one(store):
    """Migration 0013 leaves the hashes of earlier experiments NULL: their running executions hand over without
    a token once; from then on the experiment needs tokens like any other."""
    experiment_id = start(store, "from-before-tokens")["experimentId"]
    store.conn.execute("UPDATE experiments SET continuation_hashes = NULL WHERE id = %s", (experiment_id,))
    assert resume(store, experiment_id, f"exp-{experiment_id}-part-2")["part"] == 2
    with pytest.raises(ContinuationRefused, match="has no continuationToken"):
        resume(store, experiment_id, f"exp-{experiment_id}-part-3")


# -- the execution's hard timeout ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("ran_for", "decision"), [(600, "continue"), (9000 - 600, "continue_as_new")])
def test_an_execution_near_its_timeout_continues_as_new(store, monkeypatch, ran_for, decision):
    """9,000 s execution timeout: with less than a turn's allowance (a whole model task and CheckProgress)
    left, the experiment goes on in a new execution instead of dying on Step Functions' timeout."""
    monkeypatch.setenv(EXECUTION_TIMEOUT, "9000")
    experiment_id = start(store, f"long-{ran_for}", maxDurationMinutes=600)["experimentId"]
    experiments.play_turn(
        TurnRequest.model_validate({"experimentId": experiment_id, "turnNumber": 1}), store, baseline.agent
    )
    started = (datetime.now(UTC) - timedelta(seconds=ran_for)).isoformat().replace("+00:00", "Z")
    result = experiments.check_progress(
        ProgressRequest.model_validate(
            {"experimentId": experiment_id, "turnInExecution": 1, "executionStartTime": started}
        ),
        store,
    )
    assert result.decision == decision


def test_each_experiment_records_the_code_and_the_harness_it_started_with(store, monkeypatch):
    """Locally the commit and the flag are the checkout's own (git), the hash the runtime's files'; on AWS the
    commit and the flag are what CDK recorded at synthesis, the hash still the files' the function imported."""
    from pathlib import Path

    from oriole import __version__, code_identity
    from oriole.core import harness

    local = start(store, "code-local")["experimentId"]
    monkeypatch.setenv(CODE_VERSION, f"{__version__}+0123456789ab")
    monkeypatch.setenv(CODE_COMMIT, "c0ffee" * 6 + "abcd")
    monkeypatch.setenv(CODE_DIRTY, "false")
    deployed = start(store, "code-deployed")["experimentId"]
    rows = store.conn.execute(
        "SELECT id, code_version, code_commit, code_dirty, code_hash, harness_version, harness_hash "
        "FROM experiments WHERE id IN (%s, %s)",
        (local, deployed),
    ).fetchall()
    recorded = {r.pop("id"): r for r in rows}
    digest = code_identity.runtime_hash()
    commit, dirty = code_identity.git_state(Path(code_identity.__file__).parent)
    assert commit is not None and len(commit) == 40  # the tests run from a checkout
    ran = {"code_hash": digest, "harness_version": harness.HARNESS_VERSION, "harness_hash": harness.harness_hash()}
    assert recorded[local] == {
        "code_version": f"{__version__}+local.{digest[:12]}",
        "code_commit": commit,
        "code_dirty": dirty,
        **ran,
    }
    assert recorded[deployed] == {
        "code_version": f"{__version__}+0123456789ab",
        "code_commit": "c0ffee" * 6 + "abcd",
        "code_dirty": False,
        **ran,
    }
    body = store.conn.execute("SELECT version, body FROM harnesses WHERE hash = %s", (ran["harness_hash"],)).fetchone()
    assert body == {"version": harness.HARNESS_VERSION, "body": harness.description()}
