"""The tutorial's notebook cell: read what `oriole export` wrote and compare the agents.

Run as ``python docs/tutorial/notebook.py data/tutorial``. pyarrow comes with the ``analysis`` extra; pandas,
polars and DuckDB read the same files (reference/results.md).
"""

import sys
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

folder = Path(sys.argv[1] if len(sys.argv) > 1 else "data/tutorial")
experiments = pq.read_table(folder / "experiments.parquet")
actions = pq.read_table(folder / "actions.parquet")

by_agent = experiments.group_by("model_name").aggregate(
    [("experiment_id", "count"), ("goal_found", "sum"), ("path_efficiency", "mean"), ("actions", "mean")]
)
for row in by_agent.sort_by("model_name").to_pylist():
    print(
        f"{row['model_name']:<10} experiments {row['experiment_id_count']}  goal found {row['goal_found_sum']}"
        f"  mean path efficiency {row['path_efficiency_mean']:.3f}  mean actions {row['actions_mean']:.0f}"
    )
wall_hits = pc.sum(pc.invert(actions["success"])).as_py()
print(f"{actions.num_rows} actions, {wall_hits} of them into a wall")
