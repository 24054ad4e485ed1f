"""A sweep under hostile conditions (issue 37): the database going away under it, a second run of the same file,
Ctrl-C twice and a resume, experiments deleted while its spend limit holds, and a comment that names it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from oriole_workstation.database import prepare

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
