"""What keeps a test session's files and servers its own, whatever runs beside it: the xdist workers of the same
session, or another suite started by someone else on the same machine.

How a suite used to lose its database mid-run: the embedded PostgreSQL lived under pytest's temporary folder, and
pytest empties a folder given as ``--basetemp`` when a session starts with it, so a second suite given the same
folder (the usual ``PYTEST_ADDOPTS`` of one person running ``make test`` and ``make test-unit`` at once) deleted the
first one's data directory, and with it the server's socket: every later connection failed. pytest's own numbered
folders (``/tmp/pytest-of-<user>/pytest-N``, three kept) are safe from the rotation while their session holds them,
but as root pgserver runs the server as the system user ``pgserver``, and each new session sets ``pytest-of-root``
back to mode 0700: a server started, or stopped by ``pg_ctl``, in that window cannot reach its own folder.

So: each process's embedded server lives in a folder of its own from ``tempfile.mkdtemp`` that nothing but its
fixture deletes (``embedded_server``); a ``--basetemp`` already in use by a running session is refused before
pytest empties it (``claim_basetemp``); and the few tests marked ``serial`` run while no other test of the
session runs (``RunApart``).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1...: this process is an xdist worker
SHARED: list[Path] = []  # a worker's: the folder its session's workers share (set as the worker is configured)


def claim_basetemp(folder: str) -> int:
    """Claim a folder given as ``--basetemp`` for this session, or refuse it when a running session holds it
    (pytest empties that folder as it starts: the other session's files would go), naming the folder. The claim
    is a lock on ``<folder>.lock`` beside it, held by the returned descriptor until it is closed or this process
    ends, however it ends."""
    lock = Path(folder).resolve().with_name(Path(folder).name + ".lock")
    try:
        return _lock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise pytest.UsageError(
            f"--basetemp {folder} is in use by another test session, and pytest would empty it: give this session "
            "a folder of its own, or leave --basetemp out (pytest then numbers a fresh folder)"
        ) from None


SERVER_FOLDER = "oriole-test-pg-"  # the prefix of each process's server folder in the system's temporary folder


@contextmanager
def embedded_server() -> Iterator[str]:
    """An embedded PostgreSQL of this process, in a fresh folder outside pytest's temporary tree, stopped and
    deleted when the block ends. The process holds a lock on the folder's ``owner.lock`` while it lives: a
    process that dies before its cleanup (a crash, SIGKILL, SIGTERM) leaves a folder nobody holds, and the next
    session stops that server and deletes it (``reap_abandoned_servers``)."""
    reap_abandoned_servers()
    folder = Path(tempfile.mkdtemp(prefix=SERVER_FOLDER))
    owner = _lock(folder / "owner.new", fcntl.LOCK_EX)
    os.rename(folder / "owner.new", folder / "owner.lock")  # it appears locked: no reaper takes it for abandoned
    with warnings.catch_warnings():  # pgserver asks platformdirs for a runtime dir that containers lack
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver

        server = pgserver.get_server(folder / "data", cleanup_mode="delete")
    try:
        _disposable(server.get_uri())
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)
        os.close(owner)


def _disposable(url: str) -> None:
    """The test server writes without waiting for the disk (no fsync, no full pages, commits not awaited): what it
    holds is thrown away with it, and on a machine whose disk other suites keep busy, each commit's flush and the
    stop's checkpoint were the wait (a session's stop once took minutes). The project's own servers keep their
    durability: a test of a committed turn surviving a crash would need a crash, which no test makes."""
    with psycopg.connect(url, autocommit=True) as conn:
        for setting in ("fsync", "full_page_writes", "synchronous_commit"):
            conn.execute(f"ALTER SYSTEM SET {setting} = off")
        conn.execute("SELECT pg_reload_conf()")


def reap_abandoned_servers() -> list[Path]:
    """Stop the server of each test-server folder whose owning process is gone, and delete the folder; a folder
    still being made (no ``owner.lock`` yet) or held by a live process is left alone. The folders reaped."""
    from oriole_workstation.database import stop_embedded

    reaped = []
    for folder in Path(tempfile.gettempdir()).glob(SERVER_FOLDER + "*"):
        try:
            owner = _lock(folder / "owner.lock", fcntl.LOCK_EX | fcntl.LOCK_NB, create=False)
        except (FileNotFoundError, BlockingIOError):
            continue
        try:
            stop_embedded(folder / "data")
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(owner)
        reaped.append(folder)
    return reaped


def _lock(path: Path, operation: int, create: bool = True) -> int:
    """An open descriptor of ``path`` holding ``flock(operation)``; the lock ends when it is closed or the process
    ends."""
    descriptor = os.open(path, os.O_RDWR | (os.O_CREAT if create else 0), 0o600)
    try:
        fcntl.flock(descriptor, operation)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def shared_once(name: str, make: Callable[[], Any]) -> Any:
    """What ``make`` returns (JSON), made once for the session: under xdist the first worker to ask makes it and
    writes it to ``name`` in the workers' shared folder, and the others wait for it and read it."""
    if not SHARED:
        return make()
    path = SHARED[0] / name
    descriptor = _lock(path.with_suffix(".lock"), fcntl.LOCK_EX)
    try:
        if not path.exists():
            path.write_text(json.dumps(make()))
        return json.loads(path.read_text())
    finally:
        os.close(descriptor)


class RunApart:
    """A readers-writer lock over the session's workers, on two files of the session's shared folder: every test
    holds the gate shared, a ``serial`` test holds it alone, so it starts once the running tests end and none
    starts beside it. A waiting serial test holds the turnstile, which each test passes on its way in, so a
    stream of ordinary tests cannot starve it."""

    def __init__(self, folder: Path):
        self.gate = os.open(folder / "run-apart.lock", os.O_RDWR | os.O_CREAT, 0o600)
        self.turnstile = os.open(folder / "run-apart-turnstile.lock", os.O_RDWR | os.O_CREAT, 0o600)

    @contextmanager
    def holding(self, alone: bool) -> Iterator[None]:
        self.enter(alone)
        try:
            yield
        finally:
            self.leave(alone)

    def enter(self, alone: bool) -> None:
        """Wait for the gate: shared, or alone (holding the turnstile until ``leave``)."""
        fcntl.flock(self.turnstile, fcntl.LOCK_EX)
        try:
            fcntl.flock(self.gate, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            if not alone:
                fcntl.flock(self.turnstile, fcntl.LOCK_UN)

    def leave(self, alone: bool) -> None:
        fcntl.flock(self.gate, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(self.turnstile, fcntl.LOCK_UN)
