"""The database connection: one per warm container, opened lazily, replaced when it was closed.

On AWS the functions connect through RDS Proxy (``ORIOLE_DATABASE_HOST``, read by ``oriole.environment``), which
multiplexes every warm container's connection onto a bounded pool of server connections. The proxy's TLS
certificate is verified (``sslmode=verify-full``) against the trust anchors shipped in ``oriole/certs``
(``ORIOLE_DATABASE_CA`` names the file), and prepared statements are off (``prepare_threshold=None``): a prepared
statement would pin a client to one server connection and defeat the pool. A connection refused because the server
(or the proxy) has no slot left is retried a few times with backoff, then reported as ``DatabaseBusy``, which the
state machine retries.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import psycopg
from psycopg.rows import DictRow, dict_row

from oriole.environment import Environment
from oriole.errors import DatabaseBusy, DatabaseNotConfigured
from oriole.text import JsonObject

# What PostgreSQL and RDS Proxy say when no connection slot is left.
BUSY = (
    "too many connections",
    "remaining connection slots are reserved",
    "timed-out waiting to acquire database connection",
)
CONNECT_ATTEMPTS = 5
CONNECT_BACKOFF_SECONDS = 0.5
# The migrations run right after CloudFormation created the database and its proxy: their first connection
# waits this long (with backoff, at most MAX_BACKOFF_SECONDS between attempts) for a database still starting.
FIRST_CONNECTION_SECONDS = 120
MAX_BACKOFF_SECONDS = 15

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
    """A new autocommit connection returning rows as dicts; each statement is its own transaction. Through a
    proxy (on AWS) no statement is ever prepared."""
    conn = psycopg.Connection.connect(url or database_url(), autocommit=True, row_factory=dict_row)
    if Environment.read().database_host:
        conn.prepare_threshold = None
    return conn


def is_busy(err: psycopg.OperationalError) -> bool:
    message = str(err).lower()
    return any(sign in message for sign in BUSY)


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
    budget_seconds: float = FIRST_CONNECTION_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> Connection:
    """``connect`` for the migrations: a refused connection (the instance still starting, the proxy's target not
    yet available, no free slot) is tried again with exponential backoff until ``budget_seconds`` are spent;
    then the last error is raised, which fails the deploy with the reason."""
    deadline, delay = clock() + budget_seconds, 1.0
    while True:
        try:
            return connect()
        except psycopg.OperationalError as err:
            if clock() + delay > deadline:
                raise
            log.warning(
                "the database refused the connection; trying again", extra={"error": str(err), "waitSeconds": delay}
            )
            sleep(delay)
            delay = min(2 * delay, MAX_BACKOFF_SECONDS)


def current() -> Connection | None:
    """The container's shared connection if one is open (never opens one)."""
    return _connection


def connection() -> Connection:
    """The container's shared connection, reconnected if it was closed or broken since the last use."""
    global _connection
    with _lock:
        if _connection is None or _connection.closed or _connection.broken:
            _connection = connect_when_free()
        return _connection


def reset() -> None:
    """Close the shared connection (the next call to ``connection`` opens a new one)."""
    global _connection
    with _lock:
        if _connection is not None:
            _connection.close()
        _connection = None
