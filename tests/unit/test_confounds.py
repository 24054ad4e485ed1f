"""What else differs between compared groups, pure over hand-made rows: the transport (the model server's address,
the request timeout) is named as a confound, never split on."""

from __future__ import annotations

from oriole_workstation.confounds import confounds, panel_notes
from oriole_workstation.report import GroupBy
from oriole_workstation.rows import ComparedExperiment
from tests.unit.test_report_html import NOW, UNVARIED


def experiment(number: int, provider: str, model: str, config: dict) -> ComparedExperiment:
    """A successful run of ``model`` on one shared maze, with ``config`` as its stored snapshot."""
    return ComparedExperiment(
        **{**UNVARIED, "config": config},
        experiment_id=number,
        llm_provider=provider,
        model_name=model,
        prompt_version="v1",
        prompt_hash="ab" * 32,
        compared_config={},
        maze="perfect-11@0",
        maze_family="perfect",
        maze_size="11x11",
        maze_hash="grid-0",
        maze_tiles=121,
        shortest_path_length=10,
        ending="success",
        ending_cause="goal",
        status="succeeded",
        actions=20,
        path_efficiency=None,
        spl=None,
        input_tokens=10,
        output_tokens=1,
        cost_usd=None,
        seed=number,
        sweep_id=None,
        code_version="0.9.0+local",
        started_at=NOW,
    )


def test_a_server_or_timeout_that_differs_between_groups_is_named_as_transport_not_a_condition():
    local = {"endpoint": "http://gpu-a:11434", "requestTimeoutSeconds": 120}
    runs = [
        experiment(1, "ollama", "qwen3:8b", local),
        experiment(2, "ollama", "qwen3:8b", local),
        experiment(3, "ollama", "llama3.2", {**local, "endpoint": "http://gpu-b:11434", "requestTimeoutSeconds": 30}),
    ]
    notes = panel_notes(confounds(runs, GroupBy.family))
    assert notes == [
        "perfect 11x11: transport, not a condition: model servers differ (ollama/qwen3:8b http://gpu-a:11434; "
        "ollama/llama3.2 http://gpu-b:11434)",
        "perfect 11x11: transport, not a condition: request timeouts differ (ollama/qwen3:8b 120 s; "
        "ollama/llama3.2 30 s)",
    ]
    found = confounds(runs, GroupBy.family)
    assert all(len(notes) == 2 for notes in found.values()) and len(found) == 2  # on both groups' rows


def test_the_same_transport_everywhere_or_a_provider_without_servers_is_no_confound():
    shared = {"endpoint": "http://gpu-a:11434", "requestTimeoutSeconds": 120}
    same = [experiment(1, "ollama", "qwen3:8b", shared), experiment(2, "ollama", "llama3.2", shared)]
    assert panel_notes(confounds(same, GroupBy.family)) == []
    bedrock = experiment(3, "bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0", {"requestTimeoutSeconds": 120})
    baseline = experiment(4, "baseline", "random", {})
    assert panel_notes(confounds([*same, bedrock, baseline], GroupBy.family)) == []


def test_the_map_aid_that_differs_between_agents_is_named():
    """mapAid (the computed map and frontier, a planning aid) is a setting like any other: groups of two agents
    that differ in it too say so, in every format that lists the confounds."""
    from dataclasses import replace

    aided = [replace(experiment(n, "ollama", "qwen3:8b", {}), compared_config={"mapAid": True}) for n in (1, 2)]
    bare = [replace(experiment(3, "ollama", "llama3.2", {}), compared_config={"mapAid": False})]
    assert panel_notes(confounds([*aided, *bare], GroupBy.family)) == [
        "perfect 11x11: besides the agent, the groups differ in mapAid (false, true)"
    ]


def test_groups_whose_decided_runs_rest_on_other_mazes_say_so():
    """An error left one agent's decided runs on fewer mazes than the other's: its rate is over other mazes."""
    from dataclasses import replace

    steady = [replace(experiment(n, "ollama", "qwen3:8b", {}), maze_hash=f"grid-{n}") for n in (1, 2)]
    errored = replace(experiment(4, "ollama", "llama3.2", {}), maze_hash="grid-2", ending="error")
    flaky = [replace(experiment(3, "ollama", "llama3.2", {}), maze_hash="grid-1"), errored]
    assert panel_notes(confounds([*steady, *flaky], GroupBy.family)) == [
        "perfect 11x11: maze sets differ (ollama/llama3.2 1, ollama/qwen3:8b 2 mazes; 1 shared by all)"
    ]


def test_groups_run_by_other_code_say_so():
    """Another runtime hash is another code version (a checkout with uncommitted changes has its own), named with
    the groups that ran it."""
    from dataclasses import replace

    clean = replace(experiment(1, "ollama", "qwen3:8b", {}), code_version="0.9.0+local.aaaaaaaaaaaa")
    edited = replace(experiment(2, "ollama", "llama3.2", {}), code_version="0.9.0+local.bbbbbbbbbbbb")
    assert panel_notes(confounds([clean, edited], GroupBy.family)) == [
        "perfect 11x11: code versions differ (ollama/llama3.2 0.9.0+local.bbbbbbbbbbbb; "
        "ollama/qwen3:8b 0.9.0+local.aaaaaaaaaaaa)"
    ]
