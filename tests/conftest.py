"""Shared fixtures: a real PostgreSQL (``DATABASE_URL`` when set, else an embedded pgserver of this process: each
xdist worker starts its own) with a fresh database per test session, migrated and holding the maze set; local
state (``ORIOLE_HOME``) in a folder of the session's, never the checkout's or the researcher's. Every AWS call a
function's handler makes is recorded from here on (``tests.aws_calls``; the integration tests hold the calls to
the IAM contract). ``tests.isolation`` says what keeps two sessions, or two workers, out of each other's files."""

from __future__ import annotations

import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests import aws_calls, isolation

aws_calls.install()  # before any boto3 client exists: the hook joins botocore's built-in handlers


def _import_the_cli_with_a_live_width() -> None:
    """rich fixes a console's width to the COLUMNS it finds when the console is made, and the CLI makes its consoles
    as ``cli.common`` is imported: imported here, with COLUMNS unset, they read COLUMNS each time they print, so
    each test's invocation gets the width its environment asks for, whichever test of the process came first."""
    columns = os.environ.pop("COLUMNS", None)
    try:
        import oriole_workstation.cli.common  # noqa: F401
    finally:
        if columns is not None:
            os.environ["COLUMNS"] = columns


_import_the_cli_with_a_live_width()


RUN_APART = pytest.StashKey[isolation.RunApart]()
BASETEMP_CLAIM = pytest.StashKey[int]()
HELD_ALONE = pytest.StashKey[bool]()  # a serial test's: the serial test before it on this worker left the lock held


def _started_as_from_a_terminal() -> None:
    """A suite started in the background by a non-interactive shell (``make test &``) inherits SIGINT ignored, as
    POSIX has such a shell do, and so would every process it starts: an ``oriole view`` that a test stops with
    Ctrl-C then served on (test_viewer waited out 120 s in such runs, and passed in the foreground). The suite's
    processes start as a researcher's terminal starts them."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    _started_as_from_a_terminal()
    config.addinivalue_line("markers", "serial: runs while no other test of the session runs (xdist workers wait)")
    if config.option.basetemp and not isolation.WORKER:  # a worker's is a folder inside its session's own
        config.stash[BASETEMP_CLAIM] = isolation.claim_basetemp(config.option.basetemp)
    if isolation.WORKER:  # xdist gives each worker a folder inside the session's own: shared things live there
        isolation.SHARED.append(Path(config.option.basetemp).parent)
        config.stash[RUN_APART] = isolation.RunApart(isolation.SHARED[0])
    elif os.environ.get("DATABASE_URL") and getattr(config.option, "numprocesses", None):
        raise pytest.UsageError(
            "DATABASE_URL names one server, which parallel workers would share (its roles are the whole "
            "server's): unset it, and each worker starts an embedded server of its own, or run with -n 0"
        )


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` (``make test``) hands out files as ``tests.scheduling`` says: the infrastructure tier on
    one worker, the longest files first."""
    if config.getvalue("dist") == "loadfile":
        from tests.scheduling import LongestFilesFirst

        return LongestFilesFirst(config, log)
    return None


def pytest_unconfigure(config: pytest.Config) -> None:
    if BASETEMP_CLAIM in config.stash:
        os.close(config.stash[BASETEMP_CLAIM])


def _serial(item: pytest.Item | None) -> bool:
    return item is not None and item.get_closest_marker("serial") is not None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Under xdist, each test (its fixtures' setup and teardown included) holds the session's lock: shared, or
    alone when marked ``serial``. Serial tests that follow one another on a worker (a serial file's) hold it alone
    once, from the first one's start to the last one's end: taken again for each, every one of them would wait for
    the test the other workers had started meanwhile, while they wait in turn."""
    lock = item.config.stash.get(RUN_APART, None)
    if lock is None:
        return (yield)
    alone = _serial(item)
    if not (alone and item.stash.get(HELD_ALONE, False)):
        lock.enter(alone)
    keep = alone and _serial(nextitem)
    if keep:
        nextitem.stash[HELD_ALONE] = True
    try:
        return (yield)
    finally:
        if not keep:
            lock.leave(alone)


@pytest.fixture(autouse=True)
def warm_container_caches_start_cold() -> None:
    """A warm Lambda container serves one database, and the lifecycle keeps what it read there by key (each
    experiment's maze by its id, each sweep's cells by its file); a test process serves many (the session's,
    scratch ones, the replay corpus's), where experiment 3 of one is not experiment 3 of another: each test starts
    with those caches empty, whichever tests its process ran before."""
    from oriole.lifecycle import experiments, sweep_tasks

    experiments._MAZE_CACHE.clear()
    sweep_tasks._MATRICES.clear()


@pytest.fixture(scope="session", autouse=True)
def private_home(tmp_path_factory) -> Iterator[None]:
    """Local state of whatever the tests run (prompt versions, the prices file) in a folder of the session's."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ORIOLE_HOME", str(tmp_path_factory.mktemp("oriole-home")))
        yield


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """A URL of a PostgreSQL server the tests may create databases on."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    with isolation.embedded_server() as url:
        yield url


def _with_database(url: str, name: str) -> str:
    info = psycopg.conninfo.conninfo_to_dict(url)
    info["dbname"] = name
    return psycopg.conninfo.make_conninfo(**info)


@contextmanager
def scratch_database(server: str, template: str | None = None) -> Iterator[str]:
    """Create a database for the duration of the block and drop it afterwards: empty, or a copy of the database
    named ``template`` (which nothing may be connected to)."""
    name = f"oriole_test_{uuid.uuid4().hex[:10]}"
    copy = sql.SQL(" TEMPLATE {}").format(sql.Identifier(template)) if template else sql.SQL("")
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}{}").format(sql.Identifier(name), copy))
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
def migrated_template(server_url) -> Iterator[str]:
    """The name of a migrated database with the maze set that nothing connects to once it is made: a database of a
    module's own is a copy of it (``CREATE DATABASE ... TEMPLATE``, a file copy of a fifth of a second) instead of
    every migration run again (over a second). A copy lacks what a migration grants on the database itself (its
    CONNECT and TEMPORARY grants, a role's settings ``IN DATABASE``), which belong to the database's name: a test
    of the roles uses ``database_url``."""
    from oriole_workstation.database import prepare

    with scratch_database(server_url) as url:
        prepare(url).conn.close()
        yield psycopg.conninfo.conninfo_to_dict(url)["dbname"]


@pytest.fixture(scope="module")
def module_database(server_url, migrated_template) -> Iterator[str]:
    """A migrated database of the module's own. A module whose tests report, export or read every row of the
    database overrides ``database_url`` with it: on the session's database such a test reads whatever the files
    that ran before it on the worker left there, and its time grows with them."""
    with scratch_database(server_url, migrated_template) as url:
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
