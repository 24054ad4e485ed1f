"""`oriole export --format inspect` over real runs, read back by Inspect's own log reader and data frames: one log
per agent, one sample per experiment (the maze its id, the repetition its epoch), the messages and pictures as the
model was sent them, the scores, the usage and the provenance.

Inspect runs in a venv of its own, installed as a researcher installs ``oriole[inspect]`` (``make test``:
``.venv-inspect``): its dependencies pin a botocore older than the Lambda lock's that the test venv holds. The
export runs there as a command, and ``tests/inspect_reader.py`` reads the logs there and prints what is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from psycopg.rows import tuple_row

from tests import openai_server
from tests.integration.conftest import baseline
from tests.integration.test_image_observation import VISION_MODEL
from tests.integration.test_providers_local import MAZE, shortest_moves

CHECKOUT = Path(__file__).resolve().parents[2]
INSPECT_BIN = CHECKOUT / ".venv-inspect" / "bin"
SWEEP = "inspect-test"


@pytest.fixture(scope="module")
def exported(local, tmp_path_factory):
    """Two baselines twice on two mazes, and a vision model on the OpenAI protocol whose every request carries a
    picture; all in one (planned) sweep, exported."""
    local.store.record_sweep_plan(SWEEP, 9, {"id": SWEEP})
    for agent in ("oracle", "random"):
        for maze in ("perfect-7", "perfect-9"):
            for repetition in (1, 2):
                local.run(
                    baseline(agent, maze, maxMoves=40)
                    | {"agentId": f"{SWEEP}/{agent}-{maze}/r{repetition}", "sweepId": SWEEP}
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
                "sweepId": SWEEP,
                "config": {"baseUrl": server.base_url, "observation": "both"},
            }
        ).as_json()
    assert vision["status"] == "succeeded", vision
    return tmp_path_factory.mktemp("inspect"), server, vision["experiment_id"]


def inspect_venv(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A command of the Inspect venv (``make test`` installs it)."""
    if not (INSPECT_BIN / "python").exists():
        pytest.fail("no .venv-inspect: `make test` installs Inspect AI's venv (make .venv-inspect/.installed)")
    return subprocess.run(
        [str(INSPECT_BIN / args[0]), *args[1:]],
        cwd=CHECKOUT,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def logs(exported, database_url, tmp_path_factory) -> dict:
    """The export, run by the Inspect venv's ``oriole`` on the test database, read back by Inspect there."""
    folder, _, _ = exported
    done = inspect_venv(
        "oriole",
        "export",
        "--format",
        "inspect",
        "--sweep",
        SWEEP,
        "-o",
        str(folder),
        env={"DATABASE_URL": database_url, "ORIOLE_HOME": str(tmp_path_factory.mktemp("home"))},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("wrote ") == 3
    read = inspect_venv("python", "-m", "tests.inspect_reader", str(folder))
    assert read.returncode == 0, read.stderr[-3000:]
    return json.loads(read.stdout)


def by_model(logs: dict) -> dict:
    return {log["model"]: log for log in logs["logs"]}


def test_one_log_per_agent_one_sample_per_experiment_the_repetition_its_epoch(logs, local):
    found = by_model(logs)
    assert set(found) == {"baseline/oracle", "baseline/random", f"openai/{VISION_MODEL}"}
    oracle = found["baseline/oracle"]
    assert oracle["status"] == "success" and oracle["epochs"] == 2 and oracle["task"] == "oriole/maze-navigation"
    assert sorted((s["id"], s["epoch"]) for s in oracle["samples"]) == [
        ("perfect-7", 1),
        ("perfect-7", 2),
        ("perfect-9", 1),
        ("perfect-9", 2),
    ]
    stored = dict(
        local.store.conn.cursor(row_factory=tuple_row).execute(
            "SELECT e.id, e.ending FROM experiments e WHERE e.sweep_id = %s", (SWEEP,)
        )
    )
    for log in found.values():
        for s in log["samples"]:
            experiment = s["metadata"]["experiment_id"]
            assert s["scores"]["ending"] == stored[experiment]
            assert s["scores"]["success"] == (1 if stored[experiment] == "success" else 0)
            assert 0 <= s["scores"]["spl"] <= 1
    assert oracle["results"]["success"]["accuracy"] == 1.0
    assert oracle["metadata"]["provenance"]["sweeps"] == f"{SWEEP} ({len(stored)})"


def test_the_messages_are_what_the_model_was_sent_pictures_included(exported, logs, local):
    _, server, vision = exported
    (s,) = by_model(logs)[f"openai/{VISION_MODEL}"]["samples"]
    assert s["metadata"]["experiment_id"] == vision and s["metadata"]["config"]["observation"] == "both"
    messages = s["messages"]
    assert messages[0]["role"] == "system"
    assert messages[0]["text"] == server.requests[0].body["messages"][0]["content"]
    sent = [
        part["image_url"]["url"]
        for request in server.requests
        for message in request.body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part["type"] == "image_url"
    ]
    shown = [image for m in messages for image in m["images"]]
    assert shown and set(shown) <= set(sent)  # every picture as sent, byte for byte
    calls = [c for m in messages if m["role"] == "assistant" for c in m["tool_calls"]]
    assert calls[0] == {"function": shortest_moves(MAZE)[0], "arguments": {"reasoning": "east is open"}}
    assert any(m["role"] == "tool" for m in messages)
    assert any(m["role"] == "assistant" and "Thinking about it." in m["text"] for m in messages)
    assert [e["request"] for e in s["events"]] == [r.body for r in server.requests]  # each body as the server got it
    assert [e["response"] for e in s["events"]] == [json.loads(body) for _, body in server.answers]
    tokens = local.store.conn.execute(
        "SELECT input_tokens, output_tokens FROM experiments WHERE id = %s", (vision,)
    ).fetchone()
    assert s["usage"][f"openai/{VISION_MODEL}"] == [tokens["input_tokens"], tokens["output_tokens"]]


def test_inspects_data_frames_read_the_logs(logs):
    frame = logs["frame"]
    assert frame["rows"] == 2 * 2 * 2 + 1  # two agents, two mazes, two repetitions; and the vision model
    assert {"score_success", "score_spl", "score_ending", "epoch", "id"} <= set(frame["columns"])
    assert set(frame["endings"]) <= {"success", "agent", "censored", "error"}


def test_inspects_own_command_reads_a_log(logs):
    path = logs["logs"][0]["file"]
    done = inspect_venv("inspect", "log", "dump", "--header-only", path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["eval"]["task"] == "oriole/maze-navigation"


def test_without_inspect_installed_the_export_says_how_to_get_it(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    outcome = cli("export", "--format", "inspect", "-o", str(tmp_path / "logs"))
    assert outcome.exit_code == 2 and "pip install 'oriole[inspect]'" in outcome.output
    assert not (tmp_path / "logs").exists()
