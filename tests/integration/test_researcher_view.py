"""The researcher's view over real runs: the HTML report, the export for notebooks, `oriole ls` and `oriole watch`."""

from __future__ import annotations

import csv
import json
import re
import threading
import time
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from oriole.config import resolve
from oriole.store import db
from oriole_workstation.cli import app
from tests.conftest import scratch_database
from tests.integration.conftest import baseline

AGENTS = ("oracle", "explorer", "wall-follower")
TAG = "view-test"


class Structure(HTMLParser):
    """What the tests look at in a page: tags, attributes that point somewhere, SVG text, table cells."""

    def __init__(self):
        super().__init__()
        self.tags, self.references, self.svg_text, self.cells = [], [], [], []
        self._svg_depth, self._text_in = 0, None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.references += [value for name, value in attrs if name in ("href", "src", "xlink:href", "action")]
        self._svg_depth += tag == "svg"
        self._text_in = tag

    def handle_endtag(self, tag):
        self._svg_depth -= tag == "svg"
        self._text_in = None

    def handle_data(self, data):
        if self._svg_depth and self._text_in == "text":
            self.svg_text.append(data)
        if self._text_in in ("td", "a"):
            self.cells.append(data)


def parse(path: Path) -> Structure:
    page = Structure()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def three_agents(local) -> list[int]:
    """Three baseline agents on two perfect mazes, tagged so the report and the export select only them."""
    return [
        local.run(baseline(agent, maze) | {"comment": TAG}).as_json()["experiment_id"]
        for agent in AGENTS
        for maze in ("perfect-7", "perfect-9")
    ]


def test_the_html_report_is_one_page_with_a_table_and_charts_naming_every_agent(three_agents, cli, tmp_path):
    page_path = tmp_path / "report.html"
    outcome = cli("report", "--tag", TAG, "--format", "html", "-o", str(page_path))
    assert outcome.exit_code == 0, outcome.output
    text = page_path.read_text(encoding="utf-8")
    page = parse(page_path)
    assert page.tags.count("table") == 3  # the leaderboard, the comparison, the experiments
    assert page.tags.count("svg") == 4  # success, success by step, efficiency, actions: baselines spend no tokens
    for agent in AGENTS:
        assert any(f"baseline/{agent}" in t for t in page.svg_text), agent
    assert "http://" not in text and "https://" not in text and not page.references  # nothing to fetch, no link
    assert not {"script", "link", "img", "iframe"} & set(page.tags)


def test_with_animations_every_experiment_links_to_its_animation_beside_the_page(three_agents, cli, tmp_path):
    page_path = tmp_path / "out" / "report.html"
    page_path.parent.mkdir()
    outcome = cli("report", "--tag", TAG, "--format", "html", "-o", str(page_path), "--with-animations")
    assert outcome.exit_code == 0, outcome.output
    links = set(parse(page_path).references)
    assert links == {f"animations/experiment-{i}.html" for i in three_agents}
    assert all((page_path.parent / link).is_file() for link in links)


def test_the_page_names_its_provenance_and_leads_with_the_leaderboard(three_agents, cli, tmp_path):
    page_path = tmp_path / "report.html"
    assert cli("report", "--tag", TAG, "--format", "html", "-o", str(page_path)).exit_code == 0
    text = page_path.read_text(encoding="utf-8")
    assert text.index('id="leaderboard"') < text.index('id="provenance"') < text.index('id="success"')
    provenance = text[text.index('<dl class="provenance">') : text.index("</dl>")]
    assert re.search(r"\+local\.[0-9a-f]{12}</code> \(6 experiments\)", provenance)  # the code version that ran them
    assert "tag view-test" in provenance
    assert "chosen_experiments(tags =&gt; ARRAY[&#x27;view-test&#x27;])" in provenance
    assert "6 values" in provenance or provenance.count(",") >= 5  # the seeds


def test_figures_are_written_for_a_paper_column(three_agents, cli, tmp_path):
    folder = tmp_path / "figures"
    outcome = cli("report", "--tag", TAG, "--figures", str(folder))
    assert outcome.exit_code == 0, outcome.output
    assert sorted(p.name for p in folder.iterdir()) == [
        "actions.png",
        "actions.svg",
        "captions.md",
        "efficiency.png",
        "efficiency.svg",
        "success.png",
        "success.svg",
    ]
    for name in ("success", "efficiency", "actions"):
        root = ET.parse(folder / f"{name}.svg").getroot()
        assert root.get("width") == "252pt"  # 3.5 in, a paper column
        assert Image.open(folder / f"{name}.png").size[0] == 1050  # 3.5 in at 300 dpi
    assert (folder / "captions.md").read_text().count("Each ") == 3


def test_pivot_prints_the_leaderboard(three_agents, cli):
    outcome = cli("report", "--tag", TAG, "--pivot")
    assert outcome.exit_code == 0, outcome.output
    lines = outcome.stdout.splitlines()
    assert lines[0].split() == ["agent", "perfect", "7x7", "perfect", "9x9"]
    assert lines[1].startswith("baseline/explorer") and "100.0% (20.6-100.0) 1/1 m" in lines[1]  # one maze: m
    wide = cli("report", "--tag", TAG, "--pivot", "--wide").stdout.splitlines()
    assert wide[1].startswith("baseline/explorer") and "100.0% (20.6-100.0) 1/1 m" in wide[1]
    refused = cli("report", "--pivot", "--format", "csv")
    assert refused.exit_code == 2 and "--pivot prints the leaderboard" in refused.stderr


def test_with_animations_needs_an_html_file(cli):
    refused = cli("report", "--format", "table", "--with-animations")
    assert refused.exit_code == 2 and "--format html -o FILE" in refused.stderr
    old = cli("report", "--format", "table", "--with-replays")  # the old spelling, hidden, means the same
    assert old.exit_code == 2 and "--with-replays is now --with-animations" in old.stderr


def count(store, table: str, experiment_ids: list[int]) -> int:
    return store.conn.execute(
        f"SELECT count(*) AS n FROM {table} WHERE experiment_id = ANY (%s)", (experiment_ids,)
    ).fetchone()["n"]


def test_export_parquet_writes_each_table_with_the_database_row_counts_and_types(three_agents, local, cli, tmp_path):
    outcome = cli("export", "--format", "parquet", "-o", str(tmp_path), "--tag", TAG)
    assert outcome.exit_code == 0, outcome.output
    for table in ("experiments", "turns", "actions", "model_calls"):
        expected = len(three_agents) if table == "experiments" else count(local.store, table, three_agents)
        assert pq.read_metadata(tmp_path / f"{table}.parquet").num_rows == expected, table
    experiments = pq.read_table(tmp_path / "experiments.parquet")
    assert sorted(experiments.column("experiment_id").to_pylist()) == sorted(three_agents)
    schema = experiments.schema
    assert str(schema.field("started_at").type) == "timestamp[us, tz=UTC]"
    assert str(schema.field("actions").type) == "int32" and str(schema.field("input_tokens").type) == "int64"
    assert schema.field("config").type == pa.string() and schema.field("tags").type.value_type == pa.string()
    actions = pq.read_table(tmp_path / "actions.parquet")
    assert json.loads(actions.column("tiles_seen")[0].as_py())  # JSON kept as its text
    dictionary = (tmp_path / "DATA_DICTIONARY.md").read_text()
    for name in experiments.column_names + actions.column_names:
        assert f"| `{name}` |" in dictionary
    assert "tiles in sight after the action" in dictionary


@pytest.mark.parametrize("output", ["jsonl", "csv"])
def test_export_jsonl_and_csv_keep_every_row(three_agents, local, cli, tmp_path, output):
    assert cli("export", "--format", output, "-o", str(tmp_path), "--tag", TAG, "--model", "oracle").exit_code == 0
    oracle = [
        i
        for i in three_agents
        if local.store.conn.execute("SELECT model_name FROM experiments WHERE id = %s", (i,)).fetchone()["model_name"]
        == "oracle"
    ]
    path = tmp_path / f"actions.{output}"
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle] if output == "jsonl" else list(csv.DictReader(handle))
    assert len(rows) == count(local.store, "actions", oracle)
    assert rows[0]["created_at"].endswith("+00:00") and json.loads(rows[0]["tiles_seen"])
    with (tmp_path / f"experiments.{output}").open(encoding="utf-8") as handle:
        exported = [json.loads(line) for line in handle] if output == "jsonl" else list(csv.DictReader(handle))
    identity = ("code_version", "code_commit", "code_dirty", "code_hash", "harness_version", "harness_hash")
    for row in exported:  # the code that ran each one, as the experiments table recorded it
        stored = local.store.conn.execute(
            f"SELECT {', '.join(identity)} FROM experiments WHERE id = %s", (int(row["experiment_id"]),)
        ).fetchone()
        assert stored["code_hash"] and stored["harness_hash"]
        as_text = {k: "" if v is None else str(v) for k, v in stored.items()}  # CSV: a boolean as Python writes it
        assert {k: row[k] for k in identity} == (stored if output == "jsonl" else as_text)


def test_export_parquet_without_pyarrow_says_how_to_install_it(cli, tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    refused = cli("export", "--format", "parquet", "-o", str(tmp_path))
    assert refused.exit_code == 2 and "pip install 'oriole[analysis]'" in refused.stderr


# --- live progress -------------------------------------------------------------------------------------------


@pytest.fixture
def status_database(server_url, migrated_template, monkeypatch, tmp_path):
    """A database of its own with one stale running experiment, one fresh running one and one that ended."""
    with scratch_database(server_url, migrated_template) as url:
        conn = db.connect(url)
        for n, (status, started, minutes_ago) in enumerate(
            (("succeeded", "3 hours", None), ("running", "1 hour", 30), ("running", "1 minute", 0)), 1
        ):
            conn.execute(
                "INSERT INTO experiments (maze_id, llm_provider, model_name, prompt_version, prompt_hash, "
                "prompt_text, comment, config, seed, status, ending, ending_cause, current_x, current_y, started_at, "
                "completed_at, last_action_at, action_count, origin_execution_arn, execution_arns, "
                "optimal_path_length) VALUES (101, "
                "'ollama', %s, 'v1', 'h', 't', 'sweep:live', %s, 1, %s, %s, %s, 1, 1, now() - %s::interval, "
                "CASE WHEN %s <> 'running' THEN now() END, now() - %s * interval '1 minute', 40, %s, ARRAY[%s], 8)",
                (
                    f"model-{n}",
                    Jsonb(resolve({}, {"maxMoves": 400})),
                    status,
                    "success" if status == "succeeded" else None,
                    "goal" if status == "succeeded" else None,
                    started,
                    status,
                    minutes_ago or 0,
                    f"arn:{n}",
                    f"arn:{n}",
                ),
            )
        conn.close()
        monkeypatch.setenv("DATABASE_URL", url)
        monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
        monkeypatch.setenv("COLUMNS", "250")
        yield url


def test_ls_lists_running_experiments_first_and_marks_the_stale_one(status_database):
    lines = CliRunner().invoke(app, ["ls"]).stdout.splitlines()
    assert lines[0].split()[:4] == ["id", "agent", "maze", "status"]
    wide = CliRunner().invoke(app, ["ls", "--wide"]).stdout.splitlines()
    assert wide[0].split() == [
        "experiment",
        "agent",
        "maze",
        "status",
        "turn",
        "actions",
        "budget",
        "last",
        "action",
        "tokens",
        "cost",
        "sweep",
    ]
    body = lines[1:4]
    assert [line.split()[0] for line in body] == ["3", "2", "1"]
    assert "STALE running" in body[1] and "STALE" not in body[0] + body[2]
    assert "40/400" in body[0] and "10.0%" in wide[1]
    assert "1 stale" in lines[-1]
    running = json.loads(CliRunner().invoke(app, ["ls", "--running", "--json"]).stdout)
    assert [(r["experiment_id"], r["stale"]) for r in running] == [(3, False), (2, True)]
    nope = CliRunner().invoke(app, ["ls", "--sweep", "nope", "--json"])
    assert nope.exit_code == 2 and nope.stdout == "" and "--sweep nope matches no experiment" in nope.stderr


def test_watch_follows_an_experiment_live_until_it_ends(local, cli):
    arn = local.start(baseline("random", "medium-60", maxMoves=600, maxActionsPerTurn=2))
    while (experiment_id := local.store.experiment_by_execution(arn)) is None:
        time.sleep(0.02)
    follower = threading.Thread(target=local.follow, args=(arn,))  # closes the row as the launcher does
    follower.start()
    outcome = cli("watch", str(experiment_id), "--interval", "0.05")
    follower.join()
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stdout.rstrip().endswith("ended: 1 agent failure")
    assert "baseline/random" in outcome.stdout and "600/600" in outcome.stdout


def test_watch_a_sweep_until_none_of_its_experiments_runs(local, cli, monkeypatch):
    monkeypatch.delenv("COLUMNS")  # a pipe of no width: the table comes whole, once, with every column
    local.store.record_sweep_plan("watched", 2, {"id": "watched"})  # as PlanSweep does
    arns = [
        local.start(baseline(agent, "perfect-9", maxActionsPerTurn=1) | {"sweepId": "watched"})
        for agent in ("oracle", "explorer")
    ]
    while local.store.experiment_by_execution(arns[-1]) is None:
        time.sleep(0.02)
    followers = [threading.Thread(target=local.follow, args=(arn,)) for arn in arns]
    for follower in followers:
        follower.start()
    outcome = cli("watch", "--sweep", "watched", "--interval", "0.05")
    for follower in followers:
        follower.join()
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stdout.rstrip().endswith("ended: 2 success")
    *table, last = outcome.stdout.splitlines()
    assert last == "ended: 2 success" and table[0].split()[-2:] == ["tokens", "cost"]
    assert len(table) == 3 and all(line.endswith("$0.0000") for line in table[1:])


def test_watching_a_sweep_before_its_first_experiment_waits_for_it(local, cli):
    assert "--sweep late matches no experiment" in cli("watch", "--sweep", "late").stderr  # not planned: a typo?
    local.store.record_sweep_plan("late", 1, {"id": "late"})  # PlanSweep's record: the sweep has begun
    seen: dict = {}
    watcher = threading.Thread(
        target=lambda: seen.update(outcome=cli("watch", "--sweep", "late", "--interval", "0.05"))
    )
    watcher.start()
    time.sleep(3)  # the command started and refreshed with no experiment of the sweep, even on a loaded machine
    assert watcher.is_alive()
    local.follow(local.start(baseline("oracle", "perfect-9", maxActionsPerTurn=1) | {"sweepId": "late"}))
    watcher.join(timeout=60)
    assert seen["outcome"].exit_code == 0, seen["outcome"].output
    assert "waiting for the first experiment of sweep late" in seen["outcome"].stderr
    assert seen["outcome"].stdout.rstrip().endswith("ended: 1 success")


def test_watch_needs_a_target_that_exists(cli):
    assert "say what to watch: EXPERIMENT ids, --sweep ID or other filters" in cli("watch").stderr
    missing = cli("watch", "999999")
    assert missing.exit_code == 2 and "no experiment 999999 (nearest: " in missing.stderr
