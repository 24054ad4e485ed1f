"""The roles of migration 0007 on a real PostgreSQL: the functions' application role reads and writes rows
but cannot change or drop the schema or delete results; the researchers' read-only role cannot write at
all; the migrations (the owner) give both their logins from their secrets."""

import json
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
    setting = (
        db.connect(database_url)
        .execute(
            "SELECT setconfig FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole "
            "WHERE r.rolname = 'oriole_reader'"
        )
        .fetchone()
    )
    assert "default_transaction_read_only=on" in setting["setconfig"]


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
