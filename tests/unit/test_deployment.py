"""What a deployment allows, computed from the environment CDK sets, and the AWS throttles the handlers name."""

import boto3
import pytest
from botocore.config import Config
from botocore.stub import Stubber

from oriole.environment import Environment
from oriole.errors import ParameterStoreThrottled, StartExecutionThrottled
from oriole.lifecycle import deployment

HAIKU = "anthropic.claude-haiku-4-5-20251001-v1:0"


@pytest.mark.parametrize(
    ("region", "geography"),
    [
        ("us-east-1", "us"),
        ("us-west-2", "us"),
        ("eu-central-1", "eu"),
        ("ap-northeast-1", "apac"),
        ("sa-east-1", "global"),
        ("", "global"),
    ],
)
def test_each_region_calls_the_profiles_of_its_geography(region, geography):
    assert deployment.geography(region) == geography


def test_a_base_id_is_callable_as_itself_and_through_its_profiles_a_profile_id_as_given():
    assert deployment.invocable_ids([HAIKU, f"eu.{HAIKU}", "global.amazon.nova-2-lite-v1:0"], "us") == [
        HAIKU,
        f"us.{HAIKU}",
        f"global.{HAIKU}",
        f"eu.{HAIKU}",
        "global.amazon.nova-2-lite-v1:0",
    ]
    assert deployment.base_model(f"apac.{HAIKU}") == deployment.base_model(HAIKU) == HAIKU
    assert deployment.profile_prefix("amazon.nova-pro-v1:0") is None  # "amazon" is a provider, not a geography


def client(service: str):
    return boto3.client(
        service,
        region_name="us-east-1",
        aws_access_key_id="AKIDTESTING",
        aws_secret_access_key="secret",
        config=Config(retries={"total_max_attempts": 1}),
    )


def test_parameters_are_read_ten_names_a_call_and_a_throttle_is_named(monkeypatch):
    from oriole.handlers import start_experiment

    ssm = client("ssm")
    monkeypatch.setattr(start_experiment.aws, "ssm", lambda: ssm)
    names = [f"/oriole/p{i}" for i in range(12)]
    with Stubber(ssm) as stub:
        stub.add_response(
            "get_parameters",
            {"Parameters": [{"Name": "/oriole/p0", "Value": "a"}], "InvalidParameters": names[1:10]},
            {"Names": names[:10]},
        )
        stub.add_response(
            "get_parameters", {"Parameters": [{"Name": "/oriole/p11", "Value": "b"}]}, {"Names": names[10:]}
        )
        assert start_experiment.read_parameters(names) == {"/oriole/p0": "a", "/oriole/p11": "b"}
        stub.add_client_error("get_parameters", "ThrottlingException", "Rate exceeded", 400)
        with pytest.raises(ParameterStoreThrottled, match="Rate exceeded"):
            start_experiment.read_parameters(names[:3])


def test_a_throttled_successor_start_is_named(monkeypatch):
    from oriole.handlers import aws, executions

    sfn = client("stepfunctions")
    monkeypatch.setattr(aws, "stepfunctions", lambda: sfn)
    machine = "arn:aws:states:us-east-1:123456789012:stateMachine:oriole-experiment"
    with Stubber(sfn) as stub:
        stub.add_client_error("start_execution", "ThrottlingException", "Rate exceeded", 400)
        with pytest.raises(StartExecutionThrottled, match="exp-7-part-3"):
            executions.start_named(machine, "exp-7-part-3", {"experimentId": 7, "continuationToken": "t"})


def test_a_named_deployment_reads_its_own_parameters():
    """The functions of a second deployment (ORIOLE_DEPLOYMENT, set by CDK) read under its own prefix."""
    import os
    import subprocess
    import sys

    code = "from oriole import catalog; print(catalog.PREFIX, catalog.START_NAMES[0], catalog.prompt_name('v1'))"
    named = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "ORIOLE_DEPLOYMENT": "OrioleLab2"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert named[0] == "/oriolelab2" and named[1].startswith("/oriolelab2/") and named[2] == "/oriolelab2/prompts/v1"
    default = {k: v for k, v in os.environ.items() if k != "ORIOLE_DEPLOYMENT"}
    plain = subprocess.run([sys.executable, "-c", code], env=default, capture_output=True, text=True, check=True)
    assert plain.stdout.split()[0] == "/oriole"


# -- the versions no execution can call (the version pruner) ------------------------------------------------------


def published(*hours_ago: float, now):
    """Versions 1, 2, ... published the given hours before ``now``."""
    from datetime import timedelta

    return [
        deployment.PublishedVersion(number, now - timedelta(hours=hours))
        for number, hours in enumerate(hours_ago, start=1)
    ]


def test_versions_older_than_what_the_stack_holds_go_once_no_execution_can_run_on_them():
    """The stack holds the version its template names (and during a deploy the one it replaces). Every older
    version stopped being current when the oldest held one became current: once that is longer ago than the
    longest execution, they go; the held ones and newer ones (a failed deploy's, never current) stay."""
    from datetime import UTC, datetime, timedelta

    now = datetime(2026, 11, 25, 12, tzinfo=UTC)
    grace = timedelta(seconds=8460) + deployment.DEPLOY_MARGIN
    versions = published(30, 20, 10, 5, now=now)  # versions 1..4, published 30, 20, 10 and 5 hours ago
    assert deployment.stale_versions(versions, {3}, now, grace, set()) == [1, 2]  # 4: a failed deploy's
    assert deployment.stale_versions(versions, {2, 3}, now, grace, set()) == [1]  # 2: what a rollback needs
    assert deployment.stale_versions(versions, {3}, now, grace, {1}) == [2]  # a running sweep calls 1
    assert deployment.stale_versions(published(30, 20, 2, now=now), {3}, now, grace, set()) == []  # too recent
    assert deployment.stale_versions(versions, set(), now, grace, set()) == []  # nothing known: nothing goes


def test_the_versions_a_definition_invokes_are_read_from_its_arns():
    definition = (
        '{"States": {"Plan": {"Resource": "arn:aws:lambda:us-east-1:123456789012:function:'
        'OrioleOrchestrator-FunctionsPlanSweep1A2B-XyZ:17"}, "Start": {"Resource": "arn:aws:states:::'
        'states:startExecution"}, "Check": {"Resource": "arn:aws-cn:lambda:cn-north-1:123456789012:'
        'function:Check:3"}, "Latest": {"Resource": "arn:aws:lambda:us-east-1:123456789012:function:X"}}}'
    )
    assert deployment.versions_named(definition) == {
        ("OrioleOrchestrator-FunctionsPlanSweep1A2B-XyZ", 17),
        ("Check", 3),
    }


def test_pictures_go_only_to_a_model_the_catalog_or_the_deployment_marks():
    from oriole.errors import InvalidConfig

    deployment.check_image_model(HAIKU, "image", Environment.read({}))
    deployment.check_image_model(f"us.{HAIKU}", "both", Environment.read({}))  # a profile is its base model
    with pytest.raises(
        InvalidConfig,
        match=r"config.observation image sends pictures, but model 'qwen2.5:7b' is "
        r"not marked as accepting images; use observation text, or mark it",
    ):
        deployment.check_image_model("qwen2.5:7b", "image", Environment.read({}))
    deployment.check_image_model("qwen2.5:7b", "image", Environment.read({"ORIOLE_VISION_MODELS": '["qwen2.5:7b"]'}))


def test_the_reconciler_looks_while_an_execution_runs_or_ended_lately():
    """From ListExecutions' page (newest first): a running execution, or one that stopped within the lookback
    (EventBridge's 6 hours of retries and an hour more), is worth reading the database for; an older history is
    not, and the reader stops at the first execution that started before any such could have."""
    from datetime import UTC, datetime, timedelta

    from oriole.lifecycle.reconcile import LOOKBACK, worth_a_look

    now, timeout = datetime(2026, 3, 1, 12, tzinfo=UTC), timedelta(hours=2)

    def ended(hours_ago: float, lasted: float = 0.5) -> dict:
        stop = now - timedelta(hours=hours_ago)
        return {"status": "SUCCEEDED", "startDate": stop - timedelta(hours=lasted), "stopDate": stop}

    running = {"status": "RUNNING", "startDate": now - timedelta(days=3)}
    assert worth_a_look([running], now, timeout)
    assert worth_a_look([ended(1)], now, timeout)
    assert worth_a_look([ended(LOOKBACK.total_seconds() / 3600 - 0.1)], now, timeout)
    assert not worth_a_look([ended(8), ended(30)], now, timeout)
    assert not worth_a_look([], now, timeout)
    # a long execution that started before a newer short one but stopped lately is still found
    assert worth_a_look([ended(7.5), ended(6.9, lasted=1.9)], now, timeout)

    def newest_first():
        yield ended(8)
        yield {
            "status": "SUCCEEDED",
            "startDate": now - LOOKBACK - timeout - timedelta(minutes=1),
            "stopDate": now - timedelta(days=1),
        }
        raise AssertionError("read past the horizon")

    assert not worth_a_look(newest_first(), now, timeout)
