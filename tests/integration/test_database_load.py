"""More experiments at once than the database accepts connections: every one still ends.

Each experiment runs in a process of its own, whose functions hold one connection (as a warm Lambda
container does), connecting as a scratch member of the application role with a connection limit smaller
than the number of processes. A function that finds no free slot waits with backoff (``DatabaseBusy``
after that, which the state machine retries), so every experiment ends: succeeded, or failed with a named
reason; none is left open and no step is doubled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from tests.integration.conftest import baseline
from tests.integration.test_local_state_machine import assert_invariants

ROOT = Path(__file__).parents[2]
# One experiment more than the slots is the smallest case of the property (one must wait while two hold them); each
# container is a process of its own that starts the local AWS stand-ins cold (seconds of CPU), so more containers
# only cost time.
LIMIT, EXPERIMENTS = 2, 3


def scratch_role(conn: psycopg.Connection, limit: int) -> str:
    """A login of the application role with a password (a server over TCP asks for one), named by itself."""
    name = f"oriole_load_{uuid.uuid4().hex[:8]}"
    conn.execute(
        sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} CONNECTION LIMIT {} IN ROLE oriole_app").format(
            sql.Identifier(name), sql.Literal(password(name)), sql.Literal(limit)
        )
    )
    return name


def password(role: str) -> str:
    return f"pw-{role}"


def as_role(url: str, role: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    return psycopg.conninfo.make_conninfo(**{**info, "user": role, "password": password(role)})


class Container:
    """One worker process, its output read as it comes (the test waits for each to meet a full database)."""

    def __init__(self, database_url: str, functions_url: str, execution_input: dict):
        env = {
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "lambdas"), str(ROOT / "workstation"), str(ROOT)]),
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.integration.one_container",
                database_url,
                functions_url,
                json.dumps(execution_input),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True)
        self.reader.start()

    @property
    def waits(self) -> int:
        return sum("no free database connection slot" in line for line in list(self.lines))

    def outcome(self) -> dict:
        self.process.wait(timeout=300)
        self.reader.join(timeout=10)
        assert self.process.returncode == 0, self.process.stderr.read()[-3000:]
        return json.loads(self.lines[-1])


def test_more_concurrent_experiments_than_connections_all_end_and_nothing_is_doubled(store, database_url):
    """The test itself holds every slot until each container has met the full database, then lets go; the
    containers then share the slots, LIMIT at a time."""
    role = scratch_role(store.conn, LIMIT)
    functions_url = as_role(database_url, role)
    inputs = [
        {**baseline("oracle", "perfect-9", maxActionsPerTurn=2), "agentId": f"load-{n}"} for n in range(EXPERIMENTS)
    ]
    hogs = [psycopg.connect(functions_url) for _ in range(LIMIT)]
    try:
        containers = [Container(database_url, functions_url, i) for i in inputs]
        deadline = time.monotonic() + 180
        while not all(c.waits for c in containers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(c.waits for c in containers), "a container never met the full database"
        for hog in hogs:
            hog.close()
        outcomes = [c.outcome() for c in containers]
        busy = store.conn.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = %s", (role,)).fetchone()[
            "n"
        ]
    finally:
        for hog in hogs:
            hog.close()
        store.conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        store.conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
    assert busy == 0  # every container let go of its connection
    for outcome in outcomes:
        data = outcome["result"]
        if data["experiment_id"] is None:  # refused before a row existed: only for want of a connection
            assert outcome["error"] == "DatabaseBusy", outcome
            continue
        assert data["status"] == "succeeded" or data["failure_reason"].startswith("DatabaseBusy"), data
        assert_invariants(store, data["experiment_id"])  # closed, every step once
    rows = store.conn.execute(
        "SELECT agent_id, count(*) AS n FROM experiments WHERE agent_id LIKE 'load-%%' GROUP BY agent_id"
    ).fetchall()
    assert all(r["n"] == 1 for r in rows)  # no experiment started twice
    assert any(o["result"]["status"] == "succeeded" for o in outcomes)
