"""The benchmark keeps running: DESIGN section 10's figures are quoted from it, so it is run here on a small maze
(its figures that do not depend on the machine are checked; wall time is reported, never asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_benchmark_runs_and_keeps_three_round_trips_a_turn(empty_database, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_local_run.py"),
            "--maze",
            "perfect-7",
            "--max-moves",
            "40",
            "--json",
        ],
        env={**os.environ, "DATABASE_URL": empty_database, "ORIOLE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["db_round_trips_per_turn"] == 3.0
    assert figures["db_round_trips_agent_task"] == 2.0 and figures["db_round_trips_check_progress"] == 1.0
    assert figures["turns"] > 0 and figures["executions"] == 1
    # the handlers' wait for their statements is part of the run's wall time, and never nothing (3 a turn)
    assert 0 < figures["database_wait_seconds"] <= figures["wall_seconds"]


def test_a_recorded_result_keeps_the_others_and_says_where_it_was_measured(database_url, tmp_path):
    import psycopg

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import results_file
    finally:
        sys.path.remove(str(ROOT / "bench"))
    path = tmp_path / "results.json"
    with psycopg.connect(database_url) as conn:
        where = results_file.environment(conn)
    results_file.record("one", {"wall_seconds": 1.5}, where, path)
    results_file.record("two", {"queries": {"q": {"median_ms": 2.0}}}, where, path)
    results_file.record("one", {"wall_seconds": 1.25}, where, path)
    recorded = json.loads(path.read_text())
    assert list(recorded) == ["one", "two"] and recorded["one"]["figures"] == {"wall_seconds": 1.25}
    assert recorded["two"]["postgres"].split(".")[0].isdigit() and recorded["two"]["packages"]["moto"]
    assert recorded["one"]["commit"] != "unknown" and "cores" in recorded["one"]["machine"]
