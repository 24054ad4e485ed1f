"""How a local runner shows it is alive: it holds each execution it runs with a PostgreSQL session advisory
lock (``Results.hold``), and ``oriole doctor`` treats an open experiment of a local execution that no session
holds as abandoned.

Two gaps would let ``oriole doctor --fix`` close a live run, and both are closed here:

- the moment between the experiment row's creation and the lock: the lock is keyed on the execution's ARN,
  which exists before the row, and is taken before StartExperiment runs;
- a dropped lock connection (a database restart, ``pg_terminate_backend``, an idle timeout): a watcher
  notices within ``WATCH_SECONDS``, reconnects and takes every lock again, and ``oriole doctor`` only judges
  an experiment abandoned when it is still unheld ``LOCK_GRACE_SECONDS`` later.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from functools import partial

import psycopg

from oriole.store import db
from oriole_workstation.results import Results

WATCH_SECONDS = 0.25
LOCK_GRACE_SECONDS = 1.0  # several watch intervals: time for a runner to notice a drop and lock again


class RunLocks:
    """The executions this process runs, each held until its experiment is closed or the process ends."""

    def __init__(self, url: str):
        self._url = url
        self._guard = threading.Lock()
        self._held: dict[str, int | None] = {}  # execution ARN -> its experiment (None until it started)
        self._results = Results(db.connect(url))
        self._stop = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="oriole-run-locks", daemon=True)
        self._watcher.start()

    def hold(self, execution_arn: str) -> None:
        """Hold an execution before its StartExperiment runs."""
        with self._guard:
            self._held.setdefault(execution_arn, None)
            self._send(lambda results: results.hold(execution_arn))

    def started(self, execution_arn: str, experiment_id: int) -> None:
        """Note which experiment a held execution runs (its own, or the one it carries on)."""
        with self._guard:
            self._held[execution_arn] = experiment_id

    def let_go(self, experiment_id: int) -> None:
        """Release every execution of a closed experiment."""
        with self._guard:
            arns = [arn for arn, held in self._held.items() if held == experiment_id]
            for arn in arns:
                del self._held[arn]
                self._send(partial(Results.let_go, execution_arn=arn))

    def close(self) -> None:
        self._stop.set()
        self._watcher.join()
        self._results.conn.close()

    def _send(self, action: Callable[[Results], None]) -> None:
        """Run ``action`` on the lock connection; on a dropped one, reconnect (which takes every lock again)."""
        try:
            action(self._results)
        except psycopg.OperationalError:
            self._reconnect()

    def _reconnect(self) -> None:
        self._results.conn.close()
        self._results = Results(db.connect(self._url))
        for arn in self._held:
            self._results.hold(arn)

    def _watch(self) -> None:
        while not self._stop.wait(WATCH_SECONDS):
            with self._guard, contextlib.suppress(psycopg.OperationalError):  # the database is away: next look
                self._send(Results.ping)
