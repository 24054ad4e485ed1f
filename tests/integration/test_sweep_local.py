"""Sweeps through the local state machine: a 2 agents x 3 mazes x 2 repetitions sweep completes under its
concurrency cap, tags its experiments, and run again starts nothing; the AWS launcher (executions started
with boto3, here against moto's Step Functions running the real state machine) holds a per-provider cap
and follows an experiment left running instead of starting it twice."""

from __future__ import annotations

import io
import uuid

import pytest
from rich.console import Console
from typer.testing import CliRunner

from oriole import db
from oriole.store import Store
from oriole_workstation import sweep
from oriole_workstation.cli import app
from oriole_workstation.launcher import Launcher
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws


def max_overlap(rows: list[dict]) -> int:
    """The most experiments that were running at the same moment, from their stored start and end times."""
    events = sorted([(r["started_at"], 1) for r in rows] + [(r["completed_at"], -1) for r in rows],
                    key=lambda e: (e[0], e[1]))
    running = peak = 0
    for _, change in events:
        running += change
        peak = max(peak, running)
    return peak


def experiments(store: Store, sweep_id: str) -> list[dict]:
    return store.conn.execute(
        "SELECT id, agent_id, comment, status, model_name, started_at, completed_at FROM experiments "
        "WHERE agent_id LIKE %s ORDER BY id", (sweep_id + "/%",)).fetchall()


@pytest.fixture
def cli(database_url, monkeypatch, tmp_path):
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")
    return lambda *args: CliRunner().invoke(app, ["sweep", *map(str, args)])


def test_a_sweep_runs_its_matrix_under_the_cap_and_resumes_by_starting_nothing(cli, store, tmp_path):
    sweep_id = f"it-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "sweep.toml"
    file.write_text(f'id = "{sweep_id}"\nagents = ["baseline/random", "baseline/explorer"]\n'
                    'mazes = ["perfect-7", "perfect-9", "perfect-11"]\nrepetitions = 2\nconcurrency = 2\n'
                    'comment = "integration"\n[[configs]]\nmaxMoves = 60\n')
    planned = cli(file, "--dry-run")
    assert planned.exit_code == 0 and len(planned.stdout.splitlines()) == 12 and experiments(store, sweep_id) == []
    first = cli(file)
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("12 planned: 0 already done, ")
    rows = experiments(store, sweep_id)
    assert len(rows) == 12 and len({r["agent_id"] for r in rows}) == 12
    assert all(r["status"] in ("succeeded", "timed_out") for r in rows)
    assert {r["comment"] for r in rows} == {f"sweep:{sweep_id} integration"}
    assert max_overlap(rows) <= 2
    report = [line.split() for line in first.stdout.splitlines() if line.startswith("baseline/")]
    assert sorted((line[0], line[3], line[6]) for line in report) == sorted(  # agent, maze size, runs
        (agent, size, "2") for agent in ("baseline/explorer", "baseline/random") for size in ("7x7", "9x9", "11x11"))
    again = cli(file)
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("12 planned: 12 already done; spent $0.0000")
    assert "12 already done, 0 to run" in again.stderr
    assert len(experiments(store, sweep_id)) == 12


def test_the_aws_launcher_holds_a_per_provider_cap_and_follows_an_experiment_left_running(database_url, store):
    sweep_id = f"aws-{uuid.uuid4().hex[:8]}"
    spec = sweep.SweepFile(id=sweep_id, agents=["baseline/oracle", "baseline/explorer"],
                           mazes=["perfect-7", "perfect-9"])
    planned = sweep.plan(spec)
    with LocalAws(database_url) as aws:
        launcher = Launcher(aws.sfn, aws.state_machine_arn, poll_seconds=0.05)  # as on AWS: no lost-end reports
        earlier = launcher.start(planned[0].execution_input(sweep_id, None), planned[0].execution_name(sweep_id))
        open_row = {"id": None, "status": "running", "origin_execution_arn": earlier}  # what resume would find
        todo = [(planned[0], open_row), *((item, None) for item in planned[1:])]
        tracker = sweep.Tracker(Console(file=io.StringIO()), total=len(todo))
        with tracker:
            results = sweep.execute(sweep_id, todo, launcher, lambda: Results(db.connect(database_url)), tracker,
                                    follows_open=True, concurrency=None, provider_concurrency={"baseline": 1},
                                    spend_limit=None, comment=None)
    assert [r.status for r in results] == ["succeeded"] * 4
    rows = experiments(store, sweep_id)
    assert len(rows) == 4 and len({r["agent_id"] for r in rows}) == 4  # the earlier one was not started again
    assert results[0].summary["experiment_id"] == store.experiment_by_execution(earlier)
    assert max_overlap(rows) == 1


def test_a_sweep_over_maze_samples_plays_that_many_different_mazes_and_resumes_on_the_same_ones(cli, store, tmp_path):
    sweep_id = f"samples-{uuid.uuid4().hex[:8]}"
    file = tmp_path / "samples.toml"
    file.write_text(f'id = "{sweep_id}"\nagents = ["baseline/oracle"]\n'
                    'mazes = [{ family = "perfect", size = 9, samples = 4 }]\nconcurrency = 2\n')
    first = cli(file)
    assert first.exit_code == 0, first.output
    mazes = store.conn.execute(
        "SELECT m.name, m.content_hash, m.source, m.shortest_path_length, e.action_count, e.status "
        "FROM experiments e JOIN mazes m ON m.id = e.maze_id WHERE e.agent_id LIKE %s", (sweep_id + "/%",)).fetchall()
    assert len(mazes) == 4 and len({m["content_hash"] for m in mazes}) == 4
    assert all(m["name"].startswith("perfect-9@") and m["source"] == "generated" for m in mazes)
    assert all(m["status"] == "succeeded" and m["action_count"] == m["shortest_path_length"] for m in mazes)
    again = cli(file)
    assert again.exit_code == 0 and again.stdout.startswith("4 planned: 4 already done")
