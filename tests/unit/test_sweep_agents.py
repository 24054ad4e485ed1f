"""Agents with their own settings, labels and prices; keys that do not apply to a provider refused with the
reason; a seed per repetition derived from the sweep (or the sweep it replays), a fixed seed refused where it
would make copies; unpriced models refused under a spend limit."""

from __future__ import annotations

import pytest

from oriole.core.sweep_plan import SweepFile, cells, check_prices, plan, validate
from oriole.errors import SweepFileError

A = {
    "label": "gpt",
    "provider": "openai",
    "model": "gpt-4.1-mini",
    "config": {"baseUrl": "https://api.openai.com/v1"},
    "prices": {"input_per_mtok": 0.4, "output_per_mtok": 1.6},
}
B = {"label": "qwen", "provider": "openai", "model": "Qwen/Qwen3-8B", "config": {"baseUrl": "http://gpu-box:8000/v1"}}


def sweep(**fields) -> SweepFile:
    return validate(
        SweepFile, {"id": "study", "agents": [A, B, "baseline/random"], "mazes": ["perfect-7"], **fields}, "sweep file"
    )


def test_each_agent_keeps_its_own_server_label_and_prices_and_the_baseline_none():
    matrix = cells(sweep(configs=[{"maxMoves": 50}]))
    assert [(c.agent, c.config) for c in matrix] == [
        ("gpt", {"baseUrl": "https://api.openai.com/v1", "maxMoves": 50}),
        ("qwen", {"baseUrl": "http://gpu-box:8000/v1", "maxMoves": 50}),
        ("baseline/random", {"maxMoves": 50}),
    ]
    assert matrix[0].prices.input_per_mtok == 0.4 and matrix[0].prices.source == "sweep file, agent gpt"
    assert matrix[1].prices is None and matrix[2].prices is None
    inputs = [item.execution_input(sweep()) for item in plan(sweep())]
    assert inputs[0]["agentLabel"] == "gpt" and inputs[0]["prices"]["inputPerMTok"] == 0.4
    assert "agentLabel" not in inputs[2] and "prices" not in inputs[2]


@pytest.mark.parametrize(
    "fields, message",
    [
        (
            {"configs": [{"endpoint": "http://other:11434"}]},
            "configs[0]: endpoint does not apply to agent gpt: provider openai takes no endpoint",
        ),
        (
            {
                "configs": [
                    {"agents": ["baseline/random"], "baseUrl": "http://other:8000/v1"},
                    {"agents": ["gpt", "qwen"]},
                ]
            },
            "configs[0]: baseUrl does not apply to agent baseline/random: provider baseline takes no baseUrl",
        ),
        ({"grid": {"temperature": [0.0, 0.7]}}, "grid: temperature does not apply to agent baseline/random"),
        (
            {"configs": [{"agents": ["nobody"], "temperature": 0.7}, {}]},
            "agents names 'nobody', not an agent of the file",
        ),
        ({"configs": [{"agents": ["gpt"], "baseUrl": "http://x/v1"}]}, "agent gpt sets baseUrl in its own config"),
        ({"configs": [{"seed": 7}], "repetitions": 3}, "fixes seed = 7 and has 3 repetitions"),
    ],
)
def test_a_setting_that_cannot_apply_is_refused_with_the_reason(fields, message):
    with pytest.raises(SweepFileError, match=message.replace("[", r"\[").replace("]", r"\]")):
        cells(sweep(**fields))


def test_entries_for_some_agents_apply_to_those_only():
    matrix = cells(sweep(configs=[{"agents": ["gpt", "qwen"], "temperature": 0.7}, {"agents": ["baseline/random"]}]))
    assert [c.config.get("temperature") for c in matrix] == [0.7, 0.7, None]


def test_each_repetition_has_its_own_seed_from_the_sweep_and_a_replay_has_the_same():
    seeds = [item.seed(sweep(repetitions=3)) for item in plan(sweep(repetitions=3))]
    assert len(set(seeds)) == 3 and seeds == [item.seed(sweep(repetitions=3)) for item in plan(sweep(repetitions=3))]
    other = sweep(repetitions=3, id="study-2")
    assert [item.seed(other) for item in plan(other)] != seeds
    replay = sweep(repetitions=3, id="study-2", seed_from="study")
    assert [item.seed(replay) for item in plan(replay)] == seeds
    assert plan(replay)[0].agent_id("study-2").startswith("study-2/")  # its own id, the seeds of the other


def test_a_spend_limit_refuses_an_unpriced_model_unless_allowed():
    limited = sweep(spend_limit_usd=5.0)
    with pytest.raises(SweepFileError, match="no price is known for openai/Qwen/Qwen3-8B"):
        check_prices(limited, cells(limited), {}, allow_unpriced=False)
    check_prices(limited, cells(limited), {}, allow_unpriced=True)
    check_prices(
        limited,
        cells(limited),
        {"/oriole/pricing/Qwen-Qwen3-8B": '{"inputPerMTok": 0.05, "outputPerMTok": 0.1}'},
        allow_unpriced=False,
    )
    check_prices(sweep(), cells(sweep()), {}, allow_unpriced=False)  # no limit: nothing to count


def test_every_agent_and_setting_meets_the_same_seed_on_a_maze_and_repetition_and_only_there():
    """Seeds derive from the sweep, the maze and the repetition, never from the agent, its prompt or its settings:
    the runs of a sweep pair up by (maze, repetition)."""
    spec = sweep(
        mazes=["perfect-7", "perfect-9"],
        prompts=["v1", "v1-vision"],
        configs=[{"maxMoves": 50}, {"maxMoves": 90}],
        repetitions=2,
    )
    by_pair: dict[tuple[str, int], set[int]] = {}
    for item in plan(spec):
        by_pair.setdefault((item.cell.maze, item.repetition), set()).add(item.seed(spec))
    assert len(by_pair) == 4 and all(len(found) == 1 for found in by_pair.values())
    assert len({seed for found in by_pair.values() for seed in found}) == 4  # each pair its own seed
