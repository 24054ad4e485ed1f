"""Each test process's embedded PostgreSQL (tests/isolation.py) lives outside pytest's temporary tree, and a
process that dies without its cleanup leaves nothing behind for long: the next session stops its server and
deletes its folder, and leaves a live process's server alone."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import psycopg

from tests import isolation

ROOT = Path(__file__).parents[2]
HOLD_A_SERVER = """
import sys, time
from tests.isolation import embedded_server
with embedded_server() as url:
    print(url, flush=True)
    time.sleep(600)
"""


def a_server_in_another_process() -> tuple[subprocess.Popen, str, Path]:
    """A process holding a server, the server's URL and its folder."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD_A_SERVER], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    url = process.stdout.readline().strip()
    with psycopg.connect(url) as conn:
        return process, url, Path(conn.execute("SHOW data_directory").fetchone()[0]).parent


def answers(url: str) -> bool:
    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.OperationalError:
        return False
    return True


def test_a_killed_sessions_server_is_stopped_and_deleted_and_a_live_ones_is_left_alone():
    live, live_url, live_folder = a_server_in_another_process()
    killed, killed_url, killed_folder = a_server_in_another_process()
    try:
        assert killed_folder.name.startswith(isolation.SERVER_FOLDER) and killed_folder != live_folder
        killed.send_signal(signal.SIGKILL)  # no cleanup runs: its server outlives it
        killed.wait(10)
        assert answers(killed_url)
        reaped = isolation.reap_abandoned_servers()
        assert killed_folder in reaped and not killed_folder.exists() and not answers(killed_url)
        assert live_folder not in reaped and answers(live_url)
    finally:
        live.terminate()  # SIGTERM skips the cleanup as well: reap what it left
        live.wait(10)
        isolation.reap_abandoned_servers()
    assert not live_folder.exists()
