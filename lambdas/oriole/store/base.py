"""The store's connection: every concern of the store (``schema``, ``mazes``, ``experiments``, ``turns``,
``sweeps``) sends its statements through ``StoreBase``, and reads each statement's rows as the type it declares
(psycopg's row factories: ``class_row`` into a dataclass, ``scalar_row`` for one value), never as dicts.

With ``reconnect`` (the handlers' store), a statement that fails because the connection was dropped (a database
restart, a failover, an idle connection closed by the server) is sent once more on the connection ``reconnect``
returns. That is safe for every statement sent through ``_rows``: reads, the keyed experiment insert, and
writes guarded so that a second run changes nothing; in particular a turn whose commit reached the database but
whose answer was lost is found committed on the retry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import RowFactory

Row = TypeVar("Row")
Params = Mapping[str, Any] | Sequence[Any] | None
Query = str | sql.SQL | sql.Composed
Connect = Callable[[], "psycopg.Connection[Any]"]


def compact(statement: str) -> str:
    """``statement`` without its indentation and its comment lines, one clause a line as written. psycopg parses a
    statement's ``%(name)s`` placeholders on every execution unless the statement is at most 4,096 characters (and
    its parameters 50), when it remembers the parse: the turn's commit, indented and commented for its readers, was
    over that and parsed anew on every turn. Safe for statements without multi-line string literals (none has one)."""
    lines = (line.strip() for line in statement.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("--"))


class StoreBase:
    """One psycopg connection (autocommit), replaced once when a statement finds it dropped. The connection's own
    row factory is never used: each statement names the type of its rows."""

    def __init__(self, conn: psycopg.Connection[Any], reconnect: Connect | None = None):
        self.conn = conn
        self._reconnect = reconnect

    def _rows(self, rows: RowFactory[Row], query: Query, params: Params = None) -> psycopg.Cursor[Row]:
        """Send ``query``; its rows come back as ``rows`` makes them."""
        try:
            return self.conn.cursor(row_factory=rows).execute(query, params)
        except psycopg.OperationalError:
            if self._reconnect is None or not self.conn.broken:
                raise  # a cancelled query or a server error: the connection is fine, sending again cannot help
            self.conn = self._reconnect()
            return self.conn.cursor(row_factory=rows).execute(query, params)

    def _one(self, rows: RowFactory[Row], query: Query, params: Params = None) -> Row | None:
        """The statement's first row, None when it has none."""
        return self._rows(rows, query, params).fetchone()

    def _all(self, rows: RowFactory[Row], query: Query, params: Params = None) -> list[Row]:
        return self._rows(rows, query, params).fetchall()
