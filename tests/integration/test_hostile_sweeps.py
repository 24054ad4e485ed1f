"""Sweeps and stored runs under hostile conditions (issue 37): the database going away under a sweep, a second run of
the same file, Ctrl-C twice and a resume, experiments deleted while its spend limit holds, a comment that names a
sweep, a replayed experiment deleted, an original tampered with before its replay."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from oriole_workstation.database import prepare
from tests.integration.conftest import TIME_SCALE, Local
from tests.integration.test_replay import recorded, replayed

ORIOLE = [sys.executable, "-c", "from oriole_workstation.command import main; main()"]


def oriole(database_url: str, home: Path, *args: str) -> subprocess.Popen:
    """The ``oriole`` command as a process of its own (what a researcher runs), on the test's database."""
    env = {**os.environ, "DATABASE_URL": database_url, "ORIOLE_HOME": str(home), "COLUMNS": "200"}
    return subprocess.Popen(
        [*ORIOLE, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )


def wait_for(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def experiments(url: str, sweep: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT id, status FROM experiments WHERE agent_id LIKE %s", (f"{sweep}/%",)).fetchall()


@pytest.fixture(scope="module")
def database_url(module_database):
    """A database of this file's own: its replay tests tamper with stored rows on purpose (a snapshot whose
    ``maxMoves`` reads "many"), which no other file's listing of every experiment should meet."""
    return module_database


@pytest.fixture
def local(database_url):
    """The local state machine for one test (the module's commands start their own, which must not meet it)."""
    from oriole.store import db
    from oriole_workstation.results import Results
    from oriole_workstation.runner import LocalAws

    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:
        yield Local(aws, Results(conn))
    conn.close()


@pytest.fixture
def own_database(empty_database):
    """A database of the test's own: what it leaves open or stops touches no other test."""
    prepare(empty_database).conn.close()
    return empty_database


def long_sweep(tmp_path: Path, sweep_id: str, repetitions: int = 4) -> Path:
    path = tmp_path / f"{sweep_id}.toml"
    path.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/random"]\nmazes = ["perfect-21"]\nrepetitions = {repetitions}\n'
        "concurrency = 2\n[[configs]]\nmaxMoves = 4000\n"
    )
    return path


def test_the_database_going_away_mid_sweep_is_one_line_never_a_traceback(own_database, server_url, tmp_path):
    run = oriole(own_database, tmp_path, "sweep", str(long_sweep(tmp_path, "goes-away")), "--quiet")
    wait_for(lambda: experiments(own_database, "goes-away"))
    name = psycopg.conninfo.conninfo_to_dict(own_database)["dbname"]
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(name)))
        try:  # as `oriole db stop` does to every session: "terminating connection due to administrator command"
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))
            _, stderr = run.communicate(timeout=120)
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(sql.Identifier(name)))
    assert run.returncode == 2, stderr
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: the database connection was lost (AdminShutdown"), stderr


def small_sweep(tmp_path: Path, sweep_id: str, extra: str = "") -> Path:
    path = tmp_path / f"{sweep_id}.toml"
    path.write_text(
        f'id = "{sweep_id}"\nagents = ["baseline/oracle", "baseline/explorer"]\nmazes = ["perfect-7"]\n{extra}'
    )
    return path


def test_a_comment_naming_a_sweep_puts_no_run_into_it(cli, store, tmp_path):
    assert cli("sweep", str(small_sweep(tmp_path, "members")), "--quiet").exit_code == 0
    for comment in ("sweep:members", "sweep:members sweep:other", "  sweep:members\t"):
        # a few moves: the runs are here for their comment, not their walk (a random walk of perfect-9 is hundreds)
        ran = cli("run", "--agent", "random", "--maze", "perfect-9", "--max-moves", "5", "--comment", comment)
        assert ran.exit_code == 0, ran.output
    members = {row.id for row in store.sweep_experiments("members")}
    assert len(members) == 2
    report = json.loads(cli("report", "--sweep", "members", "--format", "json").output)
    assert sum(row["runs"] + row["errors"] + row["running"] for row in report) == 2
    assert {row["model_name"] for row in report} == {"oracle", "explorer"}
    listed = json.loads(cli("ls", "--sweep", "members", "--json", "--limit", "0").output)
    assert {row["experiment_id"] for row in listed} == members
    exported = tmp_path / "export"
    assert cli("export", "--format", "jsonl", "-o", str(exported), "--sweep", "members").exit_code == 0
    assert len((exported / "experiments.jsonl").read_text().splitlines()) == 2
    status = cli("sweep", "status", "members").output
    assert "2 planned" in status and "2 done" in status, status


def test_an_input_naming_a_sweep_that_was_never_planned_is_refused_and_leaves_no_row(local, store):
    before = store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]
    result = local.run(
        {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle", "sweepId": "never-planned"}
    )
    assert "InvalidExecutionInput" in str(result.as_json()["failure_reason"])
    assert "names no sweep this database planned" in str(result.as_json()["failure_reason"])
    assert store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"] == before


def test_deleting_a_sweeps_experiments_keeps_what_they_spent_under_its_limit(cli, store, tmp_path):
    first = cli("sweep", str(small_sweep(tmp_path, "kept-spend")), "--quiet")
    assert first.exit_code == 0, first.output
    store.conn.execute("UPDATE experiments SET cost_usd = 0.6 WHERE sweep_id = 'kept-spend'")  # as if priced
    assert store.sweep_spend("kept-spend") == pytest.approx(1.2)
    deleted = cli("experiments", "delete", "--sweep", "kept-spend", "--yes")
    assert deleted.exit_code == 0 and "deleted 2 experiment(s)" in deleted.output
    assert store.sweep_experiments("kept-spend") == [] and store.sweep_spend("kept-spend") == pytest.approx(1.2)
    again = cli("sweep", str(small_sweep(tmp_path, "kept-spend", "spend_limit_usd = 1.0\n")), "--quiet")
    assert again.exit_code == 3, again.output  # the limit is spent: nothing starts
    assert "2 skipped" in again.output and store.sweep_experiments("kept-spend") == []


def test_deleting_a_replayed_experiment_deletes_its_replays_in_one_line(cli, local, store):
    original = recorded(local, {})
    replays = [replayed(local, original).replay_id for _ in range(2)]
    deleted = cli("experiments", "delete", str(original), "--yes")
    assert deleted.exit_code == 0, deleted.output
    assert f"deleted 3 experiment(s): {', '.join(map(str, sorted([original, *replays])))}" in deleted.output
    assert not store.conn.execute("SELECT id FROM experiments WHERE id = ANY (%s)", ([original, *replays],)).fetchall()


def test_a_second_run_of_a_running_sweep_is_refused_and_a_resume_after_ctrl_c_twice_counts_what_ended(
    own_database, tmp_path
):
    path = long_sweep(tmp_path, "twice", repetitions=4)
    first = oriole(own_database, tmp_path, "sweep", str(path), "--quiet")
    wait_for(lambda: len([s for _, s in experiments(own_database, "twice") if s == "running"]) == 2)
    first.send_signal(signal.SIGSTOP)  # held still, lock and all, so a loaded machine cannot let it finish first
    try:
        second = oriole(own_database, tmp_path, "sweep", str(path), "--quiet")
        _, refused = second.communicate(timeout=120)
    finally:
        first.send_signal(signal.SIGCONT)
    assert second.returncode == 2 and "sweep twice is already running in another oriole process" in refused, refused
    assert "Traceback" not in refused
    first.send_signal(signal.SIGINT)
    time.sleep(1.0)
    first.send_signal(signal.SIGINT)  # the second Ctrl-C leaves the running experiments open
    out, err = first.communicate(timeout=120)
    assert first.returncode == 130, f"the first run, stopped twice, exited {first.returncode}:\n{out}\n{err}"
    left = [i for i, s in experiments(own_database, "twice") if s == "running"]
    assert left, "the test needs experiments left open by the stopped run"
    resumed = oriole(own_database, tmp_path, "sweep", str(path), "--quiet")
    _, progress = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, progress
    assert {s for _, s in experiments(own_database, "twice")} <= {"succeeded", "timed_out", "failed", "aborted"}
    last = [line for line in progress.splitlines() if line.startswith("sweep twice: ")][-1]
    assert last.startswith("sweep twice: 4/4 done") and " 0 running " in f" {last} " and " 0 left " in f" {last} ", last


TAMPERINGS = {
    "an answer that is no answer": "UPDATE model_calls SET answer = %s WHERE experiment_id = %s AND call_index = 1",
    "retries that are no count": (
        "UPDATE model_calls SET request = jsonb_set(request, '{retries}', to_jsonb(%s::text)) "
        "WHERE experiment_id = %s AND call_index = 1"
    ),
}


@pytest.mark.parametrize("tampering", sorted(TAMPERINGS))
def test_a_tampered_original_cannot_be_replayed_and_says_so_in_one_line(cli, database_url, store, tampering):
    from oriole.store import db
    from oriole_workstation.results import Results
    from oriole_workstation.runner import LocalAws

    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:
        original = recorded(Local(aws, Results(conn)), {})
    conn.close()
    garbage = random.Random(tampering).randbytes(40)
    value = garbage if tampering.startswith("an answer") else "many"
    store.conn.execute(TAMPERINGS[tampering], (value, original))
    result = cli("replay", str(original))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"experiment {original} cannot be replayed: RecordUnreadable" in lines[0], lines


SNAPSHOT_TAMPERINGS = {
    "an unknown key": ("UPDATE experiments SET config = config || '{\"evilKey\": 1}' WHERE id = %s", "evilKey"),
    "a wrong type": (
        "UPDATE experiments SET config = jsonb_set(config, '{maxMoves}', '\"many\"') WHERE id = %s",
        "config.maxMoves must be an integer",
    ),
    "a value out of range": (
        "UPDATE experiments SET config = jsonb_set(config, '{visionRange}', '-5') WHERE id = %s",
        "config.visionRange must be at least",
    ),
    "a snapshot that is no object": ("UPDATE experiments SET config = '[1]' WHERE id = %s", "not a JSON object"),
    "another provider": ("UPDATE experiments SET llm_provider = 'ollama' WHERE id = %s", "RecordUnreadable"),
    "the replay's provider": ("UPDATE experiments SET llm_provider = 'replay' WHERE id = %s", "plays no experiment"),
}


@pytest.mark.parametrize("tampering", sorted(SNAPSHOT_TAMPERINGS))
def test_an_original_whose_configuration_was_altered_cannot_be_replayed_and_says_what_is_wrong(
    cli, database_url, store, tampering
):
    from oriole.store import db
    from oriole_workstation.results import Results
    from oriole_workstation.runner import LocalAws

    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:
        original = recorded(Local(aws, Results(conn)), {})
    conn.close()
    query, says = SNAPSHOT_TAMPERINGS[tampering]
    store.conn.execute(query, (original,))
    result = cli("replay", str(original))
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: experiment {original} cannot be replayed: "), lines
    assert says in lines[0] and "differs" not in lines[0] and "Traceback" not in result.output, lines


LATIN, CYRILLIC = "coca-pepe-7", "\u0441\u043e\u0441\u0430-\u0440\u0435\u0440\u0435-7"  # read the same


def labelled_sweep(tmp_path: Path, sweep_id: str, label: str) -> Path:
    path = tmp_path / f"{sweep_id}.toml"
    path.write_text(
        f'id = "{sweep_id}"\nmazes = ["perfect-7"]\n[[agents]]\nlabel = "{label}"\nprovider = "baseline"\n'
        'model = "oracle"\n',
        encoding="utf-8",
    )
    return path


def test_a_sweep_label_that_reads_like_a_stored_one_is_refused_before_anything_starts(cli, store, tmp_path):
    assert cli("sweep", str(labelled_sweep(tmp_path, "latin-label", LATIN)), "--quiet").exit_code == 0
    refused = cli("sweep", str(labelled_sweep(tmp_path, "cyrillic-label", CYRILLIC)), "--quiet")
    assert refused.exit_code != 0 and store.sweep_experiments("cyrillic-label") == [], refused.output
    assert f"{CYRILLIC!a} reads the same as {LATIN!a}" in refused.output, refused.output
    assert "Traceback" not in refused.output
    again = cli("sweep", str(labelled_sweep(tmp_path, "latin-again", LATIN)), "--quiet")  # the same spelling
    assert again.exit_code == 0, again.output


def test_a_start_whose_label_reads_like_a_stored_one_is_refused_and_leaves_no_row(local, store):
    ran = local.run({"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle"}).as_json()
    store.conn.execute(  # a label stored decomposed, as code before the check stored it
        "UPDATE experiments SET agent_label = %s WHERE id = %s", ("re\u0301sume\u0301-i37", ran["experiment_id"])
    )
    before = store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"]
    result = local.run(
        {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle", "agentLabel": "résumé-i37"}
    )
    reason = str(result.as_json()["failure_reason"])
    assert "InvalidExecutionInput" in reason and "'r\\xe9sum\\xe9-i37' reads the same as" in reason, reason
    assert "'re\\u0301sume\\u0301-i37'" in reason, reason
    assert store.conn.execute("SELECT count(*) AS n FROM experiments").fetchone()["n"] == before
