"""The execution input of a rerun, from a recorded experiment's row (pure)."""

from __future__ import annotations

import pytest

from oriole import catalog
from oriole_workstation import rerun

V1 = catalog.shipped_prompt("v1")


def record(**changes) -> dict:
    row = {
        "id": 17,
        "maze_id": 4,
        "llm_provider": "ollama",
        "model_name": "qwen3:8b",
        "prompt_version": "v1",
        "prompt_hash": catalog.prompt_hash(V1),
        "agent_id": None,
        "agent_label": "small",
        "config": {"maxMoves": 200, "seed": 99, "temperature": 0.0, "repeatPenalty": 1.4, "pricing": None},
        "replay_of": None,
    }
    return {**row, **changes}


def test_the_rerun_asks_for_the_recorded_maze_configuration_seed_and_prompt():
    data = rerun.execution_input(record(), {"v1": V1})
    assert data == {
        "mazeId": 4,
        "llmProvider": "ollama",
        "modelName": "qwen3:8b",
        "promptVersion": "v1",
        "config": {"maxMoves": 200, "seed": 99, "temperature": 0.0, "repeatPenalty": 1.4},
        "comment": "rerun of experiment 17",
        "agentLabel": "small",
    }


def test_the_recorded_price_is_the_price_charged_and_keys_that_never_applied_are_left_out():
    priced = {"maxMoves": 9, "seed": 1, "temperature": 0.5, "pricing": {"inputPerMTok": 1, "outputPerMTok": 2}}
    data = rerun.execution_input(record(llm_provider="baseline", model_name="random", config=priced), {"v1": V1})
    assert data["config"] == {"maxMoves": 9, "seed": 1}  # a snapshot from before issue 31 held a temperature
    assert data["prices"] == {"inputPerMTok": 1, "outputPerMTok": 2, "source": "experiment 17's snapshot"}


@pytest.mark.parametrize(
    "changes, prompts, reason",
    [
        ({"replay_of": 3}, {"v1": V1}, "experiment 17 is the replay of experiment 3: rerun experiment 3"),
        ({}, {"v1": V1 + "\nBe quick."}, "experiment 17 ran with prompt v1 sha256 "),
        ({}, {}, "and v1 now holds none: store the recorded text"),
        ({"config": {"maxMoves": "many"}}, {"v1": V1}, "its configuration snapshot was altered: config.maxMoves"),
        (
            {"config": {"maxTurnsPerExecution": 350}},
            {"v1": V1},
            "a new experiment may no longer use its config.maxTurnsPerExecution must be at most 180",
        ),
        ({"config": {"maxTurnsPerExecution": 351}}, {"v1": V1}, "snapshot was altered: config.maxTurnsPerExecution"),
    ],
    ids=["replay", "prompt-edited", "prompt-gone", "altered-snapshot", "bound-lowered-since", "above-any-release"],
)
def test_what_could_not_be_what_ran_is_refused_with_the_reason(changes, prompts, reason):
    with pytest.raises(rerun.RerunRefused, match=reason.replace("(", r"\(").replace(".", r"\.")):
        rerun.execution_input(record(**changes), prompts)


def test_a_retired_compaction_reruns_where_it_played_no_part_and_is_refused_where_it_did():
    """compaction map (retired: the map aid is mapAid now) was every snapshot's default: where the memory had no
    summary it changed nothing, and the rerun runs without it; under summary it was what the agent read."""
    actions = record(config={"maxMoves": 200, "seed": 99, "historyMode": "actions", "compaction": "map"})
    assert rerun.execution_input(actions, {"v1": V1})["config"] == {
        "maxMoves": 200,
        "seed": 99,
        "historyMode": "actions",
    }
    summary = record(config={"maxMoves": 200, "seed": 99, "historyMode": "summary", "compaction": "map"})
    with pytest.raises(rerun.RerunRefused, match=r"compaction must be one of model; got 'map' \(map is retired: "):
        rerun.execution_input(summary, {"v1": V1})


def test_a_snapshot_older_than_applies_when_reruns_without_what_played_no_part():
    """Before the catalog said which settings depend on others, every snapshot held historyTurns, imageView,
    textView, and an OpenAI one parallelToolCalls: the rerun sets only what played a part (StartExperiment refuses an
    input that sets the others), so it runs as the recorded experiment ran."""
    old = {"maxMoves": 200, "seed": 99, "historyMode": "actions", "historyTurns": 10, "compaction": "model"}
    old |= {"observation": "image", "imageView": "map", "textView": "local", "mapAid": False}
    config = rerun.execution_input(record(config=old), {"v1": V1})["config"]
    assert config == {"maxMoves": 200, "seed": 99, "historyMode": "actions", "observation": "image", "imageView": "map"}
    openai = {"maxMoves": 200, "textToolCalls": True, "parallelToolCalls": False, "sendSeed": True}
    again = rerun.execution_input(record(llm_provider="openai", config=openai), {"v1": V1})["config"]
    assert again == {"maxMoves": 200, "textToolCalls": True, "sendSeed": True}
