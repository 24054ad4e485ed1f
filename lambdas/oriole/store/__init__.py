"""The runtime's SQL, one module per concern: ``schema`` (migrations, views, logins, configuration keys),
``mazes``, ``experiments``, ``turns`` (the turn path: one read, one write) and ``sweeps`` (a sweep's
bookkeeping), over one connection (``base``, ``db``). ``Store`` is all of them on one connection.

The researcher's reads (reports, pictures) are the workstation's (``oriole_workstation.results``) and never
ship to Lambda.
"""

from __future__ import annotations

import functools

from oriole import catalog, provider_registry
from oriole.core import mazeset
from oriole.store import db
from oriole.store.experiments import Experiments
from oriole.store.mazes import Mazes
from oriole.store.schema import Schema
from oriole.store.sweeps import Sweeps
from oriole.store.turns import Turns
from oriole.text import JsonObject


class Store(Schema, Mazes, Experiments, Turns, Sweeps):
    """The data-access layer over one psycopg connection (``StoreBase``: autocommit, dict rows, one reconnect)."""

    def prepare(self) -> JsonObject:
        """What a deploy (the migration trigger) and every local run do before the first experiment, all of it
        idempotent: migrate, load the shipped maze set (checked against the code; generated only when the database
        does not already store it as the code pins it: every CLI command opens the database this way), the registry's
        providers and the catalog's configuration keys. Returns the migrations applied and how many mazes were new."""
        applied = self.apply_migrations()
        new_mazes = 0 if self.holds_maze_set() else self.load_mazes(mazeset.maze_set())
        self.load_providers(provider_registry.PROVIDERS.values())
        self.load_catalog(catalog.CATALOG)
        return {"applied": applied, "newMazes": new_mazes}


def shared_store(invocation: db.Invocation | None = None) -> Store:
    """The store the handlers use: the warm container's connection, replaced once by a fresh one when a statement
    finds it dropped; on AWS each connect waits for the database within the invocation's budget (``db``)."""
    return Store(db.connection(invocation), reconnect=functools.partial(db.connection, invocation))
