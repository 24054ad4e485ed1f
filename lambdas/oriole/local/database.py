"""The local database: ``DATABASE_URL`` when set, else an embedded PostgreSQL (pgserver) kept in a data
folder of the project and reused between runs. Either way it is migrated and holds the maze set."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from oriole import db, mazeset
from oriole.store import Store


def home() -> Path:
    """Where local state lives: ``ORIOLE_HOME``, else ``.oriole`` in the repository."""
    path = Path(os.environ.get("ORIOLE_HOME") or Path(__file__).resolve().parents[3] / ".oriole")
    path.mkdir(parents=True, exist_ok=True)
    return path


def embedded_url(data_dir: Path | None = None) -> str:
    """Start (or reuse) the embedded server; it keeps running after this process so the next run is fast."""
    with warnings.catch_warnings():  # pgserver asks platformdirs for a runtime dir that containers lack
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver

        server = pgserver.get_server(data_dir or home() / "pgdata", cleanup_mode=None)
    return server.get_uri()


def local_url() -> str:
    return os.environ.get("DATABASE_URL") or embedded_url()


def prepare(url: str) -> Store:
    """Migrate the database and load the maze set (both idempotent); returns a store on it."""
    store = Store(db.connect(url))
    store.apply_migrations()
    store.load_mazes(mazeset.maze_set())
    return store
