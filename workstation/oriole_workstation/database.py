"""The local database: ``DATABASE_URL`` when set, else an embedded PostgreSQL (pgserver) kept in a data
folder of the project and reused between runs. Either way it is migrated and holds the maze set."""

from __future__ import annotations

import os
import signal
import time
import warnings
from pathlib import Path

import psycopg

from oriole.errors import OrioleError
from oriole.store import Store, db
from oriole_workstation.results import Results

CONNECT_TIMEOUT_SECONDS = 10  # unless the URL sets connect_timeout: a server that never answers is given up


class DatabaseUnavailable(OrioleError):
    """The database a URL names cannot be reached, refuses the connection, or is not PostgreSQL."""


CHECKOUT = Path(__file__).resolve().parents[2]  # the repository, when running from a checkout


def home() -> Path:
    """Where local state lives (the embedded database, local prompt versions): ``ORIOLE_HOME`` when set;
    else ``.oriole`` in the repository when running from a checkout; else ``~/.oriole``."""
    if os.environ.get("ORIOLE_HOME"):
        path = Path(os.environ["ORIOLE_HOME"])
    elif (CHECKOUT / "pyproject.toml").is_file() and (CHECKOUT / "lambdas" / "oriole").is_dir():
        path = CHECKOUT / ".oriole"
    else:
        path = Path.home() / ".oriole"
    path.mkdir(parents=True, exist_ok=True)
    return path


def embedded_url(data_dir: Path | None = None) -> str:
    """Start (or reuse) the embedded server; it keeps running after this process so the next run is fast."""
    with warnings.catch_warnings():  # pgserver asks platformdirs for a runtime dir that containers lack
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver

        server = pgserver.get_server(data_dir or home() / "pgdata", cleanup_mode=None)
    return server.get_uri()


STOP_SECONDS = 30


def stop_embedded(data_dir: Path | None = None) -> bool:
    """Stop the embedded server of ``data_dir`` (default: the state folder's) if it runs, as ``pg_ctl stop -m
    fast`` does (SIGINT to the postmaster named by ``postmaster.pid``: sessions end, nothing is lost), and wait
    for it to go; True when it ran. The signal, not pg_ctl: pgserver may run the server as another system user."""
    pid_file = (data_dir or home() / "pgdata") / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().split("\n", 1)[0])
        os.kill(pid, signal.SIGINT)
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return False
    deadline = time.monotonic() + STOP_SECONDS
    while pid_file.exists():
        if time.monotonic() > deadline:
            raise OrioleError(
                f"the embedded server (pid {pid}) is still running {STOP_SECONDS} s after it was "
                "asked to stop; see its log in the pgdata folder"
            )
        time.sleep(0.1)
    return True


def local_url() -> str:
    return os.environ.get("DATABASE_URL") or embedded_url()


def connect(url: str) -> db.Connection:
    """A connection to the database at ``url``; ``DatabaseUnavailable`` in one line (never the password) when
    the URL is not a PostgreSQL URL, or the server cannot be reached, refuses, or does not speak PostgreSQL."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.Error:  # its message quotes the URL, password and all
        raise DatabaseUnavailable(
            "DATABASE_URL is not a PostgreSQL connection URL; expected postgresql://USER:PASSWORD@HOST:PORT/DBNAME"
        ) from None
    where = f"{info.get('host') or 'localhost'}:{info.get('port') or 5432}/{info.get('dbname') or ''}"
    try:
        return db.connect(
            psycopg.conninfo.make_conninfo(url, connect_timeout=info.get("connect_timeout") or CONNECT_TIMEOUT_SECONDS)
        )
    except psycopg.Error as error:
        said = " ".join(str(error).split())
        if password := info.get("password"):
            said = said.replace(str(password), "***")
        raise DatabaseUnavailable(
            f"cannot use the database at {where}: {said}; is it a running PostgreSQL server, and is DATABASE_URL right?"
        ) from None


def prepare(url: str) -> Store:
    """Migrate the database, load the maze set and the catalog's configuration keys (all idempotent); returns a
    store on it."""
    store = Store(connect(url))
    store.prepare()
    return store


def results_url(aws: bool) -> str:
    """The database the analysis commands (report, render, sweep) use.

    Locally: the local database. With ``aws``: the deployed database, which ``DATABASE_URL`` must point
    at (from your machine, through a tunnel into its VPC).
    """
    if not aws:
        return local_url()
    url = os.environ.get("DATABASE_URL")
    if not url:
        raise OrioleError(
            "--aws reads the deployed database: set DATABASE_URL to it (the OrioleData stack's "
            "DatabaseSecretArn output holds the credentials; connect through a tunnel into its VPC)"
        )
    return url


def open_results(aws: bool) -> Results:
    """The results on ``results_url(aws)``: the local database is migrated first, the deployed one is migrated
    on deploy."""
    url = results_url(aws)
    return Results(connect(url) if aws else prepare(url).conn)  # locally, on the connection that migrated it
