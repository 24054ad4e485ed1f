"""The database connection: one per warm container, opened lazily, replaced when it was closed.

Every statement goes through a counting cursor, so the benchmark can report database round trips
per turn from the connection itself rather than from an estimate.
"""

from __future__ import annotations

import os
import threading

import psycopg
from psycopg.rows import dict_row

_lock = threading.Lock()
_connection: psycopg.Connection | None = None
_statements = 0


class CountingCursor(psycopg.Cursor):
    """A cursor that counts the statements it sends (each one is one round trip in autocommit mode)."""

    def execute(self, *args, **kwargs):
        global _statements
        _statements += 1
        return super().execute(*args, **kwargs)


def statement_count() -> int:
    """Statements sent through connections of this process since it started."""
    return _statements


def database_url() -> str:
    url = os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("DATABASE_URL is not set: point it at the experiments database")
    return url


def connect(url: str | None = None) -> psycopg.Connection:
    """A new autocommit connection returning rows as dicts; each statement is its own transaction."""
    return psycopg.connect(url or database_url(), autocommit=True, row_factory=dict_row,
                           cursor_factory=CountingCursor)


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
