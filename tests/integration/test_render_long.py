"""A long run drawn within a stated memory budget (issue 37): 200,000 actions seeded by SQL, not played, drawn by
``oriole render`` in a process of its own whose peak memory is compared with drawing a three-action run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oriole.store import db
from oriole_workstation import render
from oriole_workstation.results import Results

ACTIONS = 200_000
PER_TURN = 50
# perfect-7 from its start (1, 1): north is a wall, south is open. Each cycle of three: a wall hit, south, north.
TURNS_SQL = """
INSERT INTO turns (experiment_id, turn_number, first_step, action_count, end_reason, started_at)
SELECT %(id)s, t, (t - 1) * %(per_turn)s + 1, %(per_turn)s, 'action_budget', now()
  FROM generate_series(1, %(n)s / %(per_turn)s) t
"""
ACTIONS_SQL = """
INSERT INTO actions (experiment_id, step_number, turn_number, action_type, reasoning, from_x, from_y, to_x, to_y,
                     success, error, tiles_seen)
SELECT %(id)s, k, (k - 1) / %(per_turn)s + 1,
       CASE k %% 3 WHEN 1 THEN 'move_north' WHEN 2 THEN 'move_south' ELSE 'move_north' END,
       CASE WHEN k %% 1000 = 0 THEN 'thinking about step ' || k END,
       1, CASE k %% 3 WHEN 0 THEN 2 ELSE 1 END,
       1, CASE k %% 3 WHEN 2 THEN 2 ELSE 1 END,
       k %% 3 <> 1, CASE WHEN k %% 3 = 1 THEN 'cannot move north: wall at the target tile' END,
       '[[1, 1, 0], [1, 2, 0], [1, 3, 0], [0, 1, 1], [2, 1, 1], [1, 0, 1]]'::jsonb
  FROM generate_series(1, %(n)s) k
"""
PEAK = """
import sys
from oriole_workstation.command import main

def status(field):
    with open("/proc/self/status") as lines:
        return next(int(line.split()[1]) for line in lines if line.startswith(field + ":"))

before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as refs:
    refs.write("5")  # the peak (VmHWM) starts again from here: what the command itself adds
try:
    main()
finally:
    sys.stderr.write(f"\\npeak-rss-kib {status('VmHWM') - before}\\n")
"""


def drawn(database_url: str, home: Path, *args: str) -> tuple[int, str]:
    """``oriole render ARGS`` in a process of its own: how far its resident memory rose above what the process held
    before the command ran (KiB; Linux's VmHWM, reset through clear_refs), and what it printed."""
    env = {**os.environ, "DATABASE_URL": database_url, "ORIOLE_HOME": str(home), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", PEAK, "render", *args], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    peak = int(done.stderr.rsplit("peak-rss-kib ", 1)[1].split()[0])
    return peak, done.stdout


@pytest.fixture(scope="module")
def long_run(local) -> int:
    ran = local.run({"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "wall-follower"}).as_json()
    experiment = ran["experiment_id"]
    conn = local.store.conn
    conn.execute("DELETE FROM actions WHERE experiment_id = %s", (experiment,))
    conn.execute("DELETE FROM turns WHERE experiment_id = %s", (experiment,))
    params = {"id": experiment, "n": ACTIONS, "per_turn": PER_TURN}
    conn.execute(TURNS_SQL, params)
    conn.execute(ACTIONS_SQL, params)
    conn.execute(
        "UPDATE experiments SET action_count = %s, turn_count = %s, goal_first_seen_step = NULL WHERE id = %s",
        (ACTIONS, ACTIONS // PER_TURN, experiment),
    )
    return experiment


@pytest.fixture(scope="module")
def short_run(local) -> int:
    ran = local.run(
        {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle", "config": {"maxMoves": 3}}
    ).as_json()
    return ran["experiment_id"]


@pytest.mark.serial
def test_a_replay_of_200000_actions_is_drawn_within_the_memory_budget(database_url, long_run, short_run, tmp_path):
    every_format = [[f"-o{tmp_path / name}.{suffix}" for suffix in ("html", "svg", "png", "gif")] for name in "sl"]
    small, _ = drawn(database_url, tmp_path, str(short_run), *every_format[0])
    peak, printed = drawn(database_url, tmp_path, str(long_run), *every_format[1])
    growth_bytes = (peak - small) * 1024
    print(
        f"peak RSS growth: {small} KiB for 3 actions, {peak} KiB for {ACTIONS:,}: {growth_bytes / ACTIONS:.1f} B/action"
    )
    assert growth_bytes <= render.MEMORY_BASE_BYTES + render.MEMORY_PER_ACTION_BYTES * ACTIONS, (small, peak)
    assert printed.count("wrote ") == 4
    page = (tmp_path / "l.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script id="run-data" type="application/json">', 1)[1].split("</script>", 1)[0])
    assert len(data["steps"]) == ACTIONS and data["steps"][-1]["to"] == [1, 2]  # a cycle ends one south
    with db.connect(database_url) as conn:
        run = render.Run.from_record(Results(conn).experiment_run(long_run))
    assert len(run.steps) == ACTIONS and run.position(ACTIONS) == (1, 2)
    assert data["centres"][-1] == [round(c, 1) for c in render.layout(run).centre((1, 2))]  # the agent's last tile
    assert data["steps"][999]["reasoning"] == "thinking about step 1000"
    assert page.count('<path class="bump"') == 1  # one wall, hit 66,667 times, drawn once
