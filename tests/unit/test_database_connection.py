"""How the functions connect on AWS: through the proxy, the server's certificate verified against the trust
anchors shipped in the package, no prepared statements; a full database is waited for, then named."""

import re
import ssl

import psycopg
import pytest

from oriole.environment import CONNECT_PATIENCE, DATABASE_CA, DATABASE_HOST, Environment
from oriole.errors import DatabaseBusy
from oriole.store import db

SECRET = {
    "host": "oriole.abc.us-east-1.rds.amazonaws.com",
    "port": 5432,
    "username": "oriole_app",
    "password": "p@ss word",
    "dbname": "oriole",
}
PROXY = "oriole-proxy.proxy-abc.us-east-1.rds.amazonaws.com"


def test_through_the_proxy_the_server_certificate_is_verified_against_the_shipped_file():
    info = psycopg.conninfo.conninfo_to_dict(
        db.secret_conninfo(SECRET, Environment.read({DATABASE_HOST: PROXY, DATABASE_CA: "amazon-trust-services.pem"}))
    )
    assert info["sslmode"] == "verify-full" and info["host"] == PROXY
    assert info["sslrootcert"].endswith("oriole/certs/amazon-trust-services.pem")
    assert info["user"] == "oriole_app" and info["password"] == "p@ss word"


def test_without_a_bundle_tls_is_still_required():
    info = psycopg.conninfo.conninfo_to_dict(db.secret_conninfo(SECRET, Environment.read({})))
    assert info["sslmode"] == "require" and info["host"] == SECRET["host"]


def test_the_shipped_bundle_holds_the_amazon_roots_that_sign_the_proxy_certificate():
    context = ssl.create_default_context(cafile=str(db.ca_file("amazon-trust-services.pem")))
    subjects = {dict(part[0] for part in cert["subject"])["commonName"] for cert in context.get_ca_certs()}
    assert {"Amazon Root CA 1", "Amazon Root CA 2", "Amazon Root CA 3", "Amazon Root CA 4"} <= subjects


def test_a_full_database_is_waited_for_then_named(monkeypatch):
    attempts, waits = [], []

    def full(url=None):
        attempts.append(url)
        raise psycopg.OperationalError('connection failed: FATAL:  too many connections for role "oriole_app"')

    monkeypatch.setattr(db, "connect", full)
    with pytest.raises(DatabaseBusy, match="too many connections"):
        db.connect_when_free(sleep=waits.append)
    assert len(attempts) == db.CONNECT_ATTEMPTS and len(waits) == db.CONNECT_ATTEMPTS - 1


def test_another_connection_failure_is_not_waited_for(monkeypatch):
    def refused(url=None):
        raise psycopg.OperationalError("connection failed: password authentication failed")

    monkeypatch.setattr(db, "connect", refused)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        db.connect_when_free(sleep=lambda seconds: pytest.fail("waited for a wrong password"))


class Clock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self):
        self.now, self.waits = 0.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


class Invocation:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def failing_then(monkeypatch, message: str, failures: int) -> list:
    """``db.connect`` refusing with ``message`` ``failures`` times, then answering."""
    attempts = []

    def connect(url=None):
        attempts.append(url)
        if len(attempts) <= failures:
            raise psycopg.OperationalError(message)
        return "connection"

    monkeypatch.setattr(db, "connect", connect)
    return attempts


RESUMING = "connection to server at 10.0.3.7, port 5432 failed: timeout expired"


def test_a_deployed_task_waits_for_a_resuming_database(monkeypatch):
    """Aurora resuming from a pause does not answer for about 15 s: a deployed task (its patience set by CDK)
    waits with backoff instead of failing the turn."""
    monkeypatch.setenv(CONNECT_PATIENCE, "120")
    attempts, clock = failing_then(monkeypatch, RESUMING, 3), Clock()
    assert db.connect_within(Invocation(60), clock.sleep, clock) == "connection"
    assert clock.waits == [1.0, 2.0, 4.0] and len(attempts) == 4


def test_the_connect_budget_follows_the_invocation_s_remaining_time(monkeypatch):
    """A task with 30 s left waits 15 s at most (the rest is the work after connecting), however patient the
    deployment is; then the last error, which the state machine retries."""
    monkeypatch.setenv(CONNECT_PATIENCE, "120")
    failing_then(monkeypatch, RESUMING, 100)
    clock = Clock()
    with pytest.raises(psycopg.OperationalError, match="timeout expired"):
        db.connect_within(Invocation(30), clock.sleep, clock)
    assert sum(clock.waits) <= 30 - db.CONNECT_RESERVE_SECONDS and clock.waits == [1.0, 2.0, 4.0, 8.0]


def test_a_deployment_s_patience_caps_the_budget_and_a_full_database_is_named(monkeypatch):
    monkeypatch.setenv(CONNECT_PATIENCE, "20")
    failing_then(monkeypatch, 'FATAL:  too many connections for role "oriole_app"', 100)
    clock = Clock()
    with pytest.raises(DatabaseBusy, match="within 20 s"):
        db.connect_within(Invocation(900), clock.sleep, clock)
    assert sum(clock.waits) <= 20


def test_a_wrong_password_is_never_waited_for_even_on_aws(monkeypatch):
    monkeypatch.setenv(CONNECT_PATIENCE, "120")
    failing_then(monkeypatch, 'FATAL:  password authentication failed for user "oriole_app"', 100)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        db.connect_within(Invocation(60), lambda seconds: pytest.fail("waited for a wrong password"), Clock())


def test_locally_a_refused_connection_is_raised_at_once(monkeypatch):
    """No patience (the local runner, the tests): the embedded server is up or it is not."""
    monkeypatch.delenv(CONNECT_PATIENCE, raising=False)
    failing_then(monkeypatch, RESUMING, 1)
    with pytest.raises(psycopg.OperationalError, match="timeout expired"):
        db.connect_within(Invocation(60), lambda seconds: pytest.fail("waited locally"), Clock())


def test_the_migrations_wait_for_as_long_as_their_invocation_leaves_them(monkeypatch):
    """The migration trigger of a first deploy waits for the function's whole timeout and more: the function gives
    connecting all of its invocation but what migrating takes, not a fixed two minutes."""
    from oriole.handlers import migrate

    budgets = []

    def patiently(budget, *args, **kwargs):
        budgets.append(budget)
        raise psycopg.OperationalError("stop here")

    monkeypatch.setattr(db, "connect_patiently", patiently)
    context = type("Context", (), {"function_name": "m", "invoked_function_arn": "arn", "aws_request_id": "r"})()
    context.memory_limit_in_mb = 512
    context.get_remaining_time_in_millis = lambda: 299_000
    with pytest.raises(psycopg.OperationalError, match="stop here"):
        migrate.handler({}, context)
    assert budgets == [299 - migrate.MIGRATING_SECONDS]


def test_the_turn_s_statements_are_short_enough_for_psycopg_to_parse_them_once():
    """psycopg remembers a statement's parse only under its limits (4,096 characters, 50 parameters): above them
    the turn's commit was parsed again on every turn. ``compact`` keeps the indented, commented text under them."""
    from psycopg import _queries

    from oriole.store import turns
    from oriole.store.base import compact

    for statement in (turns._COMMIT_TURN, turns._LOAD_TURN):
        assert len(statement) <= _queries.MAX_CACHED_STATEMENT_LENGTH
        assert len(set(re.findall(r"%\((\w+)\)s", statement))) <= _queries.MAX_CACHED_STATEMENT_PARAMS
    assert compact("  SELECT 1\n    -- a note\n  FROM t  -- kept\n\n") == "SELECT 1\nFROM t  -- kept"
