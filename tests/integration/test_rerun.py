"""``oriole rerun``: a recorded experiment started again from its record, through the CLI and the local state
machine: the same maze, configuration, seed and prompt text, so a seeded baseline walks the same path again."""

from __future__ import annotations

import json

from oriole.store import db

RECORDED = "SELECT maze_id, llm_provider, model_name, prompt_hash, config, seed, comment FROM experiments WHERE id = %s"
PATH = "SELECT action_type, to_x, to_y FROM actions WHERE experiment_id = %s ORDER BY step_number"


def ran(cli, *args: str) -> int:
    result = cli("run", "--json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["experiment_id"]


def test_a_rerun_starts_a_new_experiment_with_exactly_what_the_recorded_one_ran_with(cli, database_url):
    original = ran(cli, "--maze", "perfect-11", "--agent", "random", "--max-moves", "60", "--config", "visionRange=2")
    result = cli("rerun", str(original), "--json")
    assert result.exit_code == 0, result.output
    line = json.loads(result.output)
    assert line["experiment_id"] == original and line["rerun_id"] not in (None, original)
    with db.connect(database_url) as conn:
        before, after = (conn.execute(RECORDED, (n,)).fetchone() for n in (original, line["rerun_id"]))
        paths = [conn.execute(PATH, (n,)).fetchall() for n in (original, line["rerun_id"])]
    assert after.pop("comment") == f"rerun of experiment {original}"
    before.pop("comment")
    assert after == before  # maze, agent, prompt text, the whole snapshot, the seed
    assert paths[0] == paths[1] and len(paths[0]) > 0  # a seeded random walk, walked again


def test_a_prompt_version_that_no_longer_holds_the_recorded_text_is_refused_saying_so(cli, tmp_path):
    prompt = tmp_path / "p.md"
    prompt.write_text("Find the goal.\n")
    assert cli("prompts", "put", "lab", "--file", str(prompt)).exit_code == 0
    original = ran(cli, "--maze", "perfect-7", "--agent", "random", "--max-moves", "20", "--prompt", "lab")
    (tmp_path / "prompts" / "lab.md").write_text("Find the goal quickly.\n")  # the local prompt edited since
    result = cli("rerun", str(original))
    assert result.exit_code == 2
    assert f"experiment {original} ran with prompt lab sha256" in result.output
    assert "store the recorded text (experiments.prompt_text) as lab again" in result.output


def test_a_rerun_runs_only_on_the_recorded_model_build_unless_told_otherwise(cli, database_url):
    """The build the server reported at the start (the Ollama digest) is asked for again: a model pulled again
    since is refused, naming both builds and the override; --any-build runs on what is served now."""
    from tests.ollama_server import ScriptedOllama, tool_calls

    step = tool_calls(("move_east", {}), ("move_west", {}))
    with ScriptedOllama(step, step, step, models=("qwen3:8b",)) as server:
        original = ran(
            cli,
            "--maze",
            "perfect-7",
            "--provider",
            "ollama",
            "--model",
            "qwen3:8b",
            "--ollama-url",
            server.url,
            "--max-moves",
            "2",
        )
        with db.connect(database_url) as conn:
            recorded = conn.execute("SELECT model_build FROM experiments WHERE id = %s", (original,)).fetchone()
        assert recorded["model_build"] == server.digest("qwen3:8b")
        same = cli("rerun", str(original), "--json")
        assert same.exit_code == 0, same.output  # the same build: run again
        server.digests["qwen3:8b"] = "e" * 64  # pulled again since
        refused = cli("rerun", str(original), "--json")
        assert refused.exit_code == 1, refused.output
        reason = json.loads(refused.output)["failure_reason"]
        assert f"asks for build {recorded['model_build']} of qwen3:8b" in reason
        assert f"now serves build {'e' * 64}" in reason and "oriole rerun --any-build" in reason
        said = cli("rerun", str(original))  # the line a terminal shows: no new experiment, and no "None"
        assert said.exit_code == 1 and f"experiment {original} not rerun: rejected (" in said.output, said.output
        anyway = cli("rerun", str(original), "--json", "--any-build")
        assert anyway.exit_code == 0, anyway.output
        rerun_id = json.loads(anyway.output)["rerun_id"]
        with db.connect(database_url) as conn:
            built = conn.execute("SELECT model_build FROM experiments WHERE id = %s", (rerun_id,)).fetchone()
        assert built["model_build"] == "e" * 64  # the build it ran on, recorded
