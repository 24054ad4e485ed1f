"""Replay: an experiment played again through the local state machine and turn loop, every call answered with the
answer it stored (the recorded agent: no server), compared turn by turn with the original."""

from __future__ import annotations

import json

import pytest

from oriole_workstation import replay as replays
from tests import openai_server
from tests.integration.conftest import baseline
from tests.integration.test_image_observation import VISION_MODEL
from tests.integration.test_providers_local import MAZE, OPENAI_MODEL, shortest_moves
from tests.integration.test_transcript import openai_script


@pytest.fixture(scope="module")
def local(bedrock_local):
    return bedrock_local


def replayed(local, experiment_id: int) -> replays.Comparison:
    result = local.run({"replayOf": experiment_id}).as_json()
    assert result["experiment_id"] is not None, result
    conn = local.store.conn
    return replays.compare(
        replays.Stored.load(conn, experiment_id),
        replays.Stored.load(conn, result["experiment_id"]),
        experiment_id,
        result["experiment_id"],
    )


def summary_script(moves: list[str]) -> list[dict]:
    """openai_script with the compaction call summary memory makes before turn 3 (turn 1 leaves the window)."""
    script = openai_script(moves)
    return [*script[:6], openai_server.text_reply("Summary: went east twice."), *script[6:]]


def recorded(local, config: dict, model: str = OPENAI_MODEL, script=openai_script, **extra) -> int:
    with openai_server.ScriptedOpenAI(*script(shortest_moves(MAZE))) as server:
        result = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": model,
                "config": {"baseUrl": server.base_url, **config},
                **extra,
            }
        ).as_json()
    assert result["status"] == "succeeded", result
    return result["experiment_id"]


@pytest.mark.parametrize(
    "config, extra",
    [
        ({"historyMode": "conversation", "historyTurns": 2}, {}),
        (
            {"historyMode": "summary", "compaction": "model", "historyTurns": 1, "contextTokens": 1400},
            {"script": summary_script},
        ),
        ({"observation": "both", "imageView": "map"}, {"modelName": VISION_MODEL, "promptVersion": "v1-vision"}),
    ],
    ids=["conversation", "summary", "image-map"],
)
def test_an_experiment_replayed_with_its_server_stopped_comes_back_identical(local, config, extra):
    original = recorded(local, config, **extra)  # the server is stopped once it returns
    comparison = replayed(local, original)
    assert comparison.identical, comparison.first_difference
    assert comparison.turns == 3 and comparison.actions == len(shortest_moves(MAZE)) + 1
    replay_row = local.store.conn.execute(
        "SELECT llm_provider, replay_of FROM experiments WHERE id = %s", (comparison.replay_id,)
    ).fetchone()
    assert (replay_row["llm_provider"], replay_row["replay_of"]) == ("replay", original)


def test_an_altered_answer_makes_the_replay_name_the_first_difference(local):
    original = recorded(local, {})
    conn = local.store.conn
    row = conn.execute(
        "SELECT answer FROM model_calls WHERE experiment_id = %s AND turn_number = 2 AND call_index = 1", (original,)
    ).fetchone()
    answer = json.loads(bytes(row["answer"]))
    call = answer["choices"][0]["message"]["tool_calls"][0]
    call["function"]["name"] = "move_north" if call["function"]["name"] != "move_north" else "move_south"
    conn.execute(
        "UPDATE model_calls SET answer = %s WHERE experiment_id = %s AND turn_number = 2 AND call_index = 1",
        (json.dumps(answer).encode(), original),
    )
    comparison = replayed(local, original)
    assert not comparison.identical
    difference = comparison.first_difference
    assert (difference["turn"], difference["what"]) == (2, "call 1 response (response)")
    assert (difference["at"], difference["step"]) == ("before step", 3)  # the turn started after two actions


def drop_the_system_prompt(body: dict) -> dict:
    return {**body, "messages": [m for m in body["messages"] if m["role"] != "system"]}


def answer_every_tool_call_ok(body: dict) -> dict:
    return {**body, "messages": [{**m, "content": "ok"} if m["role"] == "tool" else m for m in body["messages"]]}


@pytest.mark.parametrize("alter", [drop_the_system_prompt, answer_every_tool_call_ok])
def test_an_altered_adapter_replays_as_differing_at_the_first_call_it_changed(local, monkeypatch, alter):
    """The provider-neutral request is the same, the bytes sent are not: the replay names the first call whose
    rebuilt bytes differ from the hash the original stored when it sent them."""
    from oriole.providers import openai

    original = recorded(local, {})
    calls = local.store.conn.execute(
        "SELECT turn_number, call_index, request ->> 'sent_sha256' AS sent, request_messages FROM model_calls "
        "WHERE experiment_id = %s ORDER BY turn_number, call_index",
        (original,),
    ).fetchall()
    assert all(len(row["sent"]) == 64 for row in calls)
    if alter is drop_the_system_prompt:  # every request carries the system prompt
        first = calls[0]
    else:  # the first request that carries a tool result
        first = next(c for c in calls if any(m.get("role") == "tool" for m in c["request_messages"]))
    wire = openai.wire_request
    monkeypatch.setattr(openai, "wire_request", lambda request, settings: alter(wire(request, settings)))
    difference = replayed(local, original).first_difference
    assert difference is not None
    assert (difference["turn"], difference["what"], difference["expected"]) == (
        first["turn_number"],
        f"call {first['call_index']} request bytes (sent_sha256)",
        first["sent"],
    )


def test_what_cannot_be_replayed_is_refused_with_the_reason(local):
    ended_baseline = local.run(baseline("oracle", MAZE)).summary.experiment_id
    assert local.store.replay_problem(10**9) == "it does not exist"
    original = recorded(local, {})
    local.store.conn.execute(
        "UPDATE model_calls SET request = NULL WHERE experiment_id = %s AND turn_number = 2", (original,)
    )
    assert "turn 2 call 1 was stored without its request record" in local.store.replay_problem(original)
    assert "recorded seed" in local.store.replay_problem(ended_baseline)
