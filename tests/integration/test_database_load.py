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
import time
import uuid
from pathlib import Path

import psycopg
from psycopg import sql

from tests.integration.conftest import baseline
from tests.integration.test_local_state_machine import assert_invariants

ROOT = Path(__file__).parents[2]
LIMIT, EXPERIMENTS = 2, 5
HELD_SECONDS = 8


def scratch_role(conn: psycopg.Connection, limit: int) -> str:
    name = f"oriole_load_{uuid.uuid4().hex[:8]}"
    conn.execute(sql.SQL("CREATE ROLE {} LOGIN CONNECTION LIMIT {} IN ROLE oriole_app").format(
        sql.Identifier(name), sql.Literal(limit)))
    return name


def as_role(url: str, role: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["user"] = role
    return psycopg.conninfo.make_conninfo(**info)


def test_more_concurrent_experiments_than_connections_all_end_and_nothing_is_doubled(store, database_url):
    """The test itself holds every slot while the containers start (so each of them meets a full database),
    then lets go; the containers then share the slots, LIMIT at a time."""
    role = scratch_role(store.conn, LIMIT)
    functions_url = as_role(database_url, role)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lambdas"), str(ROOT / "workstation"), str(ROOT)])}
    inputs = [{**baseline("oracle", "perfect-9", maxActionsPerTurn=2), "agentId": f"load-{n}"}
              for n in range(EXPERIMENTS)]
    hogs = [psycopg.connect(functions_url) for _ in range(LIMIT)]
    try:
        workers = [subprocess.Popen([sys.executable, "-m", "tests.integration.one_container", database_url,
                                     functions_url, json.dumps(i)], cwd=ROOT, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in inputs]
        time.sleep(HELD_SECONDS)
        for hog in hogs:
            hog.close()
        outcomes, waits = [], 0
        for worker in workers:
            out, err = worker.communicate(timeout=300)
            assert worker.returncode == 0, err[-3000:]
            outcomes.append(json.loads(out.strip().splitlines()[-1]))
            waits += out.count("no free database connection slot")
        busy = store.conn.execute("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = %s",
                                  (role,)).fetchone()["n"]
    finally:
        for hog in hogs:
            hog.close()
        store.conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,))
        store.conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
    assert busy == 0  # every container let go of its connection
    assert waits >= EXPERIMENTS - 1  # the containers did meet a full database
    ended = [o for o in outcomes if o["result"]["experiment_id"] is not None]
    for outcome in outcomes:
        data = outcome["result"]
        if data["experiment_id"] is None:  # refused before a row existed: only for want of a connection
            assert outcome["error"] == "DatabaseBusy", outcome
            continue
        assert data["status"] == "succeeded" or data["failure_reason"].startswith("DatabaseBusy"), data
        assert_invariants(store, data["experiment_id"])
    ids = [o["result"]["experiment_id"] for o in ended]
    assert len(set(ids)) == len(ids)
    agents = [r["agent_id"] for r in store.conn.execute(
        "SELECT agent_id FROM experiments WHERE agent_id LIKE 'load-%%'").fetchall()]
    assert sorted(agents) == sorted({a for a in agents})  # one row per started experiment, no second one
    assert len(ended) >= EXPERIMENTS - 1, outcomes  # waiting for a slot lets (nearly) all of them run
