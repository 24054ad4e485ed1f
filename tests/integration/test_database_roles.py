"""The roles of migration 0007 on a real PostgreSQL: the functions' application role reads and writes rows
but cannot change or drop the schema or delete results; the researchers' read-only role cannot write at
all; the migrations (the owner) give both their logins from their secrets."""

import json
import random
import uuid

import psycopg
import pytest
from psycopg import sql

from oriole import catalog
from oriole.environment import ROLE_SECRETS
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import FinalizeRequest, ProgressRequest, StartRequest, TurnRequest
from oriole.providers import baseline
from oriole.store import db


@pytest.fixture
def as_role(database_url):
    """A connection of the owner's that acts as ``role`` (SET ROLE: the privileges are the role's own)."""
    opened = []

    def connect(role: str) -> psycopg.Connection:
        conn = db.connect(database_url)
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(role)))
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


@pytest.mark.parametrize(
    "statement",
    [
        "DROP TABLE actions",
        "ALTER TABLE experiments ADD COLUMN sneaky text",
        "TRUNCATE turns",
        "DELETE FROM experiments",
        "CREATE TABLE scratch (id int)",
        "DROP VIEW experiment_results",
    ],
)
def test_the_application_role_cannot_change_the_schema_or_delete_results(as_role, statement):
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        as_role("oriole_app").execute(statement)


def test_the_application_role_runs_an_experiment(as_role):
    from oriole.store import Store

    store = Store(as_role("oriole_app"))
    event = {
        "input": {"mazeId": "perfect-7", "llmProvider": "baseline", "modelName": "oracle"},
        "executionArn": f"arn:test:app-role-{uuid.uuid4().hex[:6]}",
    }
    state = experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()
    experiments.play_turn(
        TurnRequest.model_validate({"experimentId": state["experimentId"], "turnNumber": 1}), store, baseline.agent
    )
    assert experiments.check_progress(
        ProgressRequest.model_validate({"experimentId": state["experimentId"], "turnInExecution": 1}), store
    )
    assert experiments.finalize(
        FinalizeRequest.model_validate({"experimentId": state["experimentId"]}), store, "succeeded"
    ).closed


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO experiments (maze_id) VALUES (1)",
        "UPDATE experiments SET status = 'failed'",
        "DELETE FROM actions",
        "DROP TABLE turns",
    ],
)
def test_the_read_only_role_cannot_write(as_role, statement):
    conn = as_role("oriole_reader")
    conn.execute("SET default_transaction_read_only = off")  # even without the role's read-only default
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute(statement)


def test_the_read_only_role_reads_the_results_and_the_views(as_role):
    conn = as_role("oriole_reader")
    assert conn.execute("SELECT count(*) AS n FROM experiment_results").fetchone()["n"] >= 0
    assert conn.execute("SELECT * FROM compare_experiments()").fetchall() is not None


def test_the_read_only_role_sessions_are_read_only_by_default(database_url):
    settings = (
        db.connect(database_url)
        .execute(
            "SELECT setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
            "WHERE r.rolname = 'oriole_reader'"
        )
        .fetchall()
    )  # the role's own settings, and those it has in this database (migration 0023)
    assert "default_transaction_read_only=on" in [item for row in settings for item in row["setconfig"]]


def test_the_migrations_give_the_roles_their_logins_from_their_secrets(database_url, monkeypatch):
    """The Migrations function, as deployed: secrets in Secrets Manager (moto's), roles named in its
    environment. A role without its login cannot connect; with it, it can."""
    from moto import mock_aws

    from oriole.handlers import migrate
    from oriole_workstation.runner import LambdaContext

    def connect_as(role: str) -> psycopg.Connection:
        info = psycopg.conninfo.conninfo_to_dict(database_url)
        return psycopg.connect(psycopg.conninfo.make_conninfo(**{**info, "user": role, "password": "pw-" + role}))

    owner = db.connect(database_url)
    # The password it will have, so that a server asking for one (over TCP) refuses the login for the login alone
    owner.execute("ALTER ROLE oriole_reader NOLOGIN PASSWORD 'pw-oriole_reader'")
    with pytest.raises(psycopg.OperationalError, match="not permitted to log in"):
        connect_as("oriole_reader")
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    try:
        with mock_aws():
            import boto3

            secrets = boto3.client("secretsmanager")
            arns = {
                role: secrets.create_secret(
                    Name=f"oriole/{role}", SecretString=json.dumps({"username": role, "password": "pw-" + role})
                )["ARN"]
                for role in ("oriole_app", "oriole_reader")
            }
            monkeypatch.setenv(ROLE_SECRETS, json.dumps(arns))
            db.reset()
            result = migrate.handler({}, LambdaContext("oriole-Migrations", "arn:aws:lambda:::function:m", "r"))
        assert result["logins"] == ["oriole_app", "oriole_reader"] and result["applied"] == []
        with connect_as("oriole_reader") as reader:
            assert reader.execute("SELECT current_user").fetchone()[0] == "oriole_reader"
    finally:
        db.reset()
        owner.execute("ALTER ROLE oriole_app NOLOGIN")
        owner.execute("ALTER ROLE oriole_reader NOLOGIN")
        owner.close()


def test_only_the_roles_of_the_migrations_get_a_login(store):
    with pytest.raises(ValueError, match="not one of the roles"):
        store.enable_login("postgres", "x")


def test_only_the_application_roles_sessions_end_when_idle(database_url):
    """Migration 0012: a session that logs in as oriole_app (the functions) ends after 10 idle minutes; one
    that logs in as oriole_reader (a researcher's psql) or as the owner keeps the server's default (never).
    Role settings apply at login, so each role really logs in."""

    def idle_timeout(role: str | None) -> str:
        info = psycopg.conninfo.conninfo_to_dict(database_url)
        if role:
            info |= {"user": role, "password": "pw-" + role}
        with psycopg.connect(psycopg.conninfo.make_conninfo(**info)) as conn:
            return conn.execute("SHOW idle_session_timeout").fetchone()[0]

    owner = db.connect(database_url)
    try:
        for role in ("oriole_app", "oriole_reader"):
            owner.execute(
                sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal("pw-" + role))
            )
        assert idle_timeout("oriole_app") == "10min"
        assert idle_timeout("oriole_reader") == "0"
        assert idle_timeout(None) == "0"  # the owner
    finally:
        for role in ("oriole_app", "oriole_reader"):
            owner.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(role)))
        owner.close()


def test_the_read_only_role_holds_a_few_sessions_and_no_statement_for_ever(database_url):
    """Migration 0025: a reader (a researcher's psql, a notebook) may open at most 10 sessions, and a statement of
    theirs is cancelled after 5 minutes; the functions' role and the owner are not limited so. The 11th session is
    refused by the server, and a slow statement is cancelled (here under a shorter timeout of the session's own,
    the same mechanism)."""
    info = psycopg.conninfo.conninfo_to_dict(database_url)

    def login(role: str) -> psycopg.Connection:
        return psycopg.connect(psycopg.conninfo.make_conninfo(**(info | {"user": role, "password": "pw-" + role})))

    owner = db.connect(database_url)
    limits = {
        row["rolname"]: row["rolconnlimit"]
        for row in owner.execute(
            "SELECT rolname, rolconnlimit FROM pg_roles WHERE rolname IN ('oriole_app', 'oriole_reader')"
        ).fetchall()
    }
    assert limits == {"oriole_app": -1, "oriole_reader": 10}
    opened = []
    try:
        for role in ("oriole_app", "oriole_reader"):
            owner.execute(
                sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal("pw-" + role))
            )
        opened = [login("oriole_reader") for _ in range(10)]
        assert opened[0].execute("SHOW statement_timeout").fetchone()[0] == "5min"
        with login("oriole_app") as app:
            assert app.execute("SHOW statement_timeout").fetchone()[0] == "0"
        with pytest.raises(psycopg.OperationalError, match="too many connections for role"):
            login("oriole_reader")
        opened[0].execute("SET statement_timeout = '100ms'")
        with pytest.raises(psycopg.errors.QueryCanceled):
            opened[0].execute("SELECT pg_sleep(5)")
    finally:
        for conn in opened:
            conn.close()
        for role in ("oriole_app", "oriole_reader"):
            owner.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(role)))
        owner.close()


@pytest.fixture
def logged_in(database_url):
    """A session that really logs in as ``role`` (role settings apply at login; pg_stat_activity names it)."""
    owner = db.connect(database_url)
    opened: list[tuple[str, psycopg.Connection]] = []

    def login(role: str) -> psycopg.Connection:
        owner.execute(
            sql.SQL("ALTER ROLE {} WITH LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal("pw-" + role))
        )
        info = psycopg.conninfo.conninfo_to_dict(database_url) | {"user": role, "password": "pw-" + role}
        conn = psycopg.connect(psycopg.conninfo.make_conninfo(**info), autocommit=True)
        opened.append((role, conn))
        return conn

    yield login
    for role, conn in opened:
        conn.close()
        owner.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(role)))
    owner.close()


def test_the_read_only_role_waits_for_a_lock_five_seconds_at_most(logged_in):
    """Migration 0023: a researcher's query queued behind a migration's lock gives up instead of holding the
    queue (and every runner behind it)."""
    assert logged_in("oriole_reader").execute("SHOW lock_timeout").fetchone()[0] == "5s"
    assert logged_in("oriole_app").execute("SHOW lock_timeout").fetchone()[0] == "0"


@pytest.mark.parametrize("seed", range(3))
def test_the_read_only_role_takes_no_advisory_lock_and_makes_no_temporary_table(logged_in, seed):
    rng = random.Random(seed)
    key = rng.randint(-(2**31), 2**31 - 1)
    calls = [
        f"SELECT pg_advisory_lock({key})",
        f"SELECT pg_try_advisory_lock({key}, {rng.randint(-(2**31), 2**31 - 1)})",
        f"SELECT pg_try_advisory_lock_shared({key})",
        f"SELECT pg_advisory_xact_lock({key})",
        f"SELECT pg_try_advisory_xact_lock_shared({key}, 7)",
    ]
    reader, app = logged_in("oriole_reader"), logged_in("oriole_app")
    for call in rng.sample(calls, 3):
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            reader.execute(call)
        app.execute(call)  # the functions' role keeps them (a runner on it holds its executions)
    app.execute("SELECT pg_advisory_unlock_all()")
    reader.execute("SET default_transaction_read_only = off")  # a session may lift its role's default
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        reader.execute("CREATE TEMPORARY TABLE scratch (id int)")


def test_doctor_counts_only_locks_held_by_a_role_that_runs_experiments(database_url, logged_in):
    """Where the server keeps the lock functions public (a database whose functions the owner may not change), a
    lock another role takes in the runners' space is no live run to `oriole doctor`."""
    from oriole_workstation.results import RUN_LOCK_SPACE, Results

    arn = f"arn:aws:states:us-east-1:123456789012:execution:oriole:exp-{uuid.uuid4().hex[:8]}"
    owner = db.connect(database_url)
    owner.execute("GRANT EXECUTE ON FUNCTION pg_try_advisory_lock(integer, integer) TO oriole_reader")
    try:
        reader = logged_in("oriole_reader")
        assert reader.execute("SELECT pg_try_advisory_lock(%s::int, hashtext(%s))", (RUN_LOCK_SPACE, arn)).fetchone()[0]
        assert Results(owner).held([arn]) == set()
        runner = Results(logged_in("oriole_app"))
        reader.execute("SELECT pg_advisory_unlock_all()")
        runner.hold(arn)
        assert Results(owner).held([arn]) == {arn}
    finally:
        owner.execute("REVOKE EXECUTE ON FUNCTION pg_try_advisory_lock(integer, integer) FROM oriole_reader")
        owner.close()
