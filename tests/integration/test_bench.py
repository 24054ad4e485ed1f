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
