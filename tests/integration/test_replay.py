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


def recorded(local, config: dict, model: str = OPENAI_MODEL, **extra) -> int:
    with openai_server.ScriptedOpenAI(*openai_script(shortest_moves(MAZE))) as server:
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
        ({"historyMode": "summary", "historyTurns": 1, "contextTokens": 1400}, {}),
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
    assert difference["step"] == 2  # the turn started after two actions


def test_what_cannot_be_replayed_is_refused_with_the_reason(local):
    ended_baseline = local.run(baseline("oracle", MAZE)).summary.experiment_id
    assert local.store.replay_problem(10**9) == "it does not exist"
    original = recorded(local, {})
    local.store.conn.execute(
        "UPDATE model_calls SET request = NULL WHERE experiment_id = %s AND turn_number = 2", (original,)
    )
    assert "turn 2 call 1 was stored without its request record" in local.store.replay_problem(original)
    assert "recorded seed" in local.store.replay_problem(ended_baseline)
