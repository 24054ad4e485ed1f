"""The replay regression corpus (tests/replay_corpus: recorded experiments of every provider and memory mode, a
breaker, give_up, text tool calls, a continuation), each loaded into a fresh database and replayed through the
``oriole replay`` command: every one must come back identical. A change that alters a trajectory fails here with
the first difference; so does an altered answer, which proves the comparison can fail. Replays run with no AWS
credentials and no Bedrock client: the recorded agent never sends a request."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oriole import catalog
from tests.replay_corpus import record

FIXTURES = sorted(Path(record.__file__).parent.glob("*.json"))
JSON_KEYS = {"experiment_id", "replay_id", "identical", "turns", "actions", "first_difference", "recorded_end"}
DIFFERENCE_KEYS = {"turn", "step", "at", "what", "expected", "got"}


def fixture(name: str) -> dict:
    return json.loads((Path(record.__file__).parent / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def corpus_url(module_database):
    return module_database


@pytest.fixture(scope="module")
def conn(corpus_url):
    from oriole.store import db

    connection = db.connect(corpus_url)
    yield connection
    connection.close()


@pytest.fixture
def replay(corpus_url, monkeypatch, tmp_path):
    """``oriole replay ARGS`` in process against the corpus database, with no AWS credentials anywhere and a Bedrock
    client that fails the test if anything builds it."""
    from typer.testing import CliRunner

    from oriole.providers import bedrock
    from oriole_workstation.cli import app

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("DATABASE_URL", corpus_url)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")

    def no_client(*args):
        raise AssertionError("a replay built a Bedrock client")

    monkeypatch.setattr(bedrock, "shared_client", no_client)
    monkeypatch.setattr(bedrock, "runtime_client", no_client)

    def invoke(*args: object):
        return CliRunner().invoke(app, ["replay", *map(str, args)])

    return invoke


def json_lines(outcome) -> list[dict]:
    """The JSON objects ``--json`` printed, one per experiment."""
    decoder, text, objects = json.JSONDecoder(), outcome.stdout.strip(), []
    while text:
        found, end = decoder.raw_decode(text)
        objects.append(found)
        text = text[end:].strip()
    return objects


def test_the_corpus_covers_every_provider_memory_mode_and_ending():
    experiments = [fixture(path.stem)["experiment"] for path in FIXTURES]
    assert {e["llm_provider"] for e in experiments} == {"bedrock", "ollama", "openai"}
    configs = [e["config"] for e in experiments]
    assert {c["historyMode"] for c in configs} == {"actions", "conversation", "summary"}
    assert {c["compaction"] for c in configs if c["historyMode"] == "summary"} == {"map", "model"}
    assert any(c["textToolCalls"] for c in configs) and any(c["enableGiveUp"] for c in configs)
    assert any(len(e["execution_arns"]) > 1 for e in experiments)  # a continuation across executions
    reasons = {e["failure_reason"].split(":")[0] for e in experiments if e["status"] == "failed"}
    assert reasons == {"agent_stalled", "agent_gave_up"}
    ends = {t["end_reason"] for path in FIXTURES for t in fixture(path.stem)["turns"]}
    assert {"circuit_breaker", "gave_up", "goal_found", "no_tool_call"} <= ends
    # recorded under limits lowered since (maxTurnsPerExecution up to 350 then, 180 now): replayed as recorded
    assert any(c["maxTurnsPerExecution"] > catalog.MAX_TURNS_PER_EXECUTION for c in configs)


@pytest.mark.parametrize("path", FIXTURES, ids=[path.stem for path in FIXTURES])
def test_every_recorded_experiment_replays_identically_without_a_server_or_credentials(conn, replay, path):
    stored = fixture(path.stem)
    original = record.load(conn, stored)
    outcome = replay(original, "--json")
    assert outcome.exit_code == 0, outcome.output
    (result,) = json_lines(outcome)
    assert set(result) == JSON_KEYS
    assert result["identical"] is True and result["first_difference"] is None
    assert (result["experiment_id"], result["turns"], result["actions"]) == (
        original,
        len(stored["turns"]),
        len(stored["actions"]),
    )
    ending = "SELECT status, failure_reason, replay_of FROM experiments WHERE id = %s"
    replayed = conn.execute(ending, (result["replay_id"],)).fetchone()
    assert (replayed["status"], replayed["failure_reason"], replayed["replay_of"]) == (
        stored["experiment"]["status"],
        stored["experiment"]["failure_reason"],
        original,
    )


def still_running(stored: dict) -> None:
    stored["experiment"].update(status="running", completed_at=None, failure_reason=None, ending=None)


def altered(stored: dict, tool: str) -> dict:
    """The fixture with its first call's answer naming another tool (the bytes as the database holds them)."""
    call = stored["model_calls"][0]
    answer = json.loads(bytes.fromhex(call["answer"].removeprefix("\\x")))
    answer["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = tool
    call["answer"] = "\\x" + json.dumps(answer).encode().hex()
    return stored


def test_an_altered_answer_fails_the_replay_with_the_first_difference(conn, replay):
    stored = altered(fixture("openai-actions-breaker-stalled"), "move_west")
    original = record.load(conn, stored)
    outcome = replay(original, "--json")
    assert outcome.exit_code == 1, outcome.output
    (result,) = json_lines(outcome)
    assert set(result) == JSON_KEYS and set(result["first_difference"]) == DIFFERENCE_KEYS
    assert result["identical"] is False
    difference = result["first_difference"]
    assert (difference["turn"], difference["at"], difference["step"]) == (1, "before step", 1)  # a call: before it
    assert difference["what"] == "call 1 response (response)"
    # the original read its answer as the move it made; the replay reads the altered answer
    assert difference["expected"]["tool_calls"][0]["name"] == stored["actions"][0]["action_type"]
    assert difference["got"]["tool_calls"][0]["name"] == "move_west"


@pytest.mark.parametrize(
    "change, why",
    [
        (still_running, "it is still running"),
        (lambda s: s["experiment"].update(llm_provider="baseline"), "a baseline calls no model"),
        (lambda s: s["model_calls"][1].update(answer=None), "turn 1 call 2 was stored without its request record"),
    ],
    ids=["running", "baseline", "before-0017"],
)
def test_what_cannot_be_replayed_exits_2_with_one_line_naming_the_experiment(conn, replay, change, why):
    stored = fixture("openai-actions-breaker-stalled")
    change(stored)
    original = record.load(conn, stored)
    outcome = replay(original)
    assert outcome.exit_code == 2
    (line,) = outcome.output.strip().splitlines()
    assert line.startswith(f"error: experiment {original} cannot be replayed: {why}")


def test_a_replay_is_not_replayed_again(conn, replay):
    original = record.load(conn, fixture("bedrock-conversation-give-up"))
    (first,) = json_lines(replay(original, "--json"))
    outcome = replay(first["replay_id"])
    assert outcome.exit_code == 2
    assert outcome.output.strip() == (
        f"error: experiment {first['replay_id']} cannot be replayed: it is itself a "
        f"replay; replay experiment {original}"
    )


def test_a_sweep_replays_every_experiment_and_sums_them_up(conn, replay):
    sweep = "corpus-sweep"
    same = fixture("ollama-text-tools-summary")
    differs = altered(fixture("openai-actions-breaker-stalled"), "move_north")
    running = fixture("bedrock-conversation-give-up")
    still_running(running)
    ids = [
        record.load(conn, {**s, "experiment": {**s["experiment"], "agent_id": f"{sweep}/{n}"}})
        for n, s in enumerate((same, differs, running))
    ]
    conn.execute("INSERT INTO sweeps (id, planned, run_input) VALUES (%s, 3, '{}')", (sweep,))
    conn.execute("UPDATE experiments SET sweep_id = %s WHERE id = ANY (%s)", (sweep, ids))
    outcome = replay("--sweep", sweep)
    assert outcome.exit_code == 1, outcome.output
    lines = outcome.output.strip().splitlines()
    assert lines[-1] == f"sweep {sweep}: 1 identical, 1 differ, 1 not replayable"
    assert f"experiment {ids[2]} skipped: it is still running" in outcome.output
    assert any(line.startswith(f"experiment {ids[0]} replayed as") and line.endswith("identical") for line in lines)
    assert any(
        line.startswith(f"experiment {ids[1]} replayed as") and "differs first at turn 1, before step 1, call 1" in line
        for line in lines
    )
    as_json = json_lines(replay("--sweep", sweep, "--json"))
    assert [r["experiment_id"] for r in as_json] == ids[:2]
