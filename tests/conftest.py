"""Shared fixtures: a real PostgreSQL (``DATABASE_URL`` when set, else an embedded pgserver) with a
fresh database per test session, migrated and holding the maze set. Every AWS call a function's handler makes
is recorded from here on (``tests.aws_calls``; the integration tests hold the calls to the IAM contract)."""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from psycopg import sql

from tests import aws_calls

aws_calls.install()  # before any boto3 client exists: the hook joins botocore's built-in handlers


@pytest.fixture(scope="session")
def server_url(tmp_path_factory) -> str:
    """A URL of a PostgreSQL server the tests may create databases on."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR")
        import pgserver

        server = pgserver.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="delete")
    return server.get_uri()


def _with_database(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@contextmanager
def scratch_database(server: str) -> Iterator[str]:
    """Create an empty database for the duration of the block and drop it afterwards."""
    name = f"oriole_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield _with_database(server, name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture
def empty_database(server_url) -> Iterator[str]:
    with scratch_database(server_url) as url:
        yield url


@pytest.fixture(scope="session")
def database_url(server_url) -> Iterator[str]:
    """A migrated database with the maze set, shared by the tests of the session."""
    from oriole_workstation.database import prepare

    with scratch_database(server_url) as url:
        prepare(url).conn.close()
        yield url


@pytest.fixture
def store(database_url):
    from oriole.store import Store, db

    conn = db.connect(database_url)
    yield Store(conn)
    conn.close()
