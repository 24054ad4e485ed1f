"""The viewer's database access: one connection in the read-only role, shared by the requests one at a time.

``oriole view`` never writes: its connection takes the role ``oriole_reader`` (migration 0007: SELECT on the tables
and views, every transaction read-only) whichever login opened it, so a page can only read. Locally the login is
the embedded server's owner, which may take any role; on AWS it is ``oriole_reader`` itself, through the documented
port forward (``docs/how-to/query-deployed-database.md``). A login that cannot take the role is refused at start,
with what to do. A connection that dropped (a port forward closed) is opened again on the next request.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from oriole.errors import OrioleError
from oriole.store import db
from oriole_workstation import database
from oriole_workstation.results import Results

READER = "oriole_reader"


class ReaderRefused(OrioleError):
    """The login cannot read through the read-only role."""


def connect_reader(url: str) -> db.Connection:
    """A connection to ``url`` acting as ``oriole_reader``, read-only."""
    conn = database.connect(url)
    try:
        conn.execute(f"SET ROLE {READER}")
        conn.execute("SET default_transaction_read_only = on")
    except psycopg.Error as error:
        conn.close()
        raise ReaderRefused(
            f"oriole view reads through the read-only role {READER}, which this login cannot take "
            f"({' '.join(str(error).split())}); connect as {READER}: DATABASE_URL=postgresql://{READER}:PASSWORD@"
            "HOST:PORT/DBNAME (its password is the ReaderSecretArn output)"
        ) from None
    return conn


class Reader:
    """The viewer's one read-only connection, lent to one request at a time (a single user's browser: requests
    are short, and one connection is all a port forward needs)."""

    def __init__(self, url: str):
        self.url = url
        self._lock = threading.Lock()
        self._conn: db.Connection | None = None

    def open(self) -> None:
        """Connect now, so that a refused role or an unreachable server stops ``oriole view`` before it serves."""
        with self.results():
            pass

    @contextmanager
    def results(self) -> Iterator[Results]:
        with self._lock:
            if self._conn is None or self._conn.closed or self._conn.broken:
                self._conn = connect_reader(self.url)
            try:
                yield Results(self._conn)
            except psycopg.OperationalError:
                self._conn.close()  # dropped mid-request: the next request connects again
                raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
