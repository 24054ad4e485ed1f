"""The database of each profile: the standard profile's RDS instance behind a TLS proxy, the lean profile's Aurora
Serverless v2 that pauses at 0 ACU, an imported one; deletion protection switched on last and waiting for the
database; who may connect to it and as whom."""

from __future__ import annotations

import json
import re

import pytest

from tests.iam_policy import allows
from tests.infra.conftest import resolve, synthesize
from tests.infra.templates import REGION, data_template, one, one_function_env, resources


def test_database_is_postgres_16_encrypted_private_with_tls_required(templates):
    data, _ = templates
    db = one(data, "AWS::RDS::DBInstance")
    assert db["Engine"] == "postgres"
    assert db["StorageEncrypted"] is True and db["PubliclyAccessible"] is False
    parameters = one(data, "AWS::RDS::DBParameterGroup")["Parameters"]
    assert parameters["rds.force_ssl"] == "1"
    assert "idle_session_timeout" not in parameters  # per role (migration 0012): it would cut researchers' psql
    subnets = json.dumps(one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"])
    assert "isolatedSubnet" in subnets and "public" not in subnets.lower()
    assert len(resources(data, "AWS::EC2::NatGateway")) == 1 and resources(data, "AWS::EC2::FlowLog")


def engine_versions(extension: str, engine: str, file: str) -> set[str]:
    """cfn-lint's copy of what ``DescribeDBEngineVersions`` lists for ``engine`` (its W3691/E3691 data)."""
    from importlib import resources as package_files

    from cfnlint.data.schemas import extensions

    schema = json.loads(package_files.files(extensions).joinpath(extension, file).read_text())
    [rule] = [r for r in schema["allOf"] if r["if"]["properties"].get("Engine", {}).get("const") == engine]
    return set(
        rule["if"]["properties"]["EngineVersion"].get("enum") or rule["then"]["properties"]["EngineVersion"]["enum"]
    )


def test_rds_creates_a_listed_full_version_and_keeps_its_minor_upgrades_and_uses_gp3(templates):
    """RDS creates an instance only at a version DescribeDBEngineVersions lists as available: a full version
    (cfn-lint's copy of that list is the offline check), with RDS's automatic minor upgrades on; the pin is never
    sent again unless it changes (see infra/database.py)."""
    from infra.database import ENGINE_VERSION

    data, _ = templates
    db = one(data, "AWS::RDS::DBInstance")
    version = db["EngineVersion"]
    assert version == ENGINE_VERSION.postgres_full_version and re.fullmatch(r"16\.\d+", version)
    assert db["AutoMinorVersionUpgrade"] is True and db["StorageType"] == "gp3"
    assert one(data, "AWS::RDS::DBParameterGroup")["Family"] == "postgres16"
    assert version in engine_versions("aws_rds_dbinstance", "postgres", "engine_version.json")
    assert version not in engine_versions("aws_rds_dbinstance", "postgres", "engine_version_deprecated.json")
    assert "16" in engine_versions("aws_rds_dbinstance", "postgres", "engine_version_deprecated.json")


def test_the_lean_database_is_aurora_serverless_that_pauses_at_zero_and_has_no_proxy(lean_templates):
    """Aurora PostgreSQL Serverless v2 from 0 ACU (paused: storage alone is billed) after 5 idle minutes, at a
    listed full version from which Aurora pauses (16.3 on), encrypted, TLS required, in the isolated subnets; no
    proxy (its connections would keep the database awake)."""
    data, orchestrator = lean_templates
    cluster = one(data, "AWS::RDS::DBCluster")
    assert cluster["Engine"] == "aurora-postgresql" and cluster["StorageEncrypted"] is True
    assert cluster["ServerlessV2ScalingConfiguration"] == {
        "MinCapacity": 0,
        "MaxCapacity": 2,
        "SecondsUntilAutoPause": 300,
    }
    version = cluster["EngineVersion"]
    assert tuple(map(int, version.split("."))) >= (16, 3)
    assert version in engine_versions("aws_rds_dbcluster", "aurora-postgresql", "engine_version.json")
    assert version not in engine_versions("aws_rds_dbcluster", "aurora-postgresql", "engine_version_deprecated.json")
    assert "DeletionProtection" not in cluster and cluster["BackupRetentionPeriod"] == 7
    assert one(data, "AWS::RDS::DBClusterParameterGroup")["Parameters"]["rds.force_ssl"] == "1"
    [writer] = resources(data, "AWS::RDS::DBInstance").values()
    assert writer["Properties"]["DBInstanceClass"] == "db.serverless" and not writer["Properties"]["PubliclyAccessible"]
    assert "isolatedSubnet" in json.dumps(one(data, "AWS::RDS::DBSubnetGroup")["SubnetIds"])
    assert not resources(data, "AWS::RDS::DBProxy")
    for name in ("StartExperiment", "InvokeBedrockAgent", "CheckProgress", "Reconciler"):
        env = one_function_env(orchestrator, name)
        assert "DatabaseAppSecret" in json.dumps(env["DATABASE_SECRET_ARN"]), name
        assert "ORIOLE_DATABASE_HOST" not in env and "ORIOLE_DATABASE_CA" not in env, name  # the secret's host


def test_the_maximum_capacity_is_a_context_setting():
    cluster = one(data_template(profile="lean", maxAcu="8"), "AWS::RDS::DBCluster")
    assert cluster["ServerlessV2ScalingConfiguration"]["MaxCapacity"] == 8
    with pytest.raises(ValueError, match="maxAcu must be a number from 1 to 256"):
        synthesize(profile="lean", maxAcu="0.5")


@pytest.mark.parametrize(("fixture", "kind"), [("templates", "instance"), ("lean_templates", "cluster")])
def test_a_failed_first_create_can_delete_the_database_and_protection_comes_after_everything_else(
    request, fixture, kind
):
    """CloudFormation creates the database unprotected (the template never names the property, so no later update
    sends it); a custom resource that depends on every other resource of the stack turns deletion protection on. A
    rollback of the first create, whatever failed (the proxy's target group, the bastion), deletes an unprotected
    database (after its final snapshot): never ROLLBACK_FAILED."""
    data, _ = request.getfixturevalue(fixture)
    kinds = {"instance": "AWS::RDS::DBInstance", "cluster": "AWS::RDS::DBCluster"}
    [(database_id, database)] = resources(data, kinds[kind]).items()
    assert "DeletionProtection" not in database["Properties"]
    assert database["DeletionPolicy"] == "Snapshot"
    [(_protection_id, protection)] = resources(data, "Custom::DeletionProtection").items()
    assert protection["Properties"]["Kind"] == kind and protection["Properties"]["DeletionProtection"] is True
    assert protection["Properties"]["Identifier"] == {"Ref": database_id}
    before = set(protection["DependsOn"])
    own = {r for r in data.to_json()["Resources"] if r.startswith("DatabaseDeletionProtection")}
    unordered = set(data.to_json()["Resources"]) - before - own
    assert not unordered, unordered  # the proxy, its target group, the bastion, the secrets: all first
    assert {database_id, *resources(data, "AWS::EC2::Instance")} <= before


@pytest.mark.parametrize(("fixture", "kind"), [("templates", "db"), ("lean_templates", "cluster")])
def test_deletion_protection_may_describe_and_change_its_database_and_nothing_else(request, fixture, kind):
    """The handler's role: describe and modify this one database (instance or cluster), nothing else of RDS."""
    data, _ = request.getfixturevalue(fixture)
    template = data.to_json()
    [protection] = resources(data, "Custom::DeletionProtection").values()
    identifier = resolve(protection["Properties"]["Identifier"], template, REGION)
    [handler_id] = [
        k for k in resources(data, "AWS::Lambda::Function") if k.startswith("DatabaseDeletionProtectionHandler")
    ]
    [role_id, _] = template["Resources"][handler_id]["Properties"]["Role"]["Fn::GetAtt"]
    statements = [
        s
        for p in resources(data, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in resolve(p["Properties"]["PolicyDocument"]["Statement"], template, REGION)
    ]
    noun = "DBCluster" if kind == "cluster" else "DBInstance"
    arn = f"arn:aws:rds:{REGION}:123456789012:{kind}:{identifier}"
    for action in (f"rds:Describe{noun}s", f"rds:Modify{noun}"):
        assert allows(statements, action, arn), action
        assert not allows(statements, action, arn.replace(f":{kind}:", f":{kind}:another"))
    assert not allows(statements, f"rds:Delete{noun}", arn)


def test_without_deletion_protection_the_database_goes_with_the_stack():
    data = data_template(deletionProtection="false")
    [instance] = resources(data, "AWS::RDS::DBInstance").values()
    assert instance["DeletionPolicy"] == "Delete" and "DeletionProtection" not in instance["Properties"]
    [protection] = resources(data, "Custom::DeletionProtection").values()  # turns it off on a deployment that had it
    assert protection["Properties"]["DeletionProtection"] is False


def test_database_and_proxy_accept_postgres_only_from_their_clients(templates):
    """The functions reach the proxy; the proxy and the bastion (for researchers' psql) reach the database."""
    data, _ = templates
    ingress = [r["Properties"] for r in resources(data, "AWS::EC2::SecurityGroupIngress").values()]
    assert all(r["FromPort"] == r["ToPort"] for r in ingress)  # one port each: PostgreSQL's
    assert {(r["GroupId"]["Fn::GetAtt"][0], r["SourceSecurityGroupId"]["Fn::GetAtt"][0]) for r in ingress} == {
        ("DatabaseProxySecurityGroupCCC9DB86", "DatabaseClients539CA2ED"),
        ("DatabaseSecurityGroup5C91FDCB", "DatabaseProxySecurityGroupCCC9DB86"),
        ("DatabaseSecurityGroup5C91FDCB", "DatabaseClients539CA2ED"),
    }


def test_the_functions_connect_through_a_tls_proxy_as_the_application_role(templates):
    data, orchestrator = templates
    proxy = one(data, "AWS::RDS::DBProxy")
    assert proxy["RequireTLS"] is True and proxy["EngineFamily"] == "POSTGRESQL"
    target = one(data, "AWS::RDS::DBProxyTargetGroup")
    assert target["ConnectionPoolConfigurationInfo"]["MaxConnectionsPercent"] <= 80
    users = {
        json.loads(s["Properties"]["GenerateSecretString"]["SecretStringTemplate"])["username"]
        for s in resources(data, "AWS::SecretsManager::Secret").values()
    }
    assert users == {"oriole", "oriole_app", "oriole_reader"}
    for name in ("StartExperiment", "InvokeBedrockAgent", "CheckProgress", "ExecutionStatusFinalizer", "Reconciler"):
        env = one_function_env(orchestrator, name)
        assert "DatabaseAppSecret" in json.dumps(env["DATABASE_SECRET_ARN"]), name
        assert "DatabaseInstanceProxy" in json.dumps(env["ORIOLE_DATABASE_HOST"]), name
        assert env["ORIOLE_DATABASE_CA"] == "amazon-trust-services.pem", name
    migrations = one_function_env(orchestrator, "Migrations")
    assert "DatabaseInstanceSecret" in json.dumps(migrations["DATABASE_SECRET_ARN"])  # the owner
    roles = json.dumps(migrations["ORIOLE_ROLE_SECRETS"])
    assert "oriole_app" in roles and "oriole_reader" in roles and "DatabaseReaderSecret" in roles


EXISTING = {
    "existingDatabaseSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:research-db-AbCdEf",
    "existingVpcId": "vpc-0a1b2c3d4e5f67890",
    "existingSubnetIds": "subnet-0a1b2c3d4e5f67891,subnet-0a1b2c3d4e5f67892",
    "existingAvailabilityZones": "us-east-1a,us-east-1b",
    "existingSecurityGroupId": "sg-0a1b2c3d4e5f67893",
}


def test_an_existing_database_replaces_the_instance():
    from aws_cdk.assertions import Template

    data, orchestrator = synthesize(**EXISTING)
    assert not resources(Template.from_stack(data), "AWS::RDS::DBInstance")
    assert not resources(Template.from_stack(data), "Custom::DeletionProtection")
    env = one_function_env(Template.from_stack(orchestrator), "CheckProgress")
    assert env["DATABASE_SECRET_ARN"] == EXISTING["existingDatabaseSecretArn"]
    assert "ORIOLE_DATABASE_CA" not in env and "ORIOLE_DATABASE_HOST" not in env  # no proxy: TLS required


def test_an_existing_database_is_verified_against_a_bundle_shipped_for_it():
    from aws_cdk.assertions import Template

    _, orchestrator = synthesize(**EXISTING, existingDatabaseCaBundle="amazon-trust-services.pem")
    env = one_function_env(Template.from_stack(orchestrator), "CheckProgress")
    assert env["ORIOLE_DATABASE_CA"] == "amazon-trust-services.pem"
    with pytest.raises(ValueError, match=r"no file 'rds-global-bundle\.pem'"):
        synthesize(**EXISTING, existingDatabaseCaBundle="rds-global-bundle.pem")


def test_an_incomplete_existing_database_context_is_refused():
    with pytest.raises(ValueError, match="existingVpcId"):
        synthesize(existingDatabaseSecretArn="arn:aws:secretsmanager:us-east-1:1:secret:x")
