"""Deletion protection's handler (infra/deletion_protection_handler.py) against RDS's real client (botocore's
Stubber): it waits for a busy database instead of failing the deploy, retries a change RDS calls busy, and says
what to do when the database stays busy past the invocation's time."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from infra import deletion_protection_handler as handler

INSTANCE = "oriole-database"


class Context:
    def __init__(self, seconds: float):
        self.seconds = seconds

    def get_remaining_time_in_millis(self) -> int:
        return int(self.seconds * 1000)


def event(kind: str = "instance", protect: str = "true", request: str = "Create") -> dict:
    props = {"Kind": kind, "Identifier": INSTANCE, "DeletionProtection": protect}
    return {"RequestType": request, "ResourceProperties": props}


def instance(status: str, protected: bool) -> dict:
    return {
        "DBInstances": [{"DBInstanceIdentifier": INSTANCE, "DBInstanceStatus": status, "DeletionProtection": protected}]
    }


@pytest.fixture
def rds():
    client = boto3.client("rds", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def test_a_database_backing_up_is_waited_for_and_a_busy_refusal_retried(rds):
    client, stub = rds
    describe = {"DBInstanceIdentifier": INSTANCE}
    modify = {"DBInstanceIdentifier": INSTANCE, "DeletionProtection": True, "ApplyImmediately": True}
    stub.add_response("describe_db_instances", instance("backing-up", False), describe)
    stub.add_response("describe_db_instances", instance("available", False), describe)
    stub.add_client_error("modify_db_instance", "InvalidDBInstanceState", "backing up", 400, expected_params=modify)
    stub.add_response("describe_db_instances", instance("available", False), describe)
    stub.add_response("modify_db_instance", {}, modify)
    stub.add_response("describe_db_instances", instance("available", True), describe)
    slept = []
    result = handler.handler(event(), Context(600), rds=client, sleep=slept.append)
    assert result["PhysicalResourceId"] == INSTANCE and result["Data"] == {"DeletionProtection": True}
    assert slept == [handler.POLL_SECONDS, handler.POLL_SECONDS]  # the backup, then the refusal


def test_a_cluster_is_turned_off_as_asked(rds):
    client, stub = rds
    describe = {"DBClusterIdentifier": INSTANCE}

    def cluster(protected: bool) -> dict:
        return {
            "DBClusters": [{"DBClusterIdentifier": INSTANCE, "Status": "available", "DeletionProtection": protected}]
        }

    stub.add_response("describe_db_clusters", cluster(True), describe)
    modify = {"DBClusterIdentifier": INSTANCE, "DeletionProtection": False, "ApplyImmediately": True}
    stub.add_response("modify_db_cluster", {}, modify)
    stub.add_response("describe_db_clusters", cluster(False), describe)
    assert handler.handler(event("cluster", "false"), Context(600), rds=client)["Data"] == {"DeletionProtection": False}


def test_another_refusal_fails_the_deploy_with_rds_s_reason(rds):
    client, stub = rds
    stub.add_response("describe_db_instances", instance("available", False))
    stub.add_client_error("modify_db_instance", "AccessDenied", "not allowed", 403)
    with pytest.raises(Exception, match="not allowed"):
        handler.handler(event(), Context(600), rds=client, sleep=lambda _: None)


def test_a_database_that_stays_busy_past_the_invocation_says_what_to_do(rds):
    client, stub = rds
    stub.add_response("describe_db_instances", instance("modifying", False))
    with pytest.raises(TimeoutError, match=r"stayed modifying.*describe-db-instances"):
        handler.handler(event(), Context(handler.POLL_SECONDS), rds=client, sleep=lambda _: None)


def test_deleting_the_resource_leaves_the_database_as_it_is(rds):
    client, _ = rds  # no call at all
    assert handler.handler(event(request="Delete"), Context(600), rds=client) == {"PhysicalResourceId": INSTANCE}


def test_the_handler_fits_in_inline_code():
    """CloudFormation takes at most 4 KB of inline code."""
    assert len(handler.__loader__.get_source(handler.__name__).encode()) < 4096  # type: ignore[union-attr]
