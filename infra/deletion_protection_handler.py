"""Deletion protection's custom resource (CDK's provider framework calls it; shipped inline, boto3 only): set a
database's DeletionProtection once it is available, retried until it holds or the invocation's time runs out.

RDS refuses a change while the database is busy (its first backup right after it was created, a modification
under way): InvalidDBInstanceState / InvalidDBClusterStateFault. Those are waited out, never a failed deploy.
"""

import time
from collections.abc import Callable
from typing import Any

import boto3
from botocore.exceptions import ClientError

POLL_SECONDS = 15
MARGIN_SECONDS = 30
BUSY = ("InvalidDBInstanceState", "InvalidDBClusterStateFault")


def current(rds: Any, kind: str, identifier: str) -> tuple[str, bool]:
    """The database's status and whether it is protected now."""
    if kind == "cluster":
        [found] = rds.describe_db_clusters(DBClusterIdentifier=identifier)["DBClusters"]
    else:
        [found] = rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"]
    status = found.get("Status") or found.get("DBInstanceStatus")
    return str(status), bool(found.get("DeletionProtection"))


def modify(rds: Any, kind: str, identifier: str, protect: bool) -> None:
    if kind == "cluster":
        rds.modify_db_cluster(DBClusterIdentifier=identifier, DeletionProtection=protect, ApplyImmediately=True)
    else:
        rds.modify_db_instance(DBInstanceIdentifier=identifier, DeletionProtection=protect, ApplyImmediately=True)


def handler(
    event: dict[str, Any], context: Any, rds: Any = None, sleep: Callable[[float], None] = time.sleep
) -> dict[str, Any]:
    props = event["ResourceProperties"]
    kind, identifier = props["Kind"], props["Identifier"]
    protect = str(props["DeletionProtection"]).lower() == "true"
    if event["RequestType"] == "Delete":  # deleting the resource leaves the database as it is
        return {"PhysicalResourceId": identifier}
    rds = rds or boto3.client("rds")
    while True:
        status, protected = current(rds, kind, identifier)
        if protected == protect:
            return {"PhysicalResourceId": identifier, "Data": {"DeletionProtection": protected}}
        if status == "available":
            try:
                modify(rds, kind, identifier, protect)
                continue
            except ClientError as err:
                if err.response["Error"]["Code"] not in BUSY:
                    raise
        if context.get_remaining_time_in_millis() / 1000 < POLL_SECONDS + MARGIN_SECONDS:
            raise TimeoutError(
                f"the {kind} {identifier} stayed {status}: deletion protection is not "
                f"{'on' if protect else 'off'}; deploy again once `aws rds describe-db-{kind}s` says available"
            )
        print(f"{kind} {identifier} is {status}; waiting {POLL_SECONDS} s to set deletion protection {protect}")
        sleep(POLL_SECONDS)
