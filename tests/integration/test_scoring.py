"""Scores that mean what they say, on real runs (the scripted Ollama server over HTTP, the local state machine):
an agent's own ending is a run without success, never an error; transport never splits a comparison."""

from __future__ import annotations

import json
from itertools import pairwise

from oriole.core import mazeset
from tests.integration.test_local_state_machine import assert_invariants
from tests.ollama_server import ScriptedOllama, text_reply, tool_calls

MAZE = "perfect-7"


def walk_the_shortest_path() -> dict:
    path = mazeset.get_maze(MAZE).maze.shortest_path()
    names = {(0, -1): "move_north", (0, 1): "move_south", (1, 0): "move_east", (-1, 0): "move_west"}
    return tool_calls(*[(names[(b[0] - a[0], b[1] - a[1])], {}) for a, b in pairwise(path)])


def ollama(server: ScriptedOllama, model: str, **config) -> dict:
    return {
        "mazeId": MAZE,
        "llmProvider": "ollama",
        "modelName": model,
        "config": {"endpoint": server.url, "maxActionsPerTurn": 20, **config},
    }


def comparison(local, model: str) -> list[dict]:
    return local.store.conn.execute("SELECT * FROM compare_experiments(model => %s)", (model,)).fetchall()


def test_a_model_that_never_calls_a_tool_is_one_run_without_success_and_no_error(local, cli):
    with ScriptedOllama(*[text_reply("I would rather not move.")] * 3) as server:
        result = local.run(ollama(server, "never-acts"))
    data = result.as_json()
    assert data["status"] == "failed" and data["failure_reason"].startswith("agent_stalled:")
    assert data["ending"] == "agent"
    assert_invariants(local.store, data["experiment_id"])
    [row] = comparison(local, "never-acts")
    assert (row["runs"], row["successes"], row["errors"], float(row["success_rate"])) == (1, 0, 0, 0.0)
    [reported] = json.loads(cli("report", "--model", "never-acts", "--format", "json").stdout)
    assert (reported["runs"], reported["errors"]) == (1, 0)


def test_two_experiments_differing_only_in_the_ollama_endpoint_are_one_comparison_group(local):
    ids = []
    for timeout in (60.0, 90.0):  # the request timeout is transport too
        with ScriptedOllama(walk_the_shortest_path()) as server:
            ids.append(local.run(ollama(server, "two-endpoints", requestTimeoutSeconds=timeout)).as_json())
    endpoints = {
        r["config"]["endpoint"]
        for r in local.store.conn.execute(
            "SELECT config FROM experiments WHERE model_name = 'two-endpoints'"
        ).fetchall()
    }
    assert len(endpoints) == 2 and all(d["status"] == "succeeded" for d in ids)
    [row] = comparison(local, "two-endpoints")
    assert (row["runs"], row["successes"], row["config"]) == (2, 2, {})


def test_under_sight_the_oracle_walks_the_optimum_and_its_efficiency_is_exactly_one(local):
    """The optimum under goalCondition = sight is the path to the nearest tile that sees the goal (61 moves on
    perfect-21 with vision 3, where the goal itself is 64 away): stored at start, walked by the oracle."""
    maze = mazeset.get_maze("perfect-21")
    result = local.run(
        {
            "mazeId": "perfect-21",
            "llmProvider": "baseline",
            "modelName": "oracle",
            "config": {"goalCondition": "sight", "visionRange": 3},
        }
    )
    data = result.as_json()
    assert data["status"] == "succeeded" and data["optimal_path_length"] == 61 < maze.shortest_path_length == 64
    [row] = local.store.conn.execute(
        "SELECT path_length, optimal_path_length, path_efficiency, spl FROM experiment_results "
        "WHERE experiment_id = %s",
        (data["experiment_id"],),
    ).fetchall()
    assert (row["path_length"], row["optimal_path_length"]) == (61, 61)
    assert float(row["path_efficiency"]) == float(row["spl"]) == 1.0
