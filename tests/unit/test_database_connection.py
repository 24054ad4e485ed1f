"""How the functions connect on AWS: through the proxy, the server's certificate verified against the trust
anchors shipped in the package, no prepared statements; a full database is waited for, then named."""

import ssl

import psycopg
import pytest

from oriole.environment import DATABASE_CA, DATABASE_HOST, Environment
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
