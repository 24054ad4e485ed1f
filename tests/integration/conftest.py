"""The local state machine (moto's interpreter running the real ASL file, the real handlers)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oriole_workstation.launcher import RunResult
from oriole_workstation.runner import LocalAws
from tests import aws_calls, iam_contract


@pytest.fixture(autouse=True)
def calls_the_deployed_roles_allow():
    """The IAM contract over every integration test: each AWS call a function makes during the test must be one
    its role in the synthesized templates allows (tests/iam_contract.py); a refusal fails the test with the
    function, the action and the resource."""
    mark = len(aws_calls.CALLS)
    yield
    calls = aws_calls.since(mark)
    refused = iam_contract.denials(calls) if calls else []
    if refused:
        pytest.fail("the deployed roles would refuse these calls:\n" + "\n".join(refused), pytrace=False)


class Local:
    """A LocalAws with its launcher and the results it reads, to run an experiment to its end."""

    def __init__(self, aws: LocalAws, results):
        self.aws, self.results, self.launcher = aws, results, aws.launcher(poll_seconds=0.05)
        self.store = results.store

    def start(self, execution_input: dict) -> str:
        return self.launcher.start(execution_input)

    def follow(self, execution_arn: str) -> RunResult:
        return self.launcher.follow(execution_arn, self.results)

    def run(self, execution_input: dict) -> RunResult:
        return self.follow(self.start(execution_input))


TIME_SCALE = 0.1  # the local state machines' Retry intervals and Wait states, a tenth of what they ask for


@pytest.fixture(scope="module")
def local(database_url) -> Iterator[Local]:
    from oriole.store import db
    from oriole_workstation.results import Results

    conn = db.connect(database_url)
    with LocalAws(database_url, time_scale=TIME_SCALE) as aws:
        yield Local(aws, Results(conn))
    conn.close()


@pytest.fixture(scope="module")
def bedrock():
    """A real boto3 Bedrock Runtime client under botocore's Stubber: requests are checked against the
    service model, answers come from the test."""
    import boto3
    from botocore.stub import Stubber

    client = boto3.client(
        "bedrock-runtime", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    with Stubber(client) as stubber:
        yield stubber


@pytest.fixture(scope="module")
def bedrock_local(database_url, bedrock) -> Iterator[Local]:
    """The local state machine with the stubbed Bedrock client."""
    from oriole.store import db
    from oriole_workstation.results import Results

    conn = db.connect(database_url)
    with LocalAws(database_url, bedrock_client=bedrock.client) as aws:
        yield Local(aws, Results(conn))
    conn.close()


def baseline(agent: str, maze: str, **config) -> dict:
    return {"mazeId": maze, "llmProvider": "baseline", "modelName": agent, "config": config}


class ScaledLocalAws(LocalAws):
    """The local AWS of ``oriole run`` and ``oriole sweep`` invoked by a test: its state machines wait
    ``TIME_SCALE`` of what their Retry intervals and Wait states ask, as the ``local`` fixture's do (a sweep item
    looks at its experiment every second, a real second otherwise)."""

    def __init__(self, *args, time_scale: float = TIME_SCALE, **kwargs):
        super().__init__(*args, time_scale=time_scale, **kwargs)


@pytest.fixture
def cli(database_url, monkeypatch, tmp_path):
    """Invoke the ``oriole`` command in process against the test database, with a private ORIOLE_HOME
    and a wide terminal so tables are not wrapped; the local state machines it runs wait ``TIME_SCALE`` of their
    intervals."""
    from typer.testing import CliRunner

    from oriole_workstation import runner
    from oriole_workstation.cli import app

    monkeypatch.setattr(runner, "LocalAws", ScaledLocalAws)
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("ORIOLE_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(app, list(args))

    return invoke
