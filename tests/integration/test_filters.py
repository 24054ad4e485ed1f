"""One way to choose experiments, in every command and format: a value that matches no experiment is refused in
one line (exit status 2) that names it and the closest values that exist, instead of reading as an empty result;
the values of one filter are a union (``--sweep a --sweep b``), different filters an intersection."""

from __future__ import annotations

import json
import uuid

import pytest
from typer.testing import CliRunner

from oriole.store import db
from oriole_workstation.cli import app
from oriole_workstation.results import Results
from oriole_workstation.runner import LocalAws
from tests.integration.conftest import TIME_SCALE, Local, baseline


@pytest.fixture(scope="module")
def two_sweeps(database_url, tmp_path_factory):
    """Two sweeps' worth of experiments, each recorded as its sweep's (a planned sweep, sweepId): (sweep a, sweep
    b, {sweep: {agent: id}}), and the environment the commands read."""
    home = tmp_path_factory.mktemp("home")
    env = {"DATABASE_URL": database_url, "ORIOLE_HOME": str(home), "COLUMNS": "250"}
    names = (f"fa-{uuid.uuid4().hex[:6]}", f"fb-{uuid.uuid4().hex[:6]}")
    ids: dict[str, dict[str, int]] = {}
    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:  # closed before the commands start their own
        local = Local(aws, Results(conn))
        for sweep in names:
            local.store.record_sweep_plan(sweep, 2, {"id": sweep})
            for agent in ("oracle", "explorer"):
                ran = local.run(baseline(agent, "perfect-7") | {"sweepId": sweep})
                assert ran.summary is not None
                ids.setdefault(sweep, {})[agent] = ran.summary.experiment_id
    conn.close()
    return names, ids, env


@pytest.fixture
def oriole(two_sweeps, monkeypatch):
    for key, value in two_sweeps[2].items():
        monkeypatch.setenv(key, value)
    return lambda *args: CliRunner().invoke(app, [str(a) for a in args])


def test_repeated_filters_are_a_union_and_different_filters_an_intersection(two_sweeps, oriole, tmp_path):
    (a, b), ids, _ = two_sweeps
    listed = json.loads(oriole("ls", "--sweep", a, "--sweep", b, "--json").stdout)
    assert sorted(r["experiment_id"] for r in listed) == sorted([*ids[a].values(), *ids[b].values()])
    both = json.loads(oriole("ls", "--sweep", a, "--sweep", b, "--agent", "baseline/oracle", "--json").stdout)
    assert sorted(r["experiment_id"] for r in both) == sorted([ids[a]["oracle"], ids[b]["oracle"]])
    report = json.loads(oriole("report", "--sweep", a, "--sweep", b, "--format", "json").stdout)
    assert {(r["model_name"], r["runs"]) for r in report} == {("oracle", 2), ("explorer", 2)}
    oriole("export", "--format", "jsonl", "-o", tmp_path / "out", "--sweep", b, "--sweep", a, "--model", "explorer")
    exported = (tmp_path / "out" / "experiments.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["experiment_id"] for line in exported) == sorted(
        [ids[a]["explorer"], ids[b]["explorer"]]
    )
    drawn = oriole("render", ids[a]["oracle"], "--sweep", a, "--sweep", b, "--model", "oracle", "--dir", tmp_path)
    assert drawn.exit_code == 0 and drawn.stdout.count("wrote ") == 2  # the id is among those the filters choose
    assert {p.name for p in tmp_path.glob("experiment-*")} == {
        f"experiment-{ids[a]['oracle']}.png",
        f"experiment-{ids[a]['oracle']}.svg",
    }


@pytest.mark.parametrize(
    "command",
    [
        ("ls",),
        ("ls", "--json"),
        ("report",),
        ("report", "--format", "csv"),
        ("report", "--format", "json"),
        ("report", "--format", "html", "-o", "{tmp}/page.html"),
        ("report", "--pivot"),
        ("export", "--format", "csv", "-o", "{tmp}/out"),
        ("render", "--dir", "{tmp}"),
        ("replay",),
        ("watch",),
        ("experiments", "archive"),
        ("experiments", "delete", "--yes"),
    ],
)
def test_a_sweep_that_does_not_exist_is_refused_in_every_command_and_format(two_sweeps, oriole, tmp_path, command):
    (a, _), _, _ = two_sweeps
    typo = a[:2] + a[3] + a[2] + a[4:]  # two letters swapped
    refused = oriole(*(part.format(tmp=tmp_path) for part in command), "--sweep", a, "--sweep", typo)
    assert refused.exit_code == 2 and refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(f"error: --sweep {typo} matches no experiment (closest: {a}")
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize(
    "command",
    [("render",), ("replay",), ("watch",), ("transcript",), ("status",), ("experiments", "restore")],
)
def test_an_experiment_id_that_does_not_exist_is_refused_with_the_nearest_ones(two_sweeps, oriole, command):
    del two_sweeps  # only its experiments, so the database has some
    missing = 2**62
    refused = oriole(*command, missing)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert (
        refused.stderr.startswith(f"error: no experiment {missing} (nearest: ")
        and len(refused.stderr.splitlines()) == 1
    )


def test_filters_that_each_match_but_not_together_are_refused_where_they_would_write_nothing(
    two_sweeps, oriole, tmp_path
):
    (a, b), ids, _ = two_sweeps
    refused = oriole("render", ids[a]["oracle"], "--sweep", b, "--dir", tmp_path)
    assert (
        refused.exit_code == 2
        and f"no experiment is all of: experiment {ids[a]['oracle']}, sweep {b}" in refused.stderr
    )
    none = oriole("ls", "--sweep", a, "--running")  # a listing may be empty: nothing runs
    assert none.exit_code == 0 and none.stdout == f"no experiment running: sweep {a}\n"
