"""The store's connection: every concern of the store (``schema``, ``mazes``, ``experiments``, ``turns``,
``sweeps``) sends its statements through ``StoreBase._execute``.

With ``reconnect`` (the handlers' store), a statement that fails because the connection was dropped (a database
restart, a failover, an idle connection closed by the server) is sent once more on the connection ``reconnect``
returns. That is safe for every statement sent through ``_execute``: reads, the keyed experiment insert, and
writes guarded so that a second run changes nothing; in particular a turn whose commit reached the database but
whose answer was lost is found committed on the retry.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg


class StoreBase:
    """One psycopg connection (autocommit, dict rows), replaced once when a statement finds it dropped."""

    def __init__(self, conn: psycopg.Connection, reconnect: Callable[[], psycopg.Connection] | None = None):
        self.conn = conn
        self._reconnect = reconnect

    def _execute(self, query: str, params=None) -> psycopg.Cursor:
        try:
            return self.conn.execute(query, params)
        except psycopg.OperationalError:
            if self._reconnect is None or not self.conn.broken:
                raise  # a cancelled query or a server error: the connection is fine, sending again cannot help
            self.conn = self._reconnect()
            return self.conn.execute(query, params)
