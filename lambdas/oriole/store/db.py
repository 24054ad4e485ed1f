"""The database connection: one per warm container, opened lazily, replaced when it was closed.

On AWS the standard profile's functions connect through RDS Proxy (``ORIOLE_DATABASE_HOST``, read by
``oriole.environment``), which multiplexes every warm container's connection onto a bounded pool of server
connections. The proxy's TLS certificate is verified (``sslmode=verify-full``) against the trust anchors shipped in
``oriole/certs`` (``ORIOLE_DATABASE_CA`` names the file), and prepared statements are off
(``prepare_threshold=None``): a prepared statement would pin a client to one server connection and defeat the pool.

Connect budget: a deployed function (CDK sets ``ORIOLE_CONNECT_PATIENCE_SECONDS``) waits for a database that does
not answer yet (the lean profile's Aurora resuming from a pause, about 15 seconds, longer after a long pause; a
proxy whose target is still starting; no free connection slot) with backoff, for at most that long and never past
its invocation's remaining time less ``CONNECT_RESERVE_SECONDS`` (``connection(invocation)``); the migrations keep
back what migrating takes (``handlers.migrate``). Then a full database is ``DatabaseBusy``, anything else the last
error, both of which the state machine retries. A refusal that waiting cannot mend (a wrong password, an unknown
role or database) is raised at once. Locally (no patience set) a full database is retried a few times and anything
else raised at once: the embedded server is up or it is not.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Protocol

import psycopg
from psycopg.rows import DictRow, dict_row

from oriole.environment import Environment
from oriole.errors import DatabaseBusy, DatabaseNotConfigured
from oriole.store.json_values import read_json_with_loads
from oriole.text import JsonObject

# What PostgreSQL and RDS Proxy say when no connection slot is left.
BUSY = (
    "too many connections",
    "remaining connection slots are reserved",
    "timed-out waiting to acquire database connection",
)
# What no wait mends: the server answered, and refused these credentials or this database.
PERMANENT = ("password authentication failed", "does not exist", "no pg_hba.conf entry")
CONNECT_ATTEMPTS = 5
CONNECT_BACKOFF_SECONDS = 0.5
CONNECT_RESERVE_SECONDS = 15  # of an invocation, kept for the work after connecting
MAX_BACKOFF_SECONDS = 15
CLOSE_PATIENCE_SECONDS = 5  # for another thread's statement to end before the shared connection is closed

log = logging.getLogger(__name__)  # a child of the handlers' Powertools logger "oriole"
Connection = psycopg.Connection[DictRow]  # autocommit, rows as dicts (the store's statements name their own)
_lock = threading.Lock()
_connection: Connection | None = None


def ca_file(name: str) -> Path:
    """A trust-anchor bundle shipped with the runtime package."""
    return Path(str(resources.files("oriole.certs").joinpath(name)))


def secret_conninfo(secret: JsonObject, env: Environment | None = None) -> str:
    """The connection string of an RDS secret (host, port, username, password, dbname) as deployed: through
    the proxy when there is one, with the server verified when a CA bundle is named, else TLS required."""
    env = env or Environment.read()
    tls = {"sslmode": "require"}
    if env.database_ca:
        tls = {"sslmode": "verify-full", "sslrootcert": str(ca_file(env.database_ca))}
    return psycopg.conninfo.make_conninfo(
        host=env.database_host or secret["host"],
        port=secret.get("port", 5432),
        dbname=secret.get("dbname", "oriole"),
        user=secret["username"],
        password=secret["password"],
        connect_timeout=10,
        **tls,
    )


def database_url() -> str:
    """``DATABASE_URL`` when set (local runs, tests); on AWS, from the secret named by ``DATABASE_SECRET_ARN``
    (the application role's for the flow, the owner's for the migrations)."""
    env = Environment.read()
    if env.database_url:
        return env.database_url
    secret_arn = env.database_secret_arn
    if not secret_arn:
        raise DatabaseNotConfigured(
            "neither DATABASE_URL nor DATABASE_SECRET_ARN is set: cannot find the experiments database"
        )
    from aws_lambda_powertools.utilities import parameters

    return secret_conninfo(parameters.get_secret(secret_arn, transform="json", max_age=300))


def connect(url: str | None = None) -> Connection:
    """A new autocommit connection returning rows as dicts; each statement is its own transaction; JSON values
    decoded as ``json.loads`` decodes them, in less time (``json_values``). Through a proxy (on AWS) no statement is
    ever prepared."""
    conn = psycopg.Connection.connect(url or database_url(), autocommit=True, row_factory=dict_row)
    read_json_with_loads(conn)
    if Environment.read().database_host:
        conn.prepare_threshold = None
    return conn


def is_busy(err: psycopg.OperationalError) -> bool:
    message = str(err).lower()
    return any(sign in message for sign in BUSY)


def is_permanent(err: psycopg.OperationalError) -> bool:
    message = str(err).lower()
    return any(sign in message for sign in PERMANENT)


class Invocation(Protocol):
    """What the connect budget reads of a Lambda context."""

    def get_remaining_time_in_millis(self) -> int: ...


def connect_when_free(sleep: Callable[[float], None] = time.sleep) -> Connection:
    """``connect``, waiting with backoff and full jitter while the database has no free connection slot;
    ``DatabaseBusy`` when it still has none."""
    attempt = 0
    while True:
        try:
            return connect()
        except psycopg.OperationalError as err:
            attempt += 1
            if not is_busy(err):
                raise
            if attempt == CONNECT_ATTEMPTS:
                raise DatabaseBusy(f"no database connection slot after {attempt} attempts: {err}") from None
            log.warning("no free database connection slot; waiting", extra={"attempt": attempt})
            sleep(random.uniform(0, CONNECT_BACKOFF_SECONDS * 2**attempt))


def connect_patiently(
    budget_seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Connection:
    """``connect``, tried again with exponential backoff (at most ``MAX_BACKOFF_SECONDS`` apart) while the database
    does not answer (still starting, resuming from a pause, the proxy's target not yet available, no free slot),
    until ``budget_seconds`` are spent; then ``DatabaseBusy`` for a full database, else the last error. A refusal no
    wait mends (``PERMANENT``) is raised at once."""
    deadline, delay = clock() + budget_seconds, 1.0
    while True:
        try:
            return connect()
        except psycopg.OperationalError as err:
            if is_permanent(err):
                raise
            if clock() + delay > deadline:
                if is_busy(err):
                    raise DatabaseBusy(f"no database connection slot within {budget_seconds:.0f} s: {err}") from None
                raise
            log.warning("the database did not answer; trying again", extra={"error": str(err), "waitSeconds": delay})
            sleep(delay)
            delay = min(2 * delay, MAX_BACKOFF_SECONDS)


def connect_within(
    invocation: Invocation | None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Connection:
    """The connection a task opens: on AWS patiently, within its connect budget (see the module docstring);
    locally, or without an invocation to budget, ``connect_when_free``."""
    patience = Environment.read().connect_patience_seconds
    if invocation is None or patience is None:
        return connect_when_free(sleep)
    remaining = invocation.get_remaining_time_in_millis() / 1000 - CONNECT_RESERVE_SECONDS
    return connect_patiently(max(0.0, min(patience, remaining)), sleep, clock)


def current() -> Connection | None:
    """The container's shared connection if one is open (never opens one)."""
    return _connection


def connection(invocation: Invocation | None = None) -> Connection:
    """The container's shared connection, reconnected (within ``invocation``'s connect budget) if it was closed or
    broken since the last use."""
    global _connection
    with _lock:
        if _connection is None or _connection.closed or _connection.broken:
            _connection = connect_within(invocation)
        return _connection


def reset() -> None:
    """Close the shared connection (the next call to ``connection`` opens a new one), once no statement of another
    thread is on it: psycopg's ``close`` does not wait for one (its statements hold ``Connection.lock``, its close
    does not), and libpq's connection freed under a statement corrupted the heap of a sweep left by a second Ctrl-C
    ("corrupted double-linked list", SIGABRT) while its executions' threads still wrote their turns. A statement
    still going after ``CLOSE_PATIENCE_SECONDS`` is cancelled first; the thread that sent it gets an error, as it
    would from a closed connection."""
    global _connection
    with _lock:
        if _connection is not None:
            _close_when_idle(_connection)
        _connection = None


def _close_when_idle(conn: Connection) -> None:
    if not conn.lock.acquire(timeout=CLOSE_PATIENCE_SECONDS):
        conn.cancel_safe()
        conn.lock.acquire()
    try:
        conn.close()
    finally:
        conn.lock.release()
