"""The local state machine (moto's interpreter running the real ASL file, the real handlers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oriole.local.runner import LocalAws, RunResult


class Local:
    """A LocalAws with helpers to run an experiment to its end."""

    def __init__(self, aws: LocalAws, store):
        self.aws, self.store = aws, store

    def run(self, execution_input: dict) -> RunResult:
        return self.aws.wait(self.aws.start(execution_input), self.store, poll_seconds=0.05)


@pytest.fixture(scope="module")
def local(database_url) -> Iterator[Local]:
    from oriole import db
    from oriole.store import Store

    conn = db.connect(database_url)
    with LocalAws(database_url) as aws:
        yield Local(aws, Store(conn))
    conn.close()


def baseline(agent: str, maze: str, **config) -> dict:
    return {"mazeId": maze, "llmProvider": "baseline", "modelName": agent, "config": config}


@pytest.fixture
def cli(database_url, monkeypatch, tmp_path):
    """Invoke the ``oriole`` command in process against the test database, with a private ORIOLE_HOME
    and a wide terminal so tables are not wrapped."""
    from typer.testing import CliRunner

    from oriole.local.cli import app

    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, list(args))
    return invoke
