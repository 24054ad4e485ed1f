"""Agents named by their sweep-file label (experiments.agent_label): one model served by two servers under two
labels is two agents in every report (the table, --pivot, JSON, CSV, the HTML page, the export), shown by its
label; an unlabelled experiment of the same model stays a third agent, shown as provider/model. And the
leaderboard (--pivot) fits 100 columns unless asked --wide."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

import pytest
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from oriole.store import Store, db
from oriole_workstation.cli import app
from tests.conftest import scratch_database
from tests.integration.test_analysis import CORRIDOR, Seeder

GPU_A, GPU_B = "qwen3-8b @ gpu-a", "qwen3-8b @ gpu-b"


@pytest.fixture(scope="module")
def labelled(server_url, migrated_template) -> Iterator[str]:
    """A database holding one model's runs under two labels and without one, on one maze, plus enough other
    agents and configurations that a whole leaderboard is wider than 100 columns."""
    with scratch_database(server_url, migrated_template) as url:
        store = Store(db.connect(url))
        conn = store.conn
        conn.execute(
            "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, "
            "shortest_path_length, generator, seed, content_hash, grid) "
            "VALUES (%s, %s, %s, 4, 3, 0, 0, 3, 2, %s, 'hand', 0, 'none', %s)",
            (CORRIDOR["id"], CORRIDOR["name"], CORRIDOR["family"], CORRIDOR["shortest"], Jsonb(CORRIDOR["grid"])),
        )
        seed = Seeder(conn)
        for _ in range(2):
            seed.experiment("qwen3-8b", "succeeded", actions=5, label=GPU_A, comment="sweep:study", sweep="study")
            seed.experiment("qwen3-8b", "timed_out", actions=100, label=GPU_B, comment="sweep:study", sweep="study")
        seed.experiment("qwen3-8b", "succeeded", actions=5, comment="sweep:study", sweep="study")
        for temperature in (0.1, 0.2, 0.3):  # long names and three configurations: the leaderboard's width
            seed.experiment(
                "a-rather-long-model-name-for-a-leaderboard:70b-instruct-q4_K_M",
                "succeeded",
                actions=5,
                config={"temperature": temperature},
                comment="sweep:wide",
                sweep="wide",
            )
        for n, family in enumerate(("perfect", "sparse", "dense", "open-field", "rooms"), 1):  # a panel each
            conn.execute(
                "INSERT INTO mazes (id, name, family, width, height, start_x, start_y, goal_x, goal_y, "
                "shortest_path_length, generator, seed, content_hash, grid) "
                "SELECT id + %s, %s, %s, width, height, start_x, start_y, goal_x, goal_y, "
                "shortest_path_length, generator, seed, %s, grid FROM mazes WHERE id = %s",
                (n, f"{family}-corridor", family, family, CORRIDOR["id"]),
            )
            moved = seed.experiment("qwen3-8b", "succeeded", actions=5, label=GPU_A, comment="sweep:wide", sweep="wide")
            conn.execute("UPDATE experiments SET maze_id = %s WHERE id = %s", (CORRIDOR["id"] + n, moved))
        conn.close()
        yield url


@pytest.fixture
def oriole(labelled, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", labelled)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))

    def invoke(*args):
        outcome = CliRunner().invoke(app, list(args))
        assert outcome.exit_code == 0, outcome.output
        return outcome.stdout

    return invoke


def test_the_comparison_keeps_two_labels_of_one_model_apart(labelled):
    with db.connect(labelled) as conn:
        rows = conn.execute(
            "SELECT agent_label, runs, successes FROM compare_experiments(tag => 'sweep:study')"
        ).fetchall()
        assert [(r["agent_label"], r["runs"], r["successes"]) for r in rows] == [
            (None, 1, 1),
            (GPU_A, 2, 2),
            (GPU_B, 2, 0),
        ]
        labels = conn.execute("SELECT DISTINCT agent_label FROM experiment_status WHERE model_name = 'qwen3-8b'")
        assert {r["agent_label"] for r in labels} == {None, GPU_A, GPU_B}


def test_the_report_shows_each_label_instead_of_provider_and_model(oriole):
    lines = oriole("report", "--sweep", "study").splitlines()
    agents = [line.split("  ")[0].strip() for line in lines[1 : lines.index("")]]  # the footnotes follow a blank
    assert agents == ["ollama/qwen3-8b", GPU_A, GPU_B]
    pivot = oriole("report", "--sweep", "study", "--pivot").splitlines()
    assert [line[: len(GPU_A)] for line in pivot[1:4]] == ["ollama/qwen3-8b".ljust(len(GPU_A)), GPU_A, GPU_B]
    assert "100.0%" in pivot[2] and "0.0%" in pivot[3]


def test_json_csv_and_the_export_carry_the_label_column(oriole, tmp_path):
    data = json.loads(oriole("report", "--sweep", "study", "--format", "json"))
    assert [(r["model_name"], r["agent_label"], r["runs"]) for r in data] == [
        ("qwen3-8b", None, 1),
        ("qwen3-8b", GPU_A, 2),
        ("qwen3-8b", GPU_B, 2),
    ]
    rows = list(csv.DictReader(io.StringIO(oriole("report", "--sweep", "study", "--format", "csv"))))
    assert [r["agent_label"] for r in rows] == ["", GPU_A, GPU_B]
    oriole("export", "--format", "csv", "-o", str(tmp_path / "out"), "--sweep", "study")
    with (tmp_path / "out" / "experiments.csv").open(newline="") as exported:
        assert sorted(r["agent_label"] for r in csv.DictReader(exported)) == ["", GPU_A, GPU_A, GPU_B, GPU_B]
    assert "agent_label" in (tmp_path / "out" / "DATA_DICTIONARY.md").read_text()


def test_the_html_report_draws_one_series_per_label(oriole):
    page = oriole("report", "--sweep", "study", "--format", "html")
    assert GPU_A in page and GPU_B in page and "ollama/qwen3-8b" in page


def test_the_leaderboard_fits_100_columns_and_the_wide_one_is_whole(oriole, monkeypatch):
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # a terminal of 100 columns
    monkeypatch.setenv("COLUMNS", "100")
    narrow = oriole("report", "--sweep", "wide", "--pivot")
    assert max(map(len, narrow.splitlines())) <= 100
    headers = [line.split()[0] for line in narrow.splitlines() if line.startswith("agent ")]
    assert len(headers) >= 2  # the panels dealt into more than one table, each with the agent column
    panels = {word for line in narrow.splitlines() if line.startswith("agent ") for word in line.split()[1:]}
    assert {"perfect", "sparse", "dense", "open-field", "rooms", "handmade"} <= panels
    assert "config A: temperature=0.2" in narrow and "config C: temperature=0.3" in narrow
    for wide in (oriole("report", "--sweep", "wide", "--pivot", "--wide"), piped(oriole, "--sweep", "wide", "--pivot")):
        assert max(map(len, wide.splitlines())) > 100 and wide.count("\nagent ") + wide.startswith("agent ") == 1
        assert "temperature=0.3" in wide and "a-rather-long-model-name-for-a-leaderboard:70b-instruct-q4_K_M" in wide


def piped(oriole, *args):
    """The report as a pipe receives it: one table, every cell whole."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TTY_COMPATIBLE", raising=False)
        return oriole("report", *args)
