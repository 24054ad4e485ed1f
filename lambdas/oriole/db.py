"""The database connection: one per warm container, opened lazily, replaced when it was closed."""

from __future__ import annotations

import os
import threading

import psycopg
from psycopg.rows import dict_row

from oriole.errors import DatabaseNotConfigured

_lock = threading.Lock()
_connection: psycopg.Connection | None = None


def database_url() -> str:
    """``DATABASE_URL`` when set (local runs, tests); on AWS, the RDS secret named by ``DATABASE_SECRET_ARN``,
    with TLS required."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    secret_arn = os.environ.get("DATABASE_SECRET_ARN")
    if not secret_arn:
        raise DatabaseNotConfigured("neither DATABASE_URL nor DATABASE_SECRET_ARN is set: cannot find the "
                                    "experiments database")
    from aws_lambda_powertools.utilities import parameters

    secret = parameters.get_secret(secret_arn, transform="json", max_age=300)
    return psycopg.conninfo.make_conninfo(host=secret["host"], port=secret.get("port", 5432),
                                          dbname=secret.get("dbname", "oriole"), user=secret["username"],
                                          password=secret["password"], sslmode="require", connect_timeout=10)


def connect(url: str | None = None) -> psycopg.Connection:
    """A new autocommit connection returning rows as dicts; each statement is its own transaction."""
    return psycopg.Connection.connect(url or database_url(), autocommit=True, row_factory=dict_row)


def current() -> psycopg.Connection | None:
    """The container's shared connection if one is open (never opens one)."""
    return _connection


def connection() -> psycopg.Connection:
    """The container's shared connection, reconnected if it was closed or broken since the last use."""
    global _connection
    with _lock:
        if _connection is None or _connection.closed or _connection.broken:
            _connection = connect()
        return _connection


def reset() -> None:
    """Close the shared connection (the next call to ``connection`` opens a new one)."""
    global _connection
    with _lock:
        if _connection is not None:
            _connection.close()
        _connection = None
