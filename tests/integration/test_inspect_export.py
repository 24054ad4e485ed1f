"""`oriole export --format inspect` over real runs, read back by Inspect's own log reader and data frames: one log
per agent, one sample per experiment (the maze its id, the repetition its epoch), the messages and pictures as the
model was sent them, the scores, the usage and the provenance."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from inspect_ai.analysis import samples_df
from inspect_ai.log import list_eval_logs, read_eval_log
from psycopg.rows import tuple_row

from tests import openai_server
from tests.integration.conftest import baseline
from tests.integration.test_image_observation import VISION_MODEL
from tests.integration.test_providers_local import MAZE, shortest_moves

SWEEP = "inspect-test"


@pytest.fixture(scope="module")
def exported(local, tmp_path_factory):
    """Two baselines twice on two mazes, and a vision model on the OpenAI protocol whose every request carries a
    picture; all in one sweep, exported."""
    for agent in ("oracle", "random"):
        for maze in ("perfect-7", "perfect-9"):
            for repetition in (1, 2):
                local.run(
                    baseline(agent, maze, maxMoves=40)
                    | {"agentId": f"{SWEEP}/{agent}-{maze}/r{repetition}", "comment": f"sweep:{SWEEP}"}
                )
    moves = shortest_moves(MAZE)
    script = [
        openai_server.tool_calls((moves[0], {"reasoning": "east is open"}), content="I see a corridor."),
        openai_server.text_reply("Thinking about it.", reasoning_content="the corridor bends"),
        *(openai_server.tool_calls((m, {})) for m in moves[1:]),
    ]
    with openai_server.ScriptedOpenAI(*script) as server:
        vision = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": VISION_MODEL,
                "promptVersion": "v1-vision",
                "agentId": f"{SWEEP}/vision/r1",
                "comment": f"sweep:{SWEEP}",
                "config": {"baseUrl": server.base_url, "observation": "both"},
            }
        ).as_json()
    assert vision["status"] == "succeeded", vision
    folder = tmp_path_factory.mktemp("inspect")
    return folder, server, vision["experiment_id"]


def export(cli, folder):
    outcome = cli("export", "--format", "inspect", "--sweep", SWEEP, "-o", str(folder))
    assert outcome.exit_code == 0, outcome.output
    return outcome


def logs_by_model(folder) -> dict:
    logs = (read_eval_log(info, resolve_attachments=True) for info in list_eval_logs(str(folder)))
    return {log.eval.model: log for log in logs}


def test_one_log_per_agent_one_sample_per_experiment_the_repetition_its_epoch(exported, cli, local):
    folder, _, _ = exported
    export(cli, folder)
    logs = logs_by_model(folder)
    assert set(logs) == {"baseline/oracle", "baseline/random", f"openai/{VISION_MODEL}"}
    oracle = logs["baseline/oracle"]
    assert oracle.status == "success" and oracle.eval.config.epochs == 2
    assert sorted((s.id, s.epoch) for s in oracle.samples) == [
        ("perfect-7", 1),
        ("perfect-7", 2),
        ("perfect-9", 1),
        ("perfect-9", 2),
    ]
    stored = dict(
        local.store.conn.cursor(row_factory=tuple_row).execute(
            "SELECT e.id, e.ending FROM experiments e WHERE e.comment = %s", (f"sweep:{SWEEP}",)
        )
    )
    for log in logs.values():
        for s in log.samples:
            experiment = s.metadata["experiment_id"]
            assert s.scores["ending"].value == stored[experiment]
            assert s.scores["success"].value == (1 if stored[experiment] == "success" else 0)
            assert 0 <= s.scores["spl"].value <= 1
    assert oracle.results.scores[0].name == "success" and oracle.results.scores[0].metrics["accuracy"].value == 1.0
    assert oracle.eval.metadata["provenance"]["sweeps"] == f"{SWEEP} ({len(stored)})"


def test_the_messages_are_what_the_model_was_sent_pictures_included(exported, cli, local):
    folder, server, vision = exported
    export(cli, folder)
    log = logs_by_model(folder)[f"openai/{VISION_MODEL}"]
    (s,) = log.samples
    assert s.metadata["experiment_id"] == vision and s.metadata["config"]["observation"] == "both"
    assert s.messages[0].role == "system" and s.messages[0].text == server.requests[0].body["messages"][0]["content"]
    sent = [
        part["image_url"]["url"]
        for request in server.requests
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    shown = [c.image for m in s.messages if isinstance(m.content, list) for c in m.content if c.type == "image"]
    assert shown and set(shown) <= set(sent)  # every picture as sent, byte for byte
    calls = [c for m in s.messages if m.role == "assistant" for c in (m.tool_calls or ())]
    assert calls[0].function == shortest_moves(MAZE)[0] and calls[0].arguments == {"reasoning": "east is open"}
    assert any(m.role == "tool" for m in s.messages)
    assert any(m.role == "assistant" and "Thinking about it." in m.text for m in s.messages)
    events = [e for e in s.events if e.event == "model"]
    assert [e.call.request for e in events] == [r.body for r in server.requests]  # each body as the server got it
    assert [e.call.response for e in events] == [json.loads(body) for _, body in server.answers]
    usage = s.model_usage[f"openai/{VISION_MODEL}"]
    tokens = local.store.conn.execute(
        "SELECT input_tokens, output_tokens FROM experiments WHERE id = %s", (vision,)
    ).fetchone()
    assert (usage.input_tokens, usage.output_tokens) == (tokens["input_tokens"], tokens["output_tokens"])


def test_inspects_data_frames_read_the_logs(exported, cli):
    folder, _, _ = exported
    export(cli, folder)
    frame = samples_df(str(folder), quiet=True)
    assert len(frame) == 2 * 2 * 2 + 1  # two agents, two mazes, two repetitions; and the vision model
    assert {"score_success", "score_spl", "score_ending", "epoch", "id"} <= set(frame.columns)
    assert set(frame["score_ending"]) <= {"success", "agent", "error"}


def test_inspects_own_command_reads_a_log(exported, cli):
    folder, _, _ = exported
    export(cli, folder)
    path = next(iter(list_eval_logs(str(folder)))).name
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "log", "dump", "--header-only", path],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["eval"]["task"] == "oriole/maze-navigation"


def test_without_inspect_installed_the_export_says_how_to_get_it(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    outcome = cli("export", "--format", "inspect", "-o", str(tmp_path / "logs"))
    assert outcome.exit_code == 2 and "pip install 'oriole[inspect]'" in outcome.output
    assert not (tmp_path / "logs").exists()
