"""The IAM contract, exercised on purpose: every path through which a function calls AWS runs here once, as
deployed. Experiments of every provider (Bedrock through its base id and both profiles the deployment grants, an
Ollama and an OpenAI-compatible server with their API keys), a continuation, the three finalizers, the
status-change finalizer asking for a successor, the reconciler, a sweep, the version pruner and the migrations;
each invocation in a container of its own (``cold_containers``), so every function reads its database credentials
from Secrets Manager (moto's) as on AWS. Each recorded call must be one its deployed role allows, and each function
must have read every secret its template hands it. The other integration tests are held to the same contract by
conftest.py, whatever they run."""

from __future__ import annotations

import functools
import importlib
import json
import os
import threading
import uuid
import warnings
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from unittest import mock

import boto3
import psycopg
import pytest

from oriole import catalog
from oriole.environment import (
    EXECUTION_TIMEOUT,
    PRUNED_FUNCTIONS,
    ROLE_SECRETS,
    STACK_ID,
    STATE_MACHINE_ARN,
    SWEEP_STATE_MACHINE_ARN,
)
from oriole.handlers import FUNCTIONS, agents, migrate, reconcile, sweep_tasks, versions
from oriole.lifecycle import experiments
from oriole.lifecycle.task_io import StartRequest
from oriole.provider_registry import PROVIDERS
from oriole.store import db
from oriole_workstation import runner
from oriole_workstation.results import Results
from oriole_workstation.runner import ACCOUNT, EXECUTION_PREFIX, REGION, LambdaContext, LocalAws
from tests import aws_calls, openai_server
from tests.iam_contract import PROFILES, denials, deployed
from tests.iam_policy import allows
from tests.infra.conftest import BASE_MODEL
from tests.integration.conftest import Local, baseline
from tests.integration.test_providers_local import converse_reply, shortest_moves
from tests.integration.test_sweep_local import run_sweep
from tests.ollama_server import ScriptedOllama, tool_calls

MAZE = "perfect-7"
OLLAMA_KEY, OPENAI_KEY = "ollama-contract", "sk-contract"  # the API keys in their secrets
ROLES = ("oriole_app", "oriole_reader")  # the roles the migrations give their logins (infra/database.py)
# What the scenario must reach, besides every secret the templates hand the functions (checked from the templates)
PATHS = {
    ("StartExperiment", "ssm:GetParameters"),
    ("InvokeBedrockAgent", "bedrock:InvokeModel"),
    ("ContinueAsNew", "states:StartExecution"),
    ("ExecutionStatusFinalizer", "states:DescribeExecution"),
    ("Reconciler", "states:DescribeExecution"),
    ("Reconciler", "states:ListExecutions"),
    ("PlanSweep", "ssm:GetParametersByPath"),
    ("PlanSweep", "ssm:GetParameters"),  # the experiments' cost cap
    ("PlanSweep", "lambda:GetAccountSettings"),  # the account's concurrency
    ("StartRepetition", "states:StartExecution"),
    ("CheckRepetition", "states:DescribeExecution"),
    ("SummarizeSweep", "states:ListExecutions"),
    ("VersionPruner", "lambda:ListVersionsByFunction"),
    ("VersionPruner", "cloudformation:ListStackResources"),
    ("VersionPruner", "states:ListExecutions"),
    ("VersionPruner", "states:DescribeStateMachineForExecution"),
}


@contextmanager
def cold_containers() -> Iterator[None]:
    """Every invocation of a function in a container of its own, as at a Lambda cold start: its own database
    connection, opened when it first needs one (reading its secret) and closed when it returns, and no cached
    secret or API key. The runner otherwise shares one process's connection and caches among all functions."""
    from aws_lambda_powertools.utilities import parameters

    container = threading.local()  # moto runs each execution in a thread of its own

    def connection(invocation: db.Invocation | None = None) -> psycopg.Connection:
        conn = getattr(container, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = container.conn = db.connect_within(invocation)
        return conn

    def cold(handler):
        @functools.wraps(handler)
        def invoke(event, context):
            parameters.clear_caches()
            agents.api_key.cache_clear()
            try:
                return handler(event, context)
            finally:
                conn, container.conn = getattr(container, "conn", None), None
                if conn is not None:
                    conn.close()

        return invoke

    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(db, "connection", connection))
        for path in aws_calls.ENTRY_POINTS:  # before the runner reads them
            module, name = path.rsplit(".", 1)
            module = importlib.import_module(module)
            stack.enter_context(mock.patch.object(module, name, cold(getattr(module, name))))
        yield


AS_DEPLOYED = db.secret_conninfo  # before any test replaces it


def offers_tls(url: str) -> bool:
    """Whether the functions' connection as deployed (``sslmode=require``) can reach the server of ``url``: over a
    Unix socket libpq ignores sslmode (the embedded server); over TCP the server must offer TLS (``SHOW ssl``)."""
    host = psycopg.conninfo.conninfo_to_dict(url).get("host") or ""
    if not host or host.startswith("/"):
        return True
    with db.connect(url) as conn:
        return conn.execute("SHOW ssl").fetchone()["ssl"] == "on"


def without_tls(secret: dict, env=None) -> str:
    """``db.secret_conninfo`` for a server that offers no TLS: the same connection, ``sslmode=disable``."""
    info = psycopg.conninfo.conninfo_to_dict(AS_DEPLOYED(secret, env))
    return psycopg.conninfo.make_conninfo(**{**info, "sslmode": "disable"})


@pytest.fixture(scope="module")
def secrets(database_url, bedrock) -> Iterator[tuple[Local, dict]]:
    """The local state machine with the functions' credentials in Secrets Manager: ``DATABASE_URL`` unset,
    ``DATABASE_SECRET_ARN`` and the API-key secrets set as the template sets them. Yields the runner and the
    secrets' ARNs by name.

    The functions connect as deployed, TLS required, wherever that can work: over the embedded server's Unix
    socket, or to a ``DATABASE_URL`` server over TCP that offers TLS. A server over TCP without TLS (an acceptance
    run may point the suite at one) gets the same connections without TLS, and the test says so in a warning:
    every call is still evaluated, the TLS requirement is not."""
    info = psycopg.conninfo.conninfo_to_dict(database_url)
    connection = {
        "host": info.get("host") or "",
        "port": int(info.get("port") or 5432),
        "username": info["user"],
        "password": info.get("password") or "",
        "dbname": info["dbname"],
    }
    conn = db.connect(database_url)
    with ExitStack() as stack:
        if not offers_tls(database_url):
            warnings.warn(
                f"the server at {connection['host']}:{connection['port']} offers no TLS: the functions "
                "connected with sslmode=disable, not require as deployed",
                stacklevel=1,
            )
            stack.enter_context(mock.patch.object(db, "secret_conninfo", without_tls))
        stack.enter_context(cold_containers())
        aws = stack.enter_context(LocalAws(database_url, bedrock_client=bedrock.client))
        client = boto3.client("secretsmanager", region_name=REGION)
        arns = {
            name: client.create_secret(Name=f"oriole/{name}", SecretString=value)["ARN"]
            for name, value in [
                ("owner", json.dumps(connection)),
                ("app", json.dumps(connection)),
                ("ollama", OLLAMA_KEY),
                ("openai", OPENAI_KEY),
                *[(role, json.dumps({"username": role, "password": f"pw-{role}"})) for role in ROLES],
            ]
        }
        environment = {
            "DATABASE_SECRET_ARN": arns["app"],
            PROVIDERS["ollama"].api_key_secret: arns["ollama"],
            PROVIDERS["openai"].api_key_secret: arns["openai"],
        }
        with mock.patch.dict(os.environ, environment):
            del os.environ["DATABASE_URL"]
            yield Local(aws, Results(conn)), arns
    conn.close()


def status(local: Local, execution_input: dict) -> str:
    return local.run(execution_input).as_json()["status"]


def open_experiment(store, execution_arn: str) -> int:
    event = {"input": {"mazeId": MAZE, "llmProvider": "baseline", "modelName": "random"}, "executionArn": execution_arn}
    return experiments.start(StartRequest.model_validate(event), store, lambda names: catalog.defaults()).as_state()[
        "experimentId"
    ]


def run_every_provider(local: Local, bedrock) -> None:
    """One move each (``maxMoves`` 1: FinalizeTimeout); Bedrock through the granted model's base id and both of
    its profiles, then a model Bedrock refuses (FinalizeFailure); a baseline continued over several executions
    (ContinueAsNew, FinalizeSuccess); the OpenAI experiment replayed against its recorded answer."""
    first = shortest_moves(MAZE)[0]
    for model in (BASE_MODEL, f"us.{BASE_MODEL}", f"global.{BASE_MODEL}"):
        bedrock.add_response("converse", converse_reply(first))
        assert (
            status(local, {"mazeId": MAZE, "llmProvider": "bedrock", "modelName": model, "config": {"maxMoves": 1}})
            == "timed_out"
        )
    bedrock.add_client_error("converse", service_error_code="ResourceNotFoundException", http_status_code=404)
    assert status(local, {"mazeId": MAZE, "llmProvider": "bedrock", "modelName": BASE_MODEL}) == "failed"
    bedrock.assert_no_pending_responses()
    with ScriptedOllama(tool_calls((first, {}))) as server:
        assert (
            status(
                local,
                {
                    "mazeId": MAZE,
                    "llmProvider": "ollama",
                    "modelName": "qwen2.5:7b",
                    "config": {"endpoint": server.url, "maxMoves": 1},
                },
            )
            == "timed_out"
        )
    assert server.requests[0].headers["authorization"] == f"Bearer {OLLAMA_KEY}"  # read from its secret
    with openai_server.ScriptedOpenAI(openai_server.tool_calls((first, {})), api_key=OPENAI_KEY) as server:
        played = local.run(
            {
                "mazeId": MAZE,
                "llmProvider": "openai",
                "modelName": "Qwen/Qwen3-8B",
                "config": {"baseUrl": server.base_url, "maxMoves": 1},
            }
        ).as_json()
    assert played["status"] == "timed_out"
    # its replay, the server stopped: the recorded agent's role reads the database and nothing else
    assert status(local, {"replayOf": played["experiment_id"]}) == "timed_out"
    continued = local.run(baseline("oracle", "perfect-9", maxTurnsPerExecution=1, maxActionsPerTurn=8)).as_json()
    assert continued["status"] == "succeeded" and len(continued["execution_arns"]) > 1


def close_what_ended_elsewhere(local: Local, store) -> None:
    """The status-change finalizer told of a handed-over execution whose successor never started (it asks Step
    Functions), and the scheduled reconciler on a state machine of its own (``ORIOLE_STATE_MACHINE_ARN``)."""
    name = f"handed-over-{uuid.uuid4().hex[:8]}"
    handed_over = open_experiment(store, EXECUTION_PREFIX + name)
    now = datetime.now(UTC)
    closed = local.aws.report_status_change(
        {
            "executionArn": EXECUTION_PREFIX + name,
            "stateMachineArn": local.aws.state_machine_arn,
            "name": name,
            "status": "SUCCEEDED",
            "startDate": now,
            "stopDate": now,
            "input": "{}",
            "output": json.dumps(
                {"continuation": {"successorExecutionArn": EXECUTION_PREFIX + f"exp-{handed_over}-part-2"}}
            ),
        }
    )
    assert closed["closed"] and closed["experimentId"] == handed_over
    machine = local.aws.sfn.create_state_machine(
        name=f"reconciled-{uuid.uuid4().hex[:8]}",
        roleArn=f"arn:aws:iam::{ACCOUNT}:role/r",
        definition=json.dumps({"StartAt": "S", "States": {"S": {"Type": "Pass", "End": True}}}),
    )["stateMachineArn"]
    lost = local.aws.sfn.start_execution(stateMachineArn=machine, name="lost-event")["executionArn"]
    open_experiment(store, lost)
    environment = {STATE_MACHINE_ARN: machine, EXECUTION_TIMEOUT: "3600"}
    with mock.patch.dict(os.environ, environment):
        found = reconcile.handler({}, LambdaContext("oriole-Reconciler", "arn", "r"))
    assert {k: found[k] for k in ("found", "closed", "lookedAt")} == {"found": 1, "closed": 1, "lookedAt": True}


def sweep(local: Local) -> None:
    """A one-item sweep (PlanSweep, StartRepetition, SummarizeSweep), and CheckRepetition asked about an execution
    that left no experiment (it asks Step Functions whether that execution still runs)."""
    execution, summary = run_sweep(
        local, {"id": f"iam-{uuid.uuid4().hex[:8]}", "agents": ["baseline/oracle"], "mazes": [MAZE]}
    )
    assert execution["status"] == "SUCCEEDED" and summary["succeeded"] == 1
    check = sweep_tasks.check_repetition(
        {"executionArn": EXECUTION_PREFIX + "never-made-its-experiment", "waitSeconds": 30, "followedSeconds": 30},
        LambdaContext("oriole-CheckRepetition", "arn", "r"),
    )
    assert (check["closed"], check["outcome"]) == (True, "rejected")


def prune_versions(local: Local) -> None:
    """The version pruner as its trigger runs it during a deploy: it lists the versions of the functions it is
    given, what its stack holds (moto's, which gives no version a physical id: nothing is known to be stale, so
    nothing is deleted; tests/infra/test_iam_roles.py holds DeleteFunction to its role) and the definitions of the
    running sweeps (one runs, on a sweep state machine of its own)."""
    stack = boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=f"pruned-{uuid.uuid4().hex[:8]}",
        TemplateBody=json.dumps({"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}),
    )["StackId"]
    waiting = {"StartAt": "Wait", "States": {"Wait": {"Type": "Wait", "Seconds": 3600, "End": True}}}
    sweeps_machine = local.aws.sfn.create_state_machine(
        name=f"sweeps-{uuid.uuid4().hex[:8]}", roleArn=f"arn:aws:iam::{ACCOUNT}:role/r", definition=json.dumps(waiting)
    )["stateMachineArn"]
    running = local.aws.sfn.start_execution(stateMachineArn=sweeps_machine, name="running-sweep")["executionArn"]
    given = [runner.function_name(placeholder) for placeholder in FUNCTIONS]
    environment = {
        PRUNED_FUNCTIONS: json.dumps(given),
        STACK_ID: stack,
        SWEEP_STATE_MACHINE_ARN: sweeps_machine,
    }
    try:
        with mock.patch.dict(os.environ, environment):
            assert versions.handler({}, LambdaContext("oriole-VersionPruner", "arn", "r")) == {"deleted": {}}
    finally:
        local.aws.sfn.stop_execution(executionArn=running)


def migrate_with_the_owners_secret(arns: dict, database_url: str) -> None:
    """The migrations as deployed: the owner's secret, and the roles' secrets to give them their logins."""
    environment = {
        "DATABASE_SECRET_ARN": arns["owner"],
        ROLE_SECRETS: json.dumps({role: arns[role] for role in ROLES}),
    }
    try:
        with mock.patch.dict(os.environ, environment):
            result = migrate.handler({}, LambdaContext("oriole-Migrations", "arn", "r"))
        assert result["logins"] == list(ROLES)
    finally:
        with db.connect(database_url) as owner:
            for role in ROLES:
                owner.execute(f"ALTER ROLE {role} NOLOGIN")


def test_every_function_calls_only_what_its_role_allows_and_reads_its_secrets(secrets, bedrock, store, database_url):
    local, arns = secrets
    mark = len(aws_calls.CALLS)
    run_every_provider(local, bedrock)
    close_what_ended_elsewhere(local, store)
    sweep(local)
    prune_versions(local)
    migrate_with_the_owners_secret(arns, database_url)

    calls = aws_calls.since(mark)
    assert denials(calls) == []
    for profile in PROFILES:
        contract = deployed(profile=profile)
        checked = contract.checked(calls)
        assert {(function, action) for function, action, _ in checked} >= PATHS, profile
        handed = {
            (function.name, "secretsmanager:GetSecretValue", arn)
            for handler, function in contract.functions.items()
            for arn in handed_secrets(contract, handler)
        }
        assert handed <= checked, f"{profile}: secrets never read: {sorted(handed - checked)}"
        assert {function for function, _, _ in checked} == {f.name for f in contract.functions.values()}, profile


def handed_secrets(contract, handler: str) -> list[str]:
    """The secrets the template names in a function's environment and lets it read (StartExperiment is only told
    that an API key is sent)."""
    named = [
        contract.variable(handler, name)
        for name in ("DATABASE_SECRET_ARN", PROVIDERS["ollama"].api_key_secret, PROVIDERS["openai"].api_key_secret)
    ]
    roles = contract.variable(handler, ROLE_SECRETS)
    named += list(json.loads(roles).values()) if roles else []
    statements = contract.functions[handler].statements
    return [arn for arn in named if arn and allows(statements, "secretsmanager:GetSecretValue", arn)]
