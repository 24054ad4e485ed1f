"""The benchmarks' committed results: ``bench/results.json`` keeps the latest figures of each benchmark with where
they were measured (the machine, its load, the commit, PostgreSQL and the packages that decide the speed), so that
the next change is measured against them. A benchmark run with ``--record`` writes its entry (and leaves the
others); the performance page of the docs renders the file (``<!-- generated: bench-results -->``).

The machine the project is developed on is shared: compare a change against an entry measured the same way, in
ratios (CPU seconds beside wall seconds, and the load average says how busy the machine was)."""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import psycopg

RESULTS = Path(__file__).with_name("results.json")
PACKAGES = ("moto", "boto3", "psycopg", "aws-lambda-powertools", "pydantic", "jsonpath-ng")


def commit() -> str:
    """The checkout's commit, marked ``+changes`` when files differ from it."""
    root = Path(__file__).resolve().parents[1]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True)
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def environment(conn: psycopg.Connection[Any]) -> dict[str, Any]:
    """Where a benchmark ran: the machine, its load, the commit and the versions (``conn``: its database)."""
    return {
        "measured_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "load_average": round(os.getloadavg()[0], 1),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "postgres": conn.execute("SHOW server_version").fetchone()[0],  # type: ignore[index]
        "packages": {name: importlib.metadata.version(name) for name in PACKAGES},
    }


def record(benchmark: str, figures: dict[str, Any], where: dict[str, Any], path: Path = RESULTS) -> None:
    """Keep ``figures`` as ``benchmark``'s entry of the results file, with where they were measured."""
    results = json.loads(path.read_text()) if path.exists() else {}
    results[benchmark] = {**where, "figures": figures}
    path.write_text(json.dumps(results, indent=2) + "\n")
